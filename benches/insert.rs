//! INSERT throughput and peak memory against DataFusion's `COPY …
//! PARTITIONED BY` writing the same rows into the same partitions, each run
//! in a fresh child process (peak memory = its `VmHWM`).
//!
//! | case | rows | partitions |
//! |---|---|---|
//! | many days | 10 M | 10,000 `day(ts)` |
//! | few days | 10 M | 100 `day(ts)` |
//! | days × buckets | 100 M | 365 × 16 (`day(ts)`, `bucket(16, id)`) |
//!
//! Rows arrive unsorted (day = row number modulo the number of days), the
//! hard case for a partitioned writer. `cargo bench --bench insert`; under
//! `cargo test` a tiny case runs once.

use std::process::Command;
use std::time::Instant;

use hidden_partitions::{execute_sql, session};

const DAY_MICROS: i64 = 86_400_000_000;
const START: i64 = 1_577_836_800_000_000; // 2020-01-01

struct Case {
    name: &'static str,
    rows: u64,
    days: u64,
    buckets: Option<u32>,
}

/// The rows of a case: id, ts (day = id mod days), amount.
fn source(case: &Case) -> String {
    format!(
        "SELECT value AS id, to_timestamp_micros({START} + (value % {}) * {DAY_MICROS} + (value % 86400) * 1000000) AS ts, CAST(value % 1000 AS DOUBLE) AS amount FROM range({})",
        case.days, case.rows
    )
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// Child: run one engine on one case in `dir`; print seconds and peak KiB.
async fn child(engine: &str, case: &Case, dir: &str) {
    let ctx = session(dir).await.unwrap();
    let partition = match case.buckets {
        Some(n) => format!("day(ts), bucket({n}, id)"),
        None => "day(ts)".to_string(),
    };
    let sql = match engine {
        "insert" => {
            execute_sql(
                &ctx,
                &format!("CREATE TABLE t (id BIGINT, ts TIMESTAMP, amount DOUBLE) PARTITIONED BY ({partition})"),
            )
            .await
            .unwrap();
            format!("INSERT INTO t {}", source(case))
        }
        _ => {
            let (cols, by) = match case.buckets {
                Some(n) => (
                    format!("to_date(ts) AS ts_day, bucket({n}, id) AS id_bucket"),
                    "ts_day, id_bucket",
                ),
                None => ("to_date(ts) AS ts_day".to_string(), "ts_day"),
            };
            format!(
                "COPY (SELECT *, {cols} FROM ({})) TO '{dir}/copy' STORED AS PARQUET PARTITIONED BY ({by})",
                source(case)
            )
        }
    };
    let start = Instant::now();
    execute_sql(&ctx, &sql).await.unwrap();
    let secs = start.elapsed().as_secs_f64();
    println!("{secs} {}", vm_hwm_kib());
}

fn files_and_bytes(dir: &std::path::Path) -> (u64, u64) {
    let mut out = (0, 0);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            let (f, b) = files_and_bytes(&p);
            out = (out.0 + f, out.1 + b);
        } else if p.extension().is_some_and(|x| x == "parquet") && !p.to_string_lossy().contains("/metadata/") {
            out = (out.0 + 1, out.1 + e.metadata().map(|m| m.len()).unwrap_or(0));
        }
    }
    out
}

fn run_child(engine: &str, case_index: usize, full: bool) -> (f64, f64, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--child",
            engine,
            &case_index.to_string(),
            dir.path().to_str().unwrap(),
            if full { "full" } else { "smoke" },
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    let mut parts = line.split_whitespace();
    let secs: f64 = parts.next().unwrap().parse().unwrap();
    let kib: f64 = parts.next().unwrap().parse().unwrap();
    let target = if engine == "insert" {
        dir.path().join("t/data")
    } else {
        dir.path().join("copy")
    };
    let (files, bytes) = files_and_bytes(&target);
    (secs, kib / 1024.0, files, bytes)
}

fn cases(full: bool) -> Vec<Case> {
    if full {
        vec![
            Case {
                name: "10 M rows → 10,000 day(ts) partitions",
                rows: 10_000_000,
                days: 10_000,
                buckets: None,
            },
            Case {
                name: "10 M rows → 100 day(ts) partitions",
                rows: 10_000_000,
                days: 100,
                buckets: None,
            },
            Case {
                name: "100 M rows → 365 × 16 (day(ts), bucket(16, id))",
                rows: 100_000_000,
                days: 365,
                buckets: Some(16),
            },
        ]
    } else {
        vec![Case {
            name: "smoke: 20,000 rows → 200 day(ts) partitions",
            rows: 20_000,
            days: 200,
            buckets: None,
        }]
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let case = cases(args[i + 4] == "full").remove(args[i + 2].parse().unwrap());
        return child(&args[i + 1], &case, &args[i + 3]).await;
    }
    let full = args.iter().any(|a| a == "--bench");
    println!(
        "| case | INSERT time | COPY time | time ratio | INSERT peak RSS | COPY peak RSS | INSERT files (mean size) | COPY files (mean size) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (i, case) in cases(full).iter().enumerate() {
        let (ti, mi, fi, bi) = run_child("insert", i, full);
        let (tc, mc, fc, bc) = run_child("copy", i, full);
        println!(
            "| {} | {:.1} s | {:.1} s | {:.2}x | {:.0} MiB | {:.0} MiB | {fi} ({:.0} KiB) | {fc} ({:.0} KiB) |",
            case.name,
            ti,
            tc,
            ti / tc,
            mi,
            mc,
            bi as f64 / fi.max(1) as f64 / 1024.0,
            bc as f64 / fc.max(1) as f64 / 1024.0
        );
    }
}
