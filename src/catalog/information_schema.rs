//! `information_schema` over warehouses: a damaged table costs only itself.
//!
//! DataFusion builds `information_schema.columns` and `.views` by asking
//! every schema for every table it lists, and one table whose metadata
//! cannot be read (see `WarehouseSchema::load_table`) fails the whole query.
//! Those calls cannot be told apart from a statement reading the table, so
//! this analyzer rule points the scans of those two tables at DataFusion's
//! own provider over a view of the session's catalogs in which a warehouse
//! schema answers through [`WarehouseSchema::table_for_listing`]: the
//! damaged table is left out. It is still listed by `.tables` and
//! `SHOW TABLES` (`WarehouseSchema::table_type`), and reading or describing
//! it names the table and the problem. DataFusion has no channel for
//! warnings beside a query's rows, so the skip itself is not reported.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::information_schema::{INFORMATION_SCHEMA, InformationSchemaProvider};
use datafusion::catalog::{CatalogProvider, CatalogProviderList, SchemaProvider, TableProvider};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::datasource::provider_as_source;
use datafusion::error::Result;
use datafusion::logical_expr::{LogicalPlan, TableType};
use datafusion::optimizer::AnalyzerRule;

use super::schema::WarehouseSchema;

/// The name the rule is registered under.
pub const LISTING_RULE_NAME: &str = "hidden_partitions_information_schema";

/// The `information_schema` tables that read every table's provider.
const READ_EVERY_TABLE: [&str; 2] = ["columns", "views"];

/// Scans of `information_schema.columns` / `.views` read the session's
/// catalogs through `Listing`.
#[derive(Debug)]
pub struct ListingSkipsDamaged {
    catalogs: Arc<dyn CatalogProviderList>,
}

impl ListingSkipsDamaged {
    /// The rule for a session whose catalogs are `catalogs`.
    pub fn new(catalogs: Arc<dyn CatalogProviderList>) -> Self {
        Self { catalogs }
    }

    fn rewrite(&self, node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::TableScan(scan) = &node else {
            return Ok(Transformed::no(node));
        };
        let table = scan.table_name.table().to_ascii_lowercase();
        let listing = scan
            .table_name
            .schema()
            .is_some_and(|s| s.eq_ignore_ascii_case(INFORMATION_SCHEMA))
            && READ_EVERY_TABLE.contains(&table.as_str());
        if !listing {
            return Ok(Transformed::no(node));
        }
        let provider = InformationSchemaProvider::new(Arc::new(Listing(Arc::clone(&self.catalogs))));
        // Builds the provider without any I/O: it only reads on execution.
        let Some(source) = futures::executor::block_on(provider.table(&table))? else {
            return Ok(Transformed::no(node));
        };
        let mut scan = scan.clone();
        scan.source = provider_as_source(source);
        Ok(Transformed::yes(LogicalPlan::TableScan(scan)))
    }
}

impl AnalyzerRule for ListingSkipsDamaged {
    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        if !config.catalog.information_schema {
            return Ok(plan);
        }
        Ok(plan.transform_up_with_subqueries(|node| self.rewrite(node))?.data)
    }

    fn name(&self) -> &str {
        LISTING_RULE_NAME
    }
}

/// The session's catalogs, their warehouse schemas answering for listings.
#[derive(Debug)]
struct Listing(Arc<dyn CatalogProviderList>);

impl CatalogProviderList for Listing {
    fn register_catalog(&self, name: String, catalog: Arc<dyn CatalogProvider>) -> Option<Arc<dyn CatalogProvider>> {
        self.0.register_catalog(name, catalog)
    }

    fn catalog_names(&self) -> Vec<String> {
        self.0.catalog_names()
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        let catalog = self.0.catalog(name)?;
        Some(Arc::new(ListingCatalog(catalog)))
    }
}

#[derive(Debug)]
struct ListingCatalog(Arc<dyn CatalogProvider>);

impl CatalogProvider for ListingCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.0.schema_names()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let schema = self.0.schema(name)?;
        if schema.downcast_ref::<WarehouseSchema>().is_some() {
            return Some(Arc::new(ListingSchema(schema)));
        }
        Some(schema)
    }
}

/// A warehouse schema, as listings read it.
#[derive(Debug)]
struct ListingSchema(Arc<dyn SchemaProvider>);

#[async_trait]
impl SchemaProvider for ListingSchema {
    fn owner_name(&self) -> Option<&str> {
        self.0.owner_name()
    }

    fn table_names(&self) -> Vec<String> {
        self.0.table_names()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        match self.0.downcast_ref::<WarehouseSchema>() {
            Some(ws) => ws.table_for_listing(name).await,
            None => self.0.table(name).await,
        }
    }

    async fn table_type(&self, name: &str) -> Result<Option<TableType>> {
        self.0.table_type(name).await
    }

    fn table_exist(&self, name: &str) -> bool {
        self.0.table_exist(name)
    }
}
