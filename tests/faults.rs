//! Crash safety, proved by fault injection: every request of an INSERT, a
//! CREATE TABLE … AS SELECT, each ALTER, DELETE, UPDATE and MERGE is failed
//! in turn — with an error, with a hang that times out, with a lost
//! response (the request took effect but the writer is told it failed), and
//! with a late success (the writer is told it failed, the write lands only
//! after the statement returned, as a PUT held past the client's timeout).
//! Each time the statement either succeeds or fails with a clear error, and
//! the table then reads exactly the old state or exactly the new one — also
//! in a new session and a new process. A version write that lands late
//! makes the new state, with every file it references still there. A
//! SIGKILL in the middle of a large INSERT, or of a merge-on-read DELETE
//! after its delete files reached storage, leaves the table as it was.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use datafusion::arrow::array::AsArray;
use datafusion::arrow::util::pretty::pretty_format_batches;
use hidden_partitions::store::observe::{LatePut, ObservedStore, RequestKind, RequestObserver};
use hidden_partitions::store::url::parse_location;
use hidden_partitions::{StorageOptions, Warehouse, execute_sql, session, session_with};
use object_store::path::Path as ObjectPath;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Error,
    Hang,
    LostResponse,
    LateSuccess,
}

/// Fails the `k`-th request of one kind; counts every request.
#[derive(Debug, Default)]
struct Faults {
    state: Mutex<FaultState>,
}

#[derive(Debug, Default)]
struct FaultState {
    seen: BTreeMap<RequestKind, usize>,
    fault: Option<(RequestKind, usize, Mode)>,
    fired: bool,
    lose_next: Option<RequestKind>,
    /// The PUT to hold back (late success), once it was counted.
    late_path: Option<ObjectPath>,
    held_path: Option<ObjectPath>,
    held: Held,
}

/// PUTs held back, to land later.
#[derive(Default)]
struct Held(Vec<LatePut>);

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} held PUTs", self.0.len())
    }
}

fn injected(what: &str) -> object_store::Error {
    object_store::Error::Generic {
        store: "fault injection",
        source: what.to_string().into(),
    }
}

#[async_trait]
impl RequestObserver for Faults {
    async fn before(&self, kind: RequestKind, path: &ObjectPath) -> object_store::Result<()> {
        let action = {
            let mut s = self.state.lock().unwrap();
            let n = s.seen.entry(kind).or_default();
            *n += 1;
            let n = *n;
            match s.fault {
                Some((k, at, mode)) if k == kind && at == n => {
                    s.fired = true;
                    if mode == Mode::LostResponse {
                        s.lose_next = Some(kind);
                    }
                    if mode == Mode::LateSuccess {
                        // Only a single-request PUT can be held; `late` fires.
                        s.fired = false;
                        s.late_path = Some(path.clone());
                    }
                    Some(mode)
                }
                _ => None,
            }
        };
        match action {
            Some(Mode::Error) => Err(injected("injected error")),
            Some(Mode::Hang) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err(injected("request timed out (injected hang)"))
            }
            _ => Ok(()),
        }
    }

    fn after(&self, kind: RequestKind, _path: &ObjectPath) -> object_store::Result<()> {
        let mut s = self.state.lock().unwrap();
        if s.lose_next == Some(kind) {
            s.lose_next = None;
            return Err(injected("connection reset after the request was sent (injected)"));
        }
        Ok(())
    }

    fn late(&self, path: &ObjectPath) -> Option<object_store::Error> {
        let mut s = self.state.lock().unwrap();
        if s.late_path.as_ref() != Some(path) {
            return None;
        }
        s.late_path = None;
        s.fired = true;
        s.held_path = Some(path.clone());
        Some(injected("request timed out (injected; it lands later)"))
    }

    fn held(&self, put: LatePut) {
        self.state.lock().unwrap().held.0.push(put);
    }
}

