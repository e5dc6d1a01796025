//! Join keys that are a function of one column of the pruned side, and
//! whose equality with a value is a range of that column (`normalize`):
//! the other side's keys then prune as ranges of the column.
//!
//! | join key (fact side)          | function          | `f(ts) = DATE '2024-03-01'` prunes as |
//! |-------------------------------|-------------------|----------------------------------------|
//! | `CAST(ts AS DATE)`, `to_date(ts)` | `ToDate`      | `ts ∈ [2024-03-01, 2024-03-02)`        |
//! | `date_trunc('day', ts)`       | `DateTrunc(day)`  | `ts ∈ [T, T + 1 day)` (`T` aligned)    |
//! | `date_trunc('month', d)` of a date | `DateTruncOfDate(month)` | `d ∈ [2024-03-01, 2024-04-01)` |
//! | `EXTRACT(YEAR FROM ts)`       | `DatePart(year)`  | `ts ∈ [Jan 1, next Jan 1)`             |
//! | `CAST(i AS BIGINT)` (widening) | `Cast(Int64)`    | `i = v`                                |
//! | `CAST(b AS INT)` (narrowing)  | `Cast(Int32)`     | `b = v`; files that may hold a `b` outside INT kept (the cast raises an error there) |
//! | `lower(s)`, `a + 1`           | none: not invertible, never used for pruning |     |

use std::fmt;
use std::str::FromStr;

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::{Column, ScalarValue};
use datafusion::logical_expr::{Cast, Expr, lit};

use super::bind::is_widening;
use super::normalize::{Unit, is_narrowing_integer, timestamp_unit};

/// A function of one column a join key may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyFunction {
    /// `CAST(c AS DATE)` / `to_date(c)` of a timestamp.
    ToDate,
    /// `date_trunc('unit', c)` of a timestamp.
    DateTrunc(String),
    /// `date_trunc('unit', CAST(d AS TIMESTAMP))` of a date (DataFusion's
    /// coercion of `date_trunc('unit', d)`).
    DateTruncOfDate(String),
    /// `date_part('year', c)` (`EXTRACT(YEAR FROM c)`) of a timestamp or date.
    DatePart(String),
    /// A cast that keeps every value (`is_widening`).
    Cast(DataType),
    /// `CAST(f(c) AS TIMESTAMP)` of a day or truncation `f` (as DataFusion
    /// writes `date_trunc('day', ts) = d_ts` when their units differ),
    /// when the cast keeps every value of `f`.
    AsTimestamp(Box<KeyFunction>, TimeUnit),
}

