//! Choosing the data files a scan must read.
//!
//! For every manifest of the snapshot: bind the filters to field ids, push
//! NOT down, project through the manifest's own table spec, evaluate the
//! projected predicate over the manifest's partition columns, then drop files
//! whose column statistics (min/max/null counts) cannot match. All of it is
//! columnar: one kernel call per predicate leaf per manifest.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch, StructArray};
use datafusion::arrow::compute::{and, cast, filter_record_batch};
use datafusion::arrow::datatypes::{DataType, Int64Type, SchemaRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{Column, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::logical_expr::Expr;
use datafusion::logical_expr::utils::conjunction;
use datafusion::physical_optimizer::pruning::{PruningPredicate, PruningPredicateBuilder};
use futures::{StreamExt, TryStreamExt};

use crate::error::Result;
use crate::expr::summary::manifest_may_match;
use crate::expr::{Predicate, bind, evaluate, project_inclusive, rewrite_not};
use crate::manifest::deletes::{DeleteEntry, delete_entries, merge, positions, skipping_deleted};
use crate::manifest::format::{FILE_SIZE, MAX, MIN, NULL_COUNT, PARTITION, PATH, RECORD_COUNT, STATS};
use crate::manifest::read_manifest;
use crate::spec::{Schema, Snapshot, TableMetadata, TableSpec};
use crate::store::TableLocation;

/// How many manifests planning reads at once.
const MANIFEST_READS_IN_FLIGHT: usize = 16;

/// A data file chosen for the scan.
#[derive(Debug, Clone)]
pub struct PlannedFile {
    pub path: object_store::path::Path,
    pub size: u64,
    pub record_count: u64,
    pub spec_id: i32,
    /// Partition values in the spec's field order (for run-time pruning).
    pub partition: Vec<ScalarValue>,
    /// Index of the file's manifest in the snapshot's manifest list.
    pub manifest: usize,
    /// Row positions its position delete files delete (sorted, unique,
    /// each below `record_count`); `None` when it has none.
    pub deletes: Option<Arc<[u64]>>,
}

impl PlannedFile {
    /// The rows a scan of the file returns: its record count less its deletes.
    pub fn live_rows(&self) -> u64 {
        self.record_count - self.deletes.as_ref().map_or(0, |d| d.len() as u64)
    }

    /// The file as a Parquet scan reads it: without its deleted rows.
    pub fn partitioned_file(&self) -> PartitionedFile {
        let file = PartitionedFile::new_from_meta(object_store::ObjectMeta {
            location: self.path.clone(),
            last_modified: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
            size: self.size,
            e_tag: None,
            version: None,
        });
        match &self.deletes {
            Some(deleted) => skipping_deleted(file, self.record_count, deleted),
            None => file,
        }
    }

    /// A Parquet reader of the file in `store` (its footer, or columns
    /// alone), outside any scan.
    pub fn parquet_reader(
        &self,
        store: &Arc<dyn object_store::ObjectStore>,
    ) -> Result<Box<dyn parquet::arrow::async_reader::AsyncFileReader>> {
        use datafusion::datasource::physical_plan::parquet::{
            DefaultParquetFileReaderFactory, ParquetFileReaderFactory,
        };
        use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
        Ok(DefaultParquetFileReaderFactory::new(Arc::clone(store)).create_reader(
            0,
            self.partitioned_file(),
            None,
            &ExecutionPlanMetricsSet::new(),
        )?)
    }
}

/// What a file costs a scan partition beyond its bytes: opening it (its
/// footer, a request), counted as this many bytes (Spark's
/// `openCostInBytes`).
pub const FILE_OPEN_BYTES: u64 = 4 * 1024 * 1024;

/// How many partitions a scan of `files` uses under `config`:
/// `target_partitions` (at most one per file), or with
/// `hidden_partitions.scan_partition_bytes` set only as many as give each
/// partition that many bytes (a file counting at least
/// [`FILE_OPEN_BYTES`]). On a cluster a partition is a task, which costs
/// more than reading a few small files.
pub fn scan_partitions(files: &[PlannedFile], config: &ConfigOptions) -> usize {
    let min_bytes = config
        .extensions
        .get::<crate::config::HiddenPartitionsOptions>()
        .map_or(0, |o| o.scan_partition_bytes);
    let mut n = config.execution.target_partitions.max(1).min(files.len().max(1));
    if min_bytes > 0 {
        let bytes: u64 = files.iter().map(|f| f.size.max(FILE_OPEN_BYTES)).sum();
        n = n.min(bytes.div_ceil(min_bytes).max(1) as usize);
    }
    n
}

/// Selected and total files of one table spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct SpecFileCount {
    /// Iceberg's id of the partition spec (table specs that share it, after
    /// schema changes, are counted together).
    pub spec_id: i32,
    pub selected: usize,
    pub total: usize,
    /// Files in manifests skipped whole, by their partition summaries.
    pub pruned_by_manifest_summary: usize,
    /// Files dropped by the projected partition predicate.
    pub pruned_by_partition: usize,
    /// Files dropped by column statistics (after the partition predicate).
    pub pruned_by_stats: usize,
    /// Bytes of the selected files.
    pub selected_bytes: u64,
    /// Bytes of all files considered.
    pub total_bytes: u64,
}

#[derive(Debug, Clone, Default)]
pub struct FilePlan {
    pub files: Vec<PlannedFile>,
    pub counts: Vec<SpecFileCount>,
    /// Per field id, bounds and null counts over the selected files (when
    /// every selected file has them).
    pub column_stats: BTreeMap<i32, ColumnSummary>,
}

/// Min, max and null count of one column over a set of files.
#[derive(Debug, Clone, Default)]
pub struct ColumnSummary {
    pub min: Option<ScalarValue>,
    pub max: Option<ScalarValue>,
    pub null_count: u64,
    /// False once a selected file lacked bounds (then min/max are unknown).
    pub bounds_complete: bool,
    /// False once a selected file lacked the column's statistics entirely.
    pub nulls_complete: bool,
}

impl FilePlan {
    pub fn selected(&self) -> usize {
        self.counts.iter().map(|c| c.selected).sum()
    }
    pub fn total(&self) -> usize {
        self.counts.iter().map(|c| c.total).sum()
    }
    /// Keep only the files in `only` (a statement or changelog side that
    /// reads some files of the snapshot); the counts follow, and the column
    /// summaries, made over more files, are dropped rather than kept wrong.
    pub fn keep_only(&mut self, only: &HashSet<object_store::path::Path>, md: &TableMetadata) {
        self.files.retain(|f| only.contains(&f.path));
        for c in &mut self.counts {
            c.selected = self
                .files
                .iter()
                .filter(|f| md.spec(f.spec_id).is_ok_and(|s| s.partition_spec_id() == c.spec_id))
                .count();
        }
        self.column_stats.clear();
    }

    fn count(&mut self, spec_id: i32, update: impl FnOnce(&mut SpecFileCount)) {
        let idx = match self.counts.iter().position(|c| c.spec_id == spec_id) {
            Some(i) => i,
            None => {
                self.counts.push(SpecFileCount {
                    spec_id,
                    ..Default::default()
                });
                self.counts.len() - 1
            }
        };
        update(&mut self.counts[idx]);
        self.counts.sort_by_key(|c| c.spec_id);
    }
}

/// How each filter can be pushed into a scan of `snapshot`: `Exact` when
/// every table spec that has files there decides it from partition values
/// alone (see `expr::exact`), `Inexact` otherwise. Shared by our tables and
/// foreign ones (whose deletes only remove rows, so they don't change it).
pub fn filter_pushdown(
    md: &TableMetadata,
    snapshot: Option<&Snapshot>,
    filters: &[&Expr],
) -> Result<Vec<datafusion::logical_expr::TableProviderFilterPushDown>> {
    use datafusion::logical_expr::TableProviderFilterPushDown as P;
    let current = md.current_spec()?;
    let spec_ids: std::collections::BTreeSet<i32> = match snapshot {
        Some(s) => s.manifests()?.iter().map(|m| m.spec_id).collect(),
        None => Default::default(),
    };
    let mut bound = Vec::with_capacity(spec_ids.len());
    for id in spec_ids {
        let spec = md.spec(id)?;
        bound.push(spec.partition_spec.bind(&spec.schema)?);
    }
    Ok(filters
        .iter()
        .map(|f| {
            let pred = source_predicate(std::slice::from_ref(*f), &current.schema);
            if bound.iter().all(|fields| crate::expr::is_exact(&pred, fields)) {
                P::Exact
            } else {
                P::Inexact
            }
        })
        .collect())
}

/// A time-travel timestamp: RFC 3339 (`2024-05-01T12:00:00Z`),
/// `2024-05-01 12:00:00[.fff]` or `2024-05-01T12:00:00[.fff]` in UTC, or a
/// date (its midnight, UTC), as milliseconds since the epoch.
pub fn parse_timestamp_ms(s: &str) -> Option<i64> {
    let naive = |format: &str| chrono::NaiveDateTime::parse_from_str(s, format).map(|t| t.and_utc().timestamp_millis());
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.timestamp_millis())
        .or_else(|_| naive("%Y-%m-%d %H:%M:%S%.f"))
        .or_else(|_| naive("%Y-%m-%dT%H:%M:%S%.f"))
        // A date is its first moment (UTC), as Spark reads `TIMESTAMP AS OF '2024-05-01'`.
        .or_else(|_| {
            chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .map(|d| d.and_hms_opt(0, 0, 0).map_or(0, |t| t.and_utc().timestamp_millis()))
        })
        .ok()
}

