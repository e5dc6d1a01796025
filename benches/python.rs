//! The Python package against the Rust API, in one run:
//!
//! 1. A one-day query on a table of 10,000 data files (one per day), warm:
//!    the median through `execute_sql` here beside the median through
//!    `hidden_partitions.Session(...).sql(...)` into a `pyarrow.Table` in a
//!    child Python. Target: Python ≤ 1.2× Rust.
//! 2. 10 M rows (`SELECT * FROM big`, 4 columns) into a `pyarrow.Table`:
//!    through our Session beside datafusion-python's
//!    `ctx.sql(...).to_arrow_table()` on the same Parquet files (the table's
//!    data files, registered with `register_parquet`). Target: ≤ 1.1×. The
//!    Rust API's time for the same rows is printed for reference.
//!
//! The child Python is `HP_BENCH_PYTHON`: an environment with the package
//! installed from this checkout in release mode and `datafusion==55.*`
//! (BENCHMARKS.md says how). `cargo bench --bench python`; under `cargo
//! test` it runs once on small sizes, and without `HP_BENCH_PYTHON` only
//! the Rust side.

use std::time::Instant;

use hidden_partitions::{StorageOptions, Warehouse, execute_sql, session_with};

mod support;

#[tokio::main]
async fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (files, rows, iterations) = if full {
        (10_000, 10_000_000, 50)
    } else {
        (20, 10_000, 2)
    };
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let ctx = session_with(Warehouse::open(wh.to_str().unwrap(), StorageOptions::new()).unwrap())
        .await
        .unwrap();
    execute_sql(
        &ctx,
        &format!(
            "CREATE TABLE many (id BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts));
             INSERT INTO many SELECT value AS id, to_timestamp_micros((946684800 + value * 86400) * 1000000) AS ts
             FROM generate_series(1, {files}) AS s(value);
             CREATE TABLE big (id BIGINT, ts TIMESTAMP, amount DOUBLE, tag VARCHAR);
             INSERT INTO big SELECT value, to_timestamp_micros(1700000000000000 + value * 1000000),
                    (value % 1000) * 0.25, CASE value % 3 WHEN 0 THEN 'EU' WHEN 1 THEN 'US' ELSE 'APAC' END
             FROM generate_series(1, {rows}) AS s(value)"
        ),
    )
    .await
    .unwrap();

    // 1. One day of the 10,000-file table.
    let day = chrono::NaiveDate::from_ymd_opt(2000, 1, 1).unwrap() + chrono::Days::new(files as u64 / 2);
    let next = day + chrono::Days::new(1);
    let day_sql = format!(
        "SELECT count(*) AS n, sum(id) AS s FROM many WHERE ts >= TIMESTAMP '{day} 00:00:00' AND ts < TIMESTAMP '{next} 00:00:00'"
    );
    let (rust_day, answer) = support::time(&ctx, &day_sql, iterations).await;
    assert!(answer.contains("| 1 "), "one row of one day: {answer}");

    // 2. Every row, for reference.
    let (rust_big, _) = support::time(&ctx, "SELECT * FROM big", 5).await;

    let Ok(python) = std::env::var("HP_BENCH_PYTHON") else {
        println!("| one day of {files} files, warm (median of {iterations}) | Rust API |");
        println!("|---|---|");
        println!("| | {:.2} ms |", rust_day.as_secs_f64() * 1e3);
        println!("Python side not run (set HP_BENCH_PYTHON)");
        return;
    };
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/python_session.py");
    let start = Instant::now();
    let o = std::process::Command::new(python)
        .arg(script)
        .args([
            wh.to_str().unwrap(),
            &day_sql,
            wh.join("big/data").to_str().unwrap(),
            &iterations.to_string(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ours_rows"].as_u64(), Some(rows as u64), "{v}");
    assert_eq!(v["datafusion_python_rows"].as_u64(), Some(rows as u64), "{v}");
    let python_day = v["day"].as_f64().unwrap();
    let ours = v["ours"].as_f64().unwrap();
    let theirs = v["datafusion_python"].as_f64().unwrap();
    println!("| one day of {files} files, warm (median of {iterations}) | Rust API | Python | Python / Rust |");
    println!("|---|---|---|---|");
    println!(
        "| | {:.2} ms | {:.2} ms | {:.2} (target ≤ 1.2) |",
        rust_day.as_secs_f64() * 1e3,
        python_day * 1e3,
        python_day / rust_day.as_secs_f64()
    );
    println!();
    println!("| {rows} rows into a pyarrow.Table (median of 5) | seconds |");
    println!("|---|---|");
    println!("| hidden_partitions.Session | {ours:.3} |");
    println!("| datafusion-python on the same Parquet files | {theirs:.3} |");
    println!("| (Rust API, collected batches) | {:.3} |", rust_big.as_secs_f64());
    println!("ours / datafusion-python = {:.2} (target ≤ 1.1)", ours / theirs);
    println!("(Python child took {:.1} s)", start.elapsed().as_secs_f64());
}
