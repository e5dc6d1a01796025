//! What other engines trust in our Iceberg metadata, checked against the data it describes.
//!
//! Readers that filter (pyiceberg, DuckDB, Spark, Trino) skip a whole manifest by its
//! partition summary in the manifest list, and a data file by its partition values and its
//! `lower_bounds` / `upper_bounds` / `null_value_counts` / `value_counts`. A summary or bound
//! that is narrower than the data, or missing where a value is present (readers take a
//! missing bound for "only nulls"), silently drops rows in their hands. For random rows
//! (empty strings, NULL, NaN, `-0.0`, non-ASCII text, pre-1970 times, decimals), random
//! layouts and statement sequences, every manifest list of every snapshot is read back with
//! a plain Avro reader and checked against the manifests' entries, and every data file's
//! metrics against the Parquet file itself:
//!
//! - a partition summary has bounds whenever the manifest holds a value that is neither null
//!   nor NaN, and they enclose every such value (in Iceberg's order: bytes unsigned, `-0.0`
//!   below `0.0`); `contains_null` / `contains_nan` are true exactly when one is there;
//! - a data file's bounds enclose its column's values, its null counts and value counts are
//!   exact, and a column with NaN has no float bounds unless its NaN count says so.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use apache_avro::types::Value as Avro;
use datafusion::arrow::array::{
    Array, AsArray, BinaryArray, Date32Array, Decimal128Array, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Float32Type, Float64Type, Schema, TimeUnit};
use hidden_partitions::{execute_sql, session};
use proptest::prelude::*;
use serde_json::Value;

mod common;

const LAYOUTS: &[&str] = &[
    "PARTITIONED BY (truncate(2, s))",
    "PARTITIONED BY (s, month(ts))",
    "PARTITIONED BY (x, truncate(100, m))",
    "PARTITIONED BY (m, flag)",
    "PARTITIONED BY (flag, hour(ts))",
    "PARTITIONED BY (day(ts), bucket(4, id), truncate(1, s))",
    "PARTITIONED BY (b)",
    "PARTITIONED BY (year(d), truncate(10, id))",
    "",
];

const STRINGS: &[&str] = &[
    "",
    "a",
    "ab",
    "b",
    "beta",
    "é",
    "München",
    "日本語",
    "zz",
    "\u{10000}x",
    "A",
];

#[derive(Debug, Clone)]
struct Row {
    id: Option<i64>,
    ts: Option<i64>,
    s: Option<&'static str>,
    d: Option<i32>,
    x: Option<f64>,
    m: Option<i128>,
    flag: Option<bool>,
    b: Option<&'static str>,
}

fn opt<T: std::fmt::Debug + Clone + 'static>(s: impl Strategy<Value = T> + 'static) -> BoxedStrategy<Option<T>> {
    prop_oneof![1 => Just(None), 5 => s.prop_map(Some)].boxed()
}

fn row() -> impl Strategy<Value = Row> {
    (
        opt(-50i64..50),
        opt(prop_oneof![
            (-40_000_000i64..40_000_000).prop_map(|s| s * 1_000_000 + 7),
            Just(0i64),
            Just(-1i64),
            Just(1_704_067_200_000_000i64),
        ]),
        opt(proptest::sample::select(STRINGS)),
        opt(-800i32..800),
        opt(prop_oneof![
            (-10.0f64..10.0),
            Just(f64::NAN),
            Just(-0.0f64),
            Just(0.0f64),
            Just(f64::INFINITY)
        ]),
        opt(prop_oneof![
            -3000i128..3000,
            Just(0i128),
            Just(-1i128),
            Just(999_999_999_999i128)
        ]),
        opt(any::<bool>()),
        opt(proptest::sample::select(&["", "a", "bb", "ä"][..])),
    )
        .prop_map(|(id, ts, s, d, x, m, flag, b)| Row {
            id,
            ts,
            s,
            d,
            x,
            m,
            flag,
            b,
        })
}

/// A statement after the inserts: each leaves manifests written or rewritten differently.
fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        (-50i64..50).prop_map(|v| format!("DELETE FROM t WHERE id < {v}")),
        proptest::sample::select(STRINGS).prop_map(|s| format!("DELETE FROM t WHERE s = '{s}'")),
        (-50i64..50).prop_map(|v| format!("UPDATE t SET s = '', x = -0.0 WHERE id = {v}")),
        (-50i64..50).prop_map(|v| format!("UPDATE t SET s = NULL, flag = NOT flag WHERE id > {v}")),
        Just("ALTER TABLE t EXECUTE optimize".to_string()),
        Just("ALTER TABLE t SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')".to_string()),
        Just("ALTER TABLE t ADD COLUMN extra VARCHAR".to_string()),
    ]
}

