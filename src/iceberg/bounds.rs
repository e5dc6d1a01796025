//! Values in Iceberg's single-value binary serialization (spec Appendix D).
//!
//! Column bounds in manifests (`lower_bounds`, `upper_bounds`) and partition
//! bounds in manifest lists are stored this way:
//!
//! | type                                  | bytes                                  | example            |
//! |---------------------------------------|----------------------------------------|--------------------|
//! | boolean                               | one byte, 0 or 1                       | `true` → `01`      |
//! | int, date                             | 4 bytes little-endian                  | `2024-03-06` → `4C 4D 00 00` |
//! | long, time, timestamp(tz)(_ns)        | 8 bytes little-endian (µs, or ns)      |                    |
//! | float, double                         | IEEE 754 little-endian                 |                    |
//! | string                                | UTF-8                                  |                    |
//! | binary, fixed (uuid)                  | as is                                  |                    |
//! | decimal                               | unscaled, two's complement big-endian, minimal bytes | `14.20` → `05 8C`, `-1` → `FF` |
//!
//! The reader's inverse is [`crate::iceberg::bounds_read::decode_bound`].

use datafusion::common::ScalarValue;

/// `value` in single-value binary; `None` for nulls and for values Iceberg
/// has no serialization for (nested values, second/millisecond timestamps,
/// which our tables never hold).
pub fn encode_bound(value: &ScalarValue) -> Option<Vec<u8>> {
    use ScalarValue::*;
    Some(match value {
        Boolean(Some(b)) => vec![u8::from(*b)],
        Int32(Some(v)) | Date32(Some(v)) => v.to_le_bytes().to_vec(),
        Int64(Some(v))
        | Time64Microsecond(Some(v))
        | Time64Nanosecond(Some(v))
        | TimestampMicrosecond(Some(v), _)
        | TimestampNanosecond(Some(v), _) => v.to_le_bytes().to_vec(),
        Float32(Some(f)) => f.to_le_bytes().to_vec(),
        Float64(Some(f)) => f.to_le_bytes().to_vec(),
        Utf8(Some(s)) | LargeUtf8(Some(s)) | Utf8View(Some(s)) => s.as_bytes().to_vec(),
        Binary(Some(b)) | LargeBinary(Some(b)) | BinaryView(Some(b)) | FixedSizeBinary(_, Some(b)) => b.clone(),
        Decimal32(Some(v), _, _) => minimal_be(&v.to_be_bytes()),
        Decimal64(Some(v), _, _) => minimal_be(&v.to_be_bytes()),
        Decimal128(Some(v), _, _) => minimal_be(&v.to_be_bytes()),
        Decimal256(Some(v), _, _) => minimal_be(&v.to_be_bytes()),
        _ => return None,
    })
}

