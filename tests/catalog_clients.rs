//! This engine as a client of Iceberg catalogs (`--catalog`): tables that
//! pyiceberg's `SqlCatalog` created (SQLite, and PostgreSQL when
//! `HP_POSTGRES_URL` names a server, as `.ci/run` does) and tables of a
//! REST catalog (our own server) are read and written by us and read back
//! by pyiceberg; our writers and pyiceberg's commit at the same time and
//! nothing is lost.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hidden_partitions::serve::{ServeOptions, bind};
use hidden_partitions::session::session_with_catalog;
use hidden_partitions::{Warehouse, execute_sql};
use serde_json::{Value, json};

mod common;
use common::readers::{python, render_batch, runtime, script, sorted, text};

/// A SQL catalog in a temporary directory (or the PostgreSQL server's).
struct Sql {
    /// Ours: `sqlite:PATH` / `postgresql://…`.
    ours: String,
    /// SQLAlchemy's, for pyiceberg.
    theirs: String,
    warehouse: PathBuf,
    _dir: tempfile::TempDir,
}

fn sqlite() -> Sql {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("catalog.db");
    Sql {
        ours: format!("sqlite:{}", db.display()),
        theirs: format!("sqlite:///{}", db.display()),
        warehouse: dir.path().join("wh"),
        _dir: dir,
    }
}

/// The PostgreSQL server of `.ci/run` (a fresh database per test), or
/// `None` said loudly; in CI (`HP_POSTGRES_REQUIRED=1`) its absence fails.
fn postgres(test: &str) -> Option<Sql> {
    let Ok(server) = std::env::var("HP_POSTGRES_URL") else {
        if std::env::var("HP_POSTGRES_REQUIRED").is_ok_and(|v| v == "1") {
            panic!("HP_POSTGRES_REQUIRED=1 but HP_POSTGRES_URL is not set");
        }
        eprintln!("\n*** SKIPPED {test} on PostgreSQL: no server (set HP_POSTGRES_URL, or run .ci/run) ***\n");
        return None;
    };
    // postgresql://user@host:port/db → a new database for this test.
    let database = format!("t{}", uuid::Uuid::new_v4().simple());
    let admin = format!("{server}");
    let o = Command::new("psql")
        .args([&admin, "-c", &format!("CREATE DATABASE {database}")])
        .output()
        .expect("psql runs");
    assert!(o.status.success(), "creating a database: {}", text(&o.stderr));
    let base = server.rsplit_once('/').map(|(b, _)| b).unwrap_or(&server).to_string();
    let dir = tempfile::tempdir().unwrap();
    Some(Sql {
        ours: format!("{base}/{database}"),
        theirs: format!(
            "{}/{database}",
            base.replacen("postgresql://", "postgresql+psycopg2://", 1)
        ),
        warehouse: dir.path().join("wh"),
        _dir: dir,
    })
}

