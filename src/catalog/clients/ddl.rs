//! DDL on a catalog's tables (`--catalog`): `CREATE SCHEMA` / `DROP SCHEMA`
//! are the catalog's namespaces, `CREATE TABLE` makes a new Iceberg table
//! (its first metadata file, then the catalog's entry), `DROP TABLE` is the
//! catalog's drop.
//!
//! ```text
//! CREATE SCHEMA sales;                                 -- namespace sales
//! CREATE TABLE sales.orders (id BIGINT, ts TIMESTAMP)
//!   PARTITIONED BY (day(ts));                          -- <warehouse>/sales/orders (SQL catalog)
//!                                                      -- or where the REST catalog puts it
//! DROP TABLE sales.orders;                             -- the entry; files stay (SQL catalog)
//! ```
//!
//! A SQL catalog keeps no record of which files it may delete, so `DROP
//! TABLE … PURGE` is refused there; a REST catalog is asked to purge.

use std::any::Any;
use std::sync::Arc;

use datafusion::catalog::{CatalogProvider, SchemaProvider};
use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;

use super::provider::{CatalogSchemas, NamespaceSchema, as_namespace};
use crate::catalog::ddl::CreateMode;
use crate::error::{Error, Result};
use crate::spec::TableMetadata;

/// The catalog client's schemas registered as catalog `name`, if it is one.
pub fn catalog_named(ctx: &SessionContext, name: &str) -> Option<Arc<CatalogSchemas>> {
    let catalog: Arc<dyn CatalogProvider> = ctx.catalog(name)?;
    (catalog as Arc<dyn Any + Send + Sync>)
        .downcast::<CatalogSchemas>()
        .ok()
}

/// The catalog client's namespace that `reference` (a table) is in, if it
/// is one.
pub fn namespace_of(ctx: &SessionContext, reference: &TableReference) -> Option<Arc<NamespaceSchema>> {
    let state = ctx.state();
    let options = &state.config_options().catalog;
    let resolved = reference
        .clone()
        .resolve(&options.default_catalog, &options.default_schema);
    let catalog = catalog_named(ctx, &resolved.catalog)?;
    let schema: Arc<dyn SchemaProvider> = catalog.schema(&resolved.schema)?;
    as_namespace(&schema)
}

impl CatalogSchemas {
    /// `CREATE SCHEMA [IF NOT EXISTS] name`.
    pub async fn create_schema(&self, name: &str, if_not_exists: bool) -> Result<()> {
        crate::catalog::warehouse::check_namespace_name(name)?;
        let created = self.client().create_namespace(name).await?;
        self.refresh().await?;
        match created || if_not_exists {
            true => Ok(()),
            false => crate::invalid!("schema {name} already exists in {}", self.client().describe()),
        }
    }

    /// `DROP SCHEMA [IF EXISTS] name [CASCADE]`: with CASCADE its tables go
    /// first (entries only, as `DROP TABLE`).
    pub async fn drop_schema(&self, name: &str, if_exists: bool, cascade: bool) -> Result<()> {
        self.refresh().await?;
        let Some(namespace) = self.namespace(name) else {
            return match if_exists {
                true => Ok(()),
                false => crate::invalid!("schema {name} does not exist in {}", self.client().describe()),
            };
        };
        let tables = self.client().tables(name).await?;
        if !tables.is_empty() && !cascade {
            return crate::invalid!(
                "schema {name} is not empty (it holds {}); drop its tables first, or DROP SCHEMA {name} CASCADE drops them with it",
                tables.join(", ")
            );
        }
        for table in &tables {
            namespace.drop_table(table, false).await?;
        }
        let dropped = self.client().drop_namespace(name).await?;
        self.refresh().await?;
        match dropped || if_exists {
            true => Ok(()),
            false => crate::invalid!("schema {name} does not exist in {}", self.client().describe()),
        }
    }
}

