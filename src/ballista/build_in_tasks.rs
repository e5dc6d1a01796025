//! A broadcast hash join whose build side is rows the plan carries, built
//! inside each task of the probe's stage.
//!
//! Ballista runs the build side of every `CollectLeft` hash join as a stage
//! of its own and hands its output to the probe's tasks through shuffle
//! files: one more stage to schedule, run and wait for. When the client has
//! already run a small side and put its rows in the plan in its place
//! (`optimizer::join_keys`), that stage only copies them. This rule hides
//! such a join from Ballista's stage planner: [`BuildInTasksExec`] holds
//! the join, shows only the probe side as its child, and each task builds
//! the hash table from the rows.
//!
//! | plan on the scheduler                                  | stages |
//! |--------------------------------------------------------|--------|
//! | `HashJoinExec(CollectLeft)` ← rows, ← probe scan        | build, probe, … |
//! | `BuildInTasksExec` [`HashJoinExec` ← rows] ← probe scan | probe, … |
//!
//! Ballista also has DataFusion plan every equi-join as a sort-merge join
//! (`prefer_hash_join = false`: a hash join cannot spill), which shuffles
//! and sorts both sides. A side of rows is small by construction, so
//! [`RowsAsBuildSide`], the first physical rule on the scheduler, plans
//! such a join as a broadcast hash join with the rows as its build side;
//! DataFusion's own rules then add what the join's parents require.
//!
//! Only join types whose output each probe row decides are planned so
//! (inner, right, right semi/anti/mark, with the rows on the left): a task
//! does not see the other tasks' matches, so it could not say which build
//! rows matched nowhere.

use std::fmt;
use std::sync::Arc;

use ballista_core::config::BallistaConfig;
use datafusion::catalog::memory::MemorySourceConfig;
use datafusion::common::config::ConfigOptions;
use datafusion::common::internal_err;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::Result;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::JoinType;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_optimizer::optimizer::PhysicalOptimizer;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::joins::{HashJoinExec, PartitionMode, SortMergeJoinExec};
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties, InputDistributionRequirements,
    PlanProperties, StatisticsArgs, StatisticsContext,
};

/// The first physical rule on a Ballista scheduler: a sort-merge join
/// with a side of rows in the plan becomes a broadcast hash join that
/// builds from the rows, where the join type allows.
#[derive(Debug, Default)]
pub struct RowsAsBuildSide;

