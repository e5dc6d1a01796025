//! Back from a protocol string to a typed value.
//!
//! [`parse`] reads what [`serialize`](super::serialize) writes, plus the
//! forms other writers (Delta-Spark, older kernels) are known to produce.
//! `None` and `Some("")` both give a typed null: after serialization an
//! empty string and a null are indistinguishable.
//!
//! Round trip: `parse(serialize(v), &v.data_type()) == v` for every
//! non-null, non-empty value of a supported type (floats compare by bits,
//! so `-0.0` stays `-0.0`; NaN comes back as the canonical NaN).
//!
//! # Accepted forms
//!
//! | Type              | Input                               | Value                                  |
//! |-------------------|-------------------------------------|----------------------------------------|
//! | Int8/16/32/64     | `-128`, `+7`                        | `-128`, `7` (out of range → error)     |
//! | Boolean           | `true`, `FALSE`                     | `true`, `false` (ASCII case ignored)   |
//! | Float32/64        | `1.0E-4`, `-0.0`, `4.9E-324`        | `0.0001`, `-0.0`, smallest subnormal   |
//! | Float32/64        | `NaN`, `Infinity`, `-Infinity`      | NaN, +∞, −∞                            |
//! | Float32           | `1.0E39`                            | error: finite text overflows to ∞      |
//! | Decimal128(38,18) | `1.23`, `1.230000000000000000`      | unscaled `1230000000000000000`         |
//! | Decimal128(38,18) | `0E-18`, `1.23E+2`                  | `0`, `123.000000000000000000`          |
//! | Decimal128(5,2)   | `1.234`                             | error: would lose the digit `4`        |
//! | Decimal128(5,2)   | `1.230`                             | unscaled `123` (trailing zeros drop)   |
//! | Decimal128(5,2)   | `1234.5`                            | error: needs 6 digits of precision 5   |
//! | Date32            | `2024-01-01`, `0001-01-01`          | days since 1970-01-01                  |
//! | Timestamp(µs, tz) | `2024-06-15T19:30:45.000000Z`       | that instant                           |
//! | Timestamp(µs, tz) | `2024-06-15 19:30:45`               | the same instant (read as UTC)         |
//! | Timestamp(µs)     | `2024-06-15 12:30:45.5`             | 12:30:45.500000                        |
//! | Timestamp(s)      | `2024-06-15 12:30:45.000000`        | 12:30:45                               |
//! | Timestamp(s)      | `2024-06-15 12:30:45.5`             | error: needs finer than seconds        |
//! | Timestamp(ns)     | `… 12:30:45.123456789`              | exact nanoseconds                      |
//! | Utf8/LargeUtf8/Utf8View | `US/East`                     | the text as is                         |
//! | Binary/LargeBinary/BinaryView | `HELLO`                 | its UTF-8 bytes                        |
//! | FixedSizeBinary(5)| `HELLO`                             | its bytes; another length → error      |
//! | any               | `None`, `""`                        | typed null                             |
//!
//! Timestamps: a date `YYYY-MM-DD` (years 0001–9999), `T` or a space,
//! `HH:MM:SS`, an optional fraction of 1–9 digits and an optional `Z`. Both
//! forms are accepted for every timestamp type; a zone-less string for a
//! zoned column is read as UTC (the protocol string is always UTC), and a
//! `Z` on a column without zone is ignored (the wall clock is kept).
//! Fractions finer than the column's unit must be zeros.

use std::str::FromStr;

use chrono::{Datelike, NaiveDate};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;

use super::ValueError;
use super::serialization::{UNIX_EPOCH_DAYS_FROM_CE, per_second};
use super::validation::ensure_supported;

const SECONDS_PER_DAY: i64 = 86_400;
const NANOS_PER_SECOND: i64 = 1_000_000_000;
/// Largest exponent magnitude accepted in a decimal string.
const MAX_DECIMAL_EXPONENT: i64 = 1_000;

/// Parses a protocol string into a value of `data_type`.
///
/// # Errors
///
/// [`ValueError::UnsupportedType`] for a type that cannot hold a partition
/// value, [`ValueError::Parse`] for text that is not a value of the type
/// (including values out of range or digits the type cannot hold).
pub fn parse(s: Option<&str>, data_type: &DataType) -> Result<ScalarValue, ValueError> {
    ensure_supported(data_type)?;
    match s {
        None | Some("") => typed_null(data_type),
        Some(text) => parse_text(text, data_type),
    }
}

