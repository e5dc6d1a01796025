//! Namespaces: `CREATE SCHEMA s` in a warehouse session makes a schema of
//! the warehouse, stored with it, so `s.t` is a table like any other and a
//! new process finds both again.
//!
//! | path under the warehouse    | meaning                                        |
//! |-----------------------------|------------------------------------------------|
//! | `<s>.db/.namespace`         | schema `s` exists (written put-if-absent)      |
//! | `<s>.db/<t>/metadata/…`     | table `s.t` (a warehouse of its own, see `catalog::warehouse`) |
//!
//! Namespaces are found when the warehouse is registered (one LIST of the
//! root, one HEAD per `<s>.db` directory); each becomes a [`WarehouseSchema`]
//! beside the warehouse's own schema in the same catalog.
//!
//! | statement                       | does                                                     |
//! |---------------------------------|----------------------------------------------------------|
//! | `CREATE SCHEMA [IF NOT EXISTS] s` | writes the marker, registers the schema                |
//! | `DROP SCHEMA [IF EXISTS] s`     | refused while `s` has tables (as in DataFusion and Spark) |
//! | `DROP SCHEMA s CASCADE`         | `DROP TABLE` of each table, then the marker               |
//!
//! A table is never created where it would not be stored: in a session
//! whose default catalog is a warehouse's, `CREATE TABLE` into a schema
//! that is not the warehouse's (a memory schema) is refused.

use std::sync::Arc;

use datafusion::catalog::{CatalogProvider, SchemaProvider};
use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;

use super::schema::WarehouseSchema;
use super::warehouse::check_namespace_name;
use crate::error::{Error, Result};

impl WarehouseSchema {
    /// The schema of namespace `name` of this warehouse (not yet registered).
    fn namespace_schema(&self, name: &str) -> Arc<WarehouseSchema> {
        let schema = WarehouseSchema::new(self.warehouse().namespace(name), Arc::clone(self.runtime()));
        if let Some(session) = self.session_weak() {
            schema.attach_session(session);
        }
        Arc::new(schema)
    }

    /// Register every namespace of this warehouse (found by the last
    /// `refresh`) as a schema of `catalog`.
    pub async fn register_namespaces(&self, catalog: &dyn CatalogProvider) -> Result<()> {
        for name in self.namespace_dirs() {
            if !self.warehouse().namespace_exists(&name).await? {
                continue;
            }
            if catalog.schema(&name).is_some() {
                return Err(Error::Invalid(format!(
                    "the warehouse {} has a schema {name}, and the catalog already has a schema of that name; register the warehouse under another schema name",
                    self.warehouse().place().url()
                )));
            }
            let schema = self.namespace_schema(&name);
            schema.refresh().await?;
            catalog.register_schema(&name, schema as _)?;
        }
        Ok(())
    }
}

/// A table or schema name as the session's SQL planner resolves it
/// (`datafusion.sql_parser.enable_ident_normalization`).
pub fn table_reference(ctx: &SessionContext, name: &str) -> TableReference {
    let normalize = ctx.state().config_options().sql_parser.enable_ident_normalization;
    TableReference::parse_str_normalized(name, !normalize)
}

/// The catalog a schema name (`s` or `c.s`, as SQL) is in, and the name.
fn schema_reference(ctx: &SessionContext, name: &str) -> Option<(String, String)> {
    let default_catalog = ctx.state().config_options().catalog.default_catalog.clone();
    match table_reference(ctx, name) {
        TableReference::Bare { table } => Some((default_catalog, table.to_string())),
        TableReference::Partial { schema, table } => Some((schema.to_string(), table.to_string())),
        TableReference::Full { .. } => None,
    }
}

/// The warehouse (not a namespace of it) whose schema is in `catalog`.
fn warehouse_of(catalog: &dyn CatalogProvider) -> Option<Arc<dyn SchemaProvider>> {
    catalog.schema_names().into_iter().find_map(|s| {
        let schema = catalog.schema(&s)?;
        let ws = schema.downcast_ref::<WarehouseSchema>()?;
        ws.warehouse().namespace.is_none().then_some(schema)
    })
}

/// `CREATE SCHEMA [IF NOT EXISTS] name`: `false` when `name`'s catalog has
/// no warehouse (then it is plain DataFusion's).
pub async fn create_schema(ctx: &SessionContext, name: &str, if_not_exists: bool) -> Result<bool> {
    let Some((catalog_name, schema_name)) = schema_reference(ctx, name) else {
        return Ok(false);
    };
    if let Some(client) = super::clients::ddl::catalog_named(ctx, &catalog_name) {
        client.create_schema(&schema_name, if_not_exists).await?;
        return Ok(true);
    }
    let Some(catalog) = ctx.catalog(&catalog_name) else {
        return Ok(false);
    };
    let Some(root) = warehouse_of(catalog.as_ref()) else {
        return Ok(false);
    };
    let Some(root) = root.downcast_ref::<WarehouseSchema>() else {
        return Ok(false);
    };
    if catalog.schema(&schema_name).is_some() {
        return match if_not_exists {
            true => Ok(true),
            false => Err(Error::Invalid(format!("schema {schema_name} already exists"))),
        };
    }
    check_namespace_name(&schema_name)?;
    let created = root.warehouse().create_namespace(&schema_name).await?;
    let schema = root.namespace_schema(&schema_name);
    schema.refresh().await?;
    catalog.register_schema(&schema_name, schema as _)?;
    if !created && !if_not_exists {
        return Err(Error::Invalid(format!(
            "schema {schema_name} already exists (another session created it)"
        )));
    }
    Ok(true)
}

