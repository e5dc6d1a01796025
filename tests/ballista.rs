//! hidden-partitions tables on Apache Ballista (cargo feature `ballista`).
//!
//! - A subset of the `.slt` suites runs on an in-process cluster and must
//!   give the local rows and the local `files=S/T`.
//! - A scheduler and two executors are started as processes (the
//!   `hidden-partitions-scheduler` / `-executor` binaries) on 127.0.0.1; a
//!   star join over a table of a few thousand files runs on them, on a local
//!   warehouse and on the S3 test server (the executors get the store's
//!   options from the plan only). Each executor must have read table files.
//! - Join-key pruning (`optimizer::join_keys`): inner, semi, anti, outer,
//!   date, string, multi-key and cast joins give DuckDB's rows (reading the
//!   same tables through its iceberg extension) in a local session with
//!   dynamic filters on and off, with the rule off, on an in-process cluster
//!   and on scheduler and executor processes; the cluster reads only the
//!   fact files the keys select.
//! - A scheduler without our codecs, a table no cluster node can reach, and
//!   executors whose endpoint for the store is wrong fail with errors that
//!   say so.
#![cfg(feature = "ballista")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use hidden_partitions::ballista::{LocalCluster, LocalClusterConfig};
use hidden_partitions::slt::{S3Server, run_file_on_ballista, scan_descriptions, skipped_without_s3};
use hidden_partitions::{StorageOptions, Warehouse, execute_sql, session_with};
use serde_json::Value;

mod common;
use common::readers::{duckdb_rows, python, render_batch, sorted};

/// The suites that cover pruning, evolution, joins, TopK, Variant and stored views.
const SUITES: &[&str] = &[
    "pruning.slt",
    "partition_evolution.slt",
    "schema_evolution.slt",
    "runtime_pruning.slt",
    "join_key_pruning.slt",
    "projection.slt",
    "transforms/bucket.slt",
    "transforms/day.slt",
    "variant/variant_get.slt",
    "variant/variant_table.slt",
    "variant/variant_json.slt",
    "views.slt",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn slt_suites_on_an_in_process_cluster() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sql-tests");
    let mut failed = Vec::new();
    for suite in SUITES {
        if let Err(e) = run_file_on_ballista(&root.join(suite)).await {
            failed.push(format!("{suite}:\n{e}"));
        }
    }
    assert!(failed.is_empty(), "on Ballista:\n{}", failed.join("\n\n"));
}

/// Rows of the last statement of `sql`, pretty-printed.
async fn rows(ctx: &SessionContext, sql: &str) -> String {
    let results = execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let last = results.last().expect("a result");
    pretty_format_batches(&last.batches).expect("printable").to_string()
}

fn cluster_config(executors: usize, executor_args: &[String]) -> LocalClusterConfig {
    LocalClusterConfig {
        scheduler_bin: env!("CARGO_BIN_EXE_hidden-partitions-scheduler").into(),
        executor_bin: env!("CARGO_BIN_EXE_hidden-partitions-executor").into(),
        executors,
        concurrent_tasks: 2,
        executor_args: executor_args.to_vec(),
        scheduler_args: vec![],
    }
}

fn start_cluster(dir: &Path, executor_args: &[String]) -> LocalCluster {
    LocalCluster::start(&cluster_config(2, executor_args), dir).expect("a scheduler and two executors")
}

/// Files under `dir` (shuffle output an executor wrote for its tasks).
fn files_under(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| {
            let p = e.path();
            if p.is_dir() { files_under(&p) } else { 1 }
        })
        .sum()
}

const DAYS: u32 = 2000;

