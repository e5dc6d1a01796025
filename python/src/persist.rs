//! The warehouse as datafusion-python sees it: DDL that DataFusion runs
//! itself lands in the warehouse.
//!
//! datafusion-python plans `CREATE TABLE hp.public.t (…)` and
//! `CREATE TABLE … AS SELECT` with its own DataFusion, which builds an
//! in-memory table and registers it in our schema. Kept as it is, the table
//! would live in that one session and never reach the warehouse. Here such a
//! table becomes a warehouse table: created with its columns (unpartitioned,
//! as our `CREATE TABLE` without `PARTITIONED BY`), its rows committed with
//! it, the way our own CTAS does. Anything else registered in a warehouse
//! schema — a view, a temporary table — cannot be stored from a provider and
//! is refused, saying how to create it instead.
//!
//! | datafusion-python runs                      | the warehouse gets                 |
//! |---------------------------------------------|------------------------------------|
//! | `CREATE TABLE hp.public.t (a INT)`          | table `t`, no rows                 |
//! | `CREATE TABLE hp.sales.t AS SELECT …`       | table `sales.t` with the rows      |
//! | `CREATE VIEW hp.public.v AS …`              | refused: use `Session.sql`         |

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::TableType;
use datafusion::prelude::SessionContext;
use hidden_partitions::execute_sql;
use tokio::runtime::Handle;

/// `inner` (the session's default catalog) with schemas that store tables.
pub struct PersistingCatalog {
    inner: Arc<dyn CatalogProvider>,
    ctx: SessionContext,
    runtime: Handle,
}

impl PersistingCatalog {
    pub fn new(inner: Arc<dyn CatalogProvider>, ctx: SessionContext, runtime: Handle) -> Self {
        Self { inner, ctx, runtime }
    }
}

impl fmt::Debug for PersistingCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PersistingCatalog").field("inner", &self.inner).finish()
    }
}

impl fmt::Debug for PersistingSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PersistingSchema").field("name", &self.name).finish()
    }
}

impl CatalogProvider for PersistingCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.inner.schema_names()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let inner = self.inner.schema(name)?;
        Some(Arc::new(PersistingSchema {
            name: name.to_string(),
            inner,
            ctx: self.ctx.clone(),
            runtime: self.runtime.clone(),
        }))
    }

    fn register_schema(&self, name: &str, schema: Arc<dyn SchemaProvider>) -> Result<Option<Arc<dyn SchemaProvider>>> {
        self.inner.register_schema(name, schema)
    }

    fn deregister_schema(&self, name: &str, cascade: bool) -> Result<Option<Arc<dyn SchemaProvider>>> {
        self.inner.deregister_schema(name, cascade)
    }
}

/// One namespace of the warehouse, as [`PersistingCatalog`] hands it out.
struct PersistingSchema {
    name: String,
    inner: Arc<dyn SchemaProvider>,
    ctx: SessionContext,
    runtime: Handle,
}

#[async_trait]
impl SchemaProvider for PersistingSchema {
    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.inner.table(name).await
    }

    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name)
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.inner.deregister_table(name)
    }

    /// DataFusion's `CREATE TABLE` (and CTAS) hands the new table over
    /// here: it becomes a warehouse table with the same columns and rows.
    fn register_table(&self, name: String, table: Arc<dyn TableProvider>) -> Result<Option<Arc<dyn TableProvider>>> {
        if table.table_type() != TableType::Base {
            return Err(DataFusionError::Plan(format!(
                "{}.{name} is a {:?} table, which a warehouse cannot store from datafusion-python; create views with hidden_partitions.Session(...).sql(\"CREATE VIEW …\")",
                self.name,
                table.table_type()
            )));
        }
        let (ctx, schema, runtime) = (self.ctx.clone(), self.name.clone(), self.runtime.clone());
        // Called synchronously from the other side's planner: the warehouse
        // work runs on our runtime, on a thread of its own.
        std::thread::scope(|scope| {
            scope
                .spawn(move || runtime.block_on(store(ctx, schema, name, table)))
                .join()
                .map_err(|_| DataFusionError::Internal("storing the new table panicked".into()))?
        })?;
        Ok(None)
    }
}

/// `CREATE TABLE schema.name AS SELECT * FROM <table's rows>` in our session.
async fn store(ctx: SessionContext, schema: String, name: String, table: Arc<dyn TableProvider>) -> Result<()> {
    // The rows come from the other side's table; a plain session reads them
    // (the other side does not know our session's options).
    let plain = SessionContext::new();
    let plan = table.scan(&plain.state(), None, &[], None).await?;
    let batches = datafusion::physical_plan::collect(plan, plain.task_ctx()).await?;
    let rows = MemTable::try_new(table.schema(), vec![batches])?;
    static STAGED: AtomicU64 = AtomicU64::new(0);
    let staged = format!("__hp_new_table_{}", STAGED.fetch_add(1, Ordering::Relaxed));
    ctx.register_table(staged.as_str(), Arc::new(rows))?;
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let sql = format!(
        "CREATE TABLE {}.{} AS SELECT * FROM {}",
        quote(&schema),
        quote(&name),
        quote(&staged)
    );
    let created = execute_sql(&ctx, &sql).await;
    ctx.deregister_table(staged.as_str())?;
    created.map(|_| ()).map_err(|e| DataFusionError::External(Box::new(e)))
}
