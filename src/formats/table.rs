//! The `TableProvider` of an Iceberg or Delta table.
//!
//! The table arrives here already in our shape (`TableMetadata`: table
//! specs, one snapshot, manifests whose batches a `ManifestSource` on the
//! location supplies), so planning is the same code as for our own tables:
//! `plan::files::plan_files`, `expr::is_exact` for `Exact`
//! pushdown, and `HiddenPartitionsScanExec` with run-time pruning and
//! `files=S/T`. What differs per format is only how data files are read:
//!
//! | concern                         | Iceberg                               | Delta                                   |
//! |---------------------------------|---------------------------------------|-----------------------------------------|
//! | columns of a data file          | by field id; name mapping without ids | by column-mapping id / physical name, else by name |
//! | columns not stored in the file  | —                                     | partition columns (from `partitionValues`) |
//! | row-level deletes               | position + equality delete files, deletion vectors (v3) | deletion vectors                        |
//!
//! Iceberg tables opened by their directory are also writable: INSERT,
//! DELETE, UPDATE, MERGE and TRUNCATE run as statements of ours on the
//! table in our shape and commit through [`ForeignWrites`] (see
//! `iceberg::commit`). Delta tables, and Iceberg tables opened by one
//! metadata file, are read-only: writes are refused with a clear error.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{ScalarValue, Statistics, not_impl_err, project_schema};
use datafusion::datasource::TableType;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::Result;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr_adapter::PhysicalExprAdapterFactory;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::empty::EmptyExec;

use super::deletes::FileDeletes;
use super::equality_exec::EqualityDeleteExec;
use crate::plan::files::{PlannedFile, plan_files, scan_partitions, stats_pruning_predicate};
use crate::provider::HiddenPartitionsScanExec;
use crate::provider::scan_exec::RuntimeContext;
use crate::spec::TableMetadata;
use crate::store::TableLocation;

/// The constant column tagging each row with its file (for equality deletes).
pub const FILE_COLUMN: &str = "__hp_file";

/// How a format's data files map onto the table's columns.
#[derive(Clone)]
pub struct FileColumns {
    /// Matches table columns to file columns (field ids, name mappings).
    pub adapter: Arc<dyn PhysicalExprAdapterFactory>,
    /// Columns not stored in data files: (column index in the table schema,
    /// index of the identity partition field whose value it is).
    pub constants: Vec<(usize, usize)>,
}

impl fmt::Debug for FileColumns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FileColumns(constants={:?})", self.constants)
    }
}

/// What a format adds to planning: reading its files, its deletes, time travel.
#[async_trait]
pub trait ForeignReader: fmt::Debug + Send + Sync {
    /// `Iceberg` or `Delta`, for messages.
    fn format(&self) -> &'static str;
    fn file_columns(&self) -> &FileColumns;
    /// Whether every file's record count is known (else COUNT(*) is counted).
    fn counts_exact(&self) -> bool {
        true
    }
    /// Row-level deletes of each selected file (same order as `files`).
    async fn deletes(&self, location: &TableLocation, files: &[PlannedFile]) -> crate::error::Result<Vec<FileDeletes>>;
    /// The table as of `selector` (a snapshot id or ref for Iceberg, a version for Delta).
    async fn at(&self, name: &str, selector: &str) -> crate::error::Result<ForeignTable>;
    /// Every version `$snapshots` lists, when the format keeps more of them
    /// than `metadata` holds (Delta: every commit of the log); read only for
    /// that table, never for planning.
    async fn history(&self, _metadata: &TableMetadata) -> crate::error::Result<Option<Vec<crate::spec::Snapshot>>> {
        Ok(None)
    }
    /// The columns that identify a row (Iceberg's `identifier-field-ids`), if set.
    fn identifier_columns(&self) -> Vec<String> {
        Vec::new()
    }
    /// The changes the format's writers recorded in versions `first` to
    /// `last` (both included; Delta's change data feed), as `columns` (each
    /// read from the column `select` names at `last`, NULL where `None`),
    /// then `_change_type` and `_commit_snapshot_id`; `None` when not
    /// recorded.
    async fn recorded_changes(
        &self,
        _name: &str,
        _first: i64,
        _last: i64,
        _columns: &SchemaRef,
        _select: &[Option<String>],
    ) -> crate::error::Result<Option<Arc<dyn datafusion::catalog::TableProvider>>> {
        Ok(None)
    }
    /// Whether the snapshot's manifests are files the format wrote and
    /// never changes (Iceberg), so two snapshots' lists tell what changed;
    /// not manifests made up per read (Delta).
    fn manifests_are_files(&self) -> bool {
        false
    }
    /// The delete manifests of the snapshot read (Iceberg), for the
    /// metadata tables that list entries; never planned from.
    fn delete_manifests(&self) -> crate::error::Result<Vec<crate::spec::ManifestFile>> {
        Ok(Vec::new())
    }
}