/// A star schema: `sales` with one file per day (2,000 files), `stores`.
async fn create_star(ctx: &SessionContext) {
    execute_sql(
        ctx,
        &format!(
            "CREATE TABLE stores (id BIGINT, region VARCHAR);
             INSERT INTO stores VALUES (0, 'north'), (1, 'south'), (2, 'north'), (3, 'east');
             CREATE TABLE sales (id BIGINT, store_id BIGINT, amount BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts));
             INSERT INTO sales SELECT value, value % 4, value % 97, to_timestamp_micros(value * 8640000000)
               FROM generate_series(0, {}) AS t(value);",
            DAYS * 10 - 1
        ),
    )
    .await
    .expect("star schema");
}

const STAR_JOIN: &str = "SELECT s.region, count(*) AS n, sum(f.amount) AS amount
    FROM sales f JOIN stores s ON f.store_id = s.id
    WHERE f.ts >= '1971-01-01' AND f.ts < '1971-04-01' AND s.region = 'north'
    GROUP BY s.region ORDER BY s.region";

async fn star_join_on_cluster(warehouse: Warehouse, reopen: impl Fn() -> Warehouse, executor_options: &[String]) {
    let dir = std::env::temp_dir().join(format!("hp-ballista-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let local = session_with(warehouse).await.expect("local session");
    create_star(&local).await;
    let expected = rows(&local, STAR_JOIN).await;
    let local_plan = rows(&local, &format!("EXPLAIN {STAR_JOIN}")).await;
    let local_scans = scan_descriptions(local_plan.lines());

    let cluster = start_cluster(&dir, executor_options);
    let remote = hidden_partitions::ballista::remote(cluster.url(), reopen())
        .await
        .expect("client of the cluster");
    let started = Instant::now();
    assert_eq!(rows(&remote, STAR_JOIN).await, expected, "the cluster's rows");
    eprintln!("star join on the cluster: {:?}", started.elapsed());

    // The scheduler planned with our rule: the same fact files, a fraction
    // of all. The stores' rows (read once, for their keys) travel in the
    // plan, and the join builds them in each task of the fact scan's stage.
    let analyzed = rows(&remote, &format!("EXPLAIN ANALYZE {STAR_JOIN}")).await;
    let cluster_scans = scan_descriptions(analyzed.lines());
    let fact_scans: Vec<String> = local_scans
        .iter()
        .filter(|s| !s.contains("table=stores"))
        .cloned()
        .collect();
    assert_eq!(cluster_scans, fact_scans, "scans on the cluster:\n{analyzed}");
    assert!(analyzed.contains("BuildInTasksExec"), "{analyzed}");
    assert!(
        cluster_scans.iter().any(|s| s.contains("table=sales, files=90/2000")),
        "pruned to one quarter of a year: {cluster_scans:?}"
    );

    // EXPLAIN FILES plans in the client with the same rule; ANALYZE cannot
    // count files opened by other processes and says so.
    let planned = rows(&remote, &format!("EXPLAIN FILES {STAR_JOIN}")).await;
    assert!(
        planned.lines().any(|l| l.contains("sales") && l.contains("90/2000")),
        "{planned}"
    );
    let err = execute_sql(&remote, &format!("EXPLAIN FILES ANALYZE {STAR_JOIN}"))
        .await
        .expect_err("EXPLAIN FILES ANALYZE on a cluster");
    assert!(err.to_string().contains("Use EXPLAIN FILES"), "{err}");

    // Both executors run tasks (each writes shuffle output). An executor
    // registers with the scheduler a moment after it starts: run the query
    // again until both have had work, checking the rows every time.
    let deadline = Instant::now() + Duration::from_secs(60);
    while cluster.work_dirs().iter().any(|d| files_under(d) == 0) {
        assert!(
            Instant::now() < deadline,
            "within 60 s, only these executors ran tasks: {:?}",
            cluster
                .work_dirs()
                .iter()
                .map(|d| files_under(d) > 0)
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(rows(&remote, STAR_JOIN).await, expected, "the cluster's rows");
    }

    // INSERT runs on the cluster and commits once; the local session sees it.
    execute_sql(
        &remote,
        "INSERT INTO sales VALUES (-1, 0, 5, TIMESTAMP '1971-02-01 12:34:56')",
    )
    .await
    .expect("INSERT on the cluster");
    let after = rows(
        &local,
        "SELECT count(*) AS n FROM sales WHERE ts = TIMESTAMP '1971-02-01 12:34:56'",
    )
    .await;
    assert!(after.contains("| 1 |"), "{after}");
    // Row-level writes are refused with the alternative.
    // Row-level statements are refused by the client before any job is
    // sent, and change nothing.
    for statement in [
        "DELETE FROM sales WHERE id = -1",
        "UPDATE sales SET amount = 1 WHERE id = -1",
        "MERGE INTO sales t USING (SELECT -1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE",
    ] {
        let err = execute_sql(&remote, statement).await.expect_err(statement);
        let text = err.to_string();
        assert!(
            text.contains("run in a local session") && text.contains("not sent to the Ballista cluster"),
            "{statement}: {text}"
        );
    }
    let still = rows(
        &local,
        "SELECT count(*) AS n FROM sales WHERE ts = TIMESTAMP '1971-02-01 12:34:56'",
    )
    .await;
    assert!(still.contains("| 1 |"), "{still}");

    // Each executor read table files from the store itself.
    let reads = cluster.stop().expect("the executors stop and say what they read");
    assert!(reads.iter().all(|r| r.files > 0 && r.bytes > 0), "{reads:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn star_join_on_scheduler_and_two_executor_processes() {
    let dir = std::env::temp_dir().join(format!("hp-ballista-wh-{}", uuid::Uuid::new_v4()));
    let wh = dir.join("warehouse");
    star_join_on_cluster(Warehouse::local(&wh).unwrap(), || Warehouse::local(&wh).unwrap(), &[]).await;
    let _ = std::fs::remove_dir_all(&dir);

    match S3Server::from_env().expect("S3 test server configuration") {
        Some(server) => {
            let prefix = server.prefix("ballista");
            let options = server.options();
            let open = || Warehouse::open(&prefix, options.clone()).unwrap();
            // The executors have no options of their own: the table's travel with the plan.
            star_join_on_cluster(open(), open, &[]).await;
        }
        None => skipped_without_s3("the Ballista process test on S3"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scheduler_without_our_codecs_is_named() {
    let dir = std::env::temp_dir().join(format!("hp-ballista-plain-{}", uuid::Uuid::new_v4()));
    let wh = dir.join("warehouse");
    let local = session_with(Warehouse::local(&wh).unwrap()).await.unwrap();
    execute_sql(&local, "CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1)")
        .await
        .unwrap();
    // Ballista's own scheduler, with its default codecs.
    let address = ballista_scheduler::standalone::new_standalone_scheduler()
        .await
        .expect("a plain scheduler");
    let output = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .args([
            "--warehouse",
            &wh.display().to_string(),
            "--ballista",
            &format!("df://127.0.0.1:{}", address.port()),
            "-c",
            "SELECT * FROM t",
        ])
        .output()
        .expect("the CLI runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("without the hidden-partitions codecs") && stderr.contains("hidden-partitions-scheduler"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_table_the_cluster_cannot_reach_is_refused_clearly() {
    let dir = std::env::temp_dir().join(format!("hp-ballista-mem-{}", uuid::Uuid::new_v4()));
    let cluster = start_cluster(&dir, &[]);
    // memory:// lives in this process only: no scheduler or executor sees it.
    let wh = || Warehouse::open(&format!("memory:///{}", uuid::Uuid::new_v4()), StorageOptions::new()).unwrap();
    let warehouse = wh();
    let local = session_with(warehouse.clone()).await.unwrap();
    execute_sql(&local, "CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1)")
        .await
        .unwrap();
    let remote = hidden_partitions::ballista::remote(cluster.url(), warehouse)
        .await
        .unwrap();
    let err = execute_sql(&remote, "SELECT * FROM t")
        .await
        .expect_err("unreachable store");
    assert!(err.to_string().contains("needs the table on a shared store"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_executor_that_cannot_reach_the_store_fails_the_query_clearly() {
    let Some(server) = S3Server::from_env().expect("S3 test server configuration") else {
        return skipped_without_s3("the Ballista test of an executor that cannot reach S3");
    };
    let prefix = server.prefix("ballista-unreachable");
    let options = server.options();
    let open = || Warehouse::open(&prefix, options.clone()).unwrap();
    let local = session_with(open()).await.unwrap();
    execute_sql(&local, "CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1)")
        .await
        .unwrap();
    // The executors' own endpoint wins over the table's: nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let dir = std::env::temp_dir().join(format!("hp-ballista-unreachable-{}", uuid::Uuid::new_v4()));
    let cluster = start_cluster(
        &dir,
        &[
            "--storage-option".into(),
            format!("aws_endpoint=http://127.0.0.1:{closed}"),
            "--storage-option".into(),
            "aws_allow_http=true".into(),
        ],
    );
    let remote = hidden_partitions::ballista::remote(cluster.url(), open())
        .await
        .unwrap();
    let err = execute_sql(&remote, "SELECT * FROM t")
        .await
        .expect_err("the executors cannot reach the store");
    let message = hidden_partitions::ballista::readable_cluster_error(&err.to_string());
    assert!(
        message.contains("cannot read") && message.contains(&format!("127.0.0.1:{closed}")),
        "{message}"
    );
    // The table is unchanged and readable where the store is reachable.
    assert!(rows(&local, "SELECT count(*) AS n FROM t").await.contains("| 1 |"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Facts partitioned by the join keys' transforms (bucket, truncate,
/// month), and small dimensions with NULL keys.
const JOIN_TABLES: &str = "
    CREATE TABLE jk_fact (id BIGINT, customer_id BIGINT, code VARCHAR, d DATE, amount BIGINT)
      PARTITIONED BY (bucket(8, customer_id), truncate(2, code), month(d));
    INSERT INTO jk_fact SELECT value, CASE WHEN value % 97 = 0 THEN NULL ELSE value % 50 END,
           'c' || CAST(value % 30 AS VARCHAR), DATE '2024-01-01' + CAST(value % 200 AS INT), value % 13
      FROM generate_series(0, 2999) AS t(value);
    CREATE TABLE jk_customers (customer_id BIGINT, tier VARCHAR, code VARCHAR);
    INSERT INTO jk_customers VALUES (3, 'gold', 'c3'), (17, 'gold', 'c9'), (NULL, 'gold', 'c1'), (4, 'basic', 'c4'),
      (5, 'basic', 'c5'), (60, 'gold', 'c0');
    CREATE TABLE jk_days (d DATE, holiday BOOLEAN);
    INSERT INTO jk_days VALUES (DATE '2024-01-01', true), (DATE '2024-03-15', true), (DATE '2024-03-16', false),
      (NULL, true);
    CREATE TABLE jk_small (customer_id INT);
    INSERT INTO jk_small VALUES (3), (NULL), (9);
    CREATE TABLE jk_ratios (customer_id DOUBLE);
    INSERT INTO jk_ratios VALUES (3.0), (3.5), (NULL)";

/// Join queries over `JOIN_TABLES`, each in SQL both DataFusion and DuckDB
/// run, or with DuckDB's own text when it needs one.
const JOIN_QUERIES: &[(&str, Option<&str>)] = &[
    // inner: the fact side pruned by the gold customers' buckets
    (
        "SELECT count(*) AS n, CAST(sum(f.amount) AS BIGINT) AS s FROM jk_fact f
           JOIN jk_customers c ON f.customer_id = c.customer_id WHERE c.tier = 'gold'",
        None,
    ),
    // semi
    (
        "SELECT count(*) AS n FROM jk_fact f WHERE f.code IN (SELECT code FROM jk_customers WHERE tier = 'gold')",
        None,
    ),
    // anti: nothing pruned on the preserved side
    (
        "SELECT count(*) AS n FROM jk_fact f
           WHERE NOT EXISTS (SELECT 1 FROM jk_customers c WHERE c.customer_id = f.customer_id AND c.tier = 'gold')",
        None,
    ),
    // left: the fact side is preserved
    (
        "SELECT count(*) AS n, count(c.tier) AS matched FROM jk_fact f
           LEFT JOIN (SELECT * FROM jk_customers WHERE tier = 'gold') c ON f.customer_id = c.customer_id",
        None,
    ),
    // right: the fact side is not preserved
    (
        "SELECT count(*) AS n, count(f.id) AS matched FROM jk_fact f
           RIGHT JOIN (SELECT * FROM jk_customers WHERE tier = 'gold') c ON f.customer_id = c.customer_id",
        None,
    ),
    // full
    (
        "SELECT count(*) AS n, count(f.id) AS facts, count(c.tier) AS customers FROM jk_fact f
           FULL JOIN (SELECT * FROM jk_customers WHERE tier = 'gold') c ON f.customer_id = c.customer_id",
        None,
    ),
    // a date key through month(d). DuckDB 1.4.4's iceberg_scan finds no
    // rows for a filter on a date partitioned by month (also in tables
    // pyiceberg writes), so it compares the dates as text.
    (
        "SELECT count(*) AS n FROM jk_fact f JOIN jk_days h ON f.d = h.d WHERE h.holiday",
        Some(
            "SELECT count(*) AS n FROM jk_fact f JOIN jk_days h ON CAST(f.d AS VARCHAR) = CAST(h.d AS VARCHAR)
               WHERE h.holiday",
        ),
    ),
    // two keys
    (
        "SELECT count(*) AS n FROM jk_fact f JOIN jk_customers c ON f.customer_id = c.customer_id AND f.code = c.code",
        None,
    ),
    // an INT key against a BIGINT column: the join casts the key (exactly)
    // to the column's type, and the keys prune
    (
        "SELECT count(*) AS n FROM jk_fact f JOIN jk_small s ON f.customer_id = s.customer_id",
        None,
    ),
    // a DOUBLE key: the join casts the column, whose files are not pruned
    (
        "SELECT count(*) AS n FROM jk_fact f JOIN jk_ratios r ON f.customer_id = r.customer_id",
        None,
    ),
    // keys through functions of the fact column (issue 50): each inverts
    // into ranges of `d` and prunes by month(d)
    (
        "SELECT count(*) AS n FROM jk_fact f JOIN jk_days h ON date_trunc('month', f.d) = date_trunc('month', h.d)
           WHERE h.holiday",
        None,
    ),
    (
        "SELECT count(*) AS n FROM jk_fact f JOIN jk_days h ON EXTRACT(YEAR FROM f.d) = EXTRACT(YEAR FROM h.d)
           WHERE h.holiday",
        None,
    ),
    (
        "SELECT count(*) AS n FROM jk_fact f JOIN jk_days h ON CAST(f.d AS TIMESTAMP) = CAST(h.d AS TIMESTAMP)
           WHERE h.holiday",
        None,
    ),
    // keys that are not invertible: never used for pruning
    (
        "SELECT count(*) AS n FROM jk_fact f JOIN jk_small s ON f.customer_id + 1 = s.customer_id",
        None,
    ),
    (
        "SELECT count(*) AS n FROM jk_fact f JOIN jk_customers c ON upper(f.code) = upper(c.code) WHERE c.tier = 'gold'",
        None,
    ),
];

/// Our rows of `sql`, rendered as the DuckDB reader renders its rows.
async fn rendered(ctx: &SessionContext, sql: &str) -> Vec<Value> {
    let results = execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    sorted(
        results
            .last()
            .expect("a result")
            .batches
            .iter()
            .flat_map(render_batch)
            .collect(),
    )
}

/// The fact files `EXPLAIN FILES` plans for `sql` (`selected/total (keys)`).
async fn fact_files(ctx: &SessionContext, sql: &str) -> String {
    let planned = rows(ctx, &format!("EXPLAIN FILES {sql}")).await;
    planned
        .lines()
        .filter(|l| l.contains("jk_fact"))
        .map(|l| l.split('|').nth(3).unwrap_or_default().trim().to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn join_key_pruning_gives_duckdbs_rows_locally_and_on_clusters() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("warehouse");
    let open = || Warehouse::local(&wh).unwrap();
    let local = session_with(open()).await.unwrap();
    execute_sql(&local, JOIN_TABLES).await.expect("the join tables");

    // DuckDB reads the same tables through its iceberg extension.
    let expected: Option<Vec<Vec<Value>>> =
        python("join_key_pruning_gives_duckdbs_rows_locally_and_on_clusters").map(|py| {
            let tables: Vec<(&str, String)> = ["jk_fact", "jk_customers", "jk_days", "jk_small", "jk_ratios"]
                .into_iter()
                .map(|t| (t, wh.join(t).display().to_string()))
                .collect();
            let queries: Vec<&str> = JOIN_QUERIES
                .iter()
                .map(|(ours, duckdb)| duckdb.unwrap_or(ours))
                .collect();
            duckdb_rows(&py, &tables, &queries).into_iter().map(sorted).collect()
        });
    let reference = match expected {
        Some(duckdb) => duckdb,
        None => {
            let mut ours = Vec::new();
            for (sql, _) in JOIN_QUERIES {
                ours.push(rendered(&local, sql).await);
            }
            ours
        }
    };
    let check = async |ctx: &SessionContext, setup: &str| {
        for ((sql, _), want) in JOIN_QUERIES.iter().zip(&reference) {
            assert_eq!(&rendered(ctx, sql).await, want, "{setup}: {sql}");
        }
    };
    let set = async |ctx: &SessionContext, sql: &str| {
        execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    };
    check(&local, "local").await;
    set(
        &local,
        "SET datafusion.optimizer.enable_dynamic_filter_pushdown = false",
    )
    .await;
    check(&local, "local, no dynamic filters").await;
    set(&local, "SET hidden_partitions.join_prune_max_keys = 0").await;
    check(&local, "local, neither").await;
    set(&local, "SET hidden_partitions.join_prune_max_keys = 2").await;
    check(&local, "local, at most two keys").await;

    // What the keys keep: the inner join reads the gold customers' buckets
    // (3, 17 and 60: NULL is not a key); an INT key cast to the column's
    // type prunes, a column cast to DOUBLE does not.
    let inner = JOIN_QUERIES[0].0;
    let total = rows(&local, "SELECT count(*) AS n FROM \"jk_fact$files\"").await;
    let total: usize = total
        .lines()
        .nth(3)
        .unwrap()
        .trim_matches(|c| c == '|' || c == ' ')
        .parse()
        .unwrap();
    set(&local, "SET hidden_partitions.join_prune_max_keys = 10000").await;
    let pruned = fact_files(&local, inner).await;
    assert!(pruned.ends_with("(customer_id IN 3 keys from a join)"), "{pruned}");
    let kept: usize = pruned.split('/').next().unwrap().parse().unwrap();
    assert!(kept * 2 < total, "the keys keep {kept} of {total} files");
    let cast_key = fact_files(&local, JOIN_QUERIES[8].0).await;
    assert!(cast_key.ends_with("(customer_id IN 2 keys from a join)"), "{cast_key}");
    let cast_column = fact_files(&local, JOIN_QUERIES[9].0).await;
    assert_eq!(cast_column, format!("{total}/{total}"));
    // A month of keys keeps that month's files; a key that is not a
    // function of one column the planner can invert keeps every file.
    let by_month = fact_files(&local, JOIN_QUERIES[10].0).await;
    let month_kept: usize = by_month.split('/').next().unwrap().parse().unwrap();
    assert!(month_kept * 2 < total, "date_trunc keys keep {by_month}");
    let shifted = fact_files(&local, JOIN_QUERIES[13].0).await;
    assert!(shifted.starts_with(&format!("{total}/{total}")), "{shifted}");

    let standalone = hidden_partitions::ballista::standalone(open(), 2).await.unwrap();
    check(&standalone, "in-process cluster").await;
    assert_eq!(fact_files(&standalone, inner).await, pruned, "in-process cluster");

    let cluster_dir = dir.path().join("cluster");
    let cluster = LocalCluster::start(&cluster_config(2, &[]), &cluster_dir).expect("a scheduler and two executors");
    let remote = hidden_partitions::ballista::remote(cluster.url(), open())
        .await
        .unwrap();
    check(&remote, "scheduler and executor processes").await;
    assert_eq!(
        fact_files(&remote, inner).await,
        pruned,
        "scheduler and executor processes"
    );
    let analyzed = rows(&remote, &format!("EXPLAIN ANALYZE {inner}")).await;
    assert!(
        analyzed.contains(&format!(
            "table=jk_fact, files={kept}/{total}, join_keys=[customer_id IN 3 keys from a join]"
        )),
        "the scheduler's plan: {analyzed}"
    );
    // The customers' rows (found for their keys) travel in the plan: the
    // join builds them in each task of the fact scan's stage.
    assert!(
        analyzed.contains("BuildInTasksExec"),
        "the scheduler's plan: {analyzed}"
    );
    drop(remote);
    let _ = cluster.stop().expect("the cluster stops");

    // On a fresh cluster, the inner join alone: the executors read at most
    // the kept fact files and the customers' file, once (for the keys; the
    // join gets the rows with its plan).
    let cluster = LocalCluster::start(&cluster_config(2, &[]), &dir.path().join("reads")).expect("a cluster");
    let remote = hidden_partitions::ballista::remote(cluster.url(), open())
        .await
        .unwrap();
    assert_eq!(rendered(&remote, inner).await, reference[0]);
    drop(remote);
    let reads = cluster.stop().expect("the executors report their reads");
    let read: usize = reads.iter().map(|r| r.files).sum();
    assert!(
        read > 1 && read <= kept + 1,
        "{kept} fact files kept; files read by the executors: {reads:?}"
    );
}

/// Changelog reads on a cluster: the rows a rewrite copied (format version
/// 3 lineage) and a merge-on-read delete's kept rows are left out as in the
/// local session (the scans carry the hidden rows over the wire).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn changelog_reads_on_a_cluster_leave_out_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("warehouse");
    let open = || Warehouse::local(&wh).unwrap();
    let local = session_with(open()).await.unwrap();
    execute_sql(
        &local,
        "CREATE TABLE ch (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(2, id)) TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read');
         INSERT INTO ch SELECT value, 'x' FROM range(200);
         ALTER TABLE ch CREATE TAG start;
         UPDATE ch SET v = 'y' WHERE id % 50 = 0;
         DELETE FROM ch WHERE id = 7;",
    )
    .await
    .expect("the table and its history");
    let sql = "SELECT id, v, _change_type, _change_ordinal FROM table_changes('ch', 'start', NULL, 'id') ORDER BY _change_ordinal, id, _change_type";
    let want = rows(&local, sql).await;
    assert_eq!(want.lines().count(), 4 + 2 * 4 + 1, "{want}");
    let standalone = hidden_partitions::ballista::standalone(open(), 2).await.unwrap();
    assert_eq!(rows(&standalone, sql).await, want, "in-process cluster");
}
