//! Partition values: from a typed value to a path in the table, and back.
//!
//! A partition value passes through four steps before a data file can be
//! recorded. Each step is one submodule, and each step's output is the next
//! step's input:
//!
//! ```text
//! ScalarValue::Utf8("US/East")
//!    │ 1. validation     keys and types checked against the partition columns
//!    │ 2. serialization  "US/East"            (the protocol string, partitionValues)
//!    │ 3. hive           "region=US%2FEast"   (the directory name on disk)
//!    ▼ 4. uri            "region=US%252FEast" (the relative path stored in the log)
//! ```
//!
//! Reading goes the other way: [`uri::decode`] the stored path,
//! [`hive::parse_partition_dir`] each directory, then [`parse::parse`] the
//! protocol string into a typed value of the column's type.
//!
//! | Step | Function                        | In                         | Out                              |
//! |------|---------------------------------|----------------------------|----------------------------------|
//! | 1    | [`validate`]                    | `[("REGION", Utf8("a b"))]`| `[Utf8("a b")]` (column order)   |
//! | 2    | [`serialize`]                   | `Utf8("a b")`              | `Some("a b")`                    |
//! | 2    | [`serialize`]                   | `Utf8("")`, `Int32(None)`  | `None`                           |
//! | 3    | [`partition_dir`]               | `"region"`, `Some("a b")`  | `region=a b`                     |
//! | 3    | [`partition_dir`]               | `"region"`, `None`         | `region=__HIVE_DEFAULT_PARTITION__` |
//! | 4    | [`uri::encode`]                 | `region=a b`               | `region=a%20b`                   |
//! | back | [`uri::decode`]                 | `region=US%252FEast`       | `region=US%2FEast`               |
//! | back | [`parse_partition_dir`]         | `region=US%2FEast`         | `("region", Some("US/East"))`    |
//! | back | [`parse()`]                     | `Some("US/East")`, `Utf8`  | `Utf8("US/East")`                |
//!
//! [`encode_partition`] runs steps 1–4 for a whole partition tuple, and
//! [`decode_partition`] reads a directory path back into typed values. Both
//! fail before anything is written: every check happens up front.
//!
//! Where each step's rules come from: Delta-Spark and delta-kernel write the
//! same strings (observed row by row in the `vectors` tests); where they
//! disagree, the choice made here is listed in that module's docs.

pub mod bound;
pub mod hive;
pub mod parse;
pub mod serialization;
pub mod uri;
pub mod validation;

mod percent;
#[cfg(test)]
mod vectors;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use thiserror::Error;

pub use bound::{parse_bound, serialize_bound, widen_zero};
pub use hive::{DEFAULT_PARTITION, escape, parse_partition_dir, partition_dir, unescape};
pub use parse::parse;
pub use serialization::serialize;
pub use validation::{PartitionColumn, validate};

