//! `year`, `month`, `day`, `hour`: whole units since 1970-01-01T00:00 UTC.
//!
//! Every count is floored, so instants before the epoch get negative ordinals
//! and each ordinal covers exactly one calendar unit (1969-12-31T23:59:59.999999
//! is year -1, month -1, day -1 and hour -1). Flooring is what makes these
//! transforms order preserving, which predicate projection relies on.
//!
//! Timestamps are floored straight from their native unit (no detour through
//! microseconds), and years/months come from a proleptic Gregorian civil-date
//! conversion on `i64` days, so the whole `i64` range of every unit is handled;
//! results that do not fit the 32-bit partition value are errors.
//!
//! The human-readable forms (`2024`, `2024-01`, `2024-01-15`, `2024-01-15-10`)
//! are Iceberg's directory-name formats, with the year zero-padded to four
//! digits (`%04d`).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Date32Array, Int64Array, PrimitiveArray};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, Int32Type, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use datafusion::common::ScalarValue;

use super::{Transform, TransformError, downcast};

pub(super) const SUPPORTED: &str = "Date32 or Timestamp (any unit and time zone)";
pub(super) const SUPPORTED_HOUR: &str = "Timestamp (any unit and time zone); dates have no hour to extract";

pub(super) fn result_type(t: Transform, dt: &DataType) -> Option<DataType> {
    match (t, dt) {
        (Transform::Day, DataType::Date32 | DataType::Timestamp(_, _)) => Some(DataType::Date32),
        (Transform::Year | Transform::Month, DataType::Date32 | DataType::Timestamp(_, _)) => Some(DataType::Int32),
        (Transform::Hour, DataType::Timestamp(_, _)) => Some(DataType::Int32),
        _ => None,
    }
}

/// Proleptic Gregorian (year, month 1-12, day 1-31) of a day count since
/// 1970-01-01 (H. Hinnant's `civil_from_days`). Exact for |days| < 2^62.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // shift the epoch to 0000-03-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of 400-year era, [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365], March-based
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Inverse of [`civil_from_days`] for a valid date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn years_from_days(days: i64) -> i64 {
    civil_from_days(days).0 - 1970
}

fn months_from_days(days: i64) -> i64 {
    let (y, m, _) = civil_from_days(days);
    (y - 1970) * 12 + i64::from(m) - 1
}

pub(super) fn apply(t: Transform, input: &ArrayRef) -> Result<ArrayRef, TransformError> {
    let arr = input.as_ref();
    match (t, input.data_type()) {
        (Transform::Day, DataType::Date32) => Ok(Arc::clone(input)),
        // |years| < 6M and |months| < 71M for any i32 day count: no overflow.
        (Transform::Year, DataType::Date32) => {
            let a = downcast::<Date32Array>(t, arr)?;
            Ok(Arc::new(
                a.unary::<_, Int32Type>(|d| years_from_days(i64::from(d)) as i32),
            ))
        }
        (Transform::Month, DataType::Date32) => {
            let a = downcast::<Date32Array>(t, arr)?;
            Ok(Arc::new(
                a.unary::<_, Int32Type>(|d| months_from_days(i64::from(d)) as i32),
            ))
        }
        (_, DataType::Timestamp(unit, _)) => {
            let values = match unit {
                TimeUnit::Second => as_i64::<TimestampSecondType>(t, arr)?,
                TimeUnit::Millisecond => as_i64::<TimestampMillisecondType>(t, arr)?,
                TimeUnit::Microsecond => as_i64::<TimestampMicrosecondType>(t, arr)?,
                TimeUnit::Nanosecond => as_i64::<TimestampNanosecondType>(t, arr)?,
            };
            timestamps(t, arr.data_type(), &values, *unit)
        }
        (_, other) => Err(TransformError::UnsupportedType {
            transform: t,
            data_type: other.clone(),
            expected: if t == Transform::Hour {
                SUPPORTED_HOUR
            } else {
                SUPPORTED
            },
        }),
    }
}

