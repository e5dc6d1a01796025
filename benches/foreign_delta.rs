//! Reading a Delta table written by delta-rs: opening it and planning a
//! one-day query on a table of 2,003 one-row data files with a checkpoint,
//! against *deltalake* (delta-rs' Python package) in the same run:
//! `DeltaTable(dir).file_uris(file_pruning_predicate="d = DATE '<day>'")`,
//! the table opened anew each time, in a child Python process
//! (`HP_FIXTURE_PYTHON`, default `/work/venv-fixtures/bin/python`, with
//! `deltalake`), timed inside Python so its start-up is not counted.
//!
//! Ours: `formats::open(Format::Delta, …)` (the log replayed by
//! `delta_kernel`: checkpoint plus the commits after it) and the physical
//! plan of `SELECT id FROM t WHERE d = DATE '<day>'`, cold each time.
//!
//! The table is generated once by `benches/delta_table.py` into
//! `target/bench-delta-2003` (or `HP_BENCH_DELTA_DIR`).
//!
//! `HP_FIXTURE_PYTHON=/path/to/python cargo bench --features ballista --bench
//! foreign_delta`; under `cargo test` it runs once on the committed fixture
//! `tests/data/delta/dated` (no Python needed).

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::prelude::SessionContext;
use hidden_partitions::formats::{self, ForeignTable, Format, delta};
use hidden_partitions::{StorageOptions, session};

mod support;

const FILES: usize = 2003;
const DAY: &str = "2020-06-01";

async fn open(dir: &str) -> ForeignTable {
    formats::open(Format::Delta, "t", dir, &StorageOptions::default())
        .await
        .expect("open the Delta table")
}

/// Plan the one-day query on `table`: files selected / total.
async fn plan(ctx: &SessionContext, table: ForeignTable, day: &str) -> String {
    support::planned_files(ctx, Arc::new(table), &format!("d = DATE '{day}'")).await
}

fn python() -> String {
    std::env::var("HP_FIXTURE_PYTHON").unwrap_or_else(|_| "/work/venv-fixtures/bin/python".into())
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/delta_table.py")
}

/// deltalake's open + `file_uris` for the day: (best seconds, files).
fn deltalake_plan(dir: &str, day: &str, repeats: usize) -> Option<(f64, u64)> {
    let out = std::process::Command::new(python())
        .args([script().to_str()?, "plan", dir, day, &repeats.to_string()])
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("deltalake plan failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((v["seconds"].as_f64()?, v["files"].as_u64()?))
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (dir, day, runs) = if full {
        let dir = std::env::var("HP_BENCH_DELTA_DIR").unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/bench-delta-2003")
                .display()
                .to_string()
        });
        if !PathBuf::from(&dir).join("_delta_log").exists() {
            let status = std::process::Command::new(python())
                .args([script().to_str().expect("utf-8"), "create", &dir, &FILES.to_string()])
                .status()
                .expect("run benches/delta_table.py");
            assert!(status.success(), "creating the benchmark table failed");
        }
        (dir, DAY.to_string(), 7)
    } else {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/delta/dated");
        (dir.display().to_string(), "2024-01-01".to_string(), 1)
    };
    rt.block_on(async {
        let wh = tempfile::tempdir().expect("tempdir");
        let ctx = session(wh.path()).await.expect("session");
        let (cold, files) = support::best_of(runs, || async { plan(&ctx, open(&dir).await, &day).await }).await;
        let (open_best, _) = support::best_of(runs, || open(&dir)).await;
        let table = open(&dir).await;
        let (warm, _) = support::best_of(runs, || plan(&ctx, table.clone(), &day)).await;
        // The open's two steps: the log replayed by delta_kernel, then
        // converted to our manifests (partition values, statistics).
        let store: Arc<dyn object_store::ObjectStore> = Arc::new(object_store::local::LocalFileSystem::new());
        let root = format!("file://{}/", std::fs::canonicalize(&dir).expect("dir").display());
        let (replay, log) = support::best_of(runs, || async {
            let (store, root) = (Arc::clone(&store), root.clone());
            tokio::task::spawn_blocking(move || delta::log::replay(store, &root, None))
                .await
                .expect("join")
                .expect("replay")
        })
        .await;
        let (convert, _) =
            support::best_of(runs, || async { delta::convert::convert(&log, "t").expect("convert") }).await;
        println!("one-day query on {dir}: files={files}");
        println!("  ours, open + plan (cold)        {:>9.2} ms", cold * 1e3);
        println!("  ours, open alone (log replay)   {:>9.2} ms", open_best * 1e3);
        println!("  ours, plan an open table        {:>9.2} ms", warm * 1e3);
        println!("    of the open: log replay       {:>9.2} ms", replay * 1e3);
        println!("    of the open: convert          {:>9.2} ms", convert * 1e3);
        if full {
            match deltalake_plan(&dir, &day, runs) {
                Some((s, n)) => println!(
                    "  deltalake open + file_uris      {:>9.2} ms  ({n} files)  deltalake / ours cold = {:.2}",
                    s * 1e3,
                    s / cold
                ),
                None => println!("  deltalake: not run (set HP_FIXTURE_PYTHON to a Python with deltalake)"),
            }
        }
        assert!(files.starts_with(if full { "5/" } else { "" }), "files={files}");
    });
}
