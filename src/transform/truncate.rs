//! `truncate[W]`: integers and decimals floored to a multiple of `W`, strings
//! cut to `W` code points, binary to `W` bytes.
//!
//! Integers use `v - v.rem_euclid(W)` (the spec's "remainder must be
//! positive"), so `truncate[10](-1) = -10` and the transform preserves order.
//! Decimals apply the same formula to the unscaled value: `W` is read at the
//! column's scale, so `truncate[50]` on `decimal(_, 2)` maps `10.65` to `10.50`.
//! Strings count Unicode code points, not bytes or graphemes, so results are
//! always valid UTF-8 and match other engines (`"e\u{301}"` is two code
//! points). A result that does not fit the source type (`truncate[10]` of
//! `i32::MIN`, or of `-999` in `decimal(3, 0)`) is an error, never a wrap.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, BinaryViewArray, BinaryViewBuilder, Decimal128Array, GenericByteArray, PrimitiveArray,
    StringViewArray, StringViewBuilder,
};
use datafusion::arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{
    ArrowNativeType, ArrowPrimitiveType, BinaryType, ByteArrayType, DECIMAL128_MAX_PRECISION, DataType, Decimal128Type,
    DecimalType, Int8Type, Int16Type, Int32Type, Int64Type, LargeBinaryType, LargeUtf8Type, Utf8Type,
};

use super::{Transform, TransformError, downcast};

pub(super) const SUPPORTED: &str = "Int8/Int16/Int32/Int64, Decimal128, \
     Utf8/LargeUtf8/Utf8View, Binary/LargeBinary/BinaryView";

pub(super) fn supports(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Decimal128(_, _)
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    )
}

pub(super) fn apply(w: u32, input: &ArrayRef) -> Result<ArrayRef, TransformError> {
    let t = Transform::Truncate(w);
    t.check_param(w)?;
    let arr = input.as_ref();
    // Usize is at least 32 bits on every supported target.
    let width = usize::try_from(w).unwrap_or(usize::MAX);
    match input.data_type() {
        DataType::Int8 => ints::<Int8Type>(t, arr, w),
        DataType::Int16 => ints::<Int16Type>(t, arr, w),
        DataType::Int32 => ints::<Int32Type>(t, arr, w),
        DataType::Int64 => ints::<Int64Type>(t, arr, w),
        DataType::Decimal128(p, s) => decimal(t, arr, w, *p, *s),
        DataType::Utf8 => bytes::<Utf8Type>(t, input, width, utf8_prefix_len),
        DataType::LargeUtf8 => bytes::<LargeUtf8Type>(t, input, width, utf8_prefix_len),
        DataType::Binary => bytes::<BinaryType>(t, input, width, byte_prefix_len),
        DataType::LargeBinary => bytes::<LargeBinaryType>(t, input, width, byte_prefix_len),
        DataType::Utf8View => {
            let a = downcast::<StringViewArray>(t, arr)?;
            let mut b = StringViewBuilder::with_capacity(a.len());
            for v in a.iter() {
                match v {
                    Some(s) => b.append_value(s.get(..utf8_prefix_len(s.as_bytes(), width)).unwrap_or(s)),
                    None => b.append_null(),
                }
            }
            Ok(Arc::new(b.finish()))
        }
        DataType::BinaryView => {
            let a = downcast::<BinaryViewArray>(t, arr)?;
            let mut b = BinaryViewBuilder::with_capacity(a.len());
            for v in a.iter() {
                match v {
                    Some(v) => b.append_value(&v[..byte_prefix_len(v, width)]),
                    None => b.append_null(),
                }
            }
            Ok(Arc::new(b.finish()))
        }
        other => Err(TransformError::UnsupportedType {
            transform: t,
            data_type: other.clone(),
            expected: SUPPORTED,
        }),
    }
}

fn out_of_range(t: Transform, dt: &DataType, value: String, result: String) -> TransformError {
    TransformError::OutOfRange {
        transform: t,
        data_type: dt.clone(),
        value,
        reason: format!("the truncated value {result} does not fit the source type"),
    }
}

/// Widen to i128 (exact for every integer width and `W`), floor, narrow back.
fn ints<T>(t: Transform, arr: &dyn Array, w: u32) -> Result<ArrayRef, TransformError>
where
    T: ArrowPrimitiveType,
    T::Native: Into<i128> + TryFrom<i128>,
{
    let a = downcast::<PrimitiveArray<T>>(t, arr)?;
    let w = i128::from(w);
    let out: PrimitiveArray<T> = a.try_unary(|v| {
        let v: i128 = v.into();
        let r = v - v.rem_euclid(w);
        T::Native::try_from(r).map_err(|_| out_of_range(t, arr.data_type(), v.to_string(), r.to_string()))
    })?;
    Ok(Arc::new(out))
}

