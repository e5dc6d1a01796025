//! Can a manifest match at all? The projected partition predicate checked
//! against the manifest's partition summaries (per field: lower/upper bound,
//! contains null) from the snapshot — so a manifest that cannot match is
//! never read.
//!
//! | leaf            | may match when                    |
//! |-----------------|-----------------------------------|
//! | `p = v`         | `lower <= v <= upper`             |
//! | `p < v`         | `lower < v`                       |
//! | `p >= v`        | `upper >= v`                      |
//! | `p IN (a, b)`   | some literal within the bounds    |
//! | `p IS NULL`     | the manifest contains a null      |
//! | `p IS NOT NULL` | always (a missing bound is no proof of all-NULL) |
//!
//! Anything else, a missing bound, or floats (NaN) answer "may match".

use std::cmp::Ordering;

use datafusion::common::ScalarValue;

use super::predicate::{BinaryOp, Predicate, SetOp, UnaryOp};
use crate::spec::{BoundPartitionField, FieldSummary};
use crate::values;

/// Typed bounds of one partition field over a manifest.
struct Bounds {
    lower: Option<ScalarValue>,
    upper: Option<ScalarValue>,
    contains_null: bool,
}

/// Whether any file of a manifest with these summaries may satisfy `pred`
/// (a projected predicate on partition field ids).
pub fn manifest_may_match(pred: &Predicate, fields: &[BoundPartitionField<'_>], summaries: &[FieldSummary]) -> bool {
    if summaries.len() != fields.len() {
        return true;
    }
    let bounds: Vec<(i32, Bounds)> = fields
        .iter()
        .zip(summaries)
        .map(|(f, s)| {
            let parse = |b: &Option<String>| {
                b.as_deref()
                    .and_then(|v| values::parse_bound(v, &f.result_type).ok())
                    .filter(|v| !v.is_null())
            };
            (
                f.field.field_id,
                Bounds {
                    lower: parse(&s.lower_bound),
                    upper: parse(&s.upper_bound),
                    contains_null: s.contains_null,
                },
            )
        })
        .collect();
    may_match(pred, &|id| bounds.iter().find(|(f, _)| *f == id).map(|(_, b)| b))
}

fn may_match<'a>(pred: &Predicate, bounds: &dyn Fn(i32) -> Option<&'a Bounds>) -> bool {
    match pred {
        Predicate::True | Predicate::Unknown | Predicate::Not(_) => true,
        Predicate::False => false,
        Predicate::And(a, b) => may_match(a, bounds) && may_match(b, bounds),
        Predicate::Or(a, b) => may_match(a, bounds) || may_match(b, bounds),
        Predicate::Unary { op, field } => match (op, bounds(*field)) {
            (UnaryOp::IsNull, Some(b)) => b.contains_null,
            // Summaries written before empty strings had bounds left them
            // out, so a missing bound does not prove every value is NULL.
            _ => true,
        },
        Predicate::Binary { op, field, literal } => bounds(*field).is_none_or(|b| binary(b, *op, literal)),
        Predicate::Set {
            op: SetOp::In,
            field,
            literals,
        } => bounds(*field).is_none_or(|b| literals.iter().any(|l| binary(b, BinaryOp::Eq, l))),
        Predicate::Set { .. } => true,
    }
}

fn binary(b: &Bounds, op: BinaryOp, v: &ScalarValue) -> bool {
    let (Some(lo), Some(hi)) = (&b.lower, &b.upper) else {
        return true;
    };
    if matches!(
        v,
        ScalarValue::Float32(_) | ScalarValue::Float64(_) | ScalarValue::Float16(_)
    ) {
        return true;
    }
    let (Some(vs_lo), Some(vs_hi)) = (v.partial_cmp(lo), v.partial_cmp(hi)) else {
        return true;
    };
    match op {
        BinaryOp::Eq => vs_lo != Ordering::Less && vs_hi != Ordering::Greater,
        BinaryOp::Lt => vs_lo == Ordering::Greater,
        BinaryOp::LtEq => vs_lo != Ordering::Less,
        BinaryOp::Gt => vs_hi == Ordering::Less,
        BinaryOp::GtEq => vs_hi != Ordering::Greater,
        BinaryOp::NotEq => !(vs_lo == Ordering::Equal && vs_hi == Ordering::Equal),
        BinaryOp::StartsWith | BinaryOp::NotStartsWith => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(lo: i32, hi: i32, null: bool) -> Bounds {
        Bounds {
            lower: Some(ScalarValue::Int32(Some(lo))),
            upper: Some(ScalarValue::Int32(Some(hi))),
            contains_null: null,
        }
    }

    fn leaf(op: BinaryOp, v: i32) -> Predicate {
        Predicate::Binary {
            op,
            field: 1000,
            literal: ScalarValue::Int32(Some(v)),
        }
    }

    #[test]
    fn ranges_against_bounds() {
        let bounds = b(10, 20, false);
        let get = |_: i32| Some(&bounds);
        assert!(may_match(&leaf(BinaryOp::Eq, 10), &get));
        assert!(!may_match(&leaf(BinaryOp::Eq, 21), &get));
        assert!(!may_match(&leaf(BinaryOp::Lt, 10), &get));
        assert!(may_match(&leaf(BinaryOp::LtEq, 10), &get));
        assert!(!may_match(&leaf(BinaryOp::Gt, 20), &get));
        assert!(may_match(&leaf(BinaryOp::GtEq, 20), &get));
        assert!(!may_match(
            &Predicate::Unary {
                op: UnaryOp::IsNull,
                field: 1000
            },
            &get
        ));
        let one = b(7, 7, false);
        assert!(!may_match(&leaf(BinaryOp::NotEq, 7), &|_| Some(&one)));
        let set = Predicate::Set {
            op: SetOp::In,
            field: 1000,
            literals: vec![ScalarValue::Int32(Some(1)), ScalarValue::Int32(Some(15))],
        };
        assert!(may_match(&set, &get));
        // Unknown fields and missing bounds may always match.
        assert!(may_match(&leaf(BinaryOp::Eq, 99), &|_| None));
    }
}
