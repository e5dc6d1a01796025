//! `remove_orphan_files` deletes only files the table's own writers made,
//! that no metadata references and no writer still in flight will commit:
//! planted look-alikes (named as our writers named files before the
//! per-table prefix, 30 days old), files that were in a `LOCATION` before the
//! table, and the files of concurrent writers all survive it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use hidden_partitions::{execute_sql, session};

const ID: &str = "7f0e3c1a-4b5d-4e6f-8a9b-0c1d2e3f4a5b";
const MANIFEST_ID: &str = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";

async fn sql(ctx: &SessionContext, sql: &str) -> String {
    let out = execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    pretty_format_batches(&out.last().unwrap().batches).unwrap().to_string()
}

/// Write `path` with `bytes`, last modified `age` ago.
fn plant(path: &Path, bytes: &[u8], age: Duration) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

const MONTH: Duration = Duration::from_secs(30 * 86_400);

/// Look-alikes of our data file and manifest names (bare uuids, as our
/// writers named files before the per-table prefix).
fn look_alikes(root: &Path, age: Duration) -> Vec<PathBuf> {
    let files = vec![
        root.join(format!("data/p=1/{ID}.parquet")),
        root.join(format!("metadata/{MANIFEST_ID}-m.parquet")),
    ];
    for f in &files {
        plant(f, b"not the table's", age);
    }
    files
}

fn assert_intact(files: &[PathBuf], after: &str) {
    for f in files {
        assert_eq!(
            std::fs::read(f).unwrap_or_else(|e| panic!("{after}: {} is gone: {e}", f.display())),
            b"not the table's",
            "{after}: {}",
            f.display()
        );
    }
}

fn latest_metadata(root: &Path) -> (PathBuf, serde_json::Value) {
    let dir = root.join("metadata");
    let n = (1..)
        .take_while(|n| dir.join(format!("v{n}.metadata.json")).exists())
        .last()
        .unwrap();
    let path = dir.join(format!("v{n}.metadata.json"));
    let md = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    (path, md)
}

#[tokio::test]
async fn planted_look_alikes_are_not_orphans() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let ctx = session(&wh).await.unwrap();
    sql(
        &ctx,
        "CREATE TABLE t (id BIGINT, p INT) PARTITIONED BY (p); INSERT INTO t VALUES (1, 1), (2, 2)",
    )
    .await;
    let planted = look_alikes(&wh.join("t"), MONTH);
    let listed = sql(&ctx, "SELECT count(*) AS n FROM \"t$orphans\"").await;
    assert!(listed.contains("| 0 "), "{listed}");
    let deleted = sql(
        &ctx,
        "ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '7d')",
    )
    .await;
    assert!(deleted.contains("| 0 "), "{deleted}");
    assert_intact(&planted, "remove_orphan_files('7d')");
    let rows = sql(&ctx, "SELECT count(*) AS n FROM t").await;
    assert!(rows.contains("| 2 "), "{rows}");
}

#[tokio::test]
async fn files_that_were_in_the_location_before_the_table_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let loc = dir.path().join("shared");
    // Before the table: look-alikes, and a file carrying a prefix-shaped name.
    let mut planted = look_alikes(&loc, MONTH);
    let early = loc.join(format!("data/p=1/0badcafe-{ID}.parquet"));
    plant(&early, b"not the table's", Duration::from_secs(3600));
    planted.push(early);
    let ctx = session(&wh).await.unwrap();
    sql(
        &ctx,
        &format!(
            "SET hidden_partitions.allow_non_empty_location = true; \
             CREATE TABLE t (id BIGINT, p INT) PARTITIONED BY (p) LOCATION '{}'; \
             INSERT INTO t VALUES (1, 1)",
            loc.display()
        ),
    )
    .await;
    // A file with the table's own prefix but older than the table is not
    // the table's either.
    let (_, md) = latest_metadata(&loc);
    let prefix = md["file-prefix"].as_str().unwrap().to_string();
    let older = loc.join(format!("data/p=1/{prefix}-{ID}.parquet"));
    plant(&older, b"not the table's", Duration::from_secs(3600));
    planted.push(older);
    // Even with the shortest threshold, nothing older than the table goes.
    sql(&ctx, "SET hidden_partitions.no_concurrent_writers = true").await;
    let deleted = sql(
        &ctx,
        "ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '0s')",
    )
    .await;
    assert!(deleted.contains("| 0 "), "{deleted}");
    assert_intact(&planted, "remove_orphan_files('0s')");
}