/// `DROP SCHEMA [IF EXISTS] name [CASCADE]`: `false` when `name` is not a
/// schema of a warehouse nor would be one (then it is plain DataFusion's).
pub async fn drop_schema(ctx: &SessionContext, name: &str, if_exists: bool, cascade: bool) -> Result<bool> {
    let Some((catalog_name, schema_name)) = schema_reference(ctx, name) else {
        return Ok(false);
    };
    if let Some(client) = super::clients::ddl::catalog_named(ctx, &catalog_name) {
        client.drop_schema(&schema_name, if_exists, cascade).await?;
        return Ok(true);
    }
    let Some(catalog) = ctx.catalog(&catalog_name) else {
        return Ok(false);
    };
    let Some(schema) = catalog.schema(&schema_name) else {
        if warehouse_of(catalog.as_ref()).is_none() {
            return Ok(false);
        }
        return match if_exists {
            true => Ok(true),
            false => Err(Error::Invalid(format!("schema {schema_name} does not exist"))),
        };
    };
    let Some(ws) = schema.downcast_ref::<WarehouseSchema>() else {
        return Ok(false);
    };
    let Some(namespace) = ws.warehouse().namespace.clone() else {
        return Err(Error::Invalid(format!(
            "schema {schema_name} is the warehouse itself ({}); it cannot be dropped",
            ws.warehouse().place().url()
        )));
    };
    ws.refresh().await?;
    // Listed names include tables dropped earlier (their tombstones stay).
    let mut tables = Vec::new();
    for table in ws.table_names() {
        if !matches!(ws.table_type(&table).await, Ok(None)) {
            tables.push(table);
        }
    }
    if !tables.is_empty() && !cascade {
        return Err(Error::Invalid(format!(
            "schema {schema_name} is not empty (it holds {}); drop its tables first, or DROP SCHEMA {schema_name} CASCADE drops them with it",
            tables.join(", ")
        )));
    }
    for table in &tables {
        if !ws.drop_stored_view(table).await? {
            ws.drop_table(table, false).await?;
        }
    }
    let Some(parent) = warehouse_of(catalog.as_ref()) else {
        return Err(Error::Invalid(format!("schema {schema_name} has lost its warehouse")));
    };
    let Some(parent) = parent.downcast_ref::<WarehouseSchema>() else {
        return Ok(false);
    };
    parent.warehouse().drop_namespace(&namespace).await?;
    catalog.deregister_schema(&schema_name, true)?;
    Ok(true)
}

/// Read every listing of the session again: the tables, views and schemas
/// another process created or dropped since this one last looked. `SHOW
/// TABLES`, `information_schema` and the prompt's `\d` call it, so a
/// long-running prompt lists what `SELECT` finds.
pub async fn refresh_listings(ctx: &SessionContext) -> Result<()> {
    for catalog_name in ctx.catalog_names() {
        let Some(catalog) = ctx.catalog(&catalog_name) else {
            continue;
        };
        if let Some(schemas) = catalog.downcast_ref::<super::clients::provider::CatalogSchemas>() {
            schemas.refresh().await?;
            continue;
        }
        for schema_name in catalog.schema_names() {
            let Some(schema) = catalog.schema(&schema_name) else {
                continue;
            };
            let Some(ws) = schema.downcast_ref::<WarehouseSchema>() else {
                continue;
            };
            ws.refresh().await?;
            if ws.warehouse().namespace.is_some() {
                continue;
            }
            for name in ws.namespace_dirs() {
                if catalog.schema(&name).is_none() && ws.warehouse().namespace_exists(&name).await? {
                    let schema = ws.namespace_schema(&name);
                    schema.refresh().await?;
                    catalog.register_schema(&name, schema as _)?;
                }
            }
        }
    }
    Ok(())
}

/// Refuse `CREATE TABLE name` where the table would not be stored: a
/// schema that is not a warehouse's, in a session whose default catalog
/// holds a warehouse.
pub fn refuse_unstored_table(ctx: &SessionContext, name: &TableReference) -> Result<()> {
    let state = ctx.state();
    let options = &state.config_options().catalog;
    let in_warehouse_session = ctx
        .catalog(&options.default_catalog)
        .is_some_and(|c| warehouse_of(c.as_ref()).is_some());
    if !in_warehouse_session {
        return Ok(());
    }
    let resolved = name.clone().resolve(&options.default_catalog, &options.default_schema);
    let exists = ctx
        .catalog(&resolved.catalog)
        .and_then(|c| c.schema(&resolved.schema))
        .is_some();
    let why = match exists {
        true => format!(
            "schema {}.{} is not a schema of the warehouse, so the table would be lost when the session ends",
            resolved.catalog, resolved.schema
        ),
        false => format!("schema {}.{} does not exist", resolved.catalog, resolved.schema),
    };
    Err(Error::Invalid(format!(
        "cannot create table {name}: {why}; create it in the warehouse's schema, or in a schema made by CREATE SCHEMA (stored in the warehouse)"
    )))
}