/// The filter in the form every step needs: bound to source field ids, NOT-free.
pub fn source_predicate(filters: &[Expr], schema: &Schema) -> Predicate {
    match conjunction(filters.iter().cloned()) {
        Some(expr) => rewrite_not(bind(&expr, schema)),
        None => Predicate::True,
    }
}

/// Select the files of `snapshot` that may hold rows matching `filters`.
pub async fn plan_files(
    location: &TableLocation,
    metadata: &TableMetadata,
    snapshot: Option<&Snapshot>,
    filters: &[Expr],
    stats_pruning: Option<&PruningPredicate>,
) -> Result<FilePlan> {
    plan_files_within(location, metadata, snapshot, filters, stats_pruning, None).await
}

/// [`plan_files`] of the files in `only` (when given): other entries are
/// left out by their file name before their paths are resolved, and no
/// column summaries are made ([`FilePlan::keep_only`], which the caller
/// still applies, would drop them).
pub async fn plan_files_within(
    location: &TableLocation,
    metadata: &TableMetadata,
    snapshot: Option<&Snapshot>,
    filters: &[Expr],
    stats_pruning: Option<&PruningPredicate>,
    only: Option<&HashSet<object_store::path::Path>>,
) -> Result<FilePlan> {
    let mut plan = FilePlan::default();
    let current = metadata.current_spec()?;
    for spec in &metadata.table_specs {
        plan.count(spec.partition_spec_id(), |_| {});
    }
    let Some(snapshot) = snapshot else { return Ok(plan) };
    let predicate = source_predicate(filters, &current.schema);
    // Field ids whose statistics the filters can use.
    // Without filters, every column's statistics are read: they answer MIN / MAX / COUNT.
    let summarize = filters.is_empty() && only.is_none();
    let names: Option<HashSet<&str>> = only.map(|o| o.iter().filter_map(|p| p.filename()).collect());
    let stats_ids: Vec<i32> = if summarize {
        current.schema.fields.iter().map(|f| f.id).collect()
    } else {
        filters
            .iter()
            .flat_map(|f| f.column_refs())
            .filter_map(|c| current.schema.field_by_name(&c.name).map(|f| f.id))
            .collect()
    };
    if summarize {
        for id in &stats_ids {
            plan.column_stats.insert(
                *id,
                ColumnSummary {
                    bounds_complete: true,
                    nulls_complete: true,
                    ..Default::default()
                },
            );
        }
    }
    // Manifests whose partition summaries rule them out are not read; the
    // others are fetched concurrently (object stores answer in parallel).
    let mut to_read = Vec::new();
    let mut delete_manifests = Vec::new();
    let manifests = snapshot.manifests()?;
    let data_manifests = manifests.iter().filter(|m| !m.is_deletes()).count();
    for (manifest_index, manifest) in manifests.iter().enumerate() {
        let spec = metadata.spec(manifest.spec_id)?;
        let bound = spec.partition_spec.bind(&spec.schema)?;
        let projected = project_inclusive(&predicate, &bound);
        if manifest.is_deletes() {
            // Its summary is of the partitions of the data files it names.
            if manifest_may_match(&projected, &bound, &manifest.partitions) {
                delete_manifests.push(manifest);
            }
            continue;
        }
        if !manifest_may_match(&projected, &bound, &manifest.partitions) {
            let files = manifest.file_count as usize;
            plan.count(spec.partition_spec_id(), |c| {
                c.total += files;
                c.pruned_by_manifest_summary += files;
            });
            continue;
        }
        let columns = needed_columns((stats_pruning.is_some() || summarize).then_some(&stats_ids), spec);
        to_read.push((manifest_index, manifest, spec, projected, columns));
    }
    let reads: Vec<_> = to_read
        .iter()
        .map(|(_, manifest, spec, _, columns)| read_manifest(location, manifest, spec, Some(columns)))
        .collect();
    let batches: Vec<RecordBatch> = futures::stream::iter(reads)
        .buffered(MANIFEST_READS_IN_FLIGHT)
        .try_collect()
        .await?;
    // Whether every entry of every manifest was selected (the whole snapshot).
    let mut whole = to_read.len() == data_manifests;
    for ((manifest_index, manifest, spec, projected, _), batch) in to_read.into_iter().zip(batches) {
        let total = batch.num_rows();
        let mut keep = partition_mask(&batch, &projected, spec)?;
        let after_partition = keep.true_count();
        if let Some(pruning) = stats_pruning {
            let stats = ManifestStatistics {
                batch: &batch,
                spec,
                current: &current.schema,
            };
            let by_stats = BooleanArray::from(pruning.prune(&stats)?);
            keep = and(&keep, &by_stats)?;
        }
        let total_bytes: u64 = batch
            .column_by_name(FILE_SIZE)
            .map(|c| c.as_primitive::<Int64Type>().values().iter().map(|v| *v as u64).sum())
            .unwrap_or(0);
        let matching = keep.true_count();
        if let Some(names) = &names {
            keep = and(&keep, &named(&batch, names, &manifest.path)?)?;
        }
        let survivors = filter_record_batch(&batch, &keep)?;
        whole &= survivors.num_rows() == total;
        if summarize && survivors.num_rows() > 0 {
            summarize_stats(&survivors, spec, &current.schema, &mut plan.column_stats)?;
        }
        let selected_bytes: u64 = survivors
            .column_by_name(FILE_SIZE)
            .map(|c| c.as_primitive::<Int64Type>().values().iter().map(|v| *v as u64).sum())
            .unwrap_or(0);
        plan.count(spec.partition_spec_id(), |c| {
            c.total += total;
            c.selected += survivors.num_rows();
            c.pruned_by_partition += total - after_partition;
            c.pruned_by_stats += after_partition - matching;
            c.selected_bytes += selected_bytes;
            c.total_bytes += total_bytes;
        });
        let paths = survivors.column_by_name(PATH).map(|c| c.as_string::<i32>().clone());
        let sizes = survivors
            .column_by_name(FILE_SIZE)
            .map(|c| c.as_primitive::<Int64Type>().clone());
        let rows = survivors
            .column_by_name(RECORD_COUNT)
            .map(|c| c.as_primitive::<Int64Type>().clone());
        let (Some(paths), Some(sizes), Some(rows)) = (paths, sizes, rows) else {
            return crate::format_err!("manifest {} lacks path/size/record count columns", manifest.path);
        };
        let partition = survivors.column_by_name(PARTITION).map(|c| c.as_struct().clone());
        for i in 0..survivors.num_rows() {
            let values = match &partition {
                Some(p) => p
                    .columns()
                    .iter()
                    .map(|c| ScalarValue::try_from_array(c, i))
                    .collect::<Result<_, _>>()?,
                None => Vec::new(),
            };
            plan.files.push(PlannedFile {
                path: location.resolve(paths.value(i))?,
                size: sizes.value(i) as u64,
                record_count: rows.value(i) as u64,
                spec_id: spec.spec_id,
                partition: values,
                manifest: manifest_index,
                deletes: None,
            });
        }
    }
    if !delete_manifests.is_empty() {
        apply_deletes(location, metadata, &delete_manifests, whole, &mut plan).await?;
    }
    // A file listed twice would be read twice (and rewritten twice).
    let verified = crate::manifest::unique::verified_key(&location.url(), snapshot);
    if !location.cache.flag(&verified) {
        crate::manifest::unique::check_listed_once(
            plan.files.iter().map(|f| (&f.path, f.manifest)),
            snapshot,
            &location.root,
        )?;
        if whole {
            location.cache.put_flag(verified);
        }
    }
    Ok(plan)
}