fn py(python: &Path, sql: &Sql, args: &[&str]) -> Value {
    let o = py_command(python, sql, args).output().unwrap();
    assert!(o.status.success(), "sql_catalog.py {args:?}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stdout)))
}

fn py_command(python: &Path, sql: &Sql, args: &[&str]) -> Command {
    let mut c = Command::new(python);
    c.arg(script("sql_catalog.py"))
        .arg(args[0])
        .arg(&sql.theirs)
        .arg(&sql.warehouse)
        .args(&args[1..]);
    c
}

/// Our rows for `sql` in a session on `catalog`.
fn ours(warehouse: &Path, catalog: &str, sql: &str) -> Vec<Value> {
    let (warehouse, catalog, sql) = (warehouse.to_path_buf(), catalog.to_string(), sql.to_string());
    let batches = runtime().block_on(async move {
        let ctx = session_with_catalog(Warehouse::local(&warehouse).unwrap(), &catalog)
            .await
            .unwrap_or_else(|e| panic!("--catalog {catalog}: {e}"));
        let mut results = execute_sql(&ctx, &sql)
            .await
            .unwrap_or_else(|e| panic!("our {sql:?} failed: {e}"));
        results.pop().unwrap().batches
    });
    sorted(batches.iter().flat_map(render_batch).collect())
}

fn cli(warehouse: &Path, catalog: &str, sql: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("--warehouse")
        .arg(warehouse)
        .args(["--catalog", catalog, "-c", sql])
        .output()
        .unwrap()
}

fn rows(v: &Value) -> Vec<Value> {
    sorted(v.as_array().unwrap().clone())
}

/// pyiceberg creates and fills a table; we read it (pruned), write to it
/// (INSERT, DELETE, UPDATE), and pyiceberg reads our writes.
fn read_and_write(python: &Path, sql: &Sql) {
    let created = py(python, sql, &["create"]);
    assert_eq!(
        ours(&sql.warehouse, &sql.ours, "SELECT * FROM ns.events"),
        rows(&created["rows"])
    );
    let metadata = created["metadata_location"].as_str().unwrap();
    let table_dir = metadata
        .strip_prefix("file://")
        .unwrap_or(metadata)
        .rsplit_once("/metadata/")
        .unwrap()
        .0;
    refused_by_directory(Path::new(table_dir), &created);
    let explain = ours(
        &sql.warehouse,
        &sql.ours,
        "EXPLAIN FILES SELECT * FROM ns.events WHERE ts >= TIMESTAMP '2024-01-03 00:00:00'",
    );
    assert_eq!(explain[0]["files"], json!("1/3"), "{explain:?}");
    let o = cli(
        &sql.warehouse,
        &sql.ours,
        "INSERT INTO ns.events VALUES (4, TIMESTAMP '2024-01-04 09:00:00', 'ours');
         DELETE FROM ns.events WHERE id = 1;
         UPDATE ns.events SET name = 'updated' WHERE id = 2",
    );
    assert!(o.status.success(), "our writes: {}", text(&o.stderr));
    let back = py(python, sql, &["read", "ns.events"]);
    let expected = ours(&sql.warehouse, &sql.ours, "SELECT * FROM ns.events");
    assert_eq!(rows(&back["rows"]), expected, "pyiceberg reads our writes");
    let names: Vec<&str> = expected.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 3, "{expected:?}");
    assert!(names.contains(&"updated") && names.contains(&"ours") && names.contains(&"c"));
    // Metadata tables and time travel of a catalog's table: pyiceberg's
    // append, then our append, delete and update.
    let snapshots = ours(
        &sql.warehouse,
        &sql.ours,
        "SELECT snapshot_id, parent_id FROM ns.\"events$snapshots\"",
    );
    assert_eq!(snapshots.len(), 4, "{snapshots:?}");
    let first = snapshots
        .iter()
        .find(|s| s["parent_id"].is_null())
        .expect("a first snapshot")["snapshot_id"]
        .as_i64()
        .unwrap();
    let then = ours(
        &sql.warehouse,
        &sql.ours,
        &format!("SELECT * FROM ns.\"events@{first}\""),
    );
    assert_eq!(then, rows(&created["rows"]), "time travel to pyiceberg's snapshot");
    // Changelog reads of a catalog's table: our three statements after pyiceberg's append.
    let changes = ours(
        &sql.warehouse,
        &sql.ours,
        &format!("SELECT id, name, _change_type, _change_ordinal FROM table_changes('ns.events', {first}, NULL, 'id')"),
    );
    let want = [
        (4, "ours", "INSERT", 0),
        (1, "a", "DELETE", 1),
        (2, "b", "UPDATE_BEFORE", 2),
        (2, "updated", "UPDATE_AFTER", 2),
    ];
    let want: Vec<Value> = want
        .iter()
        .map(|(id, name, t, o)| json!({"id": id, "name": name, "_change_type": t, "_change_ordinal": o}))
        .collect();
    assert_eq!(changes, sorted(want), "table_changes through the catalog");
    // pyiceberg's identifier-field-ids are the default identifier columns.
    py(python, sql, &["create-keyed"]);
    let o = cli(&sql.warehouse, &sql.ours, "UPDATE ns.keyed SET name = 'z' WHERE id = 2");
    assert!(o.status.success(), "our update: {}", text(&o.stderr));
    let changes = ours(
        &sql.warehouse,
        &sql.ours,
        "SELECT id, name, _change_type FROM table_changes('ns.keyed', NULL, NULL) WHERE _change_ordinal = 1",
    );
    let want = vec![
        json!({"id": 2, "name": "b", "_change_type": "UPDATE_BEFORE"}),
        json!({"id": 2, "name": "z", "_change_type": "UPDATE_AFTER"}),
    ];
    assert_eq!(changes, sorted(want), "identifier-field-ids by default");
}

