//! The scan node: reads the files planning selected, and prunes more of them
//! at run time.
//!
//! ```text
//! HiddenPartitionsScan: table=events, files=3/40, parquet: file_groups={…}, predicate=…
//! ```
//!
//! It is a leaf that owns DataFusion's Parquet `DataSourceExec`. Filters that
//! reach the scan during physical optimization — a `FilterExec` above it, and
//! dynamic filters from hash joins and TopK (`FilterPushdownPhase::Post`) —
//! are handed to the Parquet source (row groups, pages, file statistics) *and*
//! kept here: before each file is opened their current state is projected
//! through the file's table spec onto its partition values, and a file whose
//! partition cannot match is skipped. So a fact table joined to a filtered
//! dimension reads only the partitions (also `bucket(N, key)` ones) the
//! build-side keys map to, and a TopK stops opening files once its threshold
//! excludes their partitions.
//!
//! With several table specs the count is given per spec:
//! `files=5/40 (spec 0: 2/30, spec 1: 3/10)`. After execution (`EXPLAIN
//! ANALYZE`) `files=` counts the files actually opened.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Column, ScalarValue, Statistics};
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfig, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, col, lit};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_common::physical_expr::snapshot_physical_expr_opt;
use datafusion::physical_plan::filter_pushdown::{ChildPushdownResult, FilterPushdownPhase, FilterPushdownPropagation};
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, StatisticsArgs};
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;

use crate::expr::key_function::KeyFunction;
use crate::expr::summary::manifest_may_match;
use crate::expr::{Predicate, bind_physical, evaluate, project_inclusive, rewrite_not};
use crate::plan::files::SpecFileCount;
use crate::spec::{FieldSummary, TableMetadata};
use crate::store::observe::{RequestCounts, Requests};
use datafusion::arrow::datatypes::DataType;

/// What run-time pruning knows about each selected file.
#[derive(Debug, Clone)]
pub struct FileInfo {
    pub spec_id: i32,
    pub partition: Vec<ScalarValue>,
    /// Index into [`RuntimeContext::manifests`].
    pub manifest: usize,
    pub record_count: u64,
    /// Deleted row positions (a plan sent to another node reattaches them
    /// to the Parquet scan, whose encoding drops row selections).
    pub deletes: Option<Arc<[u64]>>,
}

/// Per-table context for run-time pruning: the specs, the partition
/// summaries of the snapshot's manifests, and each file's partition.
#[derive(Debug)]
pub struct RuntimeContext {
    pub metadata: Arc<TableMetadata>,
    pub manifests: Vec<Vec<FieldSummary>>,
    pub files: HashMap<Path, FileInfo>,
    /// Object store requests of planning, and the counter to measure the scan's.
    pub requests: Option<ScanRequests>,
    /// The storage options the table's store was opened with (a plan sent
    /// to another node opens the store again with them).
    pub options: crate::store::connect::StorageOptions,
}

impl RuntimeContext {
    /// What run-time pruning needs of `snapshot` and of the planned `files`.
    pub fn new(
        metadata: Arc<TableMetadata>,
        snapshot: Option<&crate::spec::Snapshot>,
        files: &[crate::plan::files::PlannedFile],
        requests: Option<ScanRequests>,
        options: crate::store::connect::StorageOptions,
    ) -> Self {
        Self {
            metadata,
            manifests: snapshot
                .map(|s| {
                    s.manifests
                        .iter()
                        .flat_map(|m| m.iter())
                        .map(|m| m.partitions.clone())
                        .collect()
                })
                .unwrap_or_default(),
            files: files
                .iter()
                .map(|f| {
                    let info = FileInfo {
                        spec_id: f.spec_id,
                        partition: f.partition.clone(),
                        manifest: f.manifest,
                        record_count: f.record_count,
                        deletes: f.deletes.clone(),
                    };
                    (f.path.clone(), info)
                })
                .collect(),
            requests,
            options,
        }
    }
}

/// Requests the store served for this scan: while planning, and (with the
/// session's counter; concurrent statements of the session add to it) while
/// the scan ran.
#[derive(Debug)]
pub struct ScanRequests {
    pub counts: Arc<RequestCounts>,
    pub planning: Requests,
    pub started: OnceLock<Requests>,
}

/// Why run-time pruning keeps or skips a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Keep,
    /// The file's whole manifest cannot match (by its partition summary).
    SkipManifest,
    /// The file's own partition values cannot match.
    SkipFile,
}

