//! Casting a variant to a Spark type (`variant_get(v, path, 'type')`).
//!
//! Follows Spark's `VariantGet.cast`: a variant null gives SQL NULL; a value
//! of the requested type passes through; otherwise Spark's TRY cast applies and
//! a failure is an error (`variant_get`) or NULL (`try_variant_get`).
//!
//! | value            | `int`   | `double` | `decimal(5,2)` | `string`        | `boolean` |
//! |------------------|---------|----------|----------------|-----------------|-----------|
//! | `1`              | 1       | 1.0      | 1.00           | `1`             | true      |
//! | `1.5` (decimal)  | 1       | 1.5      | 1.50           | `1.5`           | true      |
//! | `"12"`           | 12      | 12.0     | 12.00          | `12`            | error     |
//! | `3000000000`     | error   | 3.0E9    | error          | `3000000000`    | true      |
//! | `{"a":1}`        | error   | error    | error          | `{"a":1}`       | error     |
//!
//! Timestamps are interpreted and printed in UTC.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder, Float64Builder,
    Int8Builder, Int16Builder, Int32Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow::datatypes::{DataType, TimeUnit};

use super::array::VariantArrayBuilder;
use super::arrow_type::variant_data_type;
use super::decode::{Variant, VariantValue};
use super::format;
use super::json::to_json;
use super::{Result, VariantError};

/// Target types of `variant_get`, named as in Spark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SparkType {
    Boolean,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    Float,
    Double,
    Decimal { precision: u8, scale: u8 },
    String,
    Date,
    Timestamp,
    TimestampNtz,
    Binary,
    Variant,
}

impl SparkType {
    /// Parses a Spark type name (case-insensitive): `int`, `integer`, `bigint`,
    /// `long`, `smallint`, `short`, `tinyint`, `byte`, `double`, `float`,
    /// `real`, `decimal`, `decimal(p)`, `decimal(p,s)` (also `dec`, `numeric`),
    /// `string`, `boolean`, `date`, `timestamp`, `timestamp_ltz`,
    /// `timestamp_ntz`, `binary`, `variant`.
    pub fn parse(name: &str) -> Result<Self> {
        let n = name.trim().to_ascii_lowercase();
        let unsupported = || VariantError::UnsupportedType(name.to_string());
        Ok(match n.as_str() {
            "boolean" | "bool" => Self::Boolean,
            "tinyint" | "byte" => Self::TinyInt,
            "smallint" | "short" => Self::SmallInt,
            "int" | "integer" => Self::Int,
            "bigint" | "long" => Self::BigInt,
            "float" | "real" => Self::Float,
            "double" => Self::Double,
            "string" => Self::String,
            "date" => Self::Date,
            "timestamp" | "timestamp_ltz" => Self::Timestamp,
            "timestamp_ntz" => Self::TimestampNtz,
            "binary" => Self::Binary,
            "variant" => Self::Variant,
            "decimal" | "dec" | "numeric" => Self::Decimal {
                precision: 10,
                scale: 0,
            },
            _ => {
                let args = ["decimal", "dec", "numeric"]
                    .iter()
                    .find_map(|p| n.strip_prefix(p))
                    .map(str::trim_start)
                    .and_then(|r| r.strip_prefix('('))
                    .and_then(|r| r.strip_suffix(')'))
                    .ok_or_else(unsupported)?;
                let mut parts = args.split(',').map(|p| p.trim().parse::<u8>());
                let precision = parts.next().and_then(|p| p.ok()).ok_or_else(unsupported)?;
                let scale = match parts.next() {
                    None => 0,
                    Some(s) => s.map_err(|_| unsupported())?,
                };
                if parts.next().is_some() || precision == 0 || precision > 38 || scale > precision {
                    return Err(unsupported());
                }
                Self::Decimal { precision, scale }
            }
        })
    }

