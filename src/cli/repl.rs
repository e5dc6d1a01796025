//! The prompt, opened when neither `-c` nor `-f` is given.
//!
//! Lines are collected until they end a statement (a `;` outside strings,
//! quoted identifiers and comments, see [`super::statement_end`]); where a
//! statement could start, a line may instead be a command (`\d`, `\timing`,
//! `\q`, …, see [`super::commands`]).
//!
//! Like psql, the exit status depends on where the input comes from: at a
//! terminal a failing statement prints its error and the prompt goes on (exit
//! status 0); input piped in (`echo "SELECT …;" | hidden-partitions`) is run
//! like a `-f` script: the first error stops it, with exit status 1. Piped
//! input is read without line editing, prompts or history; a last statement
//! without `;` is run at the end of the input.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use datafusion::prelude::SessionContext;
use rustyline::Editor;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;

use super::commands::{Command, HELP, describe, list_tables};
use super::completion::Completion;
use super::history;
use super::output::{MaxRows, write_result_with};
use super::run::{Printing, print_elapsed, run_file, run_sql};
use super::statement_end::{is_blank, is_complete};
use crate::error::Result;

/// Run the prompt until `\q` or the end of input; returns the exit status.
pub async fn run(ctx: &SessionContext, printing: Printing) -> i32 {
    let interactive = std::io::stdin().is_terminal();
    let mut input = match Input::new(ctx, interactive) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("Error: cannot start the prompt: {e}");
            return 1;
        }
    };
    let mut printing = printing;
    let mut buf = String::new();
    let status = loop {
        let prompt = if is_blank(&buf) { "hp> " } else { "  -> " };
        let line = match input.read_line(prompt) {
            Ok(Line::Text(line)) => line,
            Ok(Line::Cancelled) => {
                buf.clear();
                continue;
            }
            Ok(Line::End) => break 0,
            Err(e) => {
                eprintln!("Error: cannot read the input: {e}");
                break 1;
            }
        };
        let ok = if is_blank(&buf)
            && let Some(command) = Command::parse(&line)
        {
            input.remember(line.trim());
            buf.clear();
            match command {
                Ok(Command::Quit) => break 0,
                Ok(command) => run_command(ctx, command, &mut printing).await,
                Err(e) => {
                    eprintln!("Error: {e}");
                    false
                }
            }
        } else {
            buf.push_str(&line);
            buf.push('\n');
            if !is_complete(&buf) {
                continue;
            }
            let sql = std::mem::take(&mut buf);
            input.remember(sql.trim());
            if interactive {
                cancellable(run_sql(ctx, &sql, printing)).await
            } else {
                run_sql(ctx, &sql, printing).await
            }
        };
        if !ok && !interactive {
            break 1;
        }
    };
    // A statement left without `;` at the end of piped input still runs.
    if status == 0 && !interactive && !is_blank(&buf) && !run_sql(ctx, &buf, printing).await {
        return 1;
    }
    status
}

/// Run `statement` until it ends or Ctrl-C stops it (its joins stop within
/// a batch, see [`super::interrupt`]; dropping it cancels its scans and
/// writes; the prompt goes on). Returns whether it succeeded.
async fn cancellable(statement: impl std::future::Future<Output = bool>) -> bool {
    let mut interrupts = super::interrupt::interrupts();
    let seen = *interrupts.borrow_and_update();
    let ok = tokio::select! {
        biased;
        _ = interrupts.changed() => false,
        ok = statement => ok,
    };
    if *interrupts.borrow() != seen {
        eprintln!(
            "Cancelled. (A write stopped while its commit was under way may still have committed: query the table to see.)"
        );
        return false;
    }
    ok
}

/// Run a command other than `\q`; returns whether it succeeded.
async fn run_command(ctx: &SessionContext, command: Command, printing: &mut Printing) -> bool {
    let started = Instant::now();
    let results = match command {
        Command::Help => {
            print!("{HELP}");
            return true;
        }
        Command::Timing(on) => {
            printing.timing = on.unwrap_or(!printing.timing);
            println!("Timing is {}.", if printing.timing { "on" } else { "off" });
            return true;
        }
        Command::Format(format) => {
            printing.format = format;
            println!("Output format is {}.", format.name());
            return true;
        }
        Command::MaxRows(max_rows) => {
            printing.max_rows = max_rows;
            match max_rows {
                MaxRows::All => println!("Every row of a result is printed."),
                MaxRows::Limit(n) => println!("At most {n} rows of a result are printed."),
            }
            return true;
        }
        Command::Include(file) => {
            return match std::fs::read_to_string(&file) {
                Ok(sql) => cancellable(run_file(ctx, &file, &sql, *printing)).await,
                Err(e) => {
                    eprintln!("Error: cannot read {file}: {e}");
                    false
                }
            };
        }
        Command::ListTables => list_tables(ctx).await.map(|r| vec![r]),
        Command::Describe(table) => describe(ctx, &table).await,
        Command::Quit => return true,
    };
    let printed = results.and_then(|results| {
        let mut out = std::io::stdout().lock();
        for r in &results {
            write_result_with(&mut out, r, printing.format, printing.null)?;
        }
        if printing.timing {
            print_elapsed(&mut out, started);
        }
        let _ = out.flush();
        Result::Ok(())
    });
    match printed {
        Ok(()) => true,
        Err(e) => {
            eprintln!("Error: {e}");
            false
        }
    }
}

/// What reading a line gave.
enum Line {
    Text(String),
    /// Ctrl-C: drop the statement being typed.
    Cancelled,
    /// Ctrl-D or the end of piped input.
    End,
}

/// Where lines come from: a line editor at a terminal, else stdin as it is.
enum Input {
    Terminal {
        editor: Box<Editor<Completion, DefaultHistory>>,
        history: Option<PathBuf>,
    },
    Piped(std::io::StdinLock<'static>),
}

impl Input {
    fn new(ctx: &SessionContext, interactive: bool) -> std::result::Result<Self, ReadlineError> {
        if !interactive {
            return Ok(Input::Piped(std::io::stdin().lock()));
        }
        let mut editor = Editor::new()?;
        editor.set_helper(Some(Completion::new(ctx.clone())));
        let history = history::default_path();
        if let Some(path) = &history {
            history::trim(path);
            for e in history::load(path) {
                let _ = editor.add_history_entry(e);
            }
        }
        Ok(Input::Terminal {
            editor: Box::new(editor),
            history,
        })
    }

    fn read_line(&mut self, prompt: &str) -> std::io::Result<Line> {
        match self {
            Input::Terminal { editor, .. } => match editor.readline(prompt) {
                Ok(line) => Ok(Line::Text(line)),
                Err(ReadlineError::Interrupted) => Ok(Line::Cancelled),
                Err(ReadlineError::Eof) => Ok(Line::End),
                Err(ReadlineError::Io(e)) => Err(e),
                Err(e) => Err(std::io::Error::other(e.to_string())),
            },
            Input::Piped(stdin) => {
                let mut line = String::new();
                if stdin.read_line(&mut line)? == 0 {
                    return Ok(Line::End);
                }
                let len = line.trim_end_matches(['\n', '\r']).len();
                line.truncate(len);
                Ok(Line::Text(line))
            }
        }
    }

    /// Add a statement or command to the history (at a terminal), and to
    /// the history file at once: a session that is killed keeps its history.
    fn remember(&mut self, entry: &str) {
        if let Input::Terminal { editor, history } = self
            && !entry.is_empty()
        {
            let _ = editor.add_history_entry(entry);
            if let Some(path) = history {
                history::append(path, entry);
            }
        }
    }
}
