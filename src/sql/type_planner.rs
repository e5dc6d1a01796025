//! SQL type names planned the way an Iceberg table needs them, where
//! DataFusion 55 plans them otherwise or not at all. Installed by
//! `session::with_hidden_partitions`.
//!
//! | SQL type                                   | planned as                          | DataFusion alone |
//! |--------------------------------------------|-------------------------------------|------------------|
//! | `VARIANT`                                  | the variant struct, marked (see `variant`) | unknown type |
//! | `TIMESTAMPTZ`, `TIMESTAMP [(p)] WITH TIME ZONE` | `Timestamp(unit, "UTC")`       | no zone unless `datafusion.execution.time_zone` is set |
//! | `MAP(K, V)` (DuckDB's and ClickHouse's spelling) | `Map(key_value: {key: K not null, value: V})`, as our tables store maps | unsupported |
//!
//! A `MAP`'s key and value may be any type of the first column, a scalar
//! type (`BOOLEAN`, `INT`, `BIGINT`, `DOUBLE`, `DECIMAL(p, s)`, `VARCHAR`,
//! `DATE`, `TIMESTAMP(p)`, `BYTEA`, …) or an array of one.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, TimeUnit};
use datafusion::common::Result;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast::{ArrayElemTypeDef, DataType as SqlDataType, ExactNumberInfo, TimezoneInfo};

use crate::variant::type_planner::is_variant_sql_type;

/// The zone of `TIMESTAMPTZ` columns: Iceberg's `timestamptz` is UTC.
const UTC: &str = "UTC";

/// Plans `VARIANT`, zoned timestamps and `MAP(K, V)`.
#[derive(Debug, Default, Clone, Copy)]
pub struct SqlTypePlanner;

impl TypePlanner for SqlTypePlanner {
    fn plan_type_field(&self, sql_type: &SqlDataType) -> Result<Option<FieldRef>> {
        if is_variant_sql_type(sql_type) {
            return Ok(Some(Arc::new(crate::variant::arrow_type::variant_field(
                "variant", true,
            ))));
        }
        Ok(planned_type(sql_type)?.map(|t| Arc::new(Field::new("", t, true))))
    }
}

fn unit(precision: Option<u64>) -> Option<TimeUnit> {
    match precision {
        Some(0) => Some(TimeUnit::Second),
        Some(3) => Some(TimeUnit::Millisecond),
        Some(6) => Some(TimeUnit::Microsecond),
        None | Some(9) => Some(TimeUnit::Nanosecond),
        _ => None,
    }
}

/// The types this planner plans itself; `None` for the rest.
fn planned_type(sql_type: &SqlDataType) -> Result<Option<DataType>> {
    Ok(match sql_type {
        SqlDataType::Timestamp(precision, TimezoneInfo::Tz | TimezoneInfo::WithTimeZone) => {
            unit(*precision).map(|u| DataType::Timestamp(u, Some(UTC.into())))
        }
        SqlDataType::Map(key, value) => {
            let entries = Field::new(
                "key_value",
                DataType::Struct(Fields::from(vec![
                    Field::new("key", map_part(key, "key")?, false),
                    Field::new("value", map_part(value, "value")?, true),
                ])),
                false,
            );
            Some(DataType::Map(Arc::new(entries), false))
        }
        _ => None,
    })
}

