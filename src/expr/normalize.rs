//! Function-wrapped predicates rewritten as ranges on the source column.
//!
//! Users rarely write `ts >= … AND ts < …`; they write what they mean. Each
//! rewrite below is an *equivalence* for every value (NULL included), so it
//! stays sound under NOT:
//!
//! | predicate                                   | rewritten to                                          |
//! |---------------------------------------------|-------------------------------------------------------|
//! | `CAST(ts AS DATE) = DATE '2024-03-01'`      | `ts >= 2024-03-01 00:00 AND ts < 2024-03-02 00:00`    |
//! | `to_date(ts) < DATE '2024-03-01'`           | `ts < 2024-03-01 00:00`                               |
//! | `date_trunc('month', ts) = TIMESTAMP '2024-03-01'` | `ts >= 2024-03-01 AND ts < 2024-04-01`         |
//! | `date_trunc('day', ts) >= TIMESTAMP '2024-03-01 12:00'` | `ts >= 2024-03-02 00:00` (first day ≥ it)  |
//! | `date_trunc('hour', ts) = TIMESTAMP '… 12:30'` | `false` (never on an hour boundary)                |
//! | `EXTRACT(YEAR FROM ts) = 2024` / `date_part('year', ts)` | `ts >= 2024-01-01 AND ts < 2025-01-01`   |
//! | `date_trunc('month', d) = TIMESTAMP '2024-03-01'` (`d DATE`) | `d >= 2024-03-01 AND d < 2024-04-01` |
//! | `CAST(b AS INT) = 5` (`b BIGINT`)           | `b = 5 OR (b outside INT AND unknown)`                |
//! | `TRY_CAST(b AS INT) = 5`                    | `b = 5 AND b within INT`                              |
//!
//! A narrowing integer cast keeps every value of the narrow type; outside
//! it `CAST` raises an error (and `TRY_CAST` gives NULL). A file that may
//! hold such a value is never pruned by a `CAST`: the query without
//! pruning would fail there, and so must this one. The `TRY_CAST` rewrite
//! is the one that is not an equivalence: it says false where SQL says
//! NULL, so under NOT it keeps those files (more than needed, never fewer).
//!
//! Timestamp columns without a time zone or in UTC are handled (a `DATE`
//! column too, for `EXTRACT(YEAR …)`); anything else stays unknown.

use chrono::{Datelike, NaiveDate, NaiveDateTime, TimeDelta};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Expr;

use super::predicate::{BinaryOp, Predicate};

/// The source column a normalized predicate applies to.
pub struct Column {
    pub field: i32,
    pub data_type: DataType,
}

/// Calendar units of `date_trunc` / `date_part` we understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

impl Unit {
    pub(crate) fn parse(s: &str) -> Option<Unit> {
        Some(match s.to_ascii_lowercase().as_str() {
            "year" | "years" => Unit::Year,
            "month" | "months" => Unit::Month,
            "day" | "days" => Unit::Day,
            "hour" | "hours" => Unit::Hour,
            "minute" | "minutes" => Unit::Minute,
            "second" | "seconds" => Unit::Second,
            _ => return None,
        })
    }

    fn floor(self, t: NaiveDateTime) -> Option<NaiveDateTime> {
        let d = t.date();
        Some(match self {
            Unit::Year => NaiveDate::from_ymd_opt(d.year(), 1, 1)?.and_hms_opt(0, 0, 0)?,
            Unit::Month => NaiveDate::from_ymd_opt(d.year(), d.month(), 1)?.and_hms_opt(0, 0, 0)?,
            Unit::Day => d.and_hms_opt(0, 0, 0)?,
            Unit::Hour => d.and_hms_opt(chrono::Timelike::hour(&t), 0, 0)?,
            Unit::Minute => d.and_hms_opt(chrono::Timelike::hour(&t), chrono::Timelike::minute(&t), 0)?,
            Unit::Second => d.and_hms_opt(
                chrono::Timelike::hour(&t),
                chrono::Timelike::minute(&t),
                chrono::Timelike::second(&t),
            )?,
        })
    }