impl Faults {
    fn arm(&self, fault: Option<(RequestKind, usize, Mode)>) {
        let mut s = self.state.lock().unwrap();
        *s = FaultState {
            fault,
            ..Default::default()
        };
    }
    fn seen(&self) -> BTreeMap<RequestKind, usize> {
        self.state.lock().unwrap().seen.clone()
    }
    fn fired(&self) -> bool {
        self.state.lock().unwrap().fired
    }
    /// Let the held PUT land; returns its path.
    async fn deliver(&self) -> Option<ObjectPath> {
        let (held, path) = {
            let mut s = self.state.lock().unwrap();
            (std::mem::take(&mut s.held.0), s.held_path.clone())
        };
        for put in held {
            put.await.expect("the held PUT lands");
        }
        path
    }
}

/// The files `table`'s current snapshot references that are not on disk.
async fn missing_files(dir: &Path, table: &str) -> Vec<String> {
    let ctx = session(dir).await.unwrap();
    let sql = format!("SELECT path FROM \"{table}$files\" UNION ALL SELECT path FROM \"{table}$manifests\"");
    let Ok(r) = execute_sql(&ctx, &sql).await else {
        return vec![format!("cannot list the files of {table}")];
    };
    let mut missing = Vec::new();
    for batch in &r[0].batches {
        let paths = batch.column(0).as_string::<i32>();
        for p in paths.iter().flatten() {
            let on_disk = match p.strip_prefix("file://") {
                Some(absolute) => std::path::PathBuf::from(absolute),
                None if p.starts_with('/') => std::path::PathBuf::from(p),
                None => dir.join(table).join(p),
            };
            if !on_disk.exists() {
                missing.push(p.to_string());
            }
        }
    }
    missing
}

/// What an Iceberg reader sees of `table`: the current snapshot of the
/// latest metadata file and of the one `version-hint.text` names, and the
/// manifest lists and manifests of that snapshot missing on disk.
fn iceberg_view(dir: &Path, table: &str) -> (Option<i64>, Option<i64>, Vec<String>) {
    let metadata = dir.join(table).join("metadata");
    let version_of =
        |name: &str| -> Option<u64> { name.strip_prefix('v')?.strip_suffix(".metadata.json")?.parse().ok() };
    // No table there (a CTAS that did not commit): nothing for either reader.
    let Some(latest) = std::fs::read_dir(&metadata)
        .into_iter()
        .flatten()
        .filter_map(|e| version_of(e.ok()?.file_name().to_str()?))
        .max()
    else {
        return (None, None, Vec::new());
    };
    let current = |version: u64| -> Option<(i64, serde_json::Value)> {
        let text = std::fs::read(metadata.join(format!("v{version}.metadata.json"))).ok()?;
        let doc: serde_json::Value = serde_json::from_slice(&text).ok()?;
        Some((doc["current-snapshot-id"].as_i64()?, doc))
    };
    let hinted: Option<u64> = std::fs::read_to_string(metadata.join("version-hint.text"))
        .ok()
        .and_then(|t| t.trim().parse().ok());
    let (id, doc) = current(latest).expect("the latest version is Iceberg metadata");
    let mut missing = Vec::new();
    if let Some(snapshot) = doc["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["snapshot-id"] == id)
    {
        let list = snapshot["manifest-list"].as_str().expect("a manifest list");
        if !Path::new(list).exists() {
            missing.push(list.to_string());
        }
        for m in snapshot["manifests"].as_array().unwrap() {
            let twin = m["iceberg"]["path"].as_str().expect("a twin");
            if !dir.join(table).join(twin).exists() {
                missing.push(twin.to_string());
            }
        }
    }
    (Some(id), hinted.and_then(current).map(|(id, _)| id), missing)
}

/// A session on `dir` whose every request passes `faults`.
async fn faulty_session(dir: &Path, faults: Arc<Faults>) -> datafusion::prelude::SessionContext {
    let place = parse_location(dir.to_str().unwrap()).unwrap();
    let store = Arc::new(ObservedStore::new(
        Arc::new(object_store::local::LocalFileSystem::new()),
        faults,
    ));
    session_with(Warehouse::with_store(store, place, StorageOptions::new()))
        .await
        .unwrap()
}

/// What a table looks like: its schema, partition spec, rows, and how many
/// data and delete files hold them, as text.
async fn state(dir: &Path, table: &str) -> String {
    let ctx = session(dir).await.unwrap();
    let mut out = String::new();
    for sql in [
        format!("DESCRIBE {table}"),
        format!("SELECT partition_spec FROM \"{table}$specs\" WHERE is_current"),
        format!("SELECT * FROM {table} ORDER BY 1"),
        format!("SELECT content, count(*) FROM \"{table}$files\" GROUP BY content ORDER BY content"),
    ] {
        match execute_sql(&ctx, &sql).await {
            Ok(r) => out.push_str(&pretty_format_batches(&r[0].batches).unwrap().to_string()),
            Err(e) => out.push_str(&format!("error: {e}\n")),
        }
    }
    out
}

/// The same, read by a new process.
fn state_by_process(dir: &Path, table: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("--warehouse")
        .arg(dir)
        .args(["--format", "csv", "-c", &format!("SELECT * FROM {table} ORDER BY 1")])
        .output()
        .unwrap();
    if o.status.success() {
        String::from_utf8_lossy(&o.stdout).to_string()
    } else {
        format!("error: {}", String::from_utf8_lossy(&o.stderr))
    }
}

struct Scenario {
    name: &'static str,
    setup: &'static str,
    statement: &'static str,
    table: &'static str,
}

const SETUP: &str = "CREATE TABLE t (id BIGINT, name VARCHAR, ts TIMESTAMP(6), v INT) PARTITIONED BY (month(ts), name);
     INSERT INTO t VALUES (1, 'a', TIMESTAMP '2024-01-05 10:00:00', 10), (2, 'b', TIMESTAMP '2024-02-05 10:00:00', 20)";

const SETUP_MERGE_ON_READ: &str =
    "CREATE TABLE t (id BIGINT, name VARCHAR, ts TIMESTAMP(6), v INT) PARTITIONED BY (month(ts), name)
       TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read',
         'write.merge.mode' = 'merge-on-read');
     INSERT INTO t VALUES (1, 'a', TIMESTAMP '2024-01-05 10:00:00', 10), (3, 'a', TIMESTAMP '2024-01-06 10:00:00', 30),
       (2, 'b', TIMESTAMP '2024-02-05 10:00:00', 20)";

