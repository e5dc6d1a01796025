//! Step 2: a typed value to its protocol string (`add.partitionValues`).
//!
//! [`serialize`] returns `Ok(None)` for null, for the empty string and for
//! empty binary: the protocol stores all three as JSON `null`, and the
//! directory becomes `__HIVE_DEFAULT_PARTITION__`.
//!
//! # Formats
//!
//! | Type                         | Value                                  | Protocol string                   |
//! |------------------------------|----------------------------------------|-----------------------------------|
//! | Int8/16/32/64                | `-2147483648`                          | `-2147483648`                     |
//! | Boolean                      | `true`                                 | `true`                            |
//! | Float64                      | `0.0`, `-0.0`                          | `0.0`, `-0.0`                     |
//! | Float64                      | `1234.5`, `0.001`                      | `1234.5`, `0.001`                 |
//! | Float64                      | `1e7`, `1e-4`                          | `1.0E7`, `1.0E-4`                 |
//! | Float64                      | `f64::MAX`                             | `1.7976931348623157E308`          |
//! | Float64                      | smallest subnormal                     | `5.0E-324`                        |
//! | Float32/64                   | NaN, +∞, −∞                            | `NaN`, `Infinity`, `-Infinity`    |
//! | Float32                      | `1.1f32`                               | `1.1`                             |
//! | Decimal128(38,18)            | `1.23`                                 | `1.230000000000000000`            |
//! | Decimal128(38,18)            | `0`                                    | `0.000000000000000000`            |
//! | Decimal128(5,0)              | `-42`                                  | `-42`                             |
//! | Decimal128(5,-2)             | unscaled `7` (= 700)                   | `700`                             |
//! | Date32                       | day 0, day −719162                     | `1970-01-01`, `0001-01-01`        |
//! | Timestamp(µs, "any tz")      | 2024-06-15 19:30:45 UTC                | `2024-06-15T19:30:45.000000Z`     |
//! | Timestamp(µs) (no tz)        | 2024-06-15 12:30:45                    | `2024-06-15 12:30:45.000000`      |
//! | Timestamp(s/ms) (no tz)      | 12:30:45.123                           | `… 12:30:45.123000`               |
//! | Timestamp(ns) (no tz)        | 12:30:45.123456789                     | `… 12:30:45.123456789`            |
//! | Utf8/LargeUtf8/Utf8View      | `US/East`                              | `US/East`                         |
//! | Binary/…/FixedSizeBinary     | `48 45 4C 4C 4F`                       | `HELLO`                           |
//! | any                          | null, `""`, empty binary               | `None`                            |
//!
//! Floats follow Java's `Double.toString`/`Float.toString`: plain notation
//! with at least one fractional digit for `1e-3 <= |x| < 1e7`, otherwise
//! `d.dddE<exp>` with at least one digit after the point and no `+` in the
//! exponent. The digits are the shortest that read back to the same value
//! (Rust's formatter), which is why the smallest subnormal is `5.0E-324`
//! where Java prints `4.9E-324`; both parse to the same value.
//!
//! Timestamps are formatted from their UTC instant. A time zone on the type
//! only selects the form: with a zone, ISO-8601 with `T` and `Z`; without
//! (timestamp "ntz"), a space and no zone. Seconds, milliseconds and
//! microseconds print exactly 6 fractional digits; **nanoseconds print 9**,
//! so that no digits are lost and [`parse`](super::parse()) reads the same
//! value back.
//!
//! # Errors
//!
//! | Input                                   | Error                          |
//! |-----------------------------------------|--------------------------------|
//! | `Utf8("before\0after")`, `Binary([0, 255])` | [`ValueError::NulByte`]    |
//! | `Binary([0xDE, 0xAD, 0xBE, 0xEF])`      | [`ValueError::InvalidUtf8`]    |
//! | `Date32` before 0001-01-01 or after 9999-12-31, same for timestamps | [`ValueError::OutOfRange`] |
//! | `List`, `Struct`, `Interval`, …         | [`ValueError::UnsupportedType`]|
//!
//! NUL is checked before UTF-8, so binary with a NUL byte reports the NUL.

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Timelike};
use datafusion::arrow::datatypes::TimeUnit;
use datafusion::common::ScalarValue;

use super::ValueError;

