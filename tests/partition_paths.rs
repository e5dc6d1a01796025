//! Partition values through a real local directory: the directories created
//! are the Hive-escaped serialized values (seed 000), and every value reads
//! back exactly through SQL.

use std::collections::BTreeSet;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use hidden_partitions::{execute_sql, session};

/// (value as SQL, directory expected on disk)
const CASES: &[(&str, &str)] = &[
    ("'a{b'", "s=a%7Bb"),
    ("'a}b'", "s=a}b"),
    ("'Serbia/srb%'", "s=Serbia%2Fsrb%25"),
    ("'100%25'", "s=100%2525"),
    ("'hello world'", "s=hello world"),
    ("'München'", "s=München"),
    ("'日本語'", "s=日本語"),
    ("'🎵🎶'", "s=🎵🎶"),
    ("'a<b>c|d'", "s=a<b>c|d"),
    ("'a@b!c(d)'", "s=a@b!c(d)"),
    ("'a&b+c$d;e,f'", "s=a&b+c$d;e,f"),
    ("' '", "s= "),
    ("'  '", "s=  "),
    ("'x:y=z?#*'", "s=x%3Ay%3Dz%3F%23%2A"),
    ("''", "s=__HIVE_DEFAULT_PARTITION__"),
    ("NULL", "s=__HIVE_DEFAULT_PARTITION__"),
];

fn dirs(root: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect()
}

#[tokio::test]
async fn tricky_strings_make_exact_directories_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(&ctx, "CREATE TABLE p (id BIGINT, s VARCHAR) PARTITIONED BY (s)")
        .await
        .unwrap();
    let values: Vec<String> = CASES
        .iter()
        .enumerate()
        .map(|(i, (v, _))| format!("({i}, {v})"))
        .collect();
    execute_sql(&ctx, &format!("INSERT INTO p VALUES {}", values.join(", ")))
        .await
        .unwrap();

    let expected: BTreeSet<String> = CASES.iter().map(|(_, d)| d.to_string()).collect();
    assert_eq!(dirs(&dir.path().join("p").join("data")), expected);

    for (i, (value, _)) in CASES.iter().enumerate() {
        let cond = if *value == "NULL" {
            "s IS NULL".to_string()
        } else {
            format!("s = {value}")
        };
        let r = execute_sql(&ctx, &format!("SELECT id FROM p WHERE {cond}"))
            .await
            .unwrap();
        let ids: Vec<i64> = r[0]
            .batches
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
            .collect();
        assert_eq!(ids, vec![i as i64], "{value}");
    }
    // Values come back byte for byte (NULL stays NULL, '' stays '').
    let r = execute_sql(&ctx, "SELECT count(*) FROM p WHERE s IS NULL")
        .await
        .unwrap();
    assert_eq!(r[0].batches[0].column(0).as_primitive::<Int64Type>().value(0), 1);
}

#[tokio::test]
async fn nul_bytes_fail_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(&ctx, "CREATE TABLE p (s VARCHAR, b BYTEA) PARTITIONED BY (s, b)")
        .await
        .unwrap();
    for bad in [
        "(chr(0), NULL)",
        "(concat('before', chr(0), 'after'), NULL)",
        "('x', X'00FF')",
    ] {
        let err = execute_sql(&ctx, &format!("INSERT INTO p VALUES {bad}"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("NUL"), "{bad}: {err}");
    }
    let err = execute_sql(&ctx, "INSERT INTO p VALUES ('x', X'DEADBEEF')")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("UTF-8"), "{err}");
    assert!(!dir.path().join("p").join("data").exists() || dirs(&dir.path().join("p").join("data")).is_empty());
    let r = execute_sql(&ctx, "SELECT count(*) FROM p").await.unwrap();
    assert_eq!(r[0].batches[0].column(0).as_primitive::<Int64Type>().value(0), 0);
}

#[tokio::test]
async fn temporal_partitions_use_human_readable_directories() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        // One time transform per column (Iceberg's rule), so four columns.
        "CREATE TABLE t (y TIMESTAMP, m TIMESTAMP, d TIMESTAMP, ts TIMESTAMP)
           PARTITIONED BY (year(y), month(m), day(d), hour(ts));
         INSERT INTO t VALUES (TIMESTAMP '1969-12-31 23:59:59.999999', TIMESTAMP '1969-12-31 23:59:59.999999',
           TIMESTAMP '1969-12-31 23:59:59.999999', TIMESTAMP '1969-12-31 23:59:59.999999')",
    )
    .await
    .unwrap();
    let root = dir.path().join("t").join("data");
    let path = root
        .join("y_year=1969")
        .join("m_month=1969-12")
        .join("d_day=1969-12-31")
        .join("ts_hour=1969-12-31-23");
    assert!(path.is_dir(), "{:?}", dirs(&root));
}
