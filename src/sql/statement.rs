//! Splitting SQL text into statements and recognising the ones this crate
//! handles itself.
//!
//! | statement                                              | handled by            |
//! |--------------------------------------------------------|-----------------------|
//! | `CREATE TABLE t (…) PARTITIONED BY (day(ts)) [LOCATION '…'] [TBLPROPERTIES (…)]` | hidden-partitions |
//! | `CREATE TABLE t (…)` / `CREATE TABLE t AS SELECT …`     | hidden-partitions (unpartitioned table in the warehouse) |
//! | `EXPLAIN FILES [ANALYZE] SELECT …` (files selected or opened / total per scan) | hidden-partitions |
//! | `ALTER TABLE t ADD / DROP / REPLACE PARTITION FIELD …`, `ALTER TABLE t ADD COLUMN c type` | hidden-partitions |
//! | `ALTER TABLE t CREATE TAG name`, `ALTER TABLE t DROP TAG [IF EXISTS] name` | hidden-partitions |
//! | `ALTER TABLE t WRITE [LOCALLY] ORDERED BY (…)`, `ALTER TABLE t WRITE UNORDERED`, `CREATE TABLE … ORDERED BY (…)` | hidden-partitions |
//! | `ALTER TABLE t SET TBLPROPERTIES (…)`, `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] (…)` | hidden-partitions |
//! | `ALTER TABLE t EXECUTE optimize / expire_snapshots / remove_orphan_files …` | hidden-partitions |
//! | `DROP TABLE [IF EXISTS] t [PURGE]` on a warehouse table (see `catalog::ddl`) | hidden-partitions |
//! | `CREATE SCHEMA [IF NOT EXISTS] s`, `DROP SCHEMA [IF EXISTS] s [CASCADE]` in a warehouse's catalog (see `catalog::namespace`) | hidden-partitions |
//! | `CREATE TABLE u LIKE t` | hidden-partitions (restated as `t`'s CREATE TABLE) |
//! | `CREATE [OR REPLACE] VIEW`, `DROP VIEW`, `CREATE EXTERNAL TABLE` in a warehouse schema | hidden-partitions (stored, see `sql::views`) |
//! | everything else (`SELECT`, `INSERT`, `COPY`, …) | DataFusion |
//!
//! Our clauses are cut out of the statement text by token position; the
//! remaining `CREATE TABLE` is planned by DataFusion, so column types, `NOT
//! NULL`, `AS SELECT` and the type planner all behave exactly as in plain
//! DataFusion.

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

use super::transform_list::{PartitionItem, parse_item, parse_partition_list};
use crate::error::{Error, Result};
use crate::table::{FieldRef, PartitionChange, PartitionFieldDef};

/// One statement of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// `CREATE TABLE` with our clauses removed from `sql`.
    CreateTable(CreateTable),
    /// `EXPLAIN FILES [ANALYZE] <query>`: how many data files the query's
    /// scans select (with ANALYZE: run it and count the files actually opened).
    ExplainFiles { query: String, analyze: bool },
    /// `ALTER TABLE t ADD | DROP | REPLACE PARTITION FIELD …`.
    AlterPartition { table: String, change: PartitionChange },
    /// `ALTER TABLE t ADD COLUMN [IF NOT EXISTS] name type`: `definition`
    /// is `name type`.
    AddColumn {
        table: String,
        definition: String,
        if_not_exists: bool,
    },
    /// `ALTER TABLE [IF EXISTS] t RENAME TO u` / `ALTER VIEW [IF EXISTS] v RENAME TO w`.
    Rename {
        from: String,
        to: String,
        view: bool,
        if_exists: bool,
    },
    /// `ALTER TABLE t DROP COLUMN name`.
    DropColumn { table: String, column: String },
    /// `ALTER TABLE t RENAME COLUMN a TO b`.
    RenameColumn { table: String, from: String, to: String },
    /// `ALTER TABLE t ALTER COLUMN name TYPE type` (safe widening only).
    AlterColumnType {
        table: String,
        column: String,
        definition: String,
    },
    /// `ALTER TABLE t CREATE TAG name` / `ALTER TABLE t DROP TAG [IF EXISTS] name`.
    Tag {
        table: String,
        tag: String,
        create: bool,
        if_exists: bool,
    },
    /// `ALTER TABLE t WRITE [LOCALLY] ORDERED BY …` (`fields`), `WRITE UNORDERED` (none).
    WriteOrder {
        table: String,
        fields: Vec<crate::table::sort_order::SortFieldDef>,
    },
    /// `ALTER TABLE t SET TBLPROPERTIES ('k' = 'v', …)`.
    SetProperties {
        table: String,
        properties: std::collections::BTreeMap<String, String>,
    },
    /// `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', …)`.
    UnsetProperties {
        table: String,
        keys: Vec<String>,
        if_exists: bool,
    },
    /// `ALTER TABLE t EXECUTE optimize | expire_snapshots | remove_orphan_files
    /// [(name => 'value', …)] [WHERE condition]` (Trino's spelling).
    Execute {
        table: String,
        procedure: String,
        args: Vec<(String, String)>,
        condition: Option<String>,
    },
    /// `DROP TABLE [IF EXISTS] names [PURGE]`; `text` is the statement as
    /// written, for names that are not in a warehouse.
    DropTable {
        names: Vec<String>,
        if_exists: bool,
        purge: bool,
        text: String,
    },
    /// `CREATE SCHEMA [IF NOT EXISTS] name`; `text` as written, for a
    /// catalog without a warehouse.
    CreateSchema {
        name: String,
        if_not_exists: bool,
        text: String,
    },
    /// `DROP SCHEMA [IF EXISTS] name [CASCADE | RESTRICT]`.
    DropSchema {
        name: String,
        if_exists: bool,
        cascade: bool,
        text: String,
    },
    /// `CREATE [OR REPLACE] VIEW …`, as written: stored with the warehouse
    /// when it names a warehouse schema (see `catalog::definitions`).
    CreateView(String),
    /// `CREATE [UNBOUNDED] EXTERNAL TABLE …`, as written: likewise.
    CreateExternal(String),
    /// `DROP VIEW [IF EXISTS] name`, as written.
    DropView(String),
    /// Anything else, passed to DataFusion as written.
    Other(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    /// The statement without `PARTITIONED BY`, `LOCATION` and `TBLPROPERTIES`.
    pub sql: String,
    pub partitioned_by: Vec<PartitionItem>,
    /// `ORDERED BY (…)`: the table's write order from the start.
    pub ordered_by: Vec<crate::table::sort_order::SortFieldDef>,
    pub location: Option<String>,
    pub properties: std::collections::BTreeMap<String, String>,
}

