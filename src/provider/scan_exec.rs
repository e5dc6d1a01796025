//! The scan node: a thin parent over DataFusion's Parquet `DataSourceExec`
//! that names the table and reports how many data files pruning kept.
//!
//! ```text
//! HiddenPartitionsScan: table=events, files=3/40
//!   DataSourceExec: file_groups={…}, file_type=parquet
//! ```
//!
//! With several table specs the count is also given per spec:
//! `files=5/40 (spec 0: 2/30, spec 1: 3/10)`. Filters pushed down from above
//! pass through to the Parquet source (row-group and page pruning).

use std::fmt;
use std::sync::Arc;

use datafusion::common::Statistics;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::Result;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::filter_pushdown::{FilterDescription, FilterPushdownPhase};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, StatisticsArgs};

use super::planning::SpecFileCount;

#[derive(Debug)]
pub struct HiddenPartitionsScanExec {
    table: String,
    counts: Vec<SpecFileCount>,
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

impl HiddenPartitionsScanExec {
    pub fn new(table: String, counts: Vec<SpecFileCount>, input: Arc<dyn ExecutionPlan>) -> Self {
        let properties = Arc::clone(input.properties());
        Self {
            table,
            counts,
            input,
            properties,
        }
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    /// Files selected / total, per table spec.
    pub fn file_counts(&self) -> &[SpecFileCount] {
        &self.counts
    }

    pub fn input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }

    fn with_input(&self, input: Arc<dyn ExecutionPlan>) -> Self {
        Self::new(self.table.clone(), self.counts.clone(), input)
    }
}

/// `3/40`, or `5/40 (spec 0: 2/30, spec 1: 3/10)` when several specs have files.
pub fn format_counts(counts: &[SpecFileCount]) -> String {
    let selected: usize = counts.iter().map(|c| c.selected).sum();
    let total: usize = counts.iter().map(|c| c.total).sum();
    let with_files: Vec<&SpecFileCount> = counts.iter().filter(|c| c.total > 0).collect();
    if with_files.len() <= 1 {
        format!("{selected}/{total}")
    } else {
        let per: Vec<String> = with_files
            .iter()
            .map(|c| format!("spec {}: {}/{}", c.spec_id, c.selected, c.total))
            .collect();
        format!("{selected}/{total} ({})", per.join(", "))
    }
}

impl DisplayAs for HiddenPartitionsScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "HiddenPartitionsScan: table={}, files={}",
            self.table,
            format_counts(&self.counts)
        )
    }
}

impl ExecutionPlan for HiddenPartitionsScanExec {
    fn name(&self) -> &str {
        "HiddenPartitionsScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        match children.as_slice() {
            [child] => Ok(Arc::new(self.with_input(Arc::clone(child)))),
            _ => datafusion::common::internal_err!("HiddenPartitionsScanExec takes exactly one child"),
        }
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        self.input.execute(partition, context)
    }

    fn statistics_from_inputs(
        &self,
        input_stats: &[Arc<Statistics>],
        _args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        match input_stats {
            [child] => Ok(Arc::clone(child)),
            _ => Ok(Arc::new(Statistics::new_unknown(&self.schema()))),
        }
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn supports_limit_pushdown(&self) -> bool {
        true
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        let input = self.input.with_fetch(limit)?;
        Some(Arc::new(self.with_input(input)))
    }

    fn fetch(&self) -> Option<usize> {
        self.input.fetch()
    }

    fn gather_filters_for_pushdown(
        &self,
        _phase: FilterPushdownPhase,
        parent_filters: Vec<Arc<dyn PhysicalExpr>>,
        _config: &ConfigOptions,
    ) -> Result<FilterDescription> {
        FilterDescription::from_children(parent_filters, &self.children())
    }
}
