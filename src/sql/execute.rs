//! Running a script: our statements here, everything else through DataFusion,
//! strictly in order (a statement sees the effects of the ones before it).

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
use std::sync::Arc;

use datafusion::arrow::array::{Int32Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::common::TableReference;
use datafusion::common::tree_node::TreeNode;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{DdlStatement, LogicalPlan};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{ExecutionPlan, execute_stream};
use datafusion::prelude::{DataFrame, SessionContext};

use super::statement::{CreateTable, Statement, parse_statements};
use super::timestamp_precision::{unprecise_time_columns, with_microsecond_times};
use crate::catalog::WarehouseSchema;
use crate::catalog::ddl::{CreateMode, CreatePlan, Created};
use crate::error::{Error, Result};
use crate::manifest::write_manifest;
use crate::optimizer::stop_on_cancel::{Cancel, stop_on_cancel};
use crate::plan::files::SpecFileCount;
use crate::provider::HiddenPartitionsScanExec;
use crate::provider::scan_exec::JoinKeys;
use crate::provider::write_exec::WriteExec;
use crate::table::creation::Creation;
use crate::table::writer::{delete_files, write_stream};
use crate::table::{PartitionChange, PartitionFieldDef, Table, new_snapshot_id, with_appended};

/// The result of one statement: its schema and all its rows.
#[derive(Debug, Clone)]
pub struct StatementResult {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl StatementResult {
    pub(crate) fn empty() -> Self {
        Self {
            schema: Arc::new(ArrowSchema::empty()),
            batches: Vec::new(),
        }
    }

    /// One row of counts, a `UInt64` column each (`count` of a CTAS, the
    /// figures of a procedure).
    pub(crate) fn counts(counts: &[(&str, u64)]) -> Result<Self> {
        let schema = Arc::new(ArrowSchema::new(
            counts
                .iter()
                .map(|(name, _)| Field::new(*name, DataType::UInt64, false))
                .collect::<Vec<_>>(),
        ));
        let columns: Vec<datafusion::arrow::array::ArrayRef> = counts
            .iter()
            .map(|(_, n)| Arc::new(datafusion::arrow::array::UInt64Array::from(vec![*n])) as _)
            .collect();
        Ok(Self {
            batches: vec![RecordBatch::try_new(Arc::clone(&schema), columns)?],
            schema,
        })
    }

    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// Run every statement of `sql` in order and collect each result.
pub async fn execute_sql(ctx: &SessionContext, sql: &str) -> Result<Vec<StatementResult>> {
    let mut results = Vec::new();
    for statement in parse_statements(sql)? {
        results.push(execute_statement(ctx, statement).await?);
    }
    Ok(results)
}

fn is_insert(sql: &str) -> bool {
    sql.trim_start()
        .get(..6)
        .is_some_and(|w| w.eq_ignore_ascii_case("insert"))
}

/// Run one parsed statement, its rows as a stream: a query's rows arrive as
/// they are computed (dropping the stream stops the query, and so does
/// `cancel`, sooner: see [`stop_on_cancel`]); other statements run to the
/// end first.
pub async fn execute_statement_stream(
    ctx: &SessionContext,
    statement: Statement,
    cancel: &Cancel,
) -> Result<SendableRecordBatchStream> {
    match statement {
        Statement::Other(text) if super::describe::describe_target(&text).is_none() && !is_insert(&text) => {
            prepare(ctx, &text).await?;
            let planned = async {
                let frame = ctx.sql(&text).await?;
                let task = frame.task_ctx();
                Ok::<_, Error>((frame.create_physical_plan().await?, task))
            };
            let (plan, task) = planned
                .await
                .map_err(|e| super::insert_errors::explain_cast(&text, e))?;
            let plan = stop_on_cancel(plan, cancel)?;
            Ok(execute_stream(plan, Arc::new(task))?)
        }
        statement => {
            let result = execute_statement(ctx, statement).await?;
            Ok(Box::pin(RecordBatchStreamAdapter::new(
                result.schema,
                futures::stream::iter(result.batches.into_iter().map(Ok)),
            )))
        }
    }
}

/// What a statement DataFusion plans needs first: the object stores it
/// names by URL registered, and for `SHOW …` and `information_schema` the
/// listings read again (another process may have created or dropped tables).
async fn prepare(ctx: &SessionContext, text: &str) -> Result<()> {
    if let Some(ws) = default_warehouse(ctx)
        && let Some(ws) = ws.downcast_ref::<WarehouseSchema>()
    {
        crate::catalog::stores::register_stores(ws, text);
    }
    if reads_listings(text) {
        crate::catalog::namespace::refresh_listings(ctx).await?;
    }
    Ok(())
}

fn reads_listings(text: &str) -> bool {
    let text = text.trim_start();
    text.get(..4).is_some_and(|w| w.eq_ignore_ascii_case("show"))
        || text.to_ascii_lowercase().contains("information_schema")
}

/// Run one parsed statement.
pub async fn execute_statement(ctx: &SessionContext, statement: Statement) -> Result<StatementResult> {
    match statement {
        Statement::Other(text) => match super::describe::describe_target(&text) {
            Some(name) => {
                let described = run_datafusion(ctx, &text).await?;
                let batches = super::describe::with_partitioning(ctx, &name, described.batches).await?;
                Ok(StatementResult {
                    schema: described.schema,
                    batches,
                })
            }
            None => match {
                prepare(ctx, &text).await?;
                run_datafusion(ctx, &text).await
            } {
                Err(e) if is_insert(&text) => Err(super::insert_errors::explain(ctx, &text, e).await),
                Err(e) => Err(super::insert_errors::explain_cast(&text, e)),
                result => result,
            },
        },
        Statement::CreateTable(create) => create_table(ctx, create).await,
        Statement::CreateView(text) => super::views::create_view(ctx, &text).await,
        Statement::DropView(text) => super::views::drop_view(ctx, &text).await,
        Statement::CreateExternal(text) => super::views::create_external(ctx, &text).await,
        Statement::Tag {
            table,
            tag,
            create,
            if_exists,
        } => {
            let provider = load_warehouse_table(ctx, &table).await?;
            if create {
                provider.table().create_tag(&tag).await?;
            } else {
                provider.table().drop_tag(&tag, if_exists).await?;
            }
            Ok(StatementResult::empty())
        }
        Statement::WriteOrder { table, fields } => {
            load_warehouse_table(ctx, &table)
                .await?
                .table()
                .write_ordered_by(&fields)
                .await?;
            Ok(StatementResult::empty())
        }
        Statement::SetProperties { table, properties } => {
            load_warehouse_table(ctx, &table)
                .await?
                .table()
                .set_properties(&properties)
                .await?;
            Ok(StatementResult::empty())
        }
        Statement::UnsetProperties { table, keys, if_exists } => {
            load_warehouse_table(ctx, &table)
                .await?
                .table()
                .unset_properties(&keys, if_exists)
                .await?;
            Ok(StatementResult::empty())
        }
        Statement::Execute {
            table,
            procedure,
            args,
            condition,
        } => execute_procedure(ctx, &table, &procedure, &args, condition.as_deref()).await,
        Statement::DropTable {
            names,
            if_exists,
            purge,
            text,
        } => drop_tables(ctx, &names, if_exists, purge, &text).await,
        Statement::CreateSchema {
            name,
            if_not_exists,
            text,
        } => match crate::catalog::namespace::create_schema(ctx, &name, if_not_exists).await? {
            true => Ok(StatementResult::empty()),
            false => run_datafusion(ctx, &text).await,
        },
        Statement::DropSchema {
            name,
            if_exists,
            cascade,
            text,
        } => match crate::catalog::namespace::drop_schema(ctx, &name, if_exists, cascade).await? {
            true => Ok(StatementResult::empty()),
            false => run_datafusion(ctx, &text).await,
        },
        Statement::ExplainFiles { query, analyze } => explain_files(ctx, &query, analyze).await,
        Statement::AlterPartition { table, change } => alter_partition(ctx, &table, change).await,
        Statement::AddColumn {
            table,
            definition,
            if_not_exists,
        } => add_column(ctx, &table, &definition, if_not_exists).await,
        Statement::RenameColumn { table, from, to } => {
            load_warehouse_table(ctx, &table)
                .await?
                .table()
                .rename_column(&from, &to)
                .await?;
            Ok(StatementResult::empty())
        }
        Statement::Rename {
            from,
            to,
            view,
            if_exists,
        } => rename(ctx, &from, &to, view, if_exists).await,
        Statement::DropColumn { table, column } => {
            load_warehouse_table(ctx, &table)
                .await?
                .table()
                .drop_column(&column)
                .await?;
            Ok(StatementResult::empty())
        }
        Statement::AlterColumnType {
            table,
            column,
            definition,
        } => {
            let field = column_definition(ctx, &definition).await?;
            load_warehouse_table(ctx, &table)
                .await?
                .table()
                .widen_column(&column, field.data_type())
                .await?;
            Ok(StatementResult::empty())
        }
    }
}

pub(super) async fn run_datafusion(ctx: &SessionContext, sql: &str) -> Result<StatementResult> {
    // `ctx.sql`, with the session's state copied once, not twice, for a
    // query (a copy is most of a small query's planning).
    let state = ctx.state();
    let plan = state.create_logical_plan(sql).await?;
    let df = match plan {
        LogicalPlan::Ddl(_) | LogicalPlan::Statement(_) => ctx.execute_logical_plan(plan).await?,
        plan => DataFrame::new(state, plan),
    };
    let schema = Arc::new(df.schema().as_arrow().clone());
    let batches = df.collect().await?;
    Ok(StatementResult { schema, batches })
}

/// Plan `query` and report, per hidden-partitions scan and table spec, how
/// many data files it reads out of how many. With `analyze` the query runs
/// first and the count is of the files actually opened (after run-time
/// pruning), per scan.
async fn explain_files(ctx: &SessionContext, query: &str, analyze: bool) -> Result<StatementResult> {
    let df = ctx.sql(query).await?;
    // Planned here with DataFusion's planner, also when the session runs
    // statements elsewhere (a Ballista cluster plans with the same rule).
    let local_plan = {
        use datafusion::physical_planner::PhysicalPlanner;
        let state = ctx.state();
        let mut logical = state.optimize(df.logical_plan())?;
        if !analyze && crate::optimizer::join_keys::installed(&state) {
            // The files the query reads after its joins' keys prune them
            // (the keys are found as the query would find them).
            logical = crate::optimizer::join_keys::prune(
                &logical,
                &state,
                state.query_planner().as_ref(),
                crate::optimizer::join_keys::Sides::Kept,
            )
            .await?;
        }
        datafusion::physical_planner::DefaultPhysicalPlanner::default()
            .create_physical_plan(&logical, &state)
            .await?
    };
    if let Some(write) = find_write(&local_plan) {
        return explain_write_files(write).await;
    }
    let mut scans = Vec::new();
    if analyze {
        let plan = df.create_physical_plan().await?;
        datafusion::physical_plan::collect(Arc::clone(&plan), ctx.task_ctx()).await?;
        collect_scans(&plan, &mut scans);
        let mut planned = Vec::new();
        collect_scans(&local_plan, &mut planned);
        if scans.is_empty() && !planned.is_empty() {
            return Err(Error::Invalid(
                "EXPLAIN FILES ANALYZE counts the files a scan opens in this process, and this session runs queries \
                 elsewhere (a Ballista cluster). Use EXPLAIN FILES for the files planned, or EXPLAIN ANALYZE; \
                 each executor prints the files it read when it stops"
                    .into(),
            ));
        }
    } else {
        collect_scans(&local_plan, &mut scans);
    }
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("table", DataType::Utf8, false),
        Field::new("spec_id", DataType::Int32, true),
        Field::new("files", DataType::Utf8, false),
    ]));
    let mut tables = Vec::new();
    let mut specs = Vec::new();
    let mut files = Vec::new();
    for (table, counts, opened, keys) in scans {
        // Where a join's keys pruned the scan, which and how many.
        let from_joins = if keys.is_empty() {
            String::new()
        } else {
            let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
            format!(" ({})", keys.join("; "))
        };
        if let Some(opened) = opened {
            let total: usize = counts.iter().map(|c| c.total).sum();
            tables.push(table);
            specs.push(None);
            files.push(format!("{opened}/{total}{from_joins}"));
            continue;
        }
        for c in counts.iter().filter(|c| c.total > 0) {
            tables.push(table.clone());
            specs.push(Some(c.spec_id));
            files.push(format!("{}/{}{from_joins}", c.selected, c.total));
        }
    }
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(StringArray::from(tables)),
            Arc::new(Int32Array::from(specs)),
            Arc::new(StringArray::from(files)),
        ],
    )?;
    Ok(StatementResult {
        schema,
        batches: vec![batch],
    })
}

