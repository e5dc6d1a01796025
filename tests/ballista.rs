//! hidden-partitions tables on Apache Ballista (cargo feature `ballista`).
//!
//! - A subset of the `.slt` suites runs on an in-process cluster and must
//!   give the local rows and the local `files=S/T`.
//! - A scheduler and two executors are started as processes (the
//!   `hidden-partitions-scheduler` / `-executor` binaries) on 127.0.0.1; a
//!   star join over a table of a few thousand files runs on them, on a local
//!   warehouse and on the S3 test server.
//! - A scheduler without our codecs, and a table no cluster node can reach,
//!   fail with errors that say so.
#![cfg(feature = "ballista")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use hidden_partitions::slt::{S3Server, run_file_on_ballista, scan_descriptions, skipped_without_s3};
use hidden_partitions::{StorageOptions, Warehouse, execute_sql, session_with};

/// The suites that cover pruning, evolution, joins, TopK and Variant.
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

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A child process, killed when dropped.
struct Process {
    child: Child,
    name: String,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `bin` and wait until it prints a line containing `ready`.
fn start(bin: &str, args: &[String], ready: &str, name: &str) -> Process {
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    let ready = ready.to_string();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !sent && line.contains(&ready) {
                let _ = tx.send(());
                sent = true;
            }
        }
    });
    let process = Process {
        child,
        name: name.to_string(),
    };
    rx.recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{} did not start within 60 s", process.name));
    process
}

struct Cluster {
    url: String,
    work_dirs: Vec<PathBuf>,
    _processes: Vec<Process>,
}

fn start_cluster(dir: &Path, executor_options: &[String]) -> Cluster {
    let port = free_port();
    let scheduler = start(
        env!("CARGO_BIN_EXE_hidden-partitions-scheduler"),
        &[
            "--bind-host".into(),
            "127.0.0.1".into(),
            "--bind-port".into(),
            port.to_string(),
            "--external-host".into(),
            "127.0.0.1".into(),
        ],
        "scheduler listening",
        "the scheduler",
    );
    let mut processes = vec![scheduler];
    let mut work_dirs = Vec::new();
    for i in 0..2 {
        let work_dir = dir.join(format!("executor-{i}"));
        std::fs::create_dir_all(&work_dir).expect("work dir");
        let mut args: Vec<String> = [
            "--bind-host",
            "127.0.0.1",
            "--external-host",
            "127.0.0.1",
            "--scheduler-host",
            "127.0.0.1",
            "--concurrent-tasks",
            "2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend([
            "--scheduler-port".into(),
            port.to_string(),
            "--bind-port".into(),
            free_port().to_string(),
            "--bind-grpc-port".into(),
            free_port().to_string(),
            "--work-dir".into(),
            work_dir.display().to_string(),
        ]);
        args.extend(executor_options.iter().cloned());
        processes.push(start(
            env!("CARGO_BIN_EXE_hidden-partitions-executor"),
            &args,
            "executor serving",
            &format!("executor {i}"),
        ));
        work_dirs.push(work_dir);
    }
    Cluster {
        url: format!("df://127.0.0.1:{port}"),
        work_dirs,
        _processes: processes,
    }
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
    let remote = hidden_partitions::ballista::remote(&cluster.url, reopen())
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

    // Both executors run tasks (each writes shuffle output). An executor
    // registers with the scheduler a moment after it starts: run the query
    // again until both have had work, checking the rows every time.
    let deadline = Instant::now() + Duration::from_secs(60);
    while cluster.work_dirs.iter().any(|d| files_under(d) == 0) {
        assert!(
            Instant::now() < deadline,
            "within 60 s, only these executors ran tasks: {:?}",
            cluster.work_dirs.iter().map(|d| files_under(d) > 0).collect::<Vec<_>>()
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
            // Executors are configured for the store, as in a deployment.
            star_join_on_cluster(open(), open, &server.cli_args()).await;
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
    let remote = hidden_partitions::ballista::remote(&cluster.url, warehouse)
        .await
        .unwrap();
    let err = execute_sql(&remote, "SELECT * FROM t")
        .await
        .expect_err("unreachable store");
    assert!(err.to_string().contains("needs the table on a shared store"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