fn typed_null(data_type: &DataType) -> Result<ScalarValue, ValueError> {
    ScalarValue::try_from(data_type).map_err(|_| ValueError::UnsupportedType {
        data_type: data_type.clone(),
    })
}

fn parse_text(s: &str, data_type: &DataType) -> Result<ScalarValue, ValueError> {
    use DataType as D;
    use ScalarValue as S;
    let input = Input { s, data_type };
    Ok(match data_type {
        D::Boolean => S::Boolean(Some(input.boolean()?)),
        D::Int8 => S::Int8(Some(input.integer(i8::MIN.into(), i8::MAX.into())?)),
        D::Int16 => S::Int16(Some(input.integer(i16::MIN.into(), i16::MAX.into())?)),
        D::Int32 => S::Int32(Some(input.integer(i32::MIN.into(), i32::MAX.into())?)),
        D::Int64 => S::Int64(Some(input.integer(i64::MIN, i64::MAX)?)),
        D::Float32 => S::Float32(Some(input.float::<f32>()?)),
        D::Float64 => S::Float64(Some(input.float::<f64>()?)),
        D::Decimal128(p, scale) => S::Decimal128(Some(input.decimal(*p, *scale)?), *p, *scale),
        D::Date32 => S::Date32(Some(input.date()?)),
        D::Timestamp(unit, tz) => {
            let v = Some(input.timestamp(*unit)?);
            match unit {
                TimeUnit::Second => S::TimestampSecond(v, tz.clone()),
                TimeUnit::Millisecond => S::TimestampMillisecond(v, tz.clone()),
                TimeUnit::Microsecond => S::TimestampMicrosecond(v, tz.clone()),
                TimeUnit::Nanosecond => S::TimestampNanosecond(v, tz.clone()),
            }
        }
        D::Utf8 => S::Utf8(Some(s.to_owned())),
        D::LargeUtf8 => S::LargeUtf8(Some(s.to_owned())),
        D::Utf8View => S::Utf8View(Some(s.to_owned())),
        D::Binary => S::Binary(Some(s.as_bytes().to_vec())),
        D::LargeBinary => S::LargeBinary(Some(s.as_bytes().to_vec())),
        D::BinaryView => S::BinaryView(Some(s.as_bytes().to_vec())),
        D::FixedSizeBinary(len) => S::FixedSizeBinary(*len, Some(input.fixed_binary(*len)?)),
        other => {
            return Err(ValueError::UnsupportedType {
                data_type: other.clone(),
            });
        }
    })
}

/// A string being parsed as a type; builds errors that name both.
struct Input<'a> {
    s: &'a str,
    data_type: &'a DataType,
}