/// The write side of a writable foreign table.
#[async_trait]
pub trait ForeignWrites: fmt::Debug + Send + Sync {
    /// Loads and commits the table's versions.
    fn commits(&self) -> Arc<dyn crate::table::foreign::ForeignCommits>;
    /// The location statements write through.
    fn location(&self) -> TableLocation;
    /// The table at its latest version, when that is not `version`.
    async fn newer_than(&self, version: u64) -> crate::error::Result<Option<ForeignTable>>;
}

/// An Iceberg or Delta table as a DataFusion table, pruned by our planner.
#[derive(Debug, Clone)]
pub struct ForeignTable {
    name: String,
    location: TableLocation,
    metadata: Arc<TableMetadata>,
    schema: SchemaRef,
    reader: Arc<dyn ForeignReader>,
    /// Set when the table accepts writes: how, and the version read.
    writes: Option<(Arc<dyn ForeignWrites>, u64)>,
    /// DELETE / UPDATE: the statement as written (see `provider::dml`).
    dml: Option<Arc<crate::provider::dml::DmlIntent>>,
    /// Read only these data files (one side of a changelog).
    only: Option<Arc<HashSet<object_store::path::Path>>>,
}

impl ForeignTable {
    /// `location` must carry the manifest source that serves `metadata`'s manifests.
    pub fn try_new(
        name: impl Into<String>,
        location: TableLocation,
        metadata: TableMetadata,
        reader: Arc<dyn ForeignReader>,
    ) -> crate::error::Result<Self> {
        let schema = metadata.current_spec()?.schema.arrow_schema();
        Ok(Self {
            name: name.into(),
            location,
            metadata: Arc::new(metadata),
            schema,
            reader,
            writes: None,
            dml: None,
            only: None,
        })
    }

    /// The same table, accepting writes through `writes` (`version`: the
    /// version this one was built from).
    pub fn writable(mut self, writes: Arc<dyn ForeignWrites>, version: u64) -> Self {
        self.writes = Some((writes, version));
        self
    }

    /// The table at its latest version, when it follows one (opened by
    /// its directory) and that changed since this one was built.
    pub async fn newer(&self) -> crate::error::Result<Option<ForeignTable>> {
        match &self.writes {
            Some((writes, version)) => Ok(writes.newer_than(*version).await?.map(|t| t.named(self.name.clone()))),
            None => Ok(None),
        }
    }

    /// Record the DELETE / UPDATE statement as written (`optimizer::dml_check`).
    pub fn with_dml(mut self, intent: crate::provider::dml::DmlIntent) -> Self {
        self.dml = Some(Arc::new(intent));
        self
    }

    pub fn is_writable(&self) -> bool {
        self.writes.is_some()
    }

    /// For ALTER and the table procedures: the table at its latest version
    /// as one of ours whose commits go to its own format; `None` when it
    /// does not accept writes.
    pub async fn writer_table(&self) -> crate::error::Result<Option<crate::provider::HiddenPartitionsTable>> {
        if self.writes.is_none() {
            return Ok(None);
        }
        Ok(Some(self.target("ALTER TABLE").await?))
    }