/// Days from 0001-01-01 (day 1 of the common era) to 1970-01-01.
pub(super) const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// The protocol string for `value`; `None` for null, `""` and empty binary.
///
/// # Errors
///
/// [`ValueError::NulByte`], [`ValueError::InvalidUtf8`],
/// [`ValueError::OutOfRange`] or [`ValueError::UnsupportedType`], as listed
/// in the module docs.
pub fn serialize(value: &ScalarValue) -> Result<Option<String>, ValueError> {
    use ScalarValue as S;
    match value {
        S::Null => Ok(None),
        S::Boolean(v) => Ok(v.map(|b| b.to_string())),
        S::Int8(v) => Ok(v.map(|n| n.to_string())),
        S::Int16(v) => Ok(v.map(|n| n.to_string())),
        S::Int32(v) => Ok(v.map(|n| n.to_string())),
        S::Int64(v) => Ok(v.map(|n| n.to_string())),
        S::Float32(v) => Ok(v.map(float32)),
        S::Float64(v) => Ok(v.map(float64)),
        S::Decimal128(v, _, scale) => Ok(v.map(|n| decimal(n, *scale))),
        S::Date32(v) => v.map(date).transpose(),
        S::TimestampSecond(v, tz) => timestamp(*v, TimeUnit::Second, tz.is_some()),
        S::TimestampMillisecond(v, tz) => timestamp(*v, TimeUnit::Millisecond, tz.is_some()),
        S::TimestampMicrosecond(v, tz) => timestamp(*v, TimeUnit::Microsecond, tz.is_some()),
        S::TimestampNanosecond(v, tz) => timestamp(*v, TimeUnit::Nanosecond, tz.is_some()),
        S::Utf8(v) | S::LargeUtf8(v) | S::Utf8View(v) => text(v.as_deref()),
        S::Binary(v) | S::LargeBinary(v) | S::BinaryView(v) | S::FixedSizeBinary(_, v) => binary(v.as_deref()),
        other => Err(ValueError::UnsupportedType {
            data_type: other.data_type(),
        }),
    }
}

/// Java's `Double.toString` (shortest round-trip digits): also used by the
/// Variant functions, so both print doubles the same way.
pub(crate) fn float64(x: f64) -> String {
    match special_float(x) {
        Some(s) => s.to_owned(),
        None => java_float(x.is_sign_negative(), &format!("{:e}", x.abs())),
    }
}

/// Java's `Float.toString`.
pub(crate) fn float32(x: f32) -> String {
    // Widening keeps NaN, infinities, zero and sign; the digits come from f32.
    match special_float(f64::from(x)) {
        Some(s) => s.to_owned(),
        None => java_float(x.is_sign_negative(), &format!("{:e}", x.abs())),
    }
}

/// The fixed spelling of NaN, infinities and zeros.
fn special_float(x: f64) -> Option<&'static str> {
    let negative = x.is_sign_negative();
    if x.is_nan() {
        Some("NaN")
    } else if x.is_infinite() {
        Some(if negative { "-Infinity" } else { "Infinity" })
    } else if x == 0.0 {
        Some(if negative { "-0.0" } else { "0.0" })
    } else {
        None
    }
}

/// Java layout of a finite non-zero magnitude given in Rust's shortest
/// scientific form (`1.2345e3`, `5e-324`).
fn java_float(negative: bool, scientific: &str) -> String {
    let sign = if negative { "-" } else { "" };
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return format!("{sign}{scientific}");
    };
    let Ok(exponent) = exponent.parse::<i32>() else {
        return format!("{sign}{scientific}");
    };
    let digits = mantissa.replace('.', "");
    let body = if (-3..7).contains(&exponent) {
        plain_notation(&digits, exponent)
    } else {
        java_scientific(&digits, exponent)
    };
    format!("{sign}{body}")
}

/// `digits` (`d₀d₁…`) times 10^(exponent − len + 1) as `int.frac`.
fn plain_notation(digits: &str, exponent: i32) -> String {
    match usize::try_from(exponent) {
        Ok(int_len) if digits.len() > int_len + 1 => {
            let (int, frac) = digits.split_at(int_len + 1);
            format!("{int}.{frac}")
        }
        Ok(int_len) => format!("{digits}{}.0", "0".repeat(int_len + 1 - digits.len())),
        Err(_) => {
            let zeros = exponent.unsigned_abs().saturating_sub(1) as usize;
            format!("0.{}{digits}", "0".repeat(zeros))
        }
    }
}