impl CreateTable {
    /// Whether none of our clauses was given (DataFusion may run it as it is).
    pub fn is_plain(&self) -> bool {
        self.partitioned_by.is_empty()
            && self.ordered_by.is_empty()
            && self.location.is_none()
            && self.properties.is_empty()
    }
}

/// The statements of `sql` in order, each parsed on its own (as psql and
/// datafusion-cli do): one that does not parse is an `Err` in its place,
/// after the statements before it. Text that cannot even be split (an
/// unterminated string or comment) ends the list with its error, after
/// the complete statements before it. Each comes with the line (1-based)
/// where it starts in `sql`, or where the text stops tokenizing, for
/// `FILE:LINE:` in error messages.
pub fn parse_each(sql: &str) -> Vec<(u64, Result<Statement>)> {
    if let Ok(each) = split(sql) {
        return each;
    }
    // It does not tokenize: the statements that end before the place where
    // it stops tokenizing run, then its error.
    let error = match Tokenizer::new(&GenericDialect {}, sql).tokenize_with_location() {
        Ok(_) => return split(sql).unwrap_or_else(|e| vec![(1, Err(e))]),
        Err(e) => e,
    };
    let offsets = LineOffsets::new(sql);
    let cut = offsets.byte(error.location);
    let head_end = Tokenizer::new(&GenericDialect {}, &sql[..cut])
        .tokenize_with_location()
        .ok()
        .and_then(|head| {
            head.iter()
                .rev()
                .find(|t| t.token == Token::SemiColon)
                .map(|t| offsets.byte(t.span.end))
        });
    let mut out = head_end.map(|end| parse_each(&sql[..end])).unwrap_or_default();
    out.push((
        error.location.line.max(1),
        Err(Error::Invalid(format!("SQL syntax error: {error}"))),
    ));
    out
}

/// Split `sql` into statements and classify each. Statements end at `;`
/// tokens, so a `;` in a string, quoted identifier or comment does not split;
/// comments after a statement's last token are not part of it.
pub fn parse_statements(sql: &str) -> Result<Vec<Statement>> {
    split(sql)?.into_iter().map(|(_, s)| s).collect()
}

/// The statements of `sql`, each classified on its own; an error for text
/// that does not tokenize.
fn split(sql: &str) -> Result<Vec<(u64, Result<Statement>)>> {
    let sql = &*super::literals::exponents_as_doubles(sql)?;
    let tokens = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize_with_location()
        .map_err(|e| Error::Invalid(format!("SQL syntax error: {e}")))?;
    let offsets = LineOffsets::new(sql);
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..=tokens.len() {
        if i == tokens.len() || tokens[i].token == Token::SemiColon {
            let stmt = &tokens[start..i];
            // A trailing `-- comment` would swallow what our rewrites append.
            if let Some(last) = stmt.iter().rposition(|t| !is_trivia(&t.token)) {
                let first = stmt.iter().position(|t| !is_trivia(&t.token)).unwrap_or(last);
                let line = stmt[first].span.start.line.max(1);
                out.push((line, classify(sql, &stmt[..=last], &offsets)));
            }
            start = i + 1;
        }
    }
    Ok(out)
}

fn is_trivia(t: &Token) -> bool {
    matches!(t, Token::Whitespace(_) | Token::EOF)
}

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