    /// The statement's target: the table at the version the statement
    /// resolved (its latest then), as one of ours whose commits go to the
    /// table's own format.
    async fn target(&self, what: &str) -> Result<crate::provider::HiddenPartitionsTable> {
        let Some((writes, resolved)) = &self.writes else {
            return self.read_only(what);
        };
        let commits = writes.commits();
        let version = commits.load_at(*resolved).await?;
        let table = crate::table::Table::foreign(
            self.name.clone(),
            writes.location(),
            &version.metadata.table_uuid,
            commits,
        );
        let target = crate::provider::HiddenPartitionsTable::try_new(table, version)?;
        Ok(match &self.dml {
            Some(intent) => target.with_dml(intent.as_ref().clone()),
            None => target,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The rows the table's own delete files delete from `files`, as
    /// sorted positions (`None`: none); equality deletes are resolved by
    /// reading the files' key columns.
    pub async fn deleted_positions(
        &self,
        files: &[crate::plan::files::PlannedFile],
    ) -> crate::error::Result<Vec<Option<Arc<[u64]>>>> {
        let found = self.reader.deletes(&self.location, files).await?;
        let schema = &self.metadata.current_spec()?.schema;
        let mut out = Vec::with_capacity(files.len());
        for (file, d) in files.iter().zip(found) {
            if d.is_empty() {
                out.push(None);
                continue;
            }
            let mut positions = d.positions;
            positions.extend(
                super::deletes::equality_positions(&self.location, &file.path, file.record_count, schema, &d.equality)
                    .await?,
            );
            let positions = crate::manifest::deletes::sorted_within(positions, file.record_count, |p| {
                format!(
                    "a delete file of table {} deletes row {p} of data file {}, which has {} rows",
                    self.name, file.path, file.record_count
                )
            })?;
            out.push(Some(positions.into()));
        }
        Ok(out)
    }

    /// The same table under another name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    pub fn format(&self) -> &'static str {
        self.reader.format()
    }

    /// The table in our shape (specs, the snapshot read, its manifests).
    pub fn metadata(&self) -> &TableMetadata {
        &self.metadata
    }

    pub fn location(&self) -> &TableLocation {
        &self.location
    }

    /// Time travel: the table as of a snapshot id / ref (Iceberg) or version (Delta).
    pub async fn at(&self, selector: &str) -> crate::error::Result<ForeignTable> {
        self.reader.at(&self.name, selector).await
    }

    /// The columns that identify a row, as the table's metadata sets them.
    pub fn identifier_columns(&self) -> Vec<String> {
        self.reader.identifier_columns()
    }

    /// The changes the format's writers recorded in snapshots `first` to
    /// `last` (Delta's change data feed), as `columns`, `_change_type` and
    /// `_commit_snapshot_id`; `None` when they were not recorded.
    pub async fn recorded_changes(
        &self,
        first: i64,
        last: i64,
        columns: &SchemaRef,
        select: &[Option<String>],
    ) -> crate::error::Result<Option<Arc<dyn datafusion::catalog::TableProvider>>> {
        self.reader
            .recorded_changes(&self.name, first, last, columns, select)
            .await
    }

    /// The data and delete manifests of the snapshot read, when they are
    /// files the format wrote (Iceberg), for telling what a snapshot changed.
    pub fn snapshot_manifests(
        &self,
    ) -> crate::error::Result<Option<(Vec<crate::spec::ManifestFile>, Vec<crate::spec::ManifestFile>)>> {
        if !self.reader.manifests_are_files() {
            return Ok(None);
        }
        let data = match self.metadata.current_snapshot() {
            Some(s) => s.manifests()?.to_vec(),
            None => Vec::new(),
        };
        Ok(Some((data, self.reader.delete_manifests()?)))
    }

    /// The same table reading only data manifests `manifests` of its
    /// snapshot (deletes as before).
    pub fn restricted_to(&self, manifests: Vec<crate::spec::ManifestFile>) -> ForeignTable {
        let mut table = self.clone();
        let md = Arc::make_mut(&mut table.metadata);
        if let Some(id) = md.current_snapshot_id
            && let Some(snapshot) = md.snapshots.iter_mut().find(|s| s.snapshot_id == id)
        {
            snapshot.manifests = Some(Arc::new(manifests));
        }
        table
    }

    /// The same table reading only data files `files` of its snapshot.
    pub fn only_files(&self, files: HashSet<object_store::path::Path>) -> ForeignTable {
        let mut table = self.clone();
        table.only = Some(Arc::new(files));
        table
    }

    /// Every data file of the snapshot read with the positions its deletes
    /// delete, when all deletes are by position (none by equality).
    pub async fn files_and_deletes(&self) -> crate::error::Result<Option<HashMap<object_store::path::Path, Vec<u64>>>> {
        let md = &self.metadata;
        let plan = plan_files(&self.location, md, md.current_snapshot(), &[], None).await?;
        let deletes = match plan.files.is_empty() {
            true => Vec::new(),
            false => self.reader.deletes(&self.location, &plan.files).await?,
        };
        if deletes.iter().any(|d| !d.equality.is_empty()) {
            return Ok(None);
        }
        let mut deletes = deletes.into_iter();
        Ok(Some(
            plan.files
                .into_iter()
                .map(|f| (f.path, deletes.next().map(|d| d.positions).unwrap_or_default()))
                .collect(),
        ))
    }

    /// Every snapshot the format's history knows, when it keeps more of them
    /// than the metadata holds (Delta).
    pub async fn history(&self) -> crate::error::Result<Option<Vec<crate::spec::Snapshot>>> {
        self.reader.history(&self.metadata).await
    }

    /// Where the table is and the metadata its metadata table `kind`
    /// (`$snapshots`, `$files`, …) is built from: for `$snapshots`, every
    /// snapshot the format's history knows.
    pub async fn metadata_for(&self, kind: &str) -> crate::error::Result<(&TableLocation, TableMetadata)> {
        if kind == "orphans" {
            return crate::invalid!(
                "\"{}$orphans\" lists files our writers left behind; {} is {} table read by hidden-partitions, not written by it",
                self.name,
                self.name,
                super::a_format(self.format())
            );
        }
        let mut metadata = (*self.metadata).clone();
        if kind == "snapshots"
            && let Some(history) = self.reader.history(&self.metadata).await?
        {
            metadata.snapshots = history;
        }
        // Spark's file tables list delete files too.
        let entries = matches!(
            kind,
            "entries" | "all_entries" | "delete_files" | "all_delete_files" | "all_files"
        );
        if entries && let Some(current) = metadata.current_snapshot_id {
            let deletes = self.reader.delete_manifests()?;
            if let Some(s) = metadata.snapshots.iter_mut().find(|s| s.snapshot_id == current)
                && let Some(manifests) = s.manifests.as_mut().map(std::sync::Arc::make_mut)
            {
                manifests.extend(deletes);
            }
        }
        Ok((&self.location, metadata))
    }

    fn read_only<T>(&self, what: &str) -> Result<T> {
        if self.format() == "Iceberg" {
            return not_impl_err!(
                "{what} is not supported: {} is an Iceberg table opened at one metadata file (a fixed version), which hidden-partitions reads but does not write; open it by its table directory to write to it",
                self.name
            );
        }
        not_impl_err!(
            "{what} is not supported: {} is {} table, which hidden-partitions reads but does not write (use CREATE TABLE … AS SELECT * FROM {} to copy it into a table of ours)",
            self.name,
            super::a_format(self.format()),
            self.name
        )
    }
}

/// Where each table column sits in the scan's table schema (stored columns
/// first, then the constants, then the file tag).
struct ScanLayout {
    stored: Vec<usize>,
    constants: Vec<(usize, usize)>,
}

impl ScanLayout {
    fn config_index(&self, column: usize) -> Option<usize> {
        self.stored.iter().position(|s| *s == column).or_else(|| {
            self.constants
                .iter()
                .position(|(c, _)| *c == column)
                .map(|p| self.stored.len() + p)
        })
    }

    fn width(&self) -> usize {
        self.stored.len() + self.constants.len()
    }
}

#[async_trait]
impl datafusion::catalog::TableProvider for ForeignTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // A table that follows its latest version reads that one (its
        // writers may have committed since it was registered).
        if let Some(newer) = self.newer().await? {
            // Filters this version answered exactly must stay exact there.
            let refs: Vec<&Expr> = filters.iter().collect();
            let (before, after) = (
                self.supports_filters_pushdown(&refs)?,
                newer.supports_filters_pushdown(&refs)?,
            );
            let weaker = before.iter().zip(&after).any(|(b, a)| {
                matches!(b, TableProviderFilterPushDown::Exact) && !matches!(a, TableProviderFilterPushDown::Exact)
            });
            if newer.schema != self.schema || weaker {
                return Err(crate::error::Error::Invalid(format!(
                    "table {} changed its columns or partitioning since this statement was planned; run it again (or register the table again with CREATE EXTERNAL TABLE)",
                    self.name
                ))
                .into());
            }
            return newer.scan_current(state, projection, filters, limit).await;
        }
        self.scan_current(state, projection, filters, limit).await
    }

