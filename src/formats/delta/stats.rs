//! Delta file statistics (kernel's `stats_parsed`, typed per column) → the
//! bounds our manifests keep, a column at a time.
//!
//! ```json
//! {"numRecords":2,"minValues":{"ts":"2024-01-01 00:00:00.000"},"maxValues":{"ts":"2024-01-01 23:59:59.999"},"nullCount":{"ts":0}}
//! ```
//!
//! Keys are physical column names. What writers put there is not always a
//! value of the file, so bounds are read conservatively:
//!
//! | column type | rule                                                                       |
//! |-------------|----------------------------------------------------------------------------|
//! | timestamp   | written truncated to milliseconds (`…59.999` for `…59.999999`): widened by 999 µs both ways |
//! | string      | a max of 32 or more characters may be a truncated prefix: dropped          |
//! | float       | NaN handling differs between writers: bounds dropped, null counts kept     |
//!
//! Partition columns have no stats in the log; their value is known, so
//! they get exact ones (min = max = value, null count 0 or all rows; see
//! `convert`). Null counts are taken as logged, null where a file has none.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, TimeUnit, TimestampMicrosecondType, TimestampNanosecondType};

/// Longest string bound taken as exact (Delta writers truncate at 32 characters).
const MAX_EXACT_STRING: usize = 31;

/// The bounds of one column (`minValues` or `maxValues` of every file) as
/// our manifest keeps them, typed `dt`; `None` when the column keeps no
/// bounds (floats, types without an order here, values that do not cast).
pub fn stats_bound(values: &ArrayRef, dt: &DataType, is_max: bool) -> Option<ArrayRef> {
    match dt {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => None,
        DataType::Utf8 => {
            let strings = cast(values, &DataType::Utf8).ok()?;
            let strings = strings.as_string::<i32>();
            if !is_max {
                return Some(Arc::new(strings.clone()));
            }
            let kept: StringArray = strings
                .iter()
                .map(|v| v.filter(|s| s.chars().count() <= MAX_EXACT_STRING))
                .collect();
            Some(Arc::new(kept))
        }
        DataType::Timestamp(unit, tz) => {
            let typed = cast(values, dt).ok()?;
            let shift = |x: i64, slack: i64| match is_max {
                true => x.saturating_add(slack),
                false => x.saturating_sub(slack),
            };
            Some(match unit {
                TimeUnit::Microsecond => Arc::new(
                    typed
                        .as_primitive::<TimestampMicrosecondType>()
                        .unary::<_, TimestampMicrosecondType>(|x| shift(x, 999))
                        .with_timezone_opt(tz.clone()),
                ),
                TimeUnit::Nanosecond => Arc::new(
                    typed
                        .as_primitive::<TimestampNanosecondType>()
                        .unary::<_, TimestampNanosecondType>(|x| shift(x, 999_999))
                        .with_timezone_opt(tz.clone()),
                ),
                _ => typed,
            })
        }
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Decimal128(_, _)
        | DataType::Date32 => cast(values, dt).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, Float64Array, Int64Array, TimestampMicrosecondArray};

    use super::*;

    #[test]
    fn millisecond_timestamps_are_widened() {
        let dt = DataType::Timestamp(TimeUnit::Microsecond, None);
        let logged: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
            Some(1_704_153_599_999_000),
            None,
            Some(i64::MAX),
        ]));
        let max = stats_bound(&logged, &dt, true).unwrap();
        let max = max.as_primitive::<TimestampMicrosecondType>();
        assert_eq!(max.value(0), 1_704_153_599_999_999);
        assert!(max.is_null(1));
        assert_eq!(max.value(2), i64::MAX);
        let min = stats_bound(&logged, &dt, false).unwrap();
        assert_eq!(
            min.as_primitive::<TimestampMicrosecondType>().value(0),
            1_704_153_599_998_001
        );
    }

    #[test]
    fn long_string_maxima_and_float_bounds_are_dropped() {
        let strings: ArrayRef = Arc::new(StringArray::from(vec!["x".repeat(32), "é".repeat(31)]));
        let max = stats_bound(&strings, &DataType::Utf8, true).unwrap();
        assert!(max.is_null(0));
        assert_eq!(max.as_string::<i32>().value(1), "é".repeat(31));
        let min = stats_bound(&strings, &DataType::Utf8, false).unwrap();
        assert!(min.is_valid(0));
        let floats: ArrayRef = Arc::new(Float64Array::from(vec![1.5]));
        assert!(stats_bound(&floats, &DataType::Float64, false).is_none());
        let longs: ArrayRef = Arc::new(Int64Array::from(vec![-5]));
        let ints = stats_bound(&longs, &DataType::Int32, false).unwrap();
        assert_eq!(
            ints.as_primitive::<datafusion::arrow::datatypes::Int32Type>().value(0),
            -5
        );
    }
}
