//! CREATE never costs an old table or leaves a mess:
//!
//! - a `CREATE OR REPLACE … LOCATION '<new dir>'` that fails while writing
//!   the new table leaves the old table as it was;
//! - the files of a killed `CREATE … AS SELECT` (no table ever committed)
//!   (stopped at its commit, or a CLI process killed by SIGKILL) are removed
//!   by running the CREATE again, or by `DROP TABLE IF EXISTS` (which says
//!   so), and a foreign file at the location is never touched;
//! - concurrent `CREATE OR REPLACE … AS SELECT` all succeed (last writer
//!   wins), concurrent plain CTAS of one name: one wins and the others say
//!   that another statement created the table meanwhile.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use hidden_partitions::store::observe::{ObservedStore, RequestKind, RequestObserver};
use hidden_partitions::store::url::parse_location;
use hidden_partitions::{StorageOptions, Warehouse, execute_sql, session, session_with};
use object_store::path::Path as ObjectPath;

/// What a PUT matching `needle` does.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Fails at once.
    Error,
    /// Never answers (the statement is then dropped: a killed process).
    Hang,
}

/// Applies `fault` to every PUT whose path contains one of `needles`.
#[derive(Debug)]
struct PutFault {
    needles: Vec<String>,
    fault: Fault,
}

#[async_trait]
impl RequestObserver for PutFault {
    async fn before(&self, kind: RequestKind, path: &ObjectPath) -> object_store::Result<()> {
        if kind != RequestKind::Put || !self.needles.iter().any(|n| path.as_ref().contains(n.as_str())) {
            return Ok(());
        }
        match self.fault {
            Fault::Error => Err(object_store::Error::Generic {
                store: "fault injection",
                source: format!("no space left on device (injected, {path})").into(),
            }),
            Fault::Hang => std::future::pending().await,
        }
    }
}

async fn faulty_session(dir: &Path, needles: &[&str], fault: Fault) -> SessionContext {
    let place = parse_location(dir.to_str().unwrap()).unwrap();
    let observer = PutFault {
        needles: needles.iter().map(|n| n.to_string()).collect(),
        fault,
    };
    let store = Arc::new(ObservedStore::new(
        Arc::new(object_store::local::LocalFileSystem::new()),
        Arc::new(observer),
    ));
    session_with(Warehouse::with_store(store, place, StorageOptions::new()))
        .await
        .unwrap()
}

