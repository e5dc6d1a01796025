//! Reading an Iceberg table written by pyiceberg: planning a one-day query
//! on a table of 10,000 data files (`day(ts)`), and manifest entries
//! evaluated per second, against baselines measured in the same run:
//!
//! - *pyiceberg `plan_files()`* for the same filter (a child Python process;
//!   `HP_FIXTURE_PYTHON`, default `/work/venv-fixtures/bin/python`);
//! - *row by row*: the same Avro manifests decoded by `apache-avro` into
//!   its `Value` tree, the partition predicate evaluated entry by entry with
//!   `ScalarValue` comparisons, as a row-oriented reader does.
//!
//! Ours decodes the Avro manifests straight into Arrow columns
//! (`iceberg::manifest_entries`), once with the partition column only (what
//! planning a partition filter asks for) and once with every column and
//! every column's statistics.
//!
//! The table is generated once by `benches/iceberg_table.py` into
//! `target/bench-iceberg-10k` (or `HP_BENCH_ICEBERG_DIR`).
//!
//! `HP_FIXTURE_PYTHON=/path/to/python cargo bench --features ballista --bench
//! foreign_iceberg` (a Python with pyiceberg 0.12); under `cargo test` it runs once on
//! the committed fixture `tests/data/iceberg/evolved` (no Python needed).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use apache_avro::types::Value;
use datafusion::arrow::array::Array;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{col, lit};
use datafusion::prelude::SessionContext;
use hidden_partitions::expr::{evaluate, project_inclusive};
use hidden_partitions::formats::{self, ForeignTable, Format};
use hidden_partitions::iceberg::avro_container::Container;
use hidden_partitions::iceberg::avro_records::{AvroFile, RecordIds, unwrap};
use hidden_partitions::manifest::format::PARTITION;
use hidden_partitions::manifest::read_manifest;
use hidden_partitions::plan::files::source_predicate;
use hidden_partitions::{StorageOptions, session};
use object_store::ObjectStoreExt;

mod support;

const FILES: usize = 10_000;
const DAY: &str = "2022-06-01";

async fn open(dir: &str) -> ForeignTable {
    formats::open(Format::Iceberg, "t", dir, &StorageOptions::default())
        .await
        .expect("open the Iceberg table")
}

fn day_filter(day: &str) -> String {
    let d = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").expect("a date");
    let next = d.succ_opt().expect("a next day");
    format!("ts >= TIMESTAMP '{d} 00:00:00' AND ts < TIMESTAMP '{next} 00:00:00'")
}

/// Plan the query on `table`: files selected / total.
async fn plan(ctx: &SessionContext, table: ForeignTable, filter: &str) -> String {
    support::planned_files(ctx, Arc::new(table), filter).await
}

/// Every entry of every data manifest: decoded to Arrow (ours) and evaluated
/// with one kernel call per manifest; `columns` are the manifest columns
/// decoded (planning asks for the partition and the filter's columns; `None`
/// decodes all, every column's statistics included). Returns (entries, matches).
async fn entries_vectorized(dir: &str, day: i32, columns: Option<&[String]>) -> (usize, usize) {
    let table = open(dir).await;
    let md = table.metadata();
    let micros = |d: i32| lit(ScalarValue::TimestampMicrosecond(Some(d as i64 * 86_400_000_000), None));
    let expr = col("ts").gt_eq(micros(day)).and(col("ts").lt(micros(day + 1)));
    let predicate = source_predicate(&[expr], &md.current_spec().expect("spec").schema);
    let (mut entries, mut matches) = (0, 0);
    for m in md.current_manifests().expect("snapshot") {
        let spec = md.spec(m.spec_id).expect("spec");
        let bound = spec.partition_spec.bind(&spec.schema).expect("bind");
        let projected = project_inclusive(&predicate, &bound);
        let batch = read_manifest(table.location(), m, spec, columns)
            .await
            .expect("manifest");
        let partition = batch
            .column_by_name(PARTITION)
            .expect("partition")
            .as_any()
            .downcast_ref::<datafusion::arrow::array::StructArray>()
            .expect("struct");
        let column = |id: i32| {
            let i = spec.partition_spec.fields.iter().position(|f| f.field_id == id)?;
            Some(Arc::clone(partition.column(i)))
        };
        let mask = evaluate(&projected, batch.num_rows(), &column).expect("evaluate");
        entries += batch.num_rows();
        matches += mask.true_count();
    }
    (entries, matches)
}

/// The floor both decoders share: fetching every data manifest and reading
/// its Avro container (blocks decompressed), nothing decoded. Returns blocks.
async fn containers_only(dir: &str) -> usize {
    let table = open(dir).await;
    let md = table.metadata();
    let location = table.location();
    let mut blocks = 0;
    for m in md.current_manifests().expect("snapshot") {
        let path = location.resolve(&m.path).expect("path");
        let bytes = location
            .store
            .get(&path)
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes");
        blocks += Container::read(&bytes, &m.path).expect("avro").blocks.len();
    }
    blocks
}

