//! The last physical rule on a Ballista scheduler: show each scan's
//! Parquet scan as its child.
//!
//! Ballista gives every task of a stage the stage's plan with the leaves
//! cut down to the task's partitions (file groups). Our scan drives its
//! Parquet scan itself, so as a leaf it would be left whole and every task
//! would read partitions `0..k` of it. With the Parquet scan as its child,
//! Ballista slices the file groups and the scan reads exactly its slice.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;

use crate::provider::HiddenPartitionsScanExec;

#[derive(Debug, Default)]
pub struct ScanSlicesForTasks;

impl PhysicalOptimizerRule for ScanSlicesForTasks {
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, _config: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| match node.downcast_ref::<HiddenPartitionsScanExec>() {
            Some(scan) if !scan.inner_is_child() => Ok(Transformed::yes(Arc::new(scan.with_inner_as_child()) as _)),
            _ => Ok(Transformed::no(node)),
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "hidden_partitions_scan_slices_for_tasks"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
