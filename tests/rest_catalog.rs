//! The warehouse as an Iceberg REST catalog (`hidden-partitions serve`),
//! used by clients nobody here wrote: pyiceberg 0.12's `RestCatalog` and
//! DuckDB 1.4.4 with its iceberg and httpfs extensions
//! (`tests/interop/rest_catalog.py`). After each step our own engine reads
//! the same warehouse and must see what the clients see.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use hidden_partitions::serve::{ServeOptions, bind};
use hidden_partitions::{Warehouse, execute_sql, session_with};
use serde_json::{Value, json};

mod common;
use common::readers::{python, render_batch, runtime, script, sorted, text};
use common::served::{Served, serve_with};

/// A catalog server on a warehouse in a temporary directory, in this process.
fn serve(token: Option<&str>) -> Served {
    serve_with(|options, _| options.token = token.map(str::to_string))
}

/// One step of `rest_catalog.py`; its JSON.
fn client(python: &Path, url: &str, token: Option<&str>, args: &[&str]) -> Value {
    let o = client_command(python, url, token, args).output().unwrap();
    assert!(
        o.status.success(),
        "rest_catalog.py {args:?} failed: {}",
        text(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stdout)))
}

fn client_command(python: &Path, url: &str, token: Option<&str>, args: &[&str]) -> Command {
    let mut c = Command::new(python);
    c.arg(script("rest_catalog.py")).arg(args[0]).arg(url).args(&args[1..]);
    match token {
        Some(t) => c.env("HP_CATALOG_TOKEN", t),
        None => c.env_remove("HP_CATALOG_TOKEN"),
    };
    c
}

/// Our rows for a query on the warehouse, rendered as the clients' are.
fn ours(warehouse: &Path, sql: &str) -> Vec<Value> {
    let (warehouse, sql) = (warehouse.to_path_buf(), sql.to_string());
    let batches = runtime().block_on(async move {
        let ctx = session_with(Warehouse::local(&warehouse).unwrap()).await.unwrap();
        let mut results = execute_sql(&ctx, &sql)
            .await
            .unwrap_or_else(|e| panic!("our query {sql:?} failed: {e}"));
        results.pop().unwrap().batches
    });
    sorted(batches.iter().flat_map(render_batch).collect())
}

