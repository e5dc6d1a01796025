//! The SQL catalog layout that pyiceberg's `SqlCatalog` and Iceberg's
//! `JdbcCatalog` share, on SQLite (embedded) or PostgreSQL (shared):
//!
//! ```sql
//! CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL,
//!   table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000),
//!   iceberg_type VARCHAR(5), PRIMARY KEY (catalog_name, table_namespace, table_name));
//! CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL,
//!   property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000) NOT NULL,
//!   PRIMARY KEY (catalog_name, namespace, property_key));
//! ```
//!
//! A table is a row; its current metadata file is `metadata_location`. A
//! commit writes the next metadata file (`<N+1, 5 digits>-<uuid>.metadata.json`,
//! pyiceberg's naming) and then moves the row only if it still names the
//! file the commit was built on:
//!
//! ```sql
//! UPDATE iceberg_tables SET metadata_location = <new>, previous_metadata_location = <old>
//!  WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = <old>
//! ```
//!
//! One row changed: committed. None: another writer was first (the new file
//! is deleted, the commit starts over). An error from PostgreSQL once the
//! statement may have run: the outcome is unknown, and the file is kept.
//!
//! A database without any table gets the two tables (as pyiceberg does); a
//! database with tables but not these is refused: it is not a catalog.
//! Catalogs made by Java without `iceberg_type` (its "v0" layout) work too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

use crate::error::{Error, Result};
use crate::formats::iceberg::pointer::{Current, MetadataPointer, NextMetadata};
use crate::iceberg::metadata::metadata_version;
use crate::store::TableLocation;

const CREATE_TABLES: &str = "CREATE TABLE iceberg_tables (
    catalog_name VARCHAR(255) NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    iceberg_type VARCHAR(5),
    PRIMARY KEY (catalog_name, table_namespace, table_name))";

const CREATE_PROPERTIES: &str = "CREATE TABLE iceberg_namespace_properties (
    catalog_name VARCHAR(255) NOT NULL,
    namespace VARCHAR(255) NOT NULL,
    property_key VARCHAR(255) NOT NULL,
    property_value VARCHAR(1000) NOT NULL,
    PRIMARY KEY (catalog_name, namespace, property_key))";

/// The database behind the catalog.
enum Backend {
    Sqlite(Arc<Mutex<rusqlite::Connection>>),
    Postgres(tokio_postgres::Client),
}

/// What went wrong talking to the database, and whether a statement may
/// still have taken effect.
#[derive(Debug)]
struct DbError {
    message: String,
    /// The statement broke a key (the row exists already).
    duplicate: bool,
    /// The connection failed with the statement in flight.
    unknown: bool,
}

impl Backend {
    /// Rows of `sql` (`?` placeholders), every column as text.
    async fn query(&self, sql: &str, params: &[&str]) -> std::result::Result<Vec<Vec<Option<String>>>, DbError> {
        match self {
            Backend::Sqlite(conn) => {
                on_sqlite(conn, sql, params, |conn, sql, params| {
                    let mut stmt = conn.prepare(sql)?;
                    let n = stmt.column_count();
                    let rows = stmt.query_map(params, |row| {
                        (0..n)
                            .map(|i| row.get::<_, Option<String>>(i))
                            .collect::<rusqlite::Result<Vec<_>>>()
                    })?;
                    rows.collect()
                })
                .await
            }
            Backend::Postgres(client) => {
                let rows = client
                    .query(&numbered(sql), &postgres_params(params))
                    .await
                    .map_err(postgres)?;
                Ok(rows
                    .iter()
                    .map(|r| (0..r.len()).map(|i| r.get::<_, Option<String>>(i)).collect())
                    .collect())
            }
        }
    }

    /// Rows changed by `sql`.
    async fn execute(&self, sql: &str, params: &[&str]) -> std::result::Result<u64, DbError> {
        match self {
            Backend::Sqlite(conn) => {
                on_sqlite(conn, sql, params, |conn, sql, params| {
                    conn.execute(sql, params).map(|n| n as u64)
                })
                .await
            }
            Backend::Postgres(client) => client
                .execute(&numbered(sql), &postgres_params(params))
                .await
                .map_err(postgres),
        }
    }
}

