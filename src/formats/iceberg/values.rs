//! Iceberg values in manifests → typed [`ScalarValue`]s.
//!
//! Two encodings occur:
//!
//! | where                                   | encoding                         | example (`ts_day` 2024-01-02)  |
//! |-----------------------------------------|----------------------------------|--------------------------------|
//! | `partition` record of a manifest entry  | Avro value of the result type    | `{"int","logicalType":"date"}` 19724 |
//! | `lower_bounds` / `upper_bounds`, manifest-list partition summaries | single-value binary | `4C 4D 00 00` (LE int) |
//!
//! Single-value binary: int/date 4 bytes LE, long/time/timestamp 8 bytes LE
//! (µs, or ns for the `_ns` types), float/double IEEE LE, string UTF-8,
//! binary/fixed as is, decimal the unscaled value as big-endian two's
//! complement, boolean one byte.

use apache_avro::types::Value;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;

use super::avro::{as_i64, unwrap};

/// An Avro value as a scalar of `target` (the partition field's result type).
/// `None` when the value cannot be read as that type.
pub fn avro_to_scalar(value: &Value, target: &DataType) -> Option<ScalarValue> {
    if matches!(unwrap(value), Value::Null) {
        return ScalarValue::try_from(target).ok();
    }
    let scalar = convert(unwrap(value), target)?;
    if &scalar.data_type() == target {
        Some(scalar)
    } else {
        scalar.cast_to(target).ok()
    }
}

/// An Avro value as the scalar its own type suggests (for partition fields
/// whose transform is unknown: compared, never pruned on).
pub fn avro_natural(value: &Value) -> ScalarValue {
    let value = unwrap(value);
    let hint = match value {
        Value::Date(_) => DataType::Date32,
        Value::Int(_) => DataType::Int32,
        Value::TimestampMicros(_) | Value::LocalTimestampMicros(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
        Value::TimestampNanos(_) | Value::LocalTimestampNanos(_) => DataType::Timestamp(TimeUnit::Nanosecond, None),
        Value::TimeMicros(_) => DataType::Time64(TimeUnit::Microsecond),
        _ => DataType::Int64,
    };
    if matches!(value, Value::Null) {
        return ScalarValue::Null;
    }
    convert(value, &hint).unwrap_or(ScalarValue::Null)
}

fn convert(value: &Value, target: &DataType) -> Option<ScalarValue> {
    Some(match (value, target) {
        (Value::Boolean(b), _) => ScalarValue::Boolean(Some(*b)),
        (Value::String(s) | Value::Enum(_, s), _) => ScalarValue::Utf8(Some(s.clone())),
        (Value::Float(f), _) => ScalarValue::Float32(Some(*f)),
        (Value::Double(f), _) => ScalarValue::Float64(Some(*f)),
        (Value::Bytes(b) | Value::Fixed(_, b), DataType::Decimal128(p, s)) => {
            ScalarValue::Decimal128(Some(be_i128(b)?), *p, *s)
        }
        (Value::Decimal(d), DataType::Decimal128(p, s)) => {
            let bytes: Vec<u8> = Vec::try_from(d).ok()?;
            ScalarValue::Decimal128(Some(be_i128(&bytes)?), *p, *s)
        }
        (Value::Bytes(b), DataType::FixedSizeBinary(n)) | (Value::Fixed(_, b), DataType::FixedSizeBinary(n)) => {
            ScalarValue::FixedSizeBinary(*n, Some(b.clone()))
        }
        (Value::Uuid(u), _) => ScalarValue::FixedSizeBinary(16, Some(u.as_bytes().to_vec())),
        (Value::Bytes(b) | Value::Fixed(_, b), _) => ScalarValue::Binary(Some(b.clone())),
        (other, DataType::Date32) => ScalarValue::Date32(Some(i32::try_from(as_i64(other)?).ok()?)),
        (other, DataType::Int32) => ScalarValue::Int32(Some(i32::try_from(as_i64(other)?).ok()?)),
        (other, DataType::Int64) => ScalarValue::Int64(Some(as_i64(other)?)),
        (other, DataType::Timestamp(unit, tz)) => timestamp(as_i64(other)?, unit, tz.clone()),
        (other, DataType::Time64(TimeUnit::Microsecond)) => ScalarValue::Time64Microsecond(Some(as_i64(other)?)),
        (other, DataType::Time64(TimeUnit::Nanosecond)) => ScalarValue::Time64Nanosecond(Some(as_i64(other)?)),
        (other, _) => ScalarValue::Int64(Some(as_i64(other)?)),
    })
}

fn timestamp(v: i64, unit: &TimeUnit, tz: Option<std::sync::Arc<str>>) -> ScalarValue {
    match unit {
        TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(Some(v), tz),
        TimeUnit::Millisecond => ScalarValue::TimestampMillisecond(Some(v), tz),
        TimeUnit::Second => ScalarValue::TimestampSecond(Some(v), tz),
        TimeUnit::Microsecond => ScalarValue::TimestampMicrosecond(Some(v), tz),
    }
}

/// A big-endian two's complement integer of at most 16 bytes.
fn be_i128(bytes: &[u8]) -> Option<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return None;
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xFF } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Some(i128::from_be_bytes(buf))
}

