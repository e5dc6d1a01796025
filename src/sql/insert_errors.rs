//! INSERT errors that name the column.
//!
//! DataFusion reports a value that does not fit its column, or a NULL in a
//! NOT NULL column, in the terms of its plan, not of the statement:
//!
//! | DataFusion says                                                        | we say |
//! |------------------------------------------------------------------------|--------|
//! | `Optimizer rule 'simplify_expressions' failed … Cannot cast string 'abc' to value of Int32 type` | `INSERT INTO t: value 'abc' does not fit column a (INT) …` |
//! | `Column 'column1' is declared as non-nullable but contains null values` | `INSERT INTO t: column a is NOT NULL …` |
//! | `Invalid batch column at '0' has null but schema specifies non-nullable` | (same) |
//!
//! The failed statement is parsed again to find the target columns (its
//! column list, or the table's columns in order); for a cast the column is
//! the one whose VALUES position holds the literal the message quotes.
//! Anything not recognised keeps DataFusion's message.

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{Expr, Insert, ObjectNamePart, SetExpr, Statement, Value};
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
        let column_type = schema
            .field_with_name(&column)
            .map(|f| f.data_type().to_string())
            .unwrap_or(to.clone());
        return Error::Invalid(format!(
            "INSERT INTO {table}: value '{value}' does not fit column {column} ({column_type}): it cannot be cast to {to}; nothing was committed"
        ));
    }
    error
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

/// `(value, type)` of "Cannot cast string 'value' to value of type type".
fn cast_failure(message: &str) -> Option<(String, String)> {
    let rest = message.split("Cannot cast string '").nth(1)?;
    let (value, rest) = rest.split_once("' to value of ")?;
    let to = rest.split(" type").next()?.to_string();
    Some((value.to_string(), to))
}

/// The target column of the first VALUES position holding the string `value`.
fn values_column(insert: &Insert, value: &str, targets: &[String]) -> Option<String> {
    let SetExpr::Values(values) = insert.source.as_ref()?.body.as_ref() else {
        return None;
    };
    values.rows.iter().find_map(|row| {
        row.iter()
            .position(|e| is_string(e, value))
            .and_then(|i| targets.get(i).cloned())
    })
}

fn is_string(e: &Expr, text: &str) -> bool {
    matches!(e, Expr::Value(v) if matches!(&v.value, Value::SingleQuotedString(s) if s == text))
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
