//! Join-key pruning that needs no shared memory: before a plan runs, the
//! build side of a join on one of our tables is evaluated for its distinct
//! join keys, and those keys become a plan-time predicate (`k IN (…)`) on
//! the table's scan, which prunes files through every spec's transforms.
//!
//! Dynamic filters (DataFusion's run-time pruning) need the join and the
//! scan in one process; Ballista turns them off. This step runs in the
//! session's query planner instead, so the keys are computed wherever the
//! session runs its plans (a job on the cluster when Ballista's planner is
//! inside), and the scan is planned with the files they select (the table
//! carries the keys to the scheduler). `EXPLAIN FILES` finds the keys the
//! same way and shows `k/n (column IN n keys from a join)`; `EXPLAIN
//! ANALYZE` shows `join_keys=[…]` on the scan.
//!
//! | join type              | sides pruned by the other's keys     |
//! |------------------------|--------------------------------------|
//! | inner, semi            | both                                 |
//! | left outer / left anti / left mark | the right side only      |
//! | right outer / right anti / right mark | the left side only    |
//! | full outer             | none                                 |
//!
//! The join itself still runs: the predicate only drops files whose rows
//! could not have matched, so answers never change. NULL keys never match
//! and are not in the list (a join where NULL equals NULL is not used). The
//! keys are the values the join compares the column with: a key the join
//! casts to the column's type (INT keys, BIGINT column) is used as cast; a
//! join that casts the column (BIGINT column, DOUBLE keys) and float
//! columns (NaN, -0.0) are not used. Only the larger side of a join (by row
//! counts from metadata and statistics) is pruned, by the smaller side's
//! keys: a list of up to `hidden_partitions.join_prune_max_keys` distinct
//! keys (`k IN (…)`), or past that their range (`k >= min AND k <= max`,
//! found by running the side once more), which still prunes through
//! identity, truncate and the time transforms. The smaller side is
//! computed twice (once for its keys, once by the join), so a side with a
//! volatile function (`random()`) is not used: its two runs could differ.
//! Both runs read the same snapshot of our tables (pinned at planning).
//! On a cluster a small side (up to [`INLINE_ROWS`]) runs once, whole: its
//! keys are found in its rows, and the rows take its place in the plan, so
//! the join needs no stage for it (`ballista::build_in_tasks`).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNode;
use datafusion::common::{Column, NullEquality, ScalarValue};
use datafusion::datasource::{provider_as_source, source_as_provider};
use datafusion::error::Result;
use datafusion::execution::SessionState;
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::{Expr, JoinType, LogicalPlan, LogicalPlanBuilder, TableScan, cast, col, lit};
use datafusion::physical_plan::{ExecutionPlan, collect};

use crate::expr::key_function::KeyFunction;
use crate::provider::HiddenPartitionsTable;
use crate::provider::scan_exec::JoinKeys;

/// A query planner that prunes our tables' scans by join keys, then hands
/// the plan to `inner` (DataFusion's default planner, or Ballista's).
pub struct JoinKeyPruningPlanner {
    inner: Arc<dyn QueryPlanner + Send + Sync>,
}

impl fmt::Debug for JoinKeyPruningPlanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinKeyPruningPlanner").finish_non_exhaustive()
    }
}

impl JoinKeyPruningPlanner {
    pub fn new(inner: Arc<dyn QueryPlanner + Send + Sync>) -> Self {
        Self { inner }
    }
}

/// One scan that a join's other side may prune.
struct Candidate {
    /// Where the scan is: the input indexes from the root to it.
    path: Vec<usize>,
    /// The column of the scan the join compares, and the function of it
    /// the join's key is (`None`: the column itself).
    column: String,
    function: Option<KeyFunction>,
    /// Why the join cannot prune the scan (then no keys are read).
    refused: Option<String>,
    /// The join's other side, where it is (input indexes from the root),
    /// and its key expression.
    build: LogicalPlan,
    build_path: Vec<usize>,
    key: Expr,
}