fn le<const N: usize>(bytes: &[u8]) -> Option<[u8; N]> {
    bytes.get(..N)?.try_into().ok()
}

/// Decode a single-value binary bound as a value of `target`.
pub fn decode_bound(bytes: &[u8], target: &DataType) -> Option<ScalarValue> {
    Some(match target {
        DataType::Boolean => ScalarValue::Boolean(Some(*bytes.first()? != 0)),
        DataType::Int32 => ScalarValue::Int32(Some(i32::from_le_bytes(le(bytes)?))),
        DataType::Date32 => ScalarValue::Date32(Some(i32::from_le_bytes(le(bytes)?))),
        // A long column promoted from int may still carry 4-byte bounds.
        DataType::Int64 if bytes.len() == 4 => ScalarValue::Int64(Some(i32::from_le_bytes(le(bytes)?) as i64)),
        DataType::Int64 => ScalarValue::Int64(Some(i64::from_le_bytes(le(bytes)?))),
        DataType::Float32 => ScalarValue::Float32(Some(f32::from_le_bytes(le(bytes)?))),
        DataType::Float64 if bytes.len() == 4 => ScalarValue::Float64(Some(f32::from_le_bytes(le(bytes)?) as f64)),
        DataType::Float64 => ScalarValue::Float64(Some(f64::from_le_bytes(le(bytes)?))),
        DataType::Time64(TimeUnit::Microsecond) => ScalarValue::Time64Microsecond(Some(i64::from_le_bytes(le(bytes)?))),
        DataType::Time64(TimeUnit::Nanosecond) => ScalarValue::Time64Nanosecond(Some(i64::from_le_bytes(le(bytes)?))),
        DataType::Timestamp(unit, tz) => timestamp(i64::from_le_bytes(le(bytes)?), unit, tz.clone()),
        DataType::Utf8 => ScalarValue::Utf8(Some(String::from_utf8(bytes.to_vec()).ok()?)),
        DataType::Binary => ScalarValue::Binary(Some(bytes.to_vec())),
        DataType::FixedSizeBinary(n) => {
            if bytes.len() != *n as usize {
                return None;
            }
            ScalarValue::FixedSizeBinary(*n, Some(bytes.to_vec()))
        }
        DataType::Decimal128(p, s) => ScalarValue::Decimal128(Some(be_i128(bytes)?), *p, *s),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_decode_by_type() {
        assert_eq!(
            decode_bound(&[0x4C, 0x4D, 0, 0], &DataType::Date32),
            Some(ScalarValue::Date32(Some(19788)))
        );
        assert_eq!(
            decode_bound(&[0xFF; 4], &DataType::Int64),
            Some(ScalarValue::Int64(Some(-1)))
        );
        assert_eq!(
            decode_bound(&[0xFF, 0x8A], &DataType::Decimal128(9, 2)),
            Some(ScalarValue::Decimal128(Some(-118), 9, 2))
        );
        assert_eq!(
            decode_bound(b"abc", &DataType::Utf8),
            Some(ScalarValue::Utf8(Some("abc".into())))
        );
        assert_eq!(decode_bound(&[1, 2], &DataType::Int32), None);
        assert_eq!(decode_bound(&[0xFF, 0xFE], &DataType::Utf8), None);
    }

    #[test]
    fn avro_partition_values_take_the_result_type() {
        assert_eq!(
            avro_to_scalar(&Value::Date(-1), &DataType::Date32),
            Some(ScalarValue::Date32(Some(-1)))
        );
        assert_eq!(
            avro_to_scalar(&Value::Union(1, Box::new(Value::Int(648))), &DataType::Int32),
            Some(ScalarValue::Int32(Some(648)))
        );
        assert_eq!(
            avro_to_scalar(&Value::Union(0, Box::new(Value::Null)), &DataType::Utf8),
            Some(ScalarValue::Utf8(None))
        );
        assert_eq!(
            avro_to_scalar(
                &Value::Long(5),
                &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            ),
            Some(ScalarValue::TimestampMicrosecond(Some(5), Some("UTC".into())))
        );
    }
}
