//! Metadata tables refuse writes.
//!
//! `"t$files"` and its siblings are built in memory on every lookup; a
//! `MemTable` would accept `INSERT` and `DELETE`, report a count and keep
//! nothing. [`ReadOnly`] wraps one so that every write names the table it
//! should have gone to.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DFSchemaRef, plan_err};
use datafusion::datasource::TableType;
use datafusion::error::Result;
use datafusion::logical_expr::dml::{InsertOp, MergeIntoClause};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;

/// A metadata table `name` of table `owner`, readable only.
#[derive(Debug)]
pub struct ReadOnly {
    inner: Arc<dyn TableProvider>,
    name: String,
    owner: String,
}

impl ReadOnly {
    pub fn new(inner: Arc<dyn TableProvider>, name: impl Into<String>, owner: impl Into<String>) -> Self {
        Self {
            inner,
            name: name.into(),
            owner: owner.into(),
        }
    }

    fn refuse<T>(&self, what: &str) -> Result<T> {
        plan_err!(
            "{what} on {}: it is a metadata table of {} and cannot be written; write to table {} itself",
            self.name,
            self.owner,
            self.owner
        )
    }
}

#[async_trait]
impl TableProvider for ReadOnly {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
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
        self.inner.scan(state, projection, filters, limit).await
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        _input: Arc<dyn ExecutionPlan>,
        _op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.refuse("INSERT")
    }

    async fn delete_from(&self, _state: &dyn Session, _filters: Vec<Expr>) -> Result<Arc<dyn ExecutionPlan>> {
        self.refuse("DELETE")
    }

    async fn update(
        &self,
        _state: &dyn Session,
        _assignments: Vec<(String, Expr)>,
        _filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.refuse("UPDATE")
    }

    async fn truncate(&self, _state: &dyn Session) -> Result<Arc<dyn ExecutionPlan>> {
        self.refuse("TRUNCATE")
    }

    async fn merge_into(
        &self,
        _state: &dyn Session,
        _source: Arc<dyn ExecutionPlan>,
        _merge_schema: DFSchemaRef,
        _on: Expr,
        _clauses: Vec<MergeIntoClause>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.refuse("MERGE INTO")
    }
}
