//! A sqllogictest driver for hidden-partitions sessions.
//!
//! Every `.slt` file runs against a fresh warehouse in a temporary directory;
//! with `control substitution on`, `$warehouse` names that directory and
//! `$scratch` a second empty one (for `LOCATION` and `COPY` targets).
//!
//! Column type letters: `B` boolean, `I` integer, `R` float/decimal, `T`
//! text, `D` date/time, `P` timestamp, `?` anything else. NULL prints as
//! `NULL`, the empty string as `(empty)`. `EXPLAIN` output is printed like
//! DataFusion's own tests do: `logical_plan`, then `01)Projection: …`,
//! `02)--TableScan: …` (indentation as dashes).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{Array, ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;
use sqllogictest::{ColumnType, DBOutput};

use crate::catalog::Warehouse;
use crate::error::Error;
use crate::session::{session, session_with};
use crate::sql::execute_sql;
use crate::store::connect::StorageOptions;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SltType {
    Boolean,
    Integer,
    Float,
    Text,
    DateTime,
    Timestamp,
    Other,
}

impl ColumnType for SltType {
    fn from_char(c: char) -> Option<Self> {
        Some(match c {
            'B' => Self::Boolean,
            'I' => Self::Integer,
            'R' => Self::Float,
            'T' => Self::Text,
            'D' => Self::DateTime,
            'P' => Self::Timestamp,
            '?' => Self::Other,
            _ => return None,
        })
    }

    fn to_char(&self) -> char {
        match self {
            Self::Boolean => 'B',
            Self::Integer => 'I',
            Self::Float => 'R',
            Self::Text => 'T',
            Self::DateTime => 'D',
            Self::Timestamp => 'P',
            Self::Other => '?',
        }
    }
}

fn slt_type(dt: &DataType) -> SltType {
    match dt {
        DataType::Boolean => SltType::Boolean,
        d if d.is_integer() => SltType::Integer,
        d if d.is_floating() => SltType::Float,
        DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..) => {
            SltType::Float
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => SltType::Text,
        DataType::Date32 | DataType::Date64 | DataType::Time32(_) | DataType::Time64(_) => SltType::DateTime,
        DataType::Timestamp(..) => SltType::Timestamp,
        _ => SltType::Other,
    }
}

/// A connection: one session on the file's warehouse.
pub struct HiddenPartitionsDb {
    ctx: SessionContext,
    /// Statements run on a Ballista cluster: `EXPLAIN` reports only the
    /// scans and their `files=` (see [`run_file_on_ballista`]).
    on_ballista: bool,
    /// A local session on the same warehouse (for what a cluster cannot run).
    #[cfg_attr(not(feature = "ballista"), allow(dead_code))]
    local: Option<SessionContext>,
}

impl HiddenPartitionsDb {
    pub async fn open(warehouse: &Path) -> crate::error::Result<Self> {
        Ok(Self {
            ctx: session(warehouse).await?,
            on_ballista: false,
            local: None,
        })
    }

    /// A session on a warehouse at a URL (e.g. on the test S3 server).
    pub async fn open_at(warehouse: &str, options: StorageOptions) -> crate::error::Result<Self> {
        Ok(Self {
            ctx: session_with(Warehouse::open(warehouse, options)?).await?,
            on_ballista: false,
            local: None,
        })
    }

    /// A local session, or one on an in-process Ballista cluster, or a local
    /// one whose new tables delete, update and merge merge-on-read.
    async fn open_for(warehouse: &Path, mode: RunMode) -> crate::error::Result<Self> {
        match mode {
            #[cfg(feature = "ballista")]
            RunMode::Ballista => Self::open_on_ballista(warehouse).await,
            #[cfg(not(feature = "ballista"))]
            RunMode::Ballista => Self::open(warehouse).await,
            RunMode::Local => Self::open(warehouse).await,
            RunMode::MergeOnRead => {
                let db = Self::open(warehouse).await?;
                crate::execute_sql(
                    &db.ctx,
                    "SET hidden_partitions.table_defaults = 'write.delete.mode=merge-on-read,write.update.mode=merge-on-read,write.merge.mode=merge-on-read'",
                )
                .await?;
                Ok(db)
            }
        }
    }