fn batch(rows: &[Row]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Date32, true),
        Field::new("x", DataType::Float64, true),
        Field::new("m", DataType::Decimal128(12, 3), true),
        Field::new("flag", DataType::Boolean, true),
        Field::new("b", DataType::Binary, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(rows.iter().map(|r| r.id).collect::<Vec<_>>())),
            Arc::new(TimestampMicrosecondArray::from(
                rows.iter().map(|r| r.ts).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(rows.iter().map(|r| r.s).collect::<Vec<_>>())),
            Arc::new(Date32Array::from(rows.iter().map(|r| r.d).collect::<Vec<_>>())),
            Arc::new(Float64Array::from(rows.iter().map(|r| r.x).collect::<Vec<_>>())),
            Arc::new(
                Decimal128Array::from(rows.iter().map(|r| r.m).collect::<Vec<_>>())
                    .with_precision_and_scale(12, 3)
                    .unwrap(),
            ),
            Arc::new(datafusion::arrow::array::BooleanArray::from(
                rows.iter().map(|r| r.flag).collect::<Vec<_>>(),
            )),
            Arc::new(BinaryArray::from(
                rows.iter().map(|r| r.b.map(str::as_bytes)).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

// --- values in Iceberg's order ------------------------------------------------------------------

/// A value as Iceberg orders it: integers (and booleans, dates, times, decimals' unscaled
/// values) as numbers, floats in IEEE total order, strings and binaries as unsigned bytes.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Int(i128),
    Float(f64),
    Bytes(Vec<u8>),
}

impl V {
    fn cmp(&self, other: &V) -> Ordering {
        match (self, other) {
            (V::Int(a), V::Int(b)) => a.cmp(b),
            (V::Float(a), V::Float(b)) => a.total_cmp(b),
            (V::Bytes(a), V::Bytes(b)) => a.cmp(b),
            _ => panic!("values of different kinds: {self:?} and {other:?}"),
        }
    }

    fn is_nan(&self) -> bool {
        matches!(self, V::Float(f) if f.is_nan())
    }
}

/// How a bound's bytes decode (Iceberg's single-value serialization).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Int,
    Long,
    Float,
    Double,
    Bytes,
    Boolean,
    Decimal,
}

fn decode(bytes: &[u8], kind: Kind) -> V {
    let fixed = |n: usize| -> [u8; 8] {
        assert_eq!(bytes.len(), n, "a bound of {kind:?} must have {n} bytes: {bytes:?}");
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(bytes);
        b
    };
    match kind {
        Kind::Int => V::Int(i32::from_le_bytes(fixed(4)[..4].try_into().unwrap()) as i128),
        Kind::Long => V::Int(i64::from_le_bytes(fixed(8)) as i128),
        Kind::Float => V::Float(f32::from_le_bytes(fixed(4)[..4].try_into().unwrap()) as f64),
        Kind::Double => V::Float(f64::from_le_bytes(fixed(8))),
        Kind::Boolean => {
            assert_eq!(bytes.len(), 1, "a boolean bound is one byte: {bytes:?}");
            assert!(bytes[0] <= 1, "a boolean bound is 0 or 1: {bytes:?}");
            V::Int(bytes[0] as i128)
        }
        Kind::Bytes => V::Bytes(bytes.to_vec()),
        Kind::Decimal => {
            assert!(!bytes.is_empty() && bytes.len() <= 16, "a decimal bound: {bytes:?}");
            let mut v: i128 = if bytes[0] & 0x80 != 0 { -1 } else { 0 };
            for b in bytes {
                v = (v << 8) | *b as i128;
            }
            V::Int(v)
        }
    }
}

/// A partition value as the manifest's Avro record holds it.
fn avro_value(v: &Avro) -> Option<(V, Kind)> {
    Some(match v {
        Avro::Union(_, inner) => return avro_value(inner),
        Avro::Null => return None,
        Avro::Int(i) | Avro::Date(i) | Avro::TimeMillis(i) => (V::Int(*i as i128), Kind::Int),
        Avro::Long(i) | Avro::TimeMicros(i) | Avro::TimestampMicros(i) | Avro::LocalTimestampMicros(i) => {
            (V::Int(*i as i128), Kind::Long)
        }
        Avro::Float(f) => (V::Float(*f as f64), Kind::Float),
        Avro::Double(f) => (V::Float(*f), Kind::Double),
        Avro::Boolean(b) => (V::Int(*b as i128), Kind::Boolean),
        Avro::String(s) => (V::Bytes(s.as_bytes().to_vec()), Kind::Bytes),
        Avro::Bytes(b) | Avro::Fixed(_, b) => (V::Bytes(b.clone()), Kind::Bytes),
        Avro::Decimal(d) => {
            let bytes: Vec<u8> = d.try_into().unwrap();
            (decode(&bytes, Kind::Decimal), Kind::Decimal)
        }
        other => panic!("unexpected partition value {other:?}"),
    })
}

fn field<'a>(record: &'a Avro, name: &str) -> &'a Avro {
    let Avro::Record(fields) = record else {
        panic!("not a record: {record:?}")
    };
    let v = &fields
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .1;
    match v {
        Avro::Union(_, inner) => inner,
        v => v,
    }
}