/// Run `f` with the SQLite connection on a blocking thread (rusqlite is
/// synchronous).
async fn on_sqlite<T: Send + 'static>(
    conn: &Arc<Mutex<rusqlite::Connection>>,
    sql: &str,
    params: &[&str],
    f: impl FnOnce(
        &rusqlite::Connection,
        &str,
        rusqlite::ParamsFromIter<std::slice::Iter<'_, String>>,
    ) -> rusqlite::Result<T>
    + Send
    + 'static,
) -> std::result::Result<T, DbError> {
    let (conn, sql) = (Arc::clone(conn), sql.to_string());
    let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let conn = conn
            .lock()
            .map_err(|_| sqlite_error("the connection lock is poisoned"))?;
        f(&conn, &sql, rusqlite::params_from_iter(params.iter())).map_err(sqlite)
    })
    .await
    .map_err(|e| sqlite_error(&e.to_string()))?
}

fn postgres_params<'a>(params: &'a [&'a str]) -> Vec<&'a (dyn tokio_postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect()
}

/// `?` placeholders as PostgreSQL's `$1`, `$2`, …
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

fn sqlite_error(message: &str) -> DbError {
    DbError {
        message: message.to_string(),
        duplicate: false,
        unknown: false,
    }
}

fn sqlite(e: rusqlite::Error) -> DbError {
    let duplicate = matches!(
        &e,
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ConstraintViolation
    );
    DbError {
        message: e.to_string(),
        duplicate,
        unknown: false,
    }
}

fn postgres(e: tokio_postgres::Error) -> DbError {
    let duplicate = e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION);
    DbError {
        unknown: e.is_closed() || e.code().is_none() && !duplicate,
        duplicate,
        message: match e.as_db_error() {
            Some(db) => db.message().to_string(),
            None => e.to_string(),
        },
    }
}

/// A SQL catalog: one `catalog_name` in one database.
pub struct SqlCatalog {
    backend: Backend,
    catalog: String,
    /// Where it is, for messages (never with a password).
    shown: String,
    /// The table has `iceberg_type` (pyiceberg's and Java's v1 layout).
    typed: bool,
}

impl std::fmt::Debug for SqlCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SqlCatalog({}, {})", self.shown, self.catalog)
    }
}

/// `postgresql://user:secret@host/db` without the password.
fn without_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

