//! Merge-on-read beyond the `.slt` cases: damaged delete files are clear
//! errors naming the file, and concurrent optimize, merge-on-read DELETE,
//! UPDATE, MERGE and appends never bring a deleted row or an old version back.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use hidden_partitions::{execute_sql, session};

async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let r = execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.last().unwrap().batches[0]
        .column(0)
        .as_primitive::<Int64Type>()
        .value(0)
}

async fn error(ctx: &SessionContext, sql: &str) -> String {
    execute_sql(ctx, sql)
        .await
        .err()
        .unwrap_or_else(|| panic!("{sql} succeeded"))
        .to_string()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// A merge-on-read table `t` (ids 1..=6 in partition `a`) with one delete
/// file (id 2); returns the warehouse and the delete file.
async fn table_with_a_delete_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    for sql in [
        "CREATE TABLE t (id BIGINT, p VARCHAR) PARTITIONED BY (p) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
        "INSERT INTO t SELECT value, 'a' FROM generate_series(1, 6) AS s(value)",
        "DELETE FROM t WHERE id = 2",
    ] {
        execute_sql(&ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let deletes: Vec<PathBuf> = walk(&dir.path().join("t"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("-deletes.parquet"))
        .collect();
    assert_eq!(deletes.len(), 1, "{deletes:?}");
    (dir, deletes[0].clone())
}

fn rewrite_parquet(path: &Path, change: impl FnOnce(RecordBatch) -> RecordBatch) {
    let bytes = bytes::Bytes::from(std::fs::read(path).unwrap());
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    let batch = datafusion::arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    let batch = change(batch);
    let mut out = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    std::fs::write(path, out).unwrap();
}

fn with_column(batch: &RecordBatch, name: &str, column: ArrayRef) -> RecordBatch {
    let i = batch.schema().index_of(name).unwrap();
    let mut columns = batch.columns().to_vec();
    columns[i] = column;
    RecordBatch::try_new(batch.schema(), columns).unwrap()
}

#[tokio::test]
async fn a_missing_delete_file_is_an_error_naming_it() {
    let (dir, deletes) = table_with_a_delete_file().await;
    std::fs::remove_file(&deletes).unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let name = deletes.file_name().unwrap().to_string_lossy().to_string();
    for sql in ["SELECT count(*) FROM t", "DELETE FROM t WHERE id = 3"] {
        let e = error(&ctx, sql).await;
        assert!(e.contains(&name) && e.contains("does not exist"), "{sql}: {e}");
    }
    // Nothing was committed on top.
    assert_eq!(count(&ctx, "SELECT count(*) FROM \"t$snapshots\"").await, 2);
}

#[tokio::test]
async fn a_position_past_the_end_of_its_data_file_is_an_error() {
    let (dir, deletes) = table_with_a_delete_file().await;
    rewrite_parquet(&deletes, |b| {
        let pos: ArrayRef = Arc::new(Int64Array::from(vec![999i64]));
        with_column(&b, "pos", pos)
    });
    let ctx = session(dir.path()).await.unwrap();
    let e = error(&ctx, "SELECT * FROM t").await;
    assert!(
        e.contains("deletes row 999 of data file") && e.contains("which has 6 rows"),
        "{e}"
    );
    let e = error(&ctx, "ALTER TABLE t EXECUTE optimize").await;
    assert!(e.contains("deletes row 999"), "{e}");
    assert_eq!(count(&ctx, "SELECT count(*) FROM \"t$snapshots\"").await, 2);
}

#[tokio::test]
async fn a_delete_file_naming_a_data_file_not_in_the_table_is_an_error() {
    let (dir, _) = table_with_a_delete_file().await;
    // Point the delete manifest's entry at a data file the table does not list.
    let manifests: Vec<PathBuf> = walk(&dir.path().join("t").join("metadata"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("-m.parquet"))
        .collect();
    let mut changed = 0;
    for m in manifests {
        let bytes = bytes::Bytes::from(std::fs::read(&m).unwrap());
        let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
        if builder.schema().index_of("referenced_data_file").is_err() {
            continue;
        }
        rewrite_parquet(&m, |b| {
            let gone: ArrayRef = Arc::new(StringArray::from(vec!["data/p=a/gone.parquet"; b.num_rows()]));
            with_column(&b, "referenced_data_file", gone)
        });
        changed += 1;
    }
    assert_eq!(changed, 1);
    let ctx = session(dir.path()).await.unwrap();
    let e = error(&ctx, "SELECT * FROM t").await;
    assert!(
        e.contains("names data file data/p=a/gone.parquet, which the snapshot does not list"),
        "{e}"
    );
}

/// Run `sql` in a session of its own on the warehouse at `path`, starting
/// over while it loses to a concurrent statement.
async fn retry(sql: String, path: PathBuf) {
    let ctx = session(&path).await.unwrap();
    loop {
        match execute_sql(&ctx, &sql).await {
            Ok(_) => return,
            Err(e) => assert!(e.to_string().contains("conflict"), "{sql}: {e}"),
        }
    }
}

/// Optimize (which rewrites files and so drops their delete files), merge-on-read
/// DELETEs of disjoint rows and appends, all at once: a DELETE that commits
/// stays done (an optimize that rewrote its file meanwhile conflicts and starts
/// over), and every other row is there once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_optimize_and_merge_on_read_deletes_keep_deleted_rows_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE c (id BIGINT, p VARCHAR) PARTITIONED BY (p) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
    )
    .await
    .unwrap();
    for i in 0..4 {
        execute_sql(
            &ctx,
            &format!(
                "INSERT INTO c SELECT value, 'a' FROM generate_series({}, {}) AS s(value)",
                i * 50 + 1,
                i * 50 + 50
            ),
        )
        .await
        .unwrap();
    }
    let mut tasks = Vec::new();
    // Deleters: ids ≡ k (mod 10) for k in 0..3, one statement per k and round.
    for k in 0..3 {
        for round in 0..3 {
            let sql = format!("DELETE FROM c WHERE p = 'a' AND id % 10 = {k} AND id % 3 = {round}");
            tasks.push(tokio::spawn(retry(sql, dir.path().to_path_buf())));
        }
    }
    for _ in 0..3 {
        tasks.push(tokio::spawn(retry(
            "ALTER TABLE c EXECUTE optimize".to_string(),
            dir.path().to_path_buf(),
        )));
    }
    for w in 0..2 {
        let sql = format!(
            "INSERT INTO c SELECT value, 'b' FROM generate_series({}, {}) AS s(value)",
            1000 + w * 10,
            1009 + w * 10
        );
        tasks.push(tokio::spawn(retry(sql, dir.path().to_path_buf())));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let ctx = session(dir.path()).await.unwrap();
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM c WHERE id % 10 < 3 AND p = 'a'").await,
        0
    );
    assert_eq!(count(&ctx, "SELECT count(*) FROM c WHERE p = 'a'").await, 140);
    assert_eq!(count(&ctx, "SELECT count(DISTINCT id) FROM c").await, 160);
    assert_eq!(count(&ctx, "SELECT count(*) FROM c").await, 160);
    // And once more after a final optimize that applies every delete file.
    execute_sql(&ctx, "ALTER TABLE c EXECUTE optimize").await.unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM c").await, 160);
    assert_eq!(
        count(
            &ctx,
            "SELECT count(*) FROM \"c$files\" WHERE content = 'position_deletes'"
        )
        .await,
        0
    );
}

/// Concurrent merge-on-read DELETEs of disjoint rows of the same data files
/// on a format v3 table: each data file ends with exactly one live deletion
/// vector holding every deleted position (a statement that lost the race
/// starts over and merges the winner's vector into its own), and no deleted
/// row comes back (issue 53).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_deletes_keep_one_deletion_vector_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE v (id BIGINT, p VARCHAR) PARTITIONED BY (p)
         TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')",
    )
    .await
    .unwrap();
    for p in ["a", "b"] {
        execute_sql(
            &ctx,
            &format!("INSERT INTO v SELECT value, '{p}' FROM generate_series(1, 100) AS s(value)"),
        )
        .await
        .unwrap();
    }
    let tasks: Vec<_> = (0..6)
        .map(|k| {
            let sql = format!("DELETE FROM v WHERE id % 10 = {k}");
            tokio::spawn(retry(sql, dir.path().to_path_buf()))
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let ctx = session(dir.path()).await.unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM v WHERE id % 10 < 6").await, 0);
    assert_eq!(count(&ctx, "SELECT count(*) FROM v").await, 80);
    assert_eq!(
        count(
            &ctx,
            "SELECT count(*) FROM \"v$delete_files\" WHERE file_format = 'PUFFIN'"
        )
        .await,
        2
    );
    assert_eq!(
        count(&ctx, "SELECT sum(record_count) FROM \"v$delete_files\"").await,
        120
    );
    assert_eq!(
        count(
            &ctx,
            "SELECT count(DISTINCT referenced_data_file) FROM \"v$delete_files\""
        )
        .await,
        2
    );
}

/// Merge-on-read UPDATEs and MERGEs of disjoint rows, optimizes and appends,
/// all at once: every row is there once, with every change made to it once
/// (an old version never comes back beside its new one).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_merge_on_read_updates_merges_and_optimize_change_each_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE u (id BIGINT, p VARCHAR, v BIGINT) PARTITIONED BY (p)
         TBLPROPERTIES ('write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')",
    )
    .await
    .unwrap();
    for i in 0..4 {
        execute_sql(
            &ctx,
            &format!(
                "INSERT INTO u SELECT value, 'a', 0 FROM generate_series({}, {}) AS s(value)",
                i * 50 + 1,
                i * 50 + 50
            ),
        )
        .await
        .unwrap();
    }
    let mut tasks = Vec::new();
    // ids ≡ k (mod 10), k < 3: +1 by two UPDATEs each; k = 3: +10 by a MERGE
    // that also inserts id 1000 + round.
    for k in 0..3 {
        for _ in 0..2 {
            let sql = format!("UPDATE u SET v = v + 1 WHERE id % 10 = {k} AND id < 1000");
            tasks.push(tokio::spawn(retry(sql, dir.path().to_path_buf())));
        }
    }
    for round in 0..2 {
        let sql = format!(
            "MERGE INTO u USING (SELECT id FROM u WHERE id % 20 = {} AND id < 1000
                                 UNION ALL SELECT CAST({} AS BIGINT)) s ON u.id = s.id
             WHEN MATCHED THEN UPDATE SET v = v + 10
             WHEN NOT MATCHED THEN INSERT (id, p, v) VALUES (s.id, 'b', 0)",
            3 + 10 * round,
            1000 + round
        );
        tasks.push(tokio::spawn(retry(sql, dir.path().to_path_buf())));
    }
    for _ in 0..3 {
        tasks.push(tokio::spawn(retry(
            "ALTER TABLE u EXECUTE optimize".to_string(),
            dir.path().to_path_buf(),
        )));
    }
    tasks.push(tokio::spawn(retry(
        "INSERT INTO u SELECT value, 'c', 0 FROM generate_series(2000, 2009) AS s(value)".to_string(),
        dir.path().to_path_buf(),
    )));
    for t in tasks {
        t.await.unwrap();
    }
    let ctx = session(dir.path()).await.unwrap();
    for _ in 0..2 {
        assert_eq!(count(&ctx, "SELECT count(*) FROM u").await, 212);
        assert_eq!(count(&ctx, "SELECT count(DISTINCT id) FROM u").await, 212);
        assert_eq!(
            count(
                &ctx,
                "SELECT count(*) FROM u WHERE id % 10 < 3 AND id < 1000 AND v <> 2"
            )
            .await,
            0
        );
        assert_eq!(
            count(
                &ctx,
                "SELECT count(*) FROM u WHERE id % 10 = 3 AND id < 1000 AND v <> 10"
            )
            .await,
            0
        );
        assert_eq!(count(&ctx, "SELECT sum(v) FROM u").await, 60 * 2 + 20 * 10);
        // Once more after an optimize that applies every delete file.
        execute_sql(&ctx, "ALTER TABLE u EXECUTE optimize").await.unwrap();
    }
}

