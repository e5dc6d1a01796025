//! Manifest pruning throughput: how many manifest entries (data files) per
//! second planning evaluates, for tables of 100,000 and 1,000,000 files.
//!
//! Three figures per size, all in this run:
//! - *vectorized evaluation*: the projected partition predicate and the
//!   statistics predicate over manifests already in memory (the kernels);
//! - *row-by-row baseline*: the same partition predicate evaluated one entry
//!   at a time with `ScalarValue` comparisons, as a row-oriented manifest
//!   reader does;
//! - *end-to-end planning*: `plan_files` reading the manifests from disk,
//!   column-wise, only needed columns; its peak memory is measured in a child
//!   process (`VmHWM`).
//!
//! `cargo bench --bench manifest_pruning`; under `cargo test` a tiny size runs once.

use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::{AsArray, BooleanArray};
use datafusion::arrow::compute::and;
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Expr, col, lit};
use datafusion::prelude::SessionContext;
use hidden_partitions::Warehouse;
use hidden_partitions::expr::{evaluate, project_inclusive};
use hidden_partitions::manifest::format::PARTITION;
use hidden_partitions::manifest::unique::{check_listed_once, verified_key};
use hidden_partitions::manifest::{ColumnStats, DataFile, read_manifest};
use hidden_partitions::plan::files::{plan_files, source_predicate, stats_pruning_predicate};
use hidden_partitions::store::TableLocation;
use hidden_partitions::table::{PartitionFieldDef, Table};
use hidden_partitions::transform::Transform;

const DAY_MICROS: i64 = 86_400_000_000;
const START_2024: i64 = 1_704_067_200_000_000;
const PER_MANIFEST: usize = 100_000;

fn schema() -> Schema {
    Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("region", DataType::Utf8, true),
        Field::new("amount", DataType::Float64, true),
    ])
}

fn filters() -> Vec<Expr> {
    let ts = |days: i64| {
        lit(ScalarValue::TimestampMicrosecond(
            Some(START_2024 + days * DAY_MICROS),
            None,
        ))
    };
    vec![
        col("ts").gt_eq(ts(60)),
        col("ts").lt(ts(67)),
        col("id").eq(lit(123_456i64)),
    ]
}

/// Deterministic pseudo-random entries: day(ts) over 2024, bucket(16, id), id ranges.
fn entries(start: usize, n: usize) -> Vec<DataFile> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ start as u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (start..start + n)
        .map(|i| {
            let day = (next() % 366) as i32;
            let bucket = (next() % 16) as i32;
            let lo = (next() % 1_000_000) as i64;
            let ts_lo = START_2024 + day as i64 * DAY_MICROS;
            DataFile {
                path: format!("data/ts_day=x/id_bucket_16={bucket}/{i}.parquet"),
                file_size: 1 << 20,
                record_count: 10_000,
                spec_id: 0,
                partition: vec![
                    ScalarValue::Date32(Some(19_723 + day)),
                    ScalarValue::Int32(Some(bucket)),
                ],
                partition_strings: vec![None, Some(bucket.to_string())],
                column_stats: vec![
                    ColumnStats {
                        field_id: 1,
                        null_count: 0,
                        min: Some(ScalarValue::Int64(Some(lo))),
                        max: Some(ScalarValue::Int64(Some(lo + 5_000))),
                    },
                    ColumnStats {
                        field_id: 2,
                        null_count: 0,
                        min: Some(ScalarValue::TimestampMicrosecond(Some(ts_lo), None)),
                        max: Some(ScalarValue::TimestampMicrosecond(Some(ts_lo + DAY_MICROS - 1), None)),
                    },
                ],
                pending: None,
                first_row_id: None,
                sort_order_id: None,
                referenced_data_file: None,
                blob: None,
            }
        })
        .collect()
}