#[derive(Debug, Clone)]
pub struct HiddenPartitionsScanExec {
    table: String,
    counts: Vec<SpecFileCount>,
    inner: Arc<dyn ExecutionPlan>,
    runtime: Arc<RuntimeContext>,
    /// Filters received through physical filter pushdown (static and dynamic).
    filters: Vec<Arc<dyn PhysicalExpr>>,
    metrics: ExecutionPlanMetricsSet,
    opened: Count,
    executed: Arc<AtomicBool>,
    /// Show the Parquet scan as this node's child (see [`Self::with_inner_as_child`]).
    inner_as_child: bool,
    /// Keys a join's other side gave this scan (`optimizer::join_keys`).
    join_keys: Vec<Arc<JoinKeys>>,
}

/// The keys a join's other side gave a scan (`optimizer::join_keys`):
/// the scan is planned with `key IN (values)`, or, when the other side
/// had more than `max` distinct keys (`values` is `None`), with
/// `key BETWEEN low AND high` of their `range` (nothing when unknown).
/// The key is `column`, or `function(column)` (`expr::key_function`).
/// A join that cannot prune the scan says why in `refused`.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinKeys {
    pub column: String,
    pub function: Option<KeyFunction>,
    pub values: Option<Vec<ScalarValue>>,
    pub range: Option<(ScalarValue, ScalarValue)>,
    pub max: usize,
    pub refused: Option<String>,
}

impl JoinKeys {
    /// The number of keys found, `None` past the limit.
    pub fn count(&self) -> Option<usize> {
        self.values.as_ref().map(Vec::len)
    }

    /// The predicate the scan is planned with (no keys: no row matches).
    pub fn predicate(&self) -> Option<Expr> {
        if self.refused.is_some() {
            return None;
        }
        let key = || {
            let column = col(Column::new_unqualified(&self.column));
            match &self.function {
                Some(f) => f.apply(column),
                None => column,
            }
        };
        let keys = match (&self.values, &self.range) {
            (Some(values), _) if values.is_empty() => lit(false),
            (Some(values), _) => key().in_list(values.iter().cloned().map(lit).collect(), false),
            (None, Some((low, high))) => key().gt_eq(lit(low.clone())).and(key().lt_eq(lit(high.clone()))),
            (None, None) => return None,
        };
        Some(match self.cast_fails() {
            Some(fails) => keys.or(fails),
            None => keys,
        })
    }

    /// Where a narrowing integer cast of the key raises an error (a BIGINT
    /// outside INT for `CAST(c AS INT)`): those rows stay, so the join fails
    /// on them as it would without pruning. (DataFusion's simplifier reads
    /// `CAST(c AS INT) IN (…)` as `c IN (…)`, which would drop them.)
    fn cast_fails(&self) -> Option<Expr> {
        let Some(KeyFunction::Cast(to)) = &self.function else {
            return None;
        };
        let (min, max) = crate::expr::normalize::integer_range(to).filter(|_| to != &DataType::Int64)?;
        let column = || col(Column::new_unqualified(&self.column));
        Some(column().lt(lit(min)).or(column().gt(lit(max))))
    }

    /// The key as written: the column, or the function of it.
    fn key(&self) -> String {
        match &self.function {
            Some(f) => f.display(&self.column),
            None => self.column.clone(),
        }
    }
}

impl fmt::Display for JoinKeys {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if let Some(reason) = &self.refused {
            return write!(f, "{reason}, not pruned by the join");
        }
        match (self.count(), &self.range) {
            (Some(n), _) => write!(f, "{} IN {n} keys from a join", self.key()),
            (None, Some((low, high))) => write!(
                f,
                "{} BETWEEN {low} AND {high} from a join (more than {} keys)",
                self.key(),
                self.max
            ),
            (None, None) => write!(
                f,
                "{}: a join's other side has more than {} keys, not pruned",
                self.key(),
                self.max
            ),
        }
    }
}

