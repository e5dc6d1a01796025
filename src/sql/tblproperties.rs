//! The property lists of `TBLPROPERTIES` (Spark's spelling):
//!
//! ```sql
//! CREATE TABLE t (…) TBLPROPERTIES ('write.delete.mode' = 'copy-on-write', 'owner' = 'ana')
//! ALTER TABLE t SET TBLPROPERTIES (write.delete.mode = 'copy-on-write', 'format-version' = 3)
//! ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('owner')
//! ```
//!
//! A key is a quoted string or a dotted name; a value a quoted string, a
//! number or `true` / `false`.

use std::collections::BTreeMap;

use datafusion::sql::sqlparser::tokenizer::Token;

use crate::error::{Error, Result};

fn syntax(what: &str) -> Error {
    Error::Invalid(format!("SQL syntax error: {what}"))
}

/// Whether `t` is the word `word` (unquoted, any case).
pub fn is_word(t: Option<&&Token>, word: &str) -> bool {
    matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// A key at `toks[k]`: `'a.b'` or `a.b`; and the index after it.
fn key(toks: &[&Token], mut k: usize) -> Option<(String, usize)> {
    if let Some(Token::SingleQuotedString(s)) = toks.get(k) {
        return Some((s.clone(), k + 1));
    }
    let mut out = String::new();
    loop {
        match toks.get(k) {
            Some(Token::Word(w)) => out.push_str(&w.value),
            Some(Token::Number(n, _)) if !out.is_empty() => out.push_str(n),
            _ => return None,
        }
        k += 1;
        if toks.get(k) != Some(&&Token::Period) {
            return Some((out, k));
        }
        out.push('.');
        k += 1;
    }
}

/// `( key = value, … )` at `toks[k]`: the pairs and the index after `)`.
pub fn pairs(toks: &[&Token], k: usize) -> Result<(BTreeMap<String, String>, usize)> {
    let usage = "expected TBLPROPERTIES ('key' = 'value', …)";
    list(toks, k, usage, |toks, k| {
        let (key, k) = key(toks, k).ok_or_else(|| syntax(usage))?;
        if toks.get(k) != Some(&&Token::Eq) {
            return Err(syntax(usage));
        }
        let value = match toks.get(k + 1) {
            Some(Token::SingleQuotedString(v)) | Some(Token::Number(v, _)) => v.clone(),
            Some(Token::Word(w))
                if w.quote_style.is_none() && ["true", "false"].contains(&w.value.to_ascii_lowercase().as_str()) =>
            {
                w.value.to_ascii_lowercase()
            }
            _ => {
                return Err(syntax(&format!(
                    "TBLPROPERTIES: the value of {key:?} is a quoted string, a number, true or false"
                )));
            }
        };
        Ok(((key, value), k + 2))
    })
    .and_then(|(items, end)| {
        let mut out = BTreeMap::new();
        for (key, value) in items {
            if out.insert(key.clone(), value).is_some() {
                return Err(syntax(&format!("TBLPROPERTIES: {key:?} is given twice")));
            }
        }
        Ok((out, end))
    })
}

/// `( key, … )` at `toks[k]`: the keys and the index after `)`.
pub fn keys(toks: &[&Token], k: usize) -> Result<(Vec<String>, usize)> {
    let usage = "expected UNSET TBLPROPERTIES [IF EXISTS] ('key', …)";
    list(toks, k, usage, |toks, k| key(toks, k).ok_or_else(|| syntax(usage)))
}

fn list<T>(
    toks: &[&Token],
    mut k: usize,
    usage: &str,
    item: impl Fn(&[&Token], usize) -> Result<(T, usize)>,
) -> Result<(Vec<T>, usize)> {
    if toks.get(k) != Some(&&Token::LParen) {
        return Err(syntax(usage));
    }
    k += 1;
    let mut out = Vec::new();
    loop {
        let (one, next) = item(toks, k)?;
        out.push(one);
        k = next;
        match toks.get(k) {
            Some(Token::Comma) => k += 1,
            Some(Token::RParen) => return Ok((out, k + 1)),
            _ => return Err(syntax(usage)),
        }
    }
}