const SETUP_WITH_DELETES: &str =
    "CREATE TABLE t (id BIGINT, name VARCHAR, ts TIMESTAMP(6), v INT) PARTITIONED BY (month(ts), name)
       TBLPROPERTIES ('write.delete.mode' = 'merge-on-read');
     INSERT INTO t VALUES (1, 'a', TIMESTAMP '2024-01-05 10:00:00', 10), (3, 'a', TIMESTAMP '2024-01-06 10:00:00', 30),
       (2, 'b', TIMESTAMP '2024-02-05 10:00:00', 20);
     DELETE FROM t WHERE id = 1";

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "INSERT",
        setup: SETUP,
        statement: "INSERT INTO t VALUES (3, 'a', TIMESTAMP '2024-01-06 10:00:00', 30), (4, 'c', TIMESTAMP '2024-03-01 00:00:00', 40)",
        table: "t",
    },
    Scenario {
        name: "CTAS",
        setup: SETUP,
        statement: "CREATE TABLE t2 PARTITIONED BY (day(ts), bucket(2, id)) AS SELECT * FROM t",
        table: "t2",
    },
    Scenario {
        name: "ADD COLUMN",
        setup: SETUP,
        statement: "ALTER TABLE t ADD COLUMN extra DOUBLE",
        table: "t",
    },
    Scenario {
        name: "RENAME COLUMN",
        setup: SETUP,
        statement: "ALTER TABLE t RENAME COLUMN v TO value",
        table: "t",
    },
    Scenario {
        name: "DROP COLUMN",
        setup: SETUP,
        statement: "ALTER TABLE t DROP COLUMN v",
        table: "t",
    },
    Scenario {
        name: "ALTER COLUMN TYPE",
        setup: SETUP,
        statement: "ALTER TABLE t ALTER COLUMN v TYPE BIGINT",
        table: "t",
    },
    Scenario {
        name: "ADD PARTITION FIELD",
        setup: SETUP,
        statement: "ALTER TABLE t ADD PARTITION FIELD bucket(4, id)",
        table: "t",
    },
    Scenario {
        name: "DROP PARTITION FIELD",
        setup: SETUP,
        statement: "ALTER TABLE t DROP PARTITION FIELD name",
        table: "t",
    },
    Scenario {
        name: "REPLACE PARTITION FIELD",
        setup: SETUP,
        statement: "ALTER TABLE t REPLACE PARTITION FIELD ts_month WITH day(ts)",
        table: "t",
    },
    Scenario {
        name: "DELETE",
        setup: SETUP,
        statement: "DELETE FROM t WHERE id = 1",
        table: "t",
    },
    Scenario {
        name: "DELETE (merge-on-read: a position delete file)",
        setup: SETUP_MERGE_ON_READ,
        statement: "DELETE FROM t WHERE id = 1",
        table: "t",
    },
    Scenario {
        name: "UPDATE (merge-on-read: a delete file and a new data file)",
        setup: SETUP_MERGE_ON_READ,
        statement: "UPDATE t SET v = v + 1 WHERE id = 1",
        table: "t",
    },
    Scenario {
        name: "MERGE (merge-on-read: delete files and new rows)",
        setup: SETUP_MERGE_ON_READ,
        statement: "MERGE INTO t USING (SELECT CAST(id AS BIGINT) AS id FROM (VALUES (1), (2), (5)) v(id)) s ON t.id = s.id \
                    WHEN MATCHED AND s.id = 2 THEN DELETE \
                    WHEN MATCHED THEN UPDATE SET v = 0 \
                    WHEN NOT MATCHED THEN INSERT (id, name, ts, v) VALUES (s.id, 'z', TIMESTAMP '2024-05-01 00:00:00', 1)",
        table: "t",
    },
    Scenario {
        name: "optimize (applies and drops delete files)",
        setup: SETUP_WITH_DELETES,
        statement: "ALTER TABLE t EXECUTE optimize",
        table: "t",
    },
    Scenario {
        name: "UPDATE",
        setup: SETUP,
        statement: "UPDATE t SET v = v + 1 WHERE id = 2",
        table: "t",
    },
    Scenario {
        name: "MERGE",
        setup: SETUP,
        statement: "MERGE INTO t USING (SELECT CAST(2 AS BIGINT) AS id, 'z' AS name) s ON t.id = s.id \
                    WHEN MATCHED THEN UPDATE SET v = 0 \
                    WHEN NOT MATCHED THEN INSERT (id, name, ts, v) VALUES (s.id, s.name, TIMESTAMP '2024-05-01 00:00:00', 1)",
        table: "t",
    },
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_of_every_write_can_fail() {
    let mut runs = 0;
    for scenario in SCENARIOS {
        // A clean run: the state before and after, and the requests it makes.
        let dir = tempfile::tempdir().unwrap();
        execute_sql(&session(dir.path()).await.unwrap(), scenario.setup)
            .await
            .unwrap();
        let before = state(dir.path(), scenario.table).await;
        let before_csv = state_by_process(dir.path(), scenario.table);
        let faults = Arc::new(Faults::default());
        let ctx = faulty_session(dir.path(), Arc::clone(&faults)).await;
        faults.arm(None);
        execute_sql(&ctx, scenario.statement).await.unwrap();
        let requests = faults.seen();
        let after = state(dir.path(), scenario.table).await;
        let after_csv = state_by_process(dir.path(), scenario.table);
        assert_ne!(before, after, "{}: the statement changes nothing", scenario.name);
        let mut late_versions = 0;

        for (&kind, &n) in &requests {
            for k in 1..=n {
                for mode in [Mode::Error, Mode::Hang, Mode::LostResponse, Mode::LateSuccess] {
                    let dir = tempfile::tempdir().unwrap();
                    execute_sql(&session(dir.path()).await.unwrap(), scenario.setup)
                        .await
                        .unwrap();
                    let faults = Arc::new(Faults::default());
                    let ctx = faulty_session(dir.path(), Arc::clone(&faults)).await;
                    faults.arm(Some((kind, k, mode)));
                    let result = execute_sql(&ctx, scenario.statement).await;
                    let landed_late = faults.deliver().await;
                    let what = format!("{} with {mode:?} on {} #{k}", scenario.name, kind.name());
                    if let Err(e) = &result {
                        let message = e.to_string();
                        assert!(!message.contains("panicked"), "{what}: {message}");
                        assert!(
                            message.contains("inject") || message.contains("could not be confirmed"),
                            "{what}: unclear error {message}"
                        );
                    }
                    let now = state(dir.path(), scenario.table).await;
                    assert!(
                        now == before || now == after,
                        "{what}: the table is neither the old nor the new one (statement {}):\n{now}\nold:\n{before}\nnew:\n{after}",
                        if result.is_ok() { "succeeded" } else { "failed" }
                    );
                    if result.is_ok() {
                        assert_eq!(now, after, "{what}: succeeded but the table is the old one");
                    }
                    // An Iceberg reader sees the same snapshot, by the latest
                    // metadata file and by the hint, with all its files.
                    let (latest, hinted, missing) = iceberg_view(dir.path(), scenario.table);
                    assert_eq!(latest, hinted, "{what}: version-hint.text names another snapshot");
                    assert!(missing.is_empty(), "{what}: Iceberg files missing: {missing:?}");
                    if let Some(path) = landed_late.filter(|p| p.as_ref().ends_with(".metadata.json")) {
                        late_versions += 1;
                        // The version landed after the writer gave up on it:
                        // the writer must have said so and kept its files.
                        assert_eq!(now, after, "{what}: {path} landed late, yet the table is the old one");
                        if let Err(e) = &result {
                            assert!(
                                e.to_string().contains("could not be confirmed"),
                                "{what}: {path} landed late, but the error does not say the commit is unknown: {e}"
                            );
                        }
                        let missing = missing_files(dir.path(), scenario.table).await;
                        assert!(missing.is_empty(), "{what}: referenced files deleted: {missing:?}");
                    }
                    if scenario.name == "INSERT" {
                        let by_process = state_by_process(dir.path(), scenario.table);
                        let expected = if now == before { &before_csv } else { &after_csv };
                        assert_eq!(&by_process, expected, "{what}: a new process reads something else");
                    }
                    // The table can still be written afterwards.
                    execute_sql(&session(dir.path()).await.unwrap(), "INSERT INTO t (id) VALUES (99)")
                        .await
                        .unwrap_or_else(|e| panic!("{what}: the next write fails: {e}"));
                    runs += usize::from(faults.fired());
                }
            }
        }
        assert!(late_versions > 0, "{}: no version write landed late", scenario.name);
    }
    println!("{runs} faults injected");
    assert!(runs > 100, "only {runs} faults fired");
}

