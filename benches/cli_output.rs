//! Printing a large result from the command line: the boxed table format
//! streams within a fixed memory budget, at close to CSV's speed.
//!
//! A table of 10 M rows (id, name, amount, ts) is printed whole with
//! `hidden-partitions --maxrows all --format table|csv -c "SELECT * FROM
//! big"` into a pipe that this process drains; time is wall clock to the
//! last byte, memory the child's peak RSS (`VmHWM`, sampled every 5 ms).
//! Targets: table format under 256 MiB and within 1.5× the CSV time.
//! `cargo bench --bench cli_output`; under `cargo test` 20 000 rows, once.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hidden_partitions::{execute_sql, session};

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Print the table in `format`; seconds to the last byte, peak MiB, bytes.
fn print(warehouse: &str, format: &str) -> (f64, f64, u64) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .args(["--warehouse", warehouse, "--maxrows", "all", "--format", format])
        .args(["-c", "SELECT * FROM big"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the CLI runs");
    let pid = child.id();
    let (peak, done) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if let Some(kib) = vm_hwm_kib(pid) {
                    peak.fetch_max(kib, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let mut out = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    while let Ok(n @ 1..) = out.read(&mut buf) {
        bytes += n as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    assert!(child.wait().unwrap().success(), "the CLI failed printing {format}");
    (secs, peak.load(Ordering::Relaxed) as f64 / 1024.0, bytes)
}

#[tokio::main]
async fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rows: u64 = if full { 10_000_000 } else { 20_000 };
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().to_str().unwrap().to_string();
    let ctx = session(&warehouse).await.unwrap();
    execute_sql(
        &ctx,
        &format!(
            "CREATE TABLE big AS SELECT value AS id, concat('name-', value) AS name, \
             CAST(value % 100000 AS DOUBLE) / 100 AS amount, \
             to_timestamp_micros(1700000000000000 + value * 1000000) AS ts FROM range({rows})"
        ),
    )
    .await
    .unwrap();
    drop(ctx);
    let runs = if full { 2 } else { 1 };
    let best = |format: &str| {
        (0..runs)
            .map(|_| print(&warehouse, format))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap()
    };
    let (csv_secs, csv_mib, csv_bytes) = best("csv");
    let (table_secs, table_mib, table_bytes) = best("table");
    println!("| rows | format | time | peak RSS | output |");
    println!("|---|---|---|---|---|");
    for (format, secs, mib, bytes) in [
        ("csv", csv_secs, csv_mib, csv_bytes),
        ("table", table_secs, table_mib, table_bytes),
    ] {
        println!(
            "| {rows} | {format} | {secs:.2} s | {mib:.0} MiB | {:.0} MiB |",
            bytes as f64 / (1 << 20) as f64
        );
    }
    println!(
        "\ntable / csv time: {:.2}x (target ≤ 1.5x); table peak RSS {table_mib:.0} MiB (target < 256 MiB)",
        table_secs / csv_secs
    );
}