/// Which entries of a manifest `batch` name a file whose name is one of
/// `names` (an entry whose name cannot be decoded stays, for resolving to
/// report).
fn named(batch: &RecordBatch, names: &HashSet<&str>, manifest: &str) -> Result<BooleanArray> {
    let Some(paths) = batch.column_by_name(PATH).and_then(|c| c.as_string_opt::<i32>()) else {
        return crate::format_err!("manifest {manifest} lacks a path column");
    };
    Ok(paths
        .iter()
        .map(|p| {
            let Some(stored) = p else { return Some(true) };
            let last = stored.rsplit('/').next().unwrap_or(stored);
            if !last.contains('%') {
                return Some(names.contains(last));
            }
            Some(match crate::values::uri::decode(last) {
                Ok(decoded) => names.contains(decoded.rsplit('/').next().unwrap_or("")),
                Err(_) => true,
            })
        })
        .collect())
}

/// Give each planned file the positions its delete files delete. When the
/// plan holds every data file of the snapshot (`whole`), a delete file
/// naming a file that is not among them is an error.
async fn apply_deletes(
    location: &TableLocation,
    metadata: &TableMetadata,
    delete_manifests: &[&crate::spec::ManifestFile],
    whole: bool,
    plan: &mut FilePlan,
) -> Result<()> {
    let entries = delete_entries(location, metadata, delete_manifests).await?;
    let mut by_file: HashMap<object_store::path::Path, Vec<&DeleteEntry>> = HashMap::new();
    for e in &entries {
        by_file.entry(location.resolve(&e.data_file)?).or_default().push(e);
    }
    if whole {
        let planned: HashSet<&object_store::path::Path> = plan.files.iter().map(|f| &f.path).collect();
        if let Some(e) = by_file
            .iter()
            .find(|(path, _)| !planned.contains(path))
            .and_then(|(_, entries)| entries.first())
        {
            return crate::format_err!(
                "delete file {} of table {} names data file {}, which the snapshot does not list",
                e.path,
                location.url(),
                e.data_file
            );
        }
    }
    let mut jobs: Vec<(usize, u64, Vec<DeleteEntry>)> = Vec::new();
    for (i, f) in plan.files.iter().enumerate() {
        if let Some(entries) = by_file.get(&f.path) {
            jobs.push((i, f.record_count, entries.iter().map(|e| (*e).clone()).collect()));
        }
    }
    let loads: Vec<_> = jobs
        .into_iter()
        .map(|(i, rows, entries)| file_deletes(location, i, rows, entries))
        .collect();
    let loaded: Vec<_> = futures::stream::iter(loads)
        .buffer_unordered(MANIFEST_READS_IN_FLIGHT)
        .try_collect()
        .await?;
    for (i, vector) in loaded {
        plan.files[i].deletes = Some(vector);
    }
    Ok(())
}