/// `EXPLAIN FILES` of DELETE / UPDATE / MERGE: per table spec, the files
/// the statement would read (and rewrite) and those it would drop from the
/// table without reading, out of all the table's files.
async fn explain_write_files(write: &WriteExec) -> Result<StatementResult> {
    let statement = write.statement();
    let table = statement.table();
    let provider = crate::provider::HiddenPartitionsTable::try_new(table.clone(), table.load_bound().await?)?;
    let chosen = statement.choose(&provider).await?;
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("table", DataType::Utf8, false),
        Field::new("spec_id", DataType::Int32, false),
        Field::new("files_read", DataType::Utf8, false),
        Field::new("files_dropped_unread", DataType::Utf8, false),
    ]));
    let rows = chosen.per_spec(provider.metadata());
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| table.name.clone()))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| format!("{}/{}", r.2, r.1)),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| format!("{}/{}", r.3, r.1)),
            )),
        ],
    )?;
    Ok(StatementResult {
        schema,
        batches: vec![batch],
    })
}

fn find_write(plan: &Arc<dyn ExecutionPlan>) -> Option<&WriteExec> {
    if let Some(w) = plan.downcast_ref::<WriteExec>() {
        return Some(w);
    }
    plan.children().into_iter().find_map(find_write)
}

type ScanReport = (String, Vec<SpecFileCount>, Option<usize>, Vec<Arc<JoinKeys>>);

