//! A manifest's partition summaries for its manifest list entry.
//!
//! Our metadata keeps each partition field's summary with bounds in their
//! serialized (string) form; the manifest list wants them in the
//! single-value binary form, typed by the field's result type. Float zeros
//! are widened (`0.0` as a lower bound is written `-0.0`, `-0.0` as an upper
//! bound `0.0`): Iceberg orders `-0.0` below `0.0`, and our summaries do not
//! tell the zeros apart. A bound that cannot be converted is left out, which
//! only makes readers keep the manifest.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;

use super::bounds::encode_bound;
use super::manifest_list::FieldSummaryBinary;
use crate::error::Result;
use crate::manifest::stats::widen_zero;
use crate::spec::{FieldSummary, TableSpec};

/// The binary summaries of `summaries` (one per partition field of `spec`).
pub fn binary_summaries(spec: &TableSpec, summaries: &[FieldSummary]) -> Result<Vec<FieldSummaryBinary>> {
    let bound = spec.partition_spec.bind(&spec.schema)?;
    Ok(bound
        .iter()
        .enumerate()
        .map(|(i, field)| match summaries.get(i) {
            Some(s) => binary_summary(s, &field.result_type),
            None => FieldSummaryBinary {
                contains_null: true,
                contains_nan: None,
                lower: None,
                upper: None,
            },
        })
        .collect())
}

fn binary_summary(summary: &FieldSummary, result_type: &DataType) -> FieldSummaryBinary {
    let float = matches!(result_type, DataType::Float32 | DataType::Float64);
    let typed = |text: &Option<String>| -> Option<ScalarValue> {
        let text = text.as_deref()?;
        crate::values::parse(Some(text), result_type)
            .ok()
            .filter(|v| !v.is_null())
    };
    let (lower, upper) = match (typed(&summary.lower_bound), typed(&summary.upper_bound)) {
        (Some(l), Some(u)) => (encode_bound(&widen_zero(l, true)), encode_bound(&widen_zero(u, false))),
        _ => (None, None),
    };
    let (lower, upper) = match (lower, upper) {
        (Some(l), Some(u)) => (Some(l), Some(u)),
        _ => (None, None),
    };
    FieldSummaryBinary {
        contains_null: summary.contains_null,
        contains_nan: float.then_some(summary.contains_nan),
        lower,
        upper,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_zeros_are_widened() {
        let s = FieldSummary {
            contains_null: false,
            contains_nan: true,
            lower_bound: Some("0.0".into()),
            upper_bound: Some("-0.0".into()),
        };
        let b = binary_summary(&s, &DataType::Float64);
        assert_eq!(b.lower, Some((-0.0f64).to_le_bytes().to_vec()));
        assert_eq!(b.upper, Some(0.0f64.to_le_bytes().to_vec()));
        assert_eq!(b.contains_nan, Some(true));
    }

    #[test]
    fn bounds_are_typed_by_the_result_type() {
        let s = FieldSummary {
            contains_null: true,
            contains_nan: false,
            lower_bound: Some("2024-01-02".into()),
            upper_bound: Some("2024-01-05".into()),
        };
        let b = binary_summary(&s, &DataType::Date32);
        assert_eq!(b.lower, Some(19724i32.to_le_bytes().to_vec()));
        assert_eq!(b.upper, Some(19727i32.to_le_bytes().to_vec()));
        assert_eq!(b.contains_nan, None);
        assert!(b.contains_null);
        let none = binary_summary(
            &FieldSummary {
                contains_null: true,
                contains_nan: false,
                lower_bound: None,
                upper_bound: None,
            },
            &DataType::Int32,
        );
        assert_eq!((none.lower, none.upper), (None, None));
    }
}
