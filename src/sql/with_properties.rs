//! Trino's table properties on CREATE TABLE:
//!
//! ```sql
//! CREATE TABLE events (id BIGINT, ts TIMESTAMP)
//! WITH (partitioning = ARRAY['day(ts)', 'bucket(id, 16)'], format = 'PARQUET', format_version = 2)
//! ```
//!
//! `partitioning` is the same list `PARTITIONED BY` takes, as strings, in
//! Trino's order (`bucket(id, 16)`) or Spark's (`bucket(16, id)`);
//! `location` is `LOCATION`; `format_version` is the table property
//! `format-version`; `format` must be Parquet, what every table here is
//! written in. Any other property is an error that lists these.

use std::collections::BTreeMap;

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use super::transform_list::{PartitionItem, parse_partition_list};
use crate::error::{Error, Result};

/// What `WITH (…)` said.
#[derive(Debug, Default, PartialEq)]
pub struct WithProperties {
    pub partitioning: Option<Vec<PartitionItem>>,
    pub location: Option<String>,
    pub properties: BTreeMap<String, String>,
}

fn err(msg: String) -> Error {
    Error::Invalid(format!("CREATE TABLE … WITH (…): {msg}"))
}

/// Parse the tokens between `WITH (` and its `)`, whitespace left out.
pub fn parse(toks: &[&Token]) -> Result<WithProperties> {
    let mut out = WithProperties::default();
    for part in split_commas(toks) {
        let (key, value) = match part.as_slice() {
            [Token::Word(k), Token::Eq, value @ ..] if !value.is_empty() => (k.value.to_ascii_lowercase(), value),
            _ => {
                let text: String = part.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" ");
                return Err(err(format!("expected name = value, got `{text}`")));
            }
        };
        let string = |what: &str| match value {
            [Token::SingleQuotedString(s)] => Ok(s.clone()),
            _ => Err(err(format!("{key} takes a quoted {what}"))),
        };
        match key.as_str() {
            "partitioning" => {
                let items = match value {
                    [Token::Word(a), Token::LBracket, items @ .., Token::RBracket]
                        if a.value.eq_ignore_ascii_case("array") =>
                    {
                        items
                    }
                    _ => return Err(err("partitioning takes ARRAY['day(ts)', 'bucket(id, 16)', …]".into())),
                };
                let mut list = Vec::new();
                for item in split_commas(items) {
                    let [Token::SingleQuotedString(text)] = item.as_slice() else {
                        return Err(err("each partitioning item is a quoted string such as 'day(ts)'".into()));
                    };
                    let tokens = Tokenizer::new(&GenericDialect {}, text)
                        .tokenize_with_location()
                        .map_err(|e| err(format!("partitioning item '{text}': {e}")))?;
                    list.extend(parse_partition_list(&tokens)?);
                }
                out.partitioning = Some(list);
            }
            "format" => {
                let format = string("file format")?;
                if !format.eq_ignore_ascii_case("parquet") {
                    return Err(err(format!(
                        "format '{format}' is not supported: tables here are written in Parquet"
                    )));
                }
            }
            "location" => out.location = Some(string("location")?),
            "format_version" => {
                let version = match value {
                    [Token::Number(n, _)] => n.clone(),
                    [Token::SingleQuotedString(s)] => s.clone(),
                    _ => return Err(err("format_version takes 2 or 3".into())),
                };
                out.properties.insert("format-version".into(), version);
            }
            other => {
                return Err(err(format!(
                    "unknown property `{other}`: expected partitioning, format, location or format_version"
                )));
            }
        }
    }
    Ok(out)
}

/// Split at commas outside parentheses and brackets.
fn split_commas<'a>(toks: &[&'a Token]) -> Vec<Vec<&'a Token>> {
    let mut out = vec![Vec::new()];
    let mut depth = 0;
    for t in toks {
        match t {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket => depth -= 1,
            Token::Comma if depth == 0 => {
                out.push(Vec::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().expect("one part at least").push(*t);
    }
    out.retain(|p| !p.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::Transform;

    fn parse_text(text: &str) -> Result<WithProperties> {
        let tokens = Tokenizer::new(&GenericDialect {}, text).tokenize().unwrap();
        let toks: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
        parse(&toks)
    }

    #[test]
    fn trino_partitioning_format_location_and_version() {
        let w = parse_text(
            "partitioning = ARRAY['day(ts)', 'bucket(id, 16)', 'truncate(s, 4)', 'region'], \
             format = 'PARQUET', location = '/tmp/x', format_version = 2",
        )
        .unwrap();
        let items = w.partitioning.unwrap();
        let got: Vec<(&str, Transform)> = items.iter().map(|i| (i.source.as_str(), i.transform)).collect();
        assert_eq!(
            got,
            [
                ("ts", Transform::Day),
                ("id", Transform::Bucket(16)),
                ("s", Transform::Truncate(4)),
                ("region", Transform::Identity)
            ]
        );
        assert_eq!(w.location.as_deref(), Some("/tmp/x"));
        assert_eq!(w.properties.get("format-version").map(String::as_str), Some("2"));
    }

    #[test]
    fn bad_properties_say_what_is_expected() {
        let e = parse_text("format = 'ORC'").unwrap_err().to_string();
        assert!(e.contains("format 'ORC' is not supported"), "{e}");
        let e = parse_text("sorted_by = ARRAY['x']").unwrap_err().to_string();
        assert!(e.contains("unknown property `sorted_by`: expected partitioning"), "{e}");
        let e = parse_text("partitioning = 'day(ts)'").unwrap_err().to_string();
        assert!(e.contains("partitioning takes ARRAY["), "{e}");
        let e = parse_text("partitioning = ARRAY['bucket(id)']")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bucket takes a number and a column"), "{e}");
    }
}