impl HiddenPartitionsScanExec {
    pub fn new(
        table: String,
        counts: Vec<SpecFileCount>,
        inner: Arc<dyn ExecutionPlan>,
        runtime: Arc<RuntimeContext>,
    ) -> Self {
        let node = Self::without_planning_metrics(table, counts, inner, runtime);
        // Planning's work, per table spec, as metrics of the scan.
        let metrics = &node.metrics;
        for c in node.counts.iter().filter(|c| c.total > 0) {
            let spec = c.spec_id;
            let add = |name: String, v: usize| MetricBuilder::new(metrics).global_counter(name).add(v);
            add(format!("spec{spec}_files_total"), c.total);
            add(format!("spec{spec}_files_selected"), c.selected);
            add(
                format!("spec{spec}_manifest_files_skipped_by_summary"),
                c.pruned_by_manifest_summary,
            );
            add(format!("spec{spec}_files_pruned_by_partition"), c.pruned_by_partition);
            add(format!("spec{spec}_files_pruned_by_stats"), c.pruned_by_stats);
            add(format!("spec{spec}_bytes_selected"), c.selected_bytes as usize);
            add(format!("spec{spec}_bytes_total"), c.total_bytes as usize);
        }
        // Position deletes (merge-on-read) the scan skips.
        let deleted: Vec<usize> = node
            .runtime
            .files
            .values()
            .filter_map(|f| f.deletes.as_ref().map(|d| d.len()))
            .collect();
        if !deleted.is_empty() {
            let add = |name: &'static str, v: usize| MetricBuilder::new(metrics).global_counter(name).add(v);
            add("files_with_position_deletes", deleted.len());
            add("rows_deleted_by_position", deleted.iter().sum());
        }
        if let Some(r) = &node.runtime.requests {
            let add = |name: &'static str, v: u64| MetricBuilder::new(metrics).global_counter(name).add(v as usize);
            add("requests_planning_get", r.planning.get);
            add("requests_planning_head", r.planning.head);
            add("requests_planning_list", r.planning.list);
        }
        node
    }

    /// The scan without the planning metrics (a copy of a plan decoded on
    /// a cluster node: each task would report planning's work again).
    pub fn without_planning_metrics(
        table: String,
        counts: Vec<SpecFileCount>,
        inner: Arc<dyn ExecutionPlan>,
        runtime: Arc<RuntimeContext>,
    ) -> Self {
        let metrics = ExecutionPlanMetricsSet::new();
        let opened = MetricBuilder::new(&metrics).global_counter("files_opened");
        Self {
            table,
            counts,
            inner,
            runtime,
            filters: Vec::new(),
            metrics,
            opened,
            executed: Arc::new(AtomicBool::new(false)),
            inner_as_child: false,
            join_keys: Vec::new(),
        }
    }

    /// This scan, planned with the keys of a join (shown by EXPLAIN, counted
    /// in the `join_keys` metric).
    pub fn with_join_keys(mut self, keys: Vec<Arc<JoinKeys>>) -> Self {
        if !keys.is_empty() {
            MetricBuilder::new(&self.metrics)
                .global_counter("join_keys")
                .add(keys.iter().map(|k| k.count().unwrap_or(0)).sum());
        }
        self.join_keys = keys;
        self
    }

    /// This scan with the Parquet scan as its child, for a distributed
    /// planner that hands each task a slice of the file groups (Ballista):
    /// the slice reaches the files this node reads. Only after physical
    /// optimization, which must not see the Parquet scan on its own.
    pub fn with_inner_as_child(&self) -> Self {
        let mut node = self.with_inner(Arc::clone(&self.inner), self.filters.clone());
        node.inner_as_child = true;
        node
    }

