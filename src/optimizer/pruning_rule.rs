//! `hidden_partitions_pruning`: a physical optimizer rule that prunes the
//! files of hidden-partitions scans with filters that reached them only
//! during physical optimization.
//!
//! Where it sits: appended after all of DataFusion's default rules, so after
//! `FilterPushdown` (both phases) has handed every `FilterExec` predicate and
//! every dynamic filter to the scans. For each scan it takes the *static*
//! filters (those with no dynamic part), projects them through each file's
//! table spec onto its partition values, and drops the files that cannot
//! match — before anything is opened, and visibly in `EXPLAIN`
//! (`files=S/T`). Dynamic filters (hash join, TopK) have no value yet at this
//! point; the scan applies them file by file at run time.
//!
//! Most filters were already applied by the logical `scan(filters)` path;
//! this rule catches the rest, e.g. filters DataFusion's logical optimizer
//! did not push into the table scan.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;

use crate::provider::HiddenPartitionsScanExec;

/// The rule's name, as listed among a session's physical optimizer rules.
pub const RULE_NAME: &str = "hidden_partitions_pruning";

#[derive(Debug, Default)]
pub struct PartitionPruningRule;

impl PhysicalOptimizerRule for PartitionPruningRule {
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, _config: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(scan) = node.downcast_ref::<HiddenPartitionsScanExec>() else {
                return Ok(Transformed::no(node));
            };
            Ok(match scan.prune_with_static_filters()? {
                Some(pruned) => Transformed::yes(Arc::new(pruned) as Arc<dyn ExecutionPlan>),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        RULE_NAME
    }

    fn schema_check(&self) -> bool {
        true
    }
}