/// The merged deletes of planned file `index` (`rows` rows) from `entries`.
async fn file_deletes(
    location: &TableLocation,
    index: usize,
    rows: u64,
    entries: Vec<DeleteEntry>,
) -> Result<(usize, Arc<[u64]>)> {
    let mut vectors = Vec::with_capacity(entries.len());
    for e in &entries {
        vectors.push(positions(location, e, rows).await?);
    }
    Ok((index, merge(&vectors)))
}

/// Fold the statistics of `survivors` (files of `spec`) into `out`, by field id.
fn summarize_stats(
    survivors: &RecordBatch,
    spec: &TableSpec,
    current: &Schema,
    out: &mut BTreeMap<i32, ColumnSummary>,
) -> Result<()> {
    use datafusion::functions_aggregate::min_max::{MaxAccumulator, MinAccumulator};
    use datafusion::logical_expr::Accumulator;
    let stats = survivors.column_by_name(STATS).map(|c| c.as_struct().clone());
    for (id, summary) in out.iter_mut() {
        let column = stats
            .as_ref()
            .and_then(|s| s.column_by_name(&id.to_string()))
            .map(|c| c.as_struct().clone());
        let Some(column) = column.filter(|_| spec.schema.field_by_id(*id).is_some()) else {
            summary.bounds_complete = false;
            summary.nulls_complete = false;
            continue;
        };
        match column.column_by_name(NULL_COUNT) {
            // A null null-count is unknown (foreign manifests may lack it).
            Some(n) if n.null_count() == 0 => {
                summary.null_count += n
                    .as_primitive::<Int64Type>()
                    .values()
                    .iter()
                    .map(|v| *v as u64)
                    .sum::<u64>()
            }
            _ => summary.nulls_complete = false,
        }
        let want = current
            .field_by_id(*id)
            .map(|f| crate::spec::types::strip_metadata(&f.field_type.to_arrow()));
        let (Some(mins), Some(maxs), Some(want)) = (column.column_by_name(MIN), column.column_by_name(MAX), want)
        else {
            summary.bounds_complete = false;
            continue;
        };
        // A file whose values are all NULL has no bounds but doesn't widen them.
        let nulls = column
            .column_by_name(NULL_COUNT)
            .map(|n| n.as_primitive::<Int64Type>().clone());
        let rows = survivors
            .column_by_name(RECORD_COUNT)
            .map(|r| r.as_primitive::<Int64Type>().clone());
        for i in 0..survivors.num_rows() {
            let all_null = matches!((&nulls, &rows), (Some(n), Some(r)) if n.is_valid(i) && n.value(i) == r.value(i));
            if mins.is_null(i) && !all_null {
                summary.bounds_complete = false;
            }
        }
        if !summary.bounds_complete {
            continue;
        }
        let (mins, maxs) = (cast(mins, &want)?, cast(maxs, &want)?);
        let mut lo = MinAccumulator::try_new(&want)?;
        let mut hi = MaxAccumulator::try_new(&want)?;
        lo.update_batch(&[mins])?;
        hi.update_batch(&[maxs])?;
        if let Some(m) = &summary.min {
            lo.update_batch(&[m.to_array()?])?;
        }
        if let Some(m) = &summary.max {
            hi.update_batch(&[m.to_array()?])?;
        }
        let (lo, hi) = (lo.evaluate()?, hi.evaluate()?);
        summary.min = (!lo.is_null()).then_some(lo);
        summary.max = (!hi.is_null()).then_some(hi);
    }
    Ok(())
}