fn classify(sql: &str, tokens: &[TokenWithSpan], offsets: &LineOffsets) -> Result<Statement> {
    let significant: Vec<usize> = (0..tokens.len()).filter(|&i| !is_trivia(&tokens[i].token)).collect();
    let first = offsets.byte(tokens[significant[0]].span.start);
    let last = offsets.byte(tokens[significant[significant.len() - 1]].span.end);
    let text = &sql[first..last];
    // `t FOR VERSION AS OF 3` and its kin are `"t@3"` from here on.
    if let std::borrow::Cow::Owned(folded) = super::as_of::rewrite(text)? {
        let tokens = Tokenizer::new(&GenericDialect {}, &folded)
            .tokenize_with_location()
            .map_err(|e| Error::Invalid(format!("SQL syntax error: {e}")))?;
        return classify(&folded, &tokens, &LineOffsets::new(&folded));
    }
    // `table_changes('t', FROM, TO)` is `"t$changes(FROM;TO;)"` from here on.
    if let std::borrow::Cow::Owned(named) = super::table_changes::rewrite(text)? {
        let tokens = Tokenizer::new(&GenericDialect {}, &named)
            .tokenize_with_location()
            .map_err(|e| Error::Invalid(format!("SQL syntax error: {e}")))?;
        return classify(&named, &tokens, &LineOffsets::new(&named));
    }
    // `UPDATE … FROM` and `DELETE … WHERE k IN (SELECT …)` run as MERGE.
    if let Some(merge) = super::dml_as_merge::as_merge(text) {
        let tokens = Tokenizer::new(&GenericDialect {}, &merge)
            .tokenize_with_location()
            .map_err(|e| Error::Invalid(format!("SQL syntax error: {e}")))?;
        return classify(&merge, &tokens, &LineOffsets::new(&merge));
    }
    let kw: Vec<Option<Keyword>> = significant.iter().take(4).map(|&i| keyword(&tokens[i].token)).collect();
    if kw.first() == Some(&Some(Keyword::EXPLAIN))
        && let Some(&i) = significant.get(1)
        && matches!(&tokens[i].token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("files"))
    {
        let mut end_of_keywords = tokens[i].span.end;
        let analyze = significant
            .get(2)
            .is_some_and(|&j| keyword(&tokens[j].token) == Some(Keyword::ANALYZE));
        if analyze {
            end_of_keywords = tokens[significant[2]].span.end;
        }
        let query_start = offsets.byte(end_of_keywords);
        return Ok(Statement::ExplainFiles {
            query: sql[query_start..last].trim().to_string(),
            analyze,
        });
    }
    if let [Some(Keyword::DROP), Some(Keyword::TABLE), ..] = kw.as_slice()
        && let Some(drop) = drop_table(text, tokens, &significant)
    {
        return Ok(drop);
    }
    if let [Some(Keyword::CREATE | Keyword::DROP), Some(Keyword::SCHEMA), ..] = kw.as_slice()
        && let Some(schema) = schema_statement(text, tokens, &significant)
    {
        return Ok(schema);
    }
    if let [Some(Keyword::ALTER), Some(Keyword::TABLE | Keyword::VIEW), ..] = kw.as_slice()
        && let Some(rename) = rename_statement(tokens, &significant)?
    {
        return Ok(rename);
    }
    if let [Some(Keyword::ALTER), Some(Keyword::TABLE), ..] = kw.as_slice()
        && let Some(alter) = alter_partition(tokens, &significant)?
    {
        return Ok(alter);
    }
    let words: Vec<Option<Keyword>> = significant.iter().take(5).map(|&i| keyword(&tokens[i].token)).collect();
    match words.as_slice() {
        [Some(Keyword::CREATE), Some(Keyword::VIEW), ..]
        | [
            Some(Keyword::CREATE),
            Some(Keyword::OR),
            Some(Keyword::REPLACE),
            Some(Keyword::VIEW),
            ..,
        ] => return Ok(Statement::CreateView(text.to_string())),
        [Some(Keyword::CREATE), Some(Keyword::EXTERNAL), ..]
        | [
            Some(Keyword::CREATE),
            Some(Keyword::UNBOUNDED),
            Some(Keyword::EXTERNAL),
            ..,
        ]
        | [
            Some(Keyword::CREATE),
            Some(Keyword::OR),
            Some(Keyword::REPLACE),
            Some(Keyword::EXTERNAL),
            ..,
        ] => return Ok(Statement::CreateExternal(text.to_string())),
        [Some(Keyword::DROP), Some(Keyword::VIEW), ..] => return Ok(Statement::DropView(text.to_string())),
        _ => {}
    }
    let is_create_table = match kw.as_slice() {
        [Some(Keyword::CREATE), Some(Keyword::TABLE), ..] => true,
        [
            Some(Keyword::CREATE),
            Some(Keyword::OR),
            Some(Keyword::REPLACE),
            Some(Keyword::TABLE),
        ] => true,
        _ => false,
    };
    if !is_create_table {
        return Ok(Statement::Other(text.to_string()));
    }
    // Find our clauses at parenthesis depth 0, before the query (`AS …`),
    // each at most once.
    let mut depth = 0i32;
    let mut cut: Vec<(usize, usize)> = Vec::new();
    let mut partitioned_by = Vec::new();
    let mut partitioned = false;
    let mut ordered_by = Vec::new();
    let mut location = None;
    let mut properties = std::collections::BTreeMap::new();
    let mut with_properties = std::collections::BTreeMap::new();
    let mut with_given = false;
    let mut k = 0;
    while k < significant.len() {
        let i = significant[k];
        match &tokens[i].token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if depth == 0 && w.quote_style.is_none() && w.keyword == Keyword::AS => break,
            Token::Word(w) if depth == 0 && w.quote_style.is_none() => {
                if w.keyword == Keyword::PARTITIONED
                    && significant.get(k + 1).map(|&j| keyword(&tokens[j].token)) == Some(Some(Keyword::BY))
                {
                    if std::mem::replace(&mut partitioned, true) {
                        return Err(syntax(
                            "PARTITIONED BY is given twice (or also as WITH (partitioning = …)); give one list of partition fields",
                        ));
                    }
                    let open = *significant
                        .get(k + 2)
                        .ok_or_else(|| syntax("PARTITIONED BY needs a list in parentheses"))?;
                    if tokens[open].token != Token::LParen {
                        return Err(syntax("PARTITIONED BY needs a list in parentheses"));
                    }
                    let close = matching_paren(tokens, open)?;
                    partitioned_by = parse_partition_list(&tokens[open + 1..close])?;
                    cut.push((offsets.byte(tokens[i].span.start), offsets.byte(tokens[close].span.end)));
                    k = after_token(&significant, close);
                    continue;
                }
                let next_keyword = significant.get(k + 1).map(|&j| keyword(&tokens[j].token));
                let word_at = |n: usize, word: &str| {
                    significant.get(n).is_some_and(|&j| matches!(&tokens[j].token, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(word)))
                };
                let ordered_at = if word_at(k, "ordered") && word_at(k + 1, "by") {
                    Some(k)
                } else if w.keyword == Keyword::WRITE && word_at(k + 1, "ordered") && word_at(k + 2, "by") {
                    Some(k + 1)
                } else {
                    None
                };
                if let Some(at) = ordered_at {
                    if !ordered_by.is_empty() {
                        return Err(syntax("ORDERED BY is given twice; give one list of sort terms"));
                    }
                    let open = *significant
                        .get(at + 2)
                        .ok_or_else(|| syntax("ORDERED BY needs a list in parentheses"))?;
                    if tokens[open].token != Token::LParen {
                        return Err(syntax(
                            "CREATE TABLE … ORDERED BY needs a list in parentheses: ORDERED BY (a, b DESC)",
                        ));
                    }
                    let close = matching_paren(tokens, open)?;
                    let toks: Vec<&Token> = tokens[open..=close]
                        .iter()
                        .map(|t| &t.token)
                        .filter(|t| !is_trivia(t))
                        .collect();
                    ordered_by = super::sort_list::parse_sort_list(&toks)?;
                    cut.push((offsets.byte(tokens[i].span.start), offsets.byte(tokens[close].span.end)));
                    k = after_token(&significant, close);
                    continue;
                }
                if w.keyword == Keyword::PARTITION && next_keyword == Some(Some(Keyword::BY)) {
                    return Err(syntax(
                        "CREATE TABLE takes PARTITIONED BY (…), not PARTITION BY: did you mean PARTITIONED BY?",
                    ));
                }
                // Spark's `USING iceberg`: every table here is an Iceberg table.
                if w.keyword == Keyword::USING {
                    let format = significant.get(k + 1).map(|&j| &tokens[j]);
                    let Some(TokenWithSpan {
                        token: Token::Word(f),
                        span,
                    }) = format
                    else {
                        return Err(syntax("USING needs a table format: USING iceberg"));
                    };
                    if !["iceberg", "parquet"].iter().any(|ok| f.value.eq_ignore_ascii_case(ok)) {
                        return Err(Error::Invalid(format!(
                            "CREATE TABLE … USING {}: tables here are Iceberg tables (Parquet files); write USING iceberg or leave USING out",
                            f.value
                        )));
                    }
                    cut.push((offsets.byte(tokens[i].span.start), offsets.byte(span.end)));
                    k += 2;
                    continue;
                }
                // Trino's `WITH (partitioning = ARRAY[…], format = 'PARQUET', …)`.
                if w.keyword == Keyword::WITH
                    && let Some(&open) = significant.get(k + 1)
                    && tokens[open].token == Token::LParen
                {
                    if with_given {
                        return Err(syntax("WITH (…) is given twice; give one list of table properties"));
                    }
                    with_given = true;
                    let close = matching_paren(tokens, open)?;
                    let toks: Vec<&Token> = tokens[open + 1..close]
                        .iter()
                        .map(|t| &t.token)
                        .filter(|t| !is_trivia(t))
                        .collect();
                    let with = super::with_properties::parse(&toks)?;
                    if let Some(list) = with.partitioning {
                        if std::mem::replace(&mut partitioned, true) {
                            return Err(syntax(
                                "the partition fields are given twice (PARTITIONED BY and partitioning = …); give one list",
                            ));
                        }
                        partitioned_by = list;
                    }
                    if let Some(path) = with.location {
                        if location.replace(path).is_some() {
                            return Err(syntax("LOCATION is given twice; a table has one location"));
                        }
                    }
                    with_properties = with.properties;
                    cut.push((offsets.byte(tokens[i].span.start), offsets.byte(tokens[close].span.end)));
                    k = after_token(&significant, close);
                    continue;
                }
                if w.value.eq_ignore_ascii_case("tblproperties") {
                    if !properties.is_empty() {
                        return Err(syntax("TBLPROPERTIES is given twice; give one list"));
                    }
                    let toks: Vec<&Token> = significant.iter().map(|&j| &tokens[j].token).collect();
                    let (pairs, end) = super::tblproperties::pairs(&toks, k + 1)?;
                    properties = pairs;
                    let close = significant[end - 1];
                    cut.push((offsets.byte(tokens[i].span.start), offsets.byte(tokens[close].span.end)));
                    k = end;
                    continue;
                }
                if w.keyword == Keyword::LOCATION {
                    if location.is_some() {
                        return Err(syntax("LOCATION is given twice; a table has one location"));
                    }
                    let v = *significant
                        .get(k + 1)
                        .ok_or_else(|| syntax("LOCATION needs a quoted path"))?;
                    let Token::SingleQuotedString(path) = &tokens[v].token else {
                        return Err(syntax("LOCATION needs a quoted path"));
                    };
                    location = Some(path.clone());
                    cut.push((offsets.byte(tokens[i].span.start), offsets.byte(tokens[v].span.end)));
                    k += 2;
                    continue;
                }
            }
            _ => {}
        }
        k += 1;
    }
    let mut stripped = String::with_capacity(text.len());
    let mut pos = first;
    for (a, b) in cut {
        stripped.push_str(&sql[pos..a]);
        stripped.push(' ');
        pos = b;
    }
    stripped.push_str(&sql[pos..last]);
    for (key, value) in with_properties {
        if properties.insert(key.clone(), value).is_some() {
            return Err(syntax(&format!("table property {key} is given twice")));
        }
    }
    Ok(Statement::CreateTable(CreateTable {
        sql: stripped,
        partitioned_by,
        ordered_by,
        location,
        properties,
    }))
}

