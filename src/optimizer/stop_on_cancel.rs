//! Stopping a cancelled statement's work within moments, not when its
//! joins next happen to yield.
//!
//! Dropping a statement's stream aborts the tasks DataFusion spawned for it,
//! but an abort takes effect only when a task next returns `Pending`, and
//! some operators compute for a long time inside one poll: a nested-loop
//! join probes one right batch against every buffered left row before it
//! polls again (`SELECT … FROM a, b WHERE a.x + b.y = 7` over 300 000 rows
//! a side: seconds per poll), and a hash join that fans out emits batch after
//! batch without polling its inputs, whose scans are where tokio's
//! cooperative budget is spent.
//!
//! So a plan prepared with [`stop_on_cancel`] carries its statement's
//! [`Cancel`] flag to the two places such loops pass through — each join's
//! output stream, and a nested-loop join's filter, evaluated once per left
//! row. Either fails with [`CANCELLED`] once the flag is set (the prompt's
//! Ctrl-C sets it), which ends the poll and with it the task.
//!
//! ```text
//! AggregateExec                                AggregateExec
//!   NestedLoopJoinExec filter=x+y=7     ──▶      StopOnCancelExec
//!     …                                            NestedLoopJoinExec filter=stop_on_cancel(x+y=7)
//! ```

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use datafusion::arrow::datatypes::{FieldRef, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::analyze::AnalyzeExec;
use datafusion::physical_plan::joins::utils::JoinFilter;
use datafusion::physical_plan::joins::{
    CrossJoinExec, HashJoinExec, NestedLoopJoinExec, NestedLoopJoinExecBuilder, SortMergeJoinExec,
    SymmetricHashJoinExec,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::StreamExt;

/// The error a cancelled statement's work stops with.
pub const CANCELLED: &str = "the statement was cancelled";

/// Whether `e` is the error a cancelled statement's work stopped with.
pub fn is_cancelled(e: &dyn std::error::Error) -> bool {
    e.to_string().contains(CANCELLED)
}

/// A statement's cancel flag; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stop the work of the statement (from any thread).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(DataFusionError::Execution(CANCELLED.to_string()))
        } else {
            Ok(())
        }
    }
}

impl PartialEq for Cancel {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Cancel {}

impl Hash for Cancel {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.0) as usize).hash(state)
    }
}

/// `plan`, its joins made to stop once `cancel` is set. `EXPLAIN ANALYZE`
/// is left as it is: it prints the plan it ran.
pub fn stop_on_cancel(plan: Arc<dyn ExecutionPlan>, cancel: &Cancel) -> Result<Arc<dyn ExecutionPlan>> {
    if plan.downcast_ref::<AnalyzeExec>().is_some() {
        return Ok(plan);
    }
    plan.transform_up(|node| {
        let node = match node.downcast_ref::<NestedLoopJoinExec>() {
            Some(nlj) if nlj.filter().is_some() => with_checked_filter(nlj, cancel)?,
            _ => node,
        };
        let is_join = node.downcast_ref::<NestedLoopJoinExec>().is_some()
            || node.downcast_ref::<HashJoinExec>().is_some()
            || node.downcast_ref::<CrossJoinExec>().is_some()
            || node.downcast_ref::<SortMergeJoinExec>().is_some()
            || node.downcast_ref::<SymmetricHashJoinExec>().is_some();
        if !is_join {
            return Ok(Transformed::no(node));
        }
        Ok(Transformed::yes(Arc::new(StopOnCancelExec {
            input: node,
            cancel: cancel.clone(),
        })))
    })
    .map(|t| t.data)
}

fn with_checked_filter(nlj: &NestedLoopJoinExec, cancel: &Cancel) -> Result<Arc<dyn ExecutionPlan>> {
    let filter = nlj.filter().map(|f| {
        let expression: Arc<dyn PhysicalExpr> = Arc::new(StopOnCancelExpr {
            inner: Arc::clone(f.expression()),
            cancel: cancel.clone(),
        });
        JoinFilter::new(expression, f.column_indices().to_vec(), Arc::clone(f.schema()))
    });
    let rebuilt = NestedLoopJoinExecBuilder::new(Arc::clone(nlj.left()), Arc::clone(nlj.right()), *nlj.join_type())
        .with_projection_ref(nlj.projection().clone())
        .with_filter(filter)
        .build()?;
    Ok(Arc::new(rebuilt))
}

/// A join's output, checked against the cancel flag at each batch.
#[derive(Debug)]
struct StopOnCancelExec {
    input: Arc<dyn ExecutionPlan>,
    cancel: Cancel,
}

impl DisplayAs for StopOnCancelExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "StopOnCancelExec")
    }
}

