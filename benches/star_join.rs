//! Star join on a fact table of ≥ 10,000 data files, with run-time
//! (dynamic-filter) partition pruning on and off, in one run.
//!
//! `fact` is partitioned by `day(ts)` and `bucket(32, customer_id)`; the
//! filtered dimension selects two customers, so the join's dynamic filter
//! maps to two buckets. Off = `datafusion.optimizer.enable_dynamic_filter_pushdown = false`.
//!
//! Then a date dimension joined on `CAST(f.ts AS DATE) = d.day` (issue 50):
//! its two selected days against the same query with those dates written
//! as literals, planned fact files and time.
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
    date_dimension(&ctx, days, iterations).await;
}

/// The fact files a statement plans, from `EXPLAIN FILES` (`S/T …`).
async fn planned_fact_files(ctx: &datafusion::prelude::SessionContext, query: &str) -> String {
    let r = execute_sql(ctx, &format!("EXPLAIN FILES {query}")).await.unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&r[0].batches)
        .unwrap()
        .to_string();
    let line = text
        .lines()
        .find(|l| l.contains("| fact"))
        .expect("a fact row")
        .to_string();
    line.split('|').nth(3).unwrap_or_default().trim().to_string()
}

async fn date_dimension(ctx: &datafusion::prelude::SessionContext, days: i64, iterations: usize) {
    execute_sql(
        ctx,
        &format!(
            "SET datafusion.optimizer.enable_dynamic_filter_pushdown = true;
             CREATE TABLE dates (day DATE, holiday BOOLEAN);
             INSERT INTO dates SELECT CAST(to_timestamp_seconds(1672531200 + value * 86400) AS DATE),
                    value IN (1, {last}) FROM generate_series(0, {last}) AS t(value)",
            last = days - 1
        ),
    )
    .await
    .unwrap();
    let joined =
        "SELECT count(*), sum(f.amount) FROM fact f JOIN dates d ON CAST(f.ts AS DATE) = d.day WHERE d.holiday";
    let r = execute_sql(ctx, "SELECT day FROM dates WHERE holiday ORDER BY day")
        .await
        .unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&r[0].batches)
        .unwrap()
        .to_string();
    let picked: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim_matches('|').trim().parse::<chrono::NaiveDate>().ok())
        .map(|d| format!("DATE '{d}'"))
        .collect();
    assert_eq!(picked.len(), 2, "{text}");
    let literal = format!(
        "SELECT count(*), sum(f.amount) FROM fact f WHERE CAST(f.ts AS DATE) IN ({})",
        picked.join(", ")
    );
    let (join_files, literal_files) = (
        planned_fact_files(ctx, joined).await,
        planned_fact_files(ctx, &literal).await,
    );
    let planned = |s: &str| s.split('/').next().and_then(|n| n.trim().parse::<u64>().ok()).unwrap();
    assert!(
        planned(&join_files) <= planned(&literal_files),
        "the join plans {join_files}, the literals {literal_files}"
    );
    let (j, a) = time(ctx, joined, iterations).await;
    let (l, b) = time(ctx, &literal, iterations).await;
    assert_eq!(a, b, "the date join and the literal dates give the same answer");
    println!("| date dimension (2 of {days} days) | fact files planned | time |");
    println!("|---|---|---|");
    println!(
        "| `JOIN dates d ON CAST(f.ts AS DATE) = d.day WHERE d.holiday` | {join_files} | {:.1} ms |",
        j.as_secs_f64() * 1e3
    );
    println!(
        "| `WHERE CAST(f.ts AS DATE) IN (<the 2 dates>)` | {literal_files} | {:.1} ms |",
        l.as_secs_f64() * 1e3
    );
}