fn records(path: &str) -> Vec<Avro> {
    let bytes = std::fs::read(path.strip_prefix("file://").unwrap_or(path)).unwrap();
    apache_avro::Reader::new(&bytes[..])
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

fn int_map(v: &Avro) -> BTreeMap<i32, Avro> {
    match v {
        Avro::Null => BTreeMap::new(),
        Avro::Array(entries) => entries
            .iter()
            .map(|e| {
                let Avro::Int(k) = field(e, "key") else {
                    panic!("key {e:?}")
                };
                (*k, field(e, "value").clone())
            })
            .collect(),
        other => panic!("not a map: {other:?}"),
    }
}

// --- the checks ----------------------------------------------------------------------------------

/// Every manifest list of every snapshot of the table at `table_dir` against its manifests,
/// and every live data file's metrics against the file.
fn check_metadata(table_dir: &std::path::Path, what: &str) {
    let metadata = table_dir.join("metadata");
    let newest = std::fs::read_dir(&metadata)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().to_string();
            let n: u64 = name.strip_prefix('v')?.strip_suffix(".metadata.json")?.parse().ok()?;
            Some((n, name))
        })
        .max()
        .unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(metadata.join(&newest.1)).unwrap()).unwrap();
    let mut checked_files = std::collections::HashSet::new();
    for snapshot in doc["snapshots"].as_array().unwrap() {
        let Some(list) = snapshot["manifest-list"].as_str() else {
            continue;
        };
        for m in records(list) {
            let path = match field(&m, "manifest_path") {
                Avro::String(s) => s.clone(),
                v => panic!("{v:?}"),
            };
            let content = field(&m, "content");
            let entries = records(&path);
            let live: Vec<&Avro> = entries
                .iter()
                .filter(|e| !matches!(field(e, "status"), Avro::Int(2)))
                .collect();
            let where_ = format!("{what}: manifest {path} of snapshot {}", snapshot["snapshot-id"]);
            check_summaries(&m, &live, &where_);
            if matches!(content, Avro::Int(0)) {
                for e in &live {
                    let data_file = field(e, "data_file");
                    let file = match field(data_file, "file_path") {
                        Avro::String(s) => s.clone(),
                        v => panic!("{v:?}"),
                    };
                    if checked_files.insert(file.clone()) {
                        check_data_file(data_file, &file, &where_);
                    }
                }
            }
        }
    }
}