    /// Whether the Parquet scan is this node's child.
    pub fn inner_is_child(&self) -> bool {
        self.inner_as_child
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    /// Files selected / total, per table spec, as planned.
    pub fn file_counts(&self) -> &[SpecFileCount] {
        &self.counts
    }

    /// Files opened so far, once the scan has run.
    pub fn files_opened(&self) -> Option<usize> {
        self.executed.load(Ordering::Relaxed).then(|| self.opened.value())
    }

    /// The keys of joins this scan was planned with.
    pub fn join_keys(&self) -> &[Arc<JoinKeys>] {
        &self.join_keys
    }

    /// The Parquet scan this node drives.
    pub fn inner(&self) -> &Arc<dyn ExecutionPlan> {
        &self.inner
    }

    /// Filters pushed into the scan during physical optimization.
    pub fn runtime_filters(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.filters
    }

    /// A scan decoded on a cluster node: no planning metrics (every task
    /// would report planning's work again).
    pub fn decoded(
        table: String,
        counts: Vec<SpecFileCount>,
        inner: Arc<dyn ExecutionPlan>,
        runtime: Arc<RuntimeContext>,
        filters: Vec<Arc<dyn PhysicalExpr>>,
        inner_as_child: bool,
    ) -> Self {
        let mut node = Self::without_planning_metrics(table, counts, inner, runtime);
        node.filters = filters;
        node.inner_as_child = inner_as_child;
        node
    }

    /// What run-time pruning knows about the table and the selected files.
    pub fn runtime(&self) -> &Arc<RuntimeContext> {
        &self.runtime
    }

    fn with_inner(&self, inner: Arc<dyn ExecutionPlan>, filters: Vec<Arc<dyn PhysicalExpr>>) -> Self {
        let mut node = Self::new(
            self.table.clone(),
            self.counts.clone(),
            inner,
            Arc::clone(&self.runtime),
        );
        node.filters = filters;
        node.inner_as_child = self.inner_as_child;
        node.with_join_keys(self.join_keys.clone())
    }

    /// Drop the files that the static (non-dynamic) pushed-down filters rule
    /// out; `None` when nothing changes. The number of file groups is kept.
    pub fn prune_with_static_filters(&self) -> Result<Option<Self>> {
        let statics: Vec<Arc<dyn PhysicalExpr>> = self
            .filters
            .iter()
            .filter(|f| snapshot_physical_expr_opt(Arc::clone(f)).is_ok_and(|t| !t.transformed))
            .cloned()
            .collect();
        let Some(config) = self.file_config() else {
            return Ok(None);
        };
        if statics.is_empty() {
            return Ok(None);
        }
        let mut counts = self.counts.clone();
        let mut changed = false;
        let groups: Vec<FileGroup> = config
            .file_groups
            .iter()
            .map(|g| {
                let kept: Vec<_> = g
                    .files()
                    .iter()
                    .filter(|f| {
                        let Some(info) = self.runtime.files.get(&f.object_meta.location) else {
                            return true;
                        };
                        let keep = may_match(&self.runtime, &statics, info);
                        if !keep {
                            changed = true;
                            let spec_id = self
                                .runtime
                                .metadata
                                .spec(info.spec_id)
                                .ok()
                                .map(|s| s.partition_spec_id());
                            if let Some(c) = counts.iter_mut().find(|c| Some(c.spec_id) == spec_id) {
                                c.selected -= 1;
                            }
                        }
                        keep
                    })
                    .cloned()
                    .collect();
                FileGroup::new(kept)
            })
            .collect();
        if !changed {
            return Ok(None);
        }
        let pruned = FileScanConfigBuilder::from(config.clone())
            .with_file_groups(groups)
            .build();
        let mut node = self.with_inner(DataSourceExec::from_data_source(pruned), self.filters.clone());
        node.counts = counts;
        Ok(Some(node))
    }

    fn file_config(&self) -> Option<&FileScanConfig> {
        self.inner
            .downcast_ref::<DataSourceExec>()?
            .data_source()
            .downcast_ref::<FileScanConfig>()
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
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let total: usize = self.counts.iter().map(|c| c.total).sum();
        if self.executed.load(Ordering::Relaxed) {
            write!(
                f,
                "HiddenPartitionsScan: table={}, files={}/{total}",
                self.table,
                self.opened.value()
            )?;
        } else {
            write!(
                f,
                "HiddenPartitionsScan: table={}, files={}",
                self.table,
                format_counts(&self.counts)
            )?;
        }
        if !self.filters.is_empty() {
            write!(f, ", runtime_filters={}", self.filters.len())?;
        }
        if !self.join_keys.is_empty() {
            let keys: Vec<String> = self.join_keys.iter().map(|k| k.to_string()).collect();
            write!(f, ", join_keys=[{}]", keys.join("; "))?;
        }
        if self.inner_as_child {
            return Ok(());
        }
        write!(f, ", parquet: ")?;
        match self.inner.downcast_ref::<DataSourceExec>() {
            Some(ds) => ds.fmt_as(t, f),
            None => write!(f, "{}", self.inner.name()),
        }
    }
}

/// Whether a file may hold rows matching the current state of the run-time
/// filters: first its manifest's partition summary, then its partition values.
fn verdict(runtime: &RuntimeContext, filters: &[Arc<dyn PhysicalExpr>], info: &FileInfo) -> Verdict {
    let Ok(current) = runtime.metadata.current_spec() else {
        return Verdict::Keep;
    };
    let Ok(spec) = runtime.metadata.spec(info.spec_id) else {
        return Verdict::Keep;
    };
    let Ok(bound) = spec.partition_spec.bind(&spec.schema) else {
        return Verdict::Keep;
    };
    let predicate = Predicate::and_all(filters.iter().map(|f| rewrite_not(bind_physical(f, &current.schema))));
    let projected = project_inclusive(&predicate, &bound);
    if matches!(projected, Predicate::True) {
        return Verdict::Keep;
    }
    if let Some(summaries) = runtime.manifests.get(info.manifest)
        && !manifest_may_match(&projected, &bound, summaries)
    {
        return Verdict::SkipManifest;
    }
    let column = |id: i32| -> Option<ArrayRef> {
        let idx = spec.partition_spec.fields.iter().position(|f| f.field_id == id)?;
        info.partition.get(idx)?.to_array().ok()
    };
    match evaluate(&projected, 1, &column) {
        Ok(mask) if !(mask.is_valid(0) && mask.value(0)) => Verdict::SkipFile,
        _ => Verdict::Keep,
    }
}

fn may_match(runtime: &RuntimeContext, filters: &[Arc<dyn PhysicalExpr>], info: &FileInfo) -> bool {
    verdict(runtime, filters, info) == Verdict::Keep
}

impl ExecutionPlan for HiddenPartitionsScanExec {
    fn name(&self) -> &str {
        "HiddenPartitionsScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        if self.inner_as_child { vec![&self.inner] } else { vec![] }
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        match (self.inner_as_child, children.as_slice()) {
            (_, []) => Ok(self),
            (true, [inner]) => Ok(Arc::new(self.with_inner(Arc::clone(inner), self.filters.clone()))),
            _ => datafusion::common::internal_err!("HiddenPartitionsScanExec takes no children, or its Parquet scan"),
        }
    }

