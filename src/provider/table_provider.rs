//! The `TableProvider`: one table at one metadata version.
//!
//! The catalog hands out a provider per statement, loaded from the latest
//! committed version, so every statement sees the table as of its start.

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, ScalarValue, SchemaExt, Statistics, not_impl_err, project_schema};
use datafusion::datasource::TableType;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::Result;
use datafusion::execution::SessionState;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::empty::EmptyExec;

use super::dml::DmlIntent;
use super::field_ids::FieldIdAdapterFactory;
use super::scan_exec::{HiddenPartitionsScanExec, JoinKeys, RuntimeContext, ScanRequests};
use super::sink::HiddenPartitionsSink;
use super::write_exec::WriteExec;
use crate::plan::files::{FilePlan, PlannedFile, scan_partitions, stats_pruning_predicate};
use crate::plan::identity_columns::IdentityColumns;
use crate::plan::{lineage, positions};
use crate::spec::TableMetadata;
use crate::store::Versioned;
use crate::table::Table;
use crate::table::delete::Delete;
use crate::table::merge::Merge;
use crate::table::source::SnapshotSource;
use crate::table::update::Update;

/// Which columns a scan reads after the table's.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Extras {
    /// Each row's data file and position (`plan::positions`).
    pub positions: bool,
    /// Each row's lineage parts (`plan::lineage`).
    pub lineage: bool,
    /// A changelog's own columns, the same for every row (`provider::changes`).
    pub change: Option<ChangeConstants>,
}

/// The changelog columns of an append's rows: each an `INSERT` of
/// `snapshot`, the `ordinal`-th of its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChangeConstants {
    pub ordinal: i32,
    pub snapshot: i64,
}

impl Extras {
    fn any(&self) -> bool {
        self.positions || self.lineage || self.change.is_some()
    }

    /// Whether the scan reads each row's position.
    fn positioned(&self) -> bool {
        self.positions || self.lineage
    }

    /// The scan's schema: its file columns, then the per-file constants
    /// (lineage's, the file path, the changelog's), and the row position —
    /// the order DataFusion's file scan gives them.
    fn schema(&self, table: &SchemaRef) -> SchemaRef {
        if !self.any() {
            return Arc::clone(table);
        }
        let mut fields: Vec<_> = self.file_schema(table).fields().iter().cloned().collect();
        fields.extend(self.partition_fields());
        if self.positioned() {
            fields.push(positions::pos_field());
        }
        Arc::new(datafusion::arrow::datatypes::Schema::new_with_metadata(
            fields,
            table.metadata().clone(),
        ))
    }

    /// The columns read from the files: `table`'s, then the stored lineage columns.
    fn file_schema(&self, table: &SchemaRef) -> SchemaRef {
        if !self.lineage {
            return Arc::clone(table);
        }
        let mut fields: Vec<_> = table.fields().iter().cloned().collect();
        fields.extend(lineage::stored_fields());
        Arc::new(datafusion::arrow::datatypes::Schema::new_with_metadata(
            fields,
            table.metadata().clone(),
        ))
    }

    /// The columns DataFusion adds to each file's rows as constants.
    fn partition_fields(&self) -> Vec<datafusion::arrow::datatypes::FieldRef> {
        let mut fields = Vec::new();
        if self.lineage {
            fields.extend(lineage::constant_fields());
        }
        if self.positions {
            fields.push(positions::file_field());
        }
        if self.change.is_some() {
            fields.extend(super::changes::constant_fields());
        }
        fields
    }

    /// Their values for the file at `path`; `lineage`, its first row id and
    /// data sequence number.
    fn partition_values(&self, path: &str, lineage: Option<(Option<i64>, i64)>) -> Vec<ScalarValue> {
        let mut values = Vec::new();
        if self.lineage {
            let (first, seq) = lineage.unzip();
            values.push(ScalarValue::Int64(first.flatten()));
            values.push(ScalarValue::Int64(seq));
        }
        if self.positions {
            values.push(positions::file_value(path));
        }
        if let Some(change) = self.change {
            values.extend(super::changes::constant_values(change));
        }
        values
    }
}

