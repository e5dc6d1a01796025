//! Iceberg tables written by pyiceberg (tests/data/iceberg), read through our
//! planner: every expected query's rows, and the files it selects.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::foreign::{data_dir, expected, run, same_rows};
use datafusion::prelude::SessionContext;
use hidden_partitions::formats::{self, Format};
use hidden_partitions::{StorageOptions, execute_sql, session};
use serde_json::Value as Json;

fn table_dir(path: &str) -> String {
    data_dir().join(path).to_str().unwrap().to_string()
}

async fn ctx_with(name: &str, path: &str, snapshot: Option<i64>) -> (tempfile::TempDir, SessionContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let table = formats::open(Format::Iceberg, name, &table_dir(path), &StorageOptions::default())
        .await
        .unwrap();
    let table = match snapshot {
        Some(id) => table.at(&id.to_string()).await.unwrap(),
        None => table,
    };
    ctx.register_table(name, Arc::new(table)).unwrap();
    (dir, ctx)
}

/// Run every query of `expected/iceberg/<table>.json`; rows must be equal,
/// and the files we select must cover the files pyiceberg selected that
/// hold result rows (we may prune more, never a file with a matching row).
async fn check_table(table: &str, allowed_extra: &[&str]) {
    let exp = expected("iceberg", table);
    let path = exp["table"].as_str().unwrap().to_string();
    let root = table_dir(&path).trim_start_matches('/').to_string();
    let mut failures = Vec::new();
    for q in exp["queries"].as_array().unwrap() {
        let name = q["name"].as_str().unwrap();
        let sql = q["sql"].as_str().unwrap();
        let (_dir, ctx) = ctx_with("t", &path, q["snapshot_id"].as_i64()).await;
        let (rows, files) = run(&ctx, sql, &root).await;
        let want: Vec<Json> = q["rows"].as_array().unwrap().clone();
        if !same_rows(&rows, &want) {
            failures.push(format!("{table}/{name}: rows\n  got  {rows:?}\n  want {want:?}"));
            continue;
        }
        let theirs: BTreeSet<String> = q["files"]
            .as_array()
            .map(|f| f.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        if q.get("files").is_some() && files != theirs && !allowed_extra.contains(&name) {
            failures.push(format!(
                "{table}/{name}: files\n  ours   {files:?}\n  theirs {theirs:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn evolved_specs_renames_and_pre_epoch_values() {
    check_table("evolved", &[]).await;
}

#[tokio::test]
async fn position_and_equality_deletes_follow_sequence_numbers() {
    check_table("deletes", &[]).await;
}

/// A format v3 table whose deletes are deletion vectors (Puffin blobs,
/// one replaced by a later one holding its positions and one more), read
/// as pyiceberg reads it at every snapshot (issue 53).
#[tokio::test]
async fn deletion_vectors_of_v3_tables() {
    check_table("dv", &[]).await;
}

#[tokio::test]
async fn format_v1_with_hadoop_metadata_names() {
    check_table("v1", &[]).await;
}

#[tokio::test]
async fn files_without_field_ids_read_through_the_name_mapping() {
    check_table("no_field_ids", &[]).await;
}

#[tokio::test]
async fn create_external_table_from_sql_and_metadata_tables() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let location = table_dir("iceberg/evolved");
    execute_sql(
        &ctx,
        &format!("CREATE EXTERNAL TABLE ev STORED AS ICEBERG LOCATION '{location}'"),
    )
    .await
    .unwrap();
    let plan = execute_sql(
        &ctx,
        "EXPLAIN SELECT id FROM ev WHERE ts >= TIMESTAMP '2024-01-02 00:00:00' AND ts < TIMESTAMP '2024-01-03 00:00:00'",
    )
    .await
    .unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&plan[0].batches)
        .unwrap()
        .to_string();
    assert!(text.contains("HiddenPartitionsScan: table=ev, files=1/15"), "{text}");
    for (sql, rows) in [
        ("SELECT * FROM \"ev$files\"", 15),
        ("SELECT * FROM \"ev$snapshots\"", 4),
        ("SELECT * FROM \"ev$specs\"", 3),
        ("SELECT * FROM \"ev@8543480998800801680\"", 7),
    ] {
        let r = execute_sql(&ctx, sql).await.unwrap();
        assert_eq!(r[0].num_rows(), rows, "{sql}");
    }
    // A metadata file given directly works too.
    let file = std::fs::read_dir(data_dir().join("iceberg/v1/metadata"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_str().unwrap().ends_with("v2.metadata.json"))
        .unwrap();
    execute_sql(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE v1_at_2 STORED AS ICEBERG LOCATION '{}'",
            file.display()
        ),
    )
    .await
    .unwrap();
    let r = execute_sql(&ctx, "SELECT count(*) FROM v1_at_2").await.unwrap();
    assert_eq!(
        datafusion::arrow::util::pretty::pretty_format_batches(&r[0].batches)
            .unwrap()
            .to_string()
            .contains("| 5 "),
        true
    );
}

/// A copy of fixture `path` in a fresh directory (writes must never touch the fixtures).
fn copy_of(path: &str, into: &std::path::Path) -> String {
    let from = data_dir().join(path);
    let to = into.join(path.replace('/', "_"));
    let mut stack = vec![from.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let target = to.join(p.strip_prefix(&from).unwrap());
            if p.is_dir() {
                std::fs::create_dir_all(&target).unwrap();
                stack.push(p);
            } else {
                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::fs::copy(&p, &target).unwrap();
            }
        }
    }
    make_directory_table(&to);
    to.to_str().unwrap().to_string()
}

/// The fixtures' metadata files are named as catalogs name them (`00005-<uuid>.metadata.json`),
/// and writes by directory refuse such a table (its catalog records the current file). A copy
/// written to by its directory is made a directory table: the newest file as `v<N>.metadata.json`
/// and `version-hint.text` naming N.
fn make_directory_table(table: &std::path::Path) {
    let metadata = table.join("metadata");
    let newest = std::fs::read_dir(&metadata)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().to_string();
            let (n, rest) = name.split_once('-')?;
            if !rest.ends_with(".metadata.json") {
                return None;
            }
            Some((n.parse::<u64>().ok()?, name.clone()))
        })
        .max();
    if let Some((n, name)) = newest {
        std::fs::copy(metadata.join(&name), metadata.join(format!("v{n}.metadata.json"))).unwrap();
        std::fs::write(metadata.join("version-hint.text"), n.to_string()).unwrap();
    }
}