fn decimal(t: Transform, arr: &dyn Array, w: u32, precision: u8, scale: i8) -> Result<ArrayRef, TransformError> {
    let a = downcast::<Decimal128Array>(t, arr)?;
    let w = i128::from(w);
    let out: Decimal128Array = a.try_unary(|v: i128| match v.checked_sub(v.rem_euclid(w)) {
        Some(r) if Decimal128Type::is_valid_decimal_precision(r, precision) => Ok(r),
        r => Err(out_of_range(
            t,
            arr.data_type(),
            // Full precision: the result may not fit the column's.
            Decimal128Type::format_decimal(v, DECIMAL128_MAX_PRECISION, scale),
            r.map_or_else(
                || "(below the 128-bit range)".to_string(),
                |r| Decimal128Type::format_decimal(r, DECIMAL128_MAX_PRECISION, scale),
            ),
        )),
    })?;
    let out = out
        .with_precision_and_scale(precision, scale)
        .map_err(|source| TransformError::Arrow { transform: t, source })?;
    Ok(Arc::new(out))
}

/// Byte length of the first `w` code points of valid UTF-8.
fn utf8_prefix_len(bytes: &[u8], w: usize) -> usize {
    if bytes.len() <= w {
        return bytes.len();
    }
    let mut chars = 0;
    for (i, &b) in bytes.iter().enumerate() {
        // Every byte that is not a continuation byte (0b10xx_xxxx) starts a code point.
        if (b as i8) >= -0x40 {
            if chars == w {
                return i;
            }
            chars += 1;
        }
    }
    bytes.len()
}

fn byte_prefix_len(bytes: &[u8], w: usize) -> usize {
    bytes.len().min(w)
}