impl SqlCatalog {
    /// Connect to `sqlite:PATH` or `postgresql://…` (either may end in
    /// `?catalog=NAME`; the default catalog name is pyiceberg's, `default`).
    pub async fn connect(url: &str) -> Result<Self> {
        let (base, catalog, chosen) = match url.split_once("?catalog=") {
            Some((base, name)) if !name.is_empty() => (base, name.to_string(), true),
            _ => (url, "default".to_string(), false),
        };
        let shown = without_password(base);
        let backend = if let Some(path) = base.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            let conn = rusqlite::Connection::open(path)
                .map_err(|e| Error::Invalid(format!("cannot open the SQLite catalog {path}: {e}")))?;
            conn.busy_timeout(std::time::Duration::from_secs(10))
                .map_err(|e| Error::Invalid(format!("SQLite catalog {path}: {e}")))?;
            Backend::Sqlite(Arc::new(Mutex::new(conn)))
        } else if base.starts_with("postgresql://") || base.starts_with("postgres://") {
            let (client, connection) = tokio_postgres::connect(base, tokio_postgres::NoTls)
                .await
                .map_err(|e| Error::Invalid(format!("cannot connect to the PostgreSQL catalog {shown}: {e}")))?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            Backend::Postgres(client)
        } else {
            return Err(Error::Invalid(format!(
                "catalog {shown}: expected sqlite:PATH or postgresql://user@host[:port]/database"
            )));
        };
        let mut catalog = Self {
            backend,
            catalog,
            shown,
            typed: true,
        };
        catalog.prepare().await?;
        if !chosen {
            catalog.check_default_name(base).await?;
        }
        Ok(catalog)
    }

    /// Without `?catalog=NAME`, the catalog is pyiceberg's `default`; a
    /// database that holds only catalogs of other names would look empty,
    /// so it is refused, naming them.
    async fn check_default_name(&self, base: &str) -> Result<()> {
        let rows = self
            .backend
            .query(
                "SELECT DISTINCT catalog_name FROM iceberg_tables UNION SELECT DISTINCT catalog_name FROM iceberg_namespace_properties",
                &[],
            )
            .await
            .map_err(|e| self.failed("listing its catalogs", e))?;
        let names: Vec<String> = rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect();
        if names.is_empty() || names.iter().any(|n| n == &self.catalog) {
            return Ok(());
        }
        Err(Error::Invalid(format!(
            "the SQL catalog {} holds the catalogs {} and none named {:?} (the default); choose one with ?catalog=NAME, e.g. {}?catalog={}",
            self.shown,
            names.join(", "),
            self.catalog,
            without_password(base),
            names[0]
        )))
    }

    fn failed(&self, what: &str, e: DbError) -> Error {
        Error::Invalid(format!("SQL catalog {}: {what}: {}", self.shown, e.message))
    }

    /// Make sure the catalog tables are there (made in an empty database).
    async fn prepare(&mut self) -> Result<()> {
        let probe = self
            .backend
            .query("SELECT * FROM iceberg_tables WHERE 1 = 0", &[])
            .await;
        if probe.is_err() {
            let tables = match &self.backend {
                Backend::Sqlite(_) => "SELECT name FROM sqlite_master WHERE type = 'table'",
                Backend::Postgres(_) => {
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
                }
            };
            let existing = self
                .backend
                .query(tables, &[])
                .await
                .map_err(|e| self.failed("it cannot be read as a database", e))?;
            if !existing.is_empty() {
                return Err(Error::Invalid(format!(
                    "{} is not an Iceberg SQL catalog: the database has tables, but not iceberg_tables and iceberg_namespace_properties",
                    self.shown
                )));
            }
            for ddl in [CREATE_TABLES, CREATE_PROPERTIES] {
                self.backend
                    .execute(ddl, &[])
                    .await
                    .map_err(|e| self.failed("creating the catalog tables", e))?;
            }
        }
        self.typed = self
            .backend
            .query("SELECT iceberg_type FROM iceberg_tables WHERE 1 = 0", &[])
            .await
            .is_ok();
        Ok(())
    }

    fn is_table(&self) -> &'static str {
        match self.typed {
            true => " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)",
            false => "",
        }
    }

    /// `statement` on one table's row: its parameters are the catalog,
    /// namespace and name, then those of `extra` (` AND …`).
    fn on_table_row(&self, statement: &str, extra: &str) -> String {
        format!(
            "{statement} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?{extra}{}",
            self.is_table()
        )
    }

    /// Every namespace: of a table or with properties.
    pub async fn namespaces(&self) -> Result<Vec<String>> {
        let rows = self
            .backend
            .query(
                "SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name = ?
                 UNION SELECT DISTINCT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?",
                &[&self.catalog, &self.catalog],
            )
            .await
            .map_err(|e| self.failed("listing namespaces", e))?;
        let mut names: Vec<String> = rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Create namespace `ns` (pyiceberg's `exists` property); `false` when it exists.
    pub async fn create_namespace(&self, ns: &str) -> Result<bool> {
        if self.namespaces().await?.iter().any(|n| n == ns) {
            return Ok(false);
        }
        match self
            .backend
            .execute(
                "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES (?, ?, 'exists', 'true')",
                &[&self.catalog, ns],
            )
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if e.duplicate => Ok(false),
            Err(e) => Err(self.failed(&format!("creating namespace {ns}"), e)),
        }
    }

    /// Drop namespace `ns`; refused while it holds tables.
    pub async fn drop_namespace(&self, ns: &str) -> Result<bool> {
        let tables = self.tables(ns).await?;
        if !tables.is_empty() {
            return Err(Error::Invalid(format!(
                "namespace {ns} is not empty (it holds {}); drop its tables first",
                tables.join(", ")
            )));
        }
        let n = self
            .backend
            .execute(
                "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?",
                &[&self.catalog, ns],
            )
            .await
            .map_err(|e| self.failed(&format!("dropping namespace {ns}"), e))?;
        Ok(n > 0)
    }

    /// The tables of namespace `ns`.
    pub async fn tables(&self, ns: &str) -> Result<Vec<String>> {
        let sql = format!(
            "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?{}",
            self.is_table()
        );
        let rows = self
            .backend
            .query(&sql, &[&self.catalog, ns])
            .await
            .map_err(|e| self.failed(&format!("listing the tables of {ns}"), e))?;
        let mut names: Vec<String> = rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect();
        names.sort();
        Ok(names)
    }

    /// The current metadata file of table `ns.name`, if it exists.
    pub async fn metadata_location(&self, ns: &str, name: &str) -> Result<Option<String>> {
        let sql = self.on_table_row("SELECT metadata_location FROM iceberg_tables", "");
        let rows = self
            .backend
            .query(&sql, &[&self.catalog, ns, name])
            .await
            .map_err(|e| self.failed(&format!("looking up table {ns}.{name}"), e))?;
        Ok(rows.into_iter().next().and_then(|r| r.into_iter().next().flatten()))
    }

    /// Record a new table; a `TableExists` error when the name is taken.
    pub async fn create_table(&self, ns: &str, name: &str, metadata_location: &str) -> Result<()> {
        let sql = match self.typed {
            true => {
                "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type) VALUES (?, ?, ?, ?, NULL, 'TABLE')"
            }
            false => {
                "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location) VALUES (?, ?, ?, ?, NULL)"
            }
        };
        match self
            .backend
            .execute(sql, &[&self.catalog, ns, name, metadata_location])
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.duplicate => Err(Error::TableExists(format!("table {ns}.{name} already exists"))),
            Err(e) => Err(self.failed(&format!("creating table {ns}.{name}"), e)),
        }
    }

    /// Move table `ns.name` from metadata file `old` to `new`, if it is
    /// still at `old`; `Ok(false)` when another commit moved it first.
    async fn swap(&self, ns: &str, name: &str, old: &str, new: &str) -> Result<bool> {
        let sql = self.on_table_row(
            "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?",
            " AND metadata_location = ?",
        );
        match self
            .backend
            .execute(&sql, &[new, old, &self.catalog, ns, name, old])
            .await
        {
            Ok(1) => Ok(true),
            Ok(0) => Ok(false),
            Ok(n) => Err(Error::Format(format!(
                "SQL catalog {}: the commit to {ns}.{name} changed {n} rows",
                self.shown
            ))),
            Err(e) if e.unknown => Err(Error::CommitUnknown {
                table: format!("{ns}.{name}"),
                detail: format!("the SQL catalog {} failed during the update: {}", self.shown, e.message),
            }),
            Err(e) => Err(self.failed(&format!("committing to {ns}.{name}"), e)),
        }
    }

    /// Remove table `ns.name` from the catalog (its files stay); `false`
    /// when it was not there.
    pub async fn drop_table(&self, ns: &str, name: &str) -> Result<bool> {
        let sql = self.on_table_row("DELETE FROM iceberg_tables", "");
        let n = self
            .backend
            .execute(&sql, &[&self.catalog, ns, name])
            .await
            .map_err(|e| self.failed(&format!("dropping {ns}.{name}"), e))?;
        Ok(n > 0)
    }

    /// Rename table `ns.name` to `to_ns.to` (its files stay where they are).
    pub async fn rename_table(&self, ns: &str, name: &str, to_ns: &str, to: &str) -> Result<bool> {
        let sql = self.on_table_row("UPDATE iceberg_tables SET table_namespace = ?, table_name = ?", "");
        match self.backend.execute(&sql, &[to_ns, to, &self.catalog, ns, name]).await {
            Ok(n) => Ok(n > 0),
            Err(e) if e.duplicate => Err(Error::TableExists(format!("table {to_ns}.{to} already exists"))),
            Err(e) => Err(self.failed(&format!("renaming {ns}.{name}"), e)),
        }
    }
}

