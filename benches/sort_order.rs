//! Sort orders and clustering: point queries on a column that is not a
//! partition, before and after `optimize(strategy => 'sort')` and after
//! `zorder(a, b)`; a sorted INSERT against the same INSERT unsorted.
//!
//! | case | rows | layout |
//! |---|---|---|
//! | point queries | 10 M (`a`, `b`: two unrelated hashes of the row number) | unpartitioned; `day(ts)` over 10 days |
//! | INSERT | 10 M | `day(ts)`, `ORDERED BY (a)` against no order; each in a child process (peak memory = `VmHWM`) |
//!
//! `a` and `b` are bijective 32-bit hashes, so every value is distinct and
//! nothing about them follows the order rows arrive in (linear formulas
//! would let delta encoding shrink files that a real column would not).
//! Files are cut at `write.target-file-size-bytes` = 200 KB: about 850
//! files, 85 per day. A point query on a column that is not a partition
//! reads at least one file per day, so 2 % of the files needs 50 files a
//! day; a day of 17 GB at 200 MB files has as many. Medians of 5 runs.
//! `cargo bench --bench sort_order`; under `cargo test` a tiny case runs
//! once and checks the answers.

mod support;

use std::process::Command;
use std::time::Instant;

use hidden_partitions::{execute_sql, session};
use support::{answer, time, vm_hwm_kib};

const DAY_MICROS: i64 = 86_400_000_000;
const START: i64 = 1_704_067_200_000_000; // 2024-01-01

struct Size {
    rows: u64,
    target_bytes: u64,
}

const FULL: Size = Size {
    rows: 10_000_000,
    target_bytes: 200_000,
};
const TINY: Size = Size {
    rows: 40_000,
    target_bytes: 20_000,
};

/// The multipliers of `a`'s and `b`'s hashes (odd, so each is a bijection).
const A: u64 = 2_654_435_761;
const B: u64 = 2_246_822_519;

/// `value` hashed to 32 bits as [`hash_sql`] does in SQL: an odd multiple,
/// then two rounds of xor-shift and multiply, each a bijection mod 2^32.
fn hash(value: u64, multiplier: u64) -> u64 {
    const M: u64 = 1 << 32;
    let mut x = (value * multiplier) % M;
    x = ((x ^ (x >> 16)) * 73_244_475) % M;
    x ^ (x >> 16)
}

fn hash_sql(multiplier: u64) -> String {
    let x = format!("((value * {multiplier}) % 4294967296)");
    let x = format!("((({x} ^ ({x} >> 16)) * 73244475) % 4294967296)");
    format!("({x} ^ ({x} >> 16))")
}

/// `a` and `b` are unrelated hashes of the row number (each distinct);
/// `ts` spreads rows over 10 days.
fn source(rows: u64) -> String {
    format!(
        "SELECT {} AS a, {} AS b, \
         to_timestamp_micros({START} + (value % 10) * {DAY_MICROS} + (value % 86400) * 1000000) AS ts, \
         CAST(value % 1000 AS DOUBLE) AS v FROM range({rows})",
        hash_sql(A),
        hash_sql(B)
    )
}

fn create(name: &str, partitioned: bool, ordered: bool, s: &Size) -> String {
    format!(
        "CREATE TABLE {name} (a BIGINT, b BIGINT, ts TIMESTAMP, v DOUBLE){}{} TBLPROPERTIES ('write.target-file-size-bytes' = '{}')",
        if partitioned { " PARTITIONED BY (day(ts))" } else { "" },
        if ordered { " ORDERED BY (a)" } else { "" },
        s.target_bytes
    )
}