/// `ALTER TABLE | VIEW [IF EXISTS] name RENAME TO new_name`, or `None` for
/// other ALTER statements (`RENAME COLUMN` among them).
fn rename_statement(tokens: &[TokenWithSpan], significant: &[usize]) -> Result<Option<Statement>> {
    let toks: Vec<&Token> = significant.iter().map(|&i| &tokens[i].token).collect();
    let view = keyword(toks[1]) == Some(Keyword::VIEW);
    let if_exists = toks.get(2).and_then(|t| keyword(t)) == Some(Keyword::IF)
        && toks.get(3).and_then(|t| keyword(t)) == Some(Keyword::EXISTS);
    let (from, k) = object_name(&toks, if if_exists { 4 } else { 2 });
    if from.is_empty()
        || toks.get(k).and_then(|t| keyword(t)) != Some(Keyword::RENAME)
        || toks.get(k + 1).and_then(|t| keyword(t)) != Some(Keyword::TO)
    {
        return Ok(None);
    }
    let (to, end) = object_name(&toks, k + 2);
    if to.is_empty() || end != toks.len() {
        let what = if view { "VIEW" } else { "TABLE" };
        return Err(syntax(&format!("expected ALTER {what} name RENAME TO new_name")));
    }
    Ok(Some(Statement::Rename {
        from,
        to,
        view,
        if_exists,
    }))
}