#[async_trait]
impl QueryPlanner for JoinKeyPruningPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if let LogicalPlan::Dml(dml) = logical_plan
            && on_cluster(session_state)
            && let Some(what) = runs_here_only(&dml.op)
        {
            return Err(datafusion::error::DataFusionError::Plan(format!(
                "{what} on table {} is not sent to the Ballista cluster (nothing was changed): it reads, rewrites and commits the table's files from the session that plans it, so it must run in a local session (without --ballista, on the same warehouse)",
                dml.table_name
            )));
        }
        let plan = prune(logical_plan, session_state, self.inner.as_ref(), Sides::Replaced).await?;
        self.inner.create_physical_plan(&plan, session_state).await
    }
}

/// Marks a session whose query planner prunes by join keys (so that
/// `EXPLAIN FILES` shows what its queries read).
#[derive(Debug)]
pub struct Installed;

/// Marks a session whose plans run on a Ballista cluster.
#[derive(Debug)]
pub struct OnCluster;

fn on_cluster(state: &dyn Session) -> bool {
    state
        .as_any()
        .downcast_ref::<SessionState>()
        .is_some_and(|s| s.config().get_extension::<OnCluster>().is_some())
}

/// The statements a cluster session refuses before sending any job:
/// DELETE, UPDATE, MERGE and TRUNCATE (their row-level checks and commits
/// run where they are planned); INSERT and CREATE TABLE AS run there.
fn runs_here_only(op: &datafusion::logical_expr::WriteOp) -> Option<&'static str> {
    use datafusion::logical_expr::WriteOp;
    match op {
        WriteOp::Delete => Some("DELETE"),
        WriteOp::Update => Some("UPDATE"),
        WriteOp::MergeInto(_) => Some("MERGE"),
        WriteOp::Truncate => Some("TRUNCATE"),
        WriteOp::Insert(_) | WriteOp::Ctas => None,
        _ => Some("this statement"),
    }
}

/// Whether `state`'s query planner prunes by join keys.
pub fn installed(state: &SessionState) -> bool {
    state.config().get_extension::<Installed>().is_some()
}

/// What [`prune`] does with a small side it ran whole on a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    /// Its rows take its place in the plan (a query about to run).
    Replaced,
    /// It stays, and only its keys are found (`EXPLAIN FILES`: the files
    /// the query reads, the side's too).
    Kept,
}

/// `plan` with each scan of our tables that a join's other side may prune
/// planned with that side's keys, found by running it with `planner`
/// (up to `hidden_partitions.join_prune_max_keys`; 0: `plan` unchanged).
pub async fn prune(
    plan: &LogicalPlan,
    state: &dyn Session,
    planner: &(dyn QueryPlanner + Send + Sync),
    sides: Sides,
) -> Result<LogicalPlan> {
    let max_keys = state
        .config_options()
        .extensions
        .get::<crate::config::HiddenPartitionsOptions>()
        .map_or(0, |o| o.join_prune_max_keys);
    // Statements that change tables pick their files themselves; EXPLAIN
    // shows the plan as written.
    let query = !matches!(
        plan,
        LogicalPlan::Explain(_) | LogicalPlan::Dml(_) | LogicalPlan::Ddl(_) | LogicalPlan::Statement(_)
    );
    let mut candidates = Vec::new();
    if max_keys > 0 && query {
        find(plan, &mut Vec::new(), &mut candidates);
    }
    let mut plan = plan.clone();
    // Build sides run whole on a cluster, by their path: their rows.
    let mut ran: HashMap<Vec<usize>, Option<Vec<RecordBatch>>> = HashMap::new();
    for candidate in &candidates {
        if sides == Sides::Replaced
            && candidate.refused.is_none()
            && !ran.contains_key(&candidate.build_path)
            && runs_whole(candidate, &candidates, state)
        {
            let rows = rows_of(&candidate.build, state, planner).await?;
            if let Some(batches) = &rows
                && let Some(inlined) = inlined(&candidate.build, batches)?
            {
                plan = replace_at(&plan, &candidate.build_path, &|_| Ok(inlined.clone()))?;
            }
            ran.insert(candidate.build_path.clone(), rows);
        }
    }
    for candidate in candidates {
        let (values, range) = match (&candidate.refused, ran.get(&candidate.build_path)) {
            (Some(_), _) => (None, None),
            (None, Some(Some(batches))) => keys_of_rows(&candidate, batches, state, max_keys)?,
            (None, _) => {
                let values = keys(&candidate, state, planner, max_keys).await?;
                // Too many keys for a list: their range still prunes through
                // identity, truncate and the time transforms.
                let range = match values {
                    Some(_) => None,
                    None => range(&candidate, state, planner).await?,
                };
                (values, range)
            }
        };
        let keys = JoinKeys {
            column: candidate.column.clone(),
            function: candidate.function.clone(),
            values,
            range,
            max: max_keys,
            refused: candidate.refused.clone(),
        };
        plan = replace_at(&plan, &candidate.path, &|node| match node {
            LogicalPlan::TableScan(scan) => {
                let Some(ours) = source_as_provider(&scan.source)
                    .ok()
                    .and_then(|p| p.downcast_ref::<HiddenPartitionsTable>().cloned())
                else {
                    return Ok(node.clone());
                };
                let mut scan: TableScan = scan.clone();
                scan.source = provider_as_source(Arc::new(ours.with_join_keys(keys.clone())));
                Ok(LogicalPlan::TableScan(scan))
            }
            other => Ok(other.clone()),
        })?;
    }
    Ok(plan)
}

