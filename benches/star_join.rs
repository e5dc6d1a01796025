//! Star join on a fact table of ≥ 10,000 data files, with run-time
//! (dynamic-filter) partition pruning on and off, in one run.
//!
//! `fact` is partitioned by `day(ts)` and `bucket(32, customer_id)`; the
//! filtered dimension selects two customers, so the join's dynamic filter
//! maps to two buckets. Off = `datafusion.optimizer.enable_dynamic_filter_pushdown = false`.
//!
//! `cargo bench --bench star_join`; under `cargo test` a tiny size runs once.

mod support;

use hidden_partitions::{execute_sql, session};
use support::time;

#[tokio::main]
async fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (days, iterations) = if full { (365, 7) } else { (3, 1) };
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        &format!(
            "CREATE TABLE fact (id BIGINT, ts TIMESTAMP, customer_id BIGINT, amount DOUBLE)
               PARTITIONED BY (day(ts), bucket(32, customer_id));
             INSERT INTO fact SELECT value,
                    CAST(to_timestamp_seconds(1672531200 + (value % {days}) * 86400) AS TIMESTAMP),
                    (value / {days}) % 1000, (value % 97) * 1.5
             FROM generate_series(0, {last}) AS t(value);
             CREATE TABLE dim (customer_id BIGINT, region VARCHAR);
             INSERT INTO dim SELECT value, CASE WHEN value IN (7, 500) THEN 'EU' ELSE 'US' END
             FROM generate_series(0, 999) AS t(value)",
            last = days * 1000 * 4 - 1
        ),
    )
    .await
    .unwrap();
    let files = execute_sql(&ctx, "EXPLAIN FILES SELECT * FROM fact").await.unwrap();
    let files = datafusion::arrow::util::pretty::pretty_format_batches(&files[0].batches)
        .unwrap()
        .to_string();
    let query =
        "SELECT count(*), sum(f.amount) FROM fact f JOIN dim d ON f.customer_id = d.customer_id WHERE d.region = 'EU'";
    let opened = execute_sql(&ctx, &format!("EXPLAIN FILES ANALYZE {query}"))
        .await
        .unwrap();
    let opened = datafusion::arrow::util::pretty::pretty_format_batches(&opened[0].batches)
        .unwrap()
        .to_string();
    let (on, a) = time(&ctx, query, iterations).await;
    execute_sql(&ctx, "SET datafusion.optimizer.enable_dynamic_filter_pushdown = false")
        .await
        .unwrap();
    let (off, b) = time(&ctx, query, iterations).await;
    assert_eq!(a, b, "same answer with and without run-time pruning");
    println!("fact table:\n{files}\nfiles opened with run-time pruning:\n{opened}");
    println!("| star join | run-time pruning on | off | speed-up |");
    println!("|---|---|---|---|");
    println!(
        "| {days} days x 32 buckets | {:.1} ms | {:.1} ms | {:.1}x |",
        on.as_secs_f64() * 1e3,
        off.as_secs_f64() * 1e3,
        off.as_secs_f64() / on.as_secs_f64()
    );
}