async fn query(dir: &Path, sql: &str) -> String {
    let ctx = session(dir).await.unwrap();
    match execute_sql(&ctx, sql).await {
        Ok(r) => pretty_format_batches(&r.last().unwrap().batches).unwrap().to_string(),
        Err(e) => format!("error: {e}"),
    }
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_replace_at_a_new_location_keeps_the_old_table() {
    let warehouse = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let new_dir = elsewhere.path().join("new_t");
    let setup = session(warehouse.path()).await.unwrap();
    execute_sql(
        &setup,
        "CREATE TABLE t (id INT, s VARCHAR) PARTITIONED BY (s); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    )
    .await
    .unwrap();
    let before = query(warehouse.path(), "SELECT * FROM t ORDER BY id").await;
    let ctas = format!(
        "CREATE OR REPLACE TABLE t PARTITIONED BY (s) LOCATION '{}' AS SELECT id * 10 AS id, s FROM t",
        new_dir.display()
    );
    let create = format!("CREATE OR REPLACE TABLE t (x BIGINT) LOCATION '{}'", new_dir.display());
    // Writes under the new directory fail (a full disk, `ulimit -f`): every
    // one, or only the new table's metadata version (after its data).
    for (what, sql, failing) in [
        ("CTAS, every write", &ctas, "new_t/"),
        ("CTAS, the version", &ctas, "new_t/metadata/v"),
        ("CREATE, every write", &create, "new_t/"),
        ("CREATE, the version", &create, "new_t/metadata/v"),
    ] {
        let ctx = faulty_session(warehouse.path(), &[failing], Fault::Error).await;
        let e = execute_sql(&ctx, sql).await.expect_err(what).to_string();
        assert!(e.contains("injected"), "{what}: {e}");
        assert_eq!(
            query(warehouse.path(), "SELECT * FROM t ORDER BY id").await,
            before,
            "{what}: the failed replace changed the old table"
        );
    }
    // Without the fault the replace goes through.
    execute_sql(&setup, &ctas).await.unwrap();
    let after = query(warehouse.path(), "SELECT id FROM t ORDER BY id").await;
    assert!(after.contains("| 30 |"), "{after}");
    assert!(
        !warehouse.path().join("t/data").exists(),
        "the old table's files are kept"
    );
}

/// Run `ctas` and stop it for good once its data is written: the request
/// that would commit it never answers and the statement is dropped, as a
/// process killed by SIGKILL (no code of the statement runs afterwards).
async fn killed(dir: &Path, ctas: &str) {
    let ctx = faulty_session(dir, &["v1.metadata.json", ".claim"], Fault::Hang).await;
    let run = tokio::time::timeout(Duration::from_secs(5), execute_sql(&ctx, ctas)).await;
    assert!(run.is_err(), "the CTAS was not stopped: {run:?}");
    // Writes the statement spawned may still land after it was dropped
    // (until they reach the hanging commit): wait until none does.
    let mut seen = files_under(dir);
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = files_under(dir);
        if now == seen {
            break;
        }
        seen = now;
    }
}

const CTAS: &str = "AS SELECT value AS id, value % 3 AS k FROM generate_series(1, 3000) AS g(value)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_ctas_is_cleaned_up_by_running_it_again() {
    let warehouse = tempfile::tempdir().unwrap();
    let sql = format!("CREATE TABLE big PARTITIONED BY (k) {CTAS}");
    killed(warehouse.path(), &sql).await;
    let table_dir = warehouse.path().join("big");
    let left = files_under(&table_dir);
    assert!(
        left.iter().any(|f| f.ends_with(".parquet") && f.starts_with("data/")),
        "{left:?}"
    );
    assert!(
        query(warehouse.path(), "SELECT count(*) FROM big")
            .await
            .starts_with("error"),
        "the killed CTAS made a table"
    );

    let ctx = session(warehouse.path()).await.unwrap();
    execute_sql(&ctx, &sql)
        .await
        .unwrap_or_else(|e| panic!("the CTAS cannot be run again: {e}"));
    let n = query(warehouse.path(), "SELECT count(*) AS n FROM big").await;
    assert!(n.contains("| 3000 |"), "{n}");
    // Only the new table's files are left: every data file and manifest is
    // referenced, no marker stays.
    let referenced = query(
        warehouse.path(),
        "SELECT count(*) AS n FROM (SELECT path FROM \"big$files\" UNION ALL SELECT path FROM \"big$manifests\")",
    )
    .await;
    let ours: Vec<_> = files_under(&table_dir)
        .into_iter()
        .filter(|f| f.ends_with(".parquet"))
        .collect();
    assert!(
        referenced.contains(&format!("| {} |", ours.len())),
        "leftovers stay: {ours:?} vs {referenced}"
    );
    assert!(
        !files_under(&table_dir).iter().any(|f| f.contains("creating-")),
        "{:?}",
        files_under(&table_dir)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_table_if_exists_removes_a_killed_ctas_and_says_so() {
    let warehouse = tempfile::tempdir().unwrap();
    let table_dir = warehouse.path().join("big");
    // A file that was there before, named like ours: it stays.
    let planted = table_dir.join("data/k=1/7f0e3c1a-4b5d-4e6f-8a9b-0c1d2e3f4a5b.parquet");
    std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
    std::fs::write(&planted, b"looks like ours").unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let sql =
        format!("SET hidden_partitions.allow_non_empty_location = true; CREATE TABLE big PARTITIONED BY (k) {CTAS}");
    killed(warehouse.path(), &sql).await;
    // Data files, manifests and their Iceberg twins.
    let written: Vec<_> = files_under(&table_dir)
        .into_iter()
        .filter(|f| f.ends_with(".parquet") || f.ends_with(".avro"))
        .collect();
    assert!(written.len() > 1, "the killed CTAS wrote nothing: {written:?}");

    let ctx = session(warehouse.path()).await.unwrap();
    let results = execute_sql(&ctx, "DROP TABLE IF EXISTS big").await.unwrap();
    let note = pretty_format_batches(&results[0].batches).unwrap().to_string();
    assert!(
        note.contains("big") && note.contains(&format!("removed {} files", written.len() - 1)),
        "{note}\nfiles written (one planted): {written:?}"
    );
    let left: Vec<_> = files_under(&table_dir)
        .into_iter()
        .filter(|f| f.ends_with(".parquet"))
        .collect();
    assert_eq!(left, vec!["data/k=1/7f0e3c1a-4b5d-4e6f-8a9b-0c1d2e3f4a5b.parquet"]);
    assert_eq!(std::fs::read(&planted).unwrap(), b"looks like ours");
    // Nothing more to remove: a plain DROP says there is no table.
    let again = execute_sql(&ctx, "DROP TABLE IF EXISTS big").await.unwrap();
    assert!(again[0].batches.is_empty(), "a second DROP reported something");
    let e = execute_sql(&ctx, "DROP TABLE big").await.unwrap_err().to_string();
    assert!(e.contains("not found"), "{e}");
    // The name can be created again.
    execute_sql(
        &ctx,
        "SET hidden_partitions.allow_non_empty_location = true; CREATE TABLE big (id BIGINT); INSERT INTO big VALUES (5)",
    )
    .await
    .unwrap();
    assert!(query(warehouse.path(), "SELECT * FROM big").await.contains("| 5 "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleaning_up_a_killed_ctas_never_touches_a_foreign_file() {
    let warehouse = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let dir = elsewhere.path().join("shared");
    // Files that were there before: one of them named like ours.
    let foreign: Vec<(PathBuf, &[u8])> = vec![
        (dir.join("notes.txt"), b"mine"),
        (
            dir.join("data/k=1/7f0e3c1a-4b5d-4e6f-8a9b-0c1d2e3f4a5b.parquet"),
            b"looks like ours",
        ),
        (
            dir.join("metadata/1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f-m.parquet"),
            b"looks like a manifest",
        ),
        (dir.join("metadata/creating-notes.json"), b"{}"),
    ];
    for (p, bytes) in &foreign {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    // Their modification time is before the killed creation began.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let sql = format!(
        "SET hidden_partitions.allow_non_empty_location = true; CREATE TABLE big PARTITIONED BY (k) LOCATION '{}' {CTAS}",
        dir.display()
    );
    killed(warehouse.path(), &sql).await;
    assert!(files_under(&dir).len() > foreign.len(), "the killed CTAS wrote nothing");

    let ctx = session(warehouse.path()).await.unwrap();
    execute_sql(&ctx, &sql)
        .await
        .unwrap_or_else(|e| panic!("the CTAS cannot be run again: {e}"));
    let n = query(warehouse.path(), "SELECT count(*) AS n FROM big").await;
    assert!(n.contains("| 3000 |"), "{n}");
    for (p, bytes) in &foreign {
        assert_eq!(
            &std::fs::read(p).unwrap_or_default(),
            bytes,
            "{} was touched",
            p.display()
        );
    }
    let referenced = query(
        warehouse.path(),
        "SELECT count(*) AS n FROM (SELECT path FROM \"big$files\" UNION ALL SELECT path FROM \"big$manifests\")",
    )
    .await;
    let ours = files_under(&dir)
        .into_iter()
        .filter(|f| f.ends_with(".parquet"))
        .count()
        - 2;
    assert!(
        referenced.contains(&format!("| {ours} |")),
        "leftovers stay: {referenced}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_ctas_does_not_block_a_create_of_its_location() {
    // Without allow_non_empty_location: the leftovers are no reason to refuse.
    let warehouse = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let dir = elsewhere.path().join("x");
    killed(
        warehouse.path(),
        &format!("CREATE TABLE a PARTITIONED BY (k) LOCATION '{}' {CTAS}", dir.display()),
    )
    .await;
    let ctx = session(warehouse.path()).await.unwrap();
    execute_sql(
        &ctx,
        &format!("CREATE TABLE b (id BIGINT) LOCATION '{}'", dir.display()),
    )
    .await
    .unwrap_or_else(|e| panic!("refused: {e}"));
    let left: Vec<_> = files_under(&dir)
        .into_iter()
        .filter(|f| f.starts_with("data/"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A foreign file still makes a location non-empty.
    let other = elsewhere.path().join("y");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("thesis.txt"), b"x").unwrap();
    let e = execute_sql(
        &ctx,
        &format!("CREATE TABLE c (id BIGINT) LOCATION '{}'", other.display()),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("is not empty") && e.contains("thesis.txt"), "{e}");
}

/// `n` sessions run `sql(i)` at once; their results.
async fn race(dir: &Path, n: usize, sql: impl Fn(usize) -> String) -> Vec<Result<(), String>> {
    let mut tasks = Vec::new();
    for i in 0..n {
        let dir = dir.to_path_buf();
        let sql = sql(i);
        tasks.push(tokio::spawn(async move {
            let ctx = session(&dir).await.unwrap();
            execute_sql(&ctx, &sql).await.map(|_| ()).map_err(|e| e.to_string())
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_create_or_replace_as_select_last_writer_wins() {
    let warehouse = tempfile::tempdir().unwrap();
    for round in 0..4 {
        let table = format!("r{round}");
        let results = race(warehouse.path(), 4, |i| {
            format!(
                "CREATE OR REPLACE TABLE {table} PARTITIONED BY (bucket(4, id)) AS SELECT {i} AS w, value AS id FROM generate_series(1, 20000) AS g(value)"
            )
        })
        .await;
        for r in &results {
            assert!(r.is_ok(), "round {round}: {r:?}");
        }
        let got = query(
            warehouse.path(),
            &format!("SELECT count(*) AS n, count(DISTINCT w) AS writers FROM {table}"),
        )
        .await;
        assert!(got.contains("| 20000 | 1       |"), "round {round}: {got}");
        let leftovers: Vec<_> = files_under(&warehouse.path().join(&table))
            .into_iter()
            .filter(|f| f.contains("creating-"))
            .collect();
        assert!(leftovers.is_empty(), "round {round}: {leftovers:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_ctas_one_wins_the_others_say_why() {
    let warehouse = tempfile::tempdir().unwrap();
    for round in 0..4 {
        let table = format!("c{round}");
        let results = race(warehouse.path(), 4, |i| {
            format!(
                "CREATE TABLE {table} PARTITIONED BY (bucket(4, id)) AS SELECT {i} AS w, value AS id FROM generate_series(1, 20000) AS g(value)"
            )
        })
        .await;
        let won = results.iter().filter(|r| r.is_ok()).count();
        for e in results.iter().filter_map(|r| r.as_ref().err()) {
            // Raced while planning ("another statement created it"), or
            // started after the winner committed (a plain CREATE of an
            // existing table).
            assert!(
                e.contains("another statement created it")
                    || e.contains("table already exists")
                    || e.contains(&format!("table {table} already exists")),
                "round {round}: {e}"
            );
            assert!(!e.contains("not empty"), "round {round}: {e}");
        }
        assert_eq!(won, 1, "round {round}: {results:?}");
        let got = query(
            warehouse.path(),
            &format!("SELECT count(*) AS n, count(DISTINCT w) AS writers FROM {table}"),
        )
        .await;
        assert!(got.contains("| 20000 | 1       |"), "round {round}: {got}");
    }
}

#[test]
fn a_ctas_killed_by_sigkill_is_cleaned_up_by_the_next_create() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_hidden-partitions");
    let run = |sql: &str| {
        std::process::Command::new(bin)
            .arg("--warehouse")
            .arg(dir.path())
            .args(["--format", "csv", "-c", sql])
            .output()
            .unwrap()
    };
    let mut child = std::process::Command::new(bin)
        .arg("--warehouse")
        .arg(dir.path())
        .args([
            "-c",
            // A small write buffer: files reach storage while the CTAS runs.
            "SET hidden_partitions.write_buffer_size = 2000000; CREATE TABLE big PARTITIONED BY (day(ts)) AS SELECT value AS id, to_timestamp_micros(value * 60000000) AS ts FROM generate_series(1, 50000000) AS t(value)",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the CTAS finished before it could be killed"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let table_dir = dir.path().join("big");
    let before: Vec<_> = files_under(&table_dir)
        .into_iter()
        .filter(|f| f.starts_with("data/"))
        .collect();
    assert!(!before.is_empty(), "no data file reached storage before the kill");
    // A put the kill interrupted leaves the local store's staging file `<name>#<n>` (which
    // listings hide); plant one in case this kill did not.
    let finished = before.iter().find(|f| !f.contains('#')).expect("a finished data file");
    let staged = format!("{finished}#7");
    std::fs::write(table_dir.join(&staged), b"partial").unwrap();
    let before: Vec<_> = before.into_iter().chain([staged]).collect();
    // Staging files count as dead once idle for a while (a live put renames its file at once).
    std::thread::sleep(Duration::from_millis(5500));
    let o = run(
        "CREATE TABLE big PARTITIONED BY (day(ts)) AS SELECT value AS id, to_timestamp_micros(value * 60000000) AS ts FROM generate_series(1, 10) AS t(value); SELECT count(*) AS n FROM big",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("n\n10\n"));
    let left: Vec<_> = before.iter().filter(|f| table_dir.join(f).exists()).collect();
    assert!(left.is_empty(), "the killed CTAS's files stay: {left:?}");
}