/// `ALTER TABLE name (ADD | DROP | REPLACE) PARTITION FIELD …`, or `None`
/// for other ALTER TABLE statements.
fn alter_partition(tokens: &[TokenWithSpan], significant: &[usize]) -> Result<Option<Statement>> {
    let toks: Vec<&Token> = significant.iter().map(|&i| &tokens[i].token).collect();
    let (name, k) = object_name(&toks, 2);
    let action = toks.get(k).and_then(|t| keyword(t));
    if !name.is_empty()
        && action == Some(Keyword::ADD)
        && toks.get(k + 1).and_then(|t| keyword(t)) == Some(Keyword::COLUMN)
    {
        let if_not_exists = [Keyword::IF, Keyword::NOT, Keyword::EXISTS]
            .iter()
            .enumerate()
            .all(|(n, kw)| toks.get(k + 2 + n).and_then(|t| keyword(t)) == Some(*kw));
        let skip = if if_not_exists { 5 } else { 2 };
        if let Some(&first) = significant.get(k + skip) {
            let definition = tokens[first..].iter().map(|t| t.token.to_string()).collect::<String>();
            return Ok(Some(Statement::AddColumn {
                table: name,
                definition: definition.trim().to_string(),
                if_not_exists,
            }));
        }
    }
    let column_name = |t: Option<&&Token>| match t {
        Some(Token::Word(w)) if w.quote_style.is_some() => Some(w.value.clone()),
        Some(Token::Word(w)) => Some(w.value.to_ascii_lowercase()),
        _ => None,
    };
    if !name.is_empty()
        && action == Some(Keyword::RENAME)
        && toks.get(k + 1).and_then(|t| keyword(t)) == Some(Keyword::COLUMN)
        && let Some(from) = column_name(toks.get(k + 2))
        && toks.get(k + 3).and_then(|t| keyword(t)) == Some(Keyword::TO)
        && let Some(to) = column_name(toks.get(k + 4))
    {
        return Ok(Some(Statement::RenameColumn { table: name, from, to }));
    }
    if !name.is_empty()
        && action == Some(Keyword::DROP)
        && toks.get(k + 1).and_then(|t| keyword(t)) == Some(Keyword::COLUMN)
        && let Some(column) = column_name(toks.get(k + 2))
    {
        return Ok(Some(Statement::DropColumn { table: name, column }));
    }
    if !name.is_empty()
        && action == Some(Keyword::ALTER)
        && toks.get(k + 1).and_then(|t| keyword(t)) == Some(Keyword::COLUMN)
        && let Some(column) = column_name(toks.get(k + 2))
        && toks.get(k + 3).and_then(|t| keyword(t)) == Some(Keyword::TYPE)
        && let Some(&first) = significant.get(k + 4)
    {
        let ty = tokens[first..].iter().map(|t| t.token.to_string()).collect::<String>();
        return Ok(Some(Statement::AlterColumnType {
            table: name,
            definition: format!("{column} {}", ty.trim()),
            column,
        }));
    }
    let is_word = |t: Option<&&Token>, word: &str| matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word));
    if !name.is_empty() && matches!(action, Some(Keyword::SET)) && is_word(toks.get(k + 1), "tblproperties") {
        let (properties, end) = super::tblproperties::pairs(&toks, k + 2)?;
        if end != toks.len() {
            return Err(syntax("expected ALTER TABLE t SET TBLPROPERTIES ('key' = 'value', …)"));
        }
        return Ok(Some(Statement::SetProperties {
            table: name,
            properties,
        }));
    }
    if !name.is_empty() && is_word(toks.get(k), "unset") && is_word(toks.get(k + 1), "tblproperties") {
        let if_exists = toks.get(k + 2).and_then(|t| keyword(t)) == Some(Keyword::IF)
            && toks.get(k + 3).and_then(|t| keyword(t)) == Some(Keyword::EXISTS);
        let (keys, end) = super::tblproperties::keys(&toks, if if_exists { k + 4 } else { k + 2 })?;
        if end != toks.len() {
            return Err(syntax(
                "expected ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('key', …)",
            ));
        }
        return Ok(Some(Statement::UnsetProperties {
            table: name,
            keys,
            if_exists,
        }));
    }
    if !name.is_empty() && action == Some(Keyword::EXECUTE) {
        return execute_procedure(name, tokens, significant, k + 1).map(Some);
    }
    if !name.is_empty() && action == Some(Keyword::WRITE) {
        return write_order(name, &toks[k + 1..]).map(Some);
    }
    if !name.is_empty() && matches!(action, Some(Keyword::CREATE | Keyword::DROP)) && is_word(toks.get(k + 1), "tag") {
        let create = action == Some(Keyword::CREATE);
        let if_exists = !create
            && toks.get(k + 2).and_then(|t| keyword(t)) == Some(Keyword::IF)
            && toks.get(k + 3).and_then(|t| keyword(t)) == Some(Keyword::EXISTS);
        let at = if if_exists { k + 4 } else { k + 2 };
        let Some(tag) = column_name(toks.get(at)).filter(|_| at + 1 == toks.len()) else {
            return Err(syntax(
                "expected ALTER TABLE t CREATE TAG name, or ALTER TABLE t DROP TAG [IF EXISTS] name",
            ));
        };
        return Ok(Some(Statement::Tag {
            table: name,
            tag,
            create,
            if_exists,
        }));
    }
    let is_partition_field = toks.get(k + 1).and_then(|t| keyword(t)) == Some(Keyword::PARTITION)
        && matches!(toks.get(k + 2), Some(Token::Word(w)) if w.value.eq_ignore_ascii_case("field"));
    if name.is_empty() || !is_partition_field {
        return Ok(None);
    }
    let rest = &toks[k + 3..];
    let def = |item: PartitionItem| PartitionFieldDef {
        source: item.source,
        transform: item.transform,
        name: item.name,
    };
    let field_ref = |t: &[&Token]| -> Result<FieldRef> {
        match t {
            [Token::Word(w)] => Ok(FieldRef::Name(w.value.clone())),
            _ => Ok(FieldRef::Definition(def(parse_item(t)?))),
        }
    };
    let change = match action {
        Some(Keyword::ADD) => PartitionChange::Add(def(parse_item(rest)?)),
        Some(Keyword::DROP) => PartitionChange::Drop(field_ref(rest)?),
        Some(Keyword::REPLACE) => {
            let Some(w) = rest.iter().position(|t| keyword(t) == Some(Keyword::WITH)) else {
                return Err(syntax("REPLACE PARTITION FIELD needs WITH <transform>"));
            };
            PartitionChange::Replace(field_ref(&rest[..w])?, def(parse_item(&rest[w + 1..])?))
        }
        _ => return Ok(None),
    };
    Ok(Some(Statement::AlterPartition { table: name, change }))
}