/// The manifest columns a scan needs: file identity, partition values (for
/// the projected predicate and for run-time filters), statistics of filtered
/// columns. Nothing else is decoded.
fn needed_columns(stats_ids: Option<&Vec<i32>>, spec: &TableSpec) -> Vec<String> {
    let mut columns = vec![PATH.to_string(), FILE_SIZE.to_string(), RECORD_COUNT.to_string()];
    if !spec.partition_spec.fields.is_empty() {
        columns.push(PARTITION.to_string());
    }
    for id in stats_ids.into_iter().flatten() {
        if spec.schema.field_by_id(*id).is_some() {
            columns.push(format!("{STATS}.{id}"));
        }
    }
    columns.sort();
    columns.dedup();
    columns
}

fn partition_mask(batch: &RecordBatch, projected: &Predicate, spec: &TableSpec) -> Result<BooleanArray> {
    let rows = batch.num_rows();
    if matches!(projected, Predicate::True) {
        return Ok(BooleanArray::from(vec![true; rows]));
    }
    let partition = batch.column_by_name(PARTITION).map(|c| c.as_struct().clone());
    let fields = &spec.partition_spec.fields;
    let column = |id: i32| -> Option<ArrayRef> {
        let idx = fields.iter().position(|f| f.field_id == id)?;
        partition.as_ref().map(|p| Arc::clone(p.column(idx)))
    };
    let mask = evaluate(projected, rows, &column)?;
    // NULL (unknown) means the file can't match: only `true` survives.
    Ok(match mask.nulls() {
        Some(nulls) => {
            let values = mask.values() & nulls.inner();
            BooleanArray::new(values, None)
        }
        None => mask,
    })
}

