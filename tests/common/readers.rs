//! What the tests against other engines share: the Python environment
//! with the readers (pyiceberg, DuckDB), the scripts of `tests/interop/`,
//! and rows rendered by `iceberg_read.py`'s rules so ours compare as JSON.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::TimeUnit;
use datafusion::arrow::record_batch::RecordBatch;
use serde_json::{Value, json};

/// The Python interpreter of the reader environment, or `None` (after saying so loudly).
pub fn python(test: &str) -> Option<PathBuf> {
    let python = std::env::var("HP_ICEBERG_PYTHON").ok().filter(|p| !p.is_empty());
    let required = std::env::var("HP_ICEBERG_REQUIRED").is_ok_and(|v| v == "1");
    match python {
        Some(p) => Some(PathBuf::from(p)),
        None if required => panic!(
            "HP_ICEBERG_REQUIRED=1 but HP_ICEBERG_PYTHON is not set: the Iceberg readers (pyiceberg, DuckDB) are missing"
        ),
        None => {
            eprintln!(
                "\n*** SKIPPED {test}: no Iceberg readers (set HP_ICEBERG_PYTHON to a python with \
                 .ci/requirements-iceberg.txt installed, or run .ci/run) ***\n"
            );
            None
        }
    }
}

pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop").join(name)
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

// --- rendering (the rules of iceberg_read.py) --------------------------------------------------

pub fn render_batch(batch: &RecordBatch) -> Vec<Value> {
    let columns: Vec<Vec<Value>> = batch.columns().iter().map(render_array).collect();
    (0..batch.num_rows())
        .map(|row| {
            let object = batch
                .schema()
                .fields()
                .iter()
                .zip(&columns)
                .map(|(f, c)| (f.name().clone(), c[row].clone()))
                .collect();
            Value::Object(object)
        })
        .collect()
}

fn nanos(unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

fn timestamp_text(value: i64, unit: &TimeUnit, zone: bool) -> String {
    let total = value as i128 * nanos(unit) as i128;
    let (secs, frac) = (total.div_euclid(1_000_000_000) as i64, total.rem_euclid(1_000_000_000));
    let t = chrono::DateTime::from_timestamp(secs, 0).unwrap().naive_utc();
    format!(
        "{}.{frac:09}{}",
        t.format("%Y-%m-%dT%H:%M:%S"),
        if zone { "+00:00" } else { "" }
    )
}

fn time_text(value: i64, unit: &TimeUnit) -> String {
    let total = value * nanos(unit);
    let (secs, frac) = (total / 1_000_000_000, total % 1_000_000_000);
    format!("{:02}:{:02}:{:02}.{frac:09}", secs / 3600, secs / 60 % 60, secs % 60)
}

fn float_value(v: f64) -> Value {
    if v.is_nan() {
        json!("NaN")
    } else if v.is_infinite() {
        json!(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(v)
    }
}

fn hex(bytes: &[u8]) -> Value {
    Value::String(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The values of one Arrow array, rendered as `iceberg_read.py` documents.
pub fn render_array(array: &ArrayRef) -> Vec<Value> {
    use datafusion::arrow::datatypes::*;
    let a = array.as_ref();
    let values: Vec<Value> = match a.data_type() {
        DataType::Null => vec![Value::Null; a.len()],
        DataType::Boolean => a.as_boolean().iter().map(|v| json!(v)).collect(),
        DataType::Int8 => a.as_primitive::<Int8Type>().iter().map(|v| json!(v)).collect(),
        DataType::Int16 => a.as_primitive::<Int16Type>().iter().map(|v| json!(v)).collect(),
        DataType::Int32 => a.as_primitive::<Int32Type>().iter().map(|v| json!(v)).collect(),
        DataType::Int64 => a.as_primitive::<Int64Type>().iter().map(|v| json!(v)).collect(),
        DataType::UInt8 => a.as_primitive::<UInt8Type>().iter().map(|v| json!(v)).collect(),
        DataType::UInt16 => a.as_primitive::<UInt16Type>().iter().map(|v| json!(v)).collect(),
        DataType::UInt32 => a.as_primitive::<UInt32Type>().iter().map(|v| json!(v)).collect(),
        DataType::UInt64 => a.as_primitive::<UInt64Type>().iter().map(|v| json!(v)).collect(),
        DataType::Float32 => a
            .as_primitive::<Float32Type>()
            .iter()
            // the shortest decimal that round-trips as f32, as a double
            .map(|v| {
                v.map_or(Value::Null, |v| {
                    float_value(format!("{v}").parse::<f64>().unwrap_or(f64::NAN))
                })
            })
            .collect(),
        DataType::Float64 => a
            .as_primitive::<Float64Type>()
            .iter()
            .map(|v| v.map_or(Value::Null, float_value))
            .collect(),
        DataType::Decimal128(_, _) => {
            let d = a.as_primitive::<Decimal128Type>();
            (0..d.len())
                .map(|i| {
                    if d.is_null(i) {
                        Value::Null
                    } else {
                        json!(d.value_as_string(i))
                    }
                })
                .collect()
        }
        DataType::Date32 => a
            .as_primitive::<Date32Type>()
            .iter()
            .map(|v| {
                v.map_or(Value::Null, |d| {
                    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
                    json!(
                        (epoch + chrono::TimeDelta::days(d as i64))
                            .format("%Y-%m-%d")
                            .to_string()
                    )
                })
            })
            .collect(),
        DataType::Time64(unit) => {
            let ints = datafusion::arrow::compute::cast(a, &DataType::Int64).unwrap();
            ints.as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.map_or(Value::Null, |v| json!(time_text(v, unit))))
                .collect()
        }
        DataType::Timestamp(unit, zone) => {
            let ints = datafusion::arrow::compute::cast(a, &DataType::Int64).unwrap();
            ints.as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.map_or(Value::Null, |v| json!(timestamp_text(v, unit, zone.is_some()))))
                .collect()
        }
        DataType::Utf8 => a.as_string::<i32>().iter().map(|v| json!(v)).collect(),
        DataType::LargeUtf8 => a.as_string::<i64>().iter().map(|v| json!(v)).collect(),
        DataType::Utf8View => a.as_string_view().iter().map(|v| json!(v)).collect(),
        DataType::Binary => a
            .as_binary::<i32>()
            .iter()
            .map(|v| v.map_or(Value::Null, hex))
            .collect(),
        DataType::LargeBinary => a
            .as_binary::<i64>()
            .iter()
            .map(|v| v.map_or(Value::Null, hex))
            .collect(),
        DataType::BinaryView => a.as_binary_view().iter().map(|v| v.map_or(Value::Null, hex)).collect(),
        DataType::FixedSizeBinary(_) => a
            .as_fixed_size_binary()
            .iter()
            .map(|v| v.map_or(Value::Null, hex))
            .collect(),
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let children: Vec<Vec<Value>> = s.columns().iter().map(render_array).collect();
            (0..s.len())
                .map(|i| {
                    Value::Object(
                        fields
                            .iter()
                            .zip(&children)
                            .map(|(f, c)| (f.name().clone(), c[i].clone()))
                            .collect(),
                    )
                })
                .collect()
        }
        DataType::List(_) => {
            let l = a.as_list::<i32>();
            let values = render_array(l.values());
            let offsets = l.value_offsets();
            (0..l.len())
                .map(|i| Value::Array(values[offsets[i] as usize..offsets[i + 1] as usize].to_vec()))
                .collect()
        }
        DataType::LargeList(_) => {
            let l = a.as_list::<i64>();
            let values = render_array(l.values());
            let offsets = l.value_offsets();
            (0..l.len())
                .map(|i| Value::Array(values[offsets[i] as usize..offsets[i + 1] as usize].to_vec()))
                .collect()
        }
        DataType::Map(_, _) => {
            let m = a.as_map();
            let keys = render_array(m.keys());
            let items = render_array(m.values());
            let offsets = m.value_offsets();
            (0..m.len())
                .map(|i| {
                    let (from, to) = (offsets[i] as usize, offsets[i + 1] as usize);
                    Value::Array((from..to).map(|j| json!([keys[j], items[j]])).collect())
                })
                .collect()
        }
        DataType::Dictionary(_, value) => {
            let plain = datafusion::arrow::compute::cast(a, value).unwrap();
            render_array(&plain)
        }
        other => panic!("no rendering for {other}"),
    };
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| if a.is_null(i) { Value::Null } else { v })
        .collect()
}