/// Our CLI on the warehouse `dir`, running `sql` (results as CSV).
fn cli(dir: &Path, sql: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("--warehouse")
        .arg(dir)
        .args(["--format", "csv", "-c", sql])
        .output()
        .unwrap()
}

#[test]
fn a_killed_insert_leaves_the_table_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_hidden-partitions");
    let run = |sql: &str| cli(dir.path(), sql);
    let o = run(
        "CREATE TABLE big (id BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts)); INSERT INTO big VALUES (1, TIMESTAMP '2024-01-01 00:00:00')",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut child = Command::new(bin)
        .arg("--warehouse")
        .arg(dir.path())
        .args([
            "-c",
            // A small write buffer: files reach storage while the INSERT runs.
            "SET hidden_partitions.write_buffer_size = 2000000; INSERT INTO big SELECT value, to_timestamp_micros(value * 60000000) FROM generate_series(1, 50000000) AS t(value)",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the INSERT finished before it could be killed"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let o = run("SELECT count(*) AS n FROM big");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "n\n1\n",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Data had reached storage: the files the killed INSERT wrote are orphans.
    let o = run("SELECT count(*) AS n FROM \"big$orphans\" WHERE path LIKE 'data/%'");
    let orphans: i64 = String::from_utf8_lossy(&o.stdout)
        .lines()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(orphans > 0, "no data file reached storage before the kill");
    let o = run("INSERT INTO big VALUES (2, TIMESTAMP '2024-01-02 00:00:00'); SELECT count(*) AS n FROM big");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("n\n2\n"));
}

/// Every `-deletes.parquet` file under `dir`.
fn delete_files_under(dir: &Path) -> usize {
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                n += delete_files_under(&p);
            } else if p.to_string_lossy().ends_with("-deletes.parquet") {
                n += 1;
            }
        }
    }
    n
}

