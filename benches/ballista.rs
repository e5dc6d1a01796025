//! A star join and a one-week scan on a 10 M-row, 10,016-file table:
//! a local DataFusion session against Ballista with one and two executor
//! processes on this machine, in one run.
//!
//! `fact` is partitioned by `day(ts)` (313 days) and `bucket(32,
//! customer_id)`. The star join keeps two customers through `dim`; the
//! scan reads one week. Locally the join prunes `fact` at run time (dynamic
//! filters); Ballista turns those off, so the local session is also timed
//! without them. Each executor has two task slots (this machine's cores)
//! and prints the files and bytes it read when it stops.
//!
//! `cargo bench --features ballista --bench ballista`; under `cargo test` a
//! tiny table runs once.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use datafusion::prelude::SessionContext;
use hidden_partitions::ballista::{LocalCluster, LocalClusterConfig, ReadSummary, remote};
use hidden_partitions::{Warehouse, execute_sql, session_with};
use support::{answer, time};

const STAR_JOIN: &str = "SELECT count(*) AS n, sum(f.amount) AS amount
    FROM fact f JOIN dim d ON f.customer_id = d.customer_id WHERE d.region = 'EU'";

/// Seven days from the middle of the table's `days`.
fn one_week(days: u64) -> String {
    let start = chrono::NaiveDate::from_ymd_opt(2023, 1, 1).unwrap() + chrono::Days::new(days / 2);
    let end = start + chrono::Days::new(7);
    format!("SELECT count(*) AS n, sum(amount) AS amount FROM fact WHERE ts >= '{start}' AND ts < '{end}'")
}

/// The scans of `sql` as planned (`files=S/T`).
async fn scans(ctx: &SessionContext, sql: &str) -> Vec<String> {
    hidden_partitions::slt::scan_descriptions(answer(ctx, &format!("EXPLAIN {sql}")).await.lines())
        .iter()
        .map(|s| s.trim_start_matches("HiddenPartitionsScan: ").to_string())
        .collect()
}

fn config(executors: usize) -> LocalClusterConfig {
    LocalClusterConfig {
        scheduler_bin: env!("CARGO_BIN_EXE_hidden-partitions-scheduler").into(),
        executor_bin: env!("CARGO_BIN_EXE_hidden-partitions-executor").into(),
        executors,
        concurrent_tasks: 2,
        executor_args: vec![],
    }
}

/// A cluster whose executors have all asked the scheduler for work.
async fn cluster(executors: usize, dir: &Path) -> LocalCluster {
    let cluster = LocalCluster::start(&config(executors), dir).expect("a local cluster");
    // Executors poll the scheduler every 100 ms once they serve.
    tokio::time::sleep(Duration::from_secs(2)).await;
    cluster
}

/// What each executor read in one run of `sql`, on a fresh cluster.
async fn split(executors: usize, warehouse: &Path, dir: &Path, sql: &str, expected: &str) -> Vec<ReadSummary> {
    let cluster = cluster(executors, dir).await;
    let ctx = remote(cluster.url(), Warehouse::local(warehouse).unwrap())
        .await
        .expect("a client of the cluster");
    assert_eq!(answer(&ctx, sql).await, expected, "the cluster's answer");
    cluster.stop().expect("the executors stop and report")
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

#[tokio::main]
async fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (days, rows, iterations) = if full {
        (313u64, 10_000_000u64, 5)
    } else {
        (3, 6_000, 1)
    };
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("warehouse");
    let local = session_with(Warehouse::local(&warehouse).unwrap()).await.unwrap();
    let load = Instant::now();
    execute_sql(
        &local,
        &format!(
            "CREATE TABLE fact (id BIGINT, ts TIMESTAMP, customer_id BIGINT, amount DOUBLE)
               PARTITIONED BY (day(ts), bucket(32, customer_id));
             INSERT INTO fact SELECT value,
                    CAST(to_timestamp_seconds(1672531200 + (value % {days}) * 86400 + value % 86400) AS TIMESTAMP),
                    (value / {days}) % 1000, (value % 97) * 1.5
             FROM generate_series(0, {last}) AS t(value);
             CREATE TABLE dim (customer_id BIGINT, region VARCHAR);
             INSERT INTO dim SELECT value, CASE WHEN value IN (7, 500) THEN 'EU' ELSE 'US' END
             FROM generate_series(0, 999) AS t(value)",
            last = rows - 1
        ),
    )
    .await
    .unwrap();
    let load = load.elapsed();
    let files = answer(
        &local,
        "SELECT count(*) AS files, sum(record_count) AS rows FROM \"fact$files\"",
    )
    .await;
    println!("fact loaded in {:.1} s:\n{files}", load.as_secs_f64());

    let mut table = vec![
        "| query | local | local, no dynamic filters | Ballista, 1 executor | Ballista, 2 executors |".to_string(),
        "|---|---|---|---|---|".to_string(),
    ];
    let mut splits = vec![
        "| query | files planned (`files=S/T`) | executors | files read per executor | MiB read per executor | GET requests per executor |".to_string(),
        "|---|---|---|---|---|---|".to_string(),
    ];
    let one_week = one_week(days);
    for (name, sql) in [("star join", STAR_JOIN), ("one-week scan", one_week.as_str())] {
        let planned = scans(&local, sql).await.join("; ");
        execute_sql(&local, "SET datafusion.optimizer.enable_dynamic_filter_pushdown = true")
            .await
            .unwrap();
        let (on, expected) = time(&local, sql, iterations).await;
        execute_sql(
            &local,
            "SET datafusion.optimizer.enable_dynamic_filter_pushdown = false",
        )
        .await
        .unwrap();
        let (off, without) = time(&local, sql, iterations).await;
        assert_eq!(without, expected, "{name}: same answer without dynamic filters");

        let mut cluster_times = Vec::new();
        for executors in [1, 2] {
            let run_dir = dir.path().join(format!("{name}-{executors}").replace(' ', "-"));
            let cluster = cluster(executors, &run_dir.join("timed")).await;
            let ctx = remote(cluster.url(), Warehouse::local(&warehouse).unwrap())
                .await
                .expect("a client of the cluster");
            let (elapsed, answer) = time(&ctx, sql, iterations).await;
            assert_eq!(answer, expected, "{name} on {executors} executor(s)");
            drop(ctx);
            cluster.stop().expect("the cluster stops");
            cluster_times.push(elapsed);

            let reads = split(executors, &warehouse, &run_dir.join("split"), sql, &expected).await;
            let each = |f: &dyn Fn(&ReadSummary) -> String| reads.iter().map(f).collect::<Vec<_>>().join(" / ");
            splits.push(format!(
                "| {name} | {planned} | {executors} | {} | {} | {} |",
                each(&|r| r.files.to_string()),
                each(&|r| format!("{:.1}", mib(r.bytes))),
                each(&|r| r.gets.to_string()),
            ));
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        table.push(format!(
            "| {name} | {:.0} ms (1.00) | {:.0} ms ({:.2}) | {:.0} ms ({:.2}) | {:.0} ms ({:.2}) |",
            ms(on),
            ms(off),
            ms(off) / ms(on),
            ms(cluster_times[0]),
            ms(cluster_times[0]) / ms(on),
            ms(cluster_times[1]),
            ms(cluster_times[1]) / ms(on),
        ));
        println!("{name}: {expected}");
    }
    println!("median of {iterations} runs after a warm-up; (ratio to the local session with dynamic filters)\n");
    println!("{}\n\n{}", table.join("\n"), splits.join("\n"));
}