fn collect_scans(plan: &Arc<dyn ExecutionPlan>, out: &mut Vec<ScanReport>) {
    if let Some(scan) = plan.downcast_ref::<HiddenPartitionsScanExec>() {
        out.push((
            scan.table().to_string(),
            scan.file_counts().to_vec(),
            scan.files_opened(),
            scan.join_keys().to_vec(),
        ));
    }
    for child in plan.children() {
        collect_scans(child, out);
    }
}

/// `ALTER TABLE t ADD COLUMN …`: the column type is planned by DataFusion
/// (so every SQL type and `NOT NULL` mean the same as in CREATE TABLE).
async fn add_column(
    ctx: &SessionContext,
    table: &str,
    definition: &str,
    if_not_exists: bool,
) -> Result<StatementResult> {
    let field = column_definition(ctx, definition).await?;
    let provider = load_warehouse_table(ctx, table).await?;
    // IF NOT EXISTS: a column of that name, whatever its type, is enough.
    if if_not_exists
        && datafusion::catalog::TableProvider::schema(&provider)
            .field_with_name(field.name())
            .is_ok()
    {
        return Ok(StatementResult::empty());
    }
    provider.table().add_column(&field).await?;
    Ok(StatementResult::empty())
}

/// A column definition (`name type [NOT NULL]`) as DataFusion plans it,
/// in a session of its own: planning a CREATE TABLE looks its name up, and
/// the user's session may ask a remote catalog for it.
async fn column_definition(ctx: &SessionContext, definition: &str) -> Result<datafusion::arrow::datatypes::Field> {
    let scratch = datafusion::execution::SessionStateBuilder::new()
        .with_config(ctx.state().config().clone())
        .with_type_planner(Arc::new(crate::sql::type_planner::SqlTypePlanner))
        .build();
    let plan = scratch
        .create_logical_plan(&format!("CREATE TABLE __hp_column ({definition})"))
        .await?;
    let LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(cmt)) = plan else {
        return Err(Error::Invalid(format!("cannot read column definition {definition:?}")));
    };
    let sql = format!("CREATE TABLE __hp_column ({definition})");
    let schema = with_microsecond_times(cmt.input.schema().as_arrow(), &unprecise_time_columns(&sql));
    match schema.fields().iter().collect::<Vec<_>>()[..] {
        [field] => Ok(field.as_ref().clone()),
        _ => Err(Error::Invalid("expected exactly one column".into())),
    }
}

async fn load_warehouse_table(ctx: &SessionContext, table: &str) -> Result<crate::provider::HiddenPartitionsTable> {
    let reference = super::statement::table_reference(ctx, table);
    refuse_derived_name(reference.table(), "change")?;
    let Some(schema) = warehouse_schema(ctx, &reference) else {
        // A writable table of another catalog (`--catalog`): changed
        // through that catalog's commits.
        if let Some(found) = catalog_table(ctx, &reference).await?
            && let Some(foreign) = crate::formats::as_foreign(&found)
            && let Some(writer) = foreign.writer_table().await?
        {
            return Ok(writer);
        }
        return Err(Error::Invalid(format!("{table} is not a hidden-partitions table")));
    };
    let Some(ws) = schema.downcast_ref::<WarehouseSchema>() else {
        return Err(Error::Invalid(format!("{table} is not a hidden-partitions table")));
    };
    ws.load_table(reference.table())
        .await?
        .ok_or_else(|| Error::TableNotFound(table.to_string()))
}