fn java_scientific(digits: &str, exponent: i32) -> String {
    let (head, tail) = digits.split_at(digits.len().min(1));
    let tail = if tail.is_empty() { "0" } else { tail };
    format!("{head}.{tail}E{exponent}")
}

/// The unscaled value with exactly `scale` fractional digits.
fn decimal(unscaled: i128, scale: i8) -> String {
    let sign = if unscaled < 0 { "-" } else { "" };
    let digits = unscaled.unsigned_abs().to_string();
    let scale_len = usize::from(scale.unsigned_abs());
    if scale < 0 {
        let zeros = if unscaled == 0 { 0 } else { scale_len };
        return format!("{sign}{digits}{}", "0".repeat(zeros));
    }
    if scale_len == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale_len + 1);
    let (int, frac) = padded.split_at(padded.len() - scale_len);
    format!("{sign}{int}.{frac}")
}

fn date(days: i32) -> Result<String, ValueError> {
    let out_of_range = || ValueError::OutOfRange {
        what: format!("Date32 value {days} (days since 1970-01-01)"),
    };
    let date = days
        .checked_add(UNIX_EPOCH_DAYS_FROM_CE)
        .and_then(NaiveDate::from_num_days_from_ce_opt)
        .filter(|d| in_year_range(*d))
        .ok_or_else(out_of_range)?;
    Ok(format_date(date))
}

fn in_year_range(date: NaiveDate) -> bool {
    (1..=9999).contains(&date.year())
}

fn format_date(date: NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day())
}

/// Units of `unit` in one second.
pub(super) fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

fn timestamp(value: Option<i64>, unit: TimeUnit, utc: bool) -> Result<Option<String>, ValueError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let instant = to_datetime(value, unit).ok_or_else(|| ValueError::OutOfRange {
        what: format!("timestamp value {value} ({unit:?} since 1970-01-01 00:00:00 UTC)"),
    })?;
    let fraction = match unit {
        TimeUnit::Nanosecond => format!("{:09}", instant.nanosecond()),
        _ => format!("{:06}", instant.nanosecond() / 1_000),
    };
    let date = format_date(instant.date());
    let time = format!(
        "{:02}:{:02}:{:02}.{fraction}",
        instant.hour(),
        instant.minute(),
        instant.second()
    );
    Ok(Some(if utc {
        format!("{date}T{time}Z")
    } else {
        format!("{date} {time}")
    }))
}

fn to_datetime(value: i64, unit: TimeUnit) -> Option<NaiveDateTime> {
    let per_second = per_second(unit);
    let seconds = value.div_euclid(per_second);
    let nanos = value.rem_euclid(per_second) * (1_000_000_000 / per_second);
    let instant = DateTime::from_timestamp(seconds, u32::try_from(nanos).ok()?)?.naive_utc();
    in_year_range(instant.date()).then_some(instant)
}

fn text(value: Option<&str>) -> Result<Option<String>, ValueError> {
    match value {
        None | Some("") => Ok(None),
        Some(s) => {
            reject_nul(s.as_bytes(), "string")?;
            Ok(Some(s.to_owned()))
        }
    }
}

fn binary(value: Option<&[u8]>) -> Result<Option<String>, ValueError> {
    match value {
        None | Some([]) => Ok(None),
        Some(bytes) => {
            reject_nul(bytes, "binary")?;
            let s = std::str::from_utf8(bytes).map_err(|e| ValueError::InvalidUtf8 {
                offset: e.valid_up_to(),
            })?;
            Ok(Some(s.to_owned()))
        }
    }
}

