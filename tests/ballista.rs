//! hidden-partitions tables on Apache Ballista (cargo feature `ballista`).
//!
//! - A subset of the `.slt` suites runs on an in-process cluster and must
//!   give the local rows and the local `files=S/T`.
//! - A scheduler and two executors are started as processes (the
//!   `hidden-partitions-scheduler` / `-executor` binaries) on 127.0.0.1; a
//!   star join over a table of a few thousand files runs on them, on a local
//!   warehouse and on the S3 test server (the executors get the store's
//!   options from the plan only). Each executor must have read table files.
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

/// The suites that cover pruning, evolution, joins, TopK, Variant and stored views.
const SUITES: &[&str] = &[
    "pruning.slt",
    "partition_evolution.slt",
    "schema_evolution.slt",
    "runtime_pruning.slt",
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

    // The scheduler planned with our rule: the same files, a fraction of all.
    let analyzed = rows(&remote, &format!("EXPLAIN ANALYZE {STAR_JOIN}")).await;
    let cluster_scans = scan_descriptions(analyzed.lines());
    assert_eq!(cluster_scans, local_scans, "scans on the cluster:\n{analyzed}");
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
    let err = execute_sql(&remote, "DELETE FROM sales WHERE id = -1")
        .await
        .expect_err("DELETE on the cluster");
    assert!(err.to_string().contains("run in a local session"), "{err}");

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