async fn alter_partition(ctx: &SessionContext, table: &str, change: PartitionChange) -> Result<StatementResult> {
    let reference = super::statement::table_reference(ctx, table);
    let Some(schema) = warehouse_schema(ctx, &reference) else {
        return Err(Error::Invalid(format!("{table} is not a hidden-partitions table")));
    };
    let Some(ws) = schema.downcast_ref::<WarehouseSchema>() else {
        return Err(Error::Invalid(format!("{table} is not a hidden-partitions table")));
    };
    let Some(provider) = ws.load_table(reference.table()).await? else {
        return Err(Error::TableNotFound(table.to_string()));
    };
    provider.table().evolve_partition_spec(change).await?;
    Ok(StatementResult::empty())
}

/// The default schema, when it is a warehouse's.
pub(super) fn default_warehouse(ctx: &SessionContext) -> Option<Arc<dyn datafusion::catalog::SchemaProvider>> {
    warehouse_schema(ctx, &TableReference::bare(""))
}

/// The table `name` refers to in whatever schema holds it.
async fn catalog_table(
    ctx: &SessionContext,
    name: &TableReference,
) -> Result<Option<Arc<dyn datafusion::catalog::TableProvider>>> {
    match schema_of(ctx, name) {
        Some(schema) => Ok(schema.table(name.table()).await?),
        None => Ok(None),
    }
}

/// The schema that holds `name` (the session's defaults fill in the rest).
fn schema_of(ctx: &SessionContext, name: &TableReference) -> Option<Arc<dyn datafusion::catalog::SchemaProvider>> {
    // Read in place: `ctx.state()` copies the whole session (every
    // function registry), per statement.
    let resolved = {
        let state = ctx.state_ref();
        let state = state.read();
        let catalog = &state.config_options().catalog;
        name.clone().resolve(&catalog.default_catalog, &catalog.default_schema)
    };
    ctx.catalog(&resolved.catalog)?.schema(&resolved.schema)
}

/// The warehouse schema a table reference resolves to, if any.
pub(super) fn warehouse_schema(
    ctx: &SessionContext,
    name: &TableReference,
) -> Option<Arc<dyn datafusion::catalog::SchemaProvider>> {
    let schema = schema_of(ctx, name)?;
    schema.downcast_ref::<WarehouseSchema>().is_some().then_some(schema)
}

/// `CREATE TABLE [IF NOT EXISTS] u LIKE t [PARTITIONED BY (…)] [LOCATION '…']`
/// as the `CREATE TABLE` that makes it: a table of ours gives its columns
/// (types, NOT NULL) and partitioning (unless the statement gives its own),
/// any other table its columns, by an empty `AS SELECT`. `None` for other
/// statements.
async fn create_like(ctx: &SessionContext, create: &CreateTable) -> Result<Option<CreateTable>> {
    use datafusion::sql::parser::Statement as DFStatement;
    use datafusion::sql::sqlparser::ast::{CreateTableLikeKind, Statement as SqlStatement};
    let state = ctx.state();
    let Ok(DFStatement::Statement(statement)) =
        state.sql_to_statement(&create.sql, &state.config_options().sql_parser.dialect)
    else {
        return Ok(None);
    };
    let SqlStatement::CreateTable(ct) = *statement else {
        return Ok(None);
    };
    let Some(like) = &ct.like else {
        return Ok(None);
    };
    let source = match like {
        CreateTableLikeKind::Parenthesized(l) | CreateTableLikeKind::Plain(l) => l.name.to_string(),
    };
    let target = ct.name.to_string();
    let prefix = match (ct.or_replace, ct.if_not_exists) {
        (true, _) => "CREATE OR REPLACE TABLE",
        (false, true) => "CREATE TABLE IF NOT EXISTS",
        (false, false) => "CREATE TABLE",
    };
    let source_ref = super::statement::table_reference(ctx, &source);
    let provider = ctx.table_provider(source_ref.clone()).await?;
    let ours = provider.downcast_ref::<crate::provider::HiddenPartitionsTable>();
    let mut like = match ours {
        Some(table) => {
            let spec = table.metadata().current_spec()?;
            let text =
                crate::table::show_create::create_statement(None, "like_target", spec, None, &Default::default(), None);
            let columns = text.split_once('(').map(|(_, rest)| rest).unwrap_or_default();
            let sql = format!("{prefix} {target} ({columns}");
            match super::statement::parse_statements(&sql)?.pop() {
                Some(Statement::CreateTable(c)) => c,
                _ => {
                    return Err(Error::Invalid(format!(
                        "CREATE TABLE … LIKE {source}: cannot restate its columns"
                    )));
                }
            }
        }
        None => CreateTable {
            sql: format!("{prefix} {target} AS SELECT * FROM {source} LIMIT 0"),
            partitioned_by: Vec::new(),
            ordered_by: Vec::new(),
            location: None,
            properties: Default::default(),
        },
    };
    if !create.partitioned_by.is_empty() {
        like.partitioned_by = create.partitioned_by.clone();
    }
    like.ordered_by = create.ordered_by.clone();
    like.location = create.location.clone();
    like.properties = create.properties.clone();
    Ok(Some(like))
}