impl Input<'_> {
    fn error(&self, expected: impl Into<String>) -> ValueError {
        ValueError::Parse {
            input: self.s.to_owned(),
            data_type: self.data_type.clone(),
            expected: expected.into(),
        }
    }

    fn boolean(&self) -> Result<bool, ValueError> {
        match self.s {
            s if s.eq_ignore_ascii_case("true") => Ok(true),
            s if s.eq_ignore_ascii_case("false") => Ok(false),
            _ => Err(self.error("`true` or `false`")),
        }
    }

    fn integer<T: TryFrom<i64>>(&self, min: i64, max: i64) -> Result<T, ValueError> {
        self.s
            .parse::<i64>()
            .ok()
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| self.error(format!("a whole number from {min} to {max}")))
    }

    fn float<T: FromStr + Copy + Into<f64>>(&self) -> Result<T, ValueError> {
        let expected = "a decimal or scientific number, `NaN`, `Infinity` or `-Infinity`";
        let value: T = self.s.parse().map_err(|_| self.error(expected))?;
        let overflowed = value.into().is_infinite() && self.s.bytes().any(|b| b.is_ascii_digit());
        if overflowed {
            return Err(self.error("a finite number within the type's range"));
        }
        Ok(value)
    }

    fn decimal(&self, precision: u8, scale: i8) -> Result<i128, ValueError> {
        let shape = "a decimal number such as `-1.23` or `1.23E+5`";
        let (negative, body) = split_sign(self.s);
        let (mantissa, exponent) = match body.find(['e', 'E']) {
            Some(at) => (&body[..at], self.exponent(&body[at + 1..])?),
            None => (body, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
        if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
            return Err(self.error(shape));
        }
        // value = int.frac × 10^exponent = digits × 10^(exponent − |frac|)
        let digits = format!("{int}{frac}");
        let frac_len = i64::try_from(frac.len()).unwrap_or(i64::MAX);
        let shift = (i64::from(scale) + exponent).saturating_sub(frac_len);
        let unscaled = self.rescale(digits.trim_start_matches('0'), shift, precision, scale)?;
        Ok(if negative { -unscaled } else { unscaled })
    }

    fn exponent(&self, s: &str) -> Result<i64, ValueError> {
        s.parse::<i64>()
            .ok()
            .filter(|e| e.abs() <= MAX_DECIMAL_EXPONENT)
            .ok_or_else(|| {
                self.error(format!(
                    "an exponent between -{MAX_DECIMAL_EXPONENT} and {MAX_DECIMAL_EXPONENT}"
                ))
            })
    }

    /// `digits` (no leading zeros) × 10^shift as an integer of at most
    /// `precision` digits, or an error if digits would be lost.
    fn rescale(&self, digits: &str, shift: i64, precision: u8, scale: i8) -> Result<i128, ValueError> {
        let fits = format!("at most {precision} significant digits with scale {scale}");
        let max_digits = usize::from(precision.min(38));
        let unscaled = match usize::try_from(shift) {
            Ok(_) if digits.is_empty() => String::new(),
            Ok(zeros) if digits.len().saturating_add(zeros) > max_digits => {
                return Err(self.error(fits));
            }
            Ok(zeros) => format!("{digits}{}", "0".repeat(zeros)),
            Err(_) => {
                let cut = usize::try_from(shift.unsigned_abs()).unwrap_or(usize::MAX);
                let keep = digits.len().saturating_sub(cut);
                let (kept, dropped) = digits.split_at(keep);
                if dropped.bytes().any(|b| b != b'0') {
                    return Err(self.error(format!("{fits} (no digits beyond the scale)")));
                }
                kept.to_owned()
            }
        };
        if unscaled.len() > max_digits {
            return Err(self.error(fits));
        }
        if unscaled.is_empty() {
            return Ok(0);
        }
        unscaled.parse::<i128>().map_err(|_| self.error(fits))
    }

    fn date(&self) -> Result<i32, ValueError> {
        let date = parse_date(self.s).ok_or_else(|| self.error("a date `YYYY-MM-DD` in years 0001 to 9999"))?;
        Ok(date.num_days_from_ce() - UNIX_EPOCH_DAYS_FROM_CE)
    }

    fn timestamp(&self, unit: TimeUnit) -> Result<i64, ValueError> {
        let shape = "a timestamp `YYYY-MM-DD HH:MM:SS[.fraction]` or `YYYY-MM-DDTHH:MM:SS[.fraction]Z`";
        let parts = TimestampParts::parse(self.s).ok_or_else(|| self.error(shape))?;
        let nanos_per_unit = NANOS_PER_SECOND / per_second(unit);
        if parts.nanos % nanos_per_unit != 0 {
            return Err(self.error(format!("no fraction finer than the column's unit ({unit:?})")));
        }
        parts
            .seconds
            .checked_mul(per_second(unit))
            .and_then(|v| v.checked_add(parts.nanos / nanos_per_unit))
            .ok_or_else(|| self.error(format!("a timestamp that fits in 64-bit {unit:?}")))
    }

    fn fixed_binary(&self, len: i32) -> Result<Vec<u8>, ValueError> {
        let bytes = self.s.as_bytes();
        if usize::try_from(len).ok() != Some(bytes.len()) {
            return Err(self.error(format!("exactly {len} bytes of UTF-8 text")));
        }
        Ok(bytes.to_vec())
    }
}

fn split_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