/// A big-endian two's complement integer in as few bytes as keep its sign.
pub fn minimal_be(bytes: &[u8]) -> Vec<u8> {
    let mut start = 0;
    while start + 1 < bytes.len() {
        let (b, next) = (bytes[start], bytes[start + 1]);
        let redundant = (b == 0x00 && next & 0x80 == 0) || (b == 0xFF && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    bytes[start..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iceberg::bounds_read::decode_bound;
    use crate::spec::PrimitiveType;

    fn dec(v: i128, p: u8, s: i8) -> ScalarValue {
        ScalarValue::Decimal128(Some(v), p, s)
    }

    #[test]
    fn exact_bytes_from_the_spec() {
        assert_eq!(encode_bound(&dec(1420, 9, 2)), Some(vec![0x05, 0x8C]));
        assert_eq!(encode_bound(&dec(-1, 9, 2)), Some(vec![0xFF]));
        assert_eq!(encode_bound(&dec(128, 9, 0)), Some(vec![0x00, 0x80]));
        assert_eq!(encode_bound(&dec(-128, 9, 0)), Some(vec![0x80]));
        assert_eq!(encode_bound(&dec(-129, 9, 0)), Some(vec![0xFF, 0x7F]));
        assert_eq!(encode_bound(&dec(127, 9, 0)), Some(vec![0x7F]));
        assert_eq!(encode_bound(&dec(0, 9, 0)), Some(vec![0x00]));
        assert_eq!(
            encode_bound(&ScalarValue::Decimal64(Some(-118), 9, 2)),
            Some(vec![0x8A])
        );
        assert_eq!(
            encode_bound(&ScalarValue::Decimal32(Some(256), 5, 0)),
            Some(vec![0x01, 0x00])
        );
        assert_eq!(
            encode_bound(&ScalarValue::Date32(Some(19788))),
            Some(vec![0x4C, 0x4D, 0, 0])
        );
        assert_eq!(encode_bound(&ScalarValue::Int32(Some(-1))), Some(vec![0xFF; 4]));
        assert_eq!(
            encode_bound(&ScalarValue::Int64(Some(1))),
            Some(vec![1, 0, 0, 0, 0, 0, 0, 0])
        );
        assert_eq!(encode_bound(&ScalarValue::Boolean(Some(true))), Some(vec![1]));
        assert_eq!(encode_bound(&ScalarValue::Boolean(Some(false))), Some(vec![0]));
        assert_eq!(
            encode_bound(&ScalarValue::Float32(Some(1.0))),
            Some(vec![0x00, 0x00, 0x80, 0x3F])
        );
        assert_eq!(
            encode_bound(&ScalarValue::Float64(Some(-0.0))),
            Some(vec![0, 0, 0, 0, 0, 0, 0, 0x80])
        );
        assert_eq!(
            encode_bound(&ScalarValue::Utf8(Some("ä".into()))),
            Some(vec![0xC3, 0xA4])
        );
    }

    #[test]
    fn nulls_and_nested_values_have_no_bound() {
        assert_eq!(encode_bound(&ScalarValue::Int32(None)), None);
        assert_eq!(encode_bound(&ScalarValue::Utf8(None)), None);
        assert_eq!(encode_bound(&ScalarValue::Decimal128(None, 9, 2)), None);
        assert_eq!(encode_bound(&ScalarValue::Null), None);
        let list = ScalarValue::List(ScalarValue::new_list_nullable(
            &[ScalarValue::Int32(Some(1))],
            &datafusion::arrow::datatypes::DataType::Int32,
        ));
        assert_eq!(encode_bound(&list), None);
    }

    #[test]
    fn every_type_round_trips_through_the_reader() {
        use PrimitiveType::*;
        let utc = Some("UTC".into());
        let cases: Vec<(PrimitiveType, Vec<ScalarValue>)> = vec![
            (
                Boolean,
                vec![ScalarValue::Boolean(Some(true)), ScalarValue::Boolean(Some(false))],
            ),
            (
                Int,
                vec![ScalarValue::Int32(Some(i32::MIN)), ScalarValue::Int32(Some(42))],
            ),
            (
                Long,
                vec![ScalarValue::Int64(Some(i64::MAX)), ScalarValue::Int64(Some(-7))],
            ),
            (
                Float,
                vec![ScalarValue::Float32(Some(-0.0)), ScalarValue::Float32(Some(1.5e10))],
            ),
            (
                Double,
                vec![
                    ScalarValue::Float64(Some(f64::MIN_POSITIVE)),
                    ScalarValue::Float64(Some(-2.25)),
                ],
            ),
            (
                Decimal {
                    precision: 38,
                    scale: 10,
                },
                vec![
                    dec(i128::MAX, 38, 10),
                    dec(i128::MIN, 38, 10),
                    dec(-255, 38, 10),
                    dec(0, 38, 10),
                ],
            ),
            (
                Decimal { precision: 9, scale: 2 },
                vec![dec(1420, 9, 2), dec(-99_999_999, 9, 2)],
            ),
            (
                Date,
                vec![ScalarValue::Date32(Some(-1)), ScalarValue::Date32(Some(19788))],
            ),
            (Time, vec![ScalarValue::Time64Microsecond(Some(86_399_999_999))]),
            (TimeNs, vec![ScalarValue::Time64Nanosecond(Some(1))]),
            (Timestamp, vec![ScalarValue::TimestampMicrosecond(Some(-1), None)]),
            (
                TimestampTz,
                vec![ScalarValue::TimestampMicrosecond(
                    Some(1_700_000_000_000_000),
                    utc.clone(),
                )],
            ),
            (
                TimestampNs,
                vec![ScalarValue::TimestampNanosecond(Some(i64::MIN), None)],
            ),
            (TimestampTzNs, vec![ScalarValue::TimestampNanosecond(Some(5), utc)]),
            (
                String,
                vec![
                    ScalarValue::Utf8(Some("".into())),
                    ScalarValue::Utf8(Some("a/b=c ü".into())),
                ],
            ),
            (Binary, vec![ScalarValue::Binary(Some(vec![0, 0xFF, 7]))]),
            (
                Fixed(16),
                vec![ScalarValue::FixedSizeBinary(16, Some((0..16).collect()))],
            ),
        ];
        for (ty, values) in cases {
            let dt = ty.to_arrow();
            for v in values {
                assert_eq!(v.data_type(), dt, "{ty}");
                let bytes = encode_bound(&v).unwrap_or_else(|| panic!("{ty}: no bound for {v:?}"));
                let back = decode_bound(&bytes, &dt).unwrap_or_else(|| panic!("{ty}: {bytes:?} unreadable"));
                // -0.0 == 0.0 for ScalarValue equality; compare the bits too.
                assert_eq!(encode_bound(&back), Some(bytes), "{ty}");
                assert_eq!(back, v, "{ty}");
            }
        }
    }
}