impl ExecutionPlan for StopOnCancelExec {
    fn name(&self) -> &str {
        "StopOnCancelExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(input) = children.into_iter().next() else {
            return Err(DataFusionError::Internal("StopOnCancelExec needs one child".into()));
        };
        Ok(Arc::new(Self {
            input,
            cancel: self.cancel.clone(),
        }))
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        self.cancel.check()?;
        let input = self.input.execute(partition, context)?;
        let schema = input.schema();
        let cancel = self.cancel.clone();
        let stream = input.map(move |batch| {
            cancel.check()?;
            batch
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}

/// A nested-loop join's filter, checked against the cancel flag at each call.
#[derive(Debug, Eq, Hash)]
struct StopOnCancelExpr {
    inner: Arc<dyn PhysicalExpr>,
    cancel: Cancel,
}

impl PartialEq for StopOnCancelExpr {
    fn eq(&self, other: &Self) -> bool {
        self.inner.as_ref() == other.inner.as_ref() && self.cancel == other.cancel
    }
}

impl fmt::Display for StopOnCancelExpr {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.inner)
    }
}

impl PhysicalExpr for StopOnCancelExpr {
    fn return_field(&self, input_schema: &Schema) -> Result<FieldRef> {
        self.inner.return_field(input_schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        self.cancel.check()?;
        self.inner.evaluate(batch)
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.inner]
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn PhysicalExpr>>) -> Result<Arc<dyn PhysicalExpr>> {
        let Some(inner) = children.into_iter().next() else {
            return Err(DataFusionError::Internal("StopOnCancelExpr needs one child".into()));
        };
        Ok(Arc::new(Self {
            inner,
            cancel: self.cancel.clone(),
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt_sql(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::physical_plan::{collect, displayable};
    use datafusion::prelude::SessionContext;

    async fn plan(ctx: &SessionContext, sql: &str, cancel: &Cancel) -> Arc<dyn ExecutionPlan> {
        let plan = ctx.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
        stop_on_cancel(plan, cancel).unwrap()
    }

    #[tokio::test]
    async fn joins_run_as_before_until_cancelled_then_stop() {
        let ctx = SessionContext::new();
        ctx.sql("CREATE TABLE a AS SELECT value AS x FROM generate_series(1, 2000)")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let queries = [
            // nested-loop join with a filter
            "SELECT count(*) FROM a a1, a a2 WHERE a1.x + a2.x = 7",
            // hash join
            "SELECT count(*) FROM a a1 JOIN a a2 ON a1.x % 10 = a2.x % 10",
            // cross join
            "SELECT sum(a1.x * a2.x) FROM a a1 CROSS JOIN a a2",
        ];
        let expected = [6i64, 400_000, 2_001_000 * 2_001_000];
        for (sql, want) in queries.into_iter().zip(expected) {
            let cancel = Cancel::new();
            let p = plan(&ctx, sql, &cancel).await;
            let shown = displayable(p.as_ref()).indent(true).to_string();
            assert!(shown.contains("StopOnCancelExec"), "{shown}");
            let batches = collect(Arc::clone(&p), ctx.task_ctx()).await.unwrap();
            let count = batches[0]
                .column(0)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .unwrap()
                .value(0);
            assert_eq!(count, want, "{sql}");
            cancel.cancel();
            let p = plan(&ctx, sql, &cancel).await;
            let err = collect(p, ctx.task_ctx()).await.unwrap_err();
            assert!(is_cancelled(&err), "{sql}: {err}");
        }
    }

    #[tokio::test]
    async fn a_nested_loop_filter_stops_inside_one_probe() {
        let ctx = SessionContext::new();
        let cancel = Cancel::new();
        let p = plan(
            &ctx,
            "SELECT count(*) FROM generate_series(1, 10) a(x), generate_series(1, 10) b(y) WHERE x + y = 7",
            &cancel,
        )
        .await;
        let nlj = p
            .clone()
            .transform_down(|n| {
                if let Some(nlj) = n.downcast_ref::<NestedLoopJoinExec>() {
                    let filter = nlj.filter().unwrap().expression();
                    assert!(filter.downcast_ref::<StopOnCancelExpr>().is_some());
                    let batch = RecordBatch::new_empty(Arc::new(Schema::empty()));
                    cancel.cancel();
                    let err = filter.evaluate(&batch).unwrap_err();
                    assert!(is_cancelled(&err));
                    return Ok(Transformed::new(n, true, TreeNodeRecursion::Stop));
                }
                Ok(Transformed::no(n))
            })
            .unwrap();
        assert!(
            nlj.transformed,
            "a nested-loop join in {}",
            displayable(p.as_ref()).indent(true)
        );
    }

    #[tokio::test]
    async fn explain_analyze_is_left_alone() {
        let ctx = SessionContext::new();
        let p = plan(
            &ctx,
            "EXPLAIN ANALYZE SELECT count(*) FROM generate_series(1, 3) a(x), generate_series(1, 3) b(y)",
            &Cancel::new(),
        )
        .await;
        assert!(
            !displayable(p.as_ref())
                .indent(true)
                .to_string()
                .contains("StopOnCancelExec")
        );
    }
}
