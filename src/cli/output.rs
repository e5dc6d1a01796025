//! Printing statement results as a table, CSV or JSON. Variant columns are
//! printed as their JSON text (see [`super::variant_text`]).

use std::io::Write;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::csv::WriterBuilder;
use datafusion::arrow::json::writer::{JsonArray, WriterBuilder as JsonWriterBuilder};
use datafusion::arrow::util::display::FormatOptions;
use datafusion::arrow::util::pretty::pretty_format_batches_with_options;

use super::variant_text::{display_batch, display_schema};
use crate::error::Result;
use crate::sql::StatementResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// Boxed table, as datafusion-cli prints it
    #[default]
    Table,
    /// Header line then rows; NULL is an empty field (see --null-value);
    /// lists, structs and maps as JSON text
    Csv,
    /// One JSON array of objects per statement, every key in every row
    Json,
}

/// How NULL prints in table and CSV output (`--null-value`; JSON prints `null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NullText(pub &'static str);

/// Write one statement's result. Statements without columns print nothing.
pub fn write_result(out: &mut dyn Write, result: &StatementResult, format: OutputFormat) -> Result<()> {
    write_result_with(out, result, format, NullText::default())
}

/// [`write_result`] with NULL printed as `null` in table and CSV output.
pub fn write_result_with(
    out: &mut dyn Write,
    result: &StatementResult,
    format: OutputFormat,
    null: NullText,
) -> Result<()> {
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
            let options = FormatOptions::default().with_null(null.0);
            writeln!(out, "{}", pretty_format_batches_with_options(&batches, &options)?).map_err(io)?;
        }
        OutputFormat::Csv => {
            let mut writer = WriterBuilder::new()
                .with_header(true)
                .with_null(null.0.to_string())
                .build(&mut *out);
            for b in &batches {
                writer.write(&super::json_values::nested_as_json_text(b)?)?;
            }
        }
        OutputFormat::Json => {
            let mut buf = Vec::new();
            {
                let mut writer = JsonWriterBuilder::new()
                    .with_explicit_nulls(true)
                    .with_encoder_factory(super::json_values::factory())
                    .build::<_, JsonArray>(&mut buf);
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
