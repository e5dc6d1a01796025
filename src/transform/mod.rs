//! Iceberg partition transforms over Arrow arrays.
//!
//! Hidden partitioning stores a table's rows under partition values *derived*
//! from columns (`day(ts)`, `bucket[16](id)`) instead of asking users to
//! maintain partition columns by hand. The derived values end up in directory
//! names and manifests, and queries prune by projecting predicates through the
//! same functions, so each transform must be:
//!
//! * **bit-exact with the Iceberg spec** ("Partition Transforms" and
//!   "Appendix B: 32-bit Hash Requirements"), so data written here lands in the
//!   same partitions any other Iceberg engine would compute;
//! * **total**: nulls map to null, out-of-range results are errors, nothing panics;
//! * **vectorized**: one type dispatch per array, then a tight loop over the
//!   values buffer ([`apply`](Transform::apply)); [`apply_scalar`](Transform::apply_scalar)
//!   reuses the same kernels on a one-row array so literals used for pruning can
//!   never disagree with the values that were written.
//!
//! | transform      | source (Arrow)                     | input                          | output                 |
//! |----------------|------------------------------------|--------------------------------|------------------------|
//! | `identity`     | any supported type                 | `42`                           | `42`                   |
//! | `bucket[16]`   | `Int64`                            | `34`                           | `3` (hash 2017239379)  |
//! | `truncate[10]` | `Int32`                            | `-1`                           | `-10`                  |
//! | `truncate[3]`  | `Utf8`                             | `"日本語です"`                  | `"日本語"`              |
//! | `year`         | `Timestamp(µs)`                    | `2024-01-15T10:30:00`          | `54` (human `2024`)    |
//! | `month`        | `Date32`                           | `2024-01-15`                   | `648` (human `2024-01`)|
//! | `day`          | `Timestamp(ns, "UTC")`             | `1969-12-31T23:59:59.999999`   | `Date32(-1)` (`1969-12-31`) |
//! | `hour`         | `Timestamp(ms)`                    | `2024-01-15T10:30:00`          | `473698` (`2024-01-15-10`) |
//! | `void`         | any                                | anything                       | null                   |
//!
//! Time-based transforms count whole units since 1970-01-01T00:00 UTC and floor
//! toward negative infinity, so every instant of 1969-12-31 is day `-1`.
//! Timestamps with a time zone are already UTC instants in Arrow, so the zone
//! never changes a partition value.

mod bucket;
pub mod murmur3;
mod temporal;
mod truncate;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, new_null_array};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::arrow::error::ArrowError;
use datafusion::common::ScalarValue;

/// An Iceberg partition transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transform {
    /// The source value, unmodified.
    Identity,
    /// Years since 1970.
    Year,
    /// Months since 1970-01.
    Month,
    /// Days since 1970-01-01, as a `Date32`.
    Day,
    /// Hours since 1970-01-01T00:00.
    Hour,
    /// `(murmur3_x86_32(value) & i32::MAX) % N`.
    Bucket(u32),
    /// Integers floored to a multiple of `W`; strings cut to `W` code points; binary to `W` bytes.
    Truncate(u32),
    /// Always null; used to drop a partition field while keeping its slot.
    Void,
}

/// Why a transform could not be parsed, typed or applied.
#[derive(Debug, thiserror::Error)]
pub enum TransformError {
    /// The text is not an Iceberg transform spelling.
    #[error(
        "invalid partition transform {input:?}: {reason}; expected one of identity, year, month, \
         day, hour, void, bucket[N] or truncate[W] with N and W integers in 1..=2147483647"
    )]
    Parse { input: String, reason: String },

    /// A `Bucket(0)` or `Truncate(0)` built without [`Transform::parse`].
    #[error("invalid transform {transform}: {reason}")]
    InvalidParameter { transform: Transform, reason: String },

    /// The transform is not defined for this Arrow type.
    #[error("transform {transform} cannot be applied to a column of type {data_type}; it accepts {expected}")]
    UnsupportedType {
        transform: Transform,
        data_type: DataType,
        expected: &'static str,
    },

    /// One value's result does not fit the result type (e.g. `hour` of a far-future `Timestamp(s)`).
    #[error("transform {transform} cannot be applied to value {value} of type {data_type}: {reason}")]
    OutOfRange {
        transform: Transform,
        data_type: DataType,
        value: String,
        reason: String,
    },

    /// [`Transform::parse_human_string`] got a malformed or out-of-range string.
    #[error("cannot parse {input:?} as a {transform} partition value: expected {expected}")]
    InvalidHumanString {
        transform: Transform,
        input: String,
        expected: &'static str,
    },

    /// [`Transform::parse_human_string`] on a transform other than year/month/day/hour.
    #[error(
        "transform {transform} has no human-readable partition value form; only year, month, day \
         and hour do"
    )]
    NoHumanString { transform: Transform },

    /// A literal could not be turned into (or read back from) a one-row array.
    #[error("cannot apply transform {transform} to literal {value}: {message}")]
    Scalar {
        transform: Transform,
        value: String,
        message: String,
    },

    /// Arrow rejected an array the kernel built; indicates a bug, not bad input.
    #[error("transform {transform}: {source}")]
    Arrow {
        transform: Transform,
        #[source]
        source: ArrowError,
    },
}