/// Column statistics of a manifest's files, addressed by current column names.
pub struct ManifestStatistics<'a> {
    batch: &'a RecordBatch,
    spec: &'a TableSpec,
    current: &'a Schema,
}

impl<'a> ManifestStatistics<'a> {
    /// Statistics of `batch` (a manifest of `spec`), for filters on the `current` schema.
    pub fn new(batch: &'a RecordBatch, spec: &'a TableSpec, current: &'a Schema) -> Self {
        Self { batch, spec, current }
    }

    fn stat(&self, column: &Column, child: &str) -> Option<ArrayRef> {
        let field = self.current.field_by_name(&column.name)?;
        // A column the file's spec doesn't have (added later) is NULL in every
        // row of those files: all nulls, no bounds.
        let Some(file_field) = self.spec.schema.field_by_id(field.id) else {
            return if child == NULL_COUNT {
                self.row_counts()
            } else {
                let want = crate::spec::types::strip_metadata(&field.field_type.to_arrow());
                Some(datafusion::arrow::array::new_null_array(&want, self.batch.num_rows()))
            };
        };
        let stats = self.batch.column_by_name(STATS)?.as_struct();
        let per_column: &StructArray = stats.column_by_name(&file_field.id.to_string())?.as_struct();
        let array = per_column.column_by_name(child)?;
        let want = if child == NULL_COUNT {
            DataType::UInt64
        } else {
            crate::spec::types::strip_metadata(&field.field_type.to_arrow())
        };
        if array.data_type() == &want {
            Some(Arc::clone(array))
        } else {
            cast(array, &want).ok()
        }
    }
}