    fn next(self, floor: NaiveDateTime) -> Option<NaiveDateTime> {
        let d = floor.date();
        Some(match self {
            Unit::Year => NaiveDate::from_ymd_opt(d.year().checked_add(1)?, 1, 1)?.and_hms_opt(0, 0, 0)?,
            Unit::Month => {
                let (y, m) = if d.month() == 12 {
                    (d.year().checked_add(1)?, 1)
                } else {
                    (d.year(), d.month() + 1)
                };
                NaiveDate::from_ymd_opt(y, m, 1)?.and_hms_opt(0, 0, 0)?
            }
            Unit::Day => floor.checked_add_signed(TimeDelta::days(1))?,
            Unit::Hour => floor.checked_add_signed(TimeDelta::hours(1))?,
            Unit::Minute => floor.checked_add_signed(TimeDelta::minutes(1))?,
            Unit::Second => floor.checked_add_signed(TimeDelta::seconds(1))?,
        })
    }

    /// The smallest unit boundary at or after `t`.
    fn ceil(self, t: NaiveDateTime) -> Option<NaiveDateTime> {
        let f = self.floor(t)?;
        if f == t { Some(f) } else { self.next(f) }
    }
}

/// `f(column) op literal`, rewritten on the column, when `f` is one we know.
pub fn normalize(
    function: &Expr,
    op: BinaryOp,
    literal: &ScalarValue,
    column: &dyn Fn(&Expr) -> Option<Column>,
) -> Option<Predicate> {
    match function {
        Expr::Cast(c) if c.field.data_type() == &DataType::Date32 => to_date(column(&c.expr)?, op, literal),
        Expr::TryCast(c) if c.field.data_type() == &DataType::Date32 => to_date(column(&c.expr)?, op, literal),
        Expr::Cast(c) => narrowed(column(&c.expr)?, c.field.data_type(), op, literal, true),
        Expr::TryCast(c) => narrowed(column(&c.expr)?, c.field.data_type(), op, literal, false),
        Expr::ScalarFunction(f) => match (f.name(), f.args.as_slice()) {
            ("to_date", [arg]) => to_date(column(arg)?, op, literal),
            ("date_trunc" | "datetrunc", [Expr::Literal(unit, _), arg]) => {
                let unit = Unit::parse(unit_str(unit)?)?;
                date_trunc(time_column(arg, column)?, unit, op, literal)
            }
            ("date_part" | "datepart", [Expr::Literal(unit, _), arg]) => {
                (Unit::parse(unit_str(unit)?)? == Unit::Year).then_some(())?;
                extract_year(column(arg)?, op, literal)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The column a `date_trunc` truncates: a timestamp column, or a date
/// column as the timestamp of its midnight (`CAST(d AS TIMESTAMP)`, as
/// DataFusion coerces `date_trunc('month', d)`).
fn time_column(arg: &Expr, column: &dyn Fn(&Expr) -> Option<Column>) -> Option<Column> {
    let c = match arg {
        Expr::Cast(cast) if matches!(cast.field.data_type(), DataType::Timestamp(_, None)) => column(&cast.expr)?,
        other => column(other)?,
    };
    (c.data_type == DataType::Date32 || timestamp_unit(&c.data_type).is_some()).then_some(c)
}

fn unit_str(v: &ScalarValue) -> Option<&str> {
    match v {
        ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s)) => Some(s),
        _ => None,
    }
}

/// Timestamp unit of a column we can reason about (no zone, or UTC).
pub(crate) fn timestamp_unit(dt: &DataType) -> Option<TimeUnit> {
    match dt {
        DataType::Timestamp(unit, None) => Some(*unit),
        DataType::Timestamp(unit, Some(tz)) if matches!(tz.as_ref(), "UTC" | "+00:00" | "Z" | "+00") => Some(*unit),
        _ => None,
    }
}

/// A wall-clock time as a literal of the column's type.
fn at(column: &Column, t: NaiveDateTime) -> Option<ScalarValue> {
    let DataType::Timestamp(unit, tz) = &column.data_type else {
        return None;
    };
    let utc = t.and_utc();
    let v = match unit {
        TimeUnit::Second => utc.timestamp(),
        TimeUnit::Millisecond => utc.timestamp_millis(),
        TimeUnit::Microsecond => utc.timestamp_micros(),
        TimeUnit::Nanosecond => utc.timestamp_nanos_opt()?,
    };
    Some(match unit {
        TimeUnit::Second => ScalarValue::TimestampSecond(Some(v), tz.clone()),
        TimeUnit::Millisecond => ScalarValue::TimestampMillisecond(Some(v), tz.clone()),
        TimeUnit::Microsecond => ScalarValue::TimestampMicrosecond(Some(v), tz.clone()),
        TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(Some(v), tz.clone()),
    })
}

fn cmp(column: &Column, op: BinaryOp, t: NaiveDateTime) -> Option<Predicate> {
    let literal = match column.data_type {
        // A date stands for its midnight: midnight(d) >= t ⇔ d >= ceil(t),
        // midnight(d) < t ⇔ d < ceil(t), ceil(t) the first midnight ≥ t.
        DataType::Date32 if matches!(op, BinaryOp::GtEq | BinaryOp::Lt) => date32(Unit::Day.ceil(t)?)?,
        _ => at(column, t)?,
    };
    Some(Predicate::Binary {
        op,
        field: column.field,
        literal,
    })
}

/// `lo <= col < hi` (or its complement for `<>`), from a bucket `[lo, hi)`:
/// the rows whose function value equals the literal.
fn bucket(column: &Column, op: BinaryOp, lo: NaiveDateTime, hi: NaiveDateTime) -> Option<Predicate> {
    Some(match op {
        BinaryOp::Eq => Predicate::and(cmp(column, BinaryOp::GtEq, lo)?, cmp(column, BinaryOp::Lt, hi)?),
        BinaryOp::NotEq => Predicate::or(cmp(column, BinaryOp::Lt, lo)?, cmp(column, BinaryOp::GtEq, hi)?),
        BinaryOp::Lt => cmp(column, BinaryOp::Lt, lo)?,
        BinaryOp::LtEq => cmp(column, BinaryOp::Lt, hi)?,
        BinaryOp::Gt => cmp(column, BinaryOp::GtEq, hi)?,
        BinaryOp::GtEq => cmp(column, BinaryOp::GtEq, lo)?,
        _ => return None,
    })
}

/// The range of a signed integer type.
pub(crate) fn integer_range(t: &DataType) -> Option<(i64, i64)> {
    Some(match t {
        DataType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DataType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DataType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        DataType::Int64 => (i64::MIN, i64::MAX),
        _ => return None,
    })
}

/// Whether a cast of a `from` integer to `to` may meet a value `to` cannot hold.
pub(crate) fn is_narrowing_integer(from: &DataType, to: &DataType) -> bool {
    matches!((integer_range(from), integer_range(to)), (Some((a, b)), Some((c, d))) if a < c || b > d)
}

/// `CAST(c AS to) op v` (`errors`; else `TRY_CAST`) of an integer column
/// and a narrower integer type: `c op v` where `to` holds `c`; elsewhere an
/// error (kept: unknown) or NULL (never matches).
fn narrowed(c: Column, to: &DataType, op: BinaryOp, literal: &ScalarValue, errors: bool) -> Option<Predicate> {
    if !is_narrowing_integer(&c.data_type, to) || matches!(op, BinaryOp::StartsWith | BinaryOp::NotStartsWith) {
        return None;
    }
    let (min, max) = integer_range(to)?;
    let in_type = |v: i64| ScalarValue::Int64(Some(v)).cast_to(&c.data_type).ok();
    let value = super::bind::exact_literal(literal.clone(), &c.data_type)?;
    let compare = |op, literal| Predicate::Binary {
        op,
        field: c.field,
        literal,
    };
    let held = Predicate::and(
        compare(BinaryOp::GtEq, in_type(min)?),
        compare(BinaryOp::LtEq, in_type(max)?),
    );
    let matched = Predicate::and(compare(op, value), held);
    if !errors {
        return Some(matched);
    }
    let outside = Predicate::or(
        compare(BinaryOp::Lt, in_type(min)?),
        compare(BinaryOp::Gt, in_type(max)?),
    );
    Some(Predicate::or(matched, Predicate::and(outside, Predicate::Unknown)))
}

fn to_date(column: Column, op: BinaryOp, literal: &ScalarValue) -> Option<Predicate> {
    timestamp_unit(&column.data_type)?;
    let ScalarValue::Date32(Some(days)) = literal.cast_to(&DataType::Date32).ok()? else {
        return None;
    };
    let day = NaiveDate::from_ymd_opt(1970, 1, 1)?.checked_add_signed(TimeDelta::days(days as i64))?;
    let lo = day.and_hms_opt(0, 0, 0)?;
    bucket(&column, op, lo, Unit::Day.next(lo)?)
}

fn date_trunc(column: Column, unit: Unit, op: BinaryOp, literal: &ScalarValue) -> Option<Predicate> {
    let tunit = match column.data_type {
        DataType::Date32 => TimeUnit::Microsecond,
        _ => timestamp_unit(&column.data_type)?,
    };
    let lit = literal.cast_to(&DataType::Timestamp(tunit, None)).ok()?;
    let t = naive(&lit)?;
    let aligned = unit.floor(t)? == t;
    match op {
        // trunc(ts) = T: T must be a boundary, then ts is in [T, next(T)).
        BinaryOp::Eq if !aligned => Some(Predicate::False),
        BinaryOp::NotEq if !aligned => None,
        BinaryOp::Eq | BinaryOp::NotEq => bucket(&column, op, t, unit.next(t)?),
        // trunc(ts) >= T  ⇔  ts >= ceil(T);  trunc(ts) < T  ⇔  ts < ceil(T)
        BinaryOp::GtEq => cmp(&column, BinaryOp::GtEq, unit.ceil(t)?),
        BinaryOp::Lt => cmp(&column, BinaryOp::Lt, unit.ceil(t)?),
        // trunc(ts) > T  ⇔  trunc(ts) >= next(floor(T));  <= likewise
        BinaryOp::Gt => cmp(&column, BinaryOp::GtEq, unit.next(unit.floor(t)?)?),
        BinaryOp::LtEq => cmp(&column, BinaryOp::Lt, unit.next(unit.floor(t)?)?),
        _ => None,
    }
}

fn extract_year(column: Column, op: BinaryOp, literal: &ScalarValue) -> Option<Predicate> {
    let year: i32 = match literal {
        ScalarValue::Int8(Some(v)) => *v as i32,
        ScalarValue::Int16(Some(v)) => *v as i32,
        ScalarValue::Int32(Some(v)) => *v,
        ScalarValue::Int64(Some(v)) => i32::try_from(*v).ok()?,
        ScalarValue::Float64(Some(v)) if v.fract() == 0.0 && v.abs() < 1e6 => *v as i32,
        ScalarValue::Float32(Some(v)) if v.fract() == 0.0 && v.abs() < 1e6 => *v as i32,
        _ => return None,
    };
    let lo = NaiveDate::from_ymd_opt(year, 1, 1)?.and_hms_opt(0, 0, 0)?;
    let hi = Unit::Year.next(lo)?;
    if column.data_type == DataType::Date32 {
        let leaf = |op, t| {
            Some(Predicate::Binary {
                op,
                field: column.field,
                literal: date32(t)?,
            })
        };
        return Some(match op {
            BinaryOp::Eq => Predicate::and(leaf(BinaryOp::GtEq, lo)?, leaf(BinaryOp::Lt, hi)?),
            BinaryOp::NotEq => Predicate::or(leaf(BinaryOp::Lt, lo)?, leaf(BinaryOp::GtEq, hi)?),
            BinaryOp::Lt => leaf(BinaryOp::Lt, lo)?,
            BinaryOp::LtEq => leaf(BinaryOp::Lt, hi)?,
            BinaryOp::Gt => leaf(BinaryOp::GtEq, hi)?,
            BinaryOp::GtEq => leaf(BinaryOp::GtEq, lo)?,
            _ => return None,
        });
    }
    timestamp_unit(&column.data_type)?;
    bucket(&column, op, lo, hi)
}

/// The day of `t` as a `DATE` literal.
fn date32(t: NaiveDateTime) -> Option<ScalarValue> {
    let days = (t.date() - NaiveDate::from_ymd_opt(1970, 1, 1)?).num_days();
    Some(ScalarValue::Date32(Some(i32::try_from(days).ok()?)))
}

fn naive(v: &ScalarValue) -> Option<NaiveDateTime> {
    let utc = match v {
        ScalarValue::TimestampSecond(Some(x), _) => chrono::DateTime::from_timestamp(*x, 0)?,
        ScalarValue::TimestampMillisecond(Some(x), _) => chrono::DateTime::from_timestamp_millis(*x)?,
        ScalarValue::TimestampMicrosecond(Some(x), _) => chrono::DateTime::from_timestamp_micros(*x)?,
        ScalarValue::TimestampNanosecond(Some(x), _) => chrono::DateTime::from_timestamp_nanos(*x),
        _ => return None,
    };
    Some(utc.naive_utc())
}
