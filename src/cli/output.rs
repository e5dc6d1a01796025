//! Printing statement results as a table, CSV or JSON, batch by batch as
//! they arrive: memory stays bounded however many rows a query returns (see
//! [`super::table_text`] for the table format). Variant columns are printed
//! as their JSON text (see [`super::variant_text`]).
//!
//! At a terminal a result prints at most `--maxrows` rows (40 by default, as
//! datafusion-cli does); the rest are counted, not printed, and a last line
//! says how many there were and how to see them all.

use std::io::Write;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::csv::{Writer as CsvWriter, WriterBuilder};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::json::writer::{JsonArray, Writer as JsonWriter, WriterBuilder as JsonWriterBuilder};
use datafusion::arrow::util::display::FormatOptions;
use datafusion::execution::SendableRecordBatchStream;
use futures::StreamExt;

use super::table_text::TableText;
use super::variant_text::{display_batch, display_schema};
use crate::error::{Error, Result};
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

impl OutputFormat {
    /// The name `--format` and `\format` take.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Table => "table",
            OutputFormat::Csv => "csv",
            OutputFormat::Json => "json",
        }
    }
}

impl std::str::FromStr for OutputFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        <Self as clap::ValueEnum>::from_str(s, true)
            .map_err(|_| Error::Invalid(format!("unknown output format `{s}`: expected table, csv or json")))
    }
}

/// How NULL prints in table and CSV output (`--null-value`; JSON prints `null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NullText(pub &'static str);

/// How many rows of a result are printed (`--maxrows`, `\maxrows`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaxRows {
    #[default]
    All,
    Limit(usize),
}

impl MaxRows {
    /// Rows shown at a terminal unless `--maxrows` says otherwise.
    pub const TERMINAL: MaxRows = MaxRows::Limit(40);
}

impl std::str::FromStr for MaxRows {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "all" | "inf" => Ok(MaxRows::All),
            n => n
                .parse()
                .map(MaxRows::Limit)
                .map_err(|_| Error::Invalid(format!("maxrows takes a number of rows or `all`, not `{n}`"))),
        }
    }
}

/// The text of the error a write to a closed pipe (`… | head`) gives: the
/// statements stop, quietly.
pub const OUTPUT_CLOSED: &str = "the output was closed";

/// Whether `e` says the output was closed (no message is printed for it).
pub fn is_output_closed(e: &Error) -> bool {
    matches!(e, Error::Invalid(m) if m == OUTPUT_CLOSED)
}

/// Write one statement's collected result. Statements without columns print nothing.
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
    let mut sink = Sink::new(out, &display_schema(&result.schema), format, null);
    for b in &result.batches {
        sink.write(&display_batch(b)?)?;
    }
    sink.finish()
}

/// Print the rows of `stream` as they arrive, at most `max_rows` of them
/// (the others are counted); returns how many rows the result had.
pub async fn print_stream(
    out: &mut dyn Write,
    mut stream: SendableRecordBatchStream,
    format: OutputFormat,
    null: NullText,
    max_rows: MaxRows,
) -> Result<usize> {
    let schema = stream.schema();
    let limit = match max_rows {
        MaxRows::All => usize::MAX,
        MaxRows::Limit(n) => n,
    };
    let (mut shown, mut total) = (0, 0);
    if schema.fields().is_empty() {
        while let Some(batch) = stream.next().await {
            total += batch?.num_rows();
        }
        return Ok(total);
    }
    let mut sink = Sink::new(out, &display_schema(&schema), format, null);
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        total += batch.num_rows();
        let room = limit - shown;
        if room == 0 || batch.num_rows() == 0 {
            continue;
        }
        let batch = batch.slice(0, batch.num_rows().min(room));
        shown += batch.num_rows();
        sink.write(&display_batch(&batch)?)?;
        sink.flush()?;
    }
    sink.finish()?;
    out.flush().map_err(io)?;
    if total > shown {
        let line = format!(
            "… {} more rows ({total} in all; --maxrows all, or \\maxrows all at the prompt, prints every row)",
            total - shown
        );
        match format {
            OutputFormat::Table => writeln!(out, "{line}").map_err(io)?,
            // The data stays parseable: the note goes to stderr.
            OutputFormat::Csv | OutputFormat::Json => eprintln!("{line}"),
        }
    }
    out.flush().map_err(io)?;
    Ok(total)
}

/// One result being written in one format.
enum Sink<'a> {
    Table(TableText<'a>),
    Csv(CsvWriter<&'a mut dyn Write>),
    Json(JsonWriter<&'a mut dyn Write, JsonArray>),
}

impl<'a> Sink<'a> {
    fn new(out: &'a mut dyn Write, schema: &SchemaRef, format: OutputFormat, null: NullText) -> Self {
        match format {
            OutputFormat::Table => {
                let header = schema.fields().iter().map(|f| f.name().clone()).collect();
                Sink::Table(TableText::new(out, header, FormatOptions::default().with_null(null.0)))
            }
            OutputFormat::Csv => {
                let mut writer = WriterBuilder::new()
                    .with_header(true)
                    .with_null(null.0.to_string())
                    .build(out);
                // The header of an empty result.
                if let Ok(empty) = super::json_values::nested_as_json_text(&RecordBatch::new_empty(schema.clone())) {
                    let _ = writer.write(&empty);
                }
                Sink::Csv(writer)
            }
            OutputFormat::Json => Sink::Json(
                JsonWriterBuilder::new()
                    .with_explicit_nulls(true)
                    .with_encoder_factory(super::json_values::factory())
                    .build::<_, JsonArray>(out),
            ),
        }
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        match self {
            Sink::Table(t) => t.write(batch),
            Sink::Csv(w) => Ok(w
                .write(&super::json_values::nested_as_json_text(batch)?)
                .map_err(arrow_io)?),
            Sink::Json(writer) => Ok(writer.write(batch).map_err(arrow_io)?),
        }
    }

    fn flush(&mut self) -> Result<()> {
        match self {
            Sink::Table(_) => Ok(()),
            // arrow's CSV writer keeps its own buffer and offers no flush:
            // its rows reach `out` as that buffer fills, and at the end.
            Sink::Csv(_) => Ok(()),
            Sink::Json(writer) => writer.get_mut().flush().map_err(io),
        }
    }

    fn finish(self) -> Result<()> {
        match self {
            Sink::Table(t) => t.finish(),
            Sink::Csv(w) => w.into_inner().flush().map_err(io),
            Sink::Json(mut writer) => {
                // An empty result is `[]` too: arrow opens the array at the end.
                writer.finish().map_err(arrow_io)?;
                writeln!(writer.into_inner()).map_err(io)
            }
        }
    }
}

/// An output error: a closed pipe quietly ends the statements.
pub(crate) fn io(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Error::Invalid(OUTPUT_CLOSED.to_string())
    } else {
        Error::Invalid(format!("cannot write output: {e}"))
    }
}

/// Arrow's writers wrap the output's errors.
fn arrow_io(e: datafusion::arrow::error::ArrowError) -> Error {
    match e {
        datafusion::arrow::error::ArrowError::IoError(_, inner) => io(inner),
        datafusion::arrow::error::ArrowError::ExternalError(inner) => match inner.downcast::<std::io::Error>() {
            Ok(inner) => io(*inner),
            Err(other) => Error::Arrow(datafusion::arrow::error::ArrowError::ExternalError(other)),
        },
        other => Error::Arrow(other),
    }
}
