//! This engine as a client of Iceberg catalogs (`--catalog URL`): the
//! catalog's namespaces become the session's schemas, its tables Iceberg
//! tables read and written through `formats::iceberg`, each commit moving
//! the catalog's pointer to the table's metadata (`MetadataPointer`).
//!
//! | URL                                   | catalog                                     |
//! |---------------------------------------|---------------------------------------------|
//! | `sqlite:PATH[?catalog=NAME]`          | pyiceberg's `SqlCatalog` / Java's `JdbcCatalog` layout in SQLite (`sql.rs`) |
//! | `postgresql://user@host[:port]/db[?catalog=NAME]` | the same in PostgreSQL                |
//! | `http(s)://host:port[/prefix]`        | an Iceberg REST catalog (`rest.rs`)          |
//!
//! `provider.rs` is the DataFusion side: a `CatalogProvider` of
//! namespaces, each a `SchemaProvider` of the catalog's tables.

pub mod ddl;
pub mod provider;
pub mod rest;
pub mod sql;

use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::formats::iceberg::pointer::MetadataPointer;
use crate::store::TableLocation;

/// A catalog of Iceberg tables: namespaces, and each table's current
/// metadata file.
#[async_trait]
pub trait IcebergCatalog: Debug + Send + Sync {
    /// Where it is, for messages (never with a credential).
    fn describe(&self) -> String;
    async fn namespaces(&self) -> Result<Vec<String>>;
    /// `false` when it exists already.
    async fn create_namespace(&self, namespace: &str) -> Result<bool>;
    /// `false` when there was none; refused while it holds tables.
    async fn drop_namespace(&self, namespace: &str) -> Result<bool>;
    async fn tables(&self, namespace: &str) -> Result<Vec<String>>;
    /// Table `namespace.name`: its current metadata file (a URL) and the
    /// pointer its commits move; `None` when there is no such table.
    async fn table(&self, namespace: &str, name: &str) -> Result<Option<(String, Arc<dyn MetadataPointer>)>>;
    /// Whether the catalog places a new table itself when no location is
    /// given (a REST catalog does; a SQL catalog is told where).
    fn places_tables(&self) -> bool;
    /// Create table `namespace.name` with the Iceberg metadata `metadata`
    /// (no snapshot yet) at `table` (at the catalog's choice when `None`).
    async fn create_table(
        &self,
        namespace: &str,
        name: &str,
        table: Option<&TableLocation>,
        metadata: &Json,
    ) -> Result<()>;
    /// Give table `namespace.name` the name `to_namespace.to` (its files
    /// stay); `false` when there was no such table.
    async fn rename_table(&self, namespace: &str, name: &str, to_namespace: &str, to: &str) -> Result<bool>;
    /// Remove the table from the catalog; with `purge`, ask the catalog to
    /// delete its files too (where it can). `false` when there was none.
    async fn drop_table(&self, namespace: &str, name: &str, purge: bool) -> Result<bool>;
}

/// The catalog at `url` (see the module docs).
pub async fn connect(url: &str) -> Result<Arc<dyn IcebergCatalog>> {
    if url.starts_with("sqlite:") || url.starts_with("postgresql://") || url.starts_with("postgres://") {
        return Ok(Arc::new(Arc::new(sql::SqlCatalog::connect(url).await?)));
    }
    if url.starts_with("http://") || url.starts_with("https://") {
        return Ok(Arc::new(Arc::new(rest::RestClient::connect(url).await?)));
    }
    Err(Error::Invalid(format!(
        "--catalog {url}: expected sqlite:PATH, postgresql://user@host[:port]/database, or the http(s):// URL of an Iceberg REST catalog"
    )))
}