/// Strict `YYYY-MM-DD`, years 0001 to 9999.
fn parse_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = fixed_digits(s.get(0..4)?)?;
    let month = fixed_digits(s.get(5..7)?)?;
    let day = fixed_digits(s.get(8..10)?)?;
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    (date.year() >= 1).then_some(date)
}

/// A run of ASCII digits only (no sign), as a number.
fn fixed_digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A timestamp string split into whole seconds since the epoch and nanos.
struct TimestampParts {
    seconds: i64,
    nanos: i64,
}

impl TimestampParts {
    fn parse(s: &str) -> Option<Self> {
        let s = s.strip_suffix('Z').unwrap_or(s);
        let date = parse_date(s.get(0..10)?)?;
        if !matches!(s.as_bytes().get(10), Some(b'T' | b' ')) {
            return None;
        }
        let clock = s.get(11..19)?;
        let c = clock.as_bytes();
        if c[2] != b':' || c[5] != b':' {
            return None;
        }
        let hour = fixed_digits(clock.get(0..2)?)?;
        let minute = fixed_digits(clock.get(3..5)?)?;
        let second = fixed_digits(clock.get(6..8)?)?;
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        let nanos = fraction_nanos(s.get(19..)?)?;
        let days = i64::from(date.num_days_from_ce() - UNIX_EPOCH_DAYS_FROM_CE);
        let seconds = days * SECONDS_PER_DAY + i64::from(hour * 3_600 + minute * 60 + second);
        Some(Self { seconds, nanos })
    }
}

