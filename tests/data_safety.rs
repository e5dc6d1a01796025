//! Statements that delete files delete only what the table owns, and a
//! table that is replaced or dropped while others write to it stays whole.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use hidden_partitions::{execute_sql, session};

fn cli(warehouse: &Path, sql: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("--warehouse")
        .arg(warehouse)
        .args(["--format", "csv", "-c", sql])
        .output()
        .expect("binary runs")
}

/// Files planted in a table's directory that the table did not write.
struct Foreign {
    files: BTreeMap<PathBuf, Vec<u8>>,
}

impl Foreign {
    /// One file in the root, one in `data/`, one in a sub-directory of
    /// `data/`, one named like a data file in a partition directory and one
    /// named like a manifest — both brand new (younger than any threshold).
    fn plant(root: &Path) -> Self {
        let partition_dir = std::fs::read_dir(root.join("data"))
            .ok()
            .and_then(|mut d| d.find_map(|e| e.ok().filter(|e| e.path().is_dir()).map(|e| e.path())))
            .unwrap_or_else(|| root.join("data/s=zz"));
        let mut files = BTreeMap::new();
        for (path, bytes) in [
            (root.join("thesis.txt"), b"important".to_vec()),
            (root.join("data/foreign.txt"), b"not yours".to_vec()),
            (root.join("data/sub/dir/deeper.bin"), vec![0, 1, 2, 255]),
            (
                partition_dir.join("7f0e3c1a-4b5d-4e6f-8a9b-0c1d2e3f4a5b.parquet"),
                b"looks like ours".to_vec(),
            ),
            (
                root.join("metadata/1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f-m.parquet"),
                b"looks like a manifest".to_vec(),
            ),
        ] {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
            files.insert(path, bytes);
        }
        Self { files }
    }

    fn assert_intact(&self, after: &str) {
        for (path, bytes) in &self.files {
            let now = std::fs::read(path).unwrap_or_else(|e| panic!("{after}: {} is gone: {e}", path.display()));
            assert_eq!(&now, bytes, "{after}: {} changed", path.display());
        }
    }
}

fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.insert(p);
        }
    }
    out
}

const TABLE: &str = "(id BIGINT, s VARCHAR) PARTITIONED BY (s)";

async fn setup(wh: &Path, name: &str, location: Option<&Path>) -> datafusion::prelude::SessionContext {
    let ctx = session(wh).await.unwrap();
    let loc = location.map_or(String::new(), |l| format!(" LOCATION '{}'", l.display()));
    execute_sql(
        &ctx,
        &format!(
            "CREATE TABLE {name} {TABLE}{loc}; INSERT INTO {name} VALUES (1, 'a'), (2, 'b'); INSERT INTO {name} VALUES (3, 'a')"
        ),
    )
    .await
    .unwrap();
    ctx
}

#[tokio::test]
async fn drop_of_a_warehouse_table_deletes_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let ctx = setup(&wh, "t", None).await;
    let foreign = Foreign::plant(&wh.join("t"));
    // None is an orphan candidate: not even the two named like our files of
    // old, which lack the table's file prefix (tests/orphans.rs).
    let orphans = execute_sql(&ctx, "SELECT path FROM \"t$orphans\" ORDER BY path")
        .await
        .unwrap();
    let listed = datafusion::arrow::util::pretty::pretty_format_batches(&orphans[0].batches)
        .unwrap()
        .to_string();
    assert_eq!(orphans[0].num_rows(), 0, "{listed}");
    execute_sql(&ctx, "DROP TABLE t").await.unwrap();
    foreign.assert_intact("DROP TABLE");
    // What is left: the foreign files and the tombstone that ends the version chain.
    let left: BTreeSet<PathBuf> = files_under(&wh.join("t"));
    let planted: BTreeSet<PathBuf> = foreign.files.keys().cloned().collect();
    let extra: Vec<_> = left.difference(&planted).collect();
    assert_eq!(extra.len(), 1, "{extra:?}");
    assert!(extra[0].ends_with("metadata/v4.metadata.json"), "{extra:?}");
    // A new table of that name starts empty and continues the chain.
    execute_sql(
        &ctx,
        "SET hidden_partitions.allow_non_empty_location = true; CREATE TABLE t (x INT)",
    )
    .await
    .unwrap();
    let rows = execute_sql(&ctx, "SELECT count(*) FROM t").await.unwrap();
    assert_eq!(rows[0].num_rows(), 1);
    assert!(wh.join("t/metadata/v5.metadata.json").exists());
    foreign.assert_intact("CREATE TABLE after DROP");
}

