//! Delta tables written by delta-rs (tests/data/delta), read through our
//! planner: every expected query's rows, and the files it selects.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::foreign::{data_dir, expected, run, same_rows};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use hidden_partitions::formats::{self, Format};
use hidden_partitions::{StorageOptions, execute_sql, session};
use serde_json::Value as Json;

fn table_dir(path: &str) -> String {
    data_dir().join(path).to_str().unwrap().to_string()
}

async fn ctx_with(name: &str, path: &str, version: Option<i64>) -> (tempfile::TempDir, SessionContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let table = formats::open(Format::Delta, name, &table_dir(path), &StorageOptions::default())
        .await
        .unwrap();
    let table = match version {
        Some(v) => table.at(&v.to_string()).await.unwrap(),
        None => table,
    };
    ctx.register_table(name, Arc::new(table)).unwrap();
    (dir, ctx)
}

/// Every query of `expected/delta/<table>.json`: equal rows; files equal to
/// delta-rs' selection unless the query is listed in `prunes_more` (then
/// ours must be a subset that still holds every result row).
async fn check_table(table: &str, prunes_more: &[&str]) {
    let exp = expected("delta", table);
    let path = exp["table"].as_str().unwrap().to_string();
    let root = table_dir(&path).trim_start_matches('/').to_string();
    let mut failures = Vec::new();
    for q in exp["queries"].as_array().unwrap() {
        let name = q["name"].as_str().unwrap();
        let sql = q["sql"].as_str().unwrap();
        let (_dir, ctx) = ctx_with("t", &path, q["version"].as_i64()).await;
        let (rows, files) = run(&ctx, sql, &root).await;
        let want: Vec<Json> = q["rows"].as_array().unwrap().clone();
        if !same_rows(&rows, &want) {
            failures.push(format!("{table}/{name}: rows\n  got  {rows:?}\n  want {want:?}"));
            continue;
        }
        // With an empty-string partition value the protocol's answer (NULL) is recorded separately.
        let key = if q.get("files_protocol").is_some() {
            "files_protocol"
        } else {
            "files"
        };
        let theirs: BTreeSet<String> = q[key]
            .as_array()
            .map(|f| f.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        let ok = if prunes_more.contains(&name) {
            files.is_subset(&theirs)
        } else {
            files == theirs
        };
        if q.get(key).is_some() && !ok {
            failures.push(format!(
                "{table}/{name}: files\n  ours   {files:?}\n  theirs {theirs:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn string_partition_values_with_escaped_paths() {
    check_table("strings", &[]).await;
}

#[tokio::test]
async fn date_and_int_partitions_with_a_checkpoint() {
    check_table("dated", &[]).await;
}

#[tokio::test]
async fn generated_partition_columns_prune_by_their_source() {
    // delta-rs cannot prune `ts` filters through the generated `day`; we do.
    check_table(
        "generated",
        &[
            "ts_ge_2024_01_02",
            "ts_on_2024_01_01",
            "ts_before_epoch",
            "ts_eq",
            "ts_is_null",
            "ts_gt_sub_millisecond",
        ],
    )
    .await;
}

#[tokio::test]
async fn deletion_vectors_remove_rows() {
    check_table("dv", &[]).await;
}

#[tokio::test]
async fn column_mapping_by_physical_name() {
    check_table("column_mapping", &[]).await;
}

#[tokio::test]
async fn ts_filter_prunes_by_generated_day_column() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let location = table_dir("delta/generated");
    execute_sql(
        &ctx,
        &format!("CREATE EXTERNAL TABLE g STORED AS DELTA LOCATION '{location}'"),
    )
    .await
    .unwrap();
    let r = execute_sql(
        &ctx,
        "EXPLAIN SELECT id FROM g WHERE ts >= TIMESTAMP '2024-01-02 00:00:00' AND ts < TIMESTAMP '2024-01-03 00:00:00'",
    )
    .await
    .unwrap();
    let text = pretty_format_batches(&r[0].batches).unwrap().to_string();
    assert!(text.contains("HiddenPartitionsScan: table=g, files=1/7"), "{text}");
    let r = execute_sql(&ctx, "SELECT * FROM \"g$specs\"").await.unwrap();
    let text = pretty_format_batches(&r[0].batches).unwrap().to_string();
    assert!(text.contains("day(ts)"), "{text}");
}

#[tokio::test]
async fn missing_log_version_is_named() {
    let err = formats::open(
        Format::Delta,
        "t",
        &table_dir("delta_bad/missing_version"),
        &StorageOptions::default(),
    )
    .await
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(err.contains("version 1") || err.contains("gap"), "{err}");
}

/// A reader feature we do not handle is refused, naming the feature (never
/// read with wrong rows).
#[tokio::test]
async fn unsupported_reader_feature_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("_delta_log");
    std::fs::create_dir_all(&log).unwrap();
    let commit = [
        r#"{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors","fancyNewFeature"],"writerFeatures":["deletionVectors","fancyNewFeature"]}}"#,
        r#"{"metaData":{"id":"5d6f0c4e-0000-4000-8000-000000000001","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":1700000000000}}"#,
    ]
    .join("\n");
    std::fs::write(log.join("00000000000000000000.json"), commit).unwrap();
    let err = formats::open(
        Format::Delta,
        "t",
        dir.path().to_str().unwrap(),
        &StorageOptions::default(),
    )
    .await
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(err.contains("fancyNewFeature"), "{err}");
}

/// `"t$snapshots"` lists every version of the log (item 18 of the SQL/CLI
/// issue), oldest first, each with its operation.
#[tokio::test]
async fn snapshots_list_every_log_version() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let location = table_dir("delta/dated");
    execute_sql(
        &ctx,
        &format!("CREATE EXTERNAL TABLE d STORED AS DELTA LOCATION '{location}'"),
    )
    .await
    .unwrap();
    let ids = |sql: &'static str| {
        let ctx = ctx.clone();
        async move {
            let r = execute_sql(&ctx, sql).await.unwrap();
            r[0].batches
                .iter()
                .flat_map(|b| {
                    b.column(0)
                        .as_any()
                        .downcast_ref::<datafusion::arrow::array::Int64Array>()
                        .unwrap()
                        .values()
                        .to_vec()
                })
                .collect::<Vec<i64>>()
        }
    };
    assert_eq!(
        ids("SELECT snapshot_id FROM \"d$snapshots\" ORDER BY snapshot_id").await,
        vec![0, 1, 2, 3, 4, 5, 6]
    );
    assert_eq!(
        ids("SELECT parent_id FROM \"d$snapshots\" WHERE parent_id IS NOT NULL ORDER BY 1").await,
        vec![0, 1, 2, 3, 4, 5]
    );
    assert_eq!(
        ids("SELECT snapshot_id FROM \"d$snapshots\" WHERE summary LIKE '%DELETE%'").await,
        vec![5]
    );
}

#[tokio::test]
async fn change_data_feed_table() {
    check_table("cdf", &[]).await;
}

/// `table_changes` on a table with `delta.enableChangeDataFeed` reads the
/// `_change_data` files delta-rs wrote: every range returns the rows
/// delta-rs' own `load_cdf` reads (UPDATE_BEFORE / UPDATE_AFTER without
/// identifier columns: the writer said so), also across the column added
/// at version 7, and skipping the OPTIMIZE of version 6.
#[tokio::test]
async fn change_data_feed_is_what_delta_rs_reads() {
    let exp = expected("delta", "cdf");
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let location = table_dir("delta/cdf");
    execute_sql(
        &ctx,
        &format!("CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '{location}'"),
    )
    .await
    .unwrap();
    let ours = |delta: &str| match delta {
        "insert" => "INSERT",
        "delete" => "DELETE",
        "update_preimage" => "UPDATE_BEFORE",
        "update_postimage" => "UPDATE_AFTER",
        other => panic!("change type {other}"),
    };
    for range in exp["changes"].as_array().unwrap() {
        let from = range["from"].as_i64().map_or("NULL".to_string(), |v| v.to_string());
        let to = range["to"].as_i64().unwrap();
        let sql =
            format!("SELECT * FROM table_changes('t', {from}, {to}) ORDER BY _commit_snapshot_id, id, _change_type");
        let r = execute_sql(&ctx, &sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        let schema = r[0].batches[0].schema();
        let got = common::foreign::rows(&r[0].batches);
        // Delta's columns at TO (a column added later is not one of them:
        // load_cdf reads it, all NULL), then ours for theirs.
        let columns: Vec<&str> = range["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let first = range["from"].as_i64().map_or(0, |v| v + 1);
        let want: Vec<Json> = range["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                let row = row.as_array().unwrap();
                let mut out = Vec::new();
                for (c, v) in columns.iter().zip(row) {
                    match *c {
                        "_change_type" => out.push(Json::from(ours(v.as_str().unwrap()))),
                        "_commit_version" => {
                            out.push(Json::from(v.as_i64().unwrap() - first));
                            out.push(v.clone());
                        }
                        c if schema.index_of(c).is_ok() => out.push(v.clone()),
                        c => assert!(
                            v.is_null(),
                            "{sql}: column {c} is not TO's, but delta-rs read {v} in it"
                        ),
                    }
                }
                Json::Array(out)
            })
            .collect();
        assert!(same_rows(&got, &want), "{sql}\n  got  {got:?}\n  want {want:?}");
    }
}

/// Copy directory `from` into `to`, recursively.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Without a change data feed, `table_changes` derives each version's
/// changes from the files its remove and add actions name: the same table
/// with the feed switched off (its `cdc` actions and the property taken out
/// of the log) gives the rows the feed recorded, for every range, with
/// `id` pairing deletes and inserts into updates as the writer typed them.
#[tokio::test]
async fn changes_without_a_feed_come_from_add_and_remove_actions() {
    let copy = tempfile::tempdir().unwrap();
    let plain = copy.path().join("plain");
    copy_dir(&data_dir().join("delta/cdf"), &plain);
    for entry in std::fs::read_dir(plain.join("_delta_log")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: Vec<String> = text
            .lines()
            .filter(|l| !l.starts_with("{\"cdc\""))
            .map(|l| {
                l.replace(
                    "\"delta.enableChangeDataFeed\":\"true\"",
                    "\"delta.enableChangeDataFeed\":\"false\"",
                )
            })
            .collect();
        std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    for (name, location) in [
        ("feed", table_dir("delta/cdf")),
        ("plain", plain.to_str().unwrap().to_string()),
    ] {
        execute_sql(
            &ctx,
            &format!("CREATE EXTERNAL TABLE {name} STORED AS DELTA LOCATION '{location}'"),
        )
        .await
        .unwrap();
    }
    let mut compared = 0;
    for from in ["NULL", "0", "1", "2", "3", "4", "5", "6", "7"] {
        for to in 1..=8 {
            if from != "NULL" && from.parse::<i64>().unwrap() >= to {
                continue;
            }
            let read = |t: &str| {
                format!(
                    "SELECT id, name, _change_type, _change_ordinal, _commit_snapshot_id FROM table_changes('{t}', {from}, {to}, 'id') \
                     ORDER BY _commit_snapshot_id, id, _change_type"
                )
            };
            let rows = |sql: String| {
                let ctx = ctx.clone();
                async move {
                    let r = execute_sql(&ctx, &sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
                    common::foreign::rows(&r[0].batches)
                }
            };
            let want = rows(read("feed")).await;
            let got = rows(read("plain")).await;
            assert!(same_rows(&got, &want), "{from}..{to}\n  got  {got:?}\n  want {want:?}");
            compared += want.len();
        }
    }
    assert!(compared > 20, "the ranges hold changes ({compared} rows compared)");
    // The UPDATE of version 3 reads the files it removed and added, not
    // every file of the table on each side.
    let files = execute_sql(&ctx, "EXPLAIN FILES SELECT * FROM table_changes('plain', 2, 3)")
        .await
        .unwrap();
    let text = pretty_format_batches(&files[0].batches).unwrap().to_string();
    let counts: Vec<(u64, u64)> = text
        .lines()
        .filter_map(|l| {
            l.split('|')
                .nth(3)?
                .trim()
                .split_once('/')
                .map(|(a, b)| (a.parse().ok(), b.parse().ok()))
        })
        .filter_map(|(a, b)| Some((a?, b?)))
        .collect();
    assert_eq!(counts.len(), 2, "two sides: {text}");
    assert!(counts.iter().all(|(read, all)| read < all), "{text}");
}