impl KeyFunction {
    /// The column `key` is a function of and the function (`None`: the
    /// column itself), when `key` has one of the shapes above; `None` for
    /// any other expression.
    pub fn of(key: &Expr) -> Option<(Column, Option<KeyFunction>)> {
        let column = |e: &Expr| match e {
            Expr::Column(c) => Some(c.clone()),
            _ => None,
        };
        let unit = |e: &Expr| match e {
            Expr::Literal(
                ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s)),
                _,
            ) => Unit::parse(s).map(|_| s.to_ascii_lowercase()),
            _ => None,
        };
        match key {
            Expr::Column(c) => Some((c.clone(), None)),
            Expr::Cast(Cast { expr, field }) if !matches!(expr.as_ref(), Expr::Column(_)) => {
                let DataType::Timestamp(unit, None) = field.data_type() else {
                    return None;
                };
                match KeyFunction::of(expr)? {
                    (c, Some(f @ (KeyFunction::ToDate | KeyFunction::DateTrunc(_)))) => {
                        Some((c, Some(KeyFunction::AsTimestamp(Box::new(f), *unit))))
                    }
                    _ => None,
                }
            }
            Expr::Cast(Cast { expr, field }) => {
                let f = match field.data_type() {
                    DataType::Date32 => KeyFunction::ToDate,
                    other => KeyFunction::Cast(other.clone()),
                };
                Some((column(expr)?, Some(f)))
            }
            Expr::ScalarFunction(f) => match (f.name(), f.args.as_slice()) {
                ("to_date", [arg]) => Some((column(arg)?, Some(KeyFunction::ToDate))),
                ("date_trunc" | "datetrunc", [u, Expr::Cast(Cast { expr, field })])
                    if matches!(field.data_type(), DataType::Timestamp(_, None)) =>
                {
                    Some((column(expr)?, Some(KeyFunction::DateTruncOfDate(unit(u)?))))
                }
                ("date_trunc" | "datetrunc", [u, arg]) => Some((column(arg)?, Some(KeyFunction::DateTrunc(unit(u)?)))),
                ("date_part" | "datepart", [u, arg]) => {
                    let u = unit(u)?;
                    (Unit::parse(&u) == Some(Unit::Year)).then_some(())?;
                    Some((column(arg)?, Some(KeyFunction::DatePart(u))))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `f(c) = v` is a range of a column `c` of type `column` for
    /// every value `v` (what `normalize` rewrites).
    pub fn invertible(&self, column: &DataType) -> bool {
        match self {
            KeyFunction::ToDate | KeyFunction::DateTrunc(_) => timestamp_unit(column).is_some(),
            KeyFunction::DateTruncOfDate(_) => column == &DataType::Date32,
            KeyFunction::DatePart(_) => column == &DataType::Date32 || timestamp_unit(column).is_some(),
            KeyFunction::Cast(to) => is_widening(column, to) || is_narrowing_integer(column, to),
            // Days are whole in every unit; a truncation's values are the
            // column's, kept by a unit at least as fine.
            KeyFunction::AsTimestamp(f, unit) => {
                f.invertible(column)
                    && match (f.as_ref(), timestamp_unit(column)) {
                        (KeyFunction::ToDate, _) => true,
                        (_, Some(from)) => fineness(*unit) >= fineness(from),
                        _ => false,
                    }
            }
        }
    }

    /// The function applied to `column`.
    pub fn apply(&self, column: Expr) -> Expr {
        use datafusion::functions::datetime::expr_fn::{date_part, date_trunc};
        match self {
            KeyFunction::ToDate => Expr::Cast(Cast::new(Box::new(column), DataType::Date32)),
            KeyFunction::DateTrunc(unit) => date_trunc(lit(unit.clone()), column),
            KeyFunction::DateTruncOfDate(unit) => date_trunc(
                lit(unit.clone()),
                Expr::Cast(Cast::new(
                    Box::new(column),
                    DataType::Timestamp(TimeUnit::Nanosecond, None),
                )),
            ),
            KeyFunction::DatePart(unit) => date_part(lit(unit.clone()), column),
            KeyFunction::Cast(to) => Expr::Cast(Cast::new(Box::new(column), to.clone())),
            // Compared with values of the cast's type, which the range of
            // `f` takes back exactly (`normalize` casts each value).
            KeyFunction::AsTimestamp(f, _) => f.apply(column),
        }
    }

    /// The function as text (`to_date`, `date_trunc:day`, `date_part:year`,
    /// `cast:Int64`), read back by [`KeyFunction::decode`].
    pub fn encode(&self) -> String {
        match self {
            KeyFunction::ToDate => "to_date".to_string(),
            KeyFunction::DateTrunc(u) => format!("date_trunc:{u}"),
            KeyFunction::DateTruncOfDate(u) => format!("date_trunc_date:{u}"),
            KeyFunction::DatePart(u) => format!("date_part:{u}"),
            KeyFunction::Cast(t) => format!("cast:{t}"),
            KeyFunction::AsTimestamp(f, unit) => format!("timestamp:{unit:?}:{}", f.encode()),
        }
    }

    pub fn decode(text: &str) -> Option<KeyFunction> {
        if let Some(rest) = text.strip_prefix("timestamp:") {
            let (unit, inner) = rest.split_once(':')?;
            let unit = match unit {
                "Second" => TimeUnit::Second,
                "Millisecond" => TimeUnit::Millisecond,
                "Microsecond" => TimeUnit::Microsecond,
                "Nanosecond" => TimeUnit::Nanosecond,
                _ => return None,
            };
            return Some(KeyFunction::AsTimestamp(Box::new(KeyFunction::decode(inner)?), unit));
        }
        Some(match text.split_once(':') {
            None if text == "to_date" => KeyFunction::ToDate,
            Some(("date_trunc", u)) => KeyFunction::DateTrunc(u.to_string()),
            Some(("date_trunc_date", u)) => KeyFunction::DateTruncOfDate(u.to_string()),
            Some(("date_part", u)) => KeyFunction::DatePart(u.to_string()),
            Some(("cast", t)) => KeyFunction::Cast(DataType::from_str(t).ok()?),
            _ => return None,
        })
    }

    /// How the function is written around `column`, for EXPLAIN.
    pub fn display(&self, column: &str) -> String {
        match self {
            KeyFunction::ToDate => format!("CAST({column} AS DATE)"),
            KeyFunction::DateTrunc(u) | KeyFunction::DateTruncOfDate(u) => format!("date_trunc('{u}', {column})"),
            KeyFunction::DatePart(u) => format!("date_part('{u}', {column})"),
            KeyFunction::Cast(t) => format!("CAST({column} AS {t})"),
            KeyFunction::AsTimestamp(f, unit) => format!("CAST({} AS Timestamp({unit:?}))", f.display(column)),
        }
    }
}

/// Orders time units from coarse to fine.
fn fineness(unit: TimeUnit) -> u8 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 1,
        TimeUnit::Microsecond => 2,
        TimeUnit::Nanosecond => 3,
    }
}

