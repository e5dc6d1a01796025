//! Selective queries on a hidden-partitioned table against DataFusion's
//! `ListingTable` over the very same Parquet files, measured in one run.
//!
//! `cargo bench --bench scan` runs the full sizes; under `cargo test` (no
//! `--bench` argument) a tiny configuration runs once as a smoke test.

use std::time::{Duration, Instant};

use datafusion::prelude::SessionContext;
use hidden_partitions::{execute_sql, session};

struct Config {
    days: usize,
    rows_per_day: usize,
    iterations: usize,
}

async fn time(ctx: &SessionContext, sql: &str, iterations: usize) -> Duration {
    // Warm-up (metadata caches, page cache).
    execute_sql(ctx, sql).await.unwrap();
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let start = Instant::now();
        let r = execute_sql(ctx, sql).await.unwrap();
        std::hint::black_box(r);
        samples.push(start.elapsed());
    }
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main]
async fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let cfg = if full {
        Config {
            days: 365,
            rows_per_day: 4_000,
            iterations: 15,
        }
    } else {
        Config {
            days: 4,
            rows_per_day: 10,
            iterations: 1,
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE events (id BIGINT, ts TIMESTAMP, region VARCHAR, amount DOUBLE) PARTITIONED BY (day(ts))",
    )
    .await
    .unwrap();
    // One insert: one file per day.
    let total = cfg.days * cfg.rows_per_day;
    execute_sql(
        &ctx,
        &format!(
            "INSERT INTO events SELECT value, CAST(to_timestamp_seconds(1672531200 + (value % {days}) * 86400 + (value * 7) % 86400) AS TIMESTAMP),
                    CASE value % 3 WHEN 0 THEN 'EU' WHEN 1 THEN 'US' ELSE 'APAC' END, (value % 1000) * 0.5
             FROM generate_series(0, {last}) AS t(value)",
            days = cfg.days,
            last = total - 1
        ),
    )
    .await
    .unwrap();
    let data_dir = dir.path().join("events").join("data");
    execute_sql(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE listing STORED AS PARQUET LOCATION '{}/'",
            data_dir.display()
        ),
    )
    .await
    .unwrap();

    let queries = [
        (
            "one day (range on ts)",
            "ts >= TIMESTAMP '2023-03-01 00:00:00' AND ts < TIMESTAMP '2023-03-02 00:00:00'",
        ),
        (
            "one week (BETWEEN)",
            "ts BETWEEN TIMESTAMP '2023-06-01 00:00:00' AND TIMESTAMP '2023-06-07 23:59:59'",
        ),
        ("no match", "ts < TIMESTAMP '2000-01-01 00:00:00'"),
    ];
    println!("rows: {total}, files: {}, iterations: {}", cfg.days, cfg.iterations);
    println!("| query | hidden-partitions | ListingTable (same files) | speed-up |");
    println!("|---|---|---|---|");
    for (name, filter) in queries {
        let hp = time(
            &ctx,
            &format!("SELECT count(*) AS n, sum(amount) AS total FROM events WHERE {filter}"),
            cfg.iterations,
        )
        .await;
        let lt = time(
            &ctx,
            &format!("SELECT count(*) AS n, sum(amount) AS total FROM listing WHERE {filter}"),
            cfg.iterations,
        )
        .await;
        // Same answer from both.
        let a = execute_sql(
            &ctx,
            &format!("SELECT count(*) AS n, sum(amount) AS total FROM events WHERE {filter}"),
        )
        .await
        .unwrap();
        let b = execute_sql(
            &ctx,
            &format!("SELECT count(*) AS n, sum(amount) AS total FROM listing WHERE {filter}"),
        )
        .await
        .unwrap();
        let show = |r: &[hidden_partitions::StatementResult]| {
            datafusion::arrow::util::pretty::pretty_format_batches(&r[0].batches)
                .unwrap()
                .to_string()
        };
        assert_eq!(show(&a), show(&b), "{name}: results differ");
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.1}x |",
            hp.as_secs_f64() * 1e3,
            lt.as_secs_f64() * 1e3,
            lt.as_secs_f64() / hp.as_secs_f64()
        );
    }
}