/// The manifest list's summaries of one manifest against its live entries' partition values.
fn check_summaries(list_entry: &Avro, entries: &[&Avro], what: &str) {
    let summaries = match field(list_entry, "partitions") {
        Avro::Array(s) => s.clone(),
        // No summaries: readers keep the manifest, which is always safe.
        Avro::Null => return,
        v => panic!("{what}: partitions {v:?}"),
    };
    for (i, summary) in summaries.iter().enumerate() {
        let mut values = Vec::new();
        let mut nulls = false;
        for e in entries {
            let partition = field(field(e, "data_file"), "partition");
            let Avro::Record(fields) = partition else {
                panic!("{partition:?}")
            };
            match avro_value(&fields[i].1) {
                Some(v) => values.push(v),
                None => nulls = true,
            }
        }
        let what = format!("{what}, partition field {i} ({summary:?}; values {values:?})");
        let contains_null = matches!(field(summary, "contains_null"), Avro::Boolean(true));
        assert_eq!(contains_null, nulls, "{what}: contains_null");
        let nan = values.iter().any(|(v, _)| v.is_nan());
        if let Avro::Boolean(contains_nan) = field(summary, "contains_nan") {
            assert_eq!(*contains_nan, nan, "{what}: contains_nan");
        } else {
            assert!(!nan, "{what}: a NaN without contains_nan");
        }
        let ordered: Vec<&(V, Kind)> = values.iter().filter(|(v, _)| !v.is_nan()).collect();
        let (lower, upper) = (field(summary, "lower_bound"), field(summary, "upper_bound"));
        let Some((_, kind)) = ordered.first() else {
            continue;
        };
        let (Avro::Bytes(lower), Avro::Bytes(upper)) = (lower, upper) else {
            panic!("{what}: a value is present, so both bounds must be (a missing bound reads as only nulls)")
        };
        let (lower, upper) = (decode(lower, *kind), decode(upper, *kind));
        for (v, _) in &ordered {
            assert_ne!(
                lower.cmp(v),
                Ordering::Greater,
                "{what}: lower bound {lower:?} above {v:?}"
            );
            assert_ne!(
                upper.cmp(v),
                Ordering::Less,
                "{what}: upper bound {upper:?} below {v:?}"
            );
        }
    }
}

/// One data file's metrics against the Parquet file: bounds enclose, counts are exact.
fn check_data_file(data_file: &Avro, path: &str, what: &str) {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let what = format!("{what}, data file {path}");
    let file = std::fs::File::open(path.strip_prefix("file://").unwrap_or(path)).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let Avro::Long(record_count) = field(data_file, "record_count") else {
        panic!()
    };
    assert_eq!(*record_count as usize, rows, "{what}: record_count");
    let (lower, upper) = (
        int_map(field(data_file, "lower_bounds")),
        int_map(field(data_file, "upper_bounds")),
    );
    let nulls = int_map(field(data_file, "null_value_counts"));
    let counts = int_map(field(data_file, "value_counts"));
    let nans = int_map(field(data_file, "nan_value_counts"));
    let Some(schema) = batches.first().map(|b| b.schema()) else {
        return;
    };
    for (index, f) in schema.fields().iter().enumerate() {
        let Some(id) = f.metadata().get("PARQUET:field_id").and_then(|v| v.parse::<i32>().ok()) else {
            continue;
        };
        let (values, kind) = column_values(&batches, index, f.data_type());
        let what = format!("{what}, column {} (id {id})", f.name());
        let null_count = values.iter().filter(|v| v.is_none()).count() as i64;
        if let Some(Avro::Long(n)) = nulls.get(&id) {
            assert_eq!(*n, null_count, "{what}: null_value_counts");
        }
        if let Some(Avro::Long(n)) = counts.get(&id) {
            assert_eq!(*n as usize, rows, "{what}: value_counts (nulls included)");
        }
        let present: Vec<&V> = values.iter().flatten().collect();
        let nan_count = present.iter().filter(|v| v.is_nan()).count() as i64;
        if let Some(Avro::Long(n)) = nans.get(&id) {
            assert_eq!(*n, nan_count, "{what}: nan_value_counts");
        }
        let Some(kind) = kind else { continue };
        for (map, is_lower) in [(&lower, true), (&upper, false)] {
            let Some(bound) = map.get(&id) else { continue };
            let Avro::Bytes(bytes) = bound else {
                panic!("{what}: bound {bound:?}")
            };
            let bound = decode(bytes, kind);
            assert!(
                present.iter().any(|v| !v.is_nan()),
                "{what}: a bound {bound:?} for a column without ordered values"
            );
            if nan_count > 0 {
                assert!(
                    nans.contains_key(&id),
                    "{what}: float bounds with NaNs but no NaN count"
                );
            }
            for v in present.iter().filter(|v| !v.is_nan()) {
                let order = bound.cmp(v);
                if is_lower {
                    assert_ne!(order, Ordering::Greater, "{what}: lower bound {bound:?} above {v:?}");
                } else {
                    assert_ne!(order, Ordering::Less, "{what}: upper bound {bound:?} below {v:?}");
                }
            }
        }
    }
}