/// `EXPLAIN FILES` of a query: the files selected.
fn files_selected(warehouse: &Path, query: &str) -> u64 {
    ours(warehouse, &format!("EXPLAIN FILES {query}"))
        .iter()
        .map(|r| {
            r["files"]
                .as_str()
                .unwrap()
                .split('/')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum()
}

/// Our CLI as a client of the server at `url` (`--catalog`), run in an empty
/// directory of its own (returned, to check it stayed empty), running `sql`.
fn our_client(url: &str, sql: &str) -> tempfile::TempDir {
    let elsewhere = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .current_dir(elsewhere.path())
        .args(["--catalog", url, "-c", sql])
        .output()
        .unwrap();
    assert!(o.status.success(), "{sql}: {}", text(&o.stderr));
    elsewhere
}

fn rows(v: &Value) -> Vec<Value> {
    sorted(v.as_array().unwrap().clone())
}

/// pyiceberg creates a namespace and a partitioned table, appends,
/// overwrites, deletes by filter, evolves schema and spec, time-travels,
/// renames and drops; after each step our engine reads the same rows and
/// prunes the same files.
#[test]
fn pyiceberg_through_the_catalog_and_ours_read_the_same() {
    let Some(python) = python("pyiceberg_through_the_catalog_and_ours_read_the_same") else {
        return;
    };
    let s = serve(None);
    let created = client(&python, &s.url, None, &["pyiceberg-create"]);
    assert_eq!(created["namespaces"], json!(["ns", "public"]));
    assert_eq!(created["tables"], json!(["ns.events"]));
    assert_eq!(rows(&created["rows"]).len(), 3);
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.events"), rows(&created["rows"]));
    let day2 = created["day2_files"].as_u64().unwrap();
    assert!(day2 < created["all_files"].as_u64().unwrap(), "{created}");
    assert_eq!(
        files_selected(
            &s.warehouse,
            "SELECT * FROM ns.events WHERE ts >= TIMESTAMP '2024-01-02 00:00:00'"
        ),
        day2
    );
    let first = created["snapshot"].as_i64().unwrap();

    let evolved = client(&python, &s.url, None, &["pyiceberg-evolve"]);
    assert_eq!(evolved["fields"], json!(["id", "ts", "name", "note"]));
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.events"), rows(&evolved["rows"]));
    let ids: Vec<i64> = rows(&evolved["rows"])
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "{evolved}");
    assert!(ids.contains(&1) && !ids.contains(&2) && ids.contains(&3) && ids.contains(&4));
    assert_eq!(
        ours(&s.warehouse, &format!("SELECT * FROM ns.\"events@{first}\"")),
        rows(&evolved["first"])
    );
    assert_eq!(rows(&evolved["first"]), rows(&created["rows"]));
    // The new spec partitions by name: one file holds 'd'.
    assert_eq!(evolved["name_d_files"], json!(1));
    assert_eq!(
        files_selected(&s.warehouse, "SELECT * FROM ns.events WHERE name = 'd'"),
        1
    );

    let renamed = client(&python, &s.url, None, &["pyiceberg-rename", "ns.events", "ns.renamed"]);
    assert_eq!(renamed["old_name"], json!("NoSuchTableError"));
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.renamed"), rows(&renamed["rows"]));

    // A drop without purge keeps the files; with purge they go.
    let kept = client(&python, &s.url, None, &["pyiceberg-drop", "ns.renamed", "false"]);
    assert_eq!(kept["tables"], json!([]));
    let data = s.warehouse.join("ns.db/events/data");
    assert!(data.exists(), "a drop without purge keeps the files");
    let o = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("--warehouse")
        .arg(&s.warehouse)
        .args(["-c", "SELECT * FROM ns.renamed"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "the dropped table is gone for us too");
}

/// DuckDB attaches the catalog without authorization, lists every table,
/// reads one of ours with a filter and inserts into it; we read its row.
/// (DuckDB 1.4.4 inserts into unpartitioned tables only: "INSERT into a
/// partitioned table is not supported yet".)
#[test]
fn duckdb_attaches_reads_and_inserts() {
    let Some(python) = python("duckdb_attaches_reads_and_inserts") else {
        return;
    };
    let s = serve(None);
    let setup = "CREATE TABLE events (id BIGINT, ts TIMESTAMP, name VARCHAR);
                 INSERT INTO events VALUES (1, TIMESTAMP '2024-01-01 10:00:00', 'a'), (2, TIMESTAMP '2024-01-02 10:00:00', 'b'), (3, TIMESTAMP '2024-01-03 10:00:00', 'c')";
    ours(&s.warehouse, setup);
    let duck = client(&python, &s.url, None, &["duckdb", "public.events"]);
    assert!(
        duck["tables"].as_array().unwrap().contains(&json!("public.events")),
        "{duck}"
    );
    let filtered = rows(&duck["filtered"]);
    assert_eq!(filtered.len(), 2, "{duck}");
    assert_eq!(
        ours(&s.warehouse, "SELECT * FROM events WHERE id >= 2 AND id < 100"),
        filtered
    );
    let after = rows(&duck["after_insert"]);
    assert_eq!(after.len(), 4, "{duck}");
    assert_eq!(ours(&s.warehouse, "SELECT * FROM events"), after);
    assert_eq!(
        ours(&s.warehouse, "SELECT name FROM events WHERE id = 100"),
        vec![json!({"name": "duck"})]
    );
}

/// Bad input gets the protocol's errors, and nothing is committed: unknown
/// namespaces and tables (404), malformed JSON, names that would leave the
/// warehouse and unknown updates (400), nested namespaces (406), failed
/// requirements (409), a missing token (401), an oversized body.
#[test]
fn bad_requests_get_the_error_model_and_change_nothing() {
    let Some(python) = python("bad_requests_get_the_error_model_and_change_nothing") else {
        return;
    };
    let token = "s3cret-token-value";
    let s = serve(Some(token));
    client(&python, &s.url, Some(token), &["pyiceberg-create"]);
    let before = ours(&s.warehouse, "SELECT * FROM ns.events");
    let errors = client(&python, &s.url, Some(token), &["errors"]);
    assert_eq!(
        errors["no_namespace"],
        json!([404, "NoSuchNamespaceException"]),
        "{errors}"
    );
    assert_eq!(errors["no_table"], json!([404, "NoSuchTableException"]), "{errors}");
    assert_eq!(errors["bad_json"], json!([400, "BadRequestException"]), "{errors}");
    assert_eq!(
        errors["nested"],
        json!([406, "UnsupportedOperationException"]),
        "{errors}"
    );
    assert_eq!(errors["traversal"], json!([400, "BadRequestException"]), "{errors}");
    assert_eq!(
        errors["unknown_update"],
        json!([400, "BadRequestException"]),
        "{errors}"
    );
    assert_eq!(
        errors["failed_requirement"],
        json!([409, "CommitFailedException"]),
        "{errors}"
    );
    assert_eq!(errors["no_token"], json!([401, "NotAuthorizedException"]), "{errors}");
    assert_eq!(errors["too_large"][0], json!(413), "{errors}");
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.events"), before);
    let props = ours(&s.warehouse, "SELECT count(*) AS n FROM ns.\"events$snapshots\"");
    assert_eq!(props, vec![json!({"n": 1})]);
}

/// `hidden-partitions serve` from the command line: it listens on
/// 127.0.0.1 by default, needs its token, and never prints it.
#[test]
fn the_serve_command_binds_locally_and_never_prints_its_token() {
    let Some(python) = python("the_serve_command_binds_locally_and_never_prints_its_token") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let token = "do-not-print-me-42";
    let mut child: Child = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("serve")
        .arg("--warehouse")
        .arg(dir.path().join("wh"))
        .args(["--port", "0"])
        .env("HIDDEN_PARTITIONS_TOKEN", token)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut banner = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut banner).unwrap();
    assert!(banner.contains("at http://127.0.0.1:"), "{banner}");
    assert!(banner.contains("a bearer token is required"), "{banner}");
    let url = banner
        .split("at ")
        .nth(1)
        .and_then(|rest| rest.split('/').nth(2))
        .map(|host| format!("http://{host}"))
        .unwrap();
    let created = client(&python, &url, Some(token), &["pyiceberg-create"]);
    assert_eq!(created["tables"], json!(["ns.events"]));
    let o = client_command(&python, &url, None, &["pyiceberg-read", "ns.events"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "no token, no table");
    child.kill().unwrap();
    let mut log = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut log).unwrap();
    let _ = child.wait();
    assert!(log.contains("POST /v1/namespaces/ns/tables 200"), "{log}");
    assert!(
        !log.contains(token) && !banner.contains(token),
        "the token was printed: {log}"
    );
}

/// Our engine (straight to the warehouse), pyiceberg and DuckDB (through
/// the catalog) append to one table at the same time, several rounds:
/// every row is there once. (Unpartitioned, for DuckDB's sake.)
#[test]
fn concurrent_appends_from_three_engines_lose_nothing() {
    let Some(python) = python("concurrent_appends_from_three_engines_lose_nothing") else {
        return;
    };
    let s = serve(None);
    ours(
        &s.warehouse,
        "CREATE TABLE events (id BIGINT, ts TIMESTAMP, name VARCHAR)",
    );
    let per_engine = 4;
    for round in 0..3 {
        let base = round * 1000;
        let py = client_command(
            &python,
            &s.url,
            None,
            &[
                "append",
                "public.events",
                "pyiceberg",
                &(base + 100).to_string(),
                &per_engine.to_string(),
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let duck = client_command(
            &python,
            &s.url,
            None,
            &[
                "append",
                "public.events",
                "duckdb",
                &(base + 200).to_string(),
                &per_engine.to_string(),
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        for i in 0..per_engine {
            let id = base + 300 + i;
            let o = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
                .arg("--warehouse")
                .arg(&s.warehouse)
                .args([
                    "-c",
                    &format!("INSERT INTO events VALUES ({id}, TIMESTAMP '2024-03-01 00:00:00', 'ours')"),
                ])
                .output()
                .unwrap();
            assert!(o.status.success(), "our insert: {}", text(&o.stderr));
        }
        for (engine, child) in [("pyiceberg", py), ("duckdb", duck)] {
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "{engine}: {}", text(&o.stderr));
        }
    }
    let all = ours(&s.warehouse, "SELECT id FROM events");
    let mut ids: Vec<i64> = all.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    ids.sort();
    let mut expected: Vec<i64> = (0..3)
        .flat_map(|round| {
            [100, 200, 300]
                .into_iter()
                .flat_map(move |start| (0..per_engine).map(move |i| round * 1000 + start + i))
        })
        .collect();
    expected.sort();
    assert_eq!(ids, expected, "every row once");
}

/// A change pyiceberg built on the table as it loaded it, committed after
/// another append without `assert-ref-snapshot-id`: an append lands on top
/// of the one made meanwhile; a delete is refused (409) and changes nothing.
#[test]
fn a_stale_append_is_rebased_and_a_stale_delete_refused() {
    let Some(python) = python("a_stale_append_is_rebased_and_a_stale_delete_refused") else {
        return;
    };
    let s = serve(None);
    ours(
        &s.warehouse,
        "CREATE TABLE events (id BIGINT, ts TIMESTAMP, name VARCHAR)",
    );
    ours(
        &s.warehouse,
        "INSERT INTO events VALUES (1, TIMESTAMP '2024-03-01 00:00:00', 'first')",
    );
    let ids = || -> Vec<i64> {
        let mut ids: Vec<i64> = ours(&s.warehouse, "SELECT id FROM events")
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect();
        ids.sort();
        ids
    };
    let appended = client(&python, &s.url, None, &["stale", "public.events", "append"]);
    assert_eq!(appended, json!({"committed": true, "error": null}));
    assert_eq!(ids(), vec![1, 901, 902], "the stale append is on top of the other one");

    let deleted = client(&python, &s.url, None, &["stale", "public.events", "delete"]);
    assert_eq!(deleted["committed"], json!(false), "{deleted}");
    let error = deleted["error"].as_str().unwrap();
    assert!(error.contains("was written on top of snapshot"), "{error}");
    assert_eq!(ids(), vec![1, 901, 901, 902], "the stale delete removed nothing");
}

/// An S3 warehouse: each table's `config` hands clients the store's
/// endpoint and region and never our credentials; with credential vending
/// asked for, pyiceberg reads the table from S3 with what it was handed.
#[test]
fn an_s3_warehouse_hands_clients_its_endpoint_not_its_credentials() {
    let s3 = match hidden_partitions::slt::S3Server::from_env() {
        Ok(Some(s3)) => s3,
        Ok(None) => {
            hidden_partitions::slt::skipped_without_s3(
                "an_s3_warehouse_hands_clients_its_endpoint_not_its_credentials",
            );
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let Some(python) = python("an_s3_warehouse_hands_clients_its_endpoint_not_its_credentials") else {
        return;
    };
    let rt = runtime();
    let prefix = s3.prefix("served");
    let warehouse = || Warehouse::open(&prefix, s3.options()).unwrap();
    rt.block_on(async {
        let ctx = session_with(warehouse()).await.unwrap();
        execute_sql(
            &ctx,
            "CREATE TABLE t (id BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts));
             INSERT INTO t VALUES (1, TIMESTAMP '2024-01-01 00:00:00'), (2, TIMESTAMP '2024-01-02 00:00:00')",
        )
        .await
        .unwrap();
    });
    for vend_credentials in [false, true] {
        let options = ServeOptions {
            port: 0,
            log_requests: false,
            vend_credentials,
            ..Default::default()
        };
        let (address, server) = rt.block_on(bind(warehouse(), options)).unwrap();
        rt.spawn(server);
        let url = format!("http://{address}");
        let body = rt.block_on(async {
            let answer = reqwest::get(format!("{url}/v1/namespaces/public/tables/t"))
                .await
                .unwrap();
            assert_eq!(answer.status().as_u16(), 200);
            answer.text().await.unwrap()
        });
        let load: Value = serde_json::from_str(&body).unwrap();
        let config = &load["config"];
        assert_eq!(config["s3.endpoint"], json!(s3.endpoint), "{config}");
        assert_eq!(config["client.region"], json!("us-east-1"), "{config}");
        assert_eq!(config["s3.path-style-access"], json!("true"), "{config}");
        assert!(
            load["metadata-location"].as_str().unwrap().starts_with("s3://"),
            "{}",
            load["metadata-location"]
        );
        if vend_credentials {
            assert_eq!(config["s3.access-key-id"], json!("hp-test-key"), "{config}");
            let read = client(&python, &url, None, &["pyiceberg-read", "public.t"]);
            assert_eq!(read["rows"].as_array().map(Vec::len), Some(2), "{read}");
        } else {
            assert!(
                !body.contains("hp-test-secret") && !body.contains("hp-test-key"),
                "credentials in a response: {body}"
            );
        }
    }
}

/// Staged creates that carry data commit: pyiceberg's `create_table_transaction` with an
/// append, and DuckDB's `CREATE TABLE … AS SELECT` through ATTACH (both write their files
/// where the staged create placed the table); a staged create never committed leaves the
/// name free for the next create.
#[test]
fn staged_creates_with_data_commit_and_abandoned_ones_leave_the_name_free() {
    let Some(python) = python("staged_creates_with_data_commit_and_abandoned_ones_leave_the_name_free") else {
        return;
    };
    let s = serve(None);
    client(&python, &s.url, None, &["pyiceberg-create"]);
    let staged = client(&python, &s.url, None, &["staged", "ns.st"]);
    assert_eq!(
        staged["created"],
        json!([{"id": 1, "name": "staged"}, {"id": 2, "name": "with data"}]),
        "{staged}"
    );
    assert_eq!(staged["exists_after_staging"], json!(false), "{staged}");
    assert_eq!(staged["recreated"], json!([{"id": 3, "name": "plain"}]), "{staged}");
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.st"), rows(&staged["created"]));
    assert_eq!(
        ours(&s.warehouse, "SELECT * FROM ns.st_abandoned"),
        rows(&staged["recreated"])
    );
    let duck = client(&python, &s.url, None, &["duckdb-ctas", "ns.dt"]);
    assert_eq!(
        duck["rows"],
        json!([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]),
        "{duck}"
    );
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.dt"), rows(&duck["rows"]));
}

/// pyiceberg's `overwrite(df, overwrite_filter=…)` on a table with our position deletes: its
/// commit lists our delete manifest as it read it (one snapshot of the commit rewrites it),
/// which is ours, not a delete file the client wrote.
#[test]
fn an_overwrite_over_our_position_deletes_commits() {
    let Some(python) = python("an_overwrite_over_our_position_deletes_commits") else {
        return;
    };
    let s = serve(None);
    client(&python, &s.url, None, &["pyiceberg-create"]);
    ours(
        &s.warehouse,
        "ALTER TABLE ns.events SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
    );
    ours(
        &s.warehouse,
        "INSERT INTO ns.events VALUES (20, TIMESTAMP '2024-01-09 01:00:00', 'x'), (20, TIMESTAMP '2024-01-09 02:00:00', 'y')",
    );
    ours(&s.warehouse, "DELETE FROM ns.events WHERE name = 'x'");
    let deletes = ours(
        &s.warehouse,
        "SELECT count(*) AS n FROM ns.\"events$files\" WHERE content <> 'data'",
    );
    assert_eq!(deletes, vec![json!({"n": 1})]);
    // The file the delete file names leaves the table: our commit of the client's first
    // snapshot rewrites the delete manifest, which its second snapshot lists as it was.
    let after = client(&python, &s.url, None, &["overwrite", "ns.events", "id = 20"]);
    let ids: Vec<i64> = after["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![1, 2, 3, 500], "{after}");
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.events"), rows(&after["rows"]));
}

/// `ALTER TABLE … ADD COLUMN` through our own client of this server (`--catalog http://…`):
/// the client sends `last-column-id` as the new highest id, as the spec says, and the server
/// takes it so; pyiceberg sees the column.
#[test]
fn add_column_through_our_client_of_our_server() {
    let Some(python) = python("add_column_through_our_client_of_our_server") else {
        return;
    };
    let s = serve(None);
    client(&python, &s.url, None, &["pyiceberg-create"]);
    let elsewhere = our_client(
        &s.url,
        "ALTER TABLE ns.events ADD COLUMN note VARCHAR; INSERT INTO ns.events VALUES (7, TIMESTAMP '2024-01-07 00:00:00', 'seven', 'noted')",
    );
    assert!(
        std::fs::read_dir(elsewhere.path()).unwrap().next().is_none(),
        "a REST catalog's session made files in the working directory"
    );
    let read = client(&python, &s.url, None, &["pyiceberg-read", "ns.events", "id = 7"]);
    assert_eq!(read["rows"][0]["note"], json!("noted"), "{read}");
}

/// Other engines' merge-on-read deletes through the server: DuckDB's DELETE and UPDATE
/// (position delete files) commit, and pyiceberg, DuckDB and our engine read the same rows;
/// our statements on the table afterwards (copy-on-write and merge-on-read DML, MERGE,
/// optimize) apply them. Delete files committed through pyiceberg's manifest writer are kept
/// when they prove what they delete, refused (nothing changed) when they name two data files,
/// a file of another table, a position past the end, or delete by equality.
#[test]
fn other_engines_deletes_commit_and_our_statements_apply_them() {
    let Some(python) = python("other_engines_deletes_commit_and_our_statements_apply_them") else {
        return;
    };
    let s = serve(None);
    ours(&s.warehouse, "CREATE SCHEMA ns");
    ours(&s.warehouse, "CREATE TABLE ns.d (id BIGINT, name VARCHAR)");
    ours(
        &s.warehouse,
        "INSERT INTO ns.d SELECT value, concat('n', CAST(value AS VARCHAR)) FROM generate_series(1, 20)",
    );
    ours(
        &s.warehouse,
        "INSERT INTO ns.d SELECT value, concat('m', CAST(value AS VARCHAR)) FROM generate_series(21, 30)",
    );
    let duck = client(
        &python,
        &s.url,
        None,
        &[
            "duckdb-dml",
            "ns.d",
            "DELETE FROM {t} WHERE id % 5 = 0",
            "UPDATE {t} SET name = 'duck' WHERE id = 7",
            "DELETE FROM {t} WHERE id = 23",
        ],
    );
    assert_eq!(duck["answers"], json!([6, 1, 1]), "{duck}");
    let expected: Vec<Value> = (1..=30)
        .filter(|i| i % 5 != 0 && *i != 23)
        .map(|i| {
            let name = match i {
                7 => "duck".to_string(),
                i if i <= 20 => format!("n{i}"),
                i => format!("m{i}"),
            };
            json!({"id": i, "name": name})
        })
        .collect();
    let expected = sorted(expected);
    assert_eq!(rows(&duck["rows"]), expected);
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.d"), expected);
    let read = client(&python, &s.url, None, &["pyiceberg-read", "ns.d"]);
    assert_eq!(rows(&read["rows"]), expected, "{read}");
    let filtered = client(&python, &s.url, None, &["pyiceberg-read", "ns.d", "id < 12"]);
    assert_eq!(
        rows(&filtered["rows"]),
        expected
            .iter()
            .filter(|r| r["id"].as_i64().unwrap() < 12)
            .cloned()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        ours(
            &s.warehouse,
            "SELECT count(*) AS n FROM ns.\"d$files\" WHERE content = 'position_deletes'"
        ),
        // Two for the first DELETE (one per data file), one each for the UPDATE and the DELETE.
        vec![json!({"n": 4})]
    );

    // Our statements on the table holding DuckDB's deletes: through our own client of the
    // server (the table is another catalog's to it; its reads apply the deletes), then on
    // the warehouse.
    our_client(&s.url, "UPDATE ns.d SET name = 'ours' WHERE id = 1");
    ours(&s.warehouse, "UPDATE ns.d SET name = 'ours' WHERE id = 21");
    ours(
        &s.warehouse,
        "ALTER TABLE ns.d SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')",
    );
    ours(&s.warehouse, "DELETE FROM ns.d WHERE id IN (2, 22)");
    ours(
        &s.warehouse,
        "MERGE INTO ns.d t USING (SELECT 3 AS id UNION ALL SELECT 40) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = 'merged' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new')",
    );
    let mut after: Vec<Value> = expected
        .iter()
        .filter(|r| ![2, 22].contains(&r["id"].as_i64().unwrap()))
        .map(|r| match r["id"].as_i64().unwrap() {
            1 | 21 => json!({"id": r["id"], "name": "ours"}),
            3 => json!({"id": 3, "name": "merged"}),
            _ => r.clone(),
        })
        .collect();
    after.push(json!({"id": 40, "name": "new"}));
    let after = sorted(after);
    let check = |step: &str| {
        assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.d"), after, "ours after {step}");
        let read = client(&python, &s.url, None, &["pyiceberg-read", "ns.d"]);
        assert_eq!(rows(&read["rows"]), after, "pyiceberg after {step}");
        let duck = client(&python, &s.url, None, &["duckdb-dml", "ns.d"]);
        assert_eq!(rows(&duck["rows"]), after, "DuckDB after {step}");
    };
    check("our DML");
    ours(&s.warehouse, "ALTER TABLE ns.d EXECUTE optimize");
    check("optimize");
    assert_eq!(
        ours(
            &s.warehouse,
            "SELECT count(*) AS n FROM ns.\"d$files\" WHERE content = 'position_deletes'"
        ),
        vec![json!({"n": 0})]
    );

    // Delete files written through pyiceberg's manifest writer.
    ours(&s.warehouse, "CREATE TABLE ns.c (id BIGINT, name VARCHAR)");
    ours(
        &s.warehouse,
        "INSERT INTO ns.c SELECT value, 'c' FROM generate_series(0, 9)",
    );
    ours(
        &s.warehouse,
        "INSERT INTO ns.c SELECT value, CASE WHEN value = 15 THEN NULL ELSE 'c' END FROM generate_series(10, 19)",
    );
    ours(&s.warehouse, "CREATE TABLE ns.other (id BIGINT)");
    ours(&s.warehouse, "INSERT INTO ns.other VALUES (1)");
    let bad = client(&python, &s.url, None, &["client-deletes", "ns.c", "ns.other"]);
    assert_eq!(bad["good"], json!({"error": null, "changed": true}), "{bad}");
    assert_eq!(rows(&bad["rows"]).len(), 18, "{bad}");
    for (case, says) in [
        ("two_files", "deletes rows of 2 data files"),
        ("other_table", "outside the table location"),
        ("past_end", "which has 10 rows"),
        ("unknown_column", "column id 99, which is not a top-level column"),
    ] {
        let error = bad[case]["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{case} committed: {bad}"));
        assert!(error.contains("BadRequest") && error.contains(says), "{case}: {error}");
        assert_eq!(bad[case]["changed"], json!(false), "{case}: {bad}");
    }
    // Equality deletes: ids 3 and 13 leave (1000 matches nothing), then the row whose name is
    // NULL (NULL matches NULL in an equality delete).
    assert_eq!(bad["equality"], json!({"error": null, "changed": true}), "{bad}");
    let left: Vec<i64> = rows(&bad["equality_rows"])
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(left.len(), 16, "{bad}");
    assert!(!left.contains(&3) && !left.contains(&13), "{bad}");
    assert_eq!(bad["equality_null"], json!({"error": null, "changed": true}), "{bad}");
    let expected: Vec<Value> = rows(&bad["equality_rows"])
        .into_iter()
        .filter(|r| r["id"] != json!(15))
        .collect();
    assert_eq!(expected.len(), 15, "{bad}");
    assert_eq!(rows(&bad["null_rows"]), expected);
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.c"), expected);
    let duck = client(&python, &s.url, None, &["duckdb-dml", "ns.c"]);
    assert_eq!(rows(&duck["rows"]), expected);
    // The table holds position deletes only: the equality deletes became positions.
    assert_eq!(
        ours(
            &s.warehouse,
            "SELECT count(*) AS n, sum(record_count) AS deleted FROM ns.\"c$files\" WHERE content = 'position_deletes'"
        ),
        vec![json!({"n": 4, "deleted": 5})]
    );

    // An equality delete in one partition deletes nothing in another.
    ours(
        &s.warehouse,
        "CREATE TABLE ns.p (id BIGINT, region VARCHAR) PARTITIONED BY (region)",
    );
    ours(
        &s.warehouse,
        "INSERT INTO ns.p VALUES (1, 'a'), (2, 'a'), (1, 'b'), (2, 'b')",
    );
    let scoped = client(&python, &s.url, None, &["partition-equality", "ns.p"]);
    let expected = sorted(vec![
        json!({"id": 2, "region": "a"}),
        json!({"id": 1, "region": "b"}),
        json!({"id": 2, "region": "b"}),
    ]);
    assert_eq!(rows(&scoped["rows"]), expected, "{scoped}");
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.p"), expected);
}

/// Deletion vectors another engine commits (pyiceberg with the v3 writers of
/// tests/data/make_iceberg.py; DuckDB 1.4.4 does not write v3): one is kept and applied by
/// every reader, one replacing it (the old one marked DELETED in the client's rewrite of our
/// delete manifest) takes its place, and a second live vector for the same data file is
/// refused with nothing changed.
#[test]
fn other_engines_deletion_vectors_commit_one_per_data_file() {
    let Some(python) = python("other_engines_deletion_vectors_commit_one_per_data_file") else {
        return;
    };
    let s = serve(None);
    ours(&s.warehouse, "CREATE SCHEMA ns");
    ours(
        &s.warehouse,
        "CREATE TABLE ns.v (id BIGINT, name VARCHAR) TBLPROPERTIES ('format-version' = '3')",
    );
    ours(
        &s.warehouse,
        "INSERT INTO ns.v SELECT value, 'a' FROM generate_series(0, 9)",
    );
    ours(
        &s.warehouse,
        "INSERT INTO ns.v SELECT value, 'b' FROM generate_series(10, 19)",
    );
    let dv = client(&python, &s.url, None, &["client-dv", "ns.v"]);
    for (step, rows_left) in [("first", 18), ("replaced", 17)] {
        assert_eq!(dv[step]["error"], json!(null), "{step}: {dv}");
        assert_eq!(dv[step]["changed"], json!(true), "{step}: {dv}");
        assert_eq!(rows(&dv[step]["rows"]).len(), rows_left, "{step}: {dv}");
    }
    let error = dv["second"]["error"]
        .as_str()
        .unwrap_or_else(|| panic!("committed: {dv}"));
    assert!(
        error.contains("BadRequest") && error.contains("already has a deletion vector"),
        "{error}"
    );
    assert_eq!(dv["second"]["changed"], json!(false), "{dv}");
    let expected = rows(&dv["replaced"]["rows"]);
    assert_eq!(ours(&s.warehouse, "SELECT * FROM ns.v"), expected);
    let duck = client(&python, &s.url, None, &["duckdb-dml", "ns.v"]);
    assert_eq!(rows(&duck["rows"]), expected);
    assert_eq!(
        ours(
            &s.warehouse,
            "SELECT file_format, record_count FROM ns.\"v$files\" WHERE content = 'position_deletes'"
        ),
        vec![json!({"file_format": "PUFFIN", "record_count": 3})]
    );
    // Our merge-on-read DELETE merges its rows into the client's vector.
    ours(
        &s.warehouse,
        "ALTER TABLE ns.v SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
    );
    ours(&s.warehouse, "DELETE FROM ns.v WHERE id IN (0, 10)");
    let read = client(&python, &s.url, None, &["pyiceberg-read", "ns.v"]);
    assert_eq!(rows(&read["rows"]).len(), 15, "{read}");
    assert_eq!(
        ours(&s.warehouse, "SELECT count(*) AS n FROM ns.v"),
        vec![json!({"n": 15})]
    );
}

/// pyiceberg creates a table with a sort order and replaces it with
/// `update_sort_order`; it reads back what it set, our SHOW CREATE TABLE
/// shows it, and our INSERT writes files sorted by it, with its id.
#[test]
fn pyiceberg_sort_orders_are_the_tables() {
    let Some(python) = python("pyiceberg_sort_orders_are_the_tables") else {
        return;
    };
    let s = serve(None);
    let seen = client(&python, &s.url, None, &["sort-order", "so.t"]);
    assert_eq!(
        seen["created"],
        json!([1, [[1, "identity", "desc", "nulls-last"]]]),
        "{seen}"
    );
    assert_eq!(
        seen["updated"],
        json!([2, [[2, "identity", "asc", "nulls-last"]]]),
        "{seen}"
    );
    let shown = ours(&s.warehouse, "SHOW CREATE TABLE so.t");
    assert!(
        format!("{shown:?}").contains("ORDERED BY (name ASC NULLS LAST)"),
        "{shown:?}"
    );
    ours(&s.warehouse, "INSERT INTO so.t VALUES (1, 'b'), (2, 'a'), (3, NULL)");
    assert_eq!(
        ours(&s.warehouse, "SELECT DISTINCT sort_order_id FROM so.\"t$data_files\""),
        vec![json!({"sort_order_id": 2})]
    );
}