/// Largest bucket count / truncate width: Iceberg stores them as Java ints.
pub const MAX_PARAM: u32 = i32::MAX as u32;

const IDENTITY_TYPES: &str = "Boolean, Int8/Int16/Int32/Int64, Float32/Float64, Decimal128, \
     Date32, Time64, Timestamp (any unit and time zone), Utf8/LargeUtf8/Utf8View, \
     Binary/LargeBinary/BinaryView/FixedSizeBinary";

impl Transform {
    /// Parse Iceberg spellings: `identity`, `year`, `month`, `day`, `hour`,
    /// `bucket[16]`, `truncate[4]`, `void` (case-insensitive, surrounding
    /// whitespace ignored).
    pub fn parse(s: &str) -> Result<Transform, TransformError> {
        let err = |reason: &str| TransformError::Parse {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let lower = s.trim().to_ascii_lowercase();
        match lower.as_str() {
            "identity" => return Ok(Transform::Identity),
            "year" => return Ok(Transform::Year),
            "month" => return Ok(Transform::Month),
            "day" => return Ok(Transform::Day),
            "hour" => return Ok(Transform::Hour),
            "void" => return Ok(Transform::Void),
            _ => {}
        }
        let Some((name, rest)) = lower.split_once('[') else {
            return Err(err("unknown transform name"));
        };
        let Some(arg) = rest.strip_suffix(']') else {
            return Err(err("missing closing ']'"));
        };
        let make: fn(u32) -> Transform = match name.trim_end() {
            "bucket" => Transform::Bucket,
            "truncate" => Transform::Truncate,
            _ => return Err(err("unknown transform name")),
        };
        let arg = arg.trim();
        if arg.is_empty() || !arg.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err("the parameter must be a positive integer"));
        }
        match arg.parse::<u32>() {
            Ok(n) if (1..=MAX_PARAM).contains(&n) => Ok(make(n)),
            _ => Err(err("the parameter is out of range")),
        }
    }

    /// The Arrow type this transform produces for `source`, or why it cannot
    /// be applied to that type.
    pub fn result_type(&self, source: &DataType) -> Result<DataType, TransformError> {
        let unsupported = |expected| TransformError::UnsupportedType {
            transform: *self,
            data_type: source.clone(),
            expected,
        };
        match self {
            Transform::Void => Ok(source.clone()),
            Transform::Identity => {
                if is_identity_type(source) {
                    Ok(source.clone())
                } else {
                    Err(unsupported(IDENTITY_TYPES))
                }
            }
            Transform::Bucket(n) => {
                self.check_param(*n)?;
                if bucket::supports(source) {
                    Ok(DataType::Int32)
                } else {
                    Err(unsupported(bucket::SUPPORTED))
                }
            }
            Transform::Truncate(w) => {
                self.check_param(*w)?;
                if truncate::supports(source) {
                    Ok(source.clone())
                } else {
                    Err(unsupported(truncate::SUPPORTED))
                }
            }
            Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
                temporal::result_type(*self, source).ok_or_else(|| {
                    unsupported(if *self == Transform::Hour {
                        temporal::SUPPORTED_HOUR
                    } else {
                        temporal::SUPPORTED
                    })
                })
            }
        }
    }

    /// Apply to a whole array. Nulls stay null; `void` yields all nulls. The
    /// output type is always `self.result_type(input.data_type())`.
    pub fn apply(&self, input: &ArrayRef) -> Result<ArrayRef, TransformError> {
        let result_type = self.result_type(input.data_type())?;
        match self {
            Transform::Identity => Ok(Arc::clone(input)),
            Transform::Void => Ok(new_null_array(&result_type, input.len())),
            Transform::Bucket(n) => bucket::apply(*n, input),
            Transform::Truncate(w) => truncate::apply(*w, input),
            Transform::Year | Transform::Month | Transform::Day | Transform::Hour => temporal::apply(*self, input),
        }
    }

    /// Apply to one literal (predicate projection). `ScalarValue::Null` and
    /// typed nulls give a null of the result type.
    pub fn apply_scalar(&self, value: &ScalarValue) -> Result<ScalarValue, TransformError> {
        if matches!(value, ScalarValue::Null) {
            return self.untyped_null();
        }
        let scalar_err = |e: &dyn fmt::Display| TransformError::Scalar {
            transform: *self,
            value: format!("{value:?}"),
            message: e.to_string(),
        };
        // Run the array kernel on a one-row array: literals and written data
        // can then never disagree.
        let array = value.to_array().map_err(|e| scalar_err(&e))?;
        let out = self.apply(&array)?;
        ScalarValue::try_from_array(&out, 0).map_err(|e| scalar_err(&e))
    }

    /// Apply to many literals of one type with one kernel call (an `IN`
    /// list's projection); the same values as [`Self::apply_scalar`] on each.
    pub fn apply_scalars(&self, values: &[ScalarValue]) -> Result<Vec<ScalarValue>, TransformError> {
        if values.len() < 2 || values.iter().any(|v| matches!(v, ScalarValue::Null)) {
            return values.iter().map(|v| self.apply_scalar(v)).collect();
        }
        let Ok(array) = ScalarValue::iter_to_array(values.iter().cloned()) else {
            // Mixed types: one at a time.
            return values.iter().map(|v| self.apply_scalar(v)).collect();
        };
        let out = self.apply(&array)?;
        (0..out.len())
            .map(|i| {
                ScalarValue::try_from_array(&out, i).map_err(|e| TransformError::Scalar {
                    transform: *self,
                    value: format!("{:?}", values[i]),
                    message: e.to_string(),
                })
            })
            .collect()
    }

    /// Whether `a <= b` implies `t(a) <= t(b)`, so range predicates can be
    /// projected onto partition values.
    pub fn preserves_order(&self) -> bool {
        match self {
            Transform::Identity
            | Transform::Truncate(_)
            | Transform::Year
            | Transform::Month
            | Transform::Day
            | Transform::Hour => true,
            Transform::Bucket(_) | Transform::Void => false,
        }
    }

    /// Directory-name form of a time-based partition value: year `2024`,
    /// month `2024-01`, day `2024-01-15`, hour `2024-01-15-10`. `None` for
    /// other transforms, for nulls and for values of the wrong type.
    pub fn to_human_string(&self, value: &ScalarValue) -> Option<String> {
        let ordinal = match (self, value) {
            (Transform::Year | Transform::Month | Transform::Hour, ScalarValue::Int32(Some(v))) => *v,
            (Transform::Day, ScalarValue::Date32(Some(v)) | ScalarValue::Int32(Some(v))) => *v,
            _ => return None,
        };
        temporal::to_human(*self, ordinal)
    }

    /// Inverse of [`to_human_string`](Self::to_human_string): `Int32` for
    /// year/month/hour, `Date32` for day.
    pub fn parse_human_string(&self, s: &str) -> Result<ScalarValue, TransformError> {
        match self {
            Transform::Year | Transform::Month | Transform::Day | Transform::Hour => temporal::parse_human(*self, s),
            _ => Err(TransformError::NoHumanString { transform: *self }),
        }
    }

    fn check_param(&self, n: u32) -> Result<(), TransformError> {
        if n == 0 {
            return Err(TransformError::InvalidParameter {
                transform: *self,
                reason: "the parameter must be greater than 0".to_string(),
            });
        }
        if n > MAX_PARAM {
            return Err(TransformError::InvalidParameter {
                transform: *self,
                reason: format!("the parameter must be at most {MAX_PARAM} (Iceberg stores it as a 32-bit int)"),
            });
        }
        Ok(())
    }

    /// Null of the result type when the source type is unknown (`ScalarValue::Null`).
    fn untyped_null(&self) -> Result<ScalarValue, TransformError> {
        match self {
            Transform::Bucket(n) => self.check_param(*n).map(|_| ScalarValue::Int32(None)),
            Transform::Truncate(w) => self.check_param(*w).map(|_| ScalarValue::Null),
            Transform::Year | Transform::Month | Transform::Hour => Ok(ScalarValue::Int32(None)),
            Transform::Day => Ok(ScalarValue::Date32(None)),
            Transform::Identity | Transform::Void => Ok(ScalarValue::Null),
        }
    }
}

