//! Generated partition columns as transforms of their source column.
//!
//! Delta tables are often partitioned by a column computed from another:
//!
//! | generation expression              | partition value | treated as      |
//! |------------------------------------|-----------------|-----------------|
//! | `CAST(ts AS DATE)`, `to_date(ts)`  | `2024-01-02`    | `day(ts)`       |
//! | `date_format(ts, 'yyyy-MM-dd')`    | `2024-01-02`    | `day(ts)`       |
//! | `date_format(ts, 'yyyy-MM')`       | `2024-01`       | `month(ts)`     |
//! | `year(ts)`, `date_format(ts, 'yyyy')` | `2024`       | `year(ts)`      |
//!
//! With the extra partition field, `WHERE ts >= TIMESTAMP '2024-01-02 00:00:00'`
//! prunes the table by its `day` directories, as Delta's own engines do.
//! Only `timestamp_ntz` sources qualify: for a `timestamp` (with time zone)
//! the result depends on the writer's session time zone, which the log does
//! not record.

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;

use crate::transform::Transform;

/// A generated column read as `transform(source)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    pub source: String,
    pub transform: Transform,
}

/// The transform a generation expression amounts to, if it is one we know.
/// `source_type` looks a column's type up by name.
pub fn derive(expression: &str, source_type: impl Fn(&str) -> Option<DataType>) -> Option<Derived> {
    let compact: String = expression.chars().filter(|c| !c.is_whitespace()).collect();
    let lower = compact.to_ascii_lowercase();
    let column = |inner: &str| -> Option<String> {
        let name = inner.trim_matches('`');
        let ok = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        ok.then(|| name.to_string())
    };
    let (source, transform) = if let Some(inner) = lower.strip_prefix("cast(").and_then(|r| r.strip_suffix("asdate)")) {
        (column(&compact[5..5 + inner.len()])?, Transform::Day)
    } else if let Some(inner) = lower.strip_prefix("to_date(").and_then(|r| r.strip_suffix(')')) {
        (column(&compact[8..8 + inner.len()])?, Transform::Day)
    } else if let Some(inner) = lower.strip_prefix("year(").and_then(|r| r.strip_suffix(')')) {
        (column(&compact[5..5 + inner.len()])?, Transform::Year)
    } else if lower.starts_with("date_format(") && compact.ends_with(')') {
        let args = &compact["date_format(".len()..compact.len() - 1];
        let (col, pattern) = args.split_once(',')?;
        let pattern = pattern.trim_matches(|c| c == '\'' || c == '"');
        let transform = match pattern {
            "yyyy-MM-dd" => Transform::Day,
            "yyyy-MM" => Transform::Month,
            "yyyy" => Transform::Year,
            _ => return None,
        };
        (column(col)?, transform)
    } else {
        return None;
    };
    // Only zone-less timestamps: their date does not depend on a session time zone.
    matches!(
        source_type(&source)?,
        DataType::Timestamp(TimeUnit::Microsecond | TimeUnit::Nanosecond, None)
    )
    .then_some(Derived { source, transform })
}

/// The transform's value for a file whose generated column holds `value`;
/// `None` when the value is not in the expected form.
pub fn derived_value(transform: Transform, value: &ScalarValue) -> Option<ScalarValue> {
    if value.is_null() {
        return Some(match transform {
            Transform::Day => ScalarValue::Date32(None),
            _ => ScalarValue::Int32(None),
        });
    }
    match (transform, value) {
        (Transform::Day, ScalarValue::Date32(Some(d))) => Some(ScalarValue::Date32(Some(*d))),
        (Transform::Year, ScalarValue::Int32(Some(y))) => Some(ScalarValue::Int32(Some(y.checked_sub(1970)?))),
        (Transform::Year, ScalarValue::Int64(Some(y))) => {
            Some(ScalarValue::Int32(Some(i32::try_from(*y).ok()?.checked_sub(1970)?)))
        }
        (t, ScalarValue::Utf8(Some(s))) => t.parse_human_string(s).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(name: &str) -> Option<DataType> {
        match name {
            "ts" => Some(DataType::Timestamp(TimeUnit::Microsecond, None)),
            "tz" => Some(DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))),
            _ => None,
        }
    }

    #[test]
    fn known_expressions_become_transforms() {
        let d = |e: &str| derive(e, types).map(|d| d.transform);
        assert_eq!(d("CAST(ts AS DATE)"), Some(Transform::Day));
        assert_eq!(d("cast( `ts` as date )"), Some(Transform::Day));
        assert_eq!(d("date_format(ts, 'yyyy-MM')"), Some(Transform::Month));
        assert_eq!(d("YEAR(ts)"), Some(Transform::Year));
        // Minutes, not months: not a transform.
        assert_eq!(d("date_format(ts, 'yyyy-mm')"), None);
        // Depends on the session time zone.
        assert_eq!(d("CAST(tz AS DATE)"), None);
        assert_eq!(d("ts + 1"), None);
    }

    #[test]
    fn values_map_onto_transform_units() {
        assert_eq!(
            derived_value(Transform::Month, &ScalarValue::Utf8(Some("1969-12".into()))),
            Some(ScalarValue::Int32(Some(-1)))
        );
        assert_eq!(
            derived_value(Transform::Year, &ScalarValue::Int32(Some(2024))),
            Some(ScalarValue::Int32(Some(54)))
        );
        assert_eq!(
            derived_value(Transform::Day, &ScalarValue::Date32(None)),
            Some(ScalarValue::Date32(None))
        );
        assert_eq!(
            derived_value(Transform::Month, &ScalarValue::Utf8(Some("yyyy-MM".into()))),
            None
        );
    }
}