#[async_trait]
impl super::IcebergCatalog for Arc<SqlCatalog> {
    fn describe(&self) -> String {
        format!("SQL catalog {} (catalog_name {})", self.shown, self.catalog)
    }

    async fn namespaces(&self) -> Result<Vec<String>> {
        SqlCatalog::namespaces(self).await
    }

    async fn create_namespace(&self, namespace: &str) -> Result<bool> {
        SqlCatalog::create_namespace(self, namespace).await
    }

    async fn drop_namespace(&self, namespace: &str) -> Result<bool> {
        SqlCatalog::drop_namespace(self, namespace).await
    }

    async fn tables(&self, namespace: &str) -> Result<Vec<String>> {
        SqlCatalog::tables(self, namespace).await
    }

    async fn table(&self, namespace: &str, name: &str) -> Result<Option<(String, Arc<dyn MetadataPointer>)>> {
        let Some(location) = self.metadata_location(namespace, name).await? else {
            return Ok(None);
        };
        let pointer: Arc<dyn MetadataPointer> = Arc::new(SqlPointer::new(Arc::clone(self), namespace, name));
        Ok(Some((location, pointer)))
    }

    /// The metadata file is written first (`00000-<uuid>.metadata.json`),
    /// then the row: a lost race leaves an unreferenced file, never a row
    /// without its file.
    fn places_tables(&self) -> bool {
        false
    }