impl NamespaceSchema {
    /// `CREATE TABLE namespace.name …` with first metadata `metadata`:
    /// `false` when it existed and `mode` is `IfNotExists`.
    pub async fn create_table(
        &self,
        name: &str,
        mut metadata: TableMetadata,
        location: Option<&str>,
        mode: CreateMode,
    ) -> Result<bool> {
        let qualified = format!("{}.{name}", self.namespace());
        // The name becomes a directory under the namespace's (`a/data/x`
        // would be inside table `a`), and `$` / `@` are our metadata tables'
        // and time travel's: the same names as in the warehouse.
        crate::catalog::warehouse::check_table_name(name)?;
        if mode == CreateMode::OrReplace {
            return crate::invalid!(
                "CREATE OR REPLACE TABLE {qualified}: not supported for the tables of {}; DROP TABLE, then CREATE TABLE",
                self.client().describe()
            );
        }
        if self.client().table(self.namespace(), name).await?.is_some() {
            return match mode {
                CreateMode::IfNotExists => Ok(false),
                _ => Err(Error::TableExists(format!("table {qualified} already exists"))),
            };
        }
        let place = match (location, self.client().places_tables()) {
            (Some(url), _) => Some(url.trim_end_matches('/').to_string()),
            (None, true) => None,
            (None, false) => Some(format!(
                "{}/{}/{name}",
                self.stores().warehouse.trim_end_matches('/'),
                self.namespace().replace('.', "/")
            )),
        };
        let table = place.as_deref().map(|url| self.stores().location(url)).transpose()?;
        if let Some(table) = &table {
            if let Some(first) = crate::table::creation::first_foreign_file(table).await? {
                return crate::invalid!(
                    "CREATE TABLE {qualified}: {} is not empty (it holds {first}); a catalog's new table needs a location of its own",
                    table.url()
                );
            }
            metadata.location = Some(table.iceberg_root());
        }
        let json = match &table {
            Some(_) => crate::iceberg::json::iceberg_only_json(&metadata)?,
            // The catalog writes the file: it needs the schema, the spec
            // and the properties.
            None => {
                let spec = metadata.current_spec()?;
                serde_json::json!({
                    "schemas": [crate::iceberg::json::schema_json(spec)?],
                    "current-schema-id": spec.schema_id(),
                    "partition-specs": [crate::iceberg::json::partition_spec_json(spec)?],
                    "default-spec-id": spec.partition_spec_id(),
                    "properties": metadata.properties,
                })
            }
        };
        self.client()
            .create_table(self.namespace(), name, table.as_ref(), &json)
            .await?;
        self.note(name, true);
        Ok(true)
    }

    /// `ALTER TABLE namespace.name RENAME TO [to_namespace.]to`: `false`
    /// when there was no such table.
    pub async fn rename_table(&self, name: &str, to: &NamespaceSchema, to_name: &str) -> Result<bool> {
        if !Arc::ptr_eq(self.client(), to.client()) {
            return crate::invalid!(
                "cannot rename {}.{name} to {}.{to_name}: the tables are in different catalogs",
                self.namespace(),
                to.namespace()
            );
        }
        crate::catalog::warehouse::check_table_name(to_name)?;
        let renamed = self
            .client()
            .rename_table(self.namespace(), name, to.namespace(), to_name)
            .await?;
        if renamed {
            self.note(name, false);
            to.note(to_name, true);
        }
        Ok(renamed)
    }

    /// `DROP TABLE namespace.name [PURGE]`: `false` when there was none.
    pub async fn drop_table(&self, name: &str, purge: bool) -> Result<bool> {
        if purge && !self.client().places_tables() {
            return crate::invalid!(
                "DROP TABLE {}.{name} PURGE: {} does not say which files are the table's to delete; DROP TABLE {}.{name} removes it from the catalog and keeps its files",
                self.namespace(),
                self.client().describe(),
                self.namespace()
            );
        }
        let dropped = self.client().drop_table(self.namespace(), name, purge).await?;
        self.note(name, false);
        Ok(dropped)
    }
}
