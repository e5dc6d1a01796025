//! Number literals with an exponent are `DOUBLE`.
//!
//! Our sessions read `1.5` as an exact `DECIMAL` (as Spark, Trino and DuckDB
//! do). DataFusion's parser would also make `1.7976931348623157E308` a
//! decimal (of scale -292, which fails) and `1e-3` one of scale 3; those
//! engines read a literal with an exponent as a `DOUBLE`. So before a script
//! is split, each such number token becomes `CAST('<literal>' AS DOUBLE)`,
//! spliced into the text by position (nothing else is touched):
//!
//! | literal    | type               |
//! |------------|--------------------|
//! | `1.5`      | `DECIMAL(2, 1)`    |
//! | `1.5e3`    | `DOUBLE`           |
//! | `'NaN'`    | string, as before  |
//!
//! `SET` statements are left as written.

use std::borrow::Cow;

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::{Error, Result};

/// `sql` with every number literal that has an exponent written as a
/// `DOUBLE` cast.
pub fn exponents_as_doubles(sql: &str) -> Result<Cow<'_, str>> {
    if !sql.bytes().any(|b| b == b'e' || b == b'E') {
        return Ok(Cow::Borrowed(sql));
    }
    let tokens = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize_with_location()
        .map_err(|e| Error::Invalid(format!("SQL syntax error: {e}")))?;
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(sql.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let byte_at = |line: u64, column: u64| -> Option<usize> {
        let start = *line_starts.get(usize::try_from(line).ok()?.checked_sub(1)?)?;
        let skip = usize::try_from(column).ok()?.checked_sub(1)?;
        Some(start + sql[start..].char_indices().nth(skip).map(|(i, _)| i)?)
    };
    let mut out = String::with_capacity(sql.len());
    let mut copied = 0;
    let mut in_set = false;
    let mut first_word = true;
    for t in &tokens {
        match &t.token {
            Token::SemiColon => {
                in_set = false;
                first_word = true;
            }
            Token::Whitespace(_) => {}
            Token::Word(w) if first_word => {
                in_set = w.quote_style.is_none() && w.keyword == Keyword::SET;
                first_word = false;
            }
            Token::Number(n, _) if !in_set && n.contains(['e', 'E']) => {
                let Some(at) = byte_at(t.span.start.line, t.span.start.column) else {
                    continue;
                };
                if !sql[at..].starts_with(n.as_str()) {
                    continue;
                }
                out.push_str(&sql[copied..at]);
                out.push_str(&format!("CAST('{n}' AS DOUBLE)"));
                copied = at + n.len();
            }
            _ => first_word = false,
        }
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

    #[test]
    fn only_numbers_with_an_exponent_change() {
        assert_eq!(
            exponents_as_doubles("SELECT 1.5, 1e3, 'x1e3', \"c1e3\", -2.5E-3 -- 1e3\nFROM t").unwrap(),
            "SELECT 1.5, CAST('1e3' AS DOUBLE), 'x1e3', \"c1e3\", -CAST('2.5E-3' AS DOUBLE) -- 1e3\nFROM t"
        );
        assert_eq!(
            exponents_as_doubles("SELECT 'é', 1e2;\n  SELECT 2E1").unwrap(),
            "SELECT 'é', CAST('1e2' AS DOUBLE);\n  SELECT CAST('2E1' AS DOUBLE)"
        );
        assert_eq!(exponents_as_doubles("SET x.y = 1e3").unwrap(), "SET x.y = 1e3");
        assert!(matches!(exponents_as_doubles("SELECT 1.5").unwrap(), Cow::Borrowed(_)));
    }
}