async fn create_table(ctx: &SessionContext, create: CreateTable) -> Result<StatementResult> {
    if let Some(like) = create_like(ctx, &create).await? {
        return Box::pin(create_table(ctx, like)).await;
    }
    let plan = ctx.state().create_logical_plan(&create.sql).await?;
    let LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(cmt)) = plan else {
        // e.g. CREATE TABLE … LIKE: not ours unless our clauses were given.
        if create.is_plain() {
            return run_datafusion(ctx, &create.sql).await;
        }
        return Err(Error::Invalid(
            "PARTITIONED BY / ORDERED BY / LOCATION / TBLPROPERTIES need CREATE TABLE with columns or AS SELECT".into(),
        ));
    };
    refuse_constraints(&cmt)?;
    if let Some(namespace) = crate::catalog::clients::ddl::namespace_of(ctx, &cmt.name) {
        return create_catalog_table(ctx, &namespace, &create, &cmt).await;
    }
    let Some(schema_provider) = warehouse_schema(ctx, &cmt.name) else {
        crate::catalog::namespace::refuse_unstored_table(ctx, &cmt.name)?;
        if create.is_plain() {
            return run_datafusion(ctx, &create.sql).await;
        }
        return Err(Error::Invalid(format!(
            "cannot create partitioned table {}: its schema is not a hidden-partitions warehouse",
            cmt.name
        )));
    };
    let Some(ws) = schema_provider.downcast_ref::<WarehouseSchema>() else {
        return Err(Error::Invalid(format!("{} is not in a warehouse schema", cmt.name)));
    };
    let name = cmt.name.table().to_string();
    let Definition {
        mode,
        is_ctas,
        schema,
        partition,
    } = Definition::of(&create, &cmt);
    if !is_ctas && schema.fields().is_empty() {
        return match (&create.location, create.partitioned_by.is_empty()) {
            (Some(location), true) => {
                ws.register_existing(&name, location, mode).await?;
                Ok(StatementResult::empty())
            }
            (Some(_), false) => Err(Error::Invalid(format!(
                "CREATE TABLE {name} LOCATION … without columns registers the table already there; PARTITIONED BY needs a column list"
            ))),
            (None, _) => Err(Error::Invalid(format!("CREATE TABLE {name} needs at least one column"))),
        };
    }
    // Validate fully before anything is written.
    let metadata = Table::initial_metadata(&schema, &partition)?;
    let properties = crate::table::properties::with_table_defaults(&ctx.state(), &create.properties)?;
    let metadata = crate::table::properties::set_properties(&metadata, &properties)?;
    let metadata = crate::table::sort_order::with_sort_order(&metadata, &create.ordered_by)?;
    let allow_non_empty = crate::config::options(&ctx.state()).allow_non_empty_location;
    let Some(plan) = ws
        .plan_create(&name, create.location.as_deref(), mode, allow_non_empty)
        .await?
    else {
        return Ok(StatementResult::empty());
    };
    // Files of our own creations that are not committing (a killed CTAS)
    // are not the table's to keep: remove them (see `table::creation`).
    if !plan.in_place() {
        crate::table::creation::remove_abandoned(&plan.location).await?;
    }
    let input = is_ctas.then(|| cmt.input.as_ref().clone());
    let mut attempts = 0;
    let created = loop {
        attempts += 1;
        let mut attempt = metadata.clone();
        attempt.table_uuid = uuid::Uuid::new_v4().to_string();
        attempt.file_prefix = Some(crate::spec::metadata::file_prefix_of(&attempt.table_uuid));
        match create_attempt(ctx, ws, &plan, attempt, input.as_ref()).await {
            // A concurrent CREATE removed this attempt's files: start over.
            Err(Error::WriteConflict { .. }) if attempts < CREATE_ATTEMPTS => continue,
            other => break other?,
        }
    };
    let (created, rows) = created;
    match created {
        Created::New { replaced } => {
            let location = plan.location.clone();
            ws.finish_create(plan, replaced).await?;
            // Best effort: leftovers' markers only cost a LIST later.
            let _ = crate::table::creation::forget_abandoned(&location).await;
        }
        // IF NOT EXISTS met a table created meanwhile: nothing written.
        Created::Existed => return Ok(StatementResult::empty()),
    }
    // As INSERT: the rows a CREATE … AS SELECT wrote.
    match is_ctas {
        true => StatementResult::counts(&[("count", rows)]),
        false => Ok(StatementResult::empty()),
    }
}

/// optimize's `strategy` and `sort_order` arguments: `binpack` (the
/// default), or `sort` by the table's order, by `sort_order => 'a DESC, b'`,
/// or by `sort_order => 'zorder(a, b)'`.
fn optimize_strategy(strategy: Option<&str>, sort_order: Option<&str>) -> Result<crate::table::optimize::Strategy> {
    use crate::table::optimize::Strategy;
    match (strategy.map(|s| s.trim().to_ascii_lowercase()).as_deref(), sort_order) {
        (None | Some("binpack"), None) => Ok(Strategy::BinPack),
        (None | Some("binpack"), Some(_)) => {
            Err(Error::Invalid("optimize: sort_order needs strategy => 'sort'".into()))
        }
        (Some("sort"), None) => Ok(Strategy::Sort(None)),
        (Some("sort"), Some(order)) => {
            let trimmed = order.trim();
            let lower = trimmed.to_ascii_lowercase();
            if lower.starts_with("zorder") {
                let inner = trimmed["zorder".len()..].trim();
                let Some(list) = inner.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
                    return Err(Error::Invalid(format!(
                        "optimize: sort_order {order:?} is not zorder(col, …)"
                    )));
                };
                let names = list
                    .split(',')
                    .map(|n| {
                        let n = n.trim();
                        match n.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                            Some(quoted) => quoted.to_string(),
                            None => n.to_ascii_lowercase(),
                        }
                    })
                    .collect::<Vec<_>>();
                if names.iter().any(String::is_empty) {
                    return Err(Error::Invalid(format!(
                        "optimize: sort_order {order:?} has an empty column name"
                    )));
                }
                return Ok(Strategy::ZOrder(names));
            }
            let tokens = Tokenizer::new(&GenericDialect {}, trimmed)
                .tokenize()
                .map_err(|e| Error::Invalid(format!("optimize: sort_order {order:?}: {e}")))?;
            let toks: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
            Ok(Strategy::Sort(Some(super::sort_list::parse_sort_list(&toks)?)))
        }
        (Some(other), _) => Err(Error::Invalid(format!(
            "optimize: unknown strategy {other:?}; expected 'binpack' or 'sort'"
        ))),
    }
}