    /// Ready to run again (the recursive term of `WITH RECURSIVE` runs once
    /// per iteration): the Parquet scan hands its files out from a queue
    /// that one run drains, so a scan that is not our child gets a fresh one.
    fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
        if self.inner_as_child {
            // The plan walk resets the child.
            return Ok(self);
        }
        let mut node = Arc::unwrap_or_clone(self);
        node.inner = datafusion::physical_plan::execution_plan::reset_plan_states(node.inner)?;
        Ok(Arc::new(node))
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        self.inner.apply_expressions(f)
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let stream = self.execute_files(partition, context)?;
        let table = self.table.clone();
        let inner = Arc::clone(&self.inner);
        let schema = stream.schema();
        let stream: SendableRecordBatchStream = Box::pin(RecordBatchStreamAdapter::new(
            schema,
            stream.map_err(move |e| unreadable(&table, &local_files(&inner, partition), e)),
        ));
        let Some(requests) = &self.runtime.requests else {
            return Ok(stream);
        };
        // The scan's requests so far, whenever a partition finishes.
        let started = *requests.started.get_or_init(|| requests.counts.snapshot());
        let counts = Arc::clone(&requests.counts);
        let gauges = ["requests_scan_get", "requests_scan_head", "requests_scan_list"]
            .map(|name| MetricBuilder::new(&self.metrics).global_gauge(name));
        let schema = stream.schema();
        let done = futures::stream::once(async move {
            let n = counts.snapshot().since(&started);
            for (g, v) in gauges.iter().zip([n.get, n.head, n.list]) {
                g.set_max(v as usize);
            }
            None
        })
        .filter_map(futures::future::ready);
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream.chain(done))))
    }

    /// Ours (files planned and pruned) and the Parquet reader's (row
    /// groups and pages skipped by statistics, page index and bloom filters).
    fn metrics(&self) -> Option<MetricsSet> {
        let mut set = self.metrics.clone_inner();
        if let Some(inner) = self.inner.metrics() {
            for metric in inner.iter() {
                set.push(Arc::clone(metric));
            }
        }
        Some(set)
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        self.inner.statistics_from_inputs(&[], args)
    }

    fn supports_limit_pushdown(&self) -> bool {
        true
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        let inner = self.inner.with_fetch(limit)?;
        Some(Arc::new(self.with_inner(inner, self.filters.clone())))
    }

    fn fetch(&self) -> Option<usize> {
        self.inner.fetch()
    }

    fn handle_child_pushdown_result(
        &self,
        phase: FilterPushdownPhase,
        child_pushdown_result: ChildPushdownResult,
        config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn ExecutionPlan>>> {
        let mut filters = self.filters.clone();
        filters.extend(
            child_pushdown_result
                .parent_filters
                .iter()
                .map(|f| Arc::clone(&f.filter)),
        );
        let result = self
            .inner
            .handle_child_pushdown_result(phase, child_pushdown_result, config)?;
        let inner = result.updated_node.unwrap_or_else(|| Arc::clone(&self.inner));
        Ok(FilterPushdownPropagation {
            filters: result.filters,
            updated_node: Some(Arc::new(self.with_inner(inner, filters))),
        })
    }
}