/// The distinct non-NULL values of the candidate's build key, or `None`
/// when there are more than `max`.
async fn keys(
    c: &Candidate,
    state: &dyn Session,
    planner: &(dyn QueryPlanner + Send + Sync),
    max: usize,
) -> Result<Option<Vec<ScalarValue>>> {
    let keys = LogicalPlanBuilder::from(c.build.clone())
        .project(vec![c.key.clone().alias("__hp_key")])?
        .filter(col("__hp_key").is_not_null())?
        .distinct()?
        .limit(0, Some(max + 1))?
        .build()?;
    let mut values = Vec::new();
    for b in &run(keys, state, planner, one_task(c, state)).await? {
        for i in 0..b.num_rows() {
            values.push(ScalarValue::try_from_array(b.column(0), i)?);
        }
    }
    Ok((values.len() <= max).then_some(values))
}

/// The smallest and largest non-NULL value of the candidate's build key.
async fn range(
    c: &Candidate,
    state: &dyn Session,
    planner: &(dyn QueryPlanner + Send + Sync),
) -> Result<Option<(ScalarValue, ScalarValue)>> {
    use datafusion::functions_aggregate::expr_fn::{max, min};
    let bounds = LogicalPlanBuilder::from(c.build.clone())
        .project(vec![c.key.clone().alias("__hp_key")])?
        .aggregate(Vec::<Expr>::new(), vec![min(col("__hp_key")), max(col("__hp_key"))])?
        .build()?;
    let batches = run(bounds, state, planner, one_task(c, state)).await?;
    let Some(b) = batches.iter().find(|b| b.num_rows() > 0) else {
        return Ok(None);
    };
    let (low, high) = (
        ScalarValue::try_from_array(b.column(0), 0)?,
        ScalarValue::try_from_array(b.column(1), 0)?,
    );
    Ok((!low.is_null() && !high.is_null()).then_some((low, high)))
}

/// On a cluster, a build side of at most this many rows (as its tables'
/// snapshots count them) runs whole, once, in one task, and its rows
/// travel in the plan in its place (up to [`INLINE_BYTES`]): the join then
/// builds its table in each task of the probe's stage
/// (`ballista::build_in_tasks`), where Ballista would give the side a
/// stage of its own, and the side is not read twice.
const INLINE_ROWS: u64 = 10_000;

/// Bytes of rows (in memory) a plan carries at most in place of a side.
const INLINE_BYTES: usize = 1024 * 1024;

