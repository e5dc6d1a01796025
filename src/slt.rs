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

use crate::error::Error;
use crate::session;
use crate::sql::execute_sql;

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
}

impl HiddenPartitionsDb {
    pub async fn open(warehouse: &Path) -> crate::error::Result<Self> {
        Ok(Self {
            ctx: session(warehouse).await?,
        })
    }
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
        let results = execute_sql(&self.ctx, sql).await?;
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

/// Run one `.slt` file against a fresh warehouse. Errors carry the file and line.
pub async fn run_file(path: &Path) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("hp-slt-{}", uuid::Uuid::new_v4()));
    let warehouse = dir.join("warehouse");
    let scratch = dir.join("scratch");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let wh = Arc::new(warehouse.clone());
    let mut runner = sqllogictest::Runner::new(move || {
        let wh = Arc::clone(&wh);
        async move { HiddenPartitionsDb::open(&wh).await }
    });
    runner.with_column_validator(|actual, expected| actual == expected);
    runner.set_var("warehouse".to_string(), warehouse.display().to_string());
    runner.set_var("scratch".to_string(), scratch.display().to_string());
    let result = runner
        .run_file_async(path)
        .await
        .map_err(|e| e.display(true).to_string());
    let _ = std::fs::remove_dir_all(&dir);
    result
}
