//! Step 1: check a partition tuple against the partition columns.
//!
//! [`validate`] takes the columns and a list of `(key, value)` pairs and
//! returns the values in column order. It runs before any serialization, so
//! a bad tuple is rejected before any work is done.
//!
//! # Rules
//!
//! 1. Every column type must be a supported primitive (see
//!    [`ValueError::UnsupportedType`]); nested types such as List, Struct
//!    and Map are rejected.
//! 2. Column names must differ case-insensitively.
//! 3. Keys match column names case-insensitively; two keys that fold to
//!    the same name are a duplicate.
//! 4. Every key names a column, and every column has a key.
//! 5. A non-null value has exactly the column's type: `Int64` is not
//!    accepted for `Int32`, nor `Utf8View` for `Utf8`, nor
//!    `Decimal128(10,2)` for `Decimal128(38,18)`, nor a timestamp with
//!    another unit or time zone string.
//! 6. A null is a typed null of the column's type or the untyped
//!    `ScalarValue::Null` (returned as a typed null); it is rejected for a
//!    column that is not nullable.
//!
//! # Examples
//!
//! Columns: `Region: Utf8 (nullable)`, `day: Date32 (not null)`.
//!
//! | Input pairs                                      | Result                                   |
//! |--------------------------------------------------|------------------------------------------|
//! | `day=Date32(0)`, `region=Utf8("x")`              | `[Utf8("x"), Date32(0)]`                 |
//! | `REGION=Null`, `day=Date32(0)`                   | `[Utf8(NULL), Date32(0)]`                |
//! | `Region=Utf8("x")`                               | error: missing `day`                     |
//! | `Region=…`, `day=…`, `hour=Int32(1)`             | error: unknown `hour`                    |
//! | `region=…`, `REGION=…`, `day=…`                  | error: duplicate key                     |
//! | `Region=Int32(1)`, `day=…`                       | error: type Utf8 expected, got Int32     |
//! | `Region=…`, `day=Date32(NULL)`                   | error: `day` is not nullable             |

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;

use super::ValueError;

/// A partition column: its name as spelled in the schema, type and nullability.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PartitionColumn {
    pub name: String,
    pub data_type: DataType,
    pub nullable: bool,
}

impl PartitionColumn {
    pub fn new(name: impl Into<String>, data_type: DataType, nullable: bool) -> Self {
        Self {
            name: name.into(),
            data_type,
            nullable,
        }
    }
}

/// Checks `values` against `columns` and returns them in column order.
///
/// # Errors
///
/// The first broken rule, in the order listed in the module docs:
/// [`ValueError::UnsupportedType`] (in [`ValueError::Column`]),
/// [`ValueError::AmbiguousColumns`], [`ValueError::UnknownColumn`] or
/// [`ValueError::DuplicateKey`] (in key order), then per column
/// [`ValueError::MissingColumn`], [`ValueError::TypeMismatch`] or
/// [`ValueError::NullNotAllowed`].
pub fn validate(columns: &[PartitionColumn], values: &[(String, ScalarValue)]) -> Result<Vec<ScalarValue>, ValueError> {
    check_columns(columns)?;
    let slots = match_keys(columns, values)?;
    columns
        .iter()
        .zip(slots)
        .map(|(column, value)| match value {
            Some(value) => check_value(column, value),
            None => Err(ValueError::MissingColumn {
                column: column.name.clone(),
            }),
        })
        .collect()
}

/// Whether `data_type` can hold a partition value.
pub fn is_supported_type(data_type: &DataType) -> bool {
    use DataType as D;
    matches!(
        data_type,
        D::Boolean
            | D::Int8
            | D::Int16
            | D::Int32
            | D::Int64
            | D::Float32
            | D::Float64
            | D::Decimal128(..)
            | D::Date32
            | D::Timestamp(..)
            | D::Utf8
            | D::LargeUtf8
            | D::Utf8View
            | D::Binary
            | D::LargeBinary
            | D::BinaryView
            | D::FixedSizeBinary(_)
    )
}

/// Errors with [`ValueError::UnsupportedType`] unless `data_type` is supported.
pub(super) fn ensure_supported(data_type: &DataType) -> Result<(), ValueError> {
    if is_supported_type(data_type) {
        Ok(())
    } else {
        Err(ValueError::UnsupportedType {
            data_type: data_type.clone(),
        })
    }
}

