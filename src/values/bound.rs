//! A value as the bound of a summary: the lower and upper bound of a
//! manifest's partition field, kept in the metadata JSON.
//!
//! The protocol string of [`serialize`](super::serialize) turns the empty
//! string and empty binary into null (a Hive directory cannot name them).
//! A bound must not: readers of Iceberg take a missing bound to mean that
//! the manifest holds nothing but nulls, and skip it for any comparison.
//! So a bound is the protocol string, except that an empty string or
//! binary is `""`, and `""` is read back as the empty value.
//!
//! | value            | protocol string | bound    |
//! |------------------|-----------------|----------|
//! | `Utf8("")`       | `None`          | `Some("")` |
//! | `Binary([])`     | `None`          | `Some("")` |
//! | `Utf8("ab")`     | `Some("ab")`    | `Some("ab")` |
//! | `Int32(None)`    | `None`          | `None`   |

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;

use super::{ValueError, parse, serialize};

/// `value` as a summary bound; `None` only for a null.
pub fn serialize_bound(value: &ScalarValue) -> Result<Option<String>, ValueError> {
    if is_empty(value) {
        return Ok(Some(String::new()));
    }
    serialize(value)
}

/// A summary bound back as a value of `data_type` (`""` is the empty
/// string or binary; for other types it is not a value, an error).
pub fn parse_bound(text: &str, data_type: &DataType) -> Result<ScalarValue, ValueError> {
    if !text.is_empty() {
        return parse(Some(text), data_type);
    }
    match data_type {
        DataType::Utf8 => Ok(ScalarValue::Utf8(Some(String::new()))),
        DataType::LargeUtf8 => Ok(ScalarValue::LargeUtf8(Some(String::new()))),
        DataType::Utf8View => Ok(ScalarValue::Utf8View(Some(String::new()))),
        DataType::Binary => Ok(ScalarValue::Binary(Some(Vec::new()))),
        DataType::LargeBinary => Ok(ScalarValue::LargeBinary(Some(Vec::new()))),
        DataType::BinaryView => Ok(ScalarValue::BinaryView(Some(Vec::new()))),
        other => Err(ValueError::Parse {
            input: String::new(),
            data_type: other.clone(),
            expected: "a value (only strings and binaries have an empty bound)".into(),
        }),
    }
}

/// Whether `value` is an empty (not null) string or binary.
fn is_empty(value: &ScalarValue) -> bool {
    use ScalarValue as S;
    match value {
        S::Utf8(Some(s)) | S::LargeUtf8(Some(s)) | S::Utf8View(Some(s)) => s.is_empty(),
        S::Binary(Some(b)) | S::LargeBinary(Some(b)) | S::BinaryView(Some(b)) => b.is_empty(),
        _ => false,
    }
}

/// A zero bound becomes `-0.0` (lower) or `0.0` (upper) so both zeros are covered.
pub fn widen_zero(v: ScalarValue, lower: bool) -> ScalarValue {
    match v {
        ScalarValue::Float64(Some(f)) if f == 0.0 => ScalarValue::Float64(Some(if lower { -0.0 } else { 0.0 })),
        ScalarValue::Float32(Some(f)) if f == 0.0 => ScalarValue::Float32(Some(if lower { -0.0 } else { 0.0 })),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_strings_and_binaries_are_values() {
        for (value, data_type) in [
            (ScalarValue::Utf8(Some(String::new())), DataType::Utf8),
            (ScalarValue::Binary(Some(Vec::new())), DataType::Binary),
        ] {
            assert_eq!(serialize_bound(&value).unwrap().as_deref(), Some(""));
            assert_eq!(parse_bound("", &data_type).unwrap(), value);
        }
        assert_eq!(serialize_bound(&ScalarValue::Utf8(None)).unwrap(), None);
        assert_eq!(
            serialize_bound(&ScalarValue::Utf8(Some("ab".into())))
                .unwrap()
                .as_deref(),
            Some("ab")
        );
        assert_eq!(
            parse_bound("ab", &DataType::Utf8).unwrap(),
            ScalarValue::Utf8(Some("ab".into()))
        );
        assert_eq!(parse_bound("7", &DataType::Int32).unwrap(), ScalarValue::Int32(Some(7)));
    }

    #[test]
    fn an_empty_bound_of_another_type_is_an_error() {
        assert!(parse_bound("", &DataType::Int32).is_err());
        assert!(parse_bound("", &DataType::Date32).is_err());
    }
}
