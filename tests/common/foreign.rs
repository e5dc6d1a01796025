//! Running the fixtures' expected queries (tests/data/expected/*.json).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use hidden_partitions::provider::HiddenPartitionsScanExec;
use serde_json::Value as Json;

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

pub fn expected(format: &str, table: &str) -> Json {
    let path = data_dir().join(format!("expected/{format}/{table}.json"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// One cell in the fixtures' JSON encoding.
pub fn cell(array: &dyn Array, i: usize) -> Json {
    let v = ScalarValue::try_from_array(array, i).unwrap();
    if v.is_null() {
        return Json::Null;
    }
    match (array.data_type(), &v) {
        (_, ScalarValue::Boolean(Some(b))) => Json::from(*b),
        (_, ScalarValue::Int8(Some(x))) => Json::from(*x),
        (_, ScalarValue::Int16(Some(x))) => Json::from(*x),
        (_, ScalarValue::Int32(Some(x))) => Json::from(*x),
        (_, ScalarValue::Int64(Some(x))) => Json::from(*x),
        (_, ScalarValue::Float32(Some(x))) => Json::from(*x as f64),
        (_, ScalarValue::Float64(Some(x))) => Json::from(*x),
        (_, ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s))) => {
            Json::from(s.clone())
        }
        (_, ScalarValue::Date32(Some(d))) => {
            let date = chrono::NaiveDate::from_num_days_from_ce_opt(d + 719_163).unwrap();
            Json::from(date.format("%Y-%m-%d").to_string())
        }
        (DataType::Timestamp(TimeUnit::Microsecond, tz), ScalarValue::TimestampMicrosecond(Some(us), _)) => {
            let t = chrono::DateTime::from_timestamp_micros(*us).unwrap().naive_utc();
            let mut s = t.format("%Y-%m-%dT%H:%M:%S").to_string();
            if us.rem_euclid(1_000_000) != 0 {
                s.push_str(&format!(".{:06}", us.rem_euclid(1_000_000)));
            }
            if tz.is_some() {
                s.push_str("+00:00");
            }
            Json::from(s)
        }
        (_, ScalarValue::Decimal128(Some(_), _, _)) => Json::from(v.to_string()),
        _ => Json::from(v.to_string()),
    }
}

pub fn rows(batches: &[RecordBatch]) -> Vec<Json> {
    let mut out = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            out.push(Json::Array(b.columns().iter().map(|c| cell(c.as_ref(), i)).collect()));
        }
    }
    out
}

/// Numbers compare as numbers (1.0 == 1).
pub fn same_rows(a: &[Json], b: &[Json]) -> bool {
    fn eq(x: &Json, y: &Json) -> bool {
        match (x, y) {
            (Json::Number(p), Json::Number(q)) => p.as_f64() == q.as_f64(),
            (Json::Array(p), Json::Array(q)) => p.len() == q.len() && p.iter().zip(q).all(|(a, b)| eq(a, b)),
            _ => x == y,
        }
    }
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| eq(x, y))
}

/// The data files the plan's scans will read, relative to `root`.
pub fn planned_files(plan: &Arc<dyn ExecutionPlan>, root: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    fn walk(plan: &Arc<dyn ExecutionPlan>, root: &str, out: &mut BTreeSet<String>) {
        if let Some(scan) = plan.downcast_ref::<HiddenPartitionsScanExec>()
            && let Some(ds) = scan.inner().downcast_ref::<DataSourceExec>()
            && let Some(config) = ds.data_source().downcast_ref::<FileScanConfig>()
        {
            for g in &config.file_groups {
                for f in g.files() {
                    let p = f.object_meta.location.to_string();
                    let rel = p.strip_prefix(root).unwrap_or(&p).trim_start_matches('/').to_string();
                    out.insert(rel);
                }
            }
        }
        for c in plan.children() {
            walk(c, root, out);
        }
    }
    walk(plan, root, &mut out);
    out
}

/// Run `sql`, returning rows and the files planned.
pub async fn run(ctx: &SessionContext, sql: &str, root: &str) -> (Vec<Json>, BTreeSet<String>) {
    let df = ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let plan = df.create_physical_plan().await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let files = planned_files(&plan, root);
    let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    (rows(&batches), files)
}