/// A catalog's table opened by its directory (`<N>-<uuid>.metadata.json` files) reads, but a
/// write by directory would fork its history from the catalog's (a `v<N>.metadata.json` and a
/// hint the catalog never reads): refused, pointing to `--catalog`, and nothing written.
fn refused_by_directory(table_dir: &Path, created: &Value) {
    let elsewhere = tempfile::tempdir().unwrap();
    let register = format!(
        "CREATE EXTERNAL TABLE IF NOT EXISTS e STORED AS ICEBERG LOCATION '{}'; ",
        table_dir.display()
    );
    let by_directory = |sql: &str| {
        Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
            .arg("--warehouse")
            .arg(elsewhere.path())
            .args(["--format", "json", "-c", &format!("{register}{sql}")])
            .output()
            .unwrap()
    };
    let listing = || {
        let mut files = files_under(table_dir);
        files.sort();
        files
    };
    let before = listing();
    for write in [
        "INSERT INTO e VALUES (9, TIMESTAMP '2024-01-09 00:00:00', 'by directory')",
        "DELETE FROM e WHERE id = 1",
        "ALTER TABLE e ADD COLUMN note VARCHAR",
    ] {
        let o = by_directory(write);
        let err = text(&o.stderr);
        assert!(!o.status.success(), "{write} by directory ran");
        assert!(
            err.contains("as a catalog names them") && err.contains("--catalog"),
            "{write}: {err}"
        );
        assert_eq!(listing(), before, "{write} by directory wrote files");
    }
    let o = by_directory("SELECT count(*) AS n FROM e");
    assert!(o.status.success(), "reading by directory: {}", text(&o.stderr));
    let n = created["rows"].as_array().unwrap().len();
    assert!(
        text(&o.stdout).contains(&format!("[{{\"n\":{n}}}]")),
        "{}",
        text(&o.stdout)
    );
}

/// Our inserts and pyiceberg's appends commit at the same time: every row once.
fn concurrent_writers(python: &Path, sql: &Sql) {
    let per_writer = 4;
    let theirs = py_command(python, sql, &["append", "ns.events", "1000", &per_writer.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for i in 0..per_writer {
        let o = cli(
            &sql.warehouse,
            &sql.ours,
            &format!(
                "INSERT INTO ns.events VALUES ({}, TIMESTAMP '2024-03-01 00:00:00', 'ours')",
                2000 + i
            ),
        );
        assert!(o.status.success(), "our insert: {}", text(&o.stderr));
    }
    let o = theirs.wait_with_output().unwrap();
    assert!(o.status.success(), "pyiceberg: {}", text(&o.stderr));
    let ids: Vec<i64> = ours(&sql.warehouse, &sql.ours, "SELECT id FROM ns.events WHERE id >= 1000")
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    let mut ids = ids;
    ids.sort();
    let expected: Vec<i64> = (1000..1000 + per_writer).chain(2000..2000 + per_writer).collect();
    assert_eq!(ids, expected, "every row once");
}

#[test]
fn pyiceberg_sql_catalog_tables_on_sqlite() {
    let Some(python) = python("pyiceberg_sql_catalog_tables_on_sqlite") else {
        return;
    };
    let sql = sqlite();
    read_and_write(&python, &sql);
    concurrent_writers(&python, &sql);
}

#[test]
fn pyiceberg_sql_catalog_tables_on_postgresql() {
    let Some(python) = python("pyiceberg_sql_catalog_tables_on_postgresql") else {
        return;
    };
    let Some(sql) = postgres("pyiceberg_sql_catalog_tables_on_postgresql") else {
        return;
    };
    read_and_write(&python, &sql);
    concurrent_writers(&python, &sql);
}

/// DDL through a SQL catalog: our CREATE SCHEMA / CREATE TABLE (partitioned,
/// and AS SELECT) are pyiceberg's namespaces and tables; DROP removes the
/// entries, PURGE is refused with the reason, a non-empty schema needs
/// CASCADE.
#[test]
fn ddl_through_a_sql_catalog() {
    let Some(python) = python("ddl_through_a_sql_catalog") else {
        return;
    };
    let sql = sqlite();
    let o = cli(
        &sql.warehouse,
        &sql.ours,
        "CREATE SCHEMA sales;
         CREATE TABLE sales.orders (id BIGINT, ts TIMESTAMP, amount DOUBLE) PARTITIONED BY (day(ts), bucket(4, id));
         INSERT INTO sales.orders VALUES (1, TIMESTAMP '2024-05-01 10:00:00', 9.5), (2, TIMESTAMP '2024-05-02 11:00:00', 3.25);
         CREATE TABLE sales.big AS SELECT id, amount * 2 AS doubled FROM sales.orders WHERE amount > 5",
    );
    assert!(o.status.success(), "our DDL: {}", text(&o.stderr));
    assert_eq!(py(&python, &sql, &["list"]), json!({"sales": ["big", "orders"]}));
    let orders = py(&python, &sql, &["read", "sales.orders", "ts >= '2024-05-02T00:00:00'"]);
    assert_eq!(
        orders["files"],
        json!(1),
        "pyiceberg prunes by our day(ts) partitions: {orders}"
    );
    assert_eq!(orders["rows"].as_array().unwrap().len(), 1);
    let big = py(&python, &sql, &["read", "sales.big"]);
    assert_eq!(big["rows"], json!([{"id": 1, "doubled": 19.0}]));
    assert!(
        sql.warehouse.join("sales/orders/metadata").is_dir(),
        "pyiceberg's layout: <warehouse>/<namespace>/<table>"
    );
    // Bad input, nothing changed.
    let o = cli(&sql.warehouse, &sql.ours, "CREATE TABLE sales.orders (x INT)");
    assert!(text(&o.stderr).contains("already exists"), "{}", text(&o.stderr));
    let o = cli(&sql.warehouse, &sql.ours, "DROP TABLE sales.orders PURGE");
    assert!(text(&o.stderr).contains("keeps its files"), "{}", text(&o.stderr));
    let o = cli(&sql.warehouse, &sql.ours, "DROP SCHEMA sales");
    assert!(text(&o.stderr).contains("not empty"), "{}", text(&o.stderr));
    assert_eq!(py(&python, &sql, &["list"]), json!({"sales": ["big", "orders"]}));
    let o = cli(
        &sql.warehouse,
        &sql.ours,
        "DROP TABLE sales.orders; DROP TABLE IF EXISTS sales.orders; ALTER TABLE sales.big RENAME TO bigger",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(py(&python, &sql, &["list"]), json!({"sales": ["bigger"]}));
    let big = py(&python, &sql, &["read", "sales.bigger"]);
    assert_eq!(
        big["rows"],
        json!([{"id": 1, "doubled": 19.0}]),
        "a rename keeps the rows"
    );
    assert!(
        sql.warehouse.join("sales/orders/metadata").is_dir(),
        "DROP keeps the files"
    );
    let o = cli(&sql.warehouse, &sql.ours, "DROP SCHEMA sales CASCADE");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(py(&python, &sql, &["list"]), json!({}));
}

/// A catalog that is not one, and a server that is down: clear errors.
#[test]
fn a_database_that_is_not_a_catalog_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute("CREATE TABLE accounts (id INTEGER)", []).unwrap();
    }
    let o = cli(&dir.path().join("wh"), &format!("sqlite:{}", db.display()), "SELECT 1");
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("is not an Iceberg SQL catalog"),
        "{}",
        text(&o.stderr)
    );
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"this is not a database at all, just text").unwrap();
    let o = cli(
        &dir.path().join("wh"),
        &format!("sqlite:{}", junk.display()),
        "SELECT 1",
    );
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("junk.db"), "{}", text(&o.stderr));
    let o = cli(
        &dir.path().join("wh"),
        "postgresql://nobody:secret-pw@127.0.0.1:9/none",
        "SELECT 1",
    );
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("cannot connect to the PostgreSQL catalog"), "{err}");
    assert!(!err.contains("secret-pw"), "the password was printed: {err}");
}

