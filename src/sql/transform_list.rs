//! The list inside `PARTITIONED BY ( … )`.
//!
//! | item                     | transform      |
//! |--------------------------|----------------|
//! | `region`                 | identity       |
//! | `year(ts)`, `years(ts)`  | year           |
//! | `month(ts)`, `months(ts)`| month          |
//! | `day(ts)`, `days(ts)`, `date(ts)` | day   |
//! | `hour(ts)`, `hours(ts)`  | hour           |
//! | `bucket(16, id)`         | `bucket[16]` (also `bucket(id, 16)`) |
//! | `truncate(4, s)`         | `truncate[4]` (also `truncate(s, 4)`) |
//! | `void(c)`                | void           |
//!
//! Any item may end in `AS name` to name the partition field.

use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::error::{Error, Result};
use crate::transform::{MAX_PARAM, Transform};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionItem {
    pub source: String,
    pub transform: Transform,
    pub name: Option<String>,
}

fn err(msg: String) -> Error {
    Error::Invalid(format!("PARTITIONED BY: {msg}"))
}

/// Parse the comma-separated items between the parentheses.
pub fn parse_partition_list(tokens: &[TokenWithSpan]) -> Result<Vec<PartitionItem>> {
    let toks: Vec<&Token> = tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let mut items = Vec::new();
    for part in split_top_level(&toks) {
        if part.is_empty() {
            return Err(err("empty item in the list".into()));
        }
        items.push(parse_item(&part)?);
    }
    if items.is_empty() {
        return Err(err("the list is empty".into()));
    }
    Ok(items)
}

/// Parse one item, e.g. `bucket(16, id) AS id_b`.
pub fn parse_item(toks: &[&Token]) -> Result<PartitionItem> {
    let (body, name) = match toks {
        [rest @ .., Token::Word(a), Token::Word(n)] if a.quote_style.is_none() && a.keyword == Keyword::AS => {
            (rest, Some(n.value.clone()))
        }
        all => (all, None),
    };
    let text = || body.iter().map(|t| t.to_string()).collect::<String>();
    match body {
        [Token::Word(col)] => Ok(PartitionItem {
            source: ident(col),
            transform: Transform::Identity,
            name,
        }),
        [Token::Word(f), Token::LParen, args @ .., Token::RParen] => {
            let args: Vec<Vec<&Token>> = split_top_level(args);
            let column = |t: &[&Token]| match t {
                [Token::Word(w)] => Some(ident(w)),
                _ => None,
            };
            // Any run of digits is a number here; its range is checked below.
            let number = |t: &[&Token]| match t {
                [Token::Number(n, _)] if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    Some(n.parse::<u64>().unwrap_or(u64::MAX))
                }
                _ => None,
            };
            let fname = f.value.to_ascii_lowercase();
            let unary = |transform: Transform| -> Result<PartitionItem> {
                match args.as_slice() {
                    [a] => match column(a) {
                        Some(source) => Ok(PartitionItem {
                            source,
                            transform,
                            name: name.clone(),
                        }),
                        None => Err(err(format!("{fname}(…) takes a column, got {}", text()))),
                    },
                    _ => Err(err(format!("{fname}(…) takes one column, got {}", text()))),
                }
            };
            match fname.as_str() {
                "identity" => unary(Transform::Identity),
                "year" | "years" => unary(Transform::Year),
                "month" | "months" => unary(Transform::Month),
                "day" | "days" | "date" => unary(Transform::Day),
                "hour" | "hours" => unary(Transform::Hour),
                "void" => unary(Transform::Void),
                "bucket" | "truncate" => {
                    let (n, source) = match args.as_slice() {
                        [a, b] => match (number(a), column(b), column(a), number(b)) {
                            (Some(n), Some(c), _, _) | (_, _, Some(c), Some(n)) => (n, c),
                            _ => {
                                return Err(err(format!(
                                    "{fname} takes a positive number and a column, got {}",
                                    text()
                                )));
                            }
                        },
                        _ => return Err(err(format!("{fname} takes a number and a column, got {}", text()))),
                    };
                    if n == 0 {
                        return Err(err(format!("{fname} needs a positive number, got 0 in {}", text())));
                    }
                    let Some(n) = u32::try_from(n).ok().filter(|n| *n <= MAX_PARAM) else {
                        let what = if fname == "bucket" {
                            "bucket count N"
                        } else {
                            "truncate width W"
                        };
                        return Err(err(format!(
                            "the {what} in {} is out of range: it must be in 1..={MAX_PARAM} (Iceberg stores it as a 32-bit int)",
                            text()
                        )));
                    };
                    let transform = if fname == "bucket" {
                        Transform::Bucket(n)
                    } else {
                        Transform::Truncate(n)
                    };
                    Ok(PartitionItem {
                        source,
                        transform,
                        name,
                    })
                }
                other => Err(err(format!(
                    "unknown transform {other:?} in {}; expected a column, year, month, day, hour, bucket(N, col), truncate(W, col) or void",
                    text()
                ))),
            }
        }
        _ => Err(err(format!("cannot read {:?} as a partition transform", text()))),
    }
}

fn ident(w: &datafusion::sql::sqlparser::tokenizer::Word) -> String {
    // Unquoted identifiers are case-insensitive (folded to lower case like DataFusion).
    if w.quote_style.is_some() {
        w.value.clone()
    } else {
        w.value.to_ascii_lowercase()
    }
}

pub(crate) fn split_top_level<'a>(toks: &[&'a Token]) -> Vec<Vec<&'a Token>> {
    let mut out = vec![Vec::new()];
    let mut depth = 0;
    for t in toks {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => {
                out.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = out.last_mut() {
            last.push(*t);
        }
    }
    if out.len() == 1 && out[0].is_empty() {
        out.clear();
    }
    out
}