/// A column's values in Iceberg's order, and how its bounds decode (`None`: no bounds).
fn column_values(batches: &[RecordBatch], index: usize, dt: &DataType) -> (Vec<Option<V>>, Option<Kind>) {
    use datafusion::arrow::datatypes::{Date32Type, Decimal128Type, Int32Type, Int64Type, TimestampMicrosecondType};
    let mut out = Vec::new();
    let kind = match dt {
        DataType::Int32 | DataType::Date32 => Some(Kind::Int),
        DataType::Int64 | DataType::Timestamp(TimeUnit::Microsecond, _) => Some(Kind::Long),
        DataType::Float32 => Some(Kind::Float),
        DataType::Float64 => Some(Kind::Double),
        DataType::Utf8 | DataType::Binary => Some(Kind::Bytes),
        DataType::Boolean => Some(Kind::Boolean),
        DataType::Decimal128(_, _) => Some(Kind::Decimal),
        _ => None,
    };
    for b in batches {
        let a = b.column(index);
        for i in 0..a.len() {
            if a.is_null(i) {
                out.push(None);
                continue;
            }
            out.push(Some(match dt {
                DataType::Int32 => V::Int(a.as_primitive::<Int32Type>().value(i) as i128),
                DataType::Date32 => V::Int(a.as_primitive::<Date32Type>().value(i) as i128),
                DataType::Int64 => V::Int(a.as_primitive::<Int64Type>().value(i) as i128),
                DataType::Timestamp(TimeUnit::Microsecond, _) => {
                    V::Int(a.as_primitive::<TimestampMicrosecondType>().value(i) as i128)
                }
                DataType::Float32 => V::Float(a.as_primitive::<Float32Type>().value(i) as f64),
                DataType::Float64 => V::Float(a.as_primitive::<Float64Type>().value(i)),
                DataType::Utf8 => V::Bytes(a.as_string::<i32>().value(i).as_bytes().to_vec()),
                DataType::Binary => V::Bytes(a.as_binary::<i32>().value(i).to_vec()),
                DataType::Boolean => V::Int(a.as_boolean().value(i) as i128),
                DataType::Decimal128(_, _) => V::Int(a.as_primitive::<Decimal128Type>().value(i)),
                _ => V::Int(0),
            }));
        }
    }
    (out, kind)
}

fn check(layout: usize, chunks: Vec<Vec<Row>>, statements: Vec<String>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ctx = session(dir.path()).await.unwrap();
        let create = format!(
            "CREATE TABLE t (id BIGINT, ts TIMESTAMP, s VARCHAR, d DATE, x DOUBLE, m DECIMAL(12, 3), flag BOOLEAN, b BYTEA) {}",
            LAYOUTS[layout]
        );
        execute_sql(&ctx, &create).await.unwrap();
        for (i, chunk) in chunks.iter().enumerate() {
            ctx.register_batch(&format!("src{i}"), batch(chunk)).unwrap();
            execute_sql(&ctx, &format!("INSERT INTO t SELECT * FROM src{i}"))
                .await
                .unwrap();
        }
        let what = format!("layout {:?}, statements {statements:?}", LAYOUTS[layout]);
        for s in &statements {
            // A statement may be refused (a NaN or a NULL the table cannot take): the
            // metadata must be right either way.
            let _ = execute_sql(&ctx, s).await;
        }
        check_metadata(&dir.path().join("t"), &what);
    });
}

fn cases() -> u32 {
    common::cases::proptest_cases(2)
}

proptest! {
    // HP_PROPTEST_CASES=5000 for a long run; CI runs 100.
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn iceberg_summaries_and_bounds_enclose_the_data(
        layout in 0..LAYOUTS.len(),
        chunks in proptest::collection::vec(proptest::collection::vec(row(), 1..20), 1..4),
        statements in proptest::collection::vec(statement(), 0..4),
    ) {
        check(layout, chunks, statements);
    }
}

/// A row with only an id, the rest NULL.
fn only_id(id: i64) -> Row {
    Row {
        id: Some(id),
        ts: None,
        s: None,
        d: None,
        x: None,
        m: None,
        flag: None,
        b: None,
    }
}

/// The case of the issue that found it: `''` after `truncate` had no bounds, and pyiceberg
/// skipped the manifest for `name = 'beta'`.
#[test]
fn an_empty_string_partition_has_bounds() {
    let rows = vec![
        Row {
            s: Some(""),
            b: Some(""),
            ..only_id(1)
        },
        Row {
            s: Some("beta"),
            ..only_id(2)
        },
        only_id(3),
    ];
    check(0, vec![rows], vec![]);
    check(
        6,
        vec![vec![Row {
            b: Some(""),
            ..only_id(1)
        }]],
        vec![],
    );
}