    /// `Exact` when every spec with files decides the filter from partition
    /// values alone; deletes only remove rows, so they don't change that.
    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(crate::plan::files::filter_pushdown(
            &self.metadata,
            self.metadata.current_snapshot(),
            filters,
        )?)
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.target("INSERT").await?.insert_into(state, input, insert_op).await
    }

    async fn delete_from(&self, state: &dyn Session, filters: Vec<Expr>) -> Result<Arc<dyn ExecutionPlan>> {
        self.target("DELETE").await?.delete_from(state, filters).await
    }

    async fn update(
        &self,
        state: &dyn Session,
        assignments: Vec<(String, Expr)>,
        filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.target("UPDATE").await?.update(state, assignments, filters).await
    }

    async fn truncate(&self, state: &dyn Session) -> Result<Arc<dyn ExecutionPlan>> {
        self.target("TRUNCATE").await?.truncate(state).await
    }

    async fn merge_into(
        &self,
        state: &dyn Session,
        source: Arc<dyn ExecutionPlan>,
        merge_schema: datafusion::common::DFSchemaRef,
        on: Expr,
        clauses: Vec<datafusion::logical_expr::dml::MergeIntoClause>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.target("MERGE INTO")
            .await?
            .merge_into(state, source, merge_schema, on, clauses)
            .await
    }
}

