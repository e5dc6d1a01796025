//! A table's history without quadratic metadata: only the current snapshot
//! lists its manifests in the version file; older ones name a manifests
//! file of their own, which time travel, the metadata tables, expiry and
//! orphan removal read (and never lose).

use std::path::Path;

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use hidden_partitions::{execute_sql, session};

async fn sql(ctx: &SessionContext, sql: &str) -> String {
    let out = execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    pretty_format_batches(&out.last().unwrap().batches).unwrap().to_string()
}

fn version(table: &Path, n: u64) -> (u64, serde_json::Value) {
    let path = table.join(format!("metadata/v{n}.metadata.json"));
    let bytes = std::fs::read(&path).unwrap();
    (bytes.len() as u64, serde_json::from_slice(&bytes).unwrap())
}

fn latest(table: &Path) -> u64 {
    (1..)
        .take_while(|n| table.join(format!("metadata/v{n}.metadata.json")).exists())
        .last()
        .unwrap()
}

/// The manifests files the version names, as paths on disk.
fn manifests_files(table: &Path, md: &serde_json::Value) -> Vec<std::path::PathBuf> {
    md["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["manifests-file"].as_str())
        .map(|f| table.join(f))
        .collect()
}

#[tokio::test]
async fn old_snapshots_keep_their_manifests_out_of_the_version_file() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let table = wh.join("t");
    let ctx = session(&wh).await.unwrap();
    sql(&ctx, "CREATE TABLE t (id BIGINT, p INT) PARTITIONED BY (p)").await;
    for i in 1..=30 {
        sql(&ctx, &format!("INSERT INTO t VALUES ({i}, {})", i % 3)).await;
    }
    let last = latest(&table);
    let (size, md) = version(&table, last);
    let current = md["current-snapshot-id"].as_i64().unwrap();
    for s in md["snapshots"].as_array().unwrap() {
        let id = s["snapshot-id"].as_i64().unwrap();
        if id == current {
            assert_eq!(s["manifests"].as_array().unwrap().len(), 30, "{s}");
            assert!(s.get("manifests-file").is_none(), "{s}");
        } else {
            assert!(
                s.get("manifests").is_none(),
                "snapshot {id} lists its manifests inline: {s}"
            );
            assert!(s["manifests-file"].is_string(), "{s}");
        }
    }
    let files = manifests_files(&table, &md);
    assert_eq!(files.len(), 29);
    assert!(files.iter().all(|f| f.exists()), "{files:?}");
    // Linear growth: twice the commits, about twice the bytes (the
    // manifests of every snapshot inline made it four times).
    let (half, _) = version(&table, last - 15);
    assert!(size * 10 < half * 26, "v{last} is {size} bytes, v{} {half}", last - 15);

    // A new session reads old snapshots from their files.
    let ctx = session(&wh).await.unwrap();
    let snapshots = md["snapshots"].as_array().unwrap();
    let fifth = snapshots[4]["snapshot-id"].as_i64().unwrap();
    let rows = sql(&ctx, &format!("SELECT count(*) AS n, max(id) AS m FROM \"t@{fifth}\"")).await;
    assert!(rows.contains("| 5 | 5 |"), "{rows}");
    let counts = sql(
        &ctx,
        "SELECT min(manifests) AS lo, max(manifests) AS hi, count(*) AS n FROM \"t$snapshots\"",
    )
    .await;
    assert!(counts.contains("| 1  | 30 | 30 |"), "{counts}");

    // Orphan removal keeps every file a snapshot names.
    sql(&ctx, "SET hidden_partitions.no_concurrent_writers = true").await;
    sql(
        &ctx,
        "ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '0s')",
    )
    .await;
    assert!(files.iter().all(|f| f.exists()), "{files:?}");
    let rows = sql(&ctx, &format!("SELECT count(*) AS n FROM \"t@{fifth}\"")).await;
    assert!(rows.contains("| 5 |"), "{rows}");

    // Expiry deletes the expired snapshots' files, and only theirs.
    sql(
        &ctx,
        "ALTER TABLE t EXECUTE expire_snapshots(retention_threshold => '0s')",
    )
    .await;
    assert!(files.iter().all(|f| !f.exists()), "{files:?}");
    let (_, after) = version(&table, latest(&table));
    assert_eq!(after["snapshots"].as_array().unwrap().len(), 1);
    let rows = sql(&ctx, "SELECT count(*) AS n FROM t").await;
    assert!(rows.contains("| 30 |"), "{rows}");
    // The next commits move the replaced snapshot's list out again.
    sql(&ctx, "INSERT INTO t VALUES (31, 1); DELETE FROM t WHERE id = 1").await;
    let (_, md) = version(&table, latest(&table));
    let files = manifests_files(&table, &md);
    assert_eq!(files.len(), 2);
    assert!(files.iter().all(|f| f.exists()), "{files:?}");
    let ctx = session(&wh).await.unwrap();
    let rows = sql(&ctx, "SELECT count(*) AS n FROM t").await;
    assert!(rows.contains("| 30 |"), "{rows}");
}

#[tokio::test]
async fn a_missing_manifests_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let table = wh.join("t");
    let ctx = session(&wh).await.unwrap();
    sql(
        &ctx,
        "CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",
    )
    .await;
    let (_, md) = version(&table, latest(&table));
    let files = manifests_files(&table, &md);
    assert_eq!(files.len(), 1);
    std::fs::remove_file(&files[0]).unwrap();
    let first = md["snapshots"][0]["snapshot-id"].as_i64().unwrap();
    let ctx = session(&wh).await.unwrap();
    let e = execute_sql(&ctx, &format!("SELECT * FROM \"t@{first}\""))
        .await
        .unwrap_err()
        .to_string();
    let name = files[0].file_name().unwrap().to_str().unwrap();
    assert!(e.contains(name) && e.contains("missing"), "{e}");
    // The current snapshot does not need it.
    let rows = sql(&ctx, "SELECT count(*) AS n FROM t").await;
    assert!(rows.contains("| 2 |"), "{rows}");
}