fn reject_nul(bytes: &[u8], kind: &'static str) -> Result<(), ValueError> {
    match bytes.iter().position(|&b| b == 0) {
        Some(offset) => Err(ValueError::NulByte { kind, offset }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::datatypes::{DataType, Field, IntervalDayTime};

    use super::*;

    fn ser(value: ScalarValue) -> Option<String> {
        serialize(&value).expect("serializes")
    }

    fn s(value: ScalarValue) -> String {
        ser(value).expect("not null")
    }

    #[test]
    fn integers_and_booleans() {
        assert_eq!(s(ScalarValue::Int8(Some(i8::MIN))), "-128");
        assert_eq!(s(ScalarValue::Int16(Some(i16::MAX))), "32767");
        assert_eq!(s(ScalarValue::Int32(Some(-1))), "-1");
        assert_eq!(s(ScalarValue::Int64(Some(i64::MIN))), "-9223372036854775808");
        assert_eq!(s(ScalarValue::Boolean(Some(false))), "false");
    }

    #[test]
    fn float64_java_style() {
        let cases: [(f64, &str); 22] = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-1.5, "-1.5"),
            (100.0, "100.0"),
            (1234.5, "1234.5"),
            (0.1, "0.1"),
            (0.001, "0.001"),
            (0.00123, "0.00123"),
            (0.0001, "1.0E-4"),
            (0.000123, "1.23E-4"),
            (9_999_999.0, "9999999.0"),
            (1e7, "1.0E7"),
            (12_345_678.9, "1.23456789E7"),
            (1e21, "1.0E21"),
            (1e-300, "1.0E-300"),
            (f64::MAX, "1.7976931348623157E308"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (f64::from_bits(1), "5.0E-324"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (x, expected) in cases {
            assert_eq!(s(ScalarValue::Float64(Some(x))), expected, "{x:?}");
        }
    }

    #[test]
    fn float32_java_style() {
        let cases: [(f32, &str); 9] = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.1, "1.1"),
            (0.1, "0.1"),
            (1e7, "1.0E7"),
            (f32::MAX, "3.4028235E38"),
            (f32::NAN, "NaN"),
            (f32::INFINITY, "Infinity"),
            (f32::NEG_INFINITY, "-Infinity"),
        ];
        for (x, expected) in cases {
            assert_eq!(s(ScalarValue::Float32(Some(x))), expected, "{x:?}");
        }
    }

    #[test]
    fn decimals_keep_full_scale() {
        let d = |v, p, sc| s(ScalarValue::Decimal128(Some(v), p, sc));
        assert_eq!(d(0, 38, 18), "0.000000000000000000");
        assert_eq!(d(1_230_000_000_000_000_000, 38, 18), "1.230000000000000000");
        assert_eq!(d(-1_230_000_000_000_000_000, 38, 18), "-1.230000000000000000");
        assert_eq!(d(-5, 10, 3), "-0.005");
        assert_eq!(d(-42, 5, 0), "-42");
        assert_eq!(d(7, 5, -2), "700");
        assert_eq!(d(0, 5, -2), "0");
        assert_eq!(d(i128::MAX, 38, 38), "1.70141183460469231731687303715884105727");
        assert_eq!(d(i128::MIN, 38, 0), "-170141183460469231731687303715884105728");
    }

    #[test]
    fn dates_and_their_range() {
        assert_eq!(s(ScalarValue::Date32(Some(0))), "1970-01-01");
        assert_eq!(s(ScalarValue::Date32(Some(-719_162))), "0001-01-01");
        assert_eq!(s(ScalarValue::Date32(Some(2_932_896))), "9999-12-31");
        for days in [-719_163, 2_932_897, i32::MIN, i32::MAX] {
            assert!(matches!(
                serialize(&ScalarValue::Date32(Some(days))),
                Err(ValueError::OutOfRange { .. })
            ));
        }
    }

    #[test]
    fn timestamps_in_every_unit() {
        let utc: Option<Arc<str>> = Some("America/Los_Angeles".into());
        // 2024-06-15T19:30:45.123456789Z
        let secs = 1_718_479_845_i64;
        assert_eq!(
            s(ScalarValue::TimestampSecond(Some(secs), utc.clone())),
            "2024-06-15T19:30:45.000000Z"
        );
        assert_eq!(
            s(ScalarValue::TimestampMillisecond(Some(secs * 1_000 + 123), None)),
            "2024-06-15 19:30:45.123000"
        );
        assert_eq!(
            s(ScalarValue::TimestampMicrosecond(
                Some(secs * 1_000_000 + 123_456),
                utc.clone()
            )),
            "2024-06-15T19:30:45.123456Z"
        );
        assert_eq!(
            s(ScalarValue::TimestampNanosecond(
                Some(secs * 1_000_000_000 + 123_456_789),
                None
            )),
            "2024-06-15 19:30:45.123456789"
        );
        assert_eq!(
            s(ScalarValue::TimestampNanosecond(Some(0), utc)),
            "1970-01-01T00:00:00.000000000Z"
        );
    }

    #[test]
    fn timestamps_before_epoch_floor() {
        assert_eq!(
            s(ScalarValue::TimestampMicrosecond(Some(-1), None)),
            "1969-12-31 23:59:59.999999"
        );
        assert_eq!(
            s(ScalarValue::TimestampMillisecond(Some(-1_500), Some("UTC".into()))),
            "1969-12-31T23:59:58.500000Z"
        );
    }

    #[test]
    fn timestamps_out_of_range() {
        for value in [
            ScalarValue::TimestampSecond(Some(i64::MAX), None),
            ScalarValue::TimestampSecond(Some(i64::MIN), None),
            ScalarValue::TimestampSecond(Some(253_402_300_800), None), // 10000-01-01
            ScalarValue::TimestampMicrosecond(Some(i64::MIN), None),
        ] {
            assert!(
                matches!(serialize(&value), Err(ValueError::OutOfRange { .. })),
                "{value:?}"
            );
        }
        // Nanoseconds always fit: i64 spans 1677..2262.
        assert!(serialize(&ScalarValue::TimestampNanosecond(Some(i64::MIN), None)).is_ok());
    }

    #[test]
    fn strings_and_binaries() {
        assert_eq!(s(ScalarValue::Utf8(Some("US/East".into()))), "US/East");
        assert_eq!(s(ScalarValue::LargeUtf8(Some("ü".into()))), "ü");
        assert_eq!(s(ScalarValue::Utf8View(Some(" ".into()))), " ");
        assert_eq!(s(ScalarValue::Binary(Some(b"HELLO".to_vec()))), "HELLO");
        assert_eq!(s(ScalarValue::LargeBinary(Some(b"a".to_vec()))), "a");
        assert_eq!(s(ScalarValue::BinaryView(Some(b"b".to_vec()))), "b");
        assert_eq!(s(ScalarValue::FixedSizeBinary(2, Some(b"cd".to_vec()))), "cd");
    }

    #[test]
    fn null_empty_string_and_empty_binary_are_none() {
        let nones = [
            ScalarValue::Null,
            ScalarValue::Int32(None),
            ScalarValue::Float64(None),
            ScalarValue::Decimal128(None, 38, 18),
            ScalarValue::TimestampNanosecond(None, None),
            ScalarValue::Utf8(Some(String::new())),
            ScalarValue::Utf8View(Some(String::new())),
            ScalarValue::Binary(Some(vec![])),
            ScalarValue::FixedSizeBinary(0, Some(vec![])),
            ScalarValue::LargeBinary(None),
        ];
        for value in nones {
            assert_eq!(ser(value.clone()), None, "{value:?}");
        }
    }

    #[test]
    fn nul_bytes_fail() {
        let cases = [
            (ScalarValue::from("\0"), "string", 0),
            (ScalarValue::from("before\0after"), "string", 6),
            (ScalarValue::Binary(Some(vec![0x00, 0xFF])), "binary", 0),
            (
                ScalarValue::FixedSizeBinary(3, Some(vec![b'a', 0xFF, 0x00])),
                "binary",
                2,
            ),
        ];
        for (value, kind, offset) in cases {
            assert_eq!(serialize(&value), Err(ValueError::NulByte { kind, offset }));
        }
    }

    #[test]
    fn invalid_utf8_fails() {
        let value = ScalarValue::Binary(Some(vec![b'o', b'k', 0xDE, 0xAD, 0xBE, 0xEF]));
        // `DE AD` is itself a valid two-byte sequence; `BE` is the first bad byte.
        assert_eq!(serialize(&value), Err(ValueError::InvalidUtf8 { offset: 4 }));
    }

    #[test]
    fn unsupported_types_fail_even_when_null() {
        let list = ScalarValue::List(ScalarValue::new_list_nullable(&[], &DataType::Int32));
        let unsupported = [
            list,
            ScalarValue::UInt8(Some(1)),
            ScalarValue::Date64(Some(0)),
            ScalarValue::IntervalDayTime(Some(IntervalDayTime::new(1, 0))),
            ScalarValue::Dictionary(Box::new(DataType::Int32), Box::new(ScalarValue::from("x"))),
            ScalarValue::try_from(&DataType::Struct(vec![Field::new("a", DataType::Int32, true)].into()))
                .expect("null struct"),
        ];
        for value in unsupported {
            assert_eq!(
                serialize(&value),
                Err(ValueError::UnsupportedType {
                    data_type: value.data_type()
                })
            );
        }
    }
}
