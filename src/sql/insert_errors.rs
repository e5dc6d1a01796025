//! Value errors that name the value, the type and the column: those of
//! INSERT (below), and failed casts of any statement (`WHERE ts = 'x'`,
//! `SET id = 3000000000`, `CAST('x' AS INT)`: [`explain_cast`]).
//!
//! DataFusion reports a value that does not fit its column, or a NULL in a
//! NOT NULL column, in the terms of its plan, not of the statement:
//!
//! | DataFusion says                                                        | we say |
//! |------------------------------------------------------------------------|--------|
//! | `Optimizer rule 'simplify_expressions' failed … Cannot cast string 'abc' to value of Int32 type` | `INSERT INTO t: value 'abc' does not fit column a (INT) …` |
//! | `… Can't cast value 3000000000 to type Int32`, `… Error parsing timestamp from 'x'` | (same) |
//! | `Column 'column1' is declared as non-nullable but contains null values` | `INSERT INTO t: column a is NOT NULL …` |
//! | `Invalid batch column at '0' has null but schema specifies non-nullable` | (same) |
//!
//! The failed statement is parsed again to find the target columns (its
//! column list, or the table's columns in order); for a cast the column is
//! the one whose VALUES position holds the literal the message quotes.
//! Anything not recognised keeps DataFusion's message.

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{Expr, Insert, ObjectNamePart, SelectItem, SetExpr, Statement, Value};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

use crate::error::Error;

/// `error` of the INSERT `sql`, with the column it is about named when it
/// can be told; otherwise `error` as it is.
pub async fn explain(ctx: &SessionContext, sql: &str, error: Error) -> Error {
    let Some(insert) = parse_insert(sql) else {
        return error;
    };
    let table = insert.table.to_string();
    let Ok(provider) = ctx.table_provider(table.as_str()).await else {
        return error;
    };
    let schema = provider.schema();
    let message = error.to_string();
    let targets = target_columns(&insert, &schema);
    if let Some(column) = not_null_column(&message, &targets, &schema) {
        return Error::Invalid(format!(
            "INSERT INTO {table}: column {column} is NOT NULL, and the statement gives it a NULL; nothing was committed"
        ));
    }
    if let Some((value, to)) = cast_failure(&message)
        && let Some(column) = values_column(&insert, &value, &targets)
    {
        let column_type = column_sql_type(&schema, &column).unwrap_or_else(|| sql_type_name(&to));
        return Error::Invalid(format!(
            "INSERT INTO {table}: value {} does not fit column {column} ({column_type}): it cannot be cast to {}; nothing was committed",
            quoted(&value),
            sql_type_name(&to)
        ));
    }
    explain_cast(sql, error)
}

fn parse_insert(sql: &str) -> Option<Insert> {
    match Parser::parse_sql(&GenericDialect {}, sql).ok()?.pop()? {
        Statement::Insert(insert) => Some(insert),
        _ => None,
    }
}

/// The columns the statement's values go to, in order.
fn target_columns(insert: &Insert, schema: &SchemaRef) -> Vec<String> {
    if insert.columns.is_empty() {
        return schema.fields().iter().map(|f| f.name().clone()).collect();
    }
    insert
        .columns
        .iter()
        .filter_map(|c| match c.0.last()? {
            ObjectNamePart::Identifier(ident) => Some(match ident.quote_style {
                Some(_) => ident.value.clone(),
                None => ident.value.to_lowercase(),
            }),
            _ => None,
        })
        .collect()
}

/// The NOT NULL column a null-check message is about.
fn not_null_column(message: &str, targets: &[String], schema: &SchemaRef) -> Option<String> {
    // "Column 'column2' is declared as non-nullable": the 2nd value.
    if let Some(rest) = message.split("Column 'column").nth(1)
        && message.contains("declared as non-nullable")
    {
        let n: usize = rest.split('\'').next()?.parse().ok()?;
        return targets.get(n.checked_sub(1)?).cloned();
    }
    // "Invalid batch column at '0' has null": the table's column 0.
    if let Some(rest) = message.split("Invalid batch column at '").nth(1)
        && message.contains("has null but schema specifies non-nullable")
    {
        let n: usize = rest.split('\'').next()?.parse().ok()?;
        return schema.fields().get(n).map(|f| f.name().clone());
    }
    None
}

/// `(value, Arrow type)` of a failed cast as DataFusion words it:
/// "Cannot cast string 'v' to value of Int32 type", "Can't cast value
/// 3000000000 to type Int32", "Error parsing timestamp from 'v'".
fn cast_failure(message: &str) -> Option<(String, String)> {
    if let Some(rest) = message.split("Cannot cast string '").nth(1) {
        let (value, rest) = rest.split_once("' to value of ")?;
        let to = rest.split(" type").next()?.to_string();
        return Some((value.to_string(), to));
    }
    if let Some(rest) = message.split("Can't cast value ").nth(1) {
        let (value, rest) = rest.split_once(" to type ")?;
        let to = rest.split(|c: char| c.is_whitespace() || c == ',').next()?.to_string();
        return Some((value.to_string(), to));
    }
    if let Some(rest) = message.split("Error parsing timestamp from '").nth(1) {
        let value = rest.split_once('\'')?.0;
        return Some((value.to_string(), "Timestamp".into()));
    }
    None
}