/// `selected/total` of `EXPLAIN FILES` for a query.
async fn files(ctx: &datafusion::prelude::SessionContext, sql: &str) -> (u64, u64) {
    let text = answer(ctx, &format!("EXPLAIN FILES {sql}")).await;
    let cell = text
        .lines()
        .filter_map(|l| l.split('|').nth(3).map(str::trim))
        .find(|c| c.contains('/'))
        .unwrap_or_else(|| panic!("no files in {text}"));
    let (a, b) = cell.split_once('/').unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

async fn point_queries(s: &Size, full: bool) {
    for partitioned in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let ctx = session(dir.path().to_str().unwrap()).await.unwrap();
        execute_sql(&ctx, &create("t", partitioned, false, s)).await.unwrap();
        execute_sql(&ctx, &format!("INSERT INTO t {}", source(s.rows)))
            .await
            .unwrap();
        let layout = if partitioned { "day(ts)" } else { "unpartitioned" };
        let row = s.rows / 3;
        let on_a = format!("SELECT * FROM t WHERE a = {}", hash(row, A));
        let on_b = format!("SELECT * FROM t WHERE b = {}", hash(row, B));
        let runs = if full { 5 } else { 1 };
        let (before, expected_a) = time(&ctx, &on_a, runs).await;
        let (_, expected_b) = time(&ctx, &on_b, 1).await;
        for (expected, value) in [(&expected_a, hash(row, A)), (&expected_b, hash(row, B))] {
            assert!(
                expected.contains(&value.to_string()),
                "{layout}: no row holds {value}: {expected}"
            );
        }
        let files_before = files(&ctx, &on_a).await;
        let start = Instant::now();
        execute_sql(
            &ctx,
            "ALTER TABLE t EXECUTE optimize(strategy => 'sort', sort_order => 'a')",
        )
        .await
        .unwrap();
        let optimize_secs = start.elapsed().as_secs_f64();
        let (after, answer_a) = time(&ctx, &on_a, runs).await;
        assert_eq!(answer_a, expected_a, "{layout}: the sort changed the answer");
        let files_after = files(&ctx, &on_a).await;
        println!(
            "| {layout}: `a = …` after sort(a) | {}/{} files ({:.1} %) | {:.2} ms | before: {}/{} files, {:.2} ms | {:.1}x faster | optimize {optimize_secs:.1} s |",
            files_after.0,
            files_after.1,
            100.0 * files_after.0 as f64 / files_after.1 as f64,
            after.as_secs_f64() * 1e3,
            files_before.0,
            files_before.1,
            before.as_secs_f64() * 1e3,
            before.as_secs_f64() / after.as_secs_f64(),
        );
        assert!(files_after.0 <= files_before.0);
        let start = Instant::now();
        execute_sql(
            &ctx,
            "ALTER TABLE t EXECUTE optimize(strategy => 'sort', sort_order => 'zorder(a, b)')",
        )
        .await
        .unwrap();
        let optimize_secs = start.elapsed().as_secs_f64();
        for (column, sql, expected) in [("a", &on_a, &expected_a), ("b", &on_b, &expected_b)] {
            let (took, got) = time(&ctx, sql, runs).await;
            assert_eq!(&got, expected, "{layout}: z-order changed the answer on {column}");
            let f = files(&ctx, sql).await;
            println!(
                "| {layout}: `{column} = …` after zorder(a, b) | {}/{} files ({:.1} %) | {:.2} ms | | | optimize {optimize_secs:.1} s |",
                f.0,
                f.1,
                100.0 * f.0 as f64 / f.1 as f64,
                took.as_secs_f64() * 1e3,
            );
        }
    }
}

/// Child: INSERT the rows into a new table (sorted or not); print seconds and peak KiB.
async fn child(ordered: bool, dir: &str, s: &Size) {
    let ctx = session(dir).await.unwrap();
    execute_sql(&ctx, &create("t", true, ordered, s)).await.unwrap();
    let start = Instant::now();
    execute_sql(&ctx, &format!("INSERT INTO t {}", source(s.rows)))
        .await
        .unwrap();
    println!("{} {}", start.elapsed().as_secs_f64(), vm_hwm_kib());
}

fn run_child(ordered: bool, full: bool) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--child",
            if ordered { "sorted" } else { "unsorted" },
            dir.path().to_str().unwrap(),
            if full { "full" } else { "tiny" },
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    let mut parts = line.split_whitespace();
    let secs: f64 = parts.next().unwrap().parse().unwrap();
    let kib: f64 = parts.next().unwrap().parse().unwrap();
    (secs, kib / 1024.0)
}

fn sorted_insert(full: bool) {
    let runs = if full { 3 } else { 1 };
    let (mut sorted, mut unsorted) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        unsorted.push(run_child(false, full));
        sorted.push(run_child(true, full));
    }
    let median = |v: &mut Vec<(f64, f64)>| {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v[v.len() / 2]
    };
    let (s, u) = (median(&mut sorted), median(&mut unsorted));
    println!(
        "| INSERT ORDERED BY (a), day(ts) | {:.2} s, peak {:.0} MiB | unsorted: {:.2} s, peak {:.0} MiB | {:.2}x the time | |",
        s.0,
        s.1,
        u.0,
        u.1,
        s.0 / u.0
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let ordered = args[i + 1] == "sorted";
        let s = if args[i + 3] == "full" { &FULL } else { &TINY };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(child(ordered, &args[i + 2], s));
        return;
    }
    let full = args.iter().any(|a| a == "--bench");
    let s = if full { &FULL } else { &TINY };
    let only: Vec<&String> = args.iter().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    println!("| case | planned | time | baseline (same run) | ratio | |");
    println!("|---|---|---|---|---|---|");
    if wanted("point_queries") {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(point_queries(s, full));
    }
    if wanted("sorted_insert") {
        sorted_insert(full);
    }
}