/// Zero-copy view of any timestamp array as its raw i64 values.
fn as_i64<T: ArrowPrimitiveType<Native = i64>>(t: Transform, arr: &dyn Array) -> Result<Int64Array, TransformError> {
    let a = downcast::<PrimitiveArray<T>>(t, arr)?;
    Ok(Int64Array::new(a.values().clone(), a.nulls().cloned()))
}

fn timestamps(
    t: Transform,
    data_type: &DataType,
    values: &Int64Array,
    unit: TimeUnit,
) -> Result<ArrayRef, TransformError> {
    let per_second: i64 = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let per_hour = per_second * 3_600;
    let per_day = per_hour * 24;
    let to_i32 = |v: i64, ordinal: i64| {
        i32::try_from(ordinal).map_err(|_| TransformError::OutOfRange {
            transform: t,
            data_type: data_type.clone(),
            value: v.to_string(),
            reason: format!("the result {ordinal} does not fit a 32-bit partition value"),
        })
    };
    Ok(match t {
        Transform::Hour => Arc::new(values.try_unary::<_, Int32Type, _>(|v| to_i32(v, v.div_euclid(per_hour)))?),
        Transform::Day => Arc::new(values.try_unary::<_, Date32Type, _>(|v| to_i32(v, v.div_euclid(per_day)))?),
        Transform::Year => {
            Arc::new(values.try_unary::<_, Int32Type, _>(|v| to_i32(v, years_from_days(v.div_euclid(per_day))))?)
        }
        Transform::Month => {
            Arc::new(values.try_unary::<_, Int32Type, _>(|v| to_i32(v, months_from_days(v.div_euclid(per_day))))?)
        }
        _ => {
            return Err(TransformError::UnsupportedType {
                transform: t,
                data_type: data_type.clone(),
                expected: SUPPORTED,
            });
        }
    })
}

/// Human-readable partition value for an ordinal of a time transform.
pub(super) fn to_human(t: Transform, ordinal: i32) -> Option<String> {
    let ordinal = i64::from(ordinal);
    let date = |days: i64| {
        let (y, m, d) = civil_from_days(days);
        format!("{y:04}-{m:02}-{d:02}")
    };
    match t {
        Transform::Year => Some(format!("{:04}", 1970 + ordinal)),
        Transform::Month => Some(format!(
            "{:04}-{:02}",
            1970 + ordinal.div_euclid(12),
            ordinal.rem_euclid(12) + 1
        )),
        Transform::Day => Some(date(ordinal)),
        Transform::Hour => Some(format!(
            "{}-{:02}",
            date(ordinal.div_euclid(24)),
            ordinal.rem_euclid(24)
        )),
        _ => None,
    }
}

fn is_leap(y: i64) -> bool {
    y.rem_euclid(4) == 0 && (y.rem_euclid(100) != 0 || y.rem_euclid(400) == 0)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parse exactly two ASCII digits within `range`.
fn two_digits(s: &str, range: std::ops::RangeInclusive<u32>) -> Option<u32> {
    if s.len() != 2 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|v| range.contains(v))
}

