//! A Delta `add.stats` JSON string → our per-file column statistics.
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
//! they get exact ones (min = max = value, null count 0 or all rows).

use std::collections::{HashMap, HashSet};

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use serde_json::Value as Json;

use super::log::LogColumn;
use crate::manifest::ColumnStats;
use crate::spec::Schema;

/// Statistics of one file.
#[derive(Debug, Default)]
pub struct FileStats {
    pub record_count: Option<u64>,
    pub columns: Vec<ColumnStats>,
    pub known_null_counts: HashSet<i32>,
}

/// Longest string bound taken as exact (Delta writers truncate at 32 characters).
const MAX_EXACT_STRING: usize = 31;

fn bound(value: &Json, dt: &DataType, is_max: bool) -> Option<ScalarValue> {
    let text = match value {
        Json::String(s) => s.clone(),
        Json::Number(n) => n.to_string(),
        Json::Bool(b) => b.to_string(),
        _ => return None,
    };
    match dt {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => None,
        DataType::Utf8 if is_max && text.chars().count() > MAX_EXACT_STRING => None,
        DataType::Timestamp(unit, _) => {
            let v = crate::values::parse(Some(&text), dt).ok()?;
            let slack = match unit {
                TimeUnit::Microsecond => 999,
                TimeUnit::Nanosecond => 999_999,
                _ => 0,
            };
            let shift = |x: i64| {
                if is_max {
                    x.saturating_add(slack)
                } else {
                    x.saturating_sub(slack)
                }
            };
            Some(match v {
                ScalarValue::TimestampMicrosecond(Some(x), tz) => ScalarValue::TimestampMicrosecond(Some(shift(x)), tz),
                ScalarValue::TimestampNanosecond(Some(x), tz) => ScalarValue::TimestampNanosecond(Some(shift(x)), tz),
                other => other,
            })
        }
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Decimal128(_, _)
        | DataType::Date32
        | DataType::Utf8 => crate::values::parse(Some(&text), dt).ok().filter(|v| !v.is_null()),
        _ => None,
    }
}

/// Statistics of a file from its stats JSON; `constants` are the values of
/// its partition columns by column index.
pub fn file_stats(
    json: Option<&str>,
    schema: &Schema,
    columns: &[LogColumn],
    constants: HashMap<usize, ScalarValue>,
) -> FileStats {
    let doc: Json = json.and_then(|j| serde_json::from_str(j).ok()).unwrap_or(Json::Null);
    let record_count = doc.get("numRecords").and_then(Json::as_u64);
    let mut out = FileStats {
        record_count,
        ..Default::default()
    };
    for (i, (field, column)) in schema.fields.iter().zip(columns).enumerate() {
        let dt = crate::spec::types::strip_metadata(&field.field_type.to_arrow());
        if let Some(value) = constants.get(&i) {
            let Some(rows) = record_count else { continue };
            out.known_null_counts.insert(field.id);
            let present = !value.is_null();
            out.columns.push(ColumnStats {
                field_id: field.id,
                null_count: if present { 0 } else { rows },
                min: present.then(|| value.clone()),
                max: present.then(|| value.clone()),
            });
            continue;
        }
        if field.field_type.as_primitive().is_none() {
            continue;
        }
        let get = |key: &str| doc.get(key).and_then(|m| m.get(&column.physical_name));
        let null_count = get("nullCount").and_then(Json::as_u64);
        let min = get("minValues").and_then(|v| bound(v, &dt, false));
        let max = get("maxValues").and_then(|v| bound(v, &dt, true));
        if null_count.is_none() && min.is_none() && max.is_none() {
            continue;
        }
        if null_count.is_some() {
            out.known_null_counts.insert(field.id);
        }
        out.columns.push(ColumnStats {
            field_id: field.id,
            null_count: null_count.unwrap_or(0),
            min,
            max,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millisecond_timestamps_are_widened() {
        let dt = DataType::Timestamp(TimeUnit::Microsecond, None);
        let max = bound(&Json::String("2024-01-01 23:59:59.999".into()), &dt, true).unwrap();
        assert_eq!(
            max,
            ScalarValue::TimestampMicrosecond(Some(1_704_153_599_999_999), None)
        );
        let min = bound(&Json::String("2024-01-01T00:00:00.000Z".into()), &dt, false).unwrap();
        assert_eq!(
            min,
            ScalarValue::TimestampMicrosecond(Some(1_704_067_199_999_001), None)
        );
    }

    #[test]
    fn long_string_maxima_and_float_bounds_are_dropped() {
        let long = Json::String("x".repeat(32));
        assert!(bound(&long, &DataType::Utf8, true).is_none());
        assert!(bound(&long, &DataType::Utf8, false).is_some());
        assert!(bound(&Json::from(1.5), &DataType::Float64, false).is_none());
        assert_eq!(
            bound(&Json::from(-5), &DataType::Int32, false),
            Some(ScalarValue::Int32(Some(-5)))
        );
    }
}