/// Our server as the REST catalog of another session of ours: pyiceberg
/// (through the server) and we (through `--catalog http://…`) write the
/// same table and see each other's rows.
#[test]
fn our_rest_catalog_as_our_catalog() {
    let Some(python) = python("our_rest_catalog_as_our_catalog") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    let rt = runtime();
    let options = ServeOptions {
        port: 0,
        log_requests: false,
        ..Default::default()
    };
    let (address, server) = rt.block_on(bind(Warehouse::local(&served).unwrap(), options)).unwrap();
    rt.spawn(server);
    let url = format!("http://{address}");
    let o = Command::new(&python)
        .arg(script("rest_catalog.py"))
        .args(["pyiceberg-create", &url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let local = dir.path().join("client");
    let o = cli(
        &local,
        &url,
        "INSERT INTO ns.events VALUES (7, TIMESTAMP '2024-01-07 00:00:00', 'via rest');
         DELETE FROM ns.events WHERE id = 1",
    );
    assert!(o.status.success(), "our writes through REST: {}", text(&o.stderr));
    let o = Command::new(&python)
        .arg(script("rest_catalog.py"))
        .args(["pyiceberg-read", &url, "ns.events"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let theirs: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<i64> = rows(&theirs["rows"])
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    let mut ids = ids;
    ids.sort();
    assert_eq!(ids, vec![2, 3, 7]);
    assert_eq!(ours(&local, &url, "SELECT * FROM ns.events"), rows(&theirs["rows"]));
    // And the server's own engine, on the warehouse directly.
    let direct = runtime().block_on(async {
        let ctx = hidden_partitions::session_with(Warehouse::local(&served).unwrap())
            .await
            .unwrap();
        let mut r = execute_sql(&ctx, "SELECT id FROM ns.events ORDER BY id").await.unwrap();
        r.pop().unwrap().batches
    });
    let direct: Vec<Value> = direct.iter().flat_map(render_batch).collect();
    assert_eq!(direct, vec![json!({"id": 2}), json!({"id": 3}), json!({"id": 7})]);
    // DDL through the REST catalog: the server places the table in its
    // warehouse; PURGE is the server's.
    let o = cli(
        &local,
        &url,
        "CREATE SCHEMA made;
         CREATE TABLE made.t (id BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts));
         INSERT INTO made.t VALUES (1, TIMESTAMP '2024-01-01 00:00:00'), (2, TIMESTAMP '2024-01-02 00:00:00')",
    );
    assert!(o.status.success(), "our DDL through REST: {}", text(&o.stderr));
    let o = Command::new(&python)
        .arg(script("rest_catalog.py"))
        .args(["pyiceberg-read", &url, "made.t"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let theirs: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(theirs["rows"].as_array().map(Vec::len), Some(2), "{theirs}");
    assert!(
        served.join("made.db/t").is_dir(),
        "the server placed the table in its warehouse"
    );
    // Properties and tags travel as updates of their own (a fresh process
    // reads them back from the server).
    let o = cli(
        &local,
        &url,
        "ALTER TABLE made.t SET TBLPROPERTIES ('owner' = 'ops', 'gone' = 'soon');
         ALTER TABLE made.t UNSET TBLPROPERTIES ('gone');
         ALTER TABLE made.t CREATE TAG first",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let props = ours(
        &local,
        &url,
        "SELECT key, value FROM made.\"t$properties\" WHERE key IN ('owner', 'gone')",
    );
    assert_eq!(props, vec![json!({"key": "owner", "value": "ops"})]);
    assert_eq!(
        ours(&local, &url, "SELECT count(*) AS n FROM made.\"t@first\""),
        vec![json!({"n": 2})]
    );
    let o = cli(&local, &url, "ALTER TABLE made.t DROP TAG first");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = cli(&local, &url, "SELECT * FROM made.\"t@first\"");
    assert!(!o.status.success(), "the tag is gone on the server");
    let o = cli(
        &local,
        &url,
        "ALTER TABLE made.t RENAME TO made.t2; SELECT count(*) FROM made.t2",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = cli(&local, &url, "DROP TABLE made.t2 PURGE; DROP SCHEMA made");
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The data files are gone; the manifests our client wrote stay, as the
    // server never adopted them as the table's (README).
    let left = files_under(&served.join("made.db"));
    assert!(
        !left.iter().any(|f| f.ends_with(".parquet")),
        "purged by the server: {left:?}"
    );
}

/// Every file under `dir` (none when it is gone).
fn files_under(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| match e.path().is_dir() {
            true => files_under(&e.path()),
            false => vec![e.path().display().to_string()],
        })
        .collect()
}

/// A SQL catalog file that holds catalogs of other names than the default says which, and
/// how to choose (`?catalog=NAME`); names that would put a table inside another's directory
/// or clash with metadata tables (`$`) are refused, as in the warehouse.
#[test]
fn sql_catalogs_name_their_catalogs_and_refuse_unsafe_table_names() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cat.db");
    let wh = dir.path().join("wh");
    let prod = format!("sqlite:{}?catalog=prod", db.display());
    let o = cli(
        &wh,
        &prod,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1)",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = cli(&wh, &format!("sqlite:{}", db.display()), "SHOW TABLES");
    assert!(!o.status.success(), "a catalog without the default name looked empty");
    let err = text(&o.stderr);
    assert!(err.contains("prod") && err.contains("?catalog="), "{err}");
    for name in ["\"a/data/x\"", "\"x$1\"", "\"..\""] {
        let o = cli(&wh, &prod, &format!("CREATE TABLE ns.{name} (id BIGINT)"));
        assert!(!o.status.success(), "CREATE TABLE ns.{name} ran");
        assert!(
            text(&o.stderr).contains("invalid table name"),
            "{name}: {}",
            text(&o.stderr)
        );
    }
    let o = cli(&wh, &prod, "ALTER TABLE ns.t RENAME TO ns.\"a/b\"");
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("invalid table name"), "{}", text(&o.stderr));
    let o = cli(&wh, &prod, "SELECT id FROM ns.t");
    assert!(
        o.status.success() && text(&o.stdout).contains('1'),
        "{}",
        text(&o.stderr)
    );
}