#[tokio::test]
async fn drop_of_a_located_table_keeps_everything_and_purge_only_what_it_owns() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let loc = dir.path().join("elsewhere");
    let ctx = setup(&wh, "t", Some(&loc)).await;
    let foreign = Foreign::plant(&loc);
    let before = files_under(&loc);
    execute_sql(&ctx, "DROP TABLE t").await.unwrap();
    assert_eq!(
        files_under(&loc),
        before,
        "a plain DROP of a LOCATION table deletes nothing"
    );
    // Registered again, then purged.
    execute_sql(&ctx, &format!("CREATE TABLE t2 LOCATION '{}'", loc.display()))
        .await
        .unwrap();
    execute_sql(&ctx, "DROP TABLE t2 PURGE").await.unwrap();
    foreign.assert_intact("DROP TABLE … PURGE");
    let left = files_under(&loc);
    let owned_left: Vec<_> = left.iter().filter(|p| !foreign.files.contains_key(*p)).collect();
    assert_eq!(owned_left.len(), 1, "only the tombstone stays: {owned_left:?}");
    // Empty partition directories are gone, the ones with foreign files stay.
    assert!(!loc.join("data/s=b").exists());
    assert!(loc.join("data/sub/dir").exists());
}

#[tokio::test]
async fn create_or_replace_deletes_only_the_replaced_tables_files() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let loc = dir.path().join("elsewhere");
    let ctx = setup(&wh, "w", None).await;
    execute_sql(&ctx, &format!("CREATE TABLE l {TABLE} LOCATION '{}'", loc.display()))
        .await
        .unwrap();
    execute_sql(&ctx, "INSERT INTO l VALUES (1, 'a'), (2, 'b')")
        .await
        .unwrap();
    let in_wh = Foreign::plant(&wh.join("w"));
    let in_loc = Foreign::plant(&loc);
    execute_sql(&ctx, &format!("CREATE OR REPLACE TABLE w {TABLE}"))
        .await
        .unwrap();
    execute_sql(
        &ctx,
        &format!("CREATE OR REPLACE TABLE l {TABLE} LOCATION '{}'", loc.display()),
    )
    .await
    .unwrap();
    in_wh.assert_intact("CREATE OR REPLACE (warehouse)");
    in_loc.assert_intact("CREATE OR REPLACE (LOCATION)");
    for t in ["w", "l"] {
        let r = execute_sql(&ctx, &format!("SELECT count(*) AS n FROM {t}"))
            .await
            .unwrap();
        let n = datafusion::arrow::util::pretty::pretty_format_batches(&r[0].batches)
            .unwrap()
            .to_string();
        assert!(n.contains("| 0 |"), "{t}: {n}");
    }
    // The old tables' data files are gone: only planted files are under data/.
    for root in [wh.join("w"), loc.clone()] {
        let data: Vec<_> = files_under(&root.join("data"))
            .into_iter()
            .filter(|p| !in_wh.files.contains_key(p) && !in_loc.files.contains_key(p))
            .collect();
        assert!(data.is_empty(), "{data:?}");
    }
}

#[test]
fn the_data_loss_scenario_from_the_report_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let some = dir.path().join("some/dir");
    std::fs::create_dir_all(&some).unwrap();
    std::fs::write(some.join("thesis.txt"), "important").unwrap();
    let o = cli(
        &dir.path().join("wh"),
        &format!(
            "CREATE TABLE t (id BIGINT) LOCATION '{}'; INSERT INTO t VALUES (1); DROP TABLE t",
            some.display()
        ),
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is not empty"), "{err}");
    assert_eq!(std::fs::read_to_string(some.join("thesis.txt")).unwrap(), "important");
}

/// One writer's INSERT: the id it wrote, when it ran, whether it said it committed.
#[derive(Debug, Clone)]
struct Insert {
    id: i64,
    start: Instant,
    end: Instant,
    ok: bool,
}

/// Scenario 2 of the report: writers keep inserting while the table is
/// replaced (or dropped and created) again and again. Afterwards the table
/// reads, holds no row twice and no row of a failed INSERT, and holds every
/// row committed after the last replacement.
fn race(replace: &str, writers: i64, inserts: i64, replacements: usize) {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let create = "CREATE TABLE t (id INT, r VARCHAR) PARTITIONED BY (r)";
    assert!(cli(&wh, create).status.success());
    let log: Arc<Mutex<Vec<Insert>>> = Arc::default();
    let handles: Vec<_> = (1..=writers)
        .map(|p| {
            let (wh, log) = (wh.clone(), Arc::clone(&log));
            std::thread::spawn(move || {
                for i in 0..inserts {
                    let id = p * 1000 + i;
                    let start = Instant::now();
                    let o = cli(&wh, &format!("INSERT INTO t VALUES ({id}, 'r{}')", i % 3));
                    let end = Instant::now();
                    let err = String::from_utf8_lossy(&o.stderr);
                    if !o.status.success() {
                        println!("{}", err.trim());
                        assert!(
                            err.contains("nothing was committed") || err.contains("not found"),
                            "an INSERT failed for another reason: {err}"
                        );
                    }
                    log.lock().unwrap().push(Insert {
                        id,
                        start,
                        end,
                        ok: o.status.success(),
                    });
                }
            })
        })
        .collect();
    let mut last_replace = (Instant::now(), Instant::now());
    for _ in 0..replacements {
        let start = Instant::now();
        let o = cli(&wh, replace);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        last_replace = (start, Instant::now());
    }
    for h in handles {
        h.join().unwrap();
    }
    let o = cli(&wh, "SELECT id FROM t ORDER BY id");
    assert!(
        o.status.success(),
        "the table must read: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let ids: Vec<i64> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .skip(1)
        .map(|l| l.parse().unwrap())
        .collect();
    let unique: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "a row is there twice: {ids:?}");
    let log = log.lock().unwrap();
    let failed = log.iter().filter(|i| !i.ok).count();
    println!(
        "{replace}: {} inserts ({failed} failed), {} rows in the surviving table",
        log.len(),
        unique.len()
    );
    let by_id: BTreeMap<i64, &Insert> = log.iter().map(|i| (i.id, i)).collect();
    for id in &unique {
        assert!(by_id[id].ok, "row {id} is there but its INSERT failed");
        assert!(
            by_id[id].end > last_replace.0,
            "row {id} was committed before the last replacement began, yet survived it"
        );
    }
    let must_be_there: Vec<i64> = log
        .iter()
        .filter(|i| i.ok && i.start > last_replace.1)
        .map(|i| i.id)
        .collect();
    for id in must_be_there {
        assert!(
            unique.contains(&id),
            "row {id} was committed to the surviving table but is missing"
        );
    }
    // Later writes and replacements still work.
    assert!(cli(&wh, "INSERT INTO t VALUES (1, 'r1')").status.success());
    assert!(cli(&wh, replace).status.success());
}