/// `""` or `.` followed by 1 to 9 digits, as nanoseconds.
fn fraction_nanos(s: &str) -> Option<i64> {
    if s.is_empty() {
        return Some(0);
    }
    let digits = s.strip_prefix('.')?;
    if digits.len() > 9 {
        return None;
    }
    let value = i64::from(fixed_digits(digits)?);
    let missing = u32::try_from(9 - digits.len()).ok()?;
    Some(value * 10_i64.pow(missing))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::datatypes::Field;
    use proptest::prelude::*;

    use super::super::serialize;
    use super::*;

    fn p(s: &str, data_type: DataType) -> ScalarValue {
        parse(Some(s), &data_type).expect("parses")
    }

    fn fails(s: &str, data_type: DataType) {
        let err = parse(Some(s), &data_type).expect_err(s);
        assert!(matches!(err, ValueError::Parse { .. }), "{s}: {err}");
        assert!(err.to_string().contains(s), "{err}");
    }

    fn utc() -> Option<Arc<str>> {
        Some("UTC".into())
    }

    #[test]
    fn null_and_empty_are_typed_null() {
        assert_eq!(parse(None, &DataType::Int32), Ok(ScalarValue::Int32(None)));
        assert_eq!(parse(Some(""), &DataType::Utf8), Ok(ScalarValue::Utf8(None)));
        assert_eq!(
            parse(None, &DataType::Decimal128(38, 18)),
            Ok(ScalarValue::Decimal128(None, 38, 18))
        );
        assert_eq!(
            parse(Some(""), &DataType::Timestamp(TimeUnit::Second, utc())),
            Ok(ScalarValue::TimestampSecond(None, utc()))
        );
    }

    #[test]
    fn integers_with_range_checks() {
        assert_eq!(p("-128", DataType::Int8), ScalarValue::Int8(Some(-128)));
        assert_eq!(p("+7", DataType::Int16), ScalarValue::Int16(Some(7)));
        assert_eq!(
            p("-9223372036854775808", DataType::Int64),
            ScalarValue::Int64(Some(i64::MIN))
        );
        fails("128", DataType::Int8);
        fails("2147483648", DataType::Int32);
        fails("9223372036854775808", DataType::Int64);
        fails("1.0", DataType::Int32);
        fails(" 1", DataType::Int32);
    }

    #[test]
    fn booleans() {
        assert_eq!(p("true", DataType::Boolean), ScalarValue::Boolean(Some(true)));
        assert_eq!(p("FALSE", DataType::Boolean), ScalarValue::Boolean(Some(false)));
        fails("1", DataType::Boolean);
    }

    #[test]
    fn floats() {
        let f = |s| match p(s, DataType::Float64) {
            ScalarValue::Float64(Some(x)) => x,
            other => panic!("{other:?}"),
        };
        assert_eq!(f("1.0E-4"), 1e-4);
        assert_eq!(f("-0.0").to_bits(), (-0.0_f64).to_bits());
        assert_eq!(f("4.9E-324"), f64::from_bits(1));
        assert_eq!(f("5.0E-324"), f64::from_bits(1));
        assert_eq!(f("1.7976931348623157E308"), f64::MAX);
        assert!(f("NaN").is_nan());
        assert_eq!(f("Infinity"), f64::INFINITY);
        assert_eq!(f("-Infinity"), f64::NEG_INFINITY);
        fails("1.0E309", DataType::Float64);
        fails("1.0E39", DataType::Float32);
        fails("one", DataType::Float32);
        assert_eq!(
            p("3.4028235E38", DataType::Float32),
            ScalarValue::Float32(Some(f32::MAX))
        );
    }

    #[test]
    fn decimals_rescale_exactly() {
        let d = |s, p, sc| match parse(Some(s), &DataType::Decimal128(p, sc)) {
            Ok(ScalarValue::Decimal128(Some(v), ..)) => Ok(v),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(d("1.23", 38, 18), Ok(1_230_000_000_000_000_000));
        assert_eq!(d("1.230000000000000000", 38, 18), Ok(1_230_000_000_000_000_000));
        assert_eq!(d("-1.230000000000000000", 38, 18), Ok(-1_230_000_000_000_000_000));
        assert_eq!(d("0.000000000000000000", 38, 18), Ok(0));
        assert_eq!(d("0E-18", 38, 18), Ok(0));
        assert_eq!(d("-0", 38, 18), Ok(0));
        assert_eq!(d("1.23E+2", 38, 18), Ok(123_000_000_000_000_000_000));
        assert_eq!(d("1.230", 5, 2), Ok(123));
        assert_eq!(d(".5", 5, 2), Ok(50));
        assert_eq!(d("5.", 5, 2), Ok(500));
        assert_eq!(d("700", 5, -2), Ok(7));
        assert_eq!(d("1.2300000000000000000000000000000000000000000", 5, 2), Ok(123));
        assert_eq!(d("000000000000000000000000000000000000000000001", 5, 0), Ok(1));
        assert_eq!(d("0E+999", 5, 2), Ok(0));
        assert!(d("1E-1000", 5, 2).is_err());
        assert!(d("1.234", 5, 2).is_err());
        assert!(d("1234.5", 5, 2).is_err());
        assert!(d("750", 5, -2).is_err());
        assert!(d("1E+1001", 38, 0).is_err());
        assert!(d("1E+40", 38, 0).is_err());
        for bad in ["-", ".", "1.2.3", "1e", "1,5", "0x10", "1.5E+", "--1", " 1"] {
            assert!(d(bad, 10, 2).is_err(), "{bad}");
        }
        assert_eq!(
            d("99999999999999999999999999999999999999", 38, 0),
            Ok(99_999_999_999_999_999_999_999_999_999_999_999_999)
        );
        assert!(d("999999999999999999999999999999999999999", 38, 0).is_err());
    }

    #[test]
    fn dates() {
        assert_eq!(p("1970-01-01", DataType::Date32), ScalarValue::Date32(Some(0)));
        assert_eq!(p("0001-01-01", DataType::Date32), ScalarValue::Date32(Some(-719_162)));
        assert_eq!(p("9999-12-31", DataType::Date32), ScalarValue::Date32(Some(2_932_896)));
        for bad in [
            "0000-01-01",
            "2024-02-30",
            "2024-1-01",
            "+2024-01-01",
            "10000-01-01",
            "2024-01-01 ",
        ] {
            fails(bad, DataType::Date32);
        }
    }

    #[test]
    fn timestamps_accept_both_forms() {
        let micros = 1_718_479_845_000_000_i64; // 2024-06-15T19:30:45Z
        let zoned = DataType::Timestamp(TimeUnit::Microsecond, Some("America/Los_Angeles".into()));
        let expected = ScalarValue::TimestampMicrosecond(Some(micros), Some("America/Los_Angeles".into()));
        for s in [
            "2024-06-15T19:30:45.000000Z",
            "2024-06-15T19:30:45Z",
            "2024-06-15 19:30:45",
            "2024-06-15 19:30:45.000000",
            "2024-06-15 19:30:45.0",
            "2024-06-15T19:30:45.000000000",
        ] {
            assert_eq!(p(s, zoned.clone()), expected, "{s}");
        }
        let ntz = DataType::Timestamp(TimeUnit::Microsecond, None);
        assert_eq!(
            p("2024-06-15 19:30:45.5", ntz.clone()),
            ScalarValue::TimestampMicrosecond(Some(micros + 500_000), None)
        );
        assert_eq!(
            p("1969-12-31 23:59:59.999999", ntz),
            ScalarValue::TimestampMicrosecond(Some(-1), None)
        );
    }

    #[test]
    fn timestamps_respect_the_unit() {
        let secs = DataType::Timestamp(TimeUnit::Second, None);
        assert_eq!(
            p("1970-01-01 00:00:01.000000", secs.clone()),
            ScalarValue::TimestampSecond(Some(1), None)
        );
        fails("1970-01-01 00:00:01.5", secs);
        let nanos = DataType::Timestamp(TimeUnit::Nanosecond, utc());
        assert_eq!(
            p("1970-01-01T00:00:00.123456789Z", nanos.clone()),
            ScalarValue::TimestampNanosecond(Some(123_456_789), utc())
        );
        // Outside the nanosecond range of i64 (1677..2262).
        fails("9999-12-31 23:59:59", nanos);
    }

    #[test]
    fn timestamps_reject_other_shapes() {
        let t = DataType::Timestamp(TimeUnit::Microsecond, None);
        for bad in [
            "2024-06-15",
            "2024-06-15 24:00:00",
            "2024-06-15 12:60:00",
            "2024-06-15 12:30:60",
            "2024-06-15X12:30:45",
            "2024-06-15 12:30:45.",
            "2024-06-15 12:30:45.1234567890",
            "2024-06-15 12:30:45+02:00",
            "2024-06-15 12-30-45",
            "2024-06-15 1:30:45",
            "2024-06-15 12:30:45ZZ",
            "2024-06-15 12:3ü:45",
        ] {
            fails(bad, t.clone());
        }
    }

    #[test]
    fn strings_and_binaries() {
        assert_eq!(p("US/East", DataType::Utf8), ScalarValue::from("US/East"));
        assert_eq!(p("x", DataType::LargeUtf8), ScalarValue::LargeUtf8(Some("x".into())));
        assert_eq!(p("x", DataType::Utf8View), ScalarValue::Utf8View(Some("x".into())));
        assert_eq!(
            p("HELLO", DataType::Binary),
            ScalarValue::Binary(Some(b"HELLO".to_vec()))
        );
        assert_eq!(
            p("a", DataType::LargeBinary),
            ScalarValue::LargeBinary(Some(b"a".to_vec()))
        );
        assert_eq!(
            p("a", DataType::BinaryView),
            ScalarValue::BinaryView(Some(b"a".to_vec()))
        );
        assert_eq!(
            p("HELLO", DataType::FixedSizeBinary(5)),
            ScalarValue::FixedSizeBinary(5, Some(b"HELLO".to_vec()))
        );
        fails("HELL", DataType::FixedSizeBinary(5));
    }

    #[test]
    fn unsupported_types() {
        let list = DataType::List(Arc::new(Field::new("item", DataType::Int32, true)));
        for data_type in [list, DataType::UInt8, DataType::Null, DataType::Date64] {
            assert_eq!(
                parse(Some("1"), &data_type),
                Err(ValueError::UnsupportedType {
                    data_type: data_type.clone()
                })
            );
            assert!(parse(None, &data_type).is_err());
        }
    }

    #[test]
    fn nan_round_trips_as_canonical_nan() {
        let back = parse(Some("NaN"), &DataType::Float32).expect("parses");
        assert!(matches!(back, ScalarValue::Float32(Some(x)) if x.is_nan()));
    }

    // Round trip through serialize for every supported type.

    const MIN_DAY: i32 = -719_162; // 0001-01-01
    const MAX_DAY: i32 = 2_932_896; // 9999-12-31
    const MIN_SECOND: i64 = -62_135_596_800; // 0001-01-01T00:00:00Z
    const MAX_SECOND: i64 = 253_402_300_799; // 9999-12-31T23:59:59Z

    fn zone() -> impl Strategy<Value = Option<Arc<str>>> {
        prop_oneof![
            Just(None),
            Just(Some(Arc::from("UTC"))),
            Just(Some(Arc::from("+05:30"))),
            Just(Some(Arc::from("America/Los_Angeles"))),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        "[^\\x00]{1,12}"
    }

    fn value() -> impl Strategy<Value = ScalarValue> {
        use ScalarValue as S;
        let max_unscaled = 10_i128.pow(38) - 1;
        prop_oneof![
            any::<bool>().prop_map(|v| S::Boolean(Some(v))),
            any::<i8>().prop_map(|v| S::Int8(Some(v))),
            any::<i16>().prop_map(|v| S::Int16(Some(v))),
            any::<i32>().prop_map(|v| S::Int32(Some(v))),
            any::<i64>().prop_map(|v| S::Int64(Some(v))),
            any::<u32>().prop_map(|b| S::Float32(Some(f32::from_bits(b)))),
            any::<u64>().prop_map(|b| S::Float64(Some(f64::from_bits(b)))),
            (-max_unscaled..=max_unscaled, -5_i8..=38).prop_map(|(v, scale)| S::Decimal128(Some(v), 38, scale)),
            (-99_999_i128..=99_999, 0_i8..=5).prop_map(|(v, scale)| S::Decimal128(Some(v), 5, scale)),
            (MIN_DAY..=MAX_DAY).prop_map(|v| S::Date32(Some(v))),
            ((MIN_SECOND..=MAX_SECOND), zone()).prop_map(|(v, tz)| S::TimestampSecond(Some(v), tz)),
            ((MIN_SECOND * 1_000..=MAX_SECOND * 1_000), zone())
                .prop_map(|(v, tz)| S::TimestampMillisecond(Some(v), tz)),
            ((MIN_SECOND * 1_000_000..=MAX_SECOND * 1_000_000), zone())
                .prop_map(|(v, tz)| S::TimestampMicrosecond(Some(v), tz)),
            (any::<i64>(), zone()).prop_map(|(v, tz)| S::TimestampNanosecond(Some(v), tz)),
            text().prop_map(|v| S::Utf8(Some(v))),
            text().prop_map(|v| S::LargeUtf8(Some(v))),
            text().prop_map(|v| S::Utf8View(Some(v))),
            text().prop_map(|v| S::Binary(Some(v.into_bytes()))),
            text().prop_map(|v| S::LargeBinary(Some(v.into_bytes()))),
            text().prop_map(|v| S::BinaryView(Some(v.into_bytes()))),
            text().prop_map(|v| {
                let bytes = v.into_bytes();
                S::FixedSizeBinary(bytes.len() as i32, Some(bytes))
            }),
        ]
    }

    fn is_nan(value: &ScalarValue) -> bool {
        matches!(value, ScalarValue::Float32(Some(x)) if x.is_nan())
            || matches!(value, ScalarValue::Float64(Some(x)) if x.is_nan())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn parse_inverts_serialize(value in value()) {
            prop_assume!(!is_nan(&value));
            let text = serialize(&value).expect("serializes");
            prop_assert!(text.is_some());
            let back = parse(text.as_deref(), &value.data_type()).expect("parses");
            prop_assert_eq!(back, value);
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,40}", pick in 0_usize..8) {
            let types = [
                DataType::Int32,
                DataType::Float64,
                DataType::Decimal128(38, 18),
                DataType::Decimal128(5, -2),
                DataType::Date32,
                DataType::Timestamp(TimeUnit::Nanosecond, None),
                DataType::Timestamp(TimeUnit::Second, Some("UTC".into())),
                DataType::FixedSizeBinary(3),
            ];
            let _ = parse(Some(&s), &types[pick]);
        }

        #[test]
        fn decimal_like_strings_never_panic(s in "[-+]?[0-9]{0,45}(\\.[0-9]{0,45})?([eE][-+]?[0-9]{1,6})?") {
            let _ = parse(Some(&s), &DataType::Decimal128(38, 18));
            let _ = parse(Some(&s), &DataType::Decimal128(3, -3));
        }
    }
}