/// Everything that can go wrong between a typed value and a path.
///
/// Messages name the offending value or column and say what was expected.
/// Errors from [`serialize`] and [`parse()`] know no column name; the
/// tuple-level functions wrap them in [`ValueError::Column`].
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ValueError {
    /// A value's key matches no partition column.
    #[error(
        "partition value `{key}` does not match any partition column; expected one of: {}",
        .expected.join(", ")
    )]
    UnknownColumn { key: String, expected: Vec<String> },

    /// A partition column has no value.
    #[error(
        "missing a value for partition column `{column}`; every partition column needs one (a null is fine if the column is nullable)"
    )]
    MissingColumn { column: String },

    /// Two value keys name the same column once case is ignored.
    #[error(
        "partition values `{first}` and `{second}` both name column `{column}` (names match case-insensitively); expected one value per column"
    )]
    DuplicateKey {
        column: String,
        first: String,
        second: String,
    },

    /// Two partition columns differ only by case, so keys cannot be matched.
    #[error(
        "partition columns `{first}` and `{second}` differ only by case; expected column names that are distinct case-insensitively"
    )]
    AmbiguousColumns { first: String, second: String },

    /// The value's type is not exactly the column's type.
    #[error(
        "partition column `{column}` has type {expected} but the value has type {actual}; expected a value of exactly type {expected}"
    )]
    TypeMismatch {
        column: String,
        expected: DataType,
        actual: DataType,
    },

    /// A null value for a column declared not nullable.
    #[error("partition column `{column}` is not nullable but the value is null; expected a non-null {data_type}")]
    NullNotAllowed { column: String, data_type: DataType },

    /// A type that cannot be a partition value (nested, interval, ...).
    #[error(
        "type {data_type} cannot hold a partition value; expected a primitive type: Boolean, Int8/16/32/64, Float32/64, Decimal128, Date32, Timestamp, Utf8/LargeUtf8/Utf8View or Binary/LargeBinary/BinaryView/FixedSizeBinary"
    )]
    UnsupportedType { data_type: DataType },

    /// A string or binary value contains a NUL byte.
    #[error(
        "{kind} value contains a NUL byte at byte offset {offset}; expected no NUL bytes, which no directory name can hold"
    )]
    NulByte { kind: &'static str, offset: usize },

    /// A binary value whose bytes are not UTF-8 text.
    #[error("binary value is not valid UTF-8 (first bad byte at offset {offset}); expected bytes that are UTF-8 text")]
    InvalidUtf8 { offset: usize },

    /// A date or timestamp outside the years the string form can express.
    #[error("{what} is out of range; expected a date in years 0001 through 9999")]
    OutOfRange { what: String },

    /// A `%` not followed by two hex digits.
    #[error("invalid percent escape at byte offset {offset} in `{input}`; expected `%` followed by two hex digits")]
    InvalidEscape { input: String, offset: usize },

    /// Percent-decoded bytes that are not UTF-8 text.
    #[error("percent-decoding `{input}` does not give UTF-8 text; expected escapes of UTF-8 bytes")]
    DecodedNotUtf8 { input: String },

    /// A directory name that is not `column=value`.
    #[error(
        "partition directory name `{dir}` is malformed; expected `column=value` with a non-empty column and no `/`"
    )]
    MalformedDir { dir: String },

    /// A protocol string that does not parse as the requested type.
    #[error("cannot parse `{input}` as {data_type}; expected {expected}")]
    Parse {
        input: String,
        data_type: DataType,
        expected: String,
    },

    /// Another error, attributed to the partition column it happened in.
    #[error("partition column `{column}`: {error}")]
    Column { column: String, error: Box<ValueError> },
}

impl ValueError {
    /// Attributes this error to `column`.
    pub fn in_column(self, column: &str) -> Self {
        ValueError::Column {
            column: column.to_owned(),
            error: Box::new(self),
        }
    }
}

/// One partition tuple after steps 1–4.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedPartition {
    /// Column name (schema spelling) and protocol string, in column order.
    pub values: Vec<(String, Option<String>)>,
    /// Directory path on disk, `a=1/b=x%2Fy` (hive-escaped).
    pub dir: String,
    /// The same path with the URI layer on top, as stored in the log.
    pub uri: String,
}

/// Whether `dt` is a flat scalar type: a number, date, time, boolean,
/// string or binary (no nested, dictionary or union type). Its values
/// compare as a whole and travel as literals.
pub fn is_flat_scalar(dt: &datafusion::arrow::datatypes::DataType) -> bool {
    use datafusion::arrow::datatypes::DataType;
    dt.is_primitive()
        || matches!(
            dt,
            DataType::Boolean
                | DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
                | DataType::FixedSizeBinary(_)
        )
}

/// Runs validation, serialization, hive naming and URI encoding for one
/// partition tuple. Nothing is written; any error comes before the first
/// directory exists.
///
/// # Errors
///
/// Any error of [`validate`]; errors of [`serialize`] wrapped in
/// [`ValueError::Column`].
pub fn encode_partition(
    columns: &[PartitionColumn],
    values: &[(String, ScalarValue)],
) -> Result<EncodedPartition, ValueError> {
    let typed = validate(columns, values)?;
    let mut serialized = Vec::with_capacity(columns.len());
    for (column, value) in columns.iter().zip(&typed) {
        let text = serialize(value).map_err(|e| e.in_column(&column.name))?;
        serialized.push((column.name.clone(), text));
    }
    let dir = serialized
        .iter()
        .map(|(name, text)| partition_dir(name, text.as_deref()))
        .collect::<Vec<_>>()
        .join("/");
    let uri = uri::encode(&dir);
    Ok(EncodedPartition {
        values: serialized,
        dir,
        uri,
    })
}