#[tokio::test]
async fn our_own_orphans_are_still_found_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let ctx = session(&wh).await.unwrap();
    sql(
        &ctx,
        "CREATE TABLE t (id BIGINT, p INT) PARTITIONED BY (p); INSERT INTO t VALUES (1, 1)",
    )
    .await;
    let root = wh.join("t");
    let (_, md) = latest_metadata(&root);
    let prefix = md["file-prefix"]
        .as_str()
        .expect("new tables record a file prefix")
        .to_string();
    // Every file our writers made carries the prefix.
    for dir in ["data/p=1", "metadata"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".parquet") {
                assert!(name.starts_with(&format!("{prefix}-")), "{dir}/{name}");
            }
        }
    }
    // Pretend the table is two hours old (writes of other tests in this
    // process keep files younger than their start, a minute's margin
    // included), then leave what a writer that died an hour ago would:
    // named like ours, referenced by nothing.
    let (path, mut md) = latest_metadata(&root);
    let two_hours_ago = chrono::Utc::now().timestamp_millis() - 2 * 3600 * 1000;
    md["created-ms"] = serde_json::json!(two_hours_ago);
    std::fs::write(&path, serde_json::to_vec_pretty(&md).unwrap()).unwrap();
    let ctx = session(&wh).await.unwrap();
    let hour = Duration::from_secs(3600);
    let orphan_data = root.join(format!("data/p=1/{prefix}-{ID}.parquet"));
    let orphan_manifest = root.join(format!("metadata/{prefix}-{MANIFEST_ID}-m.parquet"));
    plant(&orphan_data, b"ours", hour);
    plant(&orphan_manifest, b"ours", hour);
    let planted = look_alikes(&root, hour);
    let listed = sql(&ctx, "SELECT path FROM \"t$orphans\" ORDER BY path").await;
    assert!(listed.contains(&format!("{prefix}-{ID}.parquet")), "{listed}");
    assert!(
        listed.contains(&format!("{prefix}-{MANIFEST_ID}-m.parquet")),
        "{listed}"
    );
    assert!(!listed.contains(&format!("/{ID}.parquet")), "{listed}");
    sql(&ctx, "SET hidden_partitions.no_concurrent_writers = true").await;
    let deleted = sql(
        &ctx,
        "ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '0s')",
    )
    .await;
    assert!(deleted.contains("| 2 "), "{deleted}");
    assert!(!orphan_data.exists() && !orphan_manifest.exists());
    assert_intact(&planted, "remove_orphan_files('0s')");
    let rows = sql(&ctx, "SELECT count(*) AS n FROM t").await;
    assert!(rows.contains("| 1 "), "{rows}");
}

/// A table written before file prefixes were recorded cannot tell its
/// files from look-alikes: removal is refused, naming why.
#[tokio::test]
async fn tables_without_a_recorded_prefix_refuse_removal() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let ctx = session(&wh).await.unwrap();
    sql(
        &ctx,
        "CREATE TABLE t (id BIGINT, p INT) PARTITIONED BY (p); INSERT INTO t VALUES (1, 1)",
    )
    .await;
    let root = wh.join("t");
    let (path, mut md) = latest_metadata(&root);
    let o = md.as_object_mut().unwrap();
    o.remove("file-prefix");
    o.remove("created-ms");
    std::fs::write(&path, serde_json::to_vec_pretty(&md).unwrap()).unwrap();
    let planted = look_alikes(&root, MONTH);
    let ctx = session(&wh).await.unwrap();
    let err = execute_sql(
        &ctx,
        "ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '7d')",
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("created before hidden-partitions recorded a file-name prefix"),
        "{err}"
    );
    assert_intact(&planted, "a refused remove_orphan_files");
    // Still readable and writable.
    sql(&ctx, "INSERT INTO t VALUES (2, 1)").await;
    let rows = sql(&ctx, "SELECT count(*) AS n FROM t").await;
    assert!(rows.contains("| 2 "), "{rows}");
}

/// Writers in flight while `remove_orphan_files(retention_threshold => '0s')`
/// runs over and over (the session vouching, wrongly, that none runs): their
/// data files and manifests are not yet referenced, but are never deleted,
/// so every INSERT commits a readable table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_keep_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let ctx = session(&wh).await.unwrap();
    sql(&ctx, "CREATE TABLE t (id BIGINT, p INT) PARTITIONED BY (p)").await;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers = {
        let wh = wh.clone();
        let done = done.clone();
        tokio::spawn(async move {
            let ctx = session(&wh).await.unwrap();
            // A small write buffer: data files sit in storage long before the commit.
            sql(&ctx, "SET hidden_partitions.write_buffer_size = 200000").await;
            for i in 0..4 {
                sql(
                    &ctx,
                    &format!(
                        "INSERT INTO t SELECT value, value % 20 FROM generate_series({}, {}) AS s(value)",
                        i * 200_000 + 1,
                        (i + 1) * 200_000
                    ),
                )
                .await;
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        })
    };
    let cleaner = session(&wh).await.unwrap();
    sql(&cleaner, "SET hidden_partitions.no_concurrent_writers = true").await;
    let mut runs = 0;
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        sql(
            &cleaner,
            "ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '0s')",
        )
        .await;
        runs += 1;
    }
    writers.await.unwrap();
    assert!(runs > 1, "the cleaner ran {runs} times");
    let fresh = session(&wh).await.unwrap();
    let rows = sql(&fresh, "SELECT count(*) AS n, count(DISTINCT id) AS d FROM t").await;
    assert!(rows.contains("| 800000 | 800000 |"), "{rows}");
    let sum = sql(&fresh, "SELECT sum(id) AS s FROM t WHERE p = 3").await;
    assert!(sum.contains("| 15999720000 |"), "{sum}");
}