pub fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_cached_key(|r| r.to_string());
    rows
}

/// Runs `iceberg_read.py --batch` on `reads` in one python process: one
/// result per read, `{"rows", "files"?}` or `{"error"}`.
pub fn read_batch(python: &Path, reads: &[Value]) -> Vec<Value> {
    let dir = tempfile::tempdir().expect("a temp dir");
    let batch = dir.path().join("reads.json");
    std::fs::write(&batch, serde_json::to_vec(reads).expect("JSON")).expect("the read list is written");
    let o = std::process::Command::new(python)
        .arg(script("iceberg_read.py"))
        .arg("--batch")
        .arg(&batch)
        .output()
        .expect("the reader python runs");
    assert!(o.status.success(), "iceberg_read.py failed: {}", text(&o.stderr));
    let results: Vec<Value> = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("iceberg_read.py printed no JSON ({e}): {}", text(&o.stdout)));
    assert_eq!(results.len(), reads.len());
    results
}

/// DuckDB's rows for each of `queries`, run with each of `tables` (name →
/// table directory or metadata file) as a view over `iceberg_scan`; sorted
/// as `iceberg_read.py` sorts them.
pub fn duckdb_rows(python: &Path, tables: &[(&str, String)], queries: &[&str]) -> Vec<Vec<Value>> {
    let tables: serde_json::Map<String, Value> = tables
        .iter()
        .map(|(name, metadata)| (name.to_string(), json!(metadata)))
        .collect();
    let reads: Vec<Value> = queries
        .iter()
        .map(|sql| json!({ "sql": sql, "tables": tables }))
        .collect();
    let results = read_batch(python, &reads);
    results
        .into_iter()
        .zip(queries)
        .map(|(r, sql)| match r.get("rows").and_then(Value::as_array) {
            Some(rows) => rows.clone(),
            None => panic!("DuckDB could not run {sql}: {r}"),
        })
        .collect()
}