impl fmt::Display for KeyFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.encode())
    }
}

#[cfg(test)]
mod tests {
    use datafusion::logical_expr::col;

    use super::*;

    #[test]
    fn recognises_the_invertible_shapes_and_round_trips_them() {
        let ts = DataType::Timestamp(TimeUnit::Microsecond, None);
        let cases = [
            (
                Expr::Cast(Cast::new(Box::new(col("ts")), DataType::Date32)),
                KeyFunction::ToDate,
            ),
            (
                datafusion::functions::datetime::expr_fn::date_trunc(lit("DAY"), col("ts")),
                KeyFunction::DateTrunc("day".into()),
            ),
            (
                datafusion::functions::datetime::expr_fn::date_part(lit("year"), col("ts")),
                KeyFunction::DatePart("year".into()),
            ),
        ];
        for (expr, want) in cases {
            let (c, f) = KeyFunction::of(&expr).unwrap();
            assert_eq!(c.name, "ts");
            let f = f.unwrap();
            assert_eq!(f, want);
            assert!(f.invertible(&ts));
            assert_eq!(KeyFunction::decode(&f.encode()), Some(f));
        }
        let widen = Expr::Cast(Cast::new(Box::new(col("i")), DataType::Int64));
        let (_, f) = KeyFunction::of(&widen).unwrap();
        let f = f.unwrap();
        assert!(f.invertible(&DataType::Int32) && !f.invertible(&DataType::Utf8));
        assert_eq!(KeyFunction::decode(&f.encode()), Some(f));
        // DataFusion's coercion of `date_trunc('day', ts) = d_ns`: a finer unit keeps every value.
        let trunc = datafusion::functions::datetime::expr_fn::date_trunc(lit("day"), col("ts"));
        let wide = Expr::Cast(Cast::new(
            Box::new(trunc.clone()),
            DataType::Timestamp(TimeUnit::Nanosecond, None),
        ));
        let (_, f) = KeyFunction::of(&wide).unwrap();
        let f = f.unwrap();
        assert!(f.invertible(&ts));
        assert_eq!(KeyFunction::decode(&f.encode()), Some(f));
        let coarse = Expr::Cast(Cast::new(Box::new(trunc), DataType::Timestamp(TimeUnit::Second, None)));
        assert!(!KeyFunction::of(&coarse).unwrap().1.unwrap().invertible(&ts));
        // A cast that merges values of the function is no inverse.
        let hour = datafusion::functions::datetime::expr_fn::date_trunc(lit("hour"), col("ts"));
        assert!(KeyFunction::of(&Expr::Cast(Cast::new(Box::new(hour), DataType::Date32))).is_none());
        // A date truncated as DataFusion coerces it: through its midnight.
        let date_month = datafusion::functions::datetime::expr_fn::date_trunc(
            lit("month"),
            Expr::Cast(Cast::new(
                Box::new(col("d")),
                DataType::Timestamp(TimeUnit::Nanosecond, None),
            )),
        );
        let (c, f) = KeyFunction::of(&date_month).unwrap();
        let f = f.unwrap();
        assert_eq!(
            (c.name.as_str(), &f),
            ("d", &KeyFunction::DateTruncOfDate("month".into()))
        );
        assert!(f.invertible(&DataType::Date32) && !f.invertible(&ts));
        assert_eq!(KeyFunction::decode(&f.encode()), Some(f.clone()));
        assert_eq!(f.apply(col("d")), date_month);
        // Not a function of one column we invert.
        let lower = datafusion::functions::string::expr_fn::lower(col("s"));
        assert!(KeyFunction::of(&lower).is_none());
        assert!(KeyFunction::of(&(col("a") + lit(1))).is_none());
        let month = datafusion::functions::datetime::expr_fn::date_part(lit("month"), col("ts"));
        assert!(KeyFunction::of(&month).is_none());
        // A zoned timestamp's day depends on the zone.
        let zoned = DataType::Timestamp(TimeUnit::Microsecond, Some("Europe/Paris".into()));
        assert!(!KeyFunction::ToDate.invertible(&zoned));
    }
}