/// Whether `c`'s build side runs whole: on a cluster, small, of column
/// types that travel as literals, and not holding a scan another join
/// prunes (that pruning would be lost when the side is replaced).
fn runs_whole(c: &Candidate, all: &[Candidate], state: &dyn Session) -> bool {
    on_cluster(state)
        && estimated_rows(&c.build).is_some_and(|rows| rows <= INLINE_ROWS)
        && !all.iter().any(|o| o.path.starts_with(&c.build_path))
        && c.build
            .schema()
            .fields()
            .iter()
            .all(|f| crate::values::is_flat_scalar(f.data_type()))
}

/// The rows of `build` (run on the cluster in one task), `None` when it
/// has more than [`INLINE_ROWS`].
async fn rows_of(
    build: &LogicalPlan,
    state: &dyn Session,
    planner: &(dyn QueryPlanner + Send + Sync),
) -> Result<Option<Vec<RecordBatch>>> {
    let limited = LogicalPlanBuilder::from(build.clone())
        .limit(0, Some(INLINE_ROWS as usize + 1))?
        .build()?;
    let batches = run(limited, state, planner, true).await?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    Ok((rows as u64 <= INLINE_ROWS).then_some(batches))
}

/// A plan of `batches` (the rows of `build`) with `build`'s schema, names
/// and qualifiers: `VALUES` and a projection naming its columns; `None`
/// when there are no rows or more than [`INLINE_BYTES`].
fn inlined(build: &LogicalPlan, batches: &[RecordBatch]) -> Result<Option<LogicalPlan>> {
    let bytes: usize = batches.iter().map(|b| b.get_array_memory_size()).sum();
    if bytes > INLINE_BYTES {
        return Ok(None);
    }
    let mut rows = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            let row = b
                .columns()
                .iter()
                .map(|c| ScalarValue::try_from_array(c, i).map(lit))
                .collect::<Result<Vec<_>>>()?;
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return Ok(None);
    }
    let values = LogicalPlanBuilder::values(rows)?.build()?;
    let names: Vec<Expr> = build
        .schema()
        .iter()
        .enumerate()
        .map(|(i, (qualifier, field))| {
            let column = Expr::Column(Column::from(values.schema().qualified_field(i)));
            let typed = match values.schema().field(i).data_type() == field.data_type() {
                true => column,
                false => cast(column, field.data_type().clone()),
            };
            typed.alias_qualified(qualifier.cloned(), field.name())
        })
        .collect();
    let plan = LogicalPlanBuilder::from(values).project(names)?.build()?;
    Ok(Some(plan))
}

/// [`keys`] and [`range`] of `c`, from its build side's rows.
fn keys_of_rows(
    c: &Candidate,
    batches: &[RecordBatch],
    state: &dyn Session,
    max: usize,
) -> Result<(Option<Vec<ScalarValue>>, Option<(ScalarValue, ScalarValue)>)> {
    let key = state.create_physical_expr(c.key.clone(), c.build.schema())?;
    let mut seen = std::collections::HashSet::new();
    let mut values = Vec::new();
    for b in batches {
        let array = key.evaluate(b)?.into_array(b.num_rows())?;
        for i in 0..array.len() {
            if array.is_valid(i) {
                let value = ScalarValue::try_from_array(&array, i)?;
                if seen.insert(value.clone()) {
                    values.push(value);
                }
            }
        }
    }
    if values.len() <= max {
        return Ok((Some(values), None));
    }
    let low = values
        .iter()
        .min_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let high = values
        .iter()
        .max_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    Ok((None, low.cloned().zip(high.cloned())))
}

/// On a cluster, a build side of at most this many rows (as its tables'
/// snapshots count them) finds its keys in one task: a single stage, where
/// more partitions add a shuffle and a second stage (about 20 ms against
/// 10 ms for a one-file dimension on two executors).
const ONE_TASK_ROWS: u64 = 1_000_000;

fn one_task(c: &Candidate, state: &dyn Session) -> bool {
    on_cluster(state) && estimated_rows(&c.build).is_some_and(|rows| rows <= ONE_TASK_ROWS)
}