/// What follows `ALTER TABLE t WRITE` (Spark-Iceberg's write order):
/// `[LOCALLY] ORDERED BY …`, `DISTRIBUTED BY PARTITION [LOCALLY] ORDERED BY …`
/// (files are always written per partition) or `UNORDERED`.
fn write_order(table: String, toks: &[&Token]) -> Result<Statement> {
    let usage = "expected ALTER TABLE t WRITE [LOCALLY] ORDERED BY (col [ASC|DESC] [NULLS FIRST|LAST], …), or ALTER TABLE t WRITE UNORDERED";
    let is = |t: Option<&&Token>, word: &str| matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word));
    let mut k = 0;
    if is(toks.first(), "unordered") && toks.len() == 1 {
        return Ok(Statement::WriteOrder {
            table,
            fields: Vec::new(),
        });
    }
    if is(toks.get(k), "distributed") {
        if !(is(toks.get(k + 1), "by") && is(toks.get(k + 2), "partition")) {
            return Err(syntax(
                "WRITE DISTRIBUTED BY takes PARTITION only (rows are always written per partition)",
            ));
        }
        k += 3;
        if k == toks.len() {
            return Err(syntax(
                "WRITE DISTRIBUTED BY PARTITION changes nothing here (rows are always written per partition); add LOCALLY ORDERED BY … to order them",
            ));
        }
    }
    if is(toks.get(k), "locally") {
        k += 1;
    }
    if !(is(toks.get(k), "ordered") && is(toks.get(k + 1), "by")) {
        return Err(syntax(usage));
    }
    let fields = super::sort_list::parse_sort_list(&toks[k + 2..])?;
    Ok(Statement::WriteOrder { table, fields })
}

/// `ALTER TABLE t EXECUTE procedure [(name => 'value', …)] [WHERE condition]`,
/// `significant[k]` being the procedure's name.
fn execute_procedure(
    table: String,
    tokens: &[TokenWithSpan],
    significant: &[usize],
    mut k: usize,
) -> Result<Statement> {
    let usage = "expected ALTER TABLE t EXECUTE procedure [(name => 'value', …)] [WHERE condition]";
    let toks: Vec<&Token> = significant.iter().map(|&i| &tokens[i].token).collect();
    let Some(Token::Word(procedure)) = toks.get(k) else {
        return Err(syntax(usage));
    };
    let procedure = procedure.value.to_ascii_lowercase();
    k += 1;
    let mut args = Vec::new();
    if toks.get(k) == Some(&&Token::LParen) {
        k += 1;
        while toks.get(k) != Some(&&Token::RParen) {
            let (Some(Token::Word(arg)), Some(Token::RArrow)) = (toks.get(k), toks.get(k + 1)) else {
                return Err(syntax(usage));
            };
            let value = match toks.get(k + 2) {
                Some(Token::SingleQuotedString(v)) => v.clone(),
                Some(Token::Number(v, _)) => v.clone(),
                Some(Token::Minus) => match toks.get(k + 3) {
                    Some(Token::SingleQuotedString(v)) | Some(Token::Number(v, _)) => {
                        k += 1;
                        format!("-{v}")
                    }
                    _ => return Err(syntax(usage)),
                },
                _ => return Err(syntax(usage)),
            };
            args.push((arg.value.to_ascii_lowercase(), value));
            k += 3;
            match toks.get(k) {
                Some(Token::Comma) => k += 1,
                Some(Token::RParen) => {}
                _ => return Err(syntax(usage)),
            }
        }
        k += 1;
    }
    let condition = match toks.get(k).and_then(|t| keyword(t)) {
        None if k == toks.len() => None,
        Some(Keyword::WHERE) => {
            let from = significant[k] + 1;
            let text: String = tokens[from..].iter().map(|t| t.token.to_string()).collect();
            Some(text.trim().to_string())
        }
        _ => return Err(syntax(usage)),
    };
    Ok(Statement::Execute {
        table,
        procedure,
        args,
        condition,
    })
}

