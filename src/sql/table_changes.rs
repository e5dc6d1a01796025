//! `table_changes('t', FROM, TO[, 'id, …'])` read as the name of the
//! changelog view the catalog resolves (`provider::changes`):
//!
//! | written                                             | read as                            |
//! |-----------------------------------------------------|------------------------------------|
//! | `table_changes('t', 1, 2)`                          | `"t$changes(1;2;)"`                |
//! | `table_changes('s.t', 'v1', NULL, 'id')`            | `"s"."t$changes(v1;;id)"`          |
//! | `table_changes('t', TIMESTAMP '2024-05-01', NULL)`  | `"t$changes(2024-05-01;;)"`        |
//!
//! DataFusion calls table functions synchronously, before any table could
//! be loaded; a name is resolved by the (asynchronous) catalog, like the
//! `"t@…"` of time travel.

use std::borrow::Cow;

use datafusion::common::TableReference;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use super::statement::LineOffsets;
use crate::error::{Error, Result};
use crate::provider::changes::ChangesRequest;

const USAGE: &str = "table_changes('table', FROM, TO[, 'identifier columns']) takes a quoted table name, then a start and an end (a snapshot id, a quoted tag or timestamp, or NULL)";

fn err(msg: String) -> Error {
    Error::Invalid(format!("SQL syntax error: {msg}; {USAGE}"))
}

/// `sql` with each `table_changes(…)` call replaced by its view's name.
pub fn rewrite(sql: &str) -> Result<Cow<'_, str>> {
    if !sql.to_ascii_lowercase().contains("table_changes") {
        return Ok(Cow::Borrowed(sql));
    }
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize_with_location() else {
        return Ok(Cow::Borrowed(sql));
    };
    let sig: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let tok = |i: usize| sig.get(i).map(|t| &t.token);
    let offsets = LineOffsets::new(sql);
    let mut out = String::with_capacity(sql.len());
    let mut copied = 0;
    let mut j = 0;
    while j < sig.len() {
        let is_call = matches!(tok(j), Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("table_changes"))
            && tok(j + 1) == Some(&Token::LParen);
        if !is_call {
            j += 1;
            continue;
        }
        // The arguments: literals separated by commas, up to `)`.
        let mut args: Vec<Option<String>> = Vec::new();
        let mut k = j + 2;
        loop {
            let value = match (super::as_of::selector_at(&sig, k), tok(k), tok(k + 1)) {
                (Some((value, last)), _, _) => {
                    k = last;
                    Some(value)
                }
                (None, Some(Token::Word(w)), _) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("null") => {
                    None
                }
                (None, Some(Token::Minus), Some(Token::Number(n, _))) => {
                    k += 1;
                    Some(format!("-{n}"))
                }
                _ => return Err(err(format!("argument {} is not a literal", args.len() + 1))),
            };
            args.push(value);
            k += 1;
            match tok(k) {
                Some(Token::Comma) => k += 1,
                Some(Token::RParen) => break,
                _ => return Err(err("the call needs its closing parenthesis".into())),
            }
        }
        if !(3..=4).contains(&args.len()) {
            return Err(err(format!("{} arguments given", args.len())));
        }
        let Some(table) = args[0].clone() else {
            return Err(err("the table is NULL".into()));
        };
        for value in args[1..3].iter().flatten() {
            if value.contains([';', ')']) {
                return Err(err(format!("{value:?} is not a snapshot id, tag or timestamp")));
            }
        }
        let ids = args.get(3).cloned().flatten().unwrap_or_default();
        if ids.contains([';', ')']) {
            return Err(err(format!("{ids:?} is not a list of columns")));
        }
        let request = ChangesRequest {
            from: args[1].clone(),
            to: args[2].clone(),
            ids: ids
                .split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect(),
        };
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let reference = TableReference::parse_str(&table);
        let view = quote(&format!("{}${}", reference.table(), request.kind()));
        let name = match &reference {
            TableReference::Bare { .. } => view,
            TableReference::Partial { schema, .. } => format!("{}.{view}", quote(schema)),
            TableReference::Full { catalog, schema, .. } => format!("{}.{}.{view}", quote(catalog), quote(schema)),
        };
        out.push_str(&sql[copied..offsets.byte(sig[j].span.start)]);
        out.push_str(&name);
        copied = offsets.byte(sig[k].span.end);
        j = k + 1;
    }
    if copied == 0 {
        return Ok(Cow::Borrowed(sql));
    }
    out.push_str(&sql[copied..]);
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(sql: &str) -> String {
        rewrite(sql).unwrap().into_owned()
    }

    #[test]
    fn calls_become_names() {
        assert_eq!(
            r("SELECT * FROM table_changes('t', 1, 2)"),
            "SELECT * FROM \"t$changes(1;2;)\""
        );
        assert_eq!(
            r("SELECT * FROM TABLE_CHANGES('S.T', 'v1', NULL, 'id, b') c WHERE c.id = 1"),
            "SELECT * FROM \"s\".\"t$changes(v1;;id,b)\" c WHERE c.id = 1"
        );
        assert_eq!(
            r("SELECT 1 FROM table_changes('t', TIMESTAMP '2024-05-01 00:00:00', null)"),
            "SELECT 1 FROM \"t$changes(2024-05-01 00:00:00;;)\""
        );
        assert!(matches!(rewrite("SELECT 'table_changes'").unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn bad_calls_say_what_is_expected() {
        let e = |sql: &str| rewrite(sql).unwrap_err().to_string();
        assert!(e("SELECT * FROM table_changes('t', 1)").contains("2 arguments given"));
        assert!(e("SELECT * FROM table_changes('t', x, 2)").contains("argument 2 is not a literal"));
        assert!(e("SELECT * FROM table_changes('t', 1, 2").contains("closing parenthesis"));
        assert!(e("SELECT * FROM table_changes(NULL, 1, 2)").contains("the table is NULL"));
    }
}