    /// The Arrow type of results of this type.
    pub fn data_type(&self) -> DataType {
        match self {
            Self::Boolean => DataType::Boolean,
            Self::TinyInt => DataType::Int8,
            Self::SmallInt => DataType::Int16,
            Self::Int => DataType::Int32,
            Self::BigInt => DataType::Int64,
            Self::Float => DataType::Float32,
            Self::Double => DataType::Float64,
            Self::Decimal { precision, scale } => DataType::Decimal128(*precision, *scale as i8),
            Self::String => DataType::Utf8,
            Self::Date => DataType::Date32,
            Self::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Self::TimestampNtz => DataType::Timestamp(TimeUnit::Microsecond, None),
            Self::Binary => DataType::Binary,
            Self::Variant => variant_data_type(),
        }
    }

    /// Spark's SQL name: `INT`, `DECIMAL(10,2)`, …
    pub fn sql_name(&self) -> String {
        match self {
            Self::Boolean => "BOOLEAN".into(),
            Self::TinyInt => "TINYINT".into(),
            Self::SmallInt => "SMALLINT".into(),
            Self::Int => "INT".into(),
            Self::BigInt => "BIGINT".into(),
            Self::Float => "FLOAT".into(),
            Self::Double => "DOUBLE".into(),
            Self::Decimal { precision, scale } => format!("DECIMAL({precision},{scale})"),
            Self::String => "STRING".into(),
            Self::Date => "DATE".into(),
            Self::Timestamp => "TIMESTAMP".into(),
            Self::TimestampNtz => "TIMESTAMP_NTZ".into(),
            Self::Binary => "BINARY".into(),
            Self::Variant => "VARIANT".into(),
        }
    }
}

const MICROS_PER_SEC: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SEC;

fn pow10(n: u32) -> i128 {
    10i128.pow(n.min(38))
}

fn f64_to_int(d: f64, min: i64, max: i64) -> Option<i64> {
    if d.is_nan() {
        return None;
    }
    let t = d.trunc();
    (t >= min as f64 && t <= max as f64).then(|| (t as i64).clamp(min, max))
}