async fn pretty(ctx: &SessionContext, sql: &str) -> String {
    let r = execute_sql(ctx, sql).await.unwrap();
    datafusion::arrow::util::pretty::pretty_format_batches(&r[0].batches)
        .unwrap()
        .to_string()
}

async fn count(ctx: &SessionContext, table: &str) -> String {
    let r = execute_sql(ctx, &format!("SELECT count(*) AS n FROM {table}"))
        .await
        .unwrap();
    datafusion::arrow::util::pretty::pretty_format_batches(&r[0].batches)
        .unwrap()
        .to_string()
}

/// An Iceberg table with another engine's delete files (position and equality deletes,
/// pyiceberg's manifests) takes every statement: those that rewrite data files read them
/// with the deletes applied, so no deleted row comes back, and the delete files stay (by
/// sequence number they no longer apply to the rewritten rows). PURGE is refused; the
/// table copies into one of ours.
#[tokio::test]
async fn foreign_tables_with_deletes_take_every_statement_and_copy_into_ours() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let location = copy_of("iceberg/deletes", dir.path());
    execute_sql(
        &ctx,
        &format!("CREATE EXTERNAL TABLE d STORED AS ICEBERG LOCATION '{location}'"),
    )
    .await
    .unwrap();
    // Deletes apply, so COUNT(*) is counted, not taken from record counts (17 physical rows).
    assert!(count(&ctx, "d").await.contains("| 9 "));
    let rows = |sql: &'static str| {
        let ctx = ctx.clone();
        async move { pretty(&ctx, sql).await }
    };
    let before = rows("SELECT id, cat, name, val FROM d ORDER BY id").await;
    execute_sql(&ctx, "INSERT INTO d VALUES (100, 'a', 'x', 1)")
        .await
        .unwrap();
    assert!(count(&ctx, "d").await.contains("| 10 "));
    for sql in [
        "DELETE FROM d WHERE id = 100",
        "UPDATE d SET val = val + 1000",
        "MERGE INTO d USING (SELECT 200 AS id) s ON d.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'b', 'm', 2)",
        "DELETE FROM d WHERE id = 200",
        "UPDATE d SET val = val - 1000",
    ] {
        execute_sql(&ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // Every row that was deleted stays deleted; the others are as they were.
    assert_eq!(rows("SELECT id, cat, name, val FROM d ORDER BY id").await, before);
    execute_sql(&ctx, "ALTER TABLE d EXECUTE optimize").await.unwrap();
    assert_eq!(rows("SELECT id, cat, name, val FROM d ORDER BY id").await, before);
    let err = execute_sql(&ctx, "DROP TABLE d PURGE").await.unwrap_err().to_string();
    assert!(err.contains("Iceberg table"), "{err}");
    execute_sql(
        &ctx,
        "CREATE TABLE copy PARTITIONED BY (bucket(4, id)) AS SELECT * FROM d",
    )
    .await
    .unwrap();
    assert!(count(&ctx, "copy").await.contains("| 9 "));
}

#[tokio::test]
async fn bad_tables_fail_with_clear_errors() {
    let open = |p: &str| {
        let p = table_dir(p);
        async move {
            formats::open(Format::Iceberg, "t", &p, &StorageOptions::default())
                .await
                .map(|_| ())
                .unwrap_err()
                .to_string()
        }
    };
    let err = open("iceberg_bad/not_iceberg").await;
    assert!(err.contains("is not Iceberg table metadata"), "{err}");
    // The missing manifest is noticed when planning needs it.
    let (_dir, ctx) = ctx_with("t", "iceberg_bad/missing_manifest", None).await;
    let err = ctx
        .sql("SELECT * FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not exist") && err.contains("manifest"), "{err}");
    let err = open("iceberg/nonexistent").await;
    assert!(err.contains("metadata"), "{err}");
}