    /// A session on an in-process Ballista cluster (two task slots).
    #[cfg(feature = "ballista")]
    pub async fn open_on_ballista(warehouse: &Path) -> crate::error::Result<Self> {
        Ok(Self {
            ctx: crate::ballista::standalone(Warehouse::local(warehouse)?, 2).await?,
            on_ballista: true,
            local: Some(session(warehouse).await?),
        })
    }
}

/// The S3-compatible test server, from the environment: `HP_S3_ENDPOINT`
/// (e.g. `http://127.0.0.1:9123`) and `HP_S3_BUCKET` (default `hp-test`,
/// which must exist). `.ci/run` starts one (moto, see `.ci/s3_server.py`).
#[derive(Debug, Clone)]
pub struct S3Server {
    pub endpoint: String,
    pub bucket: String,
}

impl S3Server {
    /// `Ok(None)` when no server is configured; an error when one is
    /// required (`HP_S3_REQUIRED=1`, as in CI) but missing.
    pub fn from_env() -> Result<Option<Self>, String> {
        let endpoint = std::env::var("HP_S3_ENDPOINT").ok().filter(|e| !e.is_empty());
        let required = std::env::var("HP_S3_REQUIRED").is_ok_and(|v| v == "1");
        match endpoint {
            Some(endpoint) => Ok(Some(Self {
                endpoint,
                bucket: std::env::var("HP_S3_BUCKET").unwrap_or_else(|_| "hp-test".to_string()),
            })),
            None if required => {
                Err("HP_S3_REQUIRED=1 but HP_S3_ENDPOINT is not set: the S3 test server is missing".into())
            }
            None => Ok(None),
        }
    }

    /// Storage options that reach the server (any keys are accepted by it).
    pub fn options(&self) -> StorageOptions {
        StorageOptions::new()
            .with("aws_endpoint", &self.endpoint)
            .with("aws_allow_http", "true")
            .with("aws_region", "us-east-1")
            .with("aws_access_key_id", "hp-test-key")
            .with("aws_secret_access_key", "hp-test-secret")
    }

    /// The same as `--storage-option` arguments for the command line.
    pub fn cli_args(&self) -> Vec<String> {
        self.options()
            .iter()
            .flat_map(|(k, v)| ["--storage-option".to_string(), format!("{k}={v}")])
            .collect()
    }

    /// A fresh prefix for one test: `s3://<bucket>/<name>-<uuid>`.
    pub fn prefix(&self, name: &str) -> String {
        format!("s3://{}/{name}-{}", self.bucket, uuid::Uuid::new_v4())
    }

    /// A fresh prefix in the server's second bucket, `<bucket>-other`
    /// (created by `.ci/s3_server.py` beside the first).
    pub fn other_bucket_prefix(&self, name: &str) -> String {
        format!("s3://{}-other/{name}-{}", self.bucket, uuid::Uuid::new_v4())
    }
}

/// Say loudly that a test did not run for lack of the S3 server.
pub fn skipped_without_s3(what: &str) {
    eprintln!("\n*** SKIPPED {what}: no S3 test server (set HP_S3_ENDPOINT, or run .ci/run) ***\n");
}

fn format_cell(array: &ArrayRef, row: usize, formatter: &ArrayFormatter) -> String {
    if array.is_null(row) {
        return "NULL".to_string();
    }
    let s = formatter.value(row).to_string();
    if s.is_empty() { "(empty)".to_string() } else { s }
}

fn rows_of(batches: &[RecordBatch]) -> crate::error::Result<Vec<Vec<String>>> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for r in 0..batch.num_rows() {
            rows.push(
                batch
                    .columns()
                    .iter()
                    .zip(&formatters)
                    .map(|(c, f)| format_cell(c, r, f))
                    .collect(),
            );
        }
    }
    Ok(rows)
}

#[async_trait]
impl sqllogictest::AsyncDB for HiddenPartitionsDb {
    type Error = Error;
    type ColumnType = SltType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<SltType>, Error> {
        if self.on_ballista
            && let Some(query) = explained_query(sql)
        {
            return self.scans_on_cluster(query).await;
        }
        let results = match execute_sql(&self.ctx, sql).await {
            Ok(results) => results,
            Err(e) if self.on_ballista => return self.run_elsewhere(sql, e).await,
            Err(e) => return Err(e),
        };
        let Some(last) = results.last() else {
            return Ok(DBOutput::StatementComplete(0));
        };
        if last.schema.fields().is_empty() {
            return Ok(DBOutput::StatementComplete(0));
        }
        let types = last.schema.fields().iter().map(|f| slt_type(f.data_type())).collect();
        let mut rows = rows_of(&last.batches)?;
        let names: Vec<&str> = last.schema.fields().iter().map(|f| f.name().as_str()).collect();
        if names == ["plan_type", "plan"] {
            rows = plan_rows(rows);
        }
        Ok(DBOutput::Rows { types, rows })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "hidden-partitions"
    }
}

