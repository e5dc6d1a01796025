//! Running a script: our statements here, everything else through DataFusion,
//! strictly in order (a statement sees the effects of the ones before it).

use std::sync::Arc;

use datafusion::arrow::array::{Int32Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::datasource::provider_as_source;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{DdlStatement, LogicalPlan, LogicalPlanBuilder};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;

use super::statement::{CreateTable, Statement, parse_statements};
use crate::catalog::WarehouseSchema;
use crate::catalog::warehouse::check_table_name;
use crate::error::{Error, Result};
use crate::provider::HiddenPartitionsScanExec;
use crate::provider::planning::SpecFileCount;
use crate::table::{PartitionChange, PartitionFieldDef, Table};

/// The result of one statement: its schema and all its rows.
#[derive(Debug, Clone)]
pub struct StatementResult {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl StatementResult {
    fn empty() -> Self {
        Self {
            schema: Arc::new(ArrowSchema::empty()),
            batches: Vec::new(),
        }
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

/// Run one parsed statement.
pub async fn execute_statement(ctx: &SessionContext, statement: Statement) -> Result<StatementResult> {
    match statement {
        Statement::Other(text) => run_datafusion(ctx, &text).await,
        Statement::CreateTable(create) => create_table(ctx, create).await,
        Statement::ExplainFiles { query, analyze } => explain_files(ctx, &query, analyze).await,
        Statement::AlterPartition { table, change } => alter_partition(ctx, &table, change).await,
        Statement::AddColumn { table, definition } => add_column(ctx, &table, &definition).await,
        Statement::RenameColumn { table, from, to } => {
            load_warehouse_table(ctx, &table)
                .await?
                .table()
                .rename_column(&from, &to)
                .await?;
            Ok(StatementResult::empty())
        }
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

async fn run_datafusion(ctx: &SessionContext, sql: &str) -> Result<StatementResult> {
    let df = ctx.sql(sql).await?;
    let schema = Arc::new(df.schema().as_arrow().clone());
    let batches = df.collect().await?;
    Ok(StatementResult { schema, batches })
}

/// Plan `query` and report, per hidden-partitions scan and table spec, how
/// many data files it reads out of how many. With `analyze` the query runs
/// first and the count is of the files actually opened (after run-time
/// pruning), per scan.
async fn explain_files(ctx: &SessionContext, query: &str, analyze: bool) -> Result<StatementResult> {
    let plan = ctx.sql(query).await?.create_physical_plan().await?;
    if analyze {
        datafusion::physical_plan::collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    }
    let mut scans = Vec::new();
    collect_scans(&plan, &mut scans);
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("table", DataType::Utf8, false),
        Field::new("spec_id", DataType::Int32, true),
        Field::new("files", DataType::Utf8, false),
    ]));
    let mut tables = Vec::new();
    let mut specs = Vec::new();
    let mut files = Vec::new();
    for (table, counts, opened) in scans {
        if let Some(opened) = opened {
            let total: usize = counts.iter().map(|c| c.total).sum();
            tables.push(table);
            specs.push(None);
            files.push(format!("{opened}/{total}"));
            continue;
        }
        for c in counts.iter().filter(|c| c.total > 0) {
            tables.push(table.clone());
            specs.push(Some(c.spec_id));
            files.push(format!("{}/{}", c.selected, c.total));
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

type ScanReport = (String, Vec<SpecFileCount>, Option<usize>);

fn collect_scans(plan: &Arc<dyn ExecutionPlan>, out: &mut Vec<ScanReport>) {
    if let Some(scan) = plan.downcast_ref::<HiddenPartitionsScanExec>() {
        out.push((
            scan.table().to_string(),
            scan.file_counts().to_vec(),
            scan.files_opened(),
        ));
    }
    for child in plan.children() {
        collect_scans(child, out);
    }
}

/// `ALTER TABLE t ADD COLUMN …`: the column type is planned by DataFusion
/// (so every SQL type and `NOT NULL` mean the same as in CREATE TABLE).
async fn add_column(ctx: &SessionContext, table: &str, definition: &str) -> Result<StatementResult> {
    let field = column_definition(ctx, definition).await?;
    let provider = load_warehouse_table(ctx, table).await?;
    provider.table().add_column(&field).await?;
    Ok(StatementResult::empty())
}

/// A column definition (`name type [NOT NULL]`) as DataFusion plans it.
async fn column_definition(ctx: &SessionContext, definition: &str) -> Result<datafusion::arrow::datatypes::Field> {
    let plan = ctx
        .state()
        .create_logical_plan(&format!("CREATE TABLE __hp_column ({definition})"))
        .await?;
    let LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(cmt)) = plan else {
        return Err(Error::Invalid(format!("cannot read column definition {definition:?}")));
    };
    let schema = cmt.input.schema().as_arrow().clone();
    match schema.fields().iter().collect::<Vec<_>>()[..] {
        [field] => Ok(field.as_ref().clone()),
        _ => Err(Error::Invalid("expected exactly one column".into())),
    }
}

async fn load_warehouse_table(ctx: &SessionContext, table: &str) -> Result<crate::provider::HiddenPartitionsTable> {
    let reference = TableReference::parse_str(table);
    let Some(schema) = warehouse_schema(ctx, &reference) else {
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
    let reference = TableReference::parse_str(table);
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

/// The warehouse schema a table reference resolves to, if any.
fn warehouse_schema(
    ctx: &SessionContext,
    name: &TableReference,
) -> Option<Arc<dyn datafusion::catalog::SchemaProvider>> {
    let state = ctx.state();
    let resolved = name.clone().resolve(
        &state.config_options().catalog.default_catalog,
        &state.config_options().catalog.default_schema,
    );
    let schema = ctx.catalog(&resolved.catalog)?.schema(&resolved.schema)?;
    schema.downcast_ref::<WarehouseSchema>().is_some().then_some(schema)
}

async fn create_table(ctx: &SessionContext, create: CreateTable) -> Result<StatementResult> {
    let plan = ctx.state().create_logical_plan(&create.sql).await?;
    let LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(cmt)) = plan else {
        // e.g. CREATE TABLE … LIKE: not ours unless our clauses were given.
        if create.partitioned_by.is_empty() && create.location.is_none() {
            return run_datafusion(ctx, &create.sql).await;
        }
        return Err(Error::Invalid(
            "PARTITIONED BY / LOCATION need CREATE TABLE with columns or AS SELECT".into(),
        ));
    };
    let Some(schema_provider) = warehouse_schema(ctx, &cmt.name) else {
        if create.partitioned_by.is_empty() && create.location.is_none() {
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
    check_table_name(&name)?;
    if ws.has_other(&name) || ws.load_table(&name).await?.is_some() {
        if cmt.if_not_exists {
            return Ok(StatementResult::empty());
        }
        if !cmt.or_replace {
            return Err(Error::TableExists(format!("table {name} already exists")));
        }
        if ws.has_other(&name) {
            schema_provider.deregister_table(&name)?;
        } else {
            ws.drop_table(&name).await?;
        }
    }
    let schema = Arc::new(cmt.input.schema().as_arrow().clone());
    let partition: Vec<PartitionFieldDef> = create
        .partitioned_by
        .iter()
        .map(|p| PartitionFieldDef {
            source: p.source.clone(),
            transform: p.transform,
            name: p.name.clone(),
        })
        .collect();
    // Validate fully before anything is written.
    Table::initial_metadata(&schema, &partition)?;
    let location = match &create.location {
        Some(loc) => {
            let location = ws.resolve_location(loc)?;
            ws.warehouse().link(&name, &location.url()).await?;
            location
        }
        None => ws.warehouse().table_location(&name),
    };
    let table = Table::new(&name, location);
    if let Err(e) = table.create(&schema, &partition).await {
        if create.location.is_some() {
            ws.warehouse().unlink(&name).await?;
        }
        return Err(e);
    }
    ws.add_name(&name);
    let is_ctas = !matches!(cmt.input.as_ref(), LogicalPlan::EmptyRelation(e) if !e.produce_one_row);
    if is_ctas {
        let Some(provider) = ws.load_table(&name).await? else {
            return Err(Error::TableNotFound(name));
        };
        let provider: Arc<dyn TableProvider> = Arc::new(provider);
        let insert = LogicalPlanBuilder::insert_into(
            cmt.input.as_ref().clone(),
            cmt.name.clone(),
            provider_as_source(provider),
            InsertOp::Append,
        )?
        .build()?;
        ctx.execute_logical_plan(insert).await?.collect().await?;
    }
    Ok(StatementResult::empty())
}
