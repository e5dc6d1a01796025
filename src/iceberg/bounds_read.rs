//! Iceberg single-value binary bounds → typed values: one [`ScalarValue`]
//! ([`decode_bound`], for manifest-list summaries) or a whole typed column
//! at once ([`bounds_array`], for a manifest's `lower_bounds`/`upper_bounds`).
//!
//! Two encodings occur:
//!
//! | where                                   | encoding                         | example (`ts_day` 2024-01-02)  |
//! |-----------------------------------------|----------------------------------|--------------------------------|
//! | `partition` record of a manifest entry  | Avro value of the result type (read in `entries`) | `{"int","logicalType":"date"}` 19724 |
//! | `lower_bounds` / `upper_bounds`, manifest-list partition summaries | single-value binary | `4C 4D 00 00` (LE int) |
//!
//! Single-value binary: int/date 4 bytes LE, long/time/timestamp 8 bytes LE
//! (µs, or ns for the `_ns` types), float/double IEEE LE, string UTF-8,
//! binary/fixed as is, decimal the unscaled value as big-endian two's
//! complement, boolean one byte.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, Decimal128Array, FixedSizeBinaryArray,
    PrimitiveArray, StringArray,
};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Float32Type, Float64Type, Int32Type, Int64Type, Time64MicrosecondType, Time64NanosecondType,
    TimeUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use datafusion::common::ScalarValue;

/// `v` in `unit` as a timestamp scalar of that unit.
pub fn timestamp(v: i64, unit: &TimeUnit, tz: Option<std::sync::Arc<str>>) -> ScalarValue {
    match unit {
        TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(Some(v), tz),
        TimeUnit::Millisecond => ScalarValue::TimestampMillisecond(Some(v), tz),
        TimeUnit::Second => ScalarValue::TimestampSecond(Some(v), tz),
        TimeUnit::Microsecond => ScalarValue::TimestampMicrosecond(Some(v), tz),
    }
}

