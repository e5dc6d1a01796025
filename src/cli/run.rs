//! Running SQL text statement by statement, as `-c`, `-f` and the prompt do:
//! each statement is parsed and run in turn and its result printed as soon
//! as it has run, so the output of the statements before a failing one
//! (a syntax error included) is kept, and nothing after it runs.

use std::io::{BufWriter, Write};
use std::time::Instant;

use datafusion::prelude::SessionContext;

use super::output::{MaxRows, NullText, OutputFormat, is_output_closed, print_stream};
use super::progress::Progress;
use crate::error::{Error, Result};
use crate::optimizer::stop_on_cancel::is_cancelled;
use crate::sql::{Statement, execute_statement_stream, parse_each};

/// How results are printed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Printing {
    pub format: OutputFormat,
    /// Print `Elapsed 0.012 s` after each statement (the prompt's `\timing`).
    pub timing: bool,
    /// How NULL prints in table and CSV output.
    pub null: NullText,
    /// Rows printed per result (`--maxrows`).
    pub max_rows: MaxRows,
}

/// Run the statements of `sql` in order, printing results on stdout and the
/// first error as `Error: …` on stderr. Returns whether all of them succeeded.
pub async fn run_sql(ctx: &SessionContext, sql: &str, printing: Printing) -> bool {
    run_script(ctx, sql, None, printing).await
}

/// [`run_sql`] for the text of a file (`-f FILE`, `\i FILE`): the error
/// says where, psql's way: `FILE:LINE: Error: …`, the line where the
/// failing statement starts.
pub async fn run_file(ctx: &SessionContext, file: &str, sql: &str, printing: Printing) -> bool {
    run_script(ctx, sql, Some(file), printing).await
}

async fn run_script(ctx: &SessionContext, sql: &str, file: Option<&str>, printing: Printing) -> bool {
    match run(ctx, sql, printing).await {
        Ok(()) => true,
        Err((_, e)) if is_output_closed(&e) || is_cancelled(&e) => false,
        Err((line, e)) => {
            match file {
                Some(file) => eprintln!("{file}:{line}: Error: {}", error_text(&e)),
                None => eprintln!("Error: {}", error_text(&e)),
            }
            false
        }
    }
}

/// An error as printed: with what to do about it when a cluster lacks our codecs.
pub fn error_text(e: &crate::error::Error) -> String {
    let text = e.to_string();
    #[cfg(feature = "ballista")]
    let text = match crate::ballista::explain_cluster_error(&text) {
        Some(hint) => format!("{text}\n{hint}"),
        None => crate::ballista::readable_cluster_error(&text),
    };
    text
}

/// Run the statements in turn; the first error stops them, with the line
/// where its statement starts.
async fn run(ctx: &SessionContext, sql: &str, printing: Printing) -> std::result::Result<(), (u64, Error)> {
    for (line, statement) in parse_each(sql) {
        run_one(ctx, statement, printing).await.map_err(|e| (line, e))?;
    }
    Ok(())
}

async fn run_one(ctx: &SessionContext, statement: Result<Statement>, printing: Printing) -> Result<()> {
    let statement = statement?;
    let started = Instant::now();
    let progress = Progress::start();
    let cancel = super::interrupt::start_statement();
    let stream = execute_statement_stream(ctx, statement, &cancel).await?;
    // Writes are done once the stream is here; what follows is printing.
    progress.finish();
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout());
    print_stream(&mut out, stream, printing.format, printing.null, printing.max_rows).await?;
    if printing.timing {
        print_elapsed(&mut out, started);
    }
    out.flush().map_err(super::output::io)
}

/// `Elapsed 0.012 s`, for `\timing on`.
pub fn print_elapsed(out: &mut dyn Write, started: Instant) {
    let _ = writeln!(out, "Elapsed {:.3} s", started.elapsed().as_secs_f64());
}