/// `PRIMARY KEY` and `UNIQUE` are refused, not dropped: nothing here would
/// enforce them, and a reader trusting them would be misled.
fn refuse_constraints(cmt: &datafusion::logical_expr::CreateMemoryTable) -> Result<()> {
    use datafusion::common::Constraint;
    let fields = cmt.input.schema().fields();
    let Some(constraint) = cmt.constraints.iter().next() else {
        return Ok(());
    };
    let (what, columns) = match constraint {
        Constraint::PrimaryKey(c) => ("PRIMARY KEY", c),
        Constraint::Unique(c) => ("UNIQUE", c),
    };
    let names: Vec<&str> = columns
        .iter()
        .filter_map(|&i| fields.get(i).map(|f| f.name().as_str()))
        .collect();
    Err(Error::Invalid(format!(
        "CREATE TABLE {}: {what} ({}) is not supported: Iceberg tables do not enforce keys, and this engine would not check them; leave it out (declare the columns NOT NULL to refuse NULLs, and MERGE INTO to upsert by key)",
        cmt.name,
        names.join(", ")
    )))
}

/// How many times a CREATE … AS SELECT is attempted when a concurrent
/// CREATE takes its files for leftovers.
const CREATE_ATTEMPTS: usize = 5;

/// One attempt of a CREATE: commit the table with `metadata`; a CTAS first
/// writes its data (under a creation marker, so the files are provably its
/// own) and commits them with the table, so the table appears (or is
/// replaced) with its rows at once. Unless the outcome is unknown, a failed
/// attempt deletes what it wrote.
/// What a `CREATE TABLE` defines.
struct Definition {
    mode: CreateMode,
    /// `AS SELECT …`: the rows are `cmt.input`'s.
    is_ctas: bool,
    schema: Arc<ArrowSchema>,
    partition: Vec<PartitionFieldDef>,
}

impl Definition {
    fn of(create: &CreateTable, cmt: &datafusion::logical_expr::CreateMemoryTable) -> Self {
        let mode = if cmt.or_replace {
            CreateMode::OrReplace
        } else if cmt.if_not_exists {
            CreateMode::IfNotExists
        } else {
            CreateMode::Create
        };
        let is_ctas = !matches!(cmt.input.as_ref(), LogicalPlan::EmptyRelation(e) if !e.produce_one_row);
        let schema = cmt.input.schema().as_arrow().clone();
        // Declared columns: `TIMESTAMP` and `TIME` are Iceberg's microsecond types.
        let schema = Arc::new(match is_ctas {
            true => schema,
            false => with_microsecond_times(&schema, &unprecise_time_columns(&create.sql)),
        });
        let partition = create
            .partitioned_by
            .iter()
            .map(|p| PartitionFieldDef {
                source: p.source.clone(),
                transform: p.transform,
                name: p.name.clone(),
            })
            .collect();
        Self {
            mode,
            is_ctas,
            schema,
            partition,
        }
    }
}

/// `CREATE TABLE` in a namespace of a catalog (`--catalog`): a new Iceberg
/// table there, then (AS SELECT) its rows appended; a CTAS whose rows fail
/// drops the entry it made.
async fn create_catalog_table(
    ctx: &SessionContext,
    namespace: &crate::catalog::clients::provider::NamespaceSchema,
    create: &CreateTable,
    cmt: &datafusion::logical_expr::CreateMemoryTable,
) -> Result<StatementResult> {
    let name = cmt.name.table();
    let definition = Definition::of(create, cmt);
    if !definition.is_ctas && definition.schema.fields().is_empty() {
        return crate::invalid!("CREATE TABLE {name} needs at least one column");
    }
    let metadata = Table::initial_metadata(&definition.schema, &definition.partition)?;
    let properties = crate::table::properties::with_table_defaults(&ctx.state(), &create.properties)?;
    let metadata = crate::table::properties::set_properties(&metadata, &properties)?;
    let metadata = crate::table::sort_order::with_sort_order(&metadata, &create.ordered_by)?;
    let created = namespace
        .create_table(name, metadata, create.location.as_deref(), definition.mode)
        .await?;
    if !created || !definition.is_ctas {
        return Ok(StatementResult::empty());
    }
    let appended = async {
        let Some(table) = datafusion::catalog::SchemaProvider::table(namespace, name).await? else {
            return crate::invalid!(
                "table {}.{name} vanished right after it was created",
                namespace.namespace()
            );
        };
        let state = ctx.state();
        let input = state.create_physical_plan(&cmt.input).await?;
        let sink = table.insert_into(&state, input, InsertOp::Append).await?;
        let schema = sink.schema();
        let batches = datafusion::physical_plan::collect(sink, ctx.task_ctx()).await?;
        Ok::<_, Error>(StatementResult { schema, batches })
    };
    match appended.await {
        // The sink's `count`, as INSERT prints it.
        Ok(count) => Ok(count),
        Err(e) => {
            if !e.commit_may_have_happened() {
                let _ = namespace.drop_table(name, false).await;
            }
            Err(e)
        }
    }
}