/// The batches of `plan`, optimized by `state` and planned by `planner`
/// (in one partition when `one_task`).
async fn run(
    plan: LogicalPlan,
    state: &dyn Session,
    planner: &(dyn QueryPlanner + Send + Sync),
    one_task: bool,
) -> Result<Vec<datafusion::arrow::record_batch::RecordBatch>> {
    let Some(s) = state.as_any().downcast_ref::<SessionState>() else {
        let physical = planner.create_physical_plan(&plan, state).await?;
        return collect(physical, state.task_ctx()).await;
    };
    let single;
    let s = if one_task {
        let mut copy = s.clone();
        copy.config_mut().options_mut().execution.target_partitions = 1;
        single = copy;
        &single
    } else {
        s
    };
    let optimized = s.optimize(&plan)?;
    let physical = planner.create_physical_plan(&optimized, s).await?;
    collect(physical, s.task_ctx()).await
}

/// The candidates of `plan` (at `path` from the root), into `out`.
fn find(plan: &LogicalPlan, path: &mut Vec<usize>, out: &mut Vec<Candidate>) {
    // In a join where NULL equals NULL (`IS NOT DISTINCT FROM`) a NULL key
    // matches: a list of keys cannot say so.
    if let LogicalPlan::Join(join) = plan
        && join.null_equality == NullEquality::NullEqualsNothing
    {
        let (left_ok, right_ok) = prunable(join.join_type);
        // Only the larger side is pruned by the smaller one's keys: finding
        // the keys reads the other side once more.
        let (left_rows, right_rows) = (estimated_rows(&join.left), estimated_rows(&join.right));
        // The other side runs twice (for its keys, then in the join): both
        // runs must give the same rows, so no volatile function (random())
        // may be in it.
        let left_ok =
            left_ok && !volatile(&join.right) && matches!((left_rows, right_rows), (Some(l), Some(r)) if r < l);
        let right_ok =
            right_ok && !volatile(&join.left) && matches!((left_rows, right_rows), (Some(l), Some(r)) if l < r);
        for (l, r) in &join.on {
            let sides = [
                (left_ok, &join.left, l, &join.right, r, 0),
                (right_ok, &join.right, r, &join.left, l, 1),
            ];
            for (ok, side, key, other, other_key, index) in sides {
                if !ok {
                    continue;
                }
                let mut at = Vec::new();
                if let Some(found) = scan_column(side, key, &mut at) {
                    let mut full = path.clone();
                    full.push(index);
                    full.extend(at);
                    let (column, function, refused) = match found {
                        Ok((column, function)) => (column, function, None),
                        Err(reason) => (String::new(), None, Some(reason)),
                    };
                    let mut build_path = path.clone();
                    build_path.push(1 - index);
                    out.push(Candidate {
                        path: full,
                        column,
                        function,
                        refused,
                        build: other.as_ref().clone(),
                        build_path,
                        key: other_key.clone(),
                    });
                }
            }
        }
    }
    for (i, input) in plan.inputs().into_iter().enumerate() {
        path.push(i);
        find(input, path, out);
        path.pop();
    }
}

/// Whether an expression of `plan` may give another value each time it runs.
fn volatile(plan: &LogicalPlan) -> bool {
    plan.exists(|node| Ok(node.expressions().iter().any(Expr::is_volatile)))
        .unwrap_or(true)
}

/// The rows `plan`'s scans read at most: our tables' record counts (from
/// the snapshot summary), other tables' exact or estimated statistics;
/// `None` when a scan's count is unknown.
fn estimated_rows(plan: &LogicalPlan) -> Option<u64> {
    let mut total = Some(0u64);
    let _ = plan.apply(|node| {
        if let LogicalPlan::TableScan(scan) = node {
            let rows = source_as_provider(&scan.source).ok().and_then(|p| {
                if let Some(ours) = p.downcast_ref::<HiddenPartitionsTable>() {
                    return Some(
                        ours.snapshot()
                            .and_then(|s| s.summary.get("total-records"))
                            .and_then(|v| v.parse::<u64>().ok())
                            .unwrap_or(0),
                    );
                }
                p.statistics().and_then(|s| s.num_rows.get_value().map(|n| *n as u64))
            });
            total = total.zip(rows).map(|(t, r)| t.saturating_add(r));
        }
        Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
    });
    total
}

