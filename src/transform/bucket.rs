//! `bucket[N]`: `(murmur3_x86_32(bytes(v)) & i32::MAX) % N`.
//!
//! What gets hashed is fixed by the spec's Appendix B so that a value lands in
//! the same bucket whatever its physical type: every integer (and date) is
//! hashed as an 8-byte little-endian long, so widening int → long never moves
//! a row; times and timestamps are hashed as microseconds whatever their Arrow
//! unit (nanoseconds are floored to microseconds, seconds and milliseconds
//! scaled up); decimals hash their unscaled value's minimal big-endian two's
//! complement bytes (independent of scale); strings their UTF-8 bytes; binary,
//! fixed and uuid their raw bytes.

use datafusion::arrow::array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, Decimal128Array, FixedSizeBinaryArray, Int32Array, LargeBinaryArray,
    LargeStringArray, PrimitiveArray, StringArray, StringViewArray,
};
use datafusion::arrow::buffer::{NullBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, Int8Type, Int16Type, Int32Type, Int64Type, Time64MicrosecondType,
    Time64NanosecondType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use std::sync::Arc;

use super::{Transform, TransformError, downcast, murmur3};

pub(super) const SUPPORTED: &str = "Int8/Int16/Int32/Int64, Decimal128, Date32, Time64, \
     Timestamp (any unit and time zone), Utf8/LargeUtf8/Utf8View, \
     Binary/LargeBinary/BinaryView/FixedSizeBinary";

pub(super) fn supports(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
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

#[inline]
fn bucket(hash: i32, n: u32) -> i32 {
    // Non-negative after masking, and the remainder is below 2^31.
    ((hash & i32::MAX) as u32 % n) as i32
}

/// Minimal big-endian two's-complement bytes of the unscaled value (Java's
/// `BigInteger.toByteArray`), hashed.
pub(super) fn hash_decimal(unscaled: i128) -> i32 {
    let bytes = unscaled.to_be_bytes();
    let sign = if unscaled < 0 { 0xFF } else { 0x00 };
    let mut start = 0;
    // Drop a leading byte while it is pure sign extension of the next one.
    while start < 15 && bytes[start] == sign && (bytes[start + 1] & 0x80) == (sign & 0x80) {
        start += 1;
    }
    murmur3::hash32(&bytes[start..])
}

pub(super) fn apply(n: u32, input: &ArrayRef) -> Result<ArrayRef, TransformError> {
    let t = Transform::Bucket(n);
    t.check_param(n)?;
    let arr = input.as_ref();
    let out = match input.data_type() {
        DataType::Int8 => ints::<Int8Type>(t, arr, n)?,
        DataType::Int16 => ints::<Int16Type>(t, arr, n)?,
        DataType::Int32 => ints::<Int32Type>(t, arr, n)?,
        DataType::Int64 => ints::<Int64Type>(t, arr, n)?,
        DataType::Date32 => ints::<Date32Type>(t, arr, n)?,
        DataType::Decimal128(_, _) => {
            let a = downcast::<Decimal128Array>(t, arr)?;
            a.unary(|v| bucket(hash_decimal(v), n))
        }
        DataType::Time64(TimeUnit::Microsecond) => micros::<Time64MicrosecondType>(t, arr, n, TimeUnit::Microsecond)?,
        DataType::Time64(TimeUnit::Nanosecond) => micros::<Time64NanosecondType>(t, arr, n, TimeUnit::Nanosecond)?,
        DataType::Timestamp(unit, _) => match unit {
            TimeUnit::Second => micros::<TimestampSecondType>(t, arr, n, *unit)?,
            TimeUnit::Millisecond => micros::<TimestampMillisecondType>(t, arr, n, *unit)?,
            TimeUnit::Microsecond => micros::<TimestampMicrosecondType>(t, arr, n, *unit)?,
            TimeUnit::Nanosecond => micros::<TimestampNanosecondType>(t, arr, n, *unit)?,
        },
        DataType::Utf8 => {
            let a = downcast::<StringArray>(t, arr)?;
            bytes(t, a.len(), a.nulls(), |i| a.value(i).as_bytes(), n)?
        }
        DataType::LargeUtf8 => {
            let a = downcast::<LargeStringArray>(t, arr)?;
            bytes(t, a.len(), a.nulls(), |i| a.value(i).as_bytes(), n)?
        }
        DataType::Utf8View => {
            let a = downcast::<StringViewArray>(t, arr)?;
            bytes(t, a.len(), a.nulls(), |i| a.value(i).as_bytes(), n)?
        }
        DataType::Binary => {
            let a = downcast::<BinaryArray>(t, arr)?;
            bytes(t, a.len(), a.nulls(), |i| a.value(i), n)?
        }
        DataType::LargeBinary => {
            let a = downcast::<LargeBinaryArray>(t, arr)?;
            bytes(t, a.len(), a.nulls(), |i| a.value(i), n)?
        }
        DataType::BinaryView => {
            let a = downcast::<BinaryViewArray>(t, arr)?;
            bytes(t, a.len(), a.nulls(), |i| a.value(i), n)?
        }
        DataType::FixedSizeBinary(_) => {
            let a = downcast::<FixedSizeBinaryArray>(t, arr)?;
            bytes(t, a.len(), a.nulls(), |i| a.value(i), n)?
        }
        other => {
            return Err(TransformError::UnsupportedType {
                transform: t,
                data_type: other.clone(),
                expected: SUPPORTED,
            });
        }
    };
    Ok(Arc::new(out))
}

/// int, long and date: hashed as the value widened to a long.
fn ints<T>(t: Transform, arr: &dyn Array, n: u32) -> Result<Int32Array, TransformError>
where
    T: ArrowPrimitiveType,
    T::Native: Into<i64>,
{
    let a = downcast::<PrimitiveArray<T>>(t, arr)?;
    Ok(a.unary(|v| bucket(murmur3::hash_i64(v.into()), n)))
}

/// time and timestamp: hashed as microseconds.
fn micros<T>(t: Transform, arr: &dyn Array, n: u32, unit: TimeUnit) -> Result<Int32Array, TransformError>
where
    T: ArrowPrimitiveType<Native = i64>,
{
    let a = downcast::<PrimitiveArray<T>>(t, arr)?;
    let scale_up = |factor: i64| {
        a.try_unary(|v: i64| match v.checked_mul(factor) {
            Some(us) => Ok(bucket(murmur3::hash_i64(us), n)),
            None => Err(TransformError::OutOfRange {
                transform: t,
                data_type: arr.data_type().clone(),
                value: v.to_string(),
                reason: "the value overflows a 64-bit count of microseconds, which is what \
                         bucket hashes"
                    .to_string(),
            }),
        })
    };
    match unit {
        TimeUnit::Microsecond => Ok(a.unary(|v| bucket(murmur3::hash_i64(v), n))),
        // Spec note 3: nanoseconds are converted to microseconds (floor) first.
        TimeUnit::Nanosecond => Ok(a.unary(|v| bucket(murmur3::hash_i64(v.div_euclid(1_000)), n))),
        TimeUnit::Millisecond => scale_up(1_000),
        TimeUnit::Second => scale_up(1_000_000),
    }
}

/// string, binary, fixed, uuid: hashed as raw bytes.
fn bytes<'a>(
    t: Transform,
    len: usize,
    nulls: Option<&NullBuffer>,
    value: impl Fn(usize) -> &'a [u8],
    n: u32,
) -> Result<Int32Array, TransformError> {
    let values: ScalarBuffer<i32> = match nulls {
        None => (0..len).map(|i| bucket(murmur3::hash32(value(i)), n)).collect(),
        Some(nulls) => (0..len)
            .map(|i| {
                if nulls.is_valid(i) {
                    bucket(murmur3::hash32(value(i)), n)
                } else {
                    0
                }
            })
            .collect(),
    };
    Int32Array::try_new(values, nulls.cloned()).map_err(|source| TransformError::Arrow { transform: t, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{
        Date32Array, Int8Array, Int16Array, Int64Array, Time64MicrosecondArray, Time64NanosecondArray,
        TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray,
    };
    use datafusion::common::ScalarValue;

    /// Bucket counts that together pin down all 31 hash bits the spec keeps.
    const NS: [u32; 4] = [1, 16, 1000, i32::MAX as u32];

    fn expected(hash: i32, n: u32) -> i32 {
        ((hash & i32::MAX) as i64 % n as i64) as i32
    }

    /// Apply bucket[n] for each n in NS to `arr` and check every non-null row
    /// against the spec hash.
    fn check(arr: ArrayRef, hash: i32) {
        for n in NS {
            let out = Transform::Bucket(n).apply(&arr).unwrap();
            assert_eq!(out.data_type(), &DataType::Int32);
            let out = out.as_any().downcast_ref::<Int32Array>().unwrap();
            for i in 0..arr.len() {
                if arr.is_valid(i) {
                    assert_eq!(
                        out.value(i),
                        expected(hash, n),
                        "bucket[{n}] on {} row {i}",
                        arr.data_type()
                    );
                } else {
                    assert!(out.is_null(i));
                }
            }
        }
    }

    #[test]
    fn spec_int_and_long() {
        check(Arc::new(Int32Array::from(vec![Some(34), None])), 2017239379);
        check(Arc::new(Int64Array::from(vec![Some(34), None])), 2017239379);
        check(Arc::new(Int16Array::from(vec![34])), 2017239379);
        check(Arc::new(Int8Array::from(vec![34])), 2017239379);
        // int and long must agree for every value, including negatives
        for v in [-1i32, 0, 1, i32::MIN, i32::MAX, -34] {
            let a = Transform::Bucket(97)
                .apply(&(Arc::new(Int32Array::from(vec![v])) as ArrayRef))
                .unwrap();
            let b = Transform::Bucket(97)
                .apply(&(Arc::new(Int64Array::from(vec![v as i64])) as ArrayRef))
                .unwrap();
            assert_eq!(&a, &b);
        }
    }

    #[test]
    fn spec_decimal() {
        // 14.20 is unscaled 1420 at scale 2; the hash ignores the scale.
        assert_eq!(hash_decimal(1420), -500754589);
        let arr = Decimal128Array::from(vec![Some(1420), None])
            .with_precision_and_scale(4, 2)
            .unwrap();
        check(Arc::new(arr), -500754589);
        let arr = Decimal128Array::from(vec![1420])
            .with_precision_and_scale(38, 10)
            .unwrap();
        check(Arc::new(arr), -500754589);
    }

    #[test]
    fn decimal_minimal_bytes() {
        let h = murmur3::hash32;
        assert_eq!(hash_decimal(0), h(&[0x00]));
        assert_eq!(hash_decimal(-1), h(&[0xFF]));
        assert_eq!(hash_decimal(127), h(&[0x7F]));
        assert_eq!(hash_decimal(128), h(&[0x00, 0x80]));
        assert_eq!(hash_decimal(-128), h(&[0x80]));
        assert_eq!(hash_decimal(-129), h(&[0xFF, 0x7F]));
        assert_eq!(hash_decimal(i128::MAX), h(&i128::MAX.to_be_bytes()));
        assert_eq!(hash_decimal(i128::MIN), h(&i128::MIN.to_be_bytes()));
    }

    #[test]
    fn spec_date_and_time() {
        // 2017-11-16 is day 17486
        check(Arc::new(Date32Array::from(vec![Some(17486), None])), -653330422);
        // 22:31:08
        let us = (22 * 3600 + 31 * 60 + 8) * 1_000_000i64;
        check(Arc::new(Time64MicrosecondArray::from(vec![us])), -662762989);
        check(Arc::new(Time64NanosecondArray::from(vec![us * 1000 + 999])), -662762989);
    }

    #[test]
    fn spec_timestamps_every_unit_and_zone() {
        let secs = 1_510_871_468i64; // 2017-11-16T22:31:08Z
        // Arrow stores zoned timestamps as UTC instants, so the zone never matters.
        for tz in [None, Some("UTC"), Some("-08:00")] {
            check(
                Arc::new(TimestampSecondArray::from(vec![Some(secs), None]).with_timezone_opt(tz)),
                -2047944441,
            );
            check(
                Arc::new(TimestampMillisecondArray::from(vec![secs * 1_000]).with_timezone_opt(tz)),
                -2047944441,
            );
            check(
                Arc::new(TimestampMicrosecondArray::from(vec![secs * 1_000_000]).with_timezone_opt(tz)),
                -2047944441,
            );
            check(
                Arc::new(TimestampNanosecondArray::from(vec![secs * 1_000_000_000]).with_timezone_opt(tz)),
                -2047944441,
            );
            check(
                Arc::new(TimestampMicrosecondArray::from(vec![secs * 1_000_000 + 1]).with_timezone_opt(tz)),
                -1207196810,
            );
            // timestamp_ns 2017-11-16T22:31:08.000001001 hashes as its microseconds
            check(
                Arc::new(TimestampNanosecondArray::from(vec![secs * 1_000_000_000 + 1_001]).with_timezone_opt(tz)),
                -1207196810,
            );
        }
    }

    #[test]
    fn nanos_floor_to_micros_before_epoch() {
        let ns: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![-1, -1_000, -1_001]));
        let us: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![-1, -1, -2]));
        let t = Transform::Bucket(1_000_003);
        assert_eq!(&t.apply(&ns).unwrap(), &t.apply(&us).unwrap());
    }

    #[test]
    fn spec_strings() {
        check(Arc::new(StringArray::from(vec![Some("iceberg"), None])), 1210000089);
        check(Arc::new(LargeStringArray::from(vec!["iceberg"])), 1210000089);
        check(Arc::new(StringViewArray::from(vec![Some("iceberg"), None])), 1210000089);
    }

    #[test]
    fn spec_uuid_fixed_binary() {
        let uuid: [u8; 16] = [
            0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7,
        ];
        check(
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(vec![Some(uuid), None].into_iter(), 16).unwrap(),
            ),
            1488055340,
        );
        let b: &[u8] = &[0, 1, 2, 3];
        check(
            Arc::new(FixedSizeBinaryArray::try_from_iter(vec![b].into_iter()).unwrap()),
            -188683207,
        );
        check(Arc::new(BinaryArray::from_opt_vec(vec![Some(b), None])), -188683207);
        check(Arc::new(LargeBinaryArray::from_vec(vec![b])), -188683207);
        check(Arc::new(BinaryViewArray::from(vec![b])), -188683207);
    }

    #[test]
    fn scalar_spec_vectors() {
        let b = |v: ScalarValue| Transform::Bucket(i32::MAX as u32).apply_scalar(&v).unwrap();
        let tz: Option<Arc<str>> = Some("UTC".into());
        assert_eq!(b(ScalarValue::Int32(Some(34))), ScalarValue::Int32(Some(2017239379)));
        assert_eq!(
            b(ScalarValue::Utf8(Some("iceberg".into()))),
            ScalarValue::Int32(Some(1210000089))
        );
        assert_eq!(
            b(ScalarValue::TimestampMicrosecond(Some(1_510_871_468_000_001), tz)),
            ScalarValue::Int32(Some(expected(-1207196810, i32::MAX as u32)))
        );
        assert_eq!(
            Transform::Bucket(16)
                .apply_scalar(&ScalarValue::Int64(Some(34)))
                .unwrap(),
            ScalarValue::Int32(Some(2017239379 % 16))
        );
    }

    #[test]
    fn overflowing_timestamp_is_an_error() {
        let arr: ArrayRef = Arc::new(TimestampSecondArray::from(vec![i64::MAX]));
        let err = Transform::Bucket(4).apply(&arr).unwrap_err();
        assert!(matches!(err, TransformError::OutOfRange { .. }));
        let msg = err.to_string();
        assert!(
            msg.contains("bucket[4]") && msg.contains(&i64::MAX.to_string()),
            "{msg}"
        );

        // ...but a null slot holding the same garbage is not evaluated.
        let values = ScalarBuffer::from(vec![i64::MAX, 1]);
        let nulls = NullBuffer::from(vec![false, true]);
        let arr: ArrayRef = Arc::new(TimestampMillisecondArray::new(values, Some(nulls)));
        let out = Transform::Bucket(4).apply(&arr).unwrap();
        assert!(out.is_null(0) && out.is_valid(1));
    }
}
