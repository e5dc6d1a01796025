//! Tab completion at the prompt: SQL keywords, table names (and
//! `schema.table` for the warehouse's other schemas), and the columns of the
//! tables the line names.
//!
//! ```text
//! hp> SELECT ev<Tab>          → event_time   (a column of a table on the line)
//! hp> SELECT * FROM ev<Tab>   → events
//! hp> sel<Tab>                → select       (keywords keep the case typed)
//! ```

use std::collections::BTreeSet;

use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::keywords::ALL_KEYWORDS;
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

use crate::table::show_create::ident;

/// The prompt's completer; reads names from the session as the line is typed.
pub struct Completion {
    ctx: SessionContext,
}

impl Completion {
    pub fn new(ctx: SessionContext) -> Self {
        Self { ctx }
    }

    /// Where the word before `pos` starts, and what can complete it.
    pub fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let start = line[..pos]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric() || matches!(c, '_' | '.' | '$' | '"'))
            .last()
            .map_or(pos, |(i, _)| i);
        let prefix = &line[start..pos];
        if prefix.is_empty() {
            return (pos, Vec::new());
        }
        let tables = self.tables();
        let mut names: BTreeSet<String> = tables.iter().map(|t| ident_path(t)).collect();
        for table in tables.iter().filter(|t| mentions(line, t)) {
            names.extend(self.columns(table).iter().map(|c| ident(c)));
        }
        // `"Ev` and `Ev` both complete to `"Event Kind"`.
        let lower = prefix.trim_start_matches('"').to_lowercase();
        let mut out: Vec<String> = names
            .into_iter()
            .filter(|n| n.trim_start_matches('"').to_lowercase().starts_with(&lower))
            .collect();
        let lower_case = !prefix.chars().any(|c| c.is_uppercase());
        let keywords = (!prefix.starts_with('"'))
            .then_some(ALL_KEYWORDS)
            .unwrap_or_default()
            .iter()
            .filter(|k| k.to_lowercase().starts_with(&lower))
            .map(|k| if lower_case { k.to_lowercase() } else { k.to_string() });
        for k in keywords {
            if !out.contains(&k) {
                out.push(k);
            }
        }
        (start, out)
    }

    /// The tables of the default schema by name, then `schema.table` for the others.
    fn tables(&self) -> Vec<String> {
        let options = self.ctx.copied_config().options().catalog.clone();
        let Some(catalog) = self.ctx.catalog(&options.default_catalog) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for schema_name in catalog.schema_names() {
            let Some(schema) = catalog.schema(&schema_name) else {
                continue;
            };
            if schema_name == "information_schema" {
                continue;
            }
            for t in schema.table_names() {
                if schema_name == options.default_schema {
                    out.push(t);
                } else {
                    out.push(format!("{schema_name}.{t}"));
                }
            }
        }
        out
    }

    fn columns(&self, table: &str) -> Vec<String> {
        let reference = match table.split_once('.') {
            Some((schema, t)) => TableReference::partial(schema, t),
            None => TableReference::bare(table),
        };
        // Completion waits for the table's schema: the line editor is synchronous.
        let provider = futures::executor::block_on(self.ctx.table_provider(reference));
        provider
            .map(|p| p.schema().fields().iter().map(|f| f.name().clone()).collect())
            .unwrap_or_default()
    }
}

/// `schema.table` with each part quoted where SQL needs it.
fn ident_path(table: &str) -> String {
    match table.split_once('.') {
        Some((schema, t)) => format!("{}.{}", ident(schema), ident(t)),
        None => ident(table),
    }
}

/// Whether `line` names `table` as a word (case-insensitively).
fn mentions(line: &str, table: &str) -> bool {
    let line = line.to_lowercase();
    let table = table.to_lowercase();
    line.match_indices(&table).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + table.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        boundary(before) && boundary(after)
    })
}

impl Completer for Completion {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, words) = self.candidates(line, pos);
        Ok((
            start,
            words
                .into_iter()
                .map(|w| Pair {
                    display: w.clone(),
                    replacement: w,
                })
                .collect(),
        ))
    }
}

impl Hinter for Completion {
    type Hint = String;
}

impl Highlighter for Completion {}

impl Validator for Completion {}

impl Helper for Completion {}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn completes_keywords_tables_and_the_columns_of_tables_on_the_line() {
        let ctx = SessionContext::new();
        ctx.sql("CREATE TABLE events (event_time TIMESTAMP, \"Event Kind\" VARCHAR, id BIGINT)")
            .await
            .unwrap();
        let c = Completion::new(ctx);
        let complete = |line: &str| c.candidates(line, line.len());
        assert_eq!(complete("SEL"), (0, vec!["SELECT".to_string()]));
        assert_eq!(complete("sel"), (0, vec!["select".to_string()]));
        assert_eq!(complete("SELECT * FROM eve").1[0], "events");
        assert_eq!(complete("SELECT * FROM eve").0, 14);
        // Columns only of the tables the line names.
        assert_eq!(complete("SELECT event_").1, Vec::<String>::new());
        let line = "SELECT event_ FROM events";
        assert_eq!(c.candidates(line, 13), (7, vec!["event_time".to_string()]));
        assert_eq!(c.candidates("SELECT \"Ev FROM events", 10).1[0], "\"Event Kind\"");
        assert!(
            complete("SELECT * FROM events WHERE Ev")
                .1
                .contains(&"\"Event Kind\"".to_string())
        );
        assert_eq!(complete("SELECT "), (7, Vec::new()));
        assert!(mentions("select * from events;", "EVENTS"));
        assert!(!mentions("select * from events2", "events"));
    }
}