fn is_identity_type(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Null
            | DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(_, _)
            | DataType::Date32
            | DataType::Time64(TimeUnit::Microsecond | TimeUnit::Nanosecond)
            | DataType::Timestamp(_, _)
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_)
    )
}

/// Checked downcast used after matching on `data_type()`; an `Err` here means
/// an array whose type and concrete class disagree, never a user error.
fn downcast<T: 'static>(transform: Transform, array: &dyn Array) -> Result<&T, TransformError> {
    array.as_any().downcast_ref::<T>().ok_or_else(|| TransformError::Arrow {
        transform,
        source: ArrowError::InvalidArgumentError(format!(
            "array of type {} is not a {}",
            array.data_type(),
            std::any::type_name::<T>()
        )),
    })
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transform::Identity => f.write_str("identity"),
            Transform::Year => f.write_str("year"),
            Transform::Month => f.write_str("month"),
            Transform::Day => f.write_str("day"),
            Transform::Hour => f.write_str("hour"),
            Transform::Bucket(n) => write!(f, "bucket[{n}]"),
            Transform::Truncate(w) => write!(f, "truncate[{w}]"),
            Transform::Void => f.write_str("void"),
        }
    }
}

impl FromStr for Transform {
    type Err = TransformError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Transform::parse(s)
    }
}