impl PruningStatistics for ManifestStatistics<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        self.stat(column, MIN)
    }
    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        self.stat(column, MAX)
    }
    fn num_containers(&self) -> usize {
        self.batch.num_rows()
    }
    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        self.stat(column, NULL_COUNT)
    }
    fn row_counts(&self) -> Option<ArrayRef> {
        let rows = self.batch.column_by_name(RECORD_COUNT)?;
        cast(rows, &DataType::UInt64).ok()
    }
    fn contained(&self, _column: &Column, _values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        None
    }
}

/// Whether `expr` holds a float zero literal, or a float cast of anything
/// but a column (which may fold to a zero).
fn may_compare_float_zero(expr: &Expr) -> bool {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    let mut found = false;
    let _ = expr.apply(|e| {
        found = match e {
            Expr::Literal(ScalarValue::Float64(Some(v)), _) => *v == 0.0,
            Expr::Literal(ScalarValue::Float32(Some(v)), _) => *v == 0.0,
            Expr::Literal(ScalarValue::Float16(Some(v)), _) => f32::from(*v) == 0.0,
            Expr::Cast(datafusion::logical_expr::Cast { expr, field })
            | Expr::TryCast(datafusion::logical_expr::TryCast { expr, field }) => {
                field.data_type().is_floating() && !matches!(**expr, Expr::Column(_))
            }
            _ => false,
        };
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    found
}

/// Build the statistics pruning predicate for `filters` over the table
/// schema. A filter that may compare a float with a zero is left out (its
/// files are all kept): DataFusion's statistics pruning and its row
/// evaluation disagree about `-0.0` and `0.0` (under `NOT`, `!=` and `NOT IN`
/// a file of `-0.0` values was dropped whose rows the filter keeps).
pub fn stats_pruning_predicate(
    state: &dyn datafusion::catalog::Session,
    filters: &[Expr],
    schema: &SchemaRef,
) -> Option<Arc<PruningPredicate>> {
    let expr = conjunction(filters.iter().filter(|f| !may_compare_float_zero(f)).cloned())?;
    let df_schema = datafusion::common::DFSchema::try_from(Arc::clone(schema)).ok()?;
    let physical = state.create_physical_expr(expr, &df_schema).ok()?;
    let pruning = PruningPredicateBuilder::new()
        .with_file_schema(Arc::clone(schema))
        .build(physical)?;
    (!pruning.always_true()).then_some(pruning)
}