/// Rows that stand for the scans of a plan run on a cluster.
const SCANS: &str = "scans on the cluster: ";

/// The query of `EXPLAIN <query>` (not `EXPLAIN ANALYZE`).
fn explained_query(sql: &str) -> Option<&str> {
    let trimmed = sql.trim_start();
    let head = trimmed.get(..8)?;
    if !head.eq_ignore_ascii_case("explain ") {
        return None;
    }
    let rest = trimmed[8..].trim_start();
    let word = |w: &str| rest.get(..w.len()).is_some_and(|h| h.eq_ignore_ascii_case(w));
    // EXPLAIN FILES is ours and runs where it is asked.
    (!word("analyze ") && !word("files ")).then_some(rest)
}

/// `HiddenPartitionsScan: table=t, files=3/40` of every scan in a plan's
/// text, sorted (a cluster lists a plan stage by stage).
pub fn scan_descriptions<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    const START: &str = "HiddenPartitionsScan: table=";
    let mut out = Vec::new();
    for line in lines {
        let mut rest = line;
        while let Some(i) = rest.find(START) {
            let scan = &rest[i..];
            let end = [", runtime_filters=", ", join_keys=", ", parquet:", ", metrics="]
                .iter()
                .filter_map(|m| scan.find(m))
                .min()
                .unwrap_or(scan.len());
            out.push(scan[..end].trim().to_string());
            rest = &scan[end..];
        }
    }
    out.sort();
    out
}

impl HiddenPartitionsDb {
    /// A statement the cluster refused. Table functions (`generate_series`)
    /// cannot be sent to a cluster: such a statement runs in a local session
    /// on the same warehouse; any other error is reported as the task wrote it.
    #[cfg(feature = "ballista")]
    async fn run_elsewhere(&mut self, sql: &str, e: Error) -> Result<DBOutput<SltType>, Error> {
        let text = e.to_string();
        if !text.contains("Error serializing custom table") {
            return Err(Error::Invalid(crate::ballista::readable_cluster_error(&text)));
        }
        let Some(local) = &self.local else {
            return Err(e);
        };
        let local = HiddenPartitionsDb {
            ctx: local.clone(),
            on_ballista: false,
            local: None,
        };
        let mut local = local;
        sqllogictest::AsyncDB::run(&mut local, sql).await
    }

    #[cfg(not(feature = "ballista"))]
    async fn run_elsewhere(&mut self, _sql: &str, e: Error) -> Result<DBOutput<SltType>, Error> {
        Err(e)
    }

    /// Run `query` on the cluster (as `EXPLAIN ANALYZE`, whose plan is the
    /// one the scheduler made) and report its scans.
    async fn scans_on_cluster(&self, query: &str) -> Result<DBOutput<SltType>, Error> {
        let results = execute_sql(&self.ctx, &format!("EXPLAIN ANALYZE {query}")).await?;
        let rows = results
            .last()
            .map(|r| rows_of(&r.batches))
            .transpose()?
            .unwrap_or_default();
        let text: Vec<&str> = rows.iter().flatten().flat_map(|c| c.lines()).collect();
        let scans = scan_descriptions(text);
        Ok(DBOutput::Rows {
            types: vec![SltType::Text, SltType::Text],
            rows: vec![vec![format!("{SCANS}{}", scans.join(" | "))]],
        })
    }
}

#[cfg(feature = "ballista")]
/// Compare as usual, except for the scans of a cluster run, which must
/// equal the scans of the expected (local) plan.
fn validate_on_cluster(normalizer: sqllogictest::Normalizer, actual: &[Vec<String>], expected: &[String]) -> bool {
    if let [row] = actual
        && let Some(first) = row.first()
        && let Some(scans) = first.strip_prefix(SCANS)
    {
        let expected = scan_descriptions(expected.iter().map(String::as_str));
        // A logical plan alone shows no scan to compare.
        return expected.is_empty() || scans == expected.join(" | ");
    }
    sqllogictest::default_validator(normalizer, actual, expected)
}

