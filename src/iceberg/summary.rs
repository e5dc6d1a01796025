//! A manifest's partition summaries for its manifest list entry.
//!
//! Our metadata keeps each partition field's summary with bounds in their
//! summary form (`values::serialize_bound`); the manifest list wants them in
//! the single-value binary form, typed by the field's result type. An empty
//! string or binary is a bound of zero bytes, never a missing bound: Iceberg
//! readers take a missing bound to mean "only nulls" and skip the manifest.
//! Float zeros are widened (`0.0` as a lower bound is written `-0.0`, `-0.0`
//! as an upper bound `0.0`): Iceberg orders `-0.0` below `0.0`, and our
//! summaries do not tell the zeros apart.
//!
//! A summary whose bounds cannot be trusted to be complete — written before
//! empty values got bounds, or holding a bound that cannot be converted —
//! leaves the manifest without summaries at all (`partitions` is optional),
//! which only makes readers keep it.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;

use super::bounds::encode_bound;
use super::manifest_list::FieldSummaryBinary;
use crate::error::Result;
use crate::spec::{FieldSummary, TableSpec};
use crate::values::widen_zero;

/// The binary summaries of `summaries` (one per partition field of `spec`),
/// `None` when one of them cannot be written without misleading a reader.
pub fn binary_summaries(spec: &TableSpec, summaries: &[FieldSummary]) -> Result<Option<Vec<FieldSummaryBinary>>> {
    let bound = spec.partition_spec.bind(&spec.schema)?;
    if summaries.len() != bound.len() {
        return Ok(None);
    }
    Ok(bound
        .iter()
        .zip(summaries)
        .map(|(field, s)| binary_summary(s, &field.result_type))
        .collect())
}

/// One field's binary summary, `None` when its bounds may be incomplete.
fn binary_summary(summary: &FieldSummary, result_type: &DataType) -> Option<FieldSummaryBinary> {
    let text = matches!(
        result_type,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Binary | DataType::LargeBinary
    );
    if text && summary.bounds_may_be_missing() {
        return None;
    }
    let float = matches!(result_type, DataType::Float32 | DataType::Float64);
    let encode = |text: &Option<String>, lower: bool| -> Option<Option<Vec<u8>>> {
        let Some(text) = text.as_deref() else {
            return Some(None);
        };
        let value: ScalarValue = crate::values::parse_bound(text, result_type).ok()?;
        if value.is_null() {
            return None;
        }
        encode_bound(&widen_zero(value, lower)).map(Some)
    };
    let lower = encode(&summary.lower_bound, true)?;
    let upper = encode(&summary.upper_bound, false)?;
    if lower.is_some() != upper.is_some() {
        return None;
    }
    Some(FieldSummaryBinary {
        contains_null: summary.contains_null,
        contains_nan: float.then_some(summary.contains_nan),
        lower,
        upper,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(null: bool, lower: Option<&str>, upper: Option<&str>) -> FieldSummary {
        FieldSummary {
            contains_null: null,
            contains_nan: false,
            lower_bound: lower.map(str::to_string),
            upper_bound: upper.map(str::to_string),
            empty_bounds: true,
        }
    }

    #[test]
    fn float_zeros_are_widened() {
        let s = FieldSummary {
            contains_nan: true,
            ..summary(false, Some("0.0"), Some("-0.0"))
        };
        let b = binary_summary(&s, &DataType::Float64).unwrap();
        assert_eq!(b.lower, Some((-0.0f64).to_le_bytes().to_vec()));
        assert_eq!(b.upper, Some(0.0f64.to_le_bytes().to_vec()));
        assert_eq!(b.contains_nan, Some(true));
    }

    #[test]
    fn bounds_are_typed_by_the_result_type() {
        let b = binary_summary(
            &summary(true, Some("2024-01-02"), Some("2024-01-05")),
            &DataType::Date32,
        )
        .unwrap();
        assert_eq!(b.lower, Some(19724i32.to_le_bytes().to_vec()));
        assert_eq!(b.upper, Some(19727i32.to_le_bytes().to_vec()));
        assert_eq!(b.contains_nan, None);
        assert!(b.contains_null);
        let none = binary_summary(&summary(true, None, None), &DataType::Int32).unwrap();
        assert_eq!((none.lower, none.upper), (None, None));
    }

    #[test]
    fn an_empty_string_is_a_bound_of_zero_bytes() {
        let b = binary_summary(&summary(true, Some(""), Some("be")), &DataType::Utf8).unwrap();
        assert_eq!(b.lower, Some(Vec::new()));
        assert_eq!(b.upper, Some(b"be".to_vec()));
        assert!(b.contains_null);
        let only_empty = binary_summary(&summary(false, Some(""), Some("")), &DataType::Binary).unwrap();
        assert_eq!(
            (only_empty.lower, only_empty.upper),
            (Some(Vec::new()), Some(Vec::new()))
        );
    }

    #[test]
    fn a_summary_that_may_have_left_out_an_empty_bound_is_not_written() {
        let legacy = FieldSummary {
            empty_bounds: false,
            ..summary(true, None, None)
        };
        assert_eq!(binary_summary(&legacy, &DataType::Utf8), None);
        // Only strings and binaries ever had a bound left out.
        assert!(binary_summary(&legacy, &DataType::Int32).is_some());
        // Flagged: a missing bound does mean every value is null.
        assert!(binary_summary(&summary(true, None, None), &DataType::Utf8).is_some());
        // A bound that cannot be read as the field's type writes no summaries.
        assert_eq!(
            binary_summary(&summary(false, Some("x"), Some("y")), &DataType::Int32),
            None
        );
    }
}