/// A possibly qualified name (`t`, `s.t`, `"My T"`) starting at `toks[k]`,
/// and the index after it; empty when `toks[k]` is not a word. The name is
/// given back as SQL (quoted parts quoted, with `"`), so that every statement
/// resolves it the one way DataFusion does ([`table_reference`]): quoted
/// parts keep their case and any `.` in them, unquoted parts are
/// lower-cased (unless the session turned identifier normalization off).
fn object_name(toks: &[&Token], mut k: usize) -> (String, usize) {
    let mut name = String::new();
    loop {
        match toks.get(k) {
            Some(Token::Word(w)) if w.quote_style.is_some() => {
                name.push_str(&format!("\"{}\"", w.value.replace('"', "\"\"")));
            }
            Some(Token::Word(w)) => name.push_str(&w.value),
            _ => return (name, k),
        }
        k += 1;
        if toks.get(k) != Some(&&Token::Period) {
            return (name, k);
        }
        name.push('.');
        k += 1;
    }
}

/// A name from [`parse_statements`] as the session's SQL planner resolves it.
pub use crate::catalog::namespace::table_reference;

/// `CREATE SCHEMA [IF NOT EXISTS] s` / `DROP SCHEMA [IF EXISTS] s [CASCADE | RESTRICT]`;
/// `None` for other forms (left to DataFusion).
fn schema_statement(text: &str, tokens: &[TokenWithSpan], significant: &[usize]) -> Option<Statement> {
    let toks: Vec<&Token> = significant.iter().map(|&i| &tokens[i].token).collect();
    let create = keyword(toks[0]) == Some(Keyword::CREATE);
    let mut k = 2;
    let conditional = match create {
        true => [Keyword::IF, Keyword::NOT, Keyword::EXISTS].as_slice(),
        false => [Keyword::IF, Keyword::EXISTS].as_slice(),
    };
    let guarded = conditional
        .iter()
        .enumerate()
        .all(|(i, kw)| toks.get(k + i).and_then(|t| keyword(t)) == Some(*kw));
    if guarded {
        k += conditional.len();
    }
    let (name, next) = object_name(&toks, k);
    if name.is_empty() {
        return None;
    }
    k = next;
    if create {
        return (k == toks.len()).then(|| Statement::CreateSchema {
            name,
            if_not_exists: guarded,
            text: text.to_string(),
        });
    }
    let behaviour = toks.get(k).and_then(|t| keyword(t));
    let cascade = behaviour == Some(Keyword::CASCADE);
    if matches!(behaviour, Some(Keyword::CASCADE | Keyword::RESTRICT)) {
        k += 1;
    }
    (k == toks.len()).then(|| Statement::DropSchema {
        name,
        if_exists: guarded,
        cascade,
        text: text.to_string(),
    })
}

/// `DROP TABLE [IF EXISTS] a [, b …] [CASCADE | RESTRICT] [PURGE]`.
fn drop_table(text: &str, tokens: &[TokenWithSpan], significant: &[usize]) -> Option<Statement> {
    let toks: Vec<&Token> = significant.iter().map(|&i| &tokens[i].token).collect();
    let mut k = 2;
    let if_exists = toks.get(k).and_then(|t| keyword(t)) == Some(Keyword::IF)
        && toks.get(k + 1).and_then(|t| keyword(t)) == Some(Keyword::EXISTS);
    if if_exists {
        k += 2;
    }
    let mut names = Vec::new();
    loop {
        let (name, next) = object_name(&toks, k);
        if name.is_empty() {
            return None;
        }
        names.push(name);
        k = next;
        if toks.get(k) == Some(&&Token::Comma) {
            k += 1;
            continue;
        }
        break;
    }
    if matches!(
        toks.get(k).and_then(|t| keyword(t)),
        Some(Keyword::CASCADE | Keyword::RESTRICT)
    ) {
        k += 1;
    }
    let purge = toks.get(k).and_then(|t| keyword(t)) == Some(Keyword::PURGE);
    if purge {
        k += 1;
    }
    (k == toks.len()).then(|| Statement::DropTable {
        names,
        if_exists,
        purge,
        text: text.to_string(),
    })
}

/// The index in `significant` just after token `close`.
fn after_token(significant: &[usize], close: usize) -> usize {
    significant
        .iter()
        .position(|&j| j == close)
        .unwrap_or(significant.len())
        + 1
}

fn matching_paren(tokens: &[TokenWithSpan], open: usize) -> Result<usize> {
    let mut depth = 0;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Ok(j);
                }
            }
            _ => {}
        }
    }
    Err(syntax("unbalanced parentheses"))
}

fn syntax(msg: &str) -> Error {
    Error::Invalid(format!("SQL syntax error: {msg}"))
}

/// Line/column (1-based, columns in chars) → byte offset.
pub(crate) struct LineOffsets {
    lines: Vec<(usize, Vec<usize>)>,
    len: usize,
}

impl LineOffsets {
    pub(crate) fn new(sql: &str) -> Self {
        let mut lines = Vec::new();
        let mut start = 0;
        for line in sql.split_inclusive('\n') {
            let cols: Vec<usize> = line.char_indices().map(|(b, _)| start + b).collect();
            lines.push((start, cols));
            start += line.len();
        }
        Self { lines, len: sql.len() }
    }

    pub(crate) fn byte(&self, loc: Location) -> usize {
        let Some((start, cols)) = self.lines.get((loc.line as usize).saturating_sub(1)) else {
            return self.len;
        };
        cols.get((loc.column as usize).saturating_sub(1))
            .copied()
            .unwrap_or_else(|| {
                // Just past the line's last char.
                cols.last()
                    .map(|_| start + (self.line_len(loc.line as usize - 1)))
                    .unwrap_or(*start)
            })
    }