async fn build(dir: &std::path::Path, files: usize) -> Table {
    let wh = Warehouse::local(dir).unwrap();
    let table = Table::new("t", wh.table_location("t"));
    let defs = [
        PartitionFieldDef {
            source: "ts".into(),
            transform: Transform::Day,
            name: None,
        },
        PartitionFieldDef {
            source: "id".into(),
            transform: Transform::Bucket(16),
            name: None,
        },
    ];
    let created = table.create(&schema(), &defs).await.unwrap();
    let table = table.bound(&created.metadata.table_uuid);
    let spec = created.metadata.current_spec().unwrap().clone();
    let mut done = 0;
    while done < files {
        let n = PER_MANIFEST.min(files - done);
        table.append(&spec, entries(done, n)).await.unwrap();
        done += n;
    }
    table
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// Child mode: plan once over an existing table, print selected files and peak memory.
async fn plan_child(dir: &str) {
    let ctx = SessionContext::new();
    let location: TableLocation = Warehouse::local(dir).unwrap().table_location("t");
    let md = location.load().await.unwrap().metadata;
    let before = vm_hwm_kib();
    let start = Instant::now();
    let arrow = Arc::new(schema());
    let pruning = stats_pruning_predicate(&ctx.state(), &filters(), &arrow);
    let plan = plan_files(&location, &md, md.current_snapshot(), &filters(), pruning.as_deref())
        .await
        .unwrap();
    let secs = start.elapsed().as_secs_f64();
    let hwm = vm_hwm_kib();
    // Warm: the same query again in this session (metadata versions and
    // manifests cached); the latest version is still probed each time.
    let mut warm = f64::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        let md = location.load().await.unwrap().metadata;
        let pruning = stats_pruning_predicate(&ctx.state(), &filters(), &arrow);
        let again = plan_files(&location, &md, md.current_snapshot(), &filters(), pruning.as_deref())
            .await
            .unwrap();
        warm = warm.min(start.elapsed().as_secs_f64());
        assert_eq!(again.selected(), plan.selected());
    }
    // Every file selected (no filter, as `SELECT count(*)` plans): the
    // duplicate-file check runs on the first such plan of the snapshot in a
    // session, which proves the whole snapshot; later plans skip it.
    let snapshot = md.current_snapshot().unwrap();
    let start = Instant::now();
    let all = plan_files(&location, &md, Some(snapshot), &[], None).await.unwrap();
    let first = start.elapsed().as_secs_f64();
    assert_eq!(all.selected(), all.total());
    assert!(location.cache.flag(&verified_key(&location.url(), snapshot)));
    let (mut full, mut check) = (f64::MAX, f64::MAX);
    for _ in 0..5 {
        let start = Instant::now();
        let all = plan_files(&location, &md, Some(snapshot), &[], None).await.unwrap();
        full = full.min(start.elapsed().as_secs_f64());
        assert_eq!(all.selected(), all.total());
        let start = Instant::now();
        check_listed_once(
            all.files.iter().map(|f| (&f.path, f.manifest)),
            snapshot,
            &location.root,
        )
        .unwrap();
        check = check.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{} {} {secs} {before} {hwm} {warm} {first} {full} {check}",
        plan.selected(),
        plan.total()
    );
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--plan-child") {
        return plan_child(&args[i + 1]).await;
    }
    let full = args.iter().any(|a| a == "--bench");
    let sizes: &[usize] = if full { &[100_000, 1_000_000] } else { &[2_000] };
    println!(
        "| files | vectorized evaluation | row-by-row baseline | speed-up | end-to-end planning (read + prune) | warm (cached) | peak memory of planning |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut checks = Vec::new();
    for &n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let table = build(dir.path(), n).await;
        let md = table.load().await.unwrap().metadata;
        let spec = md.current_spec().unwrap();
        let snapshot = md.current_snapshot().unwrap();
        let ctx = SessionContext::new();
        let arrow = Arc::new(schema());
        let predicate = source_predicate(&filters(), &spec.schema);
        let bound = spec.partition_spec.bind(&spec.schema).unwrap();
        let projected = project_inclusive(&predicate, &bound);
        let pruning = stats_pruning_predicate(&ctx.state(), &filters(), &arrow).unwrap();
        let mut batches = Vec::new();
        for m in snapshot.manifests().expect("loaded") {
            batches.push(read_manifest(&table.location, m, spec, None).await.unwrap());
        }

        // Vectorized: kernels over the in-memory manifests (best of 5).
        let mut best = f64::MAX;
        let mut kept = 0;
        for _ in 0..5 {
            let start = Instant::now();
            kept = 0;
            for b in &batches {
                let parts = b.column_by_name(PARTITION).unwrap().as_struct();
                let column = |id: i32| Some(Arc::clone(parts.column((id - 1000) as usize)));
                let mask = evaluate(&projected, b.num_rows(), &column).unwrap();
                let stats = hidden_partitions_stats(b, spec);
                let by_stats = BooleanArray::from(pruning.prune(&stats).unwrap());
                let keep = and(&mask, &by_stats).unwrap();
                kept += keep.true_count();
            }
            best = best.min(start.elapsed().as_secs_f64());
        }
        let vectorized = n as f64 / best;

        // Row-by-row: the partition predicate, one entry at a time.
        let (lo, hi) = (
            ScalarValue::Date32(Some(19_723 + 60)),
            ScalarValue::Date32(Some(19_723 + 66)),
        );
        let want_bucket = Transform::Bucket(16)
            .apply_scalar(&ScalarValue::Int64(Some(123_456)))
            .unwrap();
        let start = Instant::now();
        let mut kept_rows = 0usize;
        for b in &batches {
            let parts = b.column_by_name(PARTITION).unwrap().as_struct();
            for i in 0..b.num_rows() {
                let day = ScalarValue::try_from_array(parts.column(0), i).unwrap();
                let bucket = ScalarValue::try_from_array(parts.column(1), i).unwrap();
                if day >= lo && day <= hi && bucket == want_bucket {
                    kept_rows += 1;
                }
            }
        }
        let row_by_row = n as f64 / start.elapsed().as_secs_f64();
        assert!(kept <= kept_rows, "statistics only remove files");

        // End to end, in a fresh process for an honest peak-memory figure.
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--plan-child", dir.path().to_str().unwrap()])
            .output()
            .unwrap();
        let line = String::from_utf8_lossy(&out.stdout).to_string();
        let parts: Vec<&str> = line.split_whitespace().collect();
        let (selected, secs, hwm, warm) = (
            parts[0],
            parts[2].parse::<f64>().unwrap(),
            parts[4].parse::<u64>().unwrap(),
            parts[5].parse::<f64>().unwrap(),
        );
        let figure = |i: usize| parts[i].parse::<f64>().unwrap();
        checks.push((n, figure(6), figure(7), figure(8)));
        assert_eq!(
            selected.parse::<usize>().unwrap(),
            kept,
            "end-to-end planning keeps the same files"
        );
        println!(
            "| {n} | {:.1} M entries/s | {:.2} M entries/s | {:.0}x | {:.1} M entries/s ({:.0} ms, {kept} kept) | {:.1} ms | {:.0} MiB |",
            vectorized / 1e6,
            row_by_row / 1e6,
            vectorized / row_by_row,
            n as f64 / secs / 1e6,
            secs * 1e3,
            warm * 1e3,
            hwm as f64 / 1024.0
        );
    }
    println!();
    println!(
        "| files | first plan of the snapshot, every file selected | the duplicate-file check in it | share | later plans (check skipped) | the check's share had it run |"
    );
    println!("|---|---|---|---|---|---|");
    for (n, first, full, check) in checks {
        println!(
            "| {n} | {:.1} ms | {:.2} ms | {:.1} % | {:.1} ms | {:.1} % |",
            first * 1e3,
            check * 1e3,
            100.0 * check / first,
            full * 1e3,
            100.0 * check / (full + check)
        );
    }
}

/// The planner's statistics view over a manifest batch.
fn hidden_partitions_stats<'a>(
    batch: &'a datafusion::arrow::array::RecordBatch,
    spec: &'a hidden_partitions::spec::TableSpec,
) -> impl datafusion::common::pruning::PruningStatistics + 'a {
    hidden_partitions::plan::files::ManifestStatistics::new(batch, spec, &spec.schema)
}
