//! Printing scalars the way Spark does (Java's number formats, ISO dates).
//!
//! | value                         | text                              |
//! |-------------------------------|-----------------------------------|
//! | double `-1e308`               | `-1.0E308`                        |
//! | double `100`, `0.001`         | `100.0`, `0.001`                  |
//! | decimal `1.50` (150, scale 2) | `1.5` (trailing zeros stripped)   |
//! | date 19723                    | `2024-01-01`                      |
//! | timestamp µs, UTC             | `2024-01-01 00:00:00.5+00:00`     |
//! | timestamp_ntz µs              | `2024-01-01 00:00:00.5`           |
//! | binary `01 02`                | `AQI=` (base64)                   |
//!
//! Everything here is total: no input makes it fail or panic.

use std::fmt::Write;

/// Java's `Double.toString`: plain between 1e-3 and 1e7, otherwise `d.dddE±n`;
/// shortest digits that round-trip (shared with partition value serialization).
pub fn java_double(v: f64) -> String {
    crate::values::serialization::float64(v)
}

/// Java's `Float.toString` (same rules, shortest digits of the f32).
pub fn java_float(v: f32) -> String {
    crate::values::serialization::float32(v)
}

/// Splits Rust's `{:e}` output (`-1.25e-7`) into sign, digits and exponent.
pub(crate) fn split_exp(sci: &str) -> (bool, String, i32) {
    let (neg, rest) = match sci.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, sci),
    };
    let (mant, exp) = rest.split_once('e').unwrap_or((rest, "0"));
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    (neg, digits, exp.parse().unwrap_or(0))
}

/// Drops trailing zeros of the fraction (Spark's canonical decimal).
pub fn strip_decimal(mut unscaled: i128, mut scale: u8) -> (i128, u8) {
    while scale > 0 && unscaled % 10 == 0 {
        unscaled /= 10;
        scale -= 1;
    }
    (unscaled, scale)
}

/// Decimal as a plain string, trailing zeros stripped: `1.50` → `1.5`, `2.0` → `2`.
pub fn decimal_plain(unscaled: i128, scale: u8) -> String {
    let (u, s) = strip_decimal(unscaled, scale);
    decimal_with_scale(u, s)
}

/// Decimal as a plain string keeping the given scale: (150, 2) → `1.50`.
pub fn decimal_with_scale(unscaled: i128, scale: u8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + 3);
    if unscaled < 0 {
        out.push('-');
    }
    let scale = scale as usize;
    if scale == 0 {
        out.push_str(&digits);
    } else if digits.len() > scale {
        out.push_str(&digits[..digits.len() - scale]);
        out.push('.');
        out.push_str(&digits[digits.len() - scale..]);
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', scale - digits.len()));
        out.push_str(&digits);
    }
    out
}

/// (year, month, day) of a day count since 1970-01-01 (proleptic Gregorian).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

/// Day count since 1970-01-01 of a civil date (inverse of [`civil_from_days`]).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = m as i64;
    let doy = (153 * if m > 2 { m - 3 } else { m + 9 } + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn push_date(out: &mut String, days: i64) {
    let (y, m, d) = civil_from_days(days);
    let _ = if y > 9999 {
        write!(out, "+{y}-{m:02}-{d:02}")
    } else if y < 0 {
        write!(out, "-{:04}-{m:02}-{d:02}", -y)
    } else {
        write!(out, "{y:04}-{m:02}-{d:02}")
    };
}

fn push_fraction(out: &mut String, frac: i64, digits: usize) {
    if frac == 0 {
        return;
    }
    let s = format!("{frac:0digits$}");
    out.push('.');
    out.push_str(s.trim_end_matches('0'));
}

/// `yyyy-MM-dd`.
pub fn date(days: i32) -> String {
    let mut out = String::with_capacity(10);
    push_date(&mut out, days as i64);
    out
}

/// `yyyy-MM-dd HH:mm:ss[.f]` from a count of `units_per_sec` since the epoch,
/// with `+00:00` when `utc`.
pub fn timestamp(value: i64, units_per_sec: i64, utc: bool) -> String {
    let per_day = units_per_sec * 86_400;
    let days = value.div_euclid(per_day);
    let rem = value.rem_euclid(per_day);
    let secs = rem / units_per_sec;
    let frac = rem % units_per_sec;
    let mut out = String::with_capacity(32);
    push_date(&mut out, days);
    let _ = write!(out, " {:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    push_fraction(&mut out, frac, if units_per_sec == 1_000_000 { 6 } else { 9 });
    if utc {
        out.push_str("+00:00");
    }
    out
}

/// `HH:mm:ss[.ffffff]` from microseconds since midnight (wrapped into a day).
pub fn time(micros: i64) -> String {
    let rem = micros.rem_euclid(86_400_000_000);
    let secs = rem / 1_000_000;
    let mut out = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    push_fraction(&mut out, rem % 1_000_000, 6);
    out
}

/// Lower-case hyphenated UUID.
pub fn uuid(b: &[u8; 16]) -> String {
    let mut out = String::with_capacity(36);
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if c.len() > 2 { T[n as usize & 63] as char } else { '=' });
    }
    out
}

/// Appends `s` as a JSON string literal (escapes like Jackson: `\"`, `\\`,
/// `\b \f \n \r \t`, other control characters as `\u00XX`).
pub fn json_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut run = 0;
    for (i, &c) in bytes.iter().enumerate() {
        let esc: Option<&str> = match c {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[run..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                let _ = write!(out, "\\u{c:04X}");
            }
        }
        run = i + 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_like_java() {
        for (v, s) in [
            (-1e308, "-1.0E308"),
            (1.0, "1.0"),
            (100.0, "100.0"),
            (1.5, "1.5"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1e7, "1.0E7"),
            (9999999.0, "9999999.0"),
            (123456789.0, "1.23456789E8"),
            (-0.0, "-0.0"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(java_double(v), s);
        }
        assert_eq!(java_float(1.1f32), "1.1");
        assert_eq!(java_float(3e10f32), "3.0E10");
    }

    #[test]
    fn decimals_dates_times() {
        assert_eq!(decimal_plain(150, 2), "1.5");
        assert_eq!(decimal_plain(200, 2), "2");
        assert_eq!(decimal_plain(-5, 3), "-0.005");
        assert_eq!(decimal_plain(0, 5), "0");
        assert_eq!(decimal_with_scale(150, 2), "1.50");
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(19723), "2024-01-01");
        assert_eq!(date(-1), "1969-12-31");
        assert_eq!(date(i32::MAX), "+5881580-07-11");
        assert_eq!(days_from_civil(2024, 1, 1), 19723);
        assert_eq!(timestamp(1_500_000, 1_000_000, true), "1970-01-01 00:00:01.5+00:00");
        assert_eq!(timestamp(-1, 1_000_000, false), "1969-12-31 23:59:59.999999");
        assert_eq!(timestamp(1, 1_000_000_000, false), "1970-01-01 00:00:00.000000001");
        let _ = timestamp(i64::MIN, 1_000_000, true);
        let _ = timestamp(i64::MAX, 1_000_000_000, true);
        assert_eq!(time(3_723_000_001), "01:02:03.000001");
        assert_eq!(uuid(&[0xab; 16]), "abababab-abab-abab-abab-abababababab");
        assert_eq!(base64(b"\x01\x02"), "AQI=");
        assert_eq!(base64(b"abc"), "YWJj");
        let mut s = String::new();
        json_string(&mut s, "a\"\\\n\u{1}é");
        assert_eq!(s, "\"a\\\"\\\\\\n\\u0001é\"");
    }
}