async fn create_attempt(
    ctx: &SessionContext,
    ws: &WarehouseSchema,
    plan: &CreatePlan,
    metadata: crate::spec::TableMetadata,
    input: Option<&LogicalPlan>,
) -> Result<(Created, u64)> {
    let Some(input) = input else {
        return Ok((ws.commit_create(plan, &metadata).await?, 0));
    };
    let location = &plan.location.clone().with_file_prefix(metadata.file_prefix.clone());
    let creation = Creation::begin(location, &metadata).await?;
    let mut written = Written::default();
    let result = match write_ctas(ctx, location, &metadata, input, &mut written).await {
        Ok(md) => match creation.claim().await {
            Ok(()) => ws.commit_create(plan, &md).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    match &result {
        Ok(Created::New { .. }) => creation.finish().await,
        Err(e) if e.commit_may_have_happened() => {}
        _ => {
            written.delete(location).await;
            creation.finish().await;
        }
    }
    let rows = written.files.iter().map(|f| f.record_count).sum();
    Ok((result?, rows))
}

/// The files a CTAS wrote (to delete when it does not commit).
#[derive(Debug, Default)]
struct Written {
    files: Vec<crate::manifest::DataFile>,
    manifests: Vec<crate::spec::ManifestFile>,
}

impl Written {
    async fn delete(&self, location: &crate::store::TableLocation) {
        delete_files(location, &self.files).await;
        crate::manifest::delete_manifests(location, &self.manifests).await;
    }
}

/// Write the rows of `input` and their manifest; the table's first
/// metadata with them as its snapshot.
async fn write_ctas(
    ctx: &SessionContext,
    location: &crate::store::TableLocation,
    metadata: &crate::spec::TableMetadata,
    input: &LogicalPlan,
    written: &mut Written,
) -> Result<crate::spec::TableMetadata> {
    let spec = metadata.current_spec()?.clone();
    let stream = ctx.execute_logical_plan(input.clone()).await?.execute_stream().await?;
    let mut options = crate::table::writer::write_options(&ctx.task_ctx());
    options.layout = crate::table::writer::FileLayout::of(metadata)?;
    let (files, _) = write_stream(location, &spec, stream, options).await?;
    written.files = files.clone();
    let snapshot_id = new_snapshot_id();
    if !files.is_empty() {
        written.manifests = write_manifest(location, &spec, &files, snapshot_id).await?;
    }
    with_appended(metadata, snapshot_id, written.manifests.clone(), &files)
}

/// `ALTER TABLE t EXECUTE …`: the maintenance procedures, each returning
/// one row of counts.
async fn execute_procedure(
    ctx: &SessionContext,
    table: &str,
    procedure: &str,
    args: &[(String, String)],
    condition: Option<&str>,
) -> Result<StatementResult> {
    let provider = load_warehouse_table(ctx, table).await?;
    if provider.table().is_foreign() && procedure != "optimize" {
        // Another engine's files: never ours to delete (orphans, expired snapshots).
        return Err(Error::Invalid(format!(
            "ALTER TABLE {table} EXECUTE {procedure}: {table} is an Iceberg table of another engine, whose files this engine does not delete; run {procedure} with the engine that maintains it (optimize works)"
        )));
    }
    let arg = |name: &str, default: &str| -> Result<String> {
        if let Some((other, _)) = args.iter().find(|(n, _)| n != name) {
            return Err(Error::Invalid(format!(
                "{procedure} has no argument {other:?} (it takes {name})"
            )));
        }
        Ok(args
            .iter()
            .find(|(n, _)| n == name)
            .map_or(default.to_string(), |(_, v)| v.clone()))
    };
    if condition.is_some() && procedure != "optimize" {
        return Err(Error::Invalid(format!("{procedure} takes no WHERE condition")));
    }
    let counts: Vec<(&str, u64)> = match procedure {
        "optimize" => {
            let optimize_args = ["file_size_threshold", "strategy", "sort_order", "where"];
            if let Some((other, _)) = args.iter().find(|(n, _)| !optimize_args.contains(&n.as_str())) {
                return Err(Error::Invalid(format!(
                    "optimize has no argument {other:?} (it takes {})",
                    optimize_args.join(", ")
                )));
            }
            let given = |name: &str| args.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
            let threshold = crate::table::optimize::parse_size(given("file_size_threshold").unwrap_or("128MB"))?;
            let strategy = optimize_strategy(given("strategy"), given("sort_order"))?;
            let condition = match (condition, given("where")) {
                (Some(_), Some(_)) => {
                    return Err(Error::Invalid(
                        "optimize takes its condition once: either WHERE … or where => '…'".into(),
                    ));
                }
                (c, w) => c.or(w),
            };
            let filters = match condition {
                Some(c) => vec![condition_expr(ctx, table, c).await?],
                None => Vec::new(),
            };
            let statement = crate::table::optimize::Optimize {
                table: provider.table().clone(),
                open: crate::provider::HiddenPartitionsTable::open_source,
                state: ctx.state(),
                threshold,
                filters,
                strategy,
            };
            vec![("rewritten_data_files", crate::table::retry::run(&statement).await?)]
        }
        "expire_snapshots" => {
            let retention = crate::table::expire::parse_retention(&arg("retention_threshold", "7d")?)?;
            let e = crate::table::expire::expire_snapshots(provider.table(), retention).await?;
            vec![
                ("expired_snapshots", e.snapshots),
                ("deleted_manifest_files", e.manifests),
                ("deleted_data_files", e.data_files),
            ]
        }
        "remove_orphan_files" => {
            let retention = crate::table::expire::parse_retention(&arg("retention_threshold", "7d")?)?;
            let no_writers = crate::config::options(&ctx.state()).no_concurrent_writers;
            let n = crate::table::orphans::remove_orphans(provider.table(), provider.metadata(), retention, no_writers)
                .await?;
            vec![("deleted_files", n)]
        }
        other => {
            return Err(Error::Invalid(format!(
                "unknown procedure {other:?}; expected optimize, expire_snapshots or remove_orphan_files"
            )));
        }
    };
    StatementResult::counts(&counts)
}

/// A `WHERE` condition on `table` as DataFusion plans it (columns unqualified).
async fn condition_expr(ctx: &SessionContext, table: &str, condition: &str) -> Result<datafusion::logical_expr::Expr> {
    let plan = ctx
        .state()
        .create_logical_plan(&format!("SELECT * FROM {table} WHERE {condition}"))
        .await?;
    let mut found = None;
    plan.apply(|node| {
        if let LogicalPlan::Filter(f) = node {
            found = Some(f.predicate.clone());
            return Ok(datafusion::common::tree_node::TreeNodeRecursion::Stop);
        }
        Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
    })?;
    let predicate = found.ok_or_else(|| Error::Invalid(format!("cannot read the condition {condition:?}")))?;
    Ok(crate::expr::unqualified(predicate)?)
}

/// `"t@…"` (a snapshot read by time travel) and `"t$…"` (a metadata table)
/// name views of table `t`: DDL and ALTER on them is an error that says so.
fn refuse_derived_name(name: &str, verb: &str) -> Result<()> {
    let Some(i) = name.find(['@', '$']) else {
        return Ok(());
    };
    let (base, what) = match &name[i..i + 1] {
        "@" => (&name[..i], "a snapshot of"),
        _ => (&name[..i], "a metadata table of"),
    };
    Err(Error::Invalid(format!(
        "{name} is read-only ({what} table {base}): {verb} table {base} itself"
    )))
}

/// `ALTER TABLE | VIEW from RENAME TO to` (see `catalog::rename`): `to`
/// unqualified stays in `from`'s schema.
async fn rename(ctx: &SessionContext, from: &str, to: &str, view: bool, if_exists: bool) -> Result<StatementResult> {
    use crate::catalog::rename::RenameKind;
    let source = super::statement::table_reference(ctx, from);
    refuse_derived_name(source.table(), "rename")?;
    if let Some(namespace) = crate::catalog::clients::ddl::namespace_of(ctx, &source) {
        let target = match super::statement::table_reference(ctx, to) {
            TableReference::Bare { table } => TableReference::partial(namespace.namespace(), table.as_ref()),
            qualified => qualified,
        };
        refuse_derived_name(target.table(), "rename to")?;
        let Some(to_namespace) = crate::catalog::clients::ddl::namespace_of(ctx, &target) else {
            return crate::invalid!(
                "cannot rename {from} to {to}: the schema of {to} is not a namespace of the catalog"
            );
        };
        if view {
            return crate::invalid!("ALTER VIEW {from}: the catalog's tables are tables, not views");
        }
        if !namespace
            .rename_table(source.table(), &to_namespace, target.table())
            .await?
            && !if_exists
        {
            return Err(Error::TableNotFound(from.to_string()));
        }
        return Ok(StatementResult::empty());
    }
    let not_ours = || {
        Error::Invalid(format!(
            "cannot rename {from}: it is not in a hidden-partitions warehouse (DataFusion cannot rename tables)"
        ))
    };
    let schema = warehouse_schema(ctx, &source).ok_or_else(not_ours)?;
    let ws = schema.downcast_ref::<WarehouseSchema>().ok_or_else(not_ours)?;
    let target = super::statement::table_reference(ctx, to);
    refuse_derived_name(target.table(), "rename to")?;
    let target_schema = match &target {
        TableReference::Bare { .. } => Arc::clone(&schema),
        qualified => warehouse_schema(ctx, qualified).ok_or_else(|| {
            Error::Invalid(format!(
                "cannot rename {from} to {to}: the schema of {to} is not one of the warehouse's"
            ))
        })?,
    };
    let target_ws = target_schema.downcast_ref::<WarehouseSchema>().ok_or_else(not_ours)?;
    let label = match &target {
        TableReference::Bare { table } => table.to_string(),
        _ if std::ptr::eq(ws, target_ws) => target.table().to_string(),
        _ => format!(
            "{}.{}",
            target_ws.warehouse().namespace.as_deref().unwrap_or("public"),
            target.table()
        ),
    };
    let kind = if view { RenameKind::View } else { RenameKind::Table };
    let renamed = ws
        .rename(source.table(), target_ws, target.table(), &label, kind)
        .await?;
    if !renamed && !if_exists {
        return Err(Error::TableNotFound(from.to_string()));
    }
    Ok(StatementResult::empty())
}

/// `DROP TABLE`: warehouse tables through the catalog (see `catalog::ddl`),
/// anything else through DataFusion.
async fn drop_tables(
    ctx: &SessionContext,
    names: &[String],
    if_exists: bool,
    purge: bool,
    text: &str,
) -> Result<StatementResult> {
    let mut targets = Vec::new();
    let mut catalog_drops = Vec::new();
    for name in names {
        let reference = super::statement::table_reference(ctx, name);
        refuse_derived_name(reference.table(), "drop")?;
        if let Some(namespace) = crate::catalog::clients::ddl::namespace_of(ctx, &reference) {
            catalog_drops.push((namespace, reference));
            continue;
        }
        match warehouse_schema(ctx, &reference) {
            Some(schema) => targets.push((schema, reference)),
            None if purge => {
                return Err(Error::Invalid(format!(
                    "DROP TABLE … PURGE: {name} is not a hidden-partitions table"
                )));
            }
            None => return run_datafusion(ctx, text).await,
        }
    }
    for (namespace, reference) in catalog_drops {
        if !namespace.drop_table(reference.table(), purge).await? && !if_exists {
            return Err(Error::TableNotFound(reference.to_string()));
        }
    }
    let mut notes = Vec::new();
    for (schema, reference) in targets {
        let Some(ws) = schema.downcast_ref::<WarehouseSchema>() else {
            continue;
        };
        let dropped = ws.drop_table(reference.table(), purge).await?;
        if !dropped.found() && !if_exists {
            return Err(Error::TableNotFound(reference.to_string()));
        }
        notes.extend(dropped.note(reference.table()).map(|n| (reference.to_string(), n)));
    }
    if notes.is_empty() {
        return Ok(StatementResult::empty());
    }
    drop_notes(notes)
}

/// A DROP that did more or less than usual (a damaged table, a killed
/// CTAS's files) says so: one row per table, `table_name` and `note`.
fn drop_notes(notes: Vec<(String, String)>) -> Result<StatementResult> {
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("table_name", DataType::Utf8, false),
        Field::new("note", DataType::Utf8, false),
    ]));
    let (names, notes): (Vec<String>, Vec<String>) = notes.into_iter().unzip();
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(StringArray::from(names)), Arc::new(StringArray::from(notes))],
    )?;
    Ok(StatementResult {
        batches: vec![batch],
        schema,
    })
}