/// Start the merge-on-read DELETE and SIGKILL it as soon as its first
/// delete file reached `data/` (its commit comes after all of them);
/// `false` when it ended before the kill landed (a loaded machine).
fn kill_delete_after_its_first_delete_file(bin: &str, dir: &Path) -> bool {
    let data = dir.join("big").join("data");
    let mut child = Command::new(bin)
        .arg("--warehouse")
        .arg(dir)
        .args(["-c", "DELETE FROM big WHERE id % 1000 = 7"])
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while delete_files_under(&data) == 0 && start.elapsed() < Duration::from_secs(120) {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(
        delete_files_under(dir) > 0,
        "no delete file reached storage before the kill"
    );
    !status.success()
}

#[test]
fn a_killed_merge_on_read_delete_leaves_the_table_as_it_was() {
    let bin = env!("CARGO_BIN_EXE_hidden-partitions");
    // 1,000 files of 1,000 rows in one directory (small batches and write buffer):
    // a delete file for each, all written before the commit. Tried again
    // on a fresh table when the kill landed after the commit.
    let mut attempts = 0;
    let dir = loop {
        attempts += 1;
        let dir = tempfile::tempdir().unwrap();
        let o = cli(
            dir.path(),
            "CREATE TABLE big (id BIGINT, ts TIMESTAMP) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read');
             SET hidden_partitions.write_buffer_size = 1000; SET datafusion.execution.batch_size = 1000;
             INSERT INTO big SELECT value, to_timestamp_micros((value % 200) * 86400000000) FROM generate_series(1, 1000000) AS t(value)",
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = |sql: &str| String::from_utf8_lossy(&cli(dir.path(), sql).stdout).to_string();
        let killed = kill_delete_after_its_first_delete_file(bin, dir.path());
        // All or nothing: the DELETE either committed whole or not at all.
        let count = stdout("SELECT count(*) AS n FROM big");
        match stdout("SELECT count(*) AS n FROM \"big$snapshots\"").as_str() {
            "n\n1\n" if killed => break dir,
            "n\n1\n" => panic!("the DELETE ended without committing: {count}"),
            _ => assert_eq!(count, "n\n999000\n", "a committed DELETE deletes every matching row"),
        }
        assert!(
            attempts < 5,
            "the DELETE committed before it could be killed, {attempts} times"
        );
    };
    let run = |sql: &str| cli(dir.path(), sql);
    let o = run("SELECT count(*) AS n FROM big");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "n\n1000000\n",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run("SELECT count(*) AS n FROM \"big$snapshots\"");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "n\n1\n");
    // The killed statement's delete files are orphans, never the table's.
    let o = run("SELECT count(*) AS n FROM \"big$orphans\" WHERE path LIKE '%-deletes.parquet'");
    let orphans: i64 = String::from_utf8_lossy(&o.stdout)
        .lines()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        orphans > 0,
        "the killed DELETE's delete files are not listed as orphans"
    );
    // The same DELETE runs to its end afterwards.
    let o = run("DELETE FROM big WHERE id % 1000 = 7; SELECT count(*) AS n FROM big");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).ends_with("n\n999000\n"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
