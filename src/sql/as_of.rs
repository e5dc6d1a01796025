//! Time travel in the syntax of Spark, Trino and DuckDB, read as the
//! `"t@selector"` names the catalog resolves:
//!
//! | written                                        | read as                     |
//! |------------------------------------------------|-----------------------------|
//! | `t FOR VERSION AS OF 8744736658442914487`      | `"t@8744736658442914487"`   |
//! | `t VERSION AS OF 'first'` (a tag or branch)    | `"t@first"`                 |
//! | `s.t FOR TIMESTAMP AS OF '2024-05-01 12:00:00'`| `s."t@2024-05-01 12:00:00"` |
//! | `t FOR TIMESTAMP AS OF TIMESTAMP '2024-05-01'` | `"t@2024-05-01"`            |
//! | `t FOR SYSTEM_TIME AS OF '2024-05-01'`         | `"t@2024-05-01"`            |
//! | `t AT (VERSION => 3)`, `t AT (TIMESTAMP => '…')` (DuckDB) | `"t@3"`, `"t@…"` |
//!
//! A timestamp is checked here, so `FOR TIMESTAMP AS OF 'first'` is an
//! error rather than a tag read.

use std::borrow::Cow;

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use super::statement::LineOffsets;
use crate::error::{Error, Result};

fn err(msg: String) -> Error {
    Error::Invalid(format!("SQL syntax error: {msg}"))
}