/// The column whose name matches `key` case-insensitively.
pub(super) fn find_column<'a>(columns: &'a [PartitionColumn], key: &str) -> Option<&'a PartitionColumn> {
    let key = fold(key);
    columns.iter().find(|c| fold(&c.name) == key)
}

fn fold(name: &str) -> String {
    name.to_lowercase()
}

/// Rules 1 and 2: supported types, names distinct after case folding.
fn check_columns(columns: &[PartitionColumn]) -> Result<(), ValueError> {
    for (i, column) in columns.iter().enumerate() {
        ensure_supported(&column.data_type).map_err(|e| e.in_column(&column.name))?;
        let folded = fold(&column.name);
        if let Some(earlier) = columns[..i].iter().find(|c| fold(&c.name) == folded) {
            return Err(ValueError::AmbiguousColumns {
                first: earlier.name.clone(),
                second: column.name.clone(),
            });
        }
    }
    Ok(())
}

/// Rules 3 and 4 (unknown and duplicate keys): one slot per column.
fn match_keys<'a>(
    columns: &[PartitionColumn],
    values: &'a [(String, ScalarValue)],
) -> Result<Vec<Option<&'a ScalarValue>>, ValueError> {
    let mut slots: Vec<Option<(&str, &ScalarValue)>> = vec![None; columns.len()];
    for (key, value) in values {
        let folded = fold(key);
        let index = columns
            .iter()
            .position(|c| fold(&c.name) == folded)
            .ok_or_else(|| ValueError::UnknownColumn {
                key: key.clone(),
                expected: columns.iter().map(|c| c.name.clone()).collect(),
            })?;
        if let Some((first, _)) = slots[index] {
            return Err(ValueError::DuplicateKey {
                column: columns[index].name.clone(),
                first: first.to_owned(),
                second: key.clone(),
            });
        }
        slots[index] = Some((key.as_str(), value));
    }
    Ok(slots.into_iter().map(|s| s.map(|(_, v)| v)).collect())
}

/// Rules 5 and 6 for one value.
fn check_value(column: &PartitionColumn, value: &ScalarValue) -> Result<ScalarValue, ValueError> {
    let value = match value {
        ScalarValue::Null => typed_null(column)?,
        typed => check_type(column, typed)?,
    };
    if value.is_null() && !column.nullable {
        return Err(ValueError::NullNotAllowed {
            column: column.name.clone(),
            data_type: column.data_type.clone(),
        });
    }
    Ok(value)
}

fn check_type(column: &PartitionColumn, value: &ScalarValue) -> Result<ScalarValue, ValueError> {
    let actual = value.data_type();
    if actual != column.data_type {
        return Err(ValueError::TypeMismatch {
            column: column.name.clone(),
            expected: column.data_type.clone(),
            actual,
        });
    }
    Ok(value.clone())
}

