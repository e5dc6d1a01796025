//! What the Iceberg side costs a commit: a one-row INSERT into a table
//! that is also an Iceberg table (each manifest with its Avro twin, each
//! snapshot with its Avro manifest list) against the same INSERT into a
//! table in the legacy form, which writes no Iceberg files (it has a
//! nanosecond `TIME` column, a type no Iceberg version has; a CTAS from
//! `TIME` values makes one). Same run, interleaved, on a local
//! directory and on the S3 test server (when `HP_S3_ENDPOINT` is set).
//!
//! Then the bytes one such commit writes into a table of 10,000 data files
//! (local), by kind, next to the size of the manifest it leaves alone.
//!
//! `cargo bench --bench commit`; under `cargo test` a tiny case runs once.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use hidden_partitions::slt::S3Server;
use hidden_partitions::store::observe::RequestCounts;
use hidden_partitions::{StorageOptions, Warehouse, execute_sql, session_with};

async fn run(ctx: &datafusion::prelude::SessionContext, sql: &str) {
    execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The baseline must be in the legacy form (no Iceberg files), or the
/// ratio compares the Iceberg side with itself.
fn assert_legacy(table_dir: &str) {
    let hint = std::fs::read_to_string(format!("{table_dir}/metadata/version-hint.text")).unwrap();
    let md = std::fs::read_to_string(format!("{table_dir}/metadata/v{}.metadata.json", hint.trim())).unwrap();
    let md: serde_json::Value = serde_json::from_str(&md).unwrap();
    assert_eq!(
        md["format-version"], 1,
        "the baseline table {table_dir} is not in the legacy form"
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Files under `dir` with their sizes, by path relative to it.
fn files(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
                out.insert(rel, e.metadata().unwrap().len());
            }
        }
    }
    out
}

fn kind(path: &str) -> &'static str {
    if path.starts_with("data/") {
        "data file"
    } else if path.ends_with("-m.parquet") {
        "manifest (ours)"
    } else if path.ends_with("-m.avro") {
        "manifest twin (Iceberg)"
    } else if path.contains("-snap-") {
        "manifest list (Iceberg)"
    } else if path.ends_with(".metadata.json") {
        "metadata version"
    } else {
        "other"
    }
}

#[tokio::main]
async fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let local = tempfile::tempdir().unwrap();
    let mut targets = vec![(
        "local directory",
        local.path().to_str().unwrap().to_string(),
        StorageOptions::new(),
        if full { 40 } else { 2 },
    )];
    match S3Server::from_env() {
        Ok(Some(s3)) => targets.push((
            "S3 server (moto)",
            s3.prefix("bench-commit"),
            s3.options(),
            if full { 20 } else { 2 },
        )),
        Ok(None) => hidden_partitions::slt::skipped_without_s3("the S3 part of the commit benchmark"),
        Err(e) => panic!("{e}"),
    }
    println!(
        "| store | one-row INSERT, Iceberg table (median) | the same, legacy form (median) | ratio | requests per commit (Iceberg / legacy) |"
    );
    println!("|---|---|---|---|---|");
    for (name, base, options, rounds) in &targets {
        let wh = Warehouse::open(&format!("{base}/wh"), options.clone()).unwrap();
        let counts: Arc<RequestCounts> = Arc::clone(&wh.requests);
        let ctx = session_with(wh).await.unwrap();
        run(
            &ctx,
            "CREATE TABLE ice (id BIGINT, t BIGINT) PARTITIONED BY (bucket(4, id));
             CREATE TABLE legacy PARTITIONED BY (bucket(4, id)) AS SELECT CAST(0 AS BIGINT) AS id, TIME '00:00:00' AS t;
             INSERT INTO ice VALUES (0, 0)",
        )
        .await;
        if *name == "local directory" {
            assert_legacy(&format!("{base}/wh/legacy"));
        }
        let (mut ice, mut old) = (Vec::new(), Vec::new());
        let (mut ice_requests, mut old_requests) = (0u64, 0u64);
        for i in 1..=*rounds {
            for (table, value, times, requests) in [
                ("ice", format!("{i}"), &mut ice, &mut ice_requests),
                (
                    "legacy",
                    format!("TIME '00:00:{:02}'", i % 60),
                    &mut old,
                    &mut old_requests,
                ),
            ] {
                let before = counts.snapshot();
                let start = Instant::now();
                run(&ctx, &format!("INSERT INTO {table} VALUES ({i}, {value})")).await;
                times.push(start.elapsed().as_secs_f64());
                *requests += counts.snapshot().since(&before).total();
            }
        }
        let (a, b) = (median(ice), median(old));
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.2}x | {:.1} / {:.1} |",
            a * 1e3,
            b * 1e3,
            a / b,
            ice_requests as f64 / *rounds as f64,
            old_requests as f64 / *rounds as f64
        );
    }

    // Bytes written by one commit into a table of many files.
    let n = if full { 10_000 } else { 100 };
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let ctx = session_with(Warehouse::open(wh.to_str().unwrap(), StorageOptions::new()).unwrap())
        .await
        .unwrap();
    run(
        &ctx,
        &format!(
            "CREATE TABLE many (id BIGINT, t BIGINT) PARTITIONED BY (id);
             INSERT INTO many SELECT value AS id, value * 2 AS t FROM generate_series(1, {n}) AS s(value)"
        ),
    )
    .await;
    let table = wh.join("many");
    let before = files(&table);
    run(&ctx, "INSERT INTO many VALUES (0, 0)").await;
    let after = files(&table);
    let mut by_kind: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (path, size) in &after {
        if before.get(path) == Some(size) {
            continue;
        }
        let e = by_kind.entry(kind(path)).or_default();
        e.0 += 1;
        e.1 += size;
    }
    let untouched: u64 = before
        .iter()
        .filter(|(p, _)| p.ends_with("-m.parquet") || p.ends_with("-m.avro"))
        .map(|(_, s)| s)
        .sum();
    println!();
    println!("| one-row INSERT into a table of {n} files: written | files | bytes |");
    println!("|---|---|---|");
    let mut total = 0;
    for (kind, (count, bytes)) in &by_kind {
        total += bytes;
        println!("| {kind} | {count} | {bytes} |");
    }
    println!("| **total** | | **{total}** |");
    println!("| (the existing manifest and its twin, not rewritten) | | {untouched} |");
}