    async fn create_table(
        &self,
        namespace: &str,
        name: &str,
        table: Option<&TableLocation>,
        metadata: &serde_json::Value,
    ) -> Result<()> {
        let Some(table) = table else {
            return crate::invalid!(
                "creating {namespace}.{name} in {}: a SQL catalog needs the table's location",
                self.describe()
            );
        };
        let file = format!("00000-{}.metadata.json", uuid::Uuid::new_v4());
        let stored = TableLocation::stored_path(["metadata", file.as_str()]);
        let path = table.resolve(&stored)?;
        let bytes = serde_json::to_vec_pretty(metadata)?;
        table.store.put(&path, PutPayload::from(bytes)).await?;
        let url = table.iceberg_path(&stored);
        if let Err(e) = SqlCatalog::create_table(self, namespace, name, &url).await {
            let _ = table.store.delete(&path).await;
            return Err(e);
        }
        Ok(())
    }

    async fn rename_table(&self, namespace: &str, name: &str, to_namespace: &str, to: &str) -> Result<bool> {
        SqlCatalog::rename_table(self, namespace, name, to_namespace, to).await
    }

    async fn drop_table(&self, namespace: &str, name: &str, _purge: bool) -> Result<bool> {
        SqlCatalog::drop_table(self, namespace, name).await
    }
}

/// The pointer of one table of a SQL catalog.
#[derive(Debug)]
pub struct SqlPointer {
    catalog: Arc<SqlCatalog>,
    namespace: String,
    name: String,
    /// The row's text for each metadata file read (the commit compares it).
    seen: Mutex<HashMap<Path, String>>,
}

impl SqlPointer {
    pub fn new(catalog: Arc<SqlCatalog>, namespace: &str, name: &str) -> Self {
        Self {
            catalog,
            namespace: namespace.to_string(),
            name: name.to_string(),
            seen: Mutex::default(),
        }
    }
}

#[async_trait]
impl MetadataPointer for SqlPointer {
    async fn current(&self, table: &TableLocation) -> Result<Current> {
        let Some(location) = self.catalog.metadata_location(&self.namespace, &self.name).await? else {
            return Err(Error::TableNotFound(format!("{}.{}", self.namespace, self.name)));
        };
        let file = table.from_iceberg_path(&location)?;
        let version = file.filename().and_then(metadata_version).unwrap_or(0);
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(file.clone(), location);
        }
        Ok(Current { file, version })
    }

    async fn commit(&self, table: &TableLocation, latest: &Current, next: NextMetadata<'_>) -> Result<Option<Current>> {
        let Some(old) = self.seen.lock().ok().and_then(|s| s.get(&latest.file).cloned()) else {
            return crate::format_err!(
                "the commit to {}.{} was not built on a version read from its catalog",
                self.namespace,
                self.name
            );
        };
        let version = latest.version + 1;
        let name = format!("{version:05}-{}.metadata.json", uuid::Uuid::new_v4());
        let stored = TableLocation::stored_path(["metadata", name.as_str()]);
        let file = table.resolve(&stored)?;
        table.store.put(&file, PutPayload::from(next.bytes)).await?;
        let new = table.iceberg_path(&stored);
        match self.catalog.swap(&self.namespace, &self.name, &old, &new).await {
            Ok(true) => {
                if let Ok(mut seen) = self.seen.lock() {
                    seen.insert(file.clone(), new);
                }
                Ok(Some(Current { file, version }))
            }
            Ok(false) => {
                let _ = table.store.delete(&file).await;
                Ok(None)
            }
            // The row may have moved: the file stays.
            Err(e @ Error::CommitUnknown { .. }) => Err(e),
            Err(e) => {
                let _ = table.store.delete(&file).await;
                Err(e)
            }
        }
    }
}
