//! Running SQL text statement by statement, as `-c`, `-f` and the prompt do:
//! each statement is parsed and run in turn and its result printed as soon
//! as it has run, so the output of the statements before a failing one
//! (a syntax error included) is kept, and nothing after it runs.

use std::io::Write;
use std::time::Instant;

use datafusion::prelude::SessionContext;

use super::output::{NullText, OutputFormat, write_result_with};
use super::progress::Progress;
use crate::error::Result;
use crate::sql::{execute_statement, parse_each};

/// How results are printed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Printing {
    pub format: OutputFormat,
    /// Print `Elapsed 0.012 s` after each statement (the prompt's `\timing`).
    pub timing: bool,
    /// How NULL prints in table and CSV output.
    pub null: NullText,
}

/// Run the statements of `sql` in order, printing results on stdout and the
/// first error as `Error: …` on stderr. Returns whether all of them succeeded.
pub async fn run_sql(ctx: &SessionContext, sql: &str, printing: Printing) -> bool {
    match run(ctx, sql, printing).await {
        Ok(()) => true,
        Err(e) => {
            eprintln!("Error: {}", error_text(&e));
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

async fn run(ctx: &SessionContext, sql: &str, printing: Printing) -> Result<()> {
    for statement in parse_each(sql) {
        let statement = statement?;
        let started = Instant::now();
        let progress = Progress::start();
        let result = execute_statement(ctx, statement).await;
        progress.finish();
        let mut out = std::io::stdout().lock();
        write_result_with(&mut out, &result?, printing.format, printing.null)?;
        if printing.timing {
            print_elapsed(&mut out, started);
        }
        let _ = out.flush();
    }
    Ok(())
}

/// `Elapsed 0.012 s`, for `\timing on`.
pub fn print_elapsed(out: &mut dyn Write, started: Instant) {
    let _ = writeln!(out, "Elapsed {:.3} s", started.elapsed().as_secs_f64());
}