/// The same manifests decoded by the same Avro crate, evaluated entry by entry.
async fn entries_row_by_row(dir: &str, day: i32) -> (usize, usize) {
    let table = open(dir).await;
    let md = table.metadata();
    let location = table.location();
    let target = ScalarValue::Date32(Some(day));
    let (mut entries, mut matches) = (0, 0);
    for m in md.current_manifests().expect("snapshot") {
        let path = location.resolve(&m.path).expect("path");
        let bytes = location
            .store
            .get(&path)
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes");
        let file = AvroFile::decode(&bytes, &m.path).expect("avro");
        let entry_ids = RecordIds::of(&file.schema, "m").expect("ids");
        let file_ids = entry_ids.nested(2, "m").expect("ids");
        let partition_ids = file_ids.nested(102, "m").expect("ids");
        for r in &file.records {
            entries += 1;
            if entry_ids.int(r, 0) == Some(2) {
                continue;
            }
            let Some(data_file) = entry_ids.get(r, 2) else { continue };
            let Some(p) = file_ids.get(data_file, 102) else {
                continue;
            };
            // The first field of the spec (day(ts) in the benchmark table).
            let value = match partition_ids.get(p, 1000).map(unwrap) {
                Some(Value::Date(d) | Value::Int(d)) => ScalarValue::Date32(Some(*d)),
                _ => ScalarValue::Null,
            };
            if value.partial_cmp(&target) == Some(std::cmp::Ordering::Equal) {
                matches += 1;
            }
        }
    }
    (entries, matches)
}

fn pyiceberg_plan(dir: &str, day: &str) -> Option<(f64, u64)> {
    let python = std::env::var("HP_FIXTURE_PYTHON").unwrap_or_else(|_| "/work/venv-fixtures/bin/python".into());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/iceberg_table.py");
    let out = std::process::Command::new(python)
        .args([script.to_str()?, "plan", dir, day, "3"])
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((v["seconds"].as_f64()?, v["files"].as_u64()?))
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rt = rt();
    let (dir, day, runs) = if full {
        let dir = std::env::var("HP_BENCH_ICEBERG_DIR").unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/bench-iceberg-10k")
                .display()
                .to_string()
        });
        if !PathBuf::from(&dir).join("metadata").exists() {
            let python = std::env::var("HP_FIXTURE_PYTHON").unwrap_or_else(|_| "/work/venv-fixtures/bin/python".into());
            let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/iceberg_table.py");
            let status = std::process::Command::new(python)
                .args([
                    script.to_str().expect("utf-8"),
                    "create",
                    &dir,
                    &FILES.to_string(),
                    "500",
                ])
                .status()
                .expect("run benches/iceberg_table.py");
            assert!(status.success(), "creating the benchmark table failed");
        }
        (dir, DAY.to_string(), 5)
    } else {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/iceberg/evolved");
        (dir.display().to_string(), "2024-01-02".to_string(), 1)
    };
    let filter = day_filter(&day);
    let day_number = (chrono::NaiveDate::parse_from_str(&day, "%Y-%m-%d").expect("date")
        - chrono::NaiveDate::from_ymd_opt(1970, 1, 1).expect("epoch"))
    .num_days() as i32;
    rt.block_on(async {
        let wh = tempfile::tempdir().expect("tempdir");
        let ctx = session(wh.path()).await.expect("session");
        // Cold: open (metadata + manifest list) and plan, manifests decoded anew.
        let (cold, files) = support::best_of(runs, || async { plan(&ctx, open(&dir).await, &filter).await }).await;
        // Open alone: metadata file found and parsed, manifest list read.
        let (open_best, _) = support::best_of(runs, || open(&dir)).await;
        // Warm: the same table planned again (decoded manifests cached).
        let table = open(&dir).await;
        plan(&ctx, table.clone(), &filter).await;
        let (warm, _) = support::best_of(runs, || plan(&ctx, table.clone(), &filter)).await;
        println!("one-day query on {dir}: files={files}");
        println!("  ours, open + plan (cold)        {:>9.2} ms", cold * 1e3);
        println!("  ours, open alone                {:>9.2} ms", open_best * 1e3);
        println!("  ours, plan again (warm)         {:>9.2} ms", warm * 1e3);
        if full {
            match pyiceberg_plan(&dir, &day) {
                Some((s, n)) => println!(
                    "  pyiceberg plan_files            {:>9.2} ms  ({n} files)  pyiceberg / ours cold = {:.2}",
                    s * 1e3,
                    s / cold
                ),
                None => {
                    println!("  pyiceberg plan_files: not run (set HP_FIXTURE_PYTHON to a Python with pyiceberg 0.12)")
                }
            }
        }
        let mut vec_best = f64::MAX;
        let mut all_best = f64::MAX;
        let mut row_best = f64::MAX;
        let mut floor_best = f64::MAX;
        let mut blocks = 0;
        let mut counts = ((0, 0), (0, 0));
        let partition_only = [PARTITION.to_string()];
        for _ in 0..runs {
            let t = Instant::now();
            counts.0 = entries_vectorized(&dir, day_number, Some(&partition_only)).await;
            vec_best = vec_best.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let all = entries_vectorized(&dir, day_number, None).await;
            all_best = all_best.min(t.elapsed().as_secs_f64());
            assert_eq!(all, counts.0);
            let t = Instant::now();
            counts.1 = entries_row_by_row(&dir, day_number).await;
            row_best = row_best.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            blocks = containers_only(&dir).await;
            floor_best = floor_best.min(t.elapsed().as_secs_f64());
        }
        let ((n, m1), (n2, m2)) = counts;
        println!("all manifest entries ({n}; {m1} / {m2} match), Avro read + decode + evaluate:");
        println!(
            "  row by row (apache-avro Values) {:>12.0} entries/s",
            n2 as f64 / row_best
        );
        println!(
            "  ours, partition column          {:>12.0} entries/s  ours / row by row = {:.2}x",
            n as f64 / vec_best,
            row_best / vec_best
        );
        println!(
            "  ours, every column and stats    {:>12.0} entries/s  ours / row by row = {:.2}x",
            n as f64 / all_best,
            row_best / all_best
        );
        println!(
            "  open + read containers only     {:>12.0} entries/s  ({blocks} Avro blocks inflated; the floor of both)",
            n as f64 / floor_best
        );
    });
}
