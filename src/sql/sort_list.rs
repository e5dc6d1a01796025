//! The list after `ORDERED BY`: Spark-Iceberg's sort terms.
//!
//! | item                              | sort field                       |
//! |-----------------------------------|----------------------------------|
//! | `a`                               | `a ASC NULLS FIRST`              |
//! | `a DESC`                          | `a DESC NULLS LAST`              |
//! | `a ASC NULLS LAST`                | `a ASC NULLS LAST`               |
//! | `bucket(16, id)`, `day(ts) DESC`  | the transform's value, as in `PARTITIONED BY` |
//!
//! The list may stand in parentheses (`ORDERED BY (a, b DESC)`) or bare
//! (`ORDERED BY a, b DESC`).

use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::transform_list::{parse_item, split_top_level};
use crate::error::{Error, Result};
use crate::table::sort_order::SortFieldDef;

fn err(msg: String) -> Error {
    Error::Invalid(format!("ORDERED BY: {msg}"))
}

/// Parse the items of `toks` (the whole list, parentheses included if given).
pub fn parse_sort_list(toks: &[&Token]) -> Result<Vec<SortFieldDef>> {
    let inner = match toks {
        [Token::LParen, inner @ .., Token::RParen] if balanced(inner) => inner,
        all => all,
    };
    if inner.is_empty() {
        return Err(err(
            "the list is empty; to stop ordering writes use WRITE UNORDERED".into()
        ));
    }
    split_top_level(inner)
        .into_iter()
        .map(|item| parse_sort_item(&item))
        .collect()
}

/// Whether every parenthesis in `toks` closes within it (so that `(a), (b)`
/// is not taken for one parenthesized list).
fn balanced(toks: &[&Token]) -> bool {
    let mut depth = 0i32;
    for t in toks {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

fn parse_sort_item(toks: &[&Token]) -> Result<SortFieldDef> {
    let text = || toks.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" ");
    let mut body = toks;
    let mut nulls_first = None;
    if let [rest @ .., n, which] = body
        && keyword(n) == Some(Keyword::NULLS)
    {
        nulls_first = match keyword(which) {
            Some(Keyword::FIRST) => Some(true),
            Some(Keyword::LAST) => Some(false),
            _ => return Err(err(format!("expected NULLS FIRST or NULLS LAST in {}", text()))),
        };
        body = rest;
    }
    let mut descending = false;
    if let [rest @ .., d] = body
        && let Some(k @ (Keyword::ASC | Keyword::DESC)) = keyword(d)
    {
        descending = k == Keyword::DESC;
        body = rest;
    }
    if body.is_empty() {
        return Err(err(format!("{} names no column", text())));
    }
    if body.len() >= 2
        && let Some(Keyword::AS) = keyword(body[body.len() - 2])
    {
        return Err(err(format!("a sort term has no name: {}", text())));
    }
    let item = parse_item(body).map_err(|e| match e {
        Error::Invalid(msg) => err(msg.trim_start_matches("PARTITIONED BY: ").to_string()),
        other => other,
    })?;
    Ok(SortFieldDef {
        source: item.source,
        transform: item.transform,
        descending,
        nulls_first,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::Transform;
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::tokenizer::Tokenizer;

    fn parse(sql: &str) -> Result<Vec<SortFieldDef>> {
        let tokens = Tokenizer::new(&GenericDialect {}, sql).tokenize().unwrap();
        let toks: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
        parse_sort_list(&toks)
    }

    #[test]
    fn items() {
        let list = parse("(a, b DESC, bucket(16, id) ASC NULLS LAST, c DESC NULLS FIRST)").unwrap();
        assert_eq!(list.len(), 4);
        assert_eq!(
            (list[0].source.as_str(), list[0].descending, list[0].nulls_first),
            ("a", false, None)
        );
        assert!(list[1].descending);
        assert_eq!(list[2].transform, Transform::Bucket(16));
        assert_eq!(list[2].nulls_first, Some(false));
        assert_eq!(list[3].nulls_first, Some(true));
        assert_eq!(parse("a, day(ts) DESC").unwrap()[1].transform, Transform::Day);
        for bad in ["()", "a NULLS", "a AS x", "frob(a)", "a NULLS MIDDLE"] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains("ORDERED BY"), "{bad}: {e}");
        }
    }
}