impl PhysicalOptimizerRule for RowsAsBuildSide {
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, config: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(join) = node.downcast_ref::<SortMergeJoinExec>() else {
                return Ok(Transformed::no(node));
            };
            let hash_join = |left: &Arc<dyn ExecutionPlan>, right: &Arc<dyn ExecutionPlan>| {
                HashJoinExec::try_new(
                    Arc::clone(left),
                    Arc::clone(right),
                    join.on().to_vec(),
                    join.filter().clone(),
                    &join.join_type(),
                    None,
                    PartitionMode::CollectLeft,
                    join.null_equality(),
                    false,
                )
            };
            let rows = |side: &Arc<dyn ExecutionPlan>| is_rows(side) && fits_broadcast(side, config);
            if rows(join.left()) && broadcast_safe(join.join_type()) {
                return Ok(Transformed::yes(Arc::new(hash_join(join.left(), join.right())?) as _));
            }
            if rows(join.right()) && broadcast_safe(join.join_type().swap()) {
                return Ok(Transformed::yes(
                    hash_join(join.left(), join.right())?.swap_inputs(PartitionMode::CollectLeft)?,
                ));
            }
            Ok(Transformed::no(node))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "hidden_partitions_rows_as_build_side"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `builder` with [`RowsAsBuildSide`] before DataFusion's physical rules.
pub fn with_rows_as_build_side(builder: SessionStateBuilder) -> SessionStateBuilder {
    let mut rules: Vec<Arc<dyn PhysicalOptimizerRule + Send + Sync>> = vec![Arc::new(RowsAsBuildSide)];
    rules.extend(PhysicalOptimizer::new().rules);
    builder.with_physical_optimizer_rules(rules)
}

/// Whether a join of `kind` that broadcasts its left side gives each
/// output row from one probe row (so each task may join its own part).
fn broadcast_safe(kind: JoinType) -> bool {
    matches!(
        kind,
        JoinType::Inner | JoinType::Right | JoinType::RightSemi | JoinType::RightAnti | JoinType::RightMark
    )
}

/// The last physical rule on a Ballista scheduler: wraps each broadcast hash
/// join whose build side is rows in a [`BuildInTasksExec`].
#[derive(Debug, Default)]
pub struct BuildInTasks;

impl PhysicalOptimizerRule for BuildInTasks {
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, config: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| match node.downcast_ref::<HashJoinExec>() {
            Some(join) if builds_from_rows(join) && fits_broadcast(join.left(), config) => Ok(Transformed::yes(
                Arc::new(BuildInTasksExec::try_new(Arc::clone(&node))?) as _,
            )),
            _ => Ok(Transformed::no(node)),
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "hidden_partitions_build_in_tasks"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Whether `join` broadcasts a build side of rows in the plan (in one
/// partition) and each probe row alone decides its output.
fn builds_from_rows(join: &HashJoinExec) -> bool {
    *join.partition_mode() == PartitionMode::CollectLeft
        && !join.null_aware
        && broadcast_safe(*join.join_type())
        && is_rows(join.left())
}

/// Whether `side` is under Ballista's broadcast thresholds
/// (`ballista.optimizer.broadcast_join_threshold_bytes`, or `_rows` when
/// its size is unknown; 0 turns broadcasts off), as Ballista checks a
/// broadcast join's build side.
fn fits_broadcast(side: &Arc<dyn ExecutionPlan>, config: &ConfigOptions) -> bool {
    let ballista = config.extensions.get::<BallistaConfig>().cloned().unwrap_or_default();
    let (max_bytes, max_rows) = (
        ballista.broadcast_join_threshold_bytes(),
        ballista.broadcast_join_threshold_rows(),
    );
    let Ok(stats) = StatisticsContext::new().compute(side.as_ref(), &StatisticsArgs::new()) else {
        return false;
    };
    match (stats.total_byte_size.get_value(), stats.num_rows.get_value()) {
        _ if max_bytes == 0 => false,
        (Some(bytes), _) if *bytes > 0 => *bytes < max_bytes,
        (_, Some(rows)) => *rows < max_rows,
        _ => false,
    }
}

/// Rows in the plan, in one partition: a memory source, under projections
/// and filters only.
fn is_rows(plan: &Arc<dyn ExecutionPlan>) -> bool {
    if plan.output_partitioning().partition_count() != 1 {
        return false;
    }
    let mut rows = true;
    let _ = plan.apply(|node| {
        let leaf = node
            .downcast_ref::<DataSourceExec>()
            .is_some_and(|ds| ds.data_source().downcast_ref::<MemorySourceConfig>().is_some());
        let passes = node.is::<ProjectionExec>() || node.is::<FilterExec>();
        if !(leaf || (passes && node.children().len() == 1)) {
            rows = false;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    rows
}

/// A broadcast hash join (`join`, a [`HashJoinExec`]) with its build side
/// inside: the probe side is its only child.
#[derive(Debug)]
pub struct BuildInTasksExec {
    join: Arc<dyn ExecutionPlan>,
}

impl BuildInTasksExec {
    pub fn try_new(join: Arc<dyn ExecutionPlan>) -> Result<Self> {
        match join.downcast_ref::<HashJoinExec>() {
            Some(hash_join) if *hash_join.partition_mode() == PartitionMode::CollectLeft => Ok(Self { join }),
            _ => internal_err!("BuildInTasksExec wraps a CollectLeft hash join, not {}", join.name()),
        }
    }

    /// The join, with its probe side.
    pub fn join(&self) -> &Arc<dyn ExecutionPlan> {
        &self.join
    }

    fn probe(&self) -> &Arc<dyn ExecutionPlan> {
        self.join.children()[1]
    }
}

/// `join` with `probe` as its probe side, its build side kept.
pub fn with_probe(
    join: &Arc<dyn ExecutionPlan>,
    probe: Arc<dyn ExecutionPlan>,
    options: ReplaceChildrenOptions,
) -> Result<Arc<dyn ExecutionPlan>> {
    let Some(build) = join.children().first().map(|b| Arc::clone(b)) else {
        return internal_err!("a join with its build rows has no build side");
    };
    Arc::clone(join).replace_children(vec![build, probe], options)
}

impl DisplayAs for BuildInTasksExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let build = self.join.children()[0];
        let rows = StatisticsContext::new()
            .compute(build.as_ref(), &StatisticsArgs::new())
            .ok()
            .and_then(|s| s.num_rows.get_value().copied());
        write!(f, "BuildInTasksExec: build side in each task (")?;
        match rows {
            Some(n) => write!(f, "{n} rows")?,
            None => write!(f, "rows")?,
        }
        write!(f, "); ")?;
        match self.join.downcast_ref::<HashJoinExec>() {
            Some(join) => join.fmt_as(t, f),
            None => Ok(()),
        }
    }
}

impl ExecutionPlan for BuildInTasksExec {
    fn name(&self) -> &str {
        "BuildInTasksExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.join.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![self.probe()]
    }

    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        let probe = self
            .join
            .input_distribution_requirements()
            .child_distribution(1)
            .cloned();
        InputDistributionRequirements::new(vec![probe.unwrap_or(Distribution::UnspecifiedDistribution)])
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![self.join.maintains_input_order()[1]]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![self.join.benefits_from_input_partitioning()[1]]
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(children, ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute))
    }

    fn replace_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
        options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match (children.pop(), children.is_empty()) {
            (Some(probe), true) => Ok(Arc::new(Self::try_new(with_probe(&self.join, probe, options)?)?)),
            _ => internal_err!("BuildInTasksExec has one child, the probe side"),
        }
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        self.join.apply_expressions(f)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        self.join.metrics()
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        self.join.execute(partition, context)
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::physical_plan::{collect, displayable};
    use datafusion::prelude::SessionContext;
    use datafusion_proto::bytes::{
        physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
    };

    use super::*;
    use crate::ballista::{HiddenPartitionsPhysicalCodec, ballista_config, session_state};

    /// A Ballista client's session (its config and physical rules) that
    /// plans and runs in this process.
    fn ballista_session() -> SessionContext {
        SessionContext::new_with_state(session_state(ballista_config(), None))
    }

    async fn answer(ctx: &SessionContext, plan: Arc<dyn ExecutionPlan>) -> String {
        let batches = collect(plan, ctx.task_ctx()).await.unwrap();
        pretty_format_batches(&batches).unwrap().to_string()
    }

    /// The plan of `sql` in a Ballista session, and its answer, checked
    /// equal to a plain DataFusion session's.
    async fn planned(ctx: &SessionContext, sql: &str) -> String {
        let plan = ctx.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
        let shown = displayable(plan.as_ref()).indent(true).to_string();
        let plain = SessionContext::new();
        let expected = answer(
            &plain,
            plain.sql(sql).await.unwrap().create_physical_plan().await.unwrap(),
        )
        .await;
        assert_eq!(answer(ctx, plan).await, expected, "{sql}\n{shown}");
        shown
    }

    #[tokio::test]
    async fn a_join_with_rows_builds_them_in_each_task_where_the_join_type_allows() {
        let ctx = ballista_session();
        let broadcast = [
            "SELECT count(*) AS n FROM range(0, 1000) r JOIN (VALUES (1), (5), (NULL)) v(k) ON r.value = v.k",
            "SELECT count(*) AS n, count(v.k) AS m FROM range(0, 1000) r LEFT JOIN (VALUES (1), (5)) v(k) ON r.value = v.k",
            "SELECT count(*) AS n FROM range(0, 1000) r WHERE r.value IN (SELECT k FROM (VALUES (3), (7)) v(k))",
            "SELECT count(*) AS n FROM range(0, 1000) r WHERE r.value NOT IN (SELECT k FROM (VALUES (3), (7)) v(k))",
            "SELECT r.value, v.s FROM range(0, 10) r JOIN (VALUES (2, 'two'), (4, 'four')) v(k, s) ON r.value = v.k ORDER BY 1",
        ];
        for sql in broadcast {
            let shown = planned(&ctx, sql).await;
            assert!(
                shown.contains("BuildInTasksExec: build side in each task"),
                "{sql}\n{shown}"
            );
            assert!(!shown.contains("SortMergeJoinExec"), "{sql}\n{shown}");
        }
        // Every row of the rows' side is in the output: a task alone
        // cannot tell which matched nowhere.
        let kept = [
            "SELECT count(*) AS n, count(r.value) AS m FROM (VALUES (1), (5), (2000)) v(k) LEFT JOIN range(0, 1000) r ON r.value = v.k",
            "SELECT count(*) AS n FROM (VALUES (1), (2000)) v(k) FULL JOIN range(0, 1000) r ON r.value = v.k",
        ];
        for sql in kept {
            let shown = planned(&ctx, sql).await;
            assert!(!shown.contains("BuildInTasksExec"), "{sql}\n{shown}");
        }
        // Broadcasts turned off: Ballista's own setting.
        ctx.sql("SET ballista.optimizer.broadcast_join_threshold_bytes = 0")
            .await
            .unwrap();
        let shown = planned(&ctx, broadcast[0]).await;
        assert!(
            shown.contains("SortMergeJoinExec") && !shown.contains("BuildInTasksExec"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn the_join_travels_with_its_rows_and_its_probe_side_as_the_child() {
        let ctx = ballista_session();
        let sql =
            "SELECT r.value, v.s FROM range(0, 10) r JOIN (VALUES (2, 'two'), (4, 'four')) v(k, s) ON r.value = v.k";
        let plan = ctx.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
        let codec = HiddenPartitionsPhysicalCodec::default();
        let bytes = physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), &codec).unwrap();
        let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec).unwrap();
        let show = |p: &Arc<dyn ExecutionPlan>| displayable(p.as_ref()).indent(true).to_string();
        assert_eq!(show(&decoded), show(&plan));
        assert!(show(&decoded).contains("BuildInTasksExec"), "{}", show(&decoded));
        let expected = answer(&ctx, plan).await;
        assert_eq!(answer(&ctx, decoded).await, expected);
    }
}
