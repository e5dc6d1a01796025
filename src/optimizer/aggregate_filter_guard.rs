//! `hidden_partitions_aggregate_filter_guard`: MIN and MAX never push a
//! running bound into a scan.
//!
//! With `datafusion.optimizer.enable_aggregate_dynamic_filter_pushdown`, an
//! aggregate of only MIN/MAX shares a dynamic filter `c < min OR c > max`
//! with the scans below it, tightened as partitions report their bounds.
//! DataFusion 55 merges the partitions' bounds wrongly when one of them has
//! seen only NULLs so far (a typed NULL compares below every value, so the
//! shared MIN sticks at NULL and its term is left out of the filter): the
//! filter becomes `c > max`, and the scans skip the rows holding the true
//! minimum (apache/datafusion#25147, open). A merge-on-read file whose live
//! rows are all NULL in a column triggers it often:
//!
//! | files, read by two partitions          | MIN(s) with the filter | without |
//! |----------------------------------------|------------------------|---------|
//! | `[NULL, NULL]` · `['zz', 'zz']`, `['m']` | `zz`                 | `m`     |
//!
//! Our sessions leave that option off. Where it is turned on anyway, this
//! rule (appended after DataFusion's, so after filter pushdown connected the
//! aggregate to its scans) gives each such aggregate a fresh filter of its
//! own: the one the scans hold is never updated and stays `true`, so every
//! row reaches the aggregate.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{DynamicFilterPhysicalExpr, lit};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::aggregates::AggregateExec;

/// The rule's name, as listed among a session's physical optimizer rules.
pub const AGGREGATE_FILTER_GUARD_NAME: &str = "hidden_partitions_aggregate_filter_guard";

#[derive(Debug, Default)]
pub struct AggregateFilterGuard;

impl PhysicalOptimizerRule for AggregateFilterGuard {
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, _config: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(aggregate) = node.downcast_ref::<AggregateExec>() else {
                return Ok(Transformed::no(node));
            };
            #[allow(deprecated)] // the typed accessor; `dynamic_expressions_produced` gives `dyn PhysicalExpr`
            let Some(shared) = aggregate.dynamic_filter_expr() else {
                return Ok(Transformed::no(node));
            };
            let children = shared.children().into_iter().cloned().collect();
            let own = Arc::new(DynamicFilterPhysicalExpr::new(children, lit(true)));
            let guarded = aggregate.clone().with_dynamic_filter_expr(own)?;
            Ok(Transformed::yes(Arc::new(guarded) as Arc<dyn ExecutionPlan>))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        AGGREGATE_FILTER_GUARD_NAME
    }

    fn schema_check(&self) -> bool {
        true
    }
}