impl ForeignTable {
    /// Plan a scan of the version this table was built from.
    async fn scan_current(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let md = &self.metadata;
        let snapshot = md.current_snapshot();
        let pruning = stats_pruning_predicate(state, filters, &self.schema);
        let mut plan = plan_files(&self.location, md, snapshot, filters, pruning.as_deref()).await?;
        if let Some(only) = &self.only {
            plan.keep_only(only, md);
        }
        let deletes = match plan.files.is_empty() {
            true => Vec::new(),
            false => self.reader.deletes(&self.location, &plan.files).await?,
        };
        // Position deletes also travel with the files (a plan sent to a
        // cluster reattaches them to the Parquet scan).
        for (f, d) in plan.files.iter_mut().zip(&deletes) {
            if !d.positions.is_empty() {
                f.deletes = Some(Arc::from(d.positions.as_slice()));
            }
        }
        let runtime = Arc::new(RuntimeContext::new(
            Arc::clone(md),
            snapshot,
            &plan.files,
            None,
            self.location.options.clone(),
        ));
        if plan.files.is_empty() {
            let empty = Arc::new(EmptyExec::new(project_schema(&self.schema, projection)?));
            return Ok(Arc::new(HiddenPartitionsScanExec::new(
                self.name.clone(),
                plan.counts,
                empty,
                runtime,
            )));
        }
        let has_deletes = deletes.iter().any(|d| !d.is_empty());
        let equality = deletes.iter().any(|d| !d.equality.is_empty());

        let columns = self.reader.file_columns();
        let layout = ScanLayout {
            stored: (0..self.schema.fields().len())
                .filter(|i| !columns.constants.iter().any(|(c, _)| c == i))
                .collect(),
            constants: columns.constants.clone(),
        };
        let file_schema = Arc::new(self.schema.project(&layout.stored)?);
        let mut partition_fields: Vec<FieldRef> = layout
            .constants
            .iter()
            .map(|(c, _)| Arc::new(self.schema.field(*c).clone()))
            .collect();
        if equality {
            partition_fields.push(Arc::new(Field::new(FILE_COLUMN, DataType::Int32, false)));
        }
        let wanted: Vec<usize> = projection
            .cloned()
            .unwrap_or_else(|| (0..self.schema.fields().len()).collect());
        let mut scan_columns: Vec<usize> = wanted.iter().filter_map(|c| layout.config_index(*c)).collect();
        let keep = scan_columns.len();
        if equality {
            let keys: BTreeSet<&str> = deletes
                .iter()
                .flat_map(|d| d.equality.iter().flat_map(|e| e.columns.iter().map(String::as_str)))
                .collect();
            for key in keys {
                let Ok(column) = self.schema.index_of(key) else {
                    return Err(crate::error::Error::Format(format!(
                        "equality deletes of {} use column {key}, which the table does not have",
                        self.name
                    ))
                    .into());
                };
                if let Some(i) = layout.config_index(column)
                    && !scan_columns.contains(&i)
                {
                    scan_columns.push(i);
                }
            }
            scan_columns.push(layout.width());
        }

        let inexact = has_deletes || !self.reader.counts_exact();
        let statistics = self.statistics(&plan, &layout, partition_fields.len(), inexact)?;
        let groups = balance(
            &plan.files,
            &layout,
            equality,
            scan_partitions(&plan.files, state.config_options()),
        );
        let source = ParquetSource::new(
            TableSchema::builder(file_schema)
                .with_table_partition_cols(partition_fields)
                .build(),
        );
        let config = FileScanConfigBuilder::new(self.location.store_url.clone(), Arc::new(source))
            .with_file_groups(groups)
            .with_statistics(statistics)
            .with_projection_indices(Some(scan_columns.clone()))?
            .with_limit(if equality { None } else { limit })
            .with_expr_adapter(Some(Arc::clone(&columns.adapter)))
            .build();
        let format = ParquetFormat::default().with_options(state.table_options().parquet.clone());
        let exec = format.create_physical_plan(state, config).await?;
        let scan: Arc<dyn ExecutionPlan> = Arc::new(HiddenPartitionsScanExec::new(
            self.name.clone(),
            plan.counts,
            exec,
            runtime,
        ));
        if !equality {
            return Ok(scan);
        }
        let per_file: Vec<_> = deletes.iter().map(|d| d.equality.clone()).collect();
        Ok(Arc::new(EqualityDeleteExec::try_new(
            scan,
            scan_columns.len() - 1,
            &per_file,
            keep,
        )?))
    }
}