/// An Arrow type name from a cast message as SQL says it.
fn sql_type_name(arrow: &str) -> String {
    match arrow {
        "Int8" => "TINYINT",
        "Int16" => "SMALLINT",
        "Int32" => "INT",
        "Int64" => "BIGINT",
        "UInt8" | "UInt16" | "UInt32" | "UInt64" => return format!("{arrow} (unsigned)"),
        "Float32" => "REAL",
        "Float64" => "DOUBLE",
        "Boolean" => "BOOLEAN",
        "Date32" | "Date64" => "DATE",
        "Utf8" | "LargeUtf8" | "Utf8View" => "VARCHAR",
        t if t.starts_with("Timestamp") => "TIMESTAMP",
        t if t.starts_with("Decimal") => {
            return t
                .replacen("Decimal128", "DECIMAL", 1)
                .replacen("Decimal256", "DECIMAL", 1);
        }
        t => return t.to_string(),
    }
    .to_string()
}

/// The SQL type of a column, as `SHOW CREATE TABLE` prints it.
fn column_sql_type(schema: &SchemaRef, column: &str) -> Option<String> {
    let field = schema.field_with_name(column).ok()?;
    let t = crate::spec::types::Type::from_arrow(field.data_type(), &mut || 0).ok()?;
    Some(crate::table::show_create::sql_type(&t))
}

/// `error` of any statement `sql` with a failed cast said plainly: the
/// value, the type, and the column when the statement compares the value
/// with one (`WHERE ts = 'x'`) or assigns it to one (`SET ts = 'x'`).
pub fn explain_cast(sql: &str, error: Error) -> Error {
    let message = error.to_string();
    let Some((value, to)) = cast_failure(&message) else {
        return error;
    };
    let column = literal_column(sql, &value)
        .map(|c| format!(" for column {c}"))
        .unwrap_or_default();
    Error::Invalid(format!(
        "value {} cannot be cast to {}{column}: {}",
        quoted(&value),
        sql_type_name(&to),
        message.rsplit("error: ").next().unwrap_or(&message).trim()
    ))
}

/// A number as it is, a string quoted.
fn quoted(value: &str) -> String {
    if value.parse::<f64>().is_ok() {
        value.to_string()
    } else {
        format!("'{value}'")
    }
}

/// The column `value` is compared with or assigned to in `sql`, found by
/// its tokens: `col <op> value`, `value <op> col` or `SET col = value`.
fn literal_column(sql: &str, value: &str) -> Option<String> {
    use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&GenericDialect {}, sql).tokenize().ok()?;
    let sig: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    let is_value = |t: &Token| match t {
        Token::SingleQuotedString(s) => s == value,
        Token::Number(n, _) => n == value,
        _ => false,
    };
    let is_op = |t: &Token| {
        matches!(
            t,
            Token::Eq | Token::Neq | Token::Lt | Token::Gt | Token::LtEq | Token::GtEq | Token::DoubleEq
        )
    };
    let name = |t: &Token| match t {
        Token::Word(w)
            if w.keyword == datafusion::sql::sqlparser::keywords::Keyword::NoKeyword || w.quote_style.is_some() =>
        {
            Some(match w.quote_style {
                Some(_) => w.value.clone(),
                None => w.value.to_lowercase(),
            })
        }
        _ => None,
    };
    let i = sig.iter().position(|t| is_value(t))?;
    if i >= 2 && is_op(sig[i - 1]) {
        return name(sig[i - 2]);
    }
    if is_op(sig.get(i + 1)?) {
        return name(sig.get(i + 2)?);
    }
    None
}

/// The target column of the first VALUES position (or SELECT list
/// position) holding the literal `value`.
fn values_column(insert: &Insert, value: &str, targets: &[String]) -> Option<String> {
    match insert.source.as_ref()?.body.as_ref() {
        SetExpr::Values(values) => values.rows.iter().find_map(|row| {
            row.iter()
                .position(|e| is_literal(e, value))
                .and_then(|i| targets.get(i).cloned())
        }),
        SetExpr::Select(select) => select
            .projection
            .iter()
            .position(|item| match item {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => is_literal(e, value),
                _ => false,
            })
            .and_then(|i| targets.get(i).cloned()),
        _ => None,
    }
}

fn is_literal(e: &Expr, text: &str) -> bool {
    matches!(e, Expr::Value(v) if match &v.value {
        Value::SingleQuotedString(s) => s == text,
        Value::Number(n, _) => n == text,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_read() {
        assert_eq!(
            cast_failure("Arrow error: Cast error: Cannot cast string 'abc' to value of Int32 type"),
            Some(("abc".into(), "Int32".into()))
        );
        let schema: SchemaRef = std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new(vec![
            datafusion::arrow::datatypes::Field::new("a", datafusion::arrow::datatypes::DataType::Int32, false),
            datafusion::arrow::datatypes::Field::new("b", datafusion::arrow::datatypes::DataType::Int32, true),
        ]));
        let targets = vec!["b".to_string(), "a".to_string()];
        assert_eq!(
            not_null_column(
                "Invalid argument error: Column 'column2' is declared as non-nullable but contains null values",
                &targets,
                &schema
            ),
            Some("a".into())
        );
        assert_eq!(
            not_null_column(
                "Execution error: Invalid batch column at '0' has null but schema specifies non-nullable",
                &targets,
                &schema
            ),
            Some("a".into())
        );
        let insert = parse_insert("INSERT INTO t (b, a) VALUES (1, 'x'), (2, 'abc')").unwrap();
        assert_eq!(values_column(&insert, "abc", &targets), Some("a".into()));
    }
}
