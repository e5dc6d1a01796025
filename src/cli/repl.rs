//! The interactive prompt: statements end with `;`, `\q` quits.

use datafusion::prelude::SessionContext;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use super::output::{OutputFormat, write_result};
use crate::sql::execute_sql;

/// Whether `buf` holds at least one complete statement (ends in `;` outside quotes).
pub fn is_complete(buf: &str) -> bool {
    let (mut single, mut double) = (false, false);
    let mut last_significant = None;
    for c in buf.chars() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ => {}
        }
        if !c.is_whitespace() {
            last_significant = Some((c, single || double));
        }
    }
    matches!(last_significant, Some((';', false)))
}

pub async fn run(ctx: &SessionContext, format: OutputFormat) -> i32 {
    let mut editor = match DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("cannot start the prompt: {e}");
            return 1;
        }
    };
    let mut buf = String::new();
    loop {
        let prompt = if buf.is_empty() { "hp> " } else { "  -> " };
        match editor.readline(prompt) {
            Ok(line) => {
                if buf.is_empty() && matches!(line.trim(), "\\q" | "quit" | "exit") {
                    return 0;
                }
                buf.push_str(&line);
                buf.push('\n');
                if !is_complete(&buf) {
                    continue;
                }
                let _ = editor.add_history_entry(buf.trim());
                let sql = std::mem::take(&mut buf);
                let progress = super::progress::Progress::start();
                let result = execute_sql(ctx, &sql).await;
                progress.finish();
                match result {
                    Ok(results) => {
                        let mut out = std::io::stdout().lock();
                        for r in &results {
                            if let Err(e) = write_result(&mut out, r, format) {
                                eprintln!("Error: {e}");
                            }
                        }
                    }
                    Err(e) => eprintln!("Error: {e}"),
                }
            }
            Err(ReadlineError::Interrupted) => buf.clear(),
            Err(ReadlineError::Eof) => return 0,
            Err(e) => {
                eprintln!("prompt error: {e}");
                return 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_complete;

    #[test]
    fn statement_end_detection() {
        assert!(is_complete("select 1;"));
        assert!(!is_complete("select ';"));
        assert!(is_complete("select ';';  \n"));
        assert!(!is_complete("select 1"));
    }
}
