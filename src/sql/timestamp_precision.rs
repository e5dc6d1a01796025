//! `TIMESTAMP` in a column definition means Iceberg's `timestamp`
//! (microseconds), as in Spark, Trino's Iceberg connector and Snowflake;
//! `TIME` means Iceberg's `time` (microseconds, the only one it has).
//!
//! DataFusion reads a `TIMESTAMP` without precision as nanoseconds, a type
//! Iceberg has only from version 3 on, so a table declared with it would not
//! be an Iceberg v2 table (see docs/FORMAT.md, "The Iceberg side"). Columns
//! declared `TIMESTAMP` / `TIMESTAMPTZ` / `TIMESTAMP WITH TIME ZONE` without a
//! precision are therefore created with microseconds; `TIMESTAMP(9)` keeps
//! nanoseconds. Values are cast on the way in, as for any column: sub-
//! microsecond digits are cut, as every Iceberg engine does.
//!
//! | declared         | stored            |
//! |------------------|-------------------|
//! | `TIMESTAMP`      | `Timestamp(µs)`   |
//! | `TIMESTAMP(6)`   | `Timestamp(µs)`   |
//! | `TIMESTAMP(9)`   | `Timestamp(ns)`   |
//! | `TIMESTAMPTZ`    | `Timestamp(µs, zone)` |
//! | `TIME`           | `Time64(µs)`      |
//!
//! DataFusion reads `TIME` as nanoseconds, which no Iceberg version has: a
//! table with such a column could not be an Iceberg table at all.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::sql::sqlparser::ast::{ColumnDef, DataType as SqlType, Statement};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// The columns of a `CREATE TABLE … (columns)` declared with a timestamp
/// or time type without precision, as DataFusion names them.
pub fn unprecise_time_columns(create_sql: &str) -> HashSet<String> {
    let Ok(statements) = Parser::parse_sql(&GenericDialect {}, create_sql) else {
        return HashSet::new();
    };
    statements
        .iter()
        .filter_map(|s| match s {
            Statement::CreateTable(c) => Some(&c.columns),
            _ => None,
        })
        .flatten()
        .filter(|c| matches!(c.data_type, SqlType::Timestamp(None, _) | SqlType::Time(None, _)))
        .map(column_name)
        .collect()
}

fn column_name(c: &ColumnDef) -> String {
    match c.name.quote_style {
        Some(_) => c.name.value.clone(),
        None => c.name.value.to_lowercase(),
    }
}

/// `schema` with the named nanosecond timestamp and time columns in
/// microseconds.
pub fn with_microsecond_times(schema: &Schema, columns: &HashSet<String>) -> Schema {
    if columns.is_empty() {
        return schema.clone();
    }
    let fields: Vec<Arc<Field>> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Timestamp(TimeUnit::Nanosecond, zone) if columns.contains(f.name()) => Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(DataType::Timestamp(TimeUnit::Microsecond, zone.clone())),
            ),
            DataType::Time64(TimeUnit::Nanosecond) if columns.contains(f.name()) => Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(DataType::Time64(TimeUnit::Microsecond)),
            ),
            _ => Arc::clone(f),
        })
        .collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_timestamps_without_precision() {
        let cols = unprecise_time_columns(
            "CREATE TABLE t (a TIMESTAMP, \"B\" TIMESTAMP WITH TIME ZONE, c TIMESTAMP(9), d TIMESTAMP(6), E TIMESTAMPTZ, f BIGINT, g TIME)",
        );
        let mut cols: Vec<_> = cols.into_iter().collect();
        cols.sort();
        assert_eq!(cols, ["B", "a", "e", "g"]);
        let schema = Schema::new(vec![
            Field::new("a", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
            Field::new("c", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
            Field::new("g", DataType::Time64(TimeUnit::Nanosecond), true),
        ]);
        let out = with_microsecond_times(&schema, &["a".to_string(), "g".to_string()].into());
        assert_eq!(out.field(2).data_type(), &DataType::Time64(TimeUnit::Microsecond));
        assert_eq!(
            out.field(0).data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, None)
        );
        assert_eq!(
            out.field(1).data_type(),
            &DataType::Timestamp(TimeUnit::Nanosecond, None)
        );
    }
}