/// Holds the first PUT of a position delete file until released, saying when it got there.
#[derive(Debug, Default)]
struct PauseAtDeleteFile {
    reached: tokio::sync::Notify,
    release: tokio::sync::Notify,
    paused: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl hidden_partitions::store::observe::RequestObserver for PauseAtDeleteFile {
    async fn before(
        &self,
        kind: hidden_partitions::store::observe::RequestKind,
        path: &object_store::path::Path,
    ) -> object_store::Result<()> {
        use std::sync::atomic::Ordering;
        if kind == hidden_partitions::store::observe::RequestKind::Put
            && path.as_ref().ends_with("-deletes.parquet")
            && !self.paused.swap(true, Ordering::SeqCst)
        {
            self.reached.notify_one();
            self.release.notified().await;
        }
        Ok(())
    }
}

/// A merge-on-read DELETE planned on a v2 table, while another statement makes the table v3
/// (and copy-on-write, as v3 requires) before the DELETE commits: the DELETE does not commit
/// its position delete files on top (v3 takes none); it starts over under the new rules and
/// deletes by rewriting. The same when only the mode changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_delete_racing_a_change_of_its_rules_starts_over_under_the_new_ones() {
    for alter in [
        "ALTER TABLE t SET TBLPROPERTIES ('write.delete.mode' = 'copy-on-write', 'format-version' = '3')",
        "ALTER TABLE t SET TBLPROPERTIES ('write.delete.mode' = 'copy-on-write')",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let ctx = session(dir.path()).await.unwrap();
        for sql in [
            "CREATE TABLE t (id BIGINT, p VARCHAR) PARTITIONED BY (p) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
            "INSERT INTO t SELECT value, 'a' FROM generate_series(1, 6) AS s(value)",
        ] {
            execute_sql(&ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let pause = Arc::new(PauseAtDeleteFile::default());
        let place = hidden_partitions::store::url::parse_location(dir.path().to_str().unwrap()).unwrap();
        let store = Arc::new(hidden_partitions::store::observe::ObservedStore::new(
            Arc::new(object_store::local::LocalFileSystem::new()),
            Arc::clone(&pause) as _,
        ));
        let deleting = hidden_partitions::session_with(hidden_partitions::Warehouse::with_store(
            store,
            place,
            hidden_partitions::StorageOptions::new(),
        ))
        .await
        .unwrap();
        let reached = pause.reached.notified();
        let delete = tokio::spawn(async move { execute_sql(&deleting, "DELETE FROM t WHERE id = 2").await });
        reached.await;
        execute_sql(&ctx, alter)
            .await
            .unwrap_or_else(|e| panic!("{alter}: {e}"));
        pause.release.notify_one();
        delete
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("the DELETE after {alter}: {e}"));
        let ctx = session(dir.path()).await.unwrap();
        assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 5, "{alter}");
        assert_eq!(count(&ctx, "SELECT count(*) FROM t WHERE id = 2").await, 0, "{alter}");
        assert_eq!(
            count(&ctx, "SELECT count(*) FROM \"t$files\" WHERE content <> 'data'").await,
            0,
            "{alter}: the table holds position delete files"
        );
    }
}