/// A big-endian two's complement integer of at most 16 bytes.
pub fn be_i128(bytes: &[u8]) -> Option<i128> {
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

fn int32(b: &[u8]) -> Option<i32> {
    Some(i32::from_le_bytes(le(b)?))
}

/// A long bound; a long column promoted from int may still carry 4-byte bounds.
fn int64(b: &[u8]) -> Option<i64> {
    if b.len() == 4 {
        return int32(b).map(i64::from);
    }
    Some(i64::from_le_bytes(le(b)?))
}

fn float32(b: &[u8]) -> Option<f32> {
    Some(f32::from_le_bytes(le(b)?))
}

/// A double bound; a double column promoted from float may carry 4-byte bounds.
fn float64(b: &[u8]) -> Option<f64> {
    if b.len() == 4 {
        return float32(b).map(f64::from);
    }
    Some(f64::from_le_bytes(le(b)?))
}

fn long(b: &[u8]) -> Option<i64> {
    Some(i64::from_le_bytes(le(b)?))
}

/// Decode a single-value binary bound as a value of `target`.
pub fn decode_bound(bytes: &[u8], target: &DataType) -> Option<ScalarValue> {
    Some(match target {
        DataType::Boolean => ScalarValue::Boolean(Some(*bytes.first()? != 0)),
        DataType::Int32 => ScalarValue::Int32(Some(int32(bytes)?)),
        DataType::Date32 => ScalarValue::Date32(Some(int32(bytes)?)),
        DataType::Int64 => ScalarValue::Int64(Some(int64(bytes)?)),
        DataType::Float32 => ScalarValue::Float32(Some(float32(bytes)?)),
        DataType::Float64 => ScalarValue::Float64(Some(float64(bytes)?)),
        DataType::Time64(TimeUnit::Microsecond) => ScalarValue::Time64Microsecond(Some(long(bytes)?)),
        DataType::Time64(TimeUnit::Nanosecond) => ScalarValue::Time64Nanosecond(Some(long(bytes)?)),
        DataType::Timestamp(unit, tz) => timestamp(long(bytes)?, unit, tz.clone()),
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

/// A column of single-value binary bounds decoded as one column of
/// `target` (null where absent or unreadable): [`decode_bound`] per row,
/// with the type matched once.
pub fn bounds_array(values: &BinaryArray, target: &DataType) -> ArrayRef {
    fn prim<T: ArrowPrimitiveType>(values: &BinaryArray, f: impl Fn(&[u8]) -> Option<T::Native>) -> PrimitiveArray<T> {
        values.iter().map(|v| v.and_then(&f)).collect()
    }
    match target {
        DataType::Boolean => Arc::new(
            values
                .iter()
                .map(|v| v.and_then(|b| b.first().map(|x| *x != 0)))
                .collect::<BooleanArray>(),
        ),
        DataType::Int32 => Arc::new(prim::<Int32Type>(values, int32)),
        DataType::Date32 => Arc::new(prim::<Date32Type>(values, int32)),
        DataType::Int64 => Arc::new(prim::<Int64Type>(values, int64)),
        DataType::Float32 => Arc::new(prim::<Float32Type>(values, float32)),
        DataType::Float64 => Arc::new(prim::<Float64Type>(values, float64)),
        DataType::Time64(TimeUnit::Microsecond) => Arc::new(prim::<Time64MicrosecondType>(values, long)),
        DataType::Time64(TimeUnit::Nanosecond) => Arc::new(prim::<Time64NanosecondType>(values, long)),
        DataType::Timestamp(unit, tz) => {
            let tz = tz.clone();
            match unit {
                TimeUnit::Second => Arc::new(prim::<TimestampSecondType>(values, long).with_timezone_opt(tz)),
                TimeUnit::Millisecond => Arc::new(prim::<TimestampMillisecondType>(values, long).with_timezone_opt(tz)),
                TimeUnit::Microsecond => Arc::new(prim::<TimestampMicrosecondType>(values, long).with_timezone_opt(tz)),
                TimeUnit::Nanosecond => Arc::new(prim::<TimestampNanosecondType>(values, long).with_timezone_opt(tz)),
            }
        }
        DataType::Utf8 => Arc::new(
            values
                .iter()
                .map(|v| v.and_then(|b| std::str::from_utf8(b).ok()))
                .collect::<StringArray>(),
        ),
        DataType::Binary => Arc::new(values.clone()),
        DataType::FixedSizeBinary(n) => {
            let size = *n as usize;
            let iter = values.iter().map(|v| v.filter(|b| b.len() == size));
            match FixedSizeBinaryArray::try_from_sparse_iter_with_size(iter, *n) {
                Ok(a) => Arc::new(a),
                Err(_) => datafusion::arrow::array::new_null_array(target, values.len()),
            }
        }
        DataType::Decimal128(p, s) => {
            let a: Decimal128Array = values.iter().map(|v| v.and_then(be_i128)).collect();
            match a.with_precision_and_scale(*p, *s) {
                Ok(a) => Arc::new(a),
                Err(_) => datafusion::arrow::array::new_null_array(target, values.len()),
            }
        }
        _ => datafusion::arrow::array::new_null_array(target, values.len()),
    }
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
    fn bound_columns_decode_like_single_bounds() {
        let raw: BinaryArray = vec![
            Some(&[0x4C, 0x4D, 0, 0][..]),
            Some(&[0xFF; 8][..]),
            Some(&[1, 2][..]),
            None,
            Some(&[0xFF, 0x8A][..]),
            Some(b"abc".as_slice()),
        ]
        .into_iter()
        .collect();
        let types = [
            DataType::Boolean,
            DataType::Int32,
            DataType::Date32,
            DataType::Int64,
            DataType::Float32,
            DataType::Float64,
            DataType::Time64(TimeUnit::Microsecond),
            DataType::Time64(TimeUnit::Nanosecond),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            DataType::Utf8,
            DataType::Binary,
            DataType::FixedSizeBinary(2),
            DataType::Decimal128(9, 2),
            DataType::Decimal128(38, 0),
        ];
        for dt in types {
            let column = bounds_array(&raw, &dt);
            assert_eq!(column.data_type(), &dt);
            for row in 0..raw.len() {
                let expected = (raw.is_valid(row))
                    .then(|| decode_bound(raw.value(row), &dt))
                    .flatten()
                    .unwrap_or(ScalarValue::try_from(&dt).unwrap());
                assert_eq!(
                    ScalarValue::try_from_array(&column, row).unwrap(),
                    expected,
                    "{dt} row {row}"
                );
            }
        }
    }
}