fn trim_spark(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

fn parse_int_str(s: &str) -> Option<i64> {
    let t = trim_spark(s);
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.strip_prefix('+').unwrap_or(t).parse().ok()
}

/// Integer in `min..=max` (Spark's TRY cast to an integral type).
pub fn to_integer(v: &VariantValue<'_>, min: i64, max: i64) -> Option<i64> {
    let x = match *v {
        VariantValue::Boolean(b) => b as i64,
        VariantValue::Int8(i) => i as i64,
        VariantValue::Int16(i) => i as i64,
        VariantValue::Int32(i) => i as i64,
        VariantValue::Int64(i) => i,
        VariantValue::Double(d) => return f64_to_int(d, min, max),
        VariantValue::Float(f) => return f64_to_int(f as f64, min, max),
        VariantValue::Decimal { unscaled, scale } => i64::try_from(unscaled / pow10(scale as u32)).ok()?,
        VariantValue::String(s) => parse_int_str(s)?,
        VariantValue::Timestamp(t) => t.div_euclid(MICROS_PER_SEC),
        VariantValue::TimestampNanos(t) => t.div_euclid(1_000_000_000),
        _ => return None,
    };
    (min..=max).contains(&x).then_some(x)
}

/// Double (Spark's TRY cast to DOUBLE).
pub fn to_double(v: &VariantValue<'_>) -> Option<f64> {
    Some(match *v {
        VariantValue::Boolean(b) => b as i64 as f64,
        VariantValue::Int8(i) => i as f64,
        VariantValue::Int16(i) => i as f64,
        VariantValue::Int32(i) => i as f64,
        VariantValue::Int64(i) => i as f64,
        VariantValue::Double(d) => d,
        VariantValue::Float(f) => f as f64,
        VariantValue::Decimal { unscaled, scale } => format::decimal_with_scale(unscaled, scale).parse().ok()?,
        VariantValue::String(s) => {
            let t = trim_spark(s);
            let t = t.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(t);
            t.parse().ok()?
        }
        VariantValue::Timestamp(t) => t as f64 / MICROS_PER_SEC as f64,
        VariantValue::TimestampNanos(t) => t as f64 / 1e9,
        _ => return None,
    })
}

/// Float (Spark's TRY cast to FLOAT).
pub fn to_float(v: &VariantValue<'_>) -> Option<f32> {
    match *v {
        VariantValue::Float(f) => Some(f),
        VariantValue::String(s) => {
            let t = trim_spark(s);
            t.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(t).parse().ok()
        }
        VariantValue::Decimal { unscaled, scale } => format::decimal_with_scale(unscaled, scale).parse().ok(),
        _ => to_double(v).map(|d| d as f32),
    }
}

/// Decimal text split as (negative, digits, power of ten of the last digit).
fn decimal_parts(v: &VariantValue<'_>) -> Option<(bool, String, i32)> {
    Some(match *v {
        VariantValue::Boolean(b) => (false, if b { "1" } else { "0" }.into(), 0),
        VariantValue::Int8(i) => int_parts(i as i64),
        VariantValue::Int16(i) => int_parts(i as i64),
        VariantValue::Int32(i) => int_parts(i as i64),
        VariantValue::Int64(i) => int_parts(i),
        VariantValue::Decimal { unscaled, scale } => {
            (unscaled < 0, unscaled.unsigned_abs().to_string(), -(scale as i32))
        }
        VariantValue::Double(d) => float_parts(&format!("{d:e}"), d.is_finite())?,
        VariantValue::Float(f) => float_parts(&format!("{f:e}"), f.is_finite())?,
        VariantValue::String(s) => parse_decimal_text(trim_spark(s))?,
        _ => return None,
    })
}

fn int_parts(i: i64) -> (bool, String, i32) {
    (i < 0, i.unsigned_abs().to_string(), 0)
}

fn float_parts(sci: &str, finite: bool) -> Option<(bool, String, i32)> {
    if !finite {
        return None;
    }
    let (neg, digits, exp) = format::split_exp(sci);
    let e = exp - (digits.len() as i32 - 1);
    Some((neg, digits, e))
}

/// `[+-]digits[.digits][e[+-]digits]`.
fn parse_decimal_text(s: &str) -> Option<(bool, String, i32)> {
    let (neg, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (mant, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i32>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((neg, format!("{int}{frac}"), exp.checked_sub(frac.len() as i32)?))
}

/// Rounds `digits × 10^exp10` half-up to `scale` places; `None` if it needs
/// more than `precision` digits.
fn rescale(neg: bool, digits: &str, exp10: i32, precision: u8, scale: u8) -> Option<i128> {
    let digits = digits.trim_start_matches('0');
    let shift = exp10.checked_add(scale as i32)?;
    let unscaled: u128 = if digits.is_empty() {
        0
    } else if shift >= 0 {
        if digits.len() + shift as usize > precision as usize {
            return None;
        }
        digits.parse::<u128>().ok()? * 10u128.pow(shift as u32)
    } else {
        let drop = shift.unsigned_abs() as usize;
        if drop > digits.len() {
            0
        } else {
            let kept = &digits[..digits.len() - drop];
            if kept.len() > precision as usize {
                return None;
            }
            let base = if kept.is_empty() { 0 } else { kept.parse::<u128>().ok()? };
            base + (digits.as_bytes()[digits.len() - drop] >= b'5') as u128
        }
    };
    if unscaled >= 10u128.pow(precision as u32) {
        return None;
    }
    let u = unscaled as i128;
    Some(if neg { -u } else { u })
}

/// Unscaled value of DECIMAL(precision, scale) (Spark's TRY cast, half-up rounding).
pub fn to_decimal(v: &VariantValue<'_>, precision: u8, scale: u8) -> Option<i128> {
    if precision > 38 || scale > precision {
        return None;
    }
    let (neg, digits, exp10) = decimal_parts(v)?;
    rescale(neg, &digits, exp10, precision, scale)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn num(s: &str, min_len: usize, max_len: usize) -> Option<i64> {
    (s.len() >= min_len && s.len() <= max_len && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `[+-]yyyy[-m[m][-d[d]]]` → days since the epoch.
fn parse_ymd(s: &str) -> Option<i64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let mut parts = s.split('-');
    let y = num(parts.next()?, 4, 7)?;
    let y = if neg { -y } else { y };
    let m = parts.next().map(|p| num(p, 1, 2)).unwrap_or(Some(1))? as u32;
    let d = parts.next().map(|p| num(p, 1, 2)).unwrap_or(Some(1))? as u32;
    if parts.next().is_some() || !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some(format::days_from_civil(y, m, d))
}

/// Spark's string → DATE: a date, optionally followed by ` ` or `T` and anything.
pub fn parse_date_str(s: &str) -> Option<i32> {
    let t = trim_spark(s);
    let date = t.split([' ', 'T']).next()?;
    i32::try_from(parse_ymd(date)?).ok()
}

/// Zone suffix → offset in seconds (`Z`, `UTC`, `GMT`, `+hh`, `+hh:mm`, `+hhmm`, `UTC+hh:mm`).
fn parse_zone(z: &str) -> Option<i64> {
    let z = z.trim();
    let z = ["UTC", "GMT", "UT"].iter().find_map(|p| z.strip_prefix(p)).unwrap_or(z);
    if z.is_empty() || z == "Z" {
        return Some(0);
    }
    let sign = match z.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let r = &z[1..];
    if !r.is_ascii() {
        return None;
    }
    let (h, m) = match r.split_once(':') {
        Some((h, m)) => (num(h, 1, 2)?, num(m, 2, 2)?),
        None if r.len() == 4 => (num(&r[..2], 2, 2)?, num(&r[2..], 2, 2)?),
        None => (num(r, 1, 2)?, 0),
    };
    if h > 18 || m > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60))
}

/// Spark's string → TIMESTAMP (UTC unless a zone offset is given): returns
/// microseconds since the epoch and whether a zone was present.
pub fn parse_timestamp_str(s: &str) -> Option<(i64, bool)> {
    let t = trim_spark(s);
    let split = t.find([' ', 'T']).unwrap_or(t.len());
    let days = parse_ymd(&t[..split])?;
    let rest = t.get(split + 1..).unwrap_or("");
    let mut micros = 0i64;
    let mut zone = None;
    if !rest.is_empty() {
        let tz_at = rest
            .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
            .unwrap_or(rest.len());
        let (time, z) = rest.split_at(tz_at);
        let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
        let mut parts = hms.split(':');
        let h = num(parts.next()?, 1, 2)?;
        let mi = num(parts.next()?, 1, 2)?;
        let sec = parts.next().map(|p| num(p, 1, 2)).unwrap_or(Some(0))?;
        if parts.next().is_some() || h > 23 || mi > 59 || sec > 59 || frac.len() > 9 {
            return None;
        }
        let mut f = if frac.is_empty() { 0 } else { num(frac, 1, 9)? };
        for _ in frac.len()..6 {
            f *= 10;
        }
        for _ in 6..frac.len() {
            f /= 10;
        }
        micros = (h * 3600 + mi * 60 + sec) * MICROS_PER_SEC + f;
        if !z.trim().is_empty() {
            zone = Some(parse_zone(z)?);
        }
    }
    let total = days.checked_mul(MICROS_PER_DAY)?.checked_add(micros)?;
    let total = total.checked_sub(zone.unwrap_or(0).checked_mul(MICROS_PER_SEC)?)?;
    Some((total, zone.is_some()))
}

/// Days since the epoch (Spark's TRY cast to DATE).
pub fn to_date(v: &VariantValue<'_>) -> Option<i32> {
    match *v {
        VariantValue::Date(d) => Some(d),
        VariantValue::Timestamp(t) | VariantValue::TimestampNtz(t) => i32::try_from(t.div_euclid(MICROS_PER_DAY)).ok(),
        VariantValue::TimestampNanos(t) | VariantValue::TimestampNtzNanos(t) => {
            i32::try_from(t.div_euclid(MICROS_PER_DAY * 1000)).ok()
        }
        VariantValue::String(s) => parse_date_str(s),
        _ => None,
    }
}

/// Microseconds since the epoch (Spark's TRY cast to TIMESTAMP, or
/// TIMESTAMP_NTZ when `ntz`, which does not accept numbers).
pub fn to_timestamp(v: &VariantValue<'_>, ntz: bool) -> Option<i64> {
    match *v {
        VariantValue::Timestamp(t) | VariantValue::TimestampNtz(t) => Some(t),
        VariantValue::TimestampNanos(t) | VariantValue::TimestampNtzNanos(t) => Some(t.div_euclid(1000)),
        VariantValue::Date(d) => (d as i64).checked_mul(MICROS_PER_DAY),
        VariantValue::String(s) => parse_timestamp_str(s).map(|(t, _)| t),
        _ if ntz => None,
        VariantValue::Int8(_) | VariantValue::Int16(_) | VariantValue::Int32(_) | VariantValue::Int64(_) => {
            to_integer(v, i64::MIN, i64::MAX)?.checked_mul(MICROS_PER_SEC)
        }
        VariantValue::Double(_) | VariantValue::Float(_) => {
            let us = to_double(v)? * MICROS_PER_SEC as f64;
            f64_to_int(us, i64::MIN, i64::MAX)
        }
        VariantValue::Decimal { .. } => {
            let us = to_decimal(v, 38, 6)?;
            i64::try_from(us).ok()
        }
        _ => None,
    }
}

/// Text of a value (Spark's cast to STRING; objects and arrays as JSON).
pub fn to_string(var: &Variant<'_>, v: &VariantValue<'_>) -> Result<String> {
    Ok(match *v {
        VariantValue::Null => "null".into(),
        VariantValue::Boolean(b) => b.to_string(),
        VariantValue::Int8(i) => i.to_string(),
        VariantValue::Int16(i) => i.to_string(),
        VariantValue::Int32(i) => i.to_string(),
        VariantValue::Int64(i) => i.to_string(),
        VariantValue::Double(d) => format::java_double(d),
        VariantValue::Float(f) => format::java_float(f),
        VariantValue::Decimal { unscaled, scale } => format::decimal_plain(unscaled, scale),
        VariantValue::Date(d) => format::date(d),
        VariantValue::Timestamp(t) | VariantValue::TimestampNtz(t) => format::timestamp(t, MICROS_PER_SEC, false),
        VariantValue::TimestampNanos(t) | VariantValue::TimestampNtzNanos(t) => {
            format::timestamp(t, 1_000_000_000, false)
        }
        VariantValue::TimeNtz(t) => format::time(t),
        VariantValue::Binary(b) => String::from_utf8_lossy(b).into_owned(),
        VariantValue::String(s) => s.to_string(),
        VariantValue::Uuid(u) => format::uuid(&u),
        VariantValue::Object(_) | VariantValue::Array(_) => to_json(var)?,
    })
}

/// Boolean (Spark's TRY cast to BOOLEAN).
pub fn to_boolean(v: &VariantValue<'_>) -> Option<bool> {
    match *v {
        VariantValue::Boolean(b) => Some(b),
        VariantValue::Int8(i) => Some(i != 0),
        VariantValue::Int16(i) => Some(i != 0),
        VariantValue::Int32(i) => Some(i != 0),
        VariantValue::Int64(i) => Some(i != 0),
        VariantValue::Double(d) => Some(d != 0.0),
        VariantValue::Float(f) => Some(f != 0.0),
        VariantValue::Decimal { unscaled, .. } => Some(unscaled != 0),
        VariantValue::String(s) => match trim_spark(s).to_ascii_lowercase().as_str() {
            "t" | "true" | "y" | "yes" | "1" => Some(true),
            "f" | "false" | "n" | "no" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Column builder of one target type: appends variants cast to it.
pub struct CastBuilder {
    target: SparkType,
    out: Out,
}

enum Out {
    Boolean(BooleanBuilder),
    Int8(Int8Builder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Decimal(Decimal128Builder),
    Utf8(StringBuilder),
    Date32(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder),
    Binary(BinaryBuilder),
    Variant(VariantArrayBuilder),
}

fn describe(v: &Variant<'_>) -> String {
    let mut s = to_json(v).unwrap_or_else(|e| format!("<{e}>"));
    if s.len() > 120 {
        let mut cut = 117;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

impl CastBuilder {
    /// A builder for `target` with room for `capacity` rows.
    pub fn new(target: SparkType, capacity: usize) -> Self {
        let out = match target {
            SparkType::Boolean => Out::Boolean(BooleanBuilder::with_capacity(capacity)),
            SparkType::TinyInt => Out::Int8(Int8Builder::with_capacity(capacity)),
            SparkType::SmallInt => Out::Int16(Int16Builder::with_capacity(capacity)),
            SparkType::Int => Out::Int32(Int32Builder::with_capacity(capacity)),
            SparkType::BigInt => Out::Int64(Int64Builder::with_capacity(capacity)),
            SparkType::Float => Out::Float32(Float32Builder::with_capacity(capacity)),
            SparkType::Double => Out::Float64(Float64Builder::with_capacity(capacity)),
            SparkType::Decimal { precision, scale } => Out::Decimal(
                Decimal128Builder::with_capacity(capacity).with_data_type(DataType::Decimal128(precision, scale as i8)),
            ),
            SparkType::String => Out::Utf8(StringBuilder::with_capacity(capacity, capacity * 8)),
            SparkType::Date => Out::Date32(Date32Builder::with_capacity(capacity)),
            SparkType::Timestamp => {
                Out::Timestamp(TimestampMicrosecondBuilder::with_capacity(capacity).with_timezone("UTC"))
            }
            SparkType::TimestampNtz => Out::Timestamp(TimestampMicrosecondBuilder::with_capacity(capacity)),
            SparkType::Binary => Out::Binary(BinaryBuilder::with_capacity(capacity, capacity * 8)),
            SparkType::Variant => Out::Variant(VariantArrayBuilder::with_capacity(capacity)),
        };
        Self { target, out }
    }

    /// Appends SQL NULL.
    pub fn append_null(&mut self) {
        match &mut self.out {
            Out::Boolean(b) => b.append_null(),
            Out::Int8(b) => b.append_null(),
            Out::Int16(b) => b.append_null(),
            Out::Int32(b) => b.append_null(),
            Out::Int64(b) => b.append_null(),
            Out::Float32(b) => b.append_null(),
            Out::Float64(b) => b.append_null(),
            Out::Decimal(b) => b.append_null(),
            Out::Utf8(b) => b.append_null(),
            Out::Date32(b) => b.append_null(),
            Out::Timestamp(b) => b.append_null(),
            Out::Binary(b) => b.append_null(),
            Out::Variant(b) => b.append_null(),
        }
    }

    /// Appends `v` cast to the target type. A failed cast or malformed value
    /// appends NULL when `try_mode`, else returns the error.
    #[inline]
    pub fn append(&mut self, v: Variant<'_>, try_mode: bool) -> Result<()> {
        match self.try_append(v) {
            Ok(true) => Ok(()),
            Ok(false) if try_mode => {
                self.append_null();
                Ok(())
            }
            Ok(false) => Err(VariantError::InvalidCast {
                value: describe(&v),
                target: self.target.sql_name(),
            }),
            Err(_) if try_mode => {
                self.append_null();
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Like [`CastBuilder::append`] for raw bytes whose metadata was already
    /// checked; integers and doubles into numeric targets skip the decoder.
    #[inline]
    pub fn append_bytes(&mut self, metadata: &[u8], value: &[u8], try_mode: bool) -> Result<()> {
        let header = value.first().copied().unwrap_or(0xFF);
        let int = match header {
            0x0c => value.get(1).map(|&b| b as i8 as i64),
            0x10 => value.get(1..3).map(|s| i16::from_le_bytes([s[0], s[1]]) as i64),
            0x14 => value
                .get(1..5)
                .map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]) as i64),
            0x18 => value
                .get(1..9)
                .map(|s| i64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])),
            _ => None,
        };
        if let Some(i) = int {
            let done = match &mut self.out {
                Out::Int64(b) => {
                    b.append_value(i);
                    true
                }
                Out::Int32(b) => i32::try_from(i).map(|x| b.append_value(x)).is_ok(),
                Out::Int16(b) => i16::try_from(i).map(|x| b.append_value(x)).is_ok(),
                Out::Int8(b) => i8::try_from(i).map(|x| b.append_value(x)).is_ok(),
                Out::Float64(b) => {
                    b.append_value(i as f64);
                    true
                }
                _ => false,
            };
            if done {
                return Ok(());
            }
        }
        match Variant::try_new(metadata, value) {
            Ok(v) => self.append(v, try_mode),
            Err(_) if try_mode => {
                self.append_null();
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Appends the cast value (or NULL for a variant null); `Ok(false)` when
    /// the cast fails (nothing appended).
    #[inline]
    fn try_append(&mut self, v: Variant<'_>) -> Result<bool> {
        if let Out::Variant(b) = &mut self.out {
            b.append_variant(v.metadata().bytes(), v.exact_value_bytes()?);
            return Ok(true);
        }
        let value = v.decode()?;
        if matches!(value, VariantValue::Null) {
            self.append_null();
            return Ok(true);
        }
        macro_rules! put {
            ($b:expr, $x:expr) => {
                match $x {
                    Some(x) => {
                        $b.append_value(x);
                        Ok(true)
                    }
                    None => Ok(false),
                }
            };
        }
        match &mut self.out {
            Out::Boolean(b) => put!(b, to_boolean(&value)),
            Out::Int8(b) => put!(b, to_integer(&value, i8::MIN as i64, i8::MAX as i64).map(|x| x as i8)),
            Out::Int16(b) => put!(
                b,
                to_integer(&value, i16::MIN as i64, i16::MAX as i64).map(|x| x as i16)
            ),
            Out::Int32(b) => put!(
                b,
                to_integer(&value, i32::MIN as i64, i32::MAX as i64).map(|x| x as i32)
            ),
            Out::Int64(b) => put!(b, to_integer(&value, i64::MIN, i64::MAX)),
            Out::Float32(b) => put!(b, to_float(&value)),
            Out::Float64(b) => put!(b, to_double(&value)),
            Out::Decimal(b) => match self.target {
                SparkType::Decimal { precision, scale } => put!(b, to_decimal(&value, precision, scale)),
                _ => Ok(false),
            },
            Out::Utf8(b) => {
                b.append_value(to_string(&v, &value)?);
                Ok(true)
            }
            Out::Date32(b) => put!(b, to_date(&value)),
            Out::Timestamp(b) => put!(b, to_timestamp(&value, self.target == SparkType::TimestampNtz)),
            Out::Binary(b) => match value {
                VariantValue::Binary(x) => put!(b, Some(x)),
                VariantValue::String(s) => put!(b, Some(s.as_bytes())),
                _ => Ok(false),
            },
            Out::Variant(_) => Ok(false),
        }
    }

    /// The finished column.
    pub fn finish(self) -> Result<ArrayRef> {
        Ok(match self.out {
            Out::Boolean(mut b) => Arc::new(b.finish()),
            Out::Int8(mut b) => Arc::new(b.finish()),
            Out::Int16(mut b) => Arc::new(b.finish()),
            Out::Int32(mut b) => Arc::new(b.finish()),
            Out::Int64(mut b) => Arc::new(b.finish()),
            Out::Float32(mut b) => Arc::new(b.finish()),
            Out::Float64(mut b) => Arc::new(b.finish()),
            Out::Decimal(mut b) => Arc::new(b.finish()),
            Out::Utf8(mut b) => Arc::new(b.finish()),
            Out::Date32(mut b) => Arc::new(b.finish()),
            Out::Timestamp(mut b) => Arc::new(b.finish()),
            Out::Binary(mut b) => Arc::new(b.finish()),
            Out::Variant(b) => Arc::new(b.finish()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::json::parse_json_to_vecs;
    use super::*;

    fn with<T>(json: &str, f: impl FnOnce(&Variant<'_>, &VariantValue<'_>) -> T) -> T {
        let (m, v) = parse_json_to_vecs(json).unwrap();
        let var = Variant::try_new(&m, &v).unwrap();
        let val = var.decode().unwrap();
        f(&var, &val)
    }

    #[test]
    fn parses_type_names() {
        assert_eq!(SparkType::parse("INT").unwrap(), SparkType::Int);
        assert_eq!(
            SparkType::parse(" Decimal( 5 , 2 ) ").unwrap(),
            SparkType::Decimal { precision: 5, scale: 2 }
        );
        assert_eq!(
            SparkType::parse("decimal(7)").unwrap(),
            SparkType::Decimal { precision: 7, scale: 0 }
        );
        assert_eq!(
            SparkType::parse("decimal").unwrap(),
            SparkType::Decimal {
                precision: 10,
                scale: 0
            }
        );
        assert_eq!(SparkType::parse("timestamp_ntz").unwrap(), SparkType::TimestampNtz);
        for bad in [
            "decimal(2,3)",
            "decimal(39,0)",
            "decimal(0)",
            "decimal(1,2,3)",
            "struct<a:int>",
            "",
            "decimalx",
        ] {
            assert!(SparkType::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numeric_casts() {
        assert_eq!(
            with("1.9", |_, v| to_integer(v, i32::MIN as i64, i32::MAX as i64)),
            Some(1)
        );
        assert_eq!(
            with("-1.9", |_, v| to_integer(v, i32::MIN as i64, i32::MAX as i64)),
            Some(-1)
        );
        assert_eq!(
            with("3000000000", |_, v| to_integer(v, i32::MIN as i64, i32::MAX as i64)),
            None
        );
        assert_eq!(
            with("\" 12 \"", |_, v| to_integer(v, i8::MIN as i64, i8::MAX as i64)),
            Some(12)
        );
        assert_eq!(with("\"1.5\"", |_, v| to_integer(v, i64::MIN, i64::MAX)), None);
        assert_eq!(with("1e300", |_, v| to_integer(v, i64::MIN, i64::MAX)), None);
        assert_eq!(with("true", |_, v| to_integer(v, i64::MIN, i64::MAX)), Some(1));
        assert_eq!(with("1.25", |_, v| to_double(v)), Some(1.25));
        assert_eq!(with("\"NaN\"", |_, v| to_double(v).map(|d| d.is_nan())), Some(true));
        assert_eq!(with("1.005", |_, v| to_decimal(v, 5, 2)), Some(101));
        assert_eq!(with("-1.005", |_, v| to_decimal(v, 5, 2)), Some(-101));
        assert_eq!(with("123.4", |_, v| to_decimal(v, 3, 1)), None);
        assert_eq!(with("99.96", |_, v| to_decimal(v, 3, 1)), None);
        assert_eq!(with("1e2", |_, v| to_decimal(v, 5, 2)), Some(10000));
        assert_eq!(with("\"1.5e1\"", |_, v| to_decimal(v, 5, 0)), Some(15));
        assert_eq!(with("0.0001", |_, v| to_decimal(v, 5, 2)), Some(0));
        assert_eq!(with("7", |_, v| to_decimal(v, 38, 37)), Some(7 * 10i128.pow(37)));
        assert_eq!(with("7", |_, v| to_decimal(v, 38, 38)), None);
        assert_eq!(with("\"yes\"", |_, v| to_boolean(v)), Some(true));
        assert_eq!(with("\"maybe\"", |_, v| to_boolean(v)), None);
    }

    #[test]
    fn text_and_time_casts() {
        assert_eq!(
            with(r#"{"b":1,"a":[1.50]}"#, |var, v| to_string(var, v).unwrap()),
            r#"{"a":[1.5],"b":1}"#
        );
        assert_eq!(with("1e20", |var, v| to_string(var, v).unwrap()), "1.0E20");
        assert_eq!(with("\"2024-02-29\"", |_, v| to_date(v)), Some(19782));
        assert_eq!(with("\"2023-02-29\"", |_, v| to_date(v)), None);
        assert_eq!(with("\"2024-01-01T10:00:00\"", |_, v| to_date(v)), Some(19723));
        assert_eq!(
            with("\"1970-01-01 00:00:01.5\"", |_, v| to_timestamp(v, false)),
            Some(1_500_000)
        );
        assert_eq!(
            with("\"1970-01-01T01:00:00+01:00\"", |_, v| to_timestamp(v, false)),
            Some(0)
        );
        assert_eq!(
            with("\"1970-01-01 00:00:00 UTC\"", |_, v| to_timestamp(v, false)),
            Some(0)
        );
        assert_eq!(with("\"1970-01-01 25:00:00\"", |_, v| to_timestamp(v, false)), None);
        assert_eq!(with("2", |_, v| to_timestamp(v, false)), Some(2_000_000));
        assert_eq!(with("2", |_, v| to_timestamp(v, true)), None);
        assert_eq!(with("2", |_, v| to_date(v)), None);
    }
}
