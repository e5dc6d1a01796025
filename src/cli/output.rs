//! Printing statement results as a table, CSV or JSON. Variant columns are
//! printed as their JSON text (see [`super::variant_text`]).

use std::io::Write;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::csv::WriterBuilder;
use datafusion::arrow::json::ArrayWriter;
use datafusion::arrow::util::pretty::pretty_format_batches;

use super::variant_text::{display_batch, display_schema};
use crate::error::Result;
use crate::sql::StatementResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// Boxed table, as datafusion-cli prints it
    #[default]
    Table,
    /// Header line then rows; NULL is an empty field
    Csv,
    /// One JSON array of objects per statement
    Json,
}

/// Write one statement's result. Statements without columns print nothing.
pub fn write_result(out: &mut dyn Write, result: &StatementResult, format: OutputFormat) -> Result<()> {
    if result.schema.fields().is_empty() {
        return Ok(());
    }
    let batches = if result.batches.is_empty() {
        // An empty result still prints its header.
        vec![RecordBatch::new_empty(display_schema(&result.schema))]
    } else {
        result.batches.iter().map(display_batch).collect::<Result<Vec<_>>>()?
    };
    match format {
        OutputFormat::Table => {
            writeln!(out, "{}", pretty_format_batches(&batches)?).map_err(io)?;
        }
        OutputFormat::Csv => {
            let mut writer = WriterBuilder::new().with_header(true).build(&mut *out);
            for b in &batches {
                writer.write(b)?;
            }
        }
        OutputFormat::Json => {
            let mut buf = Vec::new();
            {
                let mut writer = ArrayWriter::new(&mut buf);
                for b in &batches {
                    writer.write(b)?;
                }
                writer.finish()?;
            }
            if buf.is_empty() {
                buf.extend_from_slice(b"[]");
            }
            out.write_all(&buf).map_err(io)?;
            writeln!(out).map_err(io)?;
        }
    }
    Ok(())
}

fn io(e: std::io::Error) -> crate::error::Error {
    crate::error::Error::Invalid(format!("cannot write output: {e}"))
}