/// `plan` with the node at `path` replaced by `f` of it.
fn replace_at(
    plan: &LogicalPlan,
    path: &[usize],
    f: &dyn Fn(&LogicalPlan) -> Result<LogicalPlan>,
) -> Result<LogicalPlan> {
    let Some((first, rest)) = path.split_first() else {
        return f(plan);
    };
    let inputs = plan
        .inputs()
        .into_iter()
        .enumerate()
        .map(|(i, input)| {
            if i == *first {
                replace_at(input, rest, f)
            } else {
                Ok(input.clone())
            }
        })
        .collect::<Result<Vec<_>>>()?;
    plan.with_new_exprs(plan.expressions(), inputs)
}

/// Which sides of a join of `kind` may be pruned by the other's keys.
fn prunable(kind: JoinType) -> (bool, bool) {
    match kind {
        JoinType::Inner | JoinType::LeftSemi | JoinType::RightSemi => (true, true),
        JoinType::Left | JoinType::LeftAnti | JoinType::LeftMark => (false, true),
        JoinType::Right | JoinType::RightAnti | JoinType::RightMark => (true, false),
        JoinType::Full => (false, false),
    }
}

/// The column of a scan of one of our tables that `key` (an expression
/// over `side`) is, or is an invertible function of (`KeyFunction`),
/// through filters, aliases and projections (their expressions are
/// substituted into the key); `path` gets the input indexes down to the
/// scan. `Some(Err(why))`: the key reaches our scan but cannot prune it.
fn scan_column(
    side: &LogicalPlan,
    key: &Expr,
    path: &mut Vec<usize>,
) -> Option<std::result::Result<(String, Option<KeyFunction>), String>> {
    let mut key = crate::expr::unqualified(key.clone()).ok()?;
    let mut node = side;
    loop {
        match node {
            LogicalPlan::Filter(f) => node = f.input.as_ref(),
            LogicalPlan::SubqueryAlias(a) => node = a.input.as_ref(),
            LogicalPlan::Projection(p) => {
                key = substituted(key, p)?;
                node = p.input.as_ref();
            }
            LogicalPlan::TableScan(scan) => {
                // A scan that stops after `fetch` rows would return other
                // rows from fewer files.
                if scan.fetch.is_some() {
                    return None;
                }
                let provider = source_as_provider(&scan.source).ok()?;
                let ours = provider.downcast_ref::<HiddenPartitionsTable>()?;
                let not_invertible = || Some(Err(format!("join key {key} is not invertible")));
                let Some((column, function)) = KeyFunction::of(&key) else {
                    return not_invertible();
                };
                let field = ours.arrow_schema().field_with_name(&column.name).ok()?.clone();
                match &function {
                    // Not floats: NaN and -0.0 make a list of keys a
                    // different test than the join's equality.
                    None if field.data_type().is_floating() => return None,
                    Some(KeyFunction::Cast(to)) if to.is_floating() => return None,
                    Some(f) if !f.invertible(field.data_type()) => return not_invertible(),
                    _ => {}
                }
                return Some(Ok((column.name, function)));
            }
            _ => return None,
        }
        path.push(0);
    }
}

/// `key` (over `p`'s output) with each column replaced by the expression
/// `p` computes it with, over `p`'s input; `None` when a column is not
/// `p`'s.
fn substituted(key: Expr, p: &datafusion::logical_expr::Projection) -> Option<Expr> {
    use datafusion::common::tree_node::{Transformed, TreeNode};
    let columns = p.schema.columns();
    let mut missing = false;
    let out = key
        .transform_up(|e| match e {
            Expr::Column(c) => match columns.iter().position(|col| col.name == c.name) {
                Some(i) => {
                    let mut definition = p.expr[i].clone();
                    while let Expr::Alias(a) = definition {
                        definition = *a.expr;
                    }
                    Ok(Transformed::yes(crate::expr::unqualified(definition)?))
                }
                None => {
                    missing = true;
                    Ok(Transformed::no(Expr::Column(c)))
                }
            },
            other => Ok(Transformed::no(other)),
        })
        .ok()?
        .data;
    (!missing).then_some(out)
}