/// Offset-based kernel for Utf8/LargeUtf8/Binary/LargeBinary: copies each
/// kept prefix into a fresh values buffer and reuses the null buffer. Arrays
/// with nothing longer than `w` bytes are returned as is.
fn bytes<T: ByteArrayType>(
    t: Transform,
    input: &ArrayRef,
    w: usize,
    prefix_len: fn(&[u8], usize) -> usize,
) -> Result<ArrayRef, TransformError> {
    let a = downcast::<GenericByteArray<T>>(t, input.as_ref())?;
    let offsets = a.value_offsets();
    let data = a.value_data();
    let span = |i: usize| {
        let (start, end) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
        data.get(start..end).unwrap_or_default()
    };
    if (0..a.len()).all(|i| span(i).len() <= w) {
        return Ok(Arc::clone(input));
    }
    let mut new_offsets = Vec::with_capacity(a.len() + 1);
    let mut values = Vec::with_capacity(data.len().min(a.len().saturating_mul(w)));
    new_offsets.push(T::Offset::usize_as(0));
    for i in 0..a.len() {
        if a.is_valid(i) {
            let v = span(i);
            values.extend_from_slice(&v[..prefix_len(v, w)]);
        }
        // Output is never longer than the input, so the offset always fits.
        new_offsets.push(T::Offset::usize_as(values.len()));
    }
    let out = GenericByteArray::<T>::try_new(
        OffsetBuffer::new(ScalarBuffer::from(new_offsets)),
        Buffer::from_vec(values),
        a.nulls().cloned(),
    )
    .map_err(|source| TransformError::Arrow { transform: t, source })?;
    Ok(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{
        BinaryArray, Int8Array, Int16Array, Int32Array, Int64Array, LargeBinaryArray, LargeStringArray, StringArray,
    };
    use datafusion::common::ScalarValue;

    fn trunc(w: u32, arr: ArrayRef) -> ArrayRef {
        Transform::Truncate(w).apply(&arr).unwrap()
    }

    #[test]
    fn ints_floor_toward_negative_infinity() {
        let out = trunc(
            10,
            Arc::new(Int32Array::from(vec![
                Some(1),
                Some(-1),
                None,
                Some(0),
                Some(10),
                Some(-10),
                Some(-11),
                Some(19),
            ])),
        );
        let expected: ArrayRef = Arc::new(Int32Array::from(vec![
            Some(0),
            Some(-10),
            None,
            Some(0),
            Some(10),
            Some(-10),
            Some(-20),
            Some(10),
        ]));
        assert_eq!(&out, &expected);

        let out = trunc(3, Arc::new(Int64Array::from(vec![-1i64, -3, -4, 5, i64::MAX])));
        let expected: ArrayRef = Arc::new(Int64Array::from(vec![
            -3i64,
            -3,
            -6,
            3,
            i64::MAX - i64::MAX.rem_euclid(3),
        ]));
        assert_eq!(&out, &expected);

        let out = trunc(4, Arc::new(Int8Array::from(vec![-1i8, 127, -128])));
        let expected: ArrayRef = Arc::new(Int8Array::from(vec![-4i8, 124, -128]));
        assert_eq!(&out, &expected);

        let out = trunc(100, Arc::new(Int16Array::from(vec![-150i16, 150])));
        let expected: ArrayRef = Arc::new(Int16Array::from(vec![-200i16, 100]));
        assert_eq!(&out, &expected);

        // W wider than the type: everything non-negative collapses to 0.
        let out = trunc(i32::MAX as u32, Arc::new(Int16Array::from(vec![0, i16::MAX])));
        let expected: ArrayRef = Arc::new(Int16Array::from(vec![0, 0]));
        assert_eq!(&out, &expected);
        // W beyond Iceberg's 32-bit int is no transform at all.
        let err = Transform::Truncate(u32::MAX)
            .apply(&(Arc::new(Int32Array::from(vec![0])) as ArrayRef))
            .unwrap_err();
        assert!(err.to_string().contains("at most 2147483647"), "{err}");
    }

    #[test]
    fn int_overflow_is_an_error() {
        for arr in [
            Arc::new(Int8Array::from(vec![-128i8])) as ArrayRef,
            Arc::new(Int32Array::from(vec![i32::MIN])),
            Arc::new(Int64Array::from(vec![i64::MIN])),
        ] {
            let err = Transform::Truncate(10).apply(&arr).unwrap_err();
            assert!(matches!(err, TransformError::OutOfRange { .. }), "{err}");
            assert!(err.to_string().contains("truncate[10]"), "{err}");
        }
        let err = Transform::Truncate(3)
            .apply_scalar(&ScalarValue::Int32(Some(i32::MIN)))
            .unwrap_err();
        assert!(err.to_string().contains("-2147483648"), "{err}");
    }

    #[test]
    fn decimals() {
        // Spec example: W=50, scale 2: 10.65 -> 10.50
        let arr: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(1065), Some(-1065), None, Some(-1), Some(0)])
                .with_precision_and_scale(9, 2)
                .unwrap(),
        );
        let out = trunc(50, arr);
        let expected: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(1050), Some(-1100), None, Some(-50), Some(0)])
                .with_precision_and_scale(9, 2)
                .unwrap(),
        );
        assert_eq!(&out, &expected);
        assert_eq!(
            Transform::Truncate(10)
                .apply_scalar(&ScalarValue::Decimal128(Some(-1420), 10, 2))
                .unwrap(),
            ScalarValue::Decimal128(Some(-1420), 10, 2)
        );
        assert_eq!(
            Transform::Truncate(100)
                .apply_scalar(&ScalarValue::Decimal128(Some(-1), 10, 2))
                .unwrap(),
            ScalarValue::Decimal128(Some(-100), 10, 2)
        );
    }

    #[test]
    fn decimal_precision_overflow_is_an_error() {
        let arr: ArrayRef = Arc::new(
            Decimal128Array::from(vec![-999])
                .with_precision_and_scale(3, 0)
                .unwrap(),
        );
        let err = Transform::Truncate(10).apply(&arr).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("-999") && msg.contains("-1000"), "{msg}");
        let arr: ArrayRef = Arc::new(
            Decimal128Array::from(vec![i128::MIN + 1])
                .with_precision_and_scale(38, 0)
                .unwrap_or_else(|_| Decimal128Array::from(vec![0])),
        );
        // Whatever the array holds, truncation must not panic.
        let _ = Transform::Truncate(7).apply(&arr);
    }

    fn strings(w: u32, input: Vec<Option<&str>>) -> Vec<Option<String>> {
        let as_vec = |a: &ArrayRef| -> Vec<Option<String>> {
            datafusion::arrow::compute::cast(a, &DataType::Utf8)
                .unwrap()
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .iter()
                .map(|s| s.map(str::to_string))
                .collect()
        };
        let utf8 = trunc(w, Arc::new(StringArray::from(input.clone())));
        let large = trunc(w, Arc::new(LargeStringArray::from(input.clone())));
        let view = trunc(w, Arc::new(StringViewArray::from(input)));
        assert_eq!(utf8.data_type(), &DataType::Utf8);
        assert_eq!(large.data_type(), &DataType::LargeUtf8);
        assert_eq!(view.data_type(), &DataType::Utf8View);
        let out = as_vec(&utf8);
        assert_eq!(out, as_vec(&large));
        assert_eq!(out, as_vec(&view));
        out
    }

    #[test]
    fn strings_truncate_code_points() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            strings(3, vec![Some("iceberg"), None, Some("ab"), Some("")]),
            vec![s("ice"), None, s("ab"), s("")]
        );
        // precomposed é is one code point, e + U+0301 is two
        assert_eq!(
            strings(1, vec![Some("\u{e9}t\u{e9}"), Some("e\u{301}te\u{301}")]),
            vec![s("\u{e9}"), s("e")]
        );
        assert_eq!(
            strings(2, vec![Some("\u{e9}t\u{e9}"), Some("e\u{301}te\u{301}")]),
            vec![s("\u{e9}t"), s("e\u{301}")]
        );
        assert_eq!(
            strings(2, vec![Some("日本語"), Some("日本"), Some("日")]),
            vec![s("日本"), s("日本"), s("日")]
        );
        // 4-byte code points; the family emoji is several code points joined by ZWJ
        assert_eq!(
            strings(2, vec![Some("🦀🦀🦀"), Some("👨\u{200d}👩\u{200d}👧")]),
            vec![s("🦀🦀"), s("👨\u{200d}")]
        );
        // long enough to exercise the inline/out-of-line view boundary
        assert_eq!(
            strings(13, vec![Some("0123456789abcdefghij"), Some("ééééééééééééééé")]),
            vec![s("0123456789abc"), s("ééééééééééééé")]
        );
        assert_eq!(
            Transform::Truncate(1)
                .apply_scalar(&ScalarValue::Utf8View(Some("日本語".into())))
                .unwrap(),
            ScalarValue::Utf8View(Some("日".into()))
        );
    }

    #[test]
    fn unchanged_strings_are_returned_as_is() {
        let arr: ArrayRef = Arc::new(StringArray::from(vec![Some("abc"), None, Some("d")]));
        let out = Transform::Truncate(3).apply(&arr).unwrap();
        assert!(Arc::ptr_eq(&arr, &out));
    }

    #[test]
    fn binary_truncates_bytes() {
        let data: Vec<Option<&[u8]>> = vec![Some(&[1, 2, 3, 4, 5]), None, Some(&[0xC3, 0xA9, 0xFF]), Some(&[])];
        let expected: Vec<Option<&[u8]>> = vec![Some(&[1, 2, 3]), None, Some(&[0xC3, 0xA9, 0xFF]), Some(&[])];
        let out = trunc(3, Arc::new(BinaryArray::from_opt_vec(data.clone())));
        assert_eq!(
            &out,
            &(Arc::new(BinaryArray::from_opt_vec(expected.clone())) as ArrayRef)
        );
        let out = trunc(3, Arc::new(LargeBinaryArray::from_opt_vec(data.clone())));
        assert_eq!(
            &out,
            &(Arc::new(LargeBinaryArray::from_opt_vec(expected.clone())) as ArrayRef)
        );
        let out = trunc(3, Arc::new(BinaryViewArray::from(data)));
        assert_eq!(&out, &(Arc::new(BinaryViewArray::from(expected)) as ArrayRef));

        // utf8 bytes in a binary column are cut mid-character, on purpose
        assert_eq!(
            Transform::Truncate(1)
                .apply_scalar(&ScalarValue::Binary(Some(vec![0xC3, 0xA9])))
                .unwrap(),
            ScalarValue::Binary(Some(vec![0xC3]))
        );
    }

    #[test]
    fn prefix_len_helpers() {
        assert_eq!(utf8_prefix_len("héllo".as_bytes(), 2), 3);
        assert_eq!(utf8_prefix_len("héllo".as_bytes(), 0), 0);
        assert_eq!(utf8_prefix_len("héllo".as_bytes(), 5), 6);
        assert_eq!(utf8_prefix_len("héllo".as_bytes(), 6), 6);
        assert_eq!(utf8_prefix_len("🦀".as_bytes(), 1), 4);
        assert_eq!(byte_prefix_len(&[1, 2, 3], 2), 2);
        assert_eq!(byte_prefix_len(&[1], 2), 1);
    }
}