impl serde::Serialize for Transform {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Transform {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Transform::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{
        BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Float64Array, Int32Array, Int64Array,
        StringArray, TimestampMicrosecondArray,
    };

    const ALL: [Transform; 8] = [
        Transform::Identity,
        Transform::Year,
        Transform::Month,
        Transform::Day,
        Transform::Hour,
        Transform::Bucket(16),
        Transform::Truncate(4),
        Transform::Void,
    ];

    #[test]
    fn many_literals_at_once_give_what_each_gives_alone() {
        let lists = [
            (0..50)
                .map(|i| ScalarValue::Int64(Some(i * 7919 - 100)))
                .collect::<Vec<_>>(),
            (0..50)
                .map(|i| ScalarValue::TimestampMicrosecond(Some(i * 3_600_000_000 * 13 - 86_400_000_000), None))
                .collect(),
            vec![
                ScalarValue::from("abcdef"),
                ScalarValue::from("x"),
                ScalarValue::Utf8(None),
            ],
        ];
        for t in ALL {
            for list in &lists {
                let Ok(each) = list.iter().map(|v| t.apply_scalar(v)).collect::<Result<Vec<_>, _>>() else {
                    continue;
                };
                assert_eq!(t.apply_scalars(list).unwrap(), each, "{t}");
            }
        }
    }

    #[test]
    fn parse_display_round_trip() {
        for t in ALL {
            assert_eq!(Transform::parse(&t.to_string()).unwrap(), t);
        }
        assert_eq!(Transform::parse("BUCKET[16]").unwrap(), Transform::Bucket(16));
        assert_eq!(Transform::parse(" Truncate[ 4 ] ").unwrap(), Transform::Truncate(4));
        assert_eq!(Transform::parse("Hour").unwrap(), Transform::Hour);
        assert_eq!("day".parse::<Transform>().unwrap(), Transform::Day);
        assert_eq!(Transform::Bucket(16).to_string(), "bucket[16]");
        assert_eq!(Transform::Truncate(4).to_string(), "truncate[4]");
    }

    #[test]
    fn parse_errors() {
        for bad in [
            "",
            "days",
            "bucket",
            "bucket[]",
            "bucket[0]",
            "truncate[0]",
            "bucket[-1]",
            "bucket[+3]",
            "bucket[1.5]",
            "bucket[16",
            "bucket[2147483648]",
            "truncate[99999999999]",
            "bucket[16]x",
            "foo[3]",
        ] {
            let err = Transform::parse(bad).unwrap_err();
            assert!(matches!(err, TransformError::Parse { .. }), "{bad}: {err}");
            assert!(err.to_string().contains("expected one of"), "{err}");
        }
        assert_eq!(
            Transform::parse("bucket[2147483647]").unwrap(),
            Transform::Bucket(i32::MAX as u32)
        );
    }