/// The key or value type of a `MAP`.
fn map_part(sql_type: &SqlDataType, what: &str) -> Result<DataType> {
    if is_variant_sql_type(sql_type) {
        return Ok(crate::variant::arrow_type::variant_field("variant", true)
            .data_type()
            .clone());
    }
    use SqlDataType as S;
    if let S::Timestamp(None, TimezoneInfo::Tz | TimezoneInfo::WithTimeZone) = sql_type {
        // As in a column definition: without a precision, microseconds.
        return Ok(DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())));
    }
    if let Some(t) = planned_type(sql_type)? {
        return Ok(t);
    }
    let t = match sql_type {
        S::Boolean | S::Bool => DataType::Boolean,
        S::TinyInt(_) => DataType::Int8,
        S::SmallInt(_) | S::Int2(_) => DataType::Int16,
        S::Int(_) | S::Integer(_) | S::Int4(_) => DataType::Int32,
        S::BigInt(_) | S::Int8(_) => DataType::Int64,
        S::Real | S::Float4 => DataType::Float32,
        S::Float(_) | S::Double(_) | S::DoublePrecision | S::Float8 => DataType::Float64,
        S::Varchar(_) | S::Text | S::String(_) | S::Char(_) | S::CharVarying(_) | S::Character(_) => DataType::Utf8,
        S::Date => DataType::Date32,
        S::Timestamp(precision, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
            // As in a column definition: without a precision, microseconds.
            let unit = match precision {
                None => Some(TimeUnit::Microsecond),
                p => unit(*p),
            };
            match unit {
                Some(u) => DataType::Timestamp(u, None),
                None => return Err(unsupported(sql_type, what)),
            }
        }
        S::Decimal(ExactNumberInfo::PrecisionAndScale(p, s)) | S::Numeric(ExactNumberInfo::PrecisionAndScale(p, s)) => {
            match (u8::try_from(*p), i8::try_from(*s)) {
                (Ok(p), Ok(s)) => DataType::Decimal128(p, s),
                _ => return Err(unsupported(sql_type, what)),
            }
        }
        S::Decimal(ExactNumberInfo::Precision(p)) | S::Numeric(ExactNumberInfo::Precision(p)) => {
            match u8::try_from(*p) {
                Ok(p) => DataType::Decimal128(p, 0),
                Err(_) => return Err(unsupported(sql_type, what)),
            }
        }
        S::Bytea | S::Blob(_) | S::Binary(_) | S::Varbinary(_) => DataType::Binary,
        S::Array(ArrayElemTypeDef::AngleBracket(inner) | ArrayElemTypeDef::SquareBracket(inner, None)) => {
            DataType::List(Arc::new(Field::new_list_field(map_part(inner, what)?, true)))
        }
        _ => return Err(unsupported(sql_type, what)),
    };
    Ok(t)
}

fn unsupported(sql_type: &SqlDataType, what: &str) -> DataFusionError {
    DataFusionError::Plan(format!(
        "{sql_type} is not supported as a MAP {what} type; use a scalar type (BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL(p, s), VARCHAR, DATE, TIMESTAMP, BYTEA), an array of one, VARIANT or another MAP"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    fn plan(sql_type: &str) -> Option<DataType> {
        let parsed = Parser::new(&GenericDialect {})
            .try_with_sql(sql_type)
            .unwrap()
            .parse_data_type()
            .unwrap();
        SqlTypePlanner
            .plan_type_field(&parsed)
            .unwrap()
            .map(|f| f.data_type().clone())
    }

    #[test]
    fn zoned_timestamps_are_utc() {
        let utc = |u| Some(DataType::Timestamp(u, Some(UTC.into())));
        assert_eq!(plan("TIMESTAMPTZ"), utc(TimeUnit::Nanosecond));
        assert_eq!(plan("TIMESTAMP WITH TIME ZONE"), utc(TimeUnit::Nanosecond));
        assert_eq!(plan("TIMESTAMP(6) WITH TIME ZONE"), utc(TimeUnit::Microsecond));
        assert_eq!(plan("TIMESTAMP(6)"), None);
        assert_eq!(plan("BIGINT"), None);
    }

    #[test]
    fn maps_are_planned_as_stored() {
        let Some(DataType::Map(entries, false)) = plan("MAP(VARCHAR, BIGINT[])") else {
            panic!("not a map");
        };
        let DataType::Struct(fields) = entries.data_type() else {
            panic!("no entries struct");
        };
        assert_eq!(fields[0].data_type(), &DataType::Utf8);
        assert!(!fields[0].is_nullable());
        assert!(matches!(fields[1].data_type(), DataType::List(f) if f.data_type() == &DataType::Int64));
        let nested = Parser::new(&GenericDialect {})
            .try_with_sql("MAP(VARCHAR, INTERVAL)")
            .unwrap()
            .parse_data_type()
            .unwrap();
        let e = SqlTypePlanner.plan_type_field(&nested).unwrap_err().to_string();
        assert!(e.contains("not supported as a MAP value type"), "{e}");
    }
}