fn typed_null(column: &PartitionColumn) -> Result<ScalarValue, ValueError> {
    ScalarValue::try_from(&column.data_type).map_err(|_| {
        ValueError::UnsupportedType {
            data_type: column.data_type.clone(),
        }
        .in_column(&column.name)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::datatypes::{Field, Fields, TimeUnit};

    use super::*;

    fn columns() -> Vec<PartitionColumn> {
        vec![
            PartitionColumn::new("Region", DataType::Utf8, true),
            PartitionColumn::new("day", DataType::Date32, false),
        ]
    }

    fn pairs(items: &[(&str, ScalarValue)]) -> Vec<(String, ScalarValue)> {
        items.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    }

    fn x() -> ScalarValue {
        ScalarValue::from("x")
    }

    fn day() -> ScalarValue {
        ScalarValue::Date32(Some(0))
    }

    #[test]
    fn orders_by_column_and_matches_case_insensitively() {
        let out = validate(&columns(), &pairs(&[("DAY", day()), ("region", x())]));
        assert_eq!(out, Ok(vec![x(), day()]));
    }

    #[test]
    fn untyped_null_becomes_typed_null() {
        let out = validate(&columns(), &pairs(&[("REGION", ScalarValue::Null), ("day", day())]));
        assert_eq!(out, Ok(vec![ScalarValue::Utf8(None), day()]));
    }

    #[test]
    fn typed_null_of_right_type_is_fine() {
        let out = validate(
            &columns(),
            &pairs(&[("Region", ScalarValue::Utf8(None)), ("day", day())]),
        );
        assert_eq!(out, Ok(vec![ScalarValue::Utf8(None), day()]));
    }

    #[test]
    fn missing_key() {
        let out = validate(&columns(), &pairs(&[("Region", x())]));
        assert_eq!(out, Err(ValueError::MissingColumn { column: "day".into() }));
    }

    #[test]
    fn unknown_key() {
        let out = validate(
            &columns(),
            &pairs(&[("Region", x()), ("day", day()), ("hour", ScalarValue::Int32(Some(1)))]),
        );
        let err = out.expect_err("unknown");
        assert_eq!(
            err,
            ValueError::UnknownColumn {
                key: "hour".into(),
                expected: vec!["Region".into(), "day".into()]
            }
        );
        assert!(err.to_string().contains("expected one of: Region, day"));
    }

    #[test]
    fn duplicate_after_case_folding() {
        let out = validate(&columns(), &pairs(&[("region", x()), ("REGION", x()), ("day", day())]));
        assert_eq!(
            out,
            Err(ValueError::DuplicateKey {
                column: "Region".into(),
                first: "region".into(),
                second: "REGION".into()
            })
        );
    }

    #[test]
    fn exact_duplicate_key() {
        let out = validate(&columns(), &pairs(&[("day", day()), ("day", day())]));
        assert!(matches!(out, Err(ValueError::DuplicateKey { .. })));
    }

    #[test]
    fn columns_differing_only_by_case_are_ambiguous() {
        let cols = vec![
            PartitionColumn::new("a", DataType::Int32, true),
            PartitionColumn::new("A", DataType::Int32, true),
        ];
        assert_eq!(
            validate(&cols, &[]),
            Err(ValueError::AmbiguousColumns {
                first: "a".into(),
                second: "A".into()
            })
        );
    }

    #[test]
    fn type_must_match_exactly() {
        let mismatches = [
            (DataType::Int32, ScalarValue::Int64(Some(1))),
            (DataType::Utf8, ScalarValue::Utf8View(Some("x".into()))),
            (DataType::Decimal128(38, 18), ScalarValue::Decimal128(Some(1), 10, 2)),
            (
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                ScalarValue::TimestampMicrosecond(Some(0), None),
            ),
            (
                DataType::Timestamp(TimeUnit::Microsecond, None),
                ScalarValue::TimestampMillisecond(Some(0), None),
            ),
            (DataType::Int32, ScalarValue::Int64(None)),
        ];
        for (data_type, value) in mismatches {
            let cols = [PartitionColumn::new("p", data_type.clone(), true)];
            let err = validate(&cols, &pairs(&[("p", value.clone())])).expect_err("mismatch");
            assert_eq!(
                err,
                ValueError::TypeMismatch {
                    column: "p".into(),
                    expected: data_type,
                    actual: value.data_type()
                }
            );
        }
    }

    #[test]
    fn null_for_non_nullable_column() {
        for value in [ScalarValue::Date32(None), ScalarValue::Null] {
            let out = validate(&columns(), &pairs(&[("Region", x()), ("day", value)]));
            assert_eq!(
                out,
                Err(ValueError::NullNotAllowed {
                    column: "day".into(),
                    data_type: DataType::Date32
                })
            );
        }
    }

    #[test]
    fn nested_and_other_unsupported_types_are_rejected() {
        let item = Arc::new(Field::new("item", DataType::Int32, true));
        let unsupported = [
            DataType::List(item.clone()),
            DataType::LargeList(item.clone()),
            DataType::FixedSizeList(item.clone(), 2),
            DataType::Struct(Fields::from(vec![Field::new("a", DataType::Int32, true)])),
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            DataType::Interval(datafusion::arrow::datatypes::IntervalUnit::DayTime),
            DataType::Null,
        ];
        for data_type in unsupported {
            let cols = [PartitionColumn::new("p", data_type.clone(), true)];
            let err = validate(&cols, &pairs(&[("p", ScalarValue::Null)])).expect_err("nested");
            assert_eq!(err, ValueError::UnsupportedType { data_type }.in_column("p"),);
        }
    }

    #[test]
    fn nested_value_for_primitive_column_is_a_mismatch() {
        let list = ScalarValue::List(ScalarValue::new_list_nullable(
            &[ScalarValue::Int32(Some(1))],
            &DataType::Int32,
        ));
        let cols = [PartitionColumn::new("p", DataType::Int32, true)];
        let err = validate(&cols, &pairs(&[("p", list)])).expect_err("list");
        assert!(matches!(err, ValueError::TypeMismatch { .. }));
    }

    #[test]
    fn empty_columns_and_values() {
        assert_eq!(validate(&[], &[]), Ok(vec![]));
    }
}