/// Run one `.slt` file on an in-process Ballista cluster over a fresh local
/// warehouse: rows must be the same as in a local session, and each
/// `EXPLAIN` must show the same scans with the same `files=S/T` (the rest
/// of the plan differs on a cluster). Records marked `skipif ballista`
/// are left out.
#[cfg(feature = "ballista")]
pub async fn run_file_on_ballista(path: &Path) -> Result<(), String> {
    run_on_temp_warehouse(path, RunMode::Ballista).await
}

/// Run one `.slt` file in a local session whose tables are created with
/// `write.delete.mode`, `write.update.mode` and `write.merge.mode` =
/// `merge-on-read` (the session's table defaults), so DELETE, UPDATE and
/// MERGE write position delete files. Records marked `skipif
/// merge-on-read` are left out, `onlyif merge-on-read` ones run.
pub async fn run_file_merge_on_read(path: &Path) -> Result<(), String> {
    run_on_temp_warehouse(path, RunMode::MergeOnRead).await
}

/// Where and how a file runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunMode {
    Local,
    #[cfg_attr(not(feature = "ballista"), allow(dead_code))]
    Ballista,
    MergeOnRead,
}

/// EXPLAIN output as DataFusion's own sqllogictests print it: the plan type
/// on a line, then each plan line numbered, with indentation shown as `-`.
fn plan_rows(rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for row in rows {
        let [plan_type, plan] = <[String; 2]>::try_from(row).unwrap_or_default();
        out.push(vec![plan_type]);
        for (i, line) in plan.lines().filter(|l| !l.trim().is_empty()).enumerate() {
            let body = line.trim_start();
            let indent = "-".repeat(line.len() - body.len());
            out.push(vec![format!("{:02}){indent}{body}", i + 1)]);
        }
    }
    out
}

/// Collect `.slt` files from files and directories (recursively, sorted).
pub fn collect_files(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            let (dirs, files): (Vec<_>, Vec<_>) = entries.into_iter().partition(|e| e.is_dir());
            out.extend(files.into_iter().filter(|f| f.extension().is_some_and(|e| e == "slt")));
            out.extend(collect_files(&dirs)?);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Run one `.slt` file against a fresh local warehouse. Errors carry the file and line.
pub async fn run_file(path: &Path) -> Result<(), String> {
    run_on_temp_warehouse(path, RunMode::Local).await
}

/// Run `path` on a warehouse in a new temporary directory, in a local
/// session or on an in-process Ballista cluster.
async fn run_on_temp_warehouse(path: &Path, mode: RunMode) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("hp-slt-{}", uuid::Uuid::new_v4()));
    let warehouse = dir.join("warehouse");
    let scratch = dir.join("scratch");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let wh = Arc::new(warehouse.clone());
    let mut runner = sqllogictest::Runner::new(move || {
        let wh = Arc::clone(&wh);
        async move { HiddenPartitionsDb::open_for(&wh, mode).await }
    });
    runner.with_column_validator(|actual, expected| actual == expected);
    if mode == RunMode::MergeOnRead {
        runner.add_label("merge-on-read");
    }
    #[cfg(feature = "ballista")]
    if mode == RunMode::Ballista {
        runner.add_label("ballista");
        runner.with_validator(validate_on_cluster);
    }
    runner.set_var("warehouse".to_string(), warehouse.display().to_string());
    runner.set_var("scratch".to_string(), scratch.display().to_string());
    let result = runner
        .run_file_async(path)
        .await
        .map_err(|e| e.display(true).to_string());
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Run one `.slt` file against a fresh warehouse on the S3 server: records
/// marked `skipif s3` are left out, `onlyif s3` ones run.
pub async fn run_file_on_s3(path: &Path, server: &S3Server) -> Result<(), String> {
    let base = server.prefix("slt");
    let warehouse = format!("{base}/warehouse");
    let scratch = format!("{base}/scratch");
    let (wh, options) = (warehouse.clone(), server.options());
    let mut runner = sqllogictest::Runner::new(move || {
        let (wh, options) = (wh.clone(), options.clone());
        async move { HiddenPartitionsDb::open_at(&wh, options).await }
    });
    runner.add_label("s3");
    runner.with_column_validator(|actual, expected| actual == expected);
    runner.set_var("warehouse".to_string(), warehouse);
    runner.set_var("scratch".to_string(), scratch);
    runner
        .run_file_async(path)
        .await
        .map_err(|e| e.display(true).to_string())
}