    fn line_len(&self, idx: usize) -> usize {
        let next = self.lines.get(idx + 1).map(|(s, _)| *s).unwrap_or(self.len);
        next - self.lines[idx].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::Transform;

    #[test]
    fn splits_and_strips_our_clauses() {
        let sql = "CREATE TABLE t (id BIGINT, ts TIMESTAMP, s VARCHAR) PARTITIONED BY (day(ts), bucket(16, id), truncate(4, s), s) LOCATION '/tmp/x;y';\n INSERT INTO t VALUES (1, now(), 'a;b');";
        let stmts = parse_statements(sql).unwrap();
        assert_eq!(stmts.len(), 2);
        let Statement::CreateTable(c) = &stmts[0] else {
            panic!("{stmts:?}")
        };
        assert_eq!(c.sql.trim_end(), "CREATE TABLE t (id BIGINT, ts TIMESTAMP, s VARCHAR)");
        assert_eq!(c.location.as_deref(), Some("/tmp/x;y"));
        let t: Vec<Transform> = c.partitioned_by.iter().map(|p| p.transform).collect();
        assert_eq!(
            t,
            vec![
                Transform::Day,
                Transform::Bucket(16),
                Transform::Truncate(4),
                Transform::Identity
            ]
        );
        assert_eq!(
            stmts[1],
            Statement::Other("INSERT INTO t VALUES (1, now(), 'a;b')".into())
        );
    }

    #[test]
    fn ctas_keeps_its_query() {
        let stmts = parse_statements("create table t partitioned by (years(ts)) as select * from s").unwrap();
        let Statement::CreateTable(c) = &stmts[0] else { panic!() };
        assert_eq!(c.sql, "create table t   as select * from s");
        assert_eq!(c.partitioned_by[0].transform, Transform::Year);
    }

    #[test]
    fn drop_table_forms() {
        let stmts = parse_statements("DROP TABLE IF EXISTS a, \"My T\".b PURGE; drop table t; DROP TABLE").unwrap();
        assert_eq!(
            stmts[0],
            Statement::DropTable {
                names: vec!["a".into(), "\"My T\".b".into()],
                if_exists: true,
                purge: true,
                text: "DROP TABLE IF EXISTS a, \"My T\".b PURGE".into()
            }
        );
        assert!(matches!(&stmts[1], Statement::DropTable { names, purge: false, .. } if names == &["t"]));
        assert!(matches!(&stmts[2], Statement::Other(_)));
    }

    #[test]
    fn schema_statements() {
        let stmts =
            parse_statements("CREATE SCHEMA IF NOT EXISTS \"S2\"; drop schema if exists s2 cascade; DROP SCHEMA c.s")
                .unwrap();
        assert!(matches!(&stmts[0], Statement::CreateSchema { name, if_not_exists: true, .. } if name == "\"S2\""));
        assert!(
            matches!(&stmts[1], Statement::DropSchema { name, if_exists: true, cascade: true, .. } if name == "s2")
        );
        assert!(
            matches!(&stmts[2], Statement::DropSchema { name, if_exists: false, cascade: false, .. } if name == "c.s")
        );
    }

    #[test]
    fn execute_procedures() {
        let stmts = parse_statements(
            "ALTER TABLE t EXECUTE optimize(file_size_threshold => '64MB') WHERE ts >= DATE '2024-01-01';
             ALTER TABLE t EXECUTE expire_snapshots(retention_threshold => '7d');
             alter table t execute remove_orphan_files",
        )
        .unwrap();
        assert_eq!(
            stmts[0],
            Statement::Execute {
                table: "t".into(),
                procedure: "optimize".into(),
                args: vec![("file_size_threshold".into(), "64MB".into())],
                condition: Some("ts >= DATE '2024-01-01'".into()),
            }
        );
        assert!(
            matches!(&stmts[1], Statement::Execute { procedure, args, condition: None, .. }
            if procedure == "expire_snapshots" && args == &[("retention_threshold".to_string(), "7d".to_string())])
        );
        assert!(matches!(&stmts[2], Statement::Execute { args, .. } if args.is_empty()));
        assert!(parse_statements("ALTER TABLE t EXECUTE optimize(x = 1)").is_err());
    }

    #[test]
    fn semicolons_in_strings_identifiers_and_comments_do_not_split() {
        let stmts = parse_statements(
            "SELECT 'a;b', \"c;d\" -- e;f\n /* g; /* h; */ i; */ FROM t; SELECT $$j;k$$; -- l;\n/* m; */",
        )
        .unwrap();
        assert_eq!(stmts.len(), 2, "{stmts:?}");
        assert!(matches!(&stmts[1], Statement::Other(s) if s == "SELECT $$j;k$$"));
    }

    #[test]
    fn trailing_comments_are_not_part_of_a_statement() {
        let stmts = parse_statements(
            "ALTER TABLE t ADD COLUMN c INT -- note\n; ALTER TABLE t ALTER COLUMN c TYPE BIGINT /* wider */;\n\
             ALTER TABLE t EXECUTE optimize WHERE s = 'a' -- only a",
        )
        .unwrap();
        assert_eq!(
            stmts[0],
            Statement::AddColumn {
                table: "t".into(),
                definition: "c INT".into(),
                if_not_exists: false,
            }
        );
        assert!(matches!(&stmts[1], Statement::AlterColumnType { definition, .. } if definition == "c BIGINT"));
        assert!(matches!(&stmts[2], Statement::Execute { condition: Some(c), .. } if c == "s = 'a'"));
    }

    #[test]
    fn multi_line_offsets() {
        let sql = "SELECT 'é';\nCREATE TABLE t\n (a INT)\n PARTITIONED BY (a);";
        let stmts = parse_statements(sql).unwrap();
        let Statement::CreateTable(c) = &stmts[1] else { panic!() };
        assert_eq!(c.sql.trim_end(), "CREATE TABLE t\n (a INT)");
    }
}