/// How `SHOW CREATE TABLE` names the table, and the statement once written.
#[derive(Debug, Clone, Default)]
pub(crate) struct Definition {
    /// The namespace of the warehouse the table is in, if not the default.
    pub schema: Option<String>,
    /// The table lives at its own location (a `LOCATION` table).
    pub location: bool,
    pub text: Arc<std::sync::OnceLock<String>>,
}

impl Definition {
    /// The statement as given (a table sent to a Ballista scheduler).
    pub fn written(text: String) -> Self {
        Self {
            text: Arc::new(std::sync::OnceLock::from(text)),
            ..Self::default()
        }
    }

    /// The same naming, the statement not yet written.
    fn fresh(&self) -> Self {
        Self {
            schema: self.schema.clone(),
            location: self.location,
            text: Arc::default(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct HiddenPartitionsTable {
    pub(crate) table: Table,
    pub(crate) version: Versioned,
    pub(crate) schema: SchemaRef,
    /// Time travel: read this snapshot instead of the current one (read-only).
    pub(crate) as_of: Option<i64>,
    /// Read only these data files (a write statement rewriting them).
    pub(crate) only: Option<Arc<HashSet<object_store::path::Path>>>,
    /// `SHOW CREATE TABLE`: a statement that recreates the table.
    pub(crate) definition: Definition,
    /// DELETE / UPDATE: the statement as written, recorded by the analyzer
    /// rule `optimizer::dml_check` (see `provider::dml`).
    pub(crate) dml: Option<Arc<DmlIntent>>,
    /// Columns a scan reads after the table's: each row's data file and
    /// position (`plan::positions`), its lineage (`plan::lineage`).
    pub(crate) extras: Extras,
    /// Join-key pruning: the predicate the keys of a join's other side
    /// make (added to the scan's filters) and what to report.
    pub(crate) join_keys: Vec<Arc<JoinKeys>>,
    /// Rows the scan leaves out besides the deleted ones, by data file
    /// (sorted positions): a changelog's rows a rewrite copied unchanged.
    pub(crate) hidden: Option<Arc<std::collections::HashMap<object_store::path::Path, Arc<[u64]>>>>,
}

impl HiddenPartitionsTable {
    /// `version` of `table` as the source a write statement reads.
    pub fn open_source(table: Table, version: Versioned) -> crate::error::Result<Arc<dyn SnapshotSource>> {
        Ok(Arc::new(Self::try_new(table, version)?))
    }

    pub fn try_new(table: Table, version: Versioned) -> crate::error::Result<Self> {
        let schema = version.metadata.current_spec()?.schema.arrow_schema();
        let table = table.bound(&version.metadata.table_uuid);
        Ok(Self {
            table,
            version,
            schema,
            as_of: None,
            only: None,
            definition: Definition::default(),
            dml: None,
            extras: Extras::default(),
            join_keys: Vec::new(),
            hidden: None,
        })
    }

    /// Say in `SHOW CREATE TABLE` that the table lives at its own location
    /// (a `LOCATION` table, not one inside the warehouse).
    pub fn with_location_clause(mut self) -> crate::error::Result<Self> {
        self.definition = Definition {
            location: true,
            ..self.definition.fresh()
        };
        Ok(self)
    }

    /// Say in `SHOW CREATE TABLE` that the table is in schema `schema` (a
    /// namespace of the warehouse), so the statement recreates it there.
    pub fn in_schema(mut self, schema: &str) -> crate::error::Result<Self> {
        self.definition = Definition {
            schema: Some(schema.to_string()),
            ..self.definition.fresh()
        };
        Ok(self)
    }

    /// The statement `SHOW CREATE TABLE` prints, written on first use (a
    /// query never asks for it).
    pub(crate) fn definition(&self) -> &str {
        self.definition.text.get_or_init(|| {
            let md = &self.version.metadata;
            let Ok(spec) = md.current_spec() else {
                return String::new();
            };
            let url = self.definition.location.then(|| self.table.location.url());
            crate::table::show_create::create_statement(
                self.definition.schema.as_deref(),
                &self.table.name,
                spec,
                url.as_deref(),
                &md.properties,
                md.sort_order(),
            )
        })
    }

    /// The table as of a snapshot: `@<snapshot id>`, `@<tag>`, or `@<timestamp>` (the
    /// snapshot current then, see `table::time_travel`, e.g.
    /// `2024-05-01T12:00:00Z` or `2024-05-01 12:00:00` in UTC).
    pub async fn at(mut self, selector: &str) -> crate::error::Result<Self> {
        let snapshot = crate::table::time_travel::snapshot_of(&self.version.metadata, &self.table.name, selector)?;
        self.as_of = Some(snapshot);
        // An older snapshot's manifests are in a file of their own.
        let loaded = md_loaded(&self.version.metadata, snapshot);
        if !loaded {
            let md = Arc::make_mut(&mut self.version.metadata);
            self.table
                .location
                .load_manifests(md, |s| s.snapshot_id == snapshot)
                .await?;
        }
        let md = &self.version.metadata;
        // Read the snapshot with the schema that was current when it was
        // committed (columns are matched by field id).
        if let Some(spec_id) = md.snapshot(snapshot).and_then(|s| s.table_spec_id) {
            self.schema = md.spec(spec_id)?.schema.arrow_schema();
            Arc::make_mut(&mut self.version.metadata).current_spec_id = spec_id;
        }
        Ok(self)
    }

    /// The snapshot this provider reads.
    pub fn snapshot(&self) -> Option<&crate::spec::Snapshot> {
        match self.as_of {
            Some(id) => self.version.metadata.snapshot(id),
            None => self.version.metadata.current_snapshot(),
        }
    }

    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The schema rows are read with (the snapshot's, for time travel).
    pub fn arrow_schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    pub fn metadata(&self) -> &TableMetadata {
        &self.version.metadata
    }

    pub fn version(&self) -> u64 {
        self.version.version
    }

    /// Plan which files a scan with `filters` reads.
    pub async fn plan_files(&self, state: &dyn Session, filters: &[Expr]) -> Result<FilePlan> {
        let pruning = stats_pruning_predicate(state, filters, &self.schema);
        self.plan_with(filters, pruning.as_deref()).await
    }

    /// [`Self::plan_files`] with the statistics predicate given.
    pub(crate) async fn plan_with(
        &self,
        filters: &[Expr],
        pruning: Option<&datafusion::physical_optimizer::pruning::PruningPredicate>,
    ) -> Result<FilePlan> {
        let md = &self.version.metadata;
        let mut plan = crate::plan::files::plan_files_within(
            &self.table.location,
            md,
            self.snapshot(),
            filters,
            pruning,
            self.only.as_deref(),
        )
        .await?;
        if let Some(only) = &self.only {
            plan.keep_only(only, md);
        }
        self.table
            .apply_format_deletes(self.version.version, &mut plan.files)
            .await?;
        if let Some(hidden) = &self.hidden {
            for file in &mut plan.files {
                if let Some(left_out) = hidden.get(&file.path) {
                    file.deletes = Some(match file.deletes.take() {
                        Some(deleted) => crate::manifest::deletes::merge(&[deleted, Arc::clone(left_out)]),
                        None => Arc::clone(left_out),
                    });
                }
            }
        }
        Ok(plan)
    }

    /// This table with the DELETE / UPDATE it is planned for.
    pub fn with_dml(mut self, intent: DmlIntent) -> Self {
        self.dml = Some(Arc::new(intent));
        self
    }

    /// The recorded statement; refused without one, since the filters
    /// DataFusion passes may be fewer than the user wrote.
    fn dml_intent(&self, what: &str) -> Result<&DmlIntent> {
        self.dml.as_deref().ok_or_else(|| {
            datafusion::error::DataFusionError::Plan(format!(
                "{what} on table {} was planned without the hidden-partitions analyzer rule ({}), so the table cannot know which rows the statement selects; nothing was changed. Use a session from hidden_partitions::session, register_warehouse or with_hidden_partitions",
                self.table.name,
                super::dml::DML_CHECK_NAME
            ))
        })
    }

    /// This table with two more columns: each row's data file and its
    /// position there (see `plan::positions`).
    pub fn with_positions(&self) -> Self {
        let mut with = self.clone();
        with.extras.positions = true;
        with
    }

    /// This table with its rows' lineage parts after its columns (see
    /// `plan::lineage`; only for format version 3 tables of our own, whose
    /// files' data sequence numbers the manifests give).
    pub fn with_lineage(&self) -> Self {
        let mut with = self.clone();
        with.extras.lineage = crate::plan::lineage::tracked(&self.version.metadata) && !self.table.is_foreign();
        with
    }

    /// This table with a changelog's own columns after its columns, each
    /// row an `INSERT` of `snapshot` (the `ordinal`-th of the range): an
    /// append's rows, read as the changelog without a projection.
    pub(crate) fn with_change_constants(mut self, ordinal: i32, snapshot: i64) -> Self {
        self.extras.change = Some(ChangeConstants { ordinal, snapshot });
        self
    }

    /// This table, its scans planned with the keys of a join's other side
    /// (`column IN (values)`; nothing when there were too many).
    pub fn with_join_keys(&self, keys: JoinKeys) -> Self {
        let mut with = self.clone();
        with.join_keys.push(Arc::new(keys));
        with
    }

    /// The join keys this table's scans are planned with.
    pub fn join_keys(&self) -> &[Arc<JoinKeys>] {
        &self.join_keys
    }

    /// This table, reading only `files` (for a statement that rewrites them).
    pub fn restricted_to(&self, files: HashSet<object_store::path::Path>) -> Self {
        let mut restricted = self.clone();
        restricted.only = Some(Arc::new(files));
        restricted
    }
}

#[async_trait]
impl SnapshotSource for HiddenPartitionsTable {
    fn table(&self) -> &Table {
        HiddenPartitionsTable::table(self)
    }

    fn metadata(&self) -> &TableMetadata {
        HiddenPartitionsTable::metadata(self)
    }

    fn arrow_schema(&self) -> SchemaRef {
        HiddenPartitionsTable::arrow_schema(self)
    }

    async fn plan_files(&self, state: &dyn Session, filters: &[Expr]) -> Result<FilePlan> {
        HiddenPartitionsTable::plan_files(self, state, filters).await
    }

    fn with_positions(&self) -> Arc<dyn SnapshotSource> {
        Arc::new(HiddenPartitionsTable::with_positions(self))
    }

    fn with_lineage(&self) -> Arc<dyn SnapshotSource> {
        Arc::new(HiddenPartitionsTable::with_lineage(self))
    }

    fn restricted_to(&self, files: HashSet<object_store::path::Path>) -> Arc<dyn SnapshotSource> {
        Arc::new(HiddenPartitionsTable::restricted_to(self, files))
    }
}

/// The session state behind a `&dyn Session` (write statements run plans).
/// A session of another library (datafusion-python's, reaching this table
/// through the FFI) is not a `SessionState`: writes then run in a state with
/// its settings and runtime.
fn session_state(state: &dyn Session) -> Result<SessionState> {
    if let Some(ours) = state.as_any().downcast_ref::<SessionState>() {
        return Ok(ours.clone());
    }
    let mut config = state.config().clone();
    if config
        .options()
        .extensions
        .get::<crate::config::HiddenPartitionsOptions>()
        .is_none()
    {
        config = config.with_option_extension(crate::config::HiddenPartitionsOptions::default());
    }
    Ok(datafusion::execution::SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(Arc::clone(state.runtime_env()))
        .with_default_features()
        .build())
}

impl HiddenPartitionsTable {
    /// How data files' columns are found: by field id. Another engine's
    /// Iceberg files may lack ids: then through the table's name mapping,
    /// and a file matching neither is an error, never a column of NULLs
    /// (which a rewrite would make permanent).
    fn file_adapter(&self) -> crate::error::Result<FieldIdAdapterFactory> {
        let md = &self.version.metadata;
        let mut adapter = FieldIdAdapterFactory::new(&md.current_spec()?.schema);
        if self.extras.lineage {
            adapter = adapter.with_ids(lineage::stored_fields().iter().filter_map(|f| {
                let id = f.metadata().get(crate::spec::types::PARQUET_FIELD_ID)?.parse().ok()?;
                Some((f.name().clone(), id))
            }));
        }
        if !self.table.is_foreign() {
            return Ok(adapter);
        }
        let names = super::field_ids::iceberg_name_mapping(&md.properties);
        Ok(adapter.with_name_mapping(names, format!("Iceberg table {}", self.table.name)))
    }

    /// Writes go to the table itself, not to a snapshot of it.
    fn writable(&self, what: &str) -> Result<()> {
        if self.as_of.is_some() {
            return datafusion::common::plan_err!(
                "{what} on {}@…: a snapshot read by time travel cannot be written; write to table {} itself",
                self.table.name,
                self.table.name
            );
        }
        Ok(())
    }
}

/// Spread files over `n` groups, largest first onto the lightest group;
/// each file carries its identity columns' values as statistics.
fn balance(files: &[PlannedFile], identity: &IdentityColumns, n: usize) -> Vec<FileGroup> {
    let n = n.max(1).min(files.len().max(1));
    let mut order: Vec<&PlannedFile> = files.iter().collect();
    order.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
    let mut groups: Vec<(u64, Vec<PartitionedFile>)> = (0..n).map(|_| (0, Vec::new())).collect();
    for f in order {
        let Some(lightest) = groups.iter_mut().min_by_key(|(bytes, _)| *bytes) else {
            break;
        };
        lightest.0 += f.size;
        let mut file = f.partitioned_file();
        file.statistics = identity.statistics(f);
        lightest.1.push(file);
    }
    groups
        .into_iter()
        .filter(|(_, g)| !g.is_empty())
        .map(|(_, g)| FileGroup::new(g))
        .collect()
}

#[async_trait]
impl datafusion::catalog::TableProvider for HiddenPartitionsTable {
    fn schema(&self) -> SchemaRef {
        self.extras.schema(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn get_table_definition(&self) -> Option<&str> {
        Some(self.definition())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let counts = self.table.location.requests.clone();
        let before = counts.as_ref().map(|c| c.snapshot());
        let mut filters = filters.to_vec();
        filters.extend(self.join_keys.iter().filter_map(|k| k.predicate()));
        let plan = self.plan_files(state, &filters).await?;
        let requests = counts.zip(before).map(|(counts, before)| ScanRequests {
            planning: counts.snapshot().since(&before),
            counts,
            started: Default::default(),
        });
        let name = self.table.name.clone();
        let runtime = Arc::new(RuntimeContext::new(
            Arc::clone(&self.version.metadata),
            self.snapshot(),
            &plan.files,
            requests,
            self.table.location.options.clone(),
        ));
        if plan.files.is_empty() {
            let schema = project_schema(&self.schema(), projection)?;
            let empty = Arc::new(EmptyExec::new(schema));
            return Ok(Arc::new(
                HiddenPartitionsScanExec::new(name, plan.counts, empty, runtime).with_join_keys(self.join_keys.clone()),
            ));
        }
        // Deleted positions are exact (unique, within their files), so the
        // row count stays exact; column statistics may count deleted rows.
        let rows: u64 = plan.files.iter().map(PlannedFile::live_rows).sum();
        let has_deletes = plan.files.iter().any(|f| f.deletes.is_some());
        let bytes: u64 = plan.files.iter().map(|f| f.size).sum();
        let mut statistics = Statistics::new_unknown(&self.schema);
        statistics.num_rows = Precision::Exact(rows as usize);
        statistics.total_byte_size = Precision::Inexact(bytes as usize);
        let current = &self.version.metadata.current_spec()?.schema;
        for (field, col) in current.fields.iter().zip(statistics.column_statistics.iter_mut()) {
            let Some(summary) = plan.column_stats.get(&field.id) else {
                continue;
            };
            if summary.nulls_complete {
                col.null_count = if has_deletes {
                    Precision::Inexact(summary.null_count as usize)
                } else {
                    Precision::Exact(summary.null_count as usize)
                };
            }
            if summary.bounds_complete {
                // Float bounds are widened at zero (see manifest::stats), and a
                // deleted row may hold the bound: then not exact values.
                let exact = !field.field_type.to_arrow().is_floating() && !has_deletes;
                let wrap = |v: &ScalarValue| {
                    if exact {
                        Precision::Exact(v.clone())
                    } else {
                        Precision::Inexact(v.clone())
                    }
                };
                if let Some(min) = &summary.min {
                    col.min_value = wrap(min);
                }
                if let Some(max) = &summary.max {
                    col.max_value = wrap(max);
                }
            }
        }
        let file_columns = self.extras.file_schema(&self.schema).fields().len();
        let identity = IdentityColumns::new(&self.version.metadata, current, file_columns);
        let mut groups = balance(
            &plan.files,
            &identity,
            scan_partitions(&plan.files, state.config_options()),
        );
        let mut table_schema = TableSchema::builder(Arc::clone(&self.schema));
        if self.extras.any() {
            let constants = match (self.extras.lineage, self.snapshot()) {
                (true, Some(snapshot)) => {
                    crate::plan::lineage::file_constants(
                        &self.table.location,
                        &self.version.metadata,
                        snapshot,
                        &plan.files,
                    )
                    .await?
                }
                _ => Default::default(),
            };
            table_schema = TableSchema::builder(self.extras.file_schema(&self.schema))
                .with_table_partition_cols(self.extras.partition_fields());
            if self.extras.positioned() {
                table_schema = table_schema.with_virtual_columns(vec![positions::pos_field()]);
            }
            let added = self.extras.schema(&self.schema).fields().len() - self.schema.fields().len();
            for _ in 0..added {
                statistics.column_statistics.push(ColumnStatistics::new_unknown());
            }
            groups = groups
                .into_iter()
                .map(|group| {
                    group
                        .into_inner()
                        .into_iter()
                        .map(|mut file| {
                            let location = &file.object_meta.location;
                            let lineage = constants.get(location).copied();
                            file.partition_values = self.extras.partition_values(location.as_ref(), lineage);
                            file
                        })
                        .collect()
                })
                .collect();
        }
        let source = Arc::new(ParquetSource::new(table_schema.build()));
        let config = FileScanConfigBuilder::new(self.table.location.store_url.clone(), source)
            .with_file_groups(groups)
            .with_statistics(statistics)
            .with_projection_indices(projection.cloned())?
            .with_limit(limit)
            .with_expr_adapter(Some(Arc::new(self.file_adapter()?)))
            .build();
        let format = ParquetFormat::default().with_options(state.table_options().parquet.clone());
        let exec = format.create_physical_plan(state, config).await?;
        Ok(Arc::new(
            HiddenPartitionsScanExec::new(name, plan.counts, exec, runtime).with_join_keys(self.join_keys.clone()),
        ))
    }

    /// `Exact` when every table spec that has files decides the filter from
    /// partition values alone (see `expr::exact`); `Inexact` otherwise.
    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(crate::plan::files::filter_pushdown(
            &self.version.metadata,
            self.snapshot(),
            filters,
        )?)
    }

    async fn delete_from(&self, state: &dyn Session, _filters: Vec<Expr>) -> Result<Arc<dyn ExecutionPlan>> {
        self.writable("DELETE")?;
        let statement = Delete {
            table: self.table.clone(),
            open: HiddenPartitionsTable::open_source,
            state: session_state(state)?,
            filters: self.dml_intent("DELETE")?.filters(&self.schema, state)?,
        };
        Ok(Arc::new(WriteExec::new("delete", Arc::new(statement))))
    }

    async fn update(
        &self,
        state: &dyn Session,
        _assignments: Vec<(String, Expr)>,
        _filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.writable("UPDATE")?;
        let intent = self.dml_intent("UPDATE")?;
        let statement = Update {
            table: self.table.clone(),
            open: HiddenPartitionsTable::open_source,
            state: session_state(state)?,
            assignments: intent.unqualified_assignments()?,
            filters: intent.filters(&self.schema, state)?,
        };
        Ok(Arc::new(WriteExec::new("update", Arc::new(statement))))
    }

    async fn truncate(&self, state: &dyn Session) -> Result<Arc<dyn ExecutionPlan>> {
        self.writable("TRUNCATE")?;
        let statement = Delete {
            table: self.table.clone(),
            open: HiddenPartitionsTable::open_source,
            state: session_state(state)?,
            filters: Vec::new(),
        };
        Ok(Arc::new(WriteExec::new("truncate", Arc::new(statement))))
    }

    async fn merge_into(
        &self,
        state: &dyn Session,
        source: Arc<dyn ExecutionPlan>,
        merge_schema: datafusion::common::DFSchemaRef,
        on: Expr,
        clauses: Vec<datafusion::logical_expr::dml::MergeIntoClause>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.writable("MERGE INTO")?;
        let state = session_state(state)?;
        let width = self.schema.fields().len();
        let qualifier =
            |i: usize| {
                merge_schema.qualified_field(i).0.cloned().ok_or_else(|| {
                    datafusion::error::DataFusionError::Plan("MERGE INTO: unqualified merge column".into())
                })
            };
        let (target_alias, source_alias) = (qualifier(0)?, qualifier(width)?);
        // The source is read once: a retry after a conflict sees the same rows.
        let schema = source.schema();
        let batches = datafusion::physical_plan::collect(source, state.task_ctx()).await?;
        let source = Arc::new(datafusion::datasource::MemTable::try_new(schema, vec![batches])?);
        let statement = Merge {
            table: self.table.clone(),
            open: HiddenPartitionsTable::open_source,
            state,
            source,
            target_alias,
            source_alias,
            on,
            clauses,
        };
        Ok(Arc::new(WriteExec::new("merge", Arc::new(statement))))
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.writable("INSERT")?;
        self.schema.logically_equivalent_names_and_types(&input.schema())?;
        let spec = self.version.metadata.current_spec()?.clone();
        let md = &self.version.metadata;
        let layout = crate::table::writer::FileLayout::of(md)?;
        let sink = HiddenPartitionsSink::new(self.table.clone(), spec, Arc::clone(&self.schema))
            .with_layout(md.sort_order().cloned(), layout.target_file_size)?;
        let sink = match insert_op {
            InsertOp::Append => sink,
            InsertOp::Overwrite => sink.overwrite(self.version.clone()),
            InsertOp::Replace => {
                return not_impl_err!(
                    "REPLACE INTO is not supported for table {}; use INSERT OVERWRITE or MERGE INTO",
                    self.table.name
                );
            }
        };
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }
}

/// Whether snapshot `id` of `md` has its manifests at hand (or is unknown).
fn md_loaded(md: &crate::spec::TableMetadata, id: i64) -> bool {
    md.snapshot(id)
        .is_none_or(|s| s.is_loaded() || s.manifests_file.is_none())
}