/// Reads a hive directory path (`a=1/b=x%2Fy`, not URI-encoded) back into
/// typed values in column order. Directory names match columns
/// case-insensitively, like keys in [`validate`].
///
/// # Errors
///
/// Errors of [`parse_partition_dir`]; errors of [`parse()`] wrapped in
/// [`ValueError::Column`]; any error of [`validate`] (unknown, duplicate or
/// missing columns, nulls in columns that are not nullable).
pub fn decode_partition(columns: &[PartitionColumn], dir: &str) -> Result<Vec<ScalarValue>, ValueError> {
    let mut keyed = Vec::new();
    for segment in dir.split('/').filter(|s| !s.is_empty()) {
        let (name, text) = parse_partition_dir(segment)?;
        let value = match validation::find_column(columns, &name) {
            Some(column) => parse(text.as_deref(), &column.data_type).map_err(|e| e.in_column(&column.name))?,
            // Unknown names are reported by `validate` below.
            None => ScalarValue::Null,
        };
        keyed.push((name, value));
    }
    validate(columns, &keyed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> Vec<PartitionColumn> {
        vec![
            PartitionColumn::new("Region", DataType::Utf8, true),
            PartitionColumn::new("day", DataType::Date32, false),
        ]
    }

    #[test]
    fn encode_partition_runs_all_steps() {
        let values = [
            ("day".to_owned(), ScalarValue::Date32(Some(19_723))),
            ("region".to_owned(), ScalarValue::from("US/East side")),
        ];
        let encoded = encode_partition(&columns(), &values).expect("encodes");
        assert_eq!(
            encoded.values,
            vec![
                ("Region".to_owned(), Some("US/East side".to_owned())),
                ("day".to_owned(), Some("2024-01-01".to_owned())),
            ]
        );
        assert_eq!(encoded.dir, "Region=US%2FEast side/day=2024-01-01");
        assert_eq!(encoded.uri, "Region=US%252FEast%20side/day=2024-01-01");
    }

    #[test]
    fn encode_partition_names_the_column_on_serialization_errors() {
        let values = [
            ("Region".to_owned(), ScalarValue::from("a\0b")),
            ("day".to_owned(), ScalarValue::Date32(Some(0))),
        ];
        let err = encode_partition(&columns(), &values).expect_err("NUL rejected");
        assert!(matches!(&err, ValueError::Column { column, .. } if column == "Region"));
        assert!(err.to_string().contains("`Region`"), "{err}");
        assert!(err.to_string().contains("NUL"), "{err}");
    }

    #[test]
    fn decode_partition_round_trips() {
        let values = [
            ("Region".to_owned(), ScalarValue::Utf8(None)),
            ("day".to_owned(), ScalarValue::Date32(Some(-1))),
        ];
        let encoded = encode_partition(&columns(), &values).expect("encodes");
        assert_eq!(encoded.dir, "Region=__HIVE_DEFAULT_PARTITION__/day=1969-12-31");
        let back = decode_partition(&columns(), &encoded.dir).expect("decodes");
        assert_eq!(back, vec![ScalarValue::Utf8(None), ScalarValue::Date32(Some(-1))]);
        let decoded_uri = uri::decode(&encoded.uri).expect("uri decodes");
        assert_eq!(decoded_uri, encoded.dir);
    }

    #[test]
    fn decode_partition_reports_unknown_and_bad_values() {
        let err = decode_partition(&columns(), "Region=x/day=2024-01-01/extra=1").expect_err("unknown");
        assert!(matches!(err, ValueError::UnknownColumn { ref key, .. } if key == "extra"));
        let err = decode_partition(&columns(), "Region=x/day=tomorrow").expect_err("bad date");
        assert!(matches!(err, ValueError::Column { ref column, .. } if column == "day"));
        let err = decode_partition(&columns(), "Region=x").expect_err("missing");
        assert!(matches!(err, ValueError::MissingColumn { ref column } if column == "day"));
    }

    #[test]
    fn messages_say_what_where_and_what_was_expected() {
        let err = ValueError::TypeMismatch {
            column: "p".into(),
            expected: DataType::Int32,
            actual: DataType::Int64,
        };
        assert_eq!(
            err.to_string(),
            "partition column `p` has type Int32 but the value has type Int64; expected a value of exactly type Int32"
        );
        let err = ValueError::UnknownColumn {
            key: "q".into(),
            expected: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            err.to_string(),
            "partition value `q` does not match any partition column; expected one of: a, b"
        );
    }
}