fn is_word(t: Option<&Token>, word: &str) -> bool {
    matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// The snapshot selector written at `sig[i]`: a number, a string, or
/// TIMESTAMP 'string'; with the index of its last token.
pub(super) fn selector_at(sig: &[&TokenWithSpan], i: usize) -> Option<(String, usize)> {
    let tok = |i: usize| sig.get(i).map(|t| &t.token);
    match (tok(i), tok(i + 1)) {
        (Some(Token::Number(n, _)), _) => Some((n.clone(), i)),
        (Some(Token::SingleQuotedString(s)), _) => Some((s.clone(), i)),
        (Some(Token::Word(w)), Some(Token::SingleQuotedString(s)))
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("timestamp") =>
        {
            Some((s.clone(), i + 1))
        }
        _ => None,
    }
}

/// `sql` with each time-travel clause folded into its table's name.
pub fn rewrite(sql: &str) -> Result<Cow<'_, str>> {
    // Most statements name no version: only those are tokenized again.
    let upper = sql.to_ascii_uppercase();
    let names_a_version = ["VERSION", "TIMESTAMP", "SYSTEM_TIME"]
        .iter()
        .any(|k| upper.contains(k));
    if !names_a_version || (!upper.contains("OF") && !upper.contains("=>")) {
        return Ok(Cow::Borrowed(sql));
    }
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize_with_location() else {
        // The statement splitter reports what does not tokenize.
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
        // [FOR] VERSION|TIMESTAMP|SYSTEM_TIME AS OF value
        let kind = ["version", "timestamp", "system_time"]
            .into_iter()
            .find(|k| is_word(tok(j), k) && is_word(tok(j + 1), "as") && is_word(tok(j + 2), "of"));
        // AT (VERSION|TIMESTAMP => value)
        let at_kind = ["version", "timestamp"].into_iter().find(|k| {
            is_word(tok(j), "at")
                && tok(j + 1) == Some(&Token::LParen)
                && is_word(tok(j + 2), k)
                && tok(j + 3) == Some(&Token::RArrow)
        });
        let (kind, value_at, clause_start) = match (kind, at_kind) {
            (Some(k), _) => {
                let start = if j > 0 && is_word(tok(j - 1), "for") { j - 1 } else { j };
                (k, j + 3, start)
            }
            (None, Some(k)) => (k, j + 4, j),
            (None, None) => {
                j += 1;
                continue;
            }
        };
        let for_ = if clause_start < j { "FOR " } else { "" };
        let clause = if at_kind.is_some() {
            format!("AT ({} => …)", kind.to_ascii_uppercase())
        } else {
            format!("{for_}{} AS OF", kind.to_ascii_uppercase())
        };
        let Some((selector, mut end)) = selector_at(&sig, value_at) else {
            return Err(err(format!(
                "{clause} takes a snapshot id, a quoted tag or branch name, or a quoted timestamp"
            )));
        };
        if at_kind.is_some() {
            if tok(end + 1) != Some(&Token::RParen) {
                return Err(err(format!("{clause} needs its closing parenthesis")));
            }
            end += 1;
        }
        if kind != "version" && crate::plan::files::parse_timestamp_ms(&selector).is_none() {
            return Err(err(format!(
                "{clause} '{selector}': not a timestamp (e.g. '2024-05-01 12:00:00' or '2024-05-01T12:00:00Z')"
            )));
        }
        if kind == "version" && selector.contains('@') {
            return Err(err(format!("{clause} '{selector}': a version has no '@'")));
        }
        // The table name just before the clause: word(.word)*.
        let Some(name_end) = clause_start
            .checked_sub(1)
            .filter(|&n| matches!(tok(n), Some(Token::Word(_))))
        else {
            return Err(err(format!("{clause} must follow a table name")));
        };
        let Some(Token::Word(table)) = tok(name_end) else {
            unreachable!("checked above")
        };
        let table_name = match table.quote_style {
            Some(_) => table.value.clone(),
            None => table.value.to_lowercase(),
        };
        let quoted = format!(
            "\"{}@{}\"",
            table_name.replace('"', "\"\""),
            selector.replace('"', "\"\"")
        );
        let name_start = offsets.byte(sig[name_end].span.start);
        out.push_str(&sql[copied..name_start]);
        out.push_str(&quoted);
        copied = offsets.byte(sig[end].span.end);
        j = end + 1;
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
    fn every_spelling_becomes_a_name() {
        assert_eq!(r("SELECT * FROM t FOR VERSION AS OF 42"), "SELECT * FROM \"t@42\"");
        assert_eq!(
            r("SELECT * FROM T VERSION AS OF 'first' x"),
            "SELECT * FROM \"t@first\" x"
        );
        assert_eq!(
            r("SELECT * FROM s.\"My T\" FOR TIMESTAMP AS OF '2024-05-01 12:00:00' WHERE a = 1"),
            "SELECT * FROM s.\"My T@2024-05-01 12:00:00\" WHERE a = 1"
        );
        assert_eq!(
            r("SELECT 1 FROM t FOR TIMESTAMP AS OF TIMESTAMP '2024-05-01'"),
            "SELECT 1 FROM \"t@2024-05-01\""
        );
        assert_eq!(
            r("SELECT 1 FROM t FOR SYSTEM_TIME AS OF '2024-05-01'"),
            "SELECT 1 FROM \"t@2024-05-01\""
        );
        assert_eq!(
            r("SELECT 1 FROM t AT (VERSION => 3) JOIN u AT (TIMESTAMP => '2024-05-01') ON true"),
            "SELECT 1 FROM \"t@3\" JOIN \"u@2024-05-01\" ON true"
        );
        // Nothing to fold: the text as it was.
        assert!(matches!(rewrite("SELECT 'AS OF' FROM t").unwrap(), Cow::Borrowed(_)));
        assert_eq!(r("SELECT x AS of FROM t"), "SELECT x AS of FROM t");
    }

    #[test]
    fn bad_clauses_say_what_is_expected() {
        let e = |sql: &str| rewrite(sql).unwrap_err().to_string();
        assert!(e("SELECT * FROM t FOR TIMESTAMP AS OF 'first'").contains("not a timestamp"));
        assert!(e("SELECT * FROM t FOR VERSION AS OF x").contains("takes a snapshot id"));
        assert!(e("SELECT * FROM (SELECT 1) FOR VERSION AS OF 1").contains("must follow a table name"));
        assert!(e("SELECT * FROM t AT (VERSION => 1").contains("closing parenthesis"));
    }
}