/// Inverse of [`to_human`]: `Int32` ordinal for year/month/hour, `Date32` for day.
pub(super) fn parse_human(t: Transform, s: &str) -> Result<ScalarValue, TransformError> {
    let (parts, expected): (usize, &'static str) = match t {
        Transform::Year => (1, "a year such as 2024 (optionally signed)"),
        Transform::Month => (2, "YYYY-MM such as 2024-01"),
        Transform::Day => (3, "YYYY-MM-DD such as 2024-01-15, a valid calendar date"),
        Transform::Hour => (4, "YYYY-MM-DD-HH such as 2024-01-15-10, with HH in 00..=23"),
        _ => return Err(TransformError::NoHumanString { transform: t }),
    };
    let invalid = || TransformError::InvalidHumanString {
        transform: t,
        input: s.to_string(),
        expected,
    };
    let (negative, rest) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let fields: Vec<&str> = rest.split('-').collect();
    if fields.len() != parts {
        return Err(invalid());
    }
    let year_digits = fields[0];
    // Ten digits cover every year reachable from an i32 ordinal.
    if year_digits.is_empty() || year_digits.len() > 10 || !year_digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    let year: i64 = year_digits.parse().map_err(|_| invalid())?;
    let year = if negative { -year } else { year };
    let month = match fields.get(1) {
        Some(f) => two_digits(f, 1..=12).ok_or_else(invalid)?,
        None => 1,
    };
    let day = match fields.get(2) {
        Some(f) => two_digits(f, 1..=days_in_month(year, month)).ok_or_else(invalid)?,
        None => 1,
    };
    let hour = match fields.get(3) {
        Some(f) => two_digits(f, 0..=23).ok_or_else(invalid)?,
        None => 0,
    };
    let ordinal = match t {
        Transform::Year => year - 1970,
        Transform::Month => (year - 1970) * 12 + i64::from(month) - 1,
        Transform::Day => days_from_civil(year, month, day),
        _ => days_from_civil(year, month, day) * 24 + i64::from(hour),
    };
    let ordinal = i32::try_from(ordinal).map_err(|_| invalid())?;
    Ok(match t {
        Transform::Day => ScalarValue::Date32(Some(ordinal)),
        _ => ScalarValue::Int32(Some(ordinal)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Datelike, NaiveDate, Timelike};
    use datafusion::arrow::array::{
        Int32Array, TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
        TimestampSecondArray,
    };

    const TIME: [Transform; 4] = [Transform::Year, Transform::Month, Transform::Day, Transform::Hour];

    /// (year, month, day, hour) ordinals of one value, via the array kernels.
    fn ordinals(arr: ArrayRef) -> Vec<Option<i32>> {
        TIME.iter()
            .map(|t| {
                let out = t.apply(&arr).unwrap();
                assert_eq!(out.len(), 1);
                match t {
                    Transform::Day => {
                        let a = out.as_any().downcast_ref::<Date32Array>().unwrap();
                        a.is_valid(0).then(|| a.value(0))
                    }
                    _ => {
                        let a = out.as_any().downcast_ref::<Int32Array>().unwrap();
                        a.is_valid(0).then(|| a.value(0))
                    }
                }
            })
            .collect()
    }

    /// The same instant in every unit that can represent it exactly.
    fn all_units(micros: i64) -> Vec<ArrayRef> {
        let mut v: Vec<ArrayRef> = vec![Arc::new(TimestampMicrosecondArray::from(vec![micros]))];
        if let Some(nanos) = micros.checked_mul(1_000) {
            v.push(Arc::new(
                TimestampNanosecondArray::from(vec![nanos]).with_timezone("UTC"),
            ));
        }
        if micros % 1_000 == 0 {
            v.push(Arc::new(
                TimestampMillisecondArray::from(vec![micros / 1_000]).with_timezone("+05:30"),
            ));
        }
        if micros % 1_000_000 == 0 {
            v.push(Arc::new(TimestampSecondArray::from(vec![micros / 1_000_000])));
        }
        v
    }

    fn micros_of(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> i64 {
        NaiveDate::from_ymd_opt(y, mo, d)
            .unwrap()
            .and_hms_micro_opt(h, mi, s, us)
            .unwrap()
            .and_utc()
            .timestamp_micros()
    }

    #[test]
    fn examples() {
        // 2024-01-15T10:30:00: year 54, month 648, day 19737, hour 473698
        let us = micros_of(2024, 1, 15, 10, 30, 0, 0);
        for arr in all_units(us) {
            assert_eq!(ordinals(arr), vec![Some(54), Some(648), Some(19737), Some(473698)]);
        }
        let date: ArrayRef = Arc::new(Date32Array::from(vec![19737]));
        let y = Transform::Year.apply(&date).unwrap();
        let m = Transform::Month.apply(&date).unwrap();
        let d = Transform::Day.apply(&date).unwrap();
        assert_eq!(&y, &(Arc::new(Int32Array::from(vec![54])) as ArrayRef));
        assert_eq!(&m, &(Arc::new(Int32Array::from(vec![648])) as ArrayRef));
        assert_eq!(&d, &date);
    }

    #[test]
    fn pre_epoch_values_floor() {
        // One tick before the epoch in every unit is in year, month, day and hour -1.
        let ticks: Vec<ArrayRef> = vec![
            Arc::new(TimestampSecondArray::from(vec![-1])),
            Arc::new(TimestampMillisecondArray::from(vec![-1])),
            Arc::new(TimestampMicrosecondArray::from(vec![-1])),
            Arc::new(TimestampNanosecondArray::from(vec![-1])),
        ];
        for arr in ticks {
            assert_eq!(ordinals(arr), vec![Some(-1), Some(-1), Some(-1), Some(-1)]);
        }
        let cases = [
            // (timestamp, year, month, day, hour)
            (micros_of(1969, 12, 31, 0, 0, 0, 0), -1, -1, -1, -24),
            (micros_of(1969, 12, 31, 23, 0, 0, 999_999), -1, -1, -1, -1),
            (micros_of(1969, 12, 1, 0, 0, 0, 0), -1, -1, -31, -744),
            (micros_of(1969, 11, 30, 23, 59, 59, 999_999), -1, -2, -32, -745),
            (micros_of(1969, 1, 1, 0, 0, 0, 0), -1, -12, -365, -8760),
            (micros_of(1968, 12, 31, 23, 59, 59, 0), -2, -13, -366, -8761),
            (micros_of(1900, 3, 1, 12, 0, 0, 0), -70, -838, -25508, -612180),
            (micros_of(1, 1, 1, 0, 0, 0, 0), -1969, -23628, -719162, -17259888),
        ];
        for (us, y, m, d, h) in cases {
            for arr in all_units(us) {
                assert_eq!(ordinals(arr), vec![Some(y), Some(m), Some(d), Some(h)], "micros {us}");
            }
        }
        let date: ArrayRef = Arc::new(Date32Array::from(vec![-1, -365, -366]));
        assert_eq!(
            &Transform::Year.apply(&date).unwrap(),
            &(Arc::new(Int32Array::from(vec![-1, -1, -2])) as ArrayRef)
        );
        assert_eq!(
            &Transform::Month.apply(&date).unwrap(),
            &(Arc::new(Int32Array::from(vec![-1, -12, -13])) as ArrayRef)
        );
    }

    #[test]
    fn matches_chrono_over_a_wide_range() {
        // Deterministic LCG sweeps: ±200,000 years, ±100 years and ±3 days
        // around the epoch, in microseconds.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let spans: [i64; 3] = [6_300_000_000_000_000_000, 3_156_000_000_000_000, 259_200_000_000];
        for span in spans.iter().flat_map(|s| std::iter::repeat_n(*s, 2_000)) {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let us = (x >> 1) as i64 % span;
            let us = if x >> 63 == 0 { us } else { -us };
            let dt = DateTime::from_timestamp_micros(us).unwrap().naive_utc();
            let y = i64::from(dt.year()) - 1970;
            let m = y * 12 + i64::from(dt.month0());
            let d = dt
                .date()
                .signed_duration_since(NaiveDate::from_ymd_opt(1970, 1, 1).unwrap())
                .num_days();
            let h = d * 24 + i64::from(dt.hour());
            let expect: Vec<Option<i32>> = [y, m, d, h].iter().map(|v| i32::try_from(*v).ok()).collect();
            let arr: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![us]));
            for (t, e) in TIME.iter().zip(&expect) {
                match (e, t.apply(&arr)) {
                    (Some(_), Ok(_)) | (None, Err(_)) => {}
                    (e, r) => panic!("{t} of {us}: expected {e:?}, got {r:?}"),
                }
            }
            if expect.iter().all(Option::is_some) {
                assert_eq!(ordinals(arr), expect, "micros {us}");
            }
            // Date path agrees with the timestamp path for the same day.
            if let Ok(days) = i32::try_from(d) {
                let date: ArrayRef = Arc::new(Date32Array::from(vec![days]));
                assert_eq!(ordinals_date(date), expect[..3].to_vec());
            }
        }
    }

    fn ordinals_date(arr: ArrayRef) -> Vec<Option<i32>> {
        TIME[..3]
            .iter()
            .map(|t| {
                let out = t.apply(&arr).unwrap();
                let v = datafusion::arrow::compute::cast(&out, &DataType::Int32).unwrap();
                let a = v.as_any().downcast_ref::<Int32Array>().unwrap();
                a.is_valid(0).then(|| a.value(0))
            })
            .collect()
    }

    #[test]
    fn civil_round_trip() {
        for days in (-3_000_000i64..3_000_000).step_by(997).chain([
            i64::from(i32::MIN),
            i64::from(i32::MAX),
            -719_468,
            0,
            -1,
            1 << 46,
            -(1 << 46),
        ]) {
            let (y, m, d) = civil_from_days(days);
            assert!((1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m));
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn extreme_values_error_instead_of_panicking() {
        let arr: ArrayRef = Arc::new(TimestampSecondArray::from(vec![i64::MAX]));
        for t in TIME {
            let err = t.apply(&arr).unwrap_err();
            assert!(matches!(err, TransformError::OutOfRange { .. }), "{err}");
            assert!(err.to_string().contains(&t.to_string()), "{err}");
        }
        let arr: ArrayRef = Arc::new(TimestampSecondArray::from(vec![i64::MIN]));
        for t in TIME {
            assert!(t.apply(&arr).is_err());
        }
        // Microsecond/nanosecond extremes: year, month and day fit, hour does not
        // for microseconds.
        let arr: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![i64::MIN, i64::MAX]));
        assert!(Transform::Year.apply(&arr).is_ok());
        assert!(Transform::Month.apply(&arr).is_ok());
        assert!(Transform::Day.apply(&arr).is_ok());
        assert!(Transform::Hour.apply(&arr).is_err());
        let arr: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![i64::MIN, i64::MAX]));
        for t in TIME {
            assert!(t.apply(&arr).is_ok(), "{t}");
        }
        let arr: ArrayRef = Arc::new(Date32Array::from(vec![i32::MIN, i32::MAX]));
        for t in &TIME[..3] {
            assert!(t.apply(&arr).is_ok(), "{t}");
        }
    }

    #[test]
    fn nulls_stay_null() {
        let arr: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![None, Some(0)]));
        for t in TIME {
            let out = t.apply(&arr).unwrap();
            assert!(out.is_null(0) && out.is_valid(1), "{t}");
        }
    }

    #[test]
    fn human_strings() {
        let cases = [
            (Transform::Year, ScalarValue::Int32(Some(54)), "2024"),
            (Transform::Month, ScalarValue::Int32(Some(648)), "2024-01"),
            (Transform::Day, ScalarValue::Date32(Some(19737)), "2024-01-15"),
            (Transform::Hour, ScalarValue::Int32(Some(473698)), "2024-01-15-10"),
            (Transform::Year, ScalarValue::Int32(Some(0)), "1970"),
            (Transform::Month, ScalarValue::Int32(Some(0)), "1970-01"),
            (Transform::Day, ScalarValue::Date32(Some(0)), "1970-01-01"),
            (Transform::Hour, ScalarValue::Int32(Some(0)), "1970-01-01-00"),
            (Transform::Year, ScalarValue::Int32(Some(-1)), "1969"),
            (Transform::Month, ScalarValue::Int32(Some(-1)), "1969-12"),
            (Transform::Month, ScalarValue::Int32(Some(-13)), "1968-12"),
            (Transform::Day, ScalarValue::Date32(Some(-1)), "1969-12-31"),
            (Transform::Hour, ScalarValue::Int32(Some(-1)), "1969-12-31-23"),
            (Transform::Year, ScalarValue::Int32(Some(-1970)), "0000"),
            (Transform::Year, ScalarValue::Int32(Some(-1975)), "-005"),
            (Transform::Year, ScalarValue::Int32(Some(8030)), "10000"),
            (Transform::Day, ScalarValue::Date32(Some(-719162)), "0001-01-01"),
            (Transform::Day, ScalarValue::Date32(Some(11016)), "2000-02-29"),
        ];
        for (t, v, s) in cases {
            assert_eq!(t.to_human_string(&v).as_deref(), Some(s), "{t} {v:?}");
            assert_eq!(t.parse_human_string(s).unwrap(), v, "{t} {s}");
        }
        // day also accepts a plain int ordinal
        assert_eq!(
            Transform::Day.to_human_string(&ScalarValue::Int32(Some(-1))).as_deref(),
            Some("1969-12-31")
        );
    }

    #[test]
    fn human_string_round_trip() {
        let mut ordinals: Vec<i32> = (-100_000..100_000).step_by(7).collect();
        ordinals.extend([i32::MIN, i32::MIN + 1, i32::MAX, i32::MAX - 1, -1, 0, 1]);
        for t in TIME {
            for &o in &ordinals {
                let v = match t {
                    Transform::Day => ScalarValue::Date32(Some(o)),
                    _ => ScalarValue::Int32(Some(o)),
                };
                let s = t.to_human_string(&v).unwrap();
                assert_eq!(t.parse_human_string(&s).unwrap(), v, "{t} {s}");
            }
        }
    }

    #[test]
    fn human_strings_sort_like_ordinals_after_1970() {
        // Zero padding keeps directory names in partition order for 4-digit years.
        for t in TIME {
            let names: Vec<String> = (0..8_000)
                .step_by(7)
                .map(|o| {
                    let v = match t {
                        Transform::Day => ScalarValue::Date32(Some(o)),
                        _ => ScalarValue::Int32(Some(o)),
                    };
                    t.to_human_string(&v).unwrap()
                })
                .collect();
            assert!(names.windows(2).all(|w| w[0] < w[1]), "{t}");
        }
    }

    #[test]
    fn invalid_human_strings() {
        let cases = [
            (Transform::Year, ""),
            (Transform::Year, "abc"),
            (Transform::Year, "2024-01"),
            (Transform::Year, "--2024"),
            (Transform::Year, "9999999999"),
            (Transform::Year, "3000000000"),
            (Transform::Month, "2024"),
            (Transform::Month, "2024-13"),
            (Transform::Month, "2024-00"),
            (Transform::Month, "2024-1"),
            (Transform::Day, "2024-02-30"),
            (Transform::Day, "2023-02-29"),
            (Transform::Day, "1900-02-29"),
            (Transform::Day, "2024-01-15-10"),
            (Transform::Day, "2024/01/15"),
            (Transform::Day, "20240115"),
            (Transform::Hour, "2024-01-15-24"),
            (Transform::Hour, "2024-01-15"),
            (Transform::Hour, "2024-01-15-1"),
            (Transform::Hour, "-999999999-01-01-00"),
        ];
        for (t, s) in cases {
            let err = t.parse_human_string(s).unwrap_err();
            assert!(
                matches!(err, TransformError::InvalidHumanString { .. }),
                "{t} {s:?}: {err}"
            );
            let msg = err.to_string();
            assert!(msg.contains(&t.to_string()) && msg.contains("expected"), "{msg}");
        }
        assert_eq!(
            Transform::Day.parse_human_string("2000-02-29").unwrap(),
            ScalarValue::Date32(Some(11016))
        );
        assert_eq!(
            Transform::Year.parse_human_string("+2024").unwrap(),
            ScalarValue::Int32(Some(54))
        );
    }
}