    #[test]
    fn serde_as_string() {
        for t in ALL {
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{t}\""));
            assert_eq!(serde_json::from_str::<Transform>(&json).unwrap(), t);
        }
        assert!(serde_json::from_str::<Transform>("\"bucket[0]\"").is_err());
        assert!(serde_json::from_str::<Transform>("3").is_err());
    }

    #[test]
    fn preserves_order() {
        for t in ALL {
            let expected = !matches!(t, Transform::Bucket(_) | Transform::Void);
            assert_eq!(t.preserves_order(), expected, "{t}");
        }
    }

    #[test]
    fn result_types() {
        let ts = DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()));
        assert_eq!(Transform::Identity.result_type(&ts).unwrap(), ts);
        assert_eq!(Transform::Void.result_type(&ts).unwrap(), ts);
        assert_eq!(Transform::Bucket(4).result_type(&ts).unwrap(), DataType::Int32);
        assert_eq!(Transform::Year.result_type(&ts).unwrap(), DataType::Int32);
        assert_eq!(Transform::Month.result_type(&ts).unwrap(), DataType::Int32);
        assert_eq!(Transform::Hour.result_type(&ts).unwrap(), DataType::Int32);
        assert_eq!(Transform::Day.result_type(&ts).unwrap(), DataType::Date32);
        assert_eq!(Transform::Day.result_type(&DataType::Date32).unwrap(), DataType::Date32);
        let dec = DataType::Decimal128(9, 2);
        assert_eq!(Transform::Truncate(10).result_type(&dec).unwrap(), dec);
        assert_eq!(
            Transform::Truncate(3).result_type(&DataType::Utf8View).unwrap(),
            DataType::Utf8View
        );
        assert_eq!(
            Transform::Void.result_type(&DataType::UInt64).unwrap(),
            DataType::UInt64
        );
    }

    #[test]
    fn unsupported_types_name_transform_and_type() {
        let cases = [
            (Transform::Bucket(16), DataType::Float64),
            (Transform::Bucket(16), DataType::Float32),
            (Transform::Bucket(16), DataType::Boolean),
            (Transform::Hour, DataType::Date32),
            (Transform::Day, DataType::Int64),
            (Transform::Year, DataType::Utf8),
            (Transform::Truncate(4), DataType::Date32),
            (Transform::Truncate(4), DataType::Timestamp(TimeUnit::Microsecond, None)),
            (Transform::Truncate(4), DataType::Float64),
            (Transform::Truncate(4), DataType::Boolean),
            (Transform::Truncate(4), DataType::FixedSizeBinary(16)),
            (Transform::Identity, DataType::UInt32),
        ];
        for (t, dt) in cases {
            let err = t.result_type(&dt).unwrap_err();
            let msg = err.to_string();
            assert!(matches!(err, TransformError::UnsupportedType { .. }), "{msg}");
            assert!(msg.contains(&t.to_string()), "{msg}");
            assert!(msg.contains(&dt.to_string()), "{msg}");
            assert!(msg.contains("accepts"), "{msg}");
            // apply and apply_scalar report the same error
            let arr = new_null_array(&dt, 2);
            assert!(t.apply(&arr).is_err());
        }
        let err = Transform::Bucket(3)
            .apply_scalar(&ScalarValue::Float64(Some(1.0)))
            .unwrap_err();
        assert!(err.to_string().contains("bucket[3]"), "{err}");
        assert!(err.to_string().contains("Float64"), "{err}");
    }

    #[test]
    fn zero_parameter_is_an_error_not_a_panic() {
        let arr: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        for t in [Transform::Bucket(0), Transform::Truncate(0)] {
            assert!(matches!(
                t.apply(&arr).unwrap_err(),
                TransformError::InvalidParameter { .. }
            ));
            assert!(t.apply_scalar(&ScalarValue::Int32(Some(1))).is_err());
            assert!(t.apply_scalar(&ScalarValue::Null).is_err());
        }
    }

    #[test]
    fn identity_and_void() {
        let arr: ArrayRef = Arc::new(Float64Array::from(vec![Some(1.5), None, Some(-0.0)]));
        let out = Transform::Identity.apply(&arr).unwrap();
        assert_eq!(&out, &arr);
        let out = Transform::Void.apply(&arr).unwrap();
        assert_eq!(out.data_type(), &DataType::Float64);
        assert_eq!(out.len(), 3);
        assert_eq!(out.null_count(), 3);

        let bools: ArrayRef = Arc::new(BooleanArray::from(vec![true, false]));
        assert_eq!(&Transform::Identity.apply(&bools).unwrap(), &bools);

        let ts: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![Some(1), None]).with_timezone("+02:00"));
        let out = Transform::Void.apply(&ts).unwrap();
        assert_eq!(out.data_type(), ts.data_type());
        assert_eq!(out.null_count(), 2);

        assert_eq!(
            Transform::Void
                .apply_scalar(&ScalarValue::Utf8(Some("x".into())))
                .unwrap(),
            ScalarValue::Utf8(None)
        );
        assert_eq!(
            Transform::Identity
                .apply_scalar(&ScalarValue::Decimal128(Some(1420), 9, 2))
                .unwrap(),
            ScalarValue::Decimal128(Some(1420), 9, 2)
        );
    }

    #[test]
    fn scalar_nulls_are_typed() {
        assert_eq!(
            Transform::Bucket(8).apply_scalar(&ScalarValue::Null).unwrap(),
            ScalarValue::Int32(None)
        );
        assert_eq!(
            Transform::Day.apply_scalar(&ScalarValue::Null).unwrap(),
            ScalarValue::Date32(None)
        );
        assert_eq!(
            Transform::Year.apply_scalar(&ScalarValue::Null).unwrap(),
            ScalarValue::Int32(None)
        );
        assert_eq!(
            Transform::Identity.apply_scalar(&ScalarValue::Null).unwrap(),
            ScalarValue::Null
        );
        assert_eq!(
            Transform::Bucket(8).apply_scalar(&ScalarValue::Utf8(None)).unwrap(),
            ScalarValue::Int32(None)
        );
        assert_eq!(
            Transform::Day
                .apply_scalar(&ScalarValue::TimestampSecond(None, Some("UTC".into())))
                .unwrap(),
            ScalarValue::Date32(None)
        );
        assert_eq!(
            Transform::Truncate(2)
                .apply_scalar(&ScalarValue::Decimal128(None, 10, 3))
                .unwrap(),
            ScalarValue::Decimal128(None, 10, 3)
        );
        assert_eq!(
            Transform::Month.apply_scalar(&ScalarValue::Date32(None)).unwrap(),
            ScalarValue::Int32(None)
        );
    }

    /// Every transform, applied to an array and to each of its elements as a
    /// scalar, must agree; output types must equal `result_type`.
    #[test]
    fn apply_matches_apply_scalar() {
        let arrays: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![Some(34), None, Some(-1), Some(i32::MIN)])),
            Arc::new(Int64Array::from(vec![Some(34), Some(-11), None, Some(i64::MAX)])),
            Arc::new(
                Decimal128Array::from(vec![Some(1420), Some(-1065), None, Some(0)])
                    .with_precision_and_scale(9, 2)
                    .unwrap(),
            ),
            Arc::new(Date32Array::from(vec![Some(17486), Some(-1), None, Some(-719162)])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(1_510_871_468_000_001), Some(-1), None, Some(0)])
                    .with_timezone("UTC"),
            ),
            Arc::new(StringArray::from(vec![
                Some("iceberg"),
                None,
                Some("日本語"),
                Some("e\u{301}e\u{301}"),
            ])),
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    vec![Some(vec![0u8, 1, 2, 3]), None, Some(vec![9, 9, 9, 9])].into_iter(),
                    4,
                )
                .unwrap(),
            ),
        ];
        let transforms = [
            Transform::Identity,
            Transform::Void,
            Transform::Bucket(1),
            Transform::Bucket(7),
            Transform::Bucket(1000),
            Transform::Truncate(1),
            Transform::Truncate(3),
            Transform::Truncate(10),
            Transform::Year,
            Transform::Month,
            Transform::Day,
            Transform::Hour,
        ];
        let mut checked = 0;
        for arr in &arrays {
            for t in transforms {
                let Ok(rt) = t.result_type(arr.data_type()) else {
                    continue;
                };
                let Ok(out) = t.apply(arr) else {
                    // Overflowing rows (e.g. truncate of i32::MIN) fail the whole
                    // array; the failing element must fail as a scalar too.
                    let any_fail = (0..arr.len()).any(|i| {
                        let s = ScalarValue::try_from_array(arr, i).unwrap();
                        t.apply_scalar(&s).is_err()
                    });
                    assert!(any_fail, "{t} on {}", arr.data_type());
                    continue;
                };
                assert_eq!(out.data_type(), &rt, "{t} on {}", arr.data_type());
                assert_eq!(out.len(), arr.len());
                for i in 0..arr.len() {
                    let s = ScalarValue::try_from_array(arr, i).unwrap();
                    let expected = ScalarValue::try_from_array(&out, i).unwrap();
                    assert_eq!(t.apply_scalar(&s).unwrap(), expected, "{t} on {s:?}");
                    assert_eq!(arr.is_null(i) || t == Transform::Void, out.is_null(i));
                    checked += 1;
                }
            }
        }
        assert!(checked > 150, "{checked}");
    }

    #[test]
    fn sliced_arrays() {
        let arr: ArrayRef = Arc::new(StringArray::from(vec![
            Some("abcdef"),
            None,
            Some("ghijkl"),
            Some("mn"),
        ]));
        let sliced = arr.slice(1, 3);
        let out = Transform::Truncate(2).apply(&sliced).unwrap();
        let expected: ArrayRef = Arc::new(StringArray::from(vec![None, Some("gh"), Some("mn")]));
        assert_eq!(&out, &expected);
        let out = Transform::Bucket(100).apply(&sliced).unwrap();
        let full = Transform::Bucket(100).apply(&arr).unwrap();
        assert_eq!(&out, &full.slice(1, 3));
    }

    /// The examples table in the module docs.
    #[test]
    fn doc_table_examples() {
        let ts = 1_705_314_600i64; // 2024-01-15T10:30:00Z
        let cases = [
            (
                Transform::Identity,
                ScalarValue::Int32(Some(42)),
                ScalarValue::Int32(Some(42)),
            ),
            (
                Transform::Bucket(16),
                ScalarValue::Int64(Some(34)),
                ScalarValue::Int32(Some(3)),
            ),
            (
                Transform::Truncate(10),
                ScalarValue::Int32(Some(-1)),
                ScalarValue::Int32(Some(-10)),
            ),
            (
                Transform::Truncate(3),
                ScalarValue::Utf8(Some("日本語です".into())),
                ScalarValue::Utf8(Some("日本語".into())),
            ),
            (
                Transform::Year,
                ScalarValue::TimestampMicrosecond(Some(ts * 1_000_000), None),
                ScalarValue::Int32(Some(54)),
            ),
            (
                Transform::Month,
                ScalarValue::Date32(Some(19737)),
                ScalarValue::Int32(Some(648)),
            ),
            (
                Transform::Day,
                ScalarValue::TimestampNanosecond(Some(-1_000), Some("UTC".into())),
                ScalarValue::Date32(Some(-1)),
            ),
            (
                Transform::Hour,
                ScalarValue::TimestampMillisecond(Some(ts * 1_000), None),
                ScalarValue::Int32(Some(473698)),
            ),
            (Transform::Void, ScalarValue::Int64(Some(7)), ScalarValue::Int64(None)),
        ];
        for (t, input, output) in cases {
            assert_eq!(t.apply_scalar(&input).unwrap(), output, "{t} {input:?}");
        }
        let human = |t: Transform, v| t.to_human_string(&v).unwrap();
        assert_eq!(human(Transform::Year, ScalarValue::Int32(Some(54))), "2024");
        assert_eq!(human(Transform::Month, ScalarValue::Int32(Some(648))), "2024-01");
        assert_eq!(human(Transform::Day, ScalarValue::Date32(Some(-1))), "1969-12-31");
        assert_eq!(
            human(Transform::Hour, ScalarValue::Int32(Some(473698))),
            "2024-01-15-10"
        );
    }

    #[test]
    fn human_strings_only_for_time_transforms() {
        assert_eq!(Transform::Bucket(4).to_human_string(&ScalarValue::Int32(Some(1))), None);
        assert_eq!(Transform::Identity.to_human_string(&ScalarValue::Int32(Some(1))), None);
        assert_eq!(Transform::Year.to_human_string(&ScalarValue::Int32(None)), None);
        assert_eq!(
            Transform::Year.to_human_string(&ScalarValue::Utf8(Some("54".into()))),
            None
        );
        let err = Transform::Truncate(3).parse_human_string("abc").unwrap_err();
        assert!(matches!(err, TransformError::NoHumanString { .. }));
        assert!(err.to_string().contains("truncate[3]"));
    }
}