/// The object paths of partition `partition`'s files when they are on the
/// local store, whose object paths lack the leading `/` of the file's path
/// (read only when a read fails).
fn local_files(inner: &Arc<dyn ExecutionPlan>, partition: usize) -> Vec<String> {
    inner
        .downcast_ref::<DataSourceExec>()
        .and_then(|d| d.data_source().downcast_ref::<FileScanConfig>())
        .filter(|c| c.object_store_url.as_str().starts_with("file://"))
        .and_then(|c| c.file_groups.get(partition))
        .map(|g| g.files().iter().map(|f| f.object_meta.location.to_string()).collect())
        .unwrap_or_default()
}

/// A failed read of a data file, with the table it belongs to (and the
/// local files of `local_files` named by their paths); other errors as they are.
fn unreadable(table: &str, local_files: &[String], e: DataFusionError) -> DataFusionError {
    match e {
        DataFusionError::ParquetError(_) | DataFusionError::ObjectStore(_) | DataFusionError::IoError(_) => {
            let message = local_files
                .iter()
                .fold(e.to_string(), |m, file| with_leading_slash(&m, file));
            DataFusionError::Execution(format!("cannot read the data files of table {table}: {message}"))
        }
        e => e,
    }
}

/// `message` with each mention of the object path `file` not already
/// preceded by `/` written as the file's path, `/<file>`.
fn with_leading_slash(message: &str, file: &str) -> String {
    if file.is_empty() || file.starts_with('/') {
        return message.to_string();
    }
    let mut out = String::with_capacity(message.len() + 8);
    let mut rest = message;
    while let Some(i) = rest.find(file) {
        out.push_str(&rest[..i]);
        if !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(file);
        rest = &rest[i + file.len()..];
    }
    out.push_str(rest);
    out
}

impl HiddenPartitionsScanExec {
    /// The files of one partition, pruned at run time by the pushed filters.
    fn execute_files(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        self.executed.store(true, Ordering::Relaxed);
        let (Some(config), false) = (self.file_config(), self.filters.is_empty()) else {
            if let Some(config) = self.file_config() {
                self.opened
                    .add(config.file_groups.get(partition).map_or(0, |g| g.len()));
            }
            return self.inner.execute(partition, context);
        };
        let Some(group) = config.file_groups.get(partition) else {
            return datafusion::common::internal_err!("no file group {partition}");
        };
        let files: Vec<_> = group.files().to_vec();
        let pruned = MetricBuilder::new(&self.metrics).counter("files_pruned_at_runtime", partition);
        let by_manifest =
            MetricBuilder::new(&self.metrics).counter("files_pruned_at_runtime_by_manifest_summary", partition);
        let (runtime, filters, opened) = (Arc::clone(&self.runtime), self.filters.clone(), self.opened.clone());
        // One template without file lists; each opened file gets a copy with just itself.
        let template = FileScanConfigBuilder::from(config.clone())
            .with_file_groups(vec![])
            .build();
        let schema = self.inner.schema();
        // Decide file by file, just before opening it: dynamic filters tighten as the query runs.
        let stream = futures::stream::iter(files)
            .filter_map(move |file| {
                let verdict = match runtime.files.get(&file.object_meta.location) {
                    Some(info) => verdict(&runtime, &filters, info),
                    None => Verdict::Keep,
                };
                if verdict == Verdict::SkipManifest {
                    by_manifest.add(1);
                }
                let opened_file = if verdict == Verdict::Keep {
                    opened.add(1);
                    let one = FileScanConfigBuilder::from(template.clone())
                        .with_file_groups(vec![FileGroup::new(vec![file])])
                        .build();
                    Some(DataSourceExec::from_data_source(one).execute(0, Arc::clone(&context)))
                } else {
                    pruned.add(1);
                    None
                };
                async move { opened_file }
            })
            .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream.boxed())))
    }
}
