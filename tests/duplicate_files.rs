//! A data file listed twice in a snapshot's live manifests (planted by
//! editing a metadata version by hand) is refused by every read and write,
//! with the file named: it must never double `count(*)`, and `optimize`
//! must never make the copies permanent.

use std::path::Path;

use hidden_partitions::{execute_sql, session};
use serde_json::Value as Json;

async fn table(wh: &Path) {
    let ctx = session(wh).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE t (id BIGINT, s VARCHAR) PARTITIONED BY (s); INSERT INTO t VALUES (1, 'a'), (2, 'a')",
    )
    .await
    .unwrap();
}

/// Rewrite the latest version (v2) of `t` with `edit` applied to its
/// current snapshot's manifest list.
fn plant(wh: &Path, edit: impl FnOnce(&Path, &mut Vec<Json>)) {
    let latest = wh.join("t/metadata/v2.metadata.json");
    let mut md: Json = serde_json::from_slice(&std::fs::read(&latest).unwrap()).unwrap();
    let current = md["current-snapshot-id"].clone();
    let snapshot = md["snapshots"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["snapshot-id"] == current)
        .unwrap();
    let mut manifests = snapshot["manifests"].as_array().unwrap().clone();
    edit(&wh.join("t"), &mut manifests);
    snapshot["manifests"] = Json::Array(manifests);
    std::fs::write(&latest, serde_json::to_vec_pretty(&md).unwrap()).unwrap();
}

async fn assert_refused(wh: &Path) {
    let ctx = session(wh).await.unwrap();
    for sql in [
        "SELECT count(*) FROM t",
        "SELECT * FROM t",
        "SELECT count(*) FROM t WHERE s = 'a'",
        "ALTER TABLE t EXECUTE optimize",
        "DELETE FROM t WHERE id = 1",
        "UPDATE t SET id = 3 WHERE id = 2",
    ] {
        let err = match execute_sql(&ctx, sql).await {
            Ok(out) => panic!(
                "{sql} ran on a table listing a file twice: {}",
                datafusion::arrow::util::pretty::pretty_format_batches(&out.last().unwrap().batches).unwrap()
            ),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("lists data file data/s=a/") && err.contains("twice"),
            "{sql}: {err}"
        );
    }
    // Nothing was committed on top of it.
    assert!(!wh.join("t/metadata/v3.metadata.json").exists());
}

#[tokio::test]
async fn a_manifest_listed_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    table(&wh).await;
    plant(&wh, |_, manifests| {
        let first = manifests[0].clone();
        manifests.push(first);
    });
    assert_refused(&wh).await;
}

#[tokio::test]
async fn two_manifests_listing_the_same_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    table(&wh).await;
    plant(&wh, |root, manifests| {
        // A second manifest with the same entries, under another name.
        let mut copy = manifests[0].clone();
        let path = copy["path"].as_str().unwrap().to_string();
        let other = path.replace("-m.parquet", "-copy-m.parquet");
        std::fs::copy(root.join(&path), root.join(&other)).unwrap();
        copy["path"] = Json::from(other);
        manifests.push(copy);
    });
    assert_refused(&wh).await;
}

/// A plan that selected every file of a snapshot proves the whole snapshot
/// lists each file once; the session remembers it. A selective plan proves
/// only its own files, so it records nothing.
#[tokio::test]
async fn a_snapshot_proved_whole_is_remembered() {
    use datafusion::logical_expr::{col, lit};
    use hidden_partitions::Warehouse;
    use hidden_partitions::manifest::unique::verified_key;
    use hidden_partitions::plan::files::plan_files;
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    table(&wh).await;
    let ctx = session(&wh).await.unwrap();
    execute_sql(&ctx, "INSERT INTO t VALUES (3, 'b')").await.unwrap();
    let location = Warehouse::local(&wh).unwrap().table_location("t");
    let md = location.load().await.unwrap().metadata;
    let snapshot = md.current_snapshot().unwrap();
    let key = verified_key(&location.url(), snapshot);
    let some = plan_files(&location, &md, Some(snapshot), &[col("s").eq(lit("b"))], None)
        .await
        .unwrap();
    assert_eq!(some.selected(), 1);
    assert!(!location.cache.flag(&key), "a selective plan proved the whole snapshot");
    let all = plan_files(&location, &md, Some(snapshot), &[], None).await.unwrap();
    assert_eq!(all.selected(), 2);
    assert!(location.cache.flag(&key));
}