impl ForeignTable {
    /// Row count and column bounds of the selected files, in the scan's
    /// column order. Bounds of foreign writers may be truncated or widened
    /// (Iceberg string bounds, Delta's millisecond timestamps), so they are
    /// never exact; with deletes, neither are the counts.
    fn statistics(
        &self,
        plan: &crate::plan::files::FilePlan,
        layout: &ScanLayout,
        extra: usize,
        has_deletes: bool,
    ) -> crate::error::Result<Statistics> {
        let width = layout.stored.len() + extra;
        let mut fields: Vec<Field> = layout.stored.iter().map(|i| self.schema.field(*i).clone()).collect();
        for i in 0..extra {
            fields.push(Field::new(format!("__partition_{i}"), DataType::Null, true));
        }
        let mut statistics = Statistics::new_unknown(&datafusion::arrow::datatypes::Schema::new(fields));
        debug_assert_eq!(statistics.column_statistics.len(), width);
        let rows: u64 = plan.files.iter().map(|f| f.record_count).sum();
        let bytes: u64 = plan.files.iter().map(|f| f.size).sum();
        statistics.num_rows = if has_deletes {
            Precision::Inexact(rows as usize)
        } else {
            Precision::Exact(rows as usize)
        };
        statistics.total_byte_size = Precision::Inexact(bytes as usize);
        let current = &self.metadata.current_spec()?.schema;
        for (column, field) in current.fields.iter().enumerate() {
            let (Some(summary), Some(i)) = (plan.column_stats.get(&field.id), layout.config_index(column)) else {
                continue;
            };
            let Some(col) = statistics.column_statistics.get_mut(i) else {
                continue;
            };
            if summary.nulls_complete && !has_deletes {
                col.null_count = Precision::Exact(summary.null_count as usize);
            }
            if summary.bounds_complete {
                let inexact = |v: &Option<ScalarValue>| v.clone().map(Precision::Inexact).unwrap_or(Precision::Absent);
                col.min_value = inexact(&summary.min);
                col.max_value = inexact(&summary.max);
            }
        }
        Ok(statistics)
    }
}

/// Spread files over `n` groups, largest first onto the lightest group;
/// each file carries its constant column values and its row selection.
fn balance(files: &[PlannedFile], layout: &ScanLayout, tag_files: bool, n: usize) -> Vec<FileGroup> {
    let n = n.max(1).min(files.len().max(1));
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|a, b| {
        files[*b]
            .size
            .cmp(&files[*a].size)
            .then_with(|| files[*a].path.cmp(&files[*b].path))
    });
    let mut groups: Vec<(u64, Vec<PartitionedFile>)> = (0..n).map(|_| (0, Vec::new())).collect();
    for i in order {
        let f = &files[i];
        let Some(lightest) = groups.iter_mut().min_by_key(|(bytes, _)| *bytes) else {
            break;
        };
        lightest.0 += f.size;
        let mut file = f.partitioned_file();
        let mut values: Vec<ScalarValue> = layout
            .constants
            .iter()
            .map(|(_, p)| f.partition.get(*p).cloned().unwrap_or(ScalarValue::Null))
            .collect();
        if tag_files {
            values.push(ScalarValue::Int32(Some(i as i32)));
        }
        file.partition_values = values;
        lightest.1.push(file);
    }
    groups
        .into_iter()
        .filter(|(_, g)| !g.is_empty())
        .map(|(_, g)| FileGroup::new(g))
        .collect()
}

/// The foreign table registered under `name` in `schema`, if it is one.
pub fn as_foreign(table: &Arc<dyn datafusion::catalog::TableProvider>) -> Option<&ForeignTable> {
    table.downcast_ref::<ForeignTable>()
}