#[test]
fn inserts_racing_create_or_replace_never_corrupt_the_table() {
    race(
        "CREATE OR REPLACE TABLE t (id INT, r VARCHAR) PARTITIONED BY (r)",
        4,
        15,
        8,
    );
}

#[test]
fn inserts_racing_drop_and_create_never_corrupt_the_table() {
    race(
        "DROP TABLE t; CREATE TABLE t (id INT, r VARCHAR) PARTITIONED BY (r)",
        4,
        15,
        8,
    );
}

/// DROP leaves no empty directories behind: of a warehouse table only the
/// tombstone in `metadata/` stays; of a LOCATION table dropped with PURGE,
/// likewise (the location's own directory is the user's).
#[tokio::test]
async fn drop_removes_the_directories_it_emptied() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let loc = dir.path().join("loc");
    let ctx = setup(&wh, "t", None).await;
    execute_sql(
        &ctx,
        &format!(
            "CREATE TABLE u {TABLE} LOCATION '{}'; INSERT INTO u VALUES (1, 'a')",
            loc.display()
        ),
    )
    .await
    .unwrap();
    execute_sql(&ctx, "DROP TABLE t; DROP TABLE u PURGE").await.unwrap();
    fn dirs_under(p: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(p).unwrap().flatten() {
            if e.path().is_dir() {
                out.push(e.path());
                dirs_under(&e.path(), out);
            }
        }
    }
    for (root, name) in [(wh.join("t"), "t"), (loc.clone(), "u")] {
        let mut dirs = Vec::new();
        dirs_under(&root, &mut dirs);
        assert_eq!(dirs, vec![root.join("metadata")], "{name}: {dirs:?}");
        let files = files_under(&root);
        assert_eq!(files.len(), 1, "{name}: {files:?}");
    }
}

/// A version file whose current snapshot is not listed is refused for
/// reading and writing, with the file and the inconsistency named; no
/// commit is made on top of it.
#[tokio::test]
async fn inconsistent_metadata_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let ctx = setup(&wh, "t", None).await;
    let latest = wh.join("t/metadata/v3.metadata.json");
    let text = std::fs::read_to_string(&latest).unwrap();
    let mut md: serde_json::Value = serde_json::from_str(&text).unwrap();
    md["current-snapshot-id"] = serde_json::json!(123);
    std::fs::write(&latest, serde_json::to_vec_pretty(&md).unwrap()).unwrap();

    let fresh = session(&wh).await.unwrap();
    for sql in ["SELECT count(*) FROM t", "INSERT INTO t VALUES (9, 'z')"] {
        let err = execute_sql(&fresh, sql).await.unwrap_err().to_string();
        assert!(err.contains("v3.metadata.json"), "{sql}: {err}");
        assert!(
            err.contains("current-snapshot-id 123 names no snapshot"),
            "{sql}: {err}"
        );
    }
    assert!(!wh.join("t/metadata/v4.metadata.json").exists());
    drop(ctx);

    // A manifest naming a table spec that does not exist.
    md["current-snapshot-id"] = md["snapshots"][1]["snapshot-id"].clone();
    md["snapshots"][1]["manifests"][0]["spec-id"] = serde_json::json!(5);
    std::fs::write(&latest, serde_json::to_vec_pretty(&md).unwrap()).unwrap();
    let fresh = session(&wh).await.unwrap();
    let err = execute_sql(&fresh, "SELECT * FROM t").await.unwrap_err().to_string();
    assert!(err.contains("names table spec 5, which is not listed"), "{err}");
}