#[tokio::test]
async fn unknown_transform_is_read_but_not_pruned_on() {
    let exp = expected("iceberg_bad", "unknown_transform");
    let path = exp["table"].as_str().unwrap().to_string();
    let (_dir, ctx) = ctx_with("t", &path, None).await;
    for q in exp["queries"].as_array().unwrap() {
        let (rows, _) = run(&ctx, q["sql"].as_str().unwrap(), "").await;
        assert!(
            same_rows(&rows, q["rows"].as_array().unwrap()),
            "{}: {rows:?}",
            q["name"]
        );
    }
}

/// Files without field ids (added with `add_files`) are read through the name mapping by
/// the statements that rewrite them too: a renamed column keeps its values.
#[tokio::test]
async fn rewrites_of_files_without_field_ids_keep_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let location = copy_of("iceberg/no_field_ids", dir.path());
    execute_sql(
        &ctx,
        &format!("CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{location}'"),
    )
    .await
    .unwrap();
    let names = |ctx: SessionContext| async move {
        let r = execute_sql(&ctx, "SELECT id, full_name FROM t ORDER BY id")
            .await
            .unwrap();
        datafusion::arrow::util::pretty::pretty_format_batches(&r[0].batches)
            .unwrap()
            .to_string()
    };
    let before = names(ctx.clone()).await;
    assert!(before.contains("| 1  | one "), "{before}");
    execute_sql(&ctx, "UPDATE t SET id = id + 10 WHERE id = 1")
        .await
        .unwrap();
    let after = names(ctx.clone()).await;
    assert!(
        after.contains("| 11 | one "),
        "the renamed column lost its values in the rewritten file: {before} → {after}"
    );
    assert_eq!(before.lines().count(), after.lines().count());
}
