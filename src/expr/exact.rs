//! When do the partition values alone decide a filter?
//!
//! A filter is *exact* for a table spec when a file is kept exactly when all
//! of its rows match — so DataFusion may drop its own `FilterExec` (and push a
//! LIMIT into the scan). Judged per leaf, on the projection actually applied:
//!
//! | leaf (source)              | partition field | exact when                               |
//! |----------------------------|-----------------|------------------------------------------|
//! | any comparison, IN, NOT IN | `identity`      | always, except on floats (signed zeros)  |
//! | `IS [NOT] NULL`            | any but `void`  | always                                   |
//! | `ts >= v`, `ts < v`        | `day(ts)`       | `v` starts a day (`2024-01-01 00:00:00`) |
//! | `ts > v`, `ts <= v`        | `day(ts)`       | `v + 1µs` starts a day                   |
//! | `d = v`, `d IN (…)`        | `day(d)` (date) | always: each value is its own partition  |
//! | `n >= 20`                  | `truncate[10]`  | 20 starts a bucket of ten                |
//! | `s LIKE 'ab%'`             | `truncate[3]`   | the prefix has at most 3 code points     |
//! | anything                   | `bucket[N]`     | never (except IS (NOT) NULL)             |
//!
//! AND / OR of exact parts are exact (three-valued logic composes); anything
//! `Unknown` is not.

use datafusion::arrow::array::Array;
use datafusion::common::ScalarValue;

use super::predicate::{BinaryOp, Predicate, SetOp, UnaryOp};
use super::project::{char_len, is_string_like, step};
use crate::spec::BoundPartitionField;
use crate::transform::Transform;

/// Whether `pred` (bound, NOT pushed down) is decided exactly by the partition
/// values of a spec with partition fields `fields`.
pub fn is_exact(pred: &Predicate, fields: &[BoundPartitionField<'_>]) -> bool {
    match pred {
        Predicate::True | Predicate::False => true,
        Predicate::Unknown | Predicate::Not(_) => false,
        Predicate::And(a, b) | Predicate::Or(a, b) => is_exact(a, fields) && is_exact(b, fields),
        Predicate::Unary { field, .. } | Predicate::Binary { field, .. } | Predicate::Set { field, .. } => fields
            .iter()
            .filter(|f| f.field.source_id == *field)
            .any(|f| leaf_is_exact(pred, f.field.transform) && !float_comparison(pred, f)),
    }
}

/// A comparison on a float partition value: DataFusion compares floats in
/// IEEE total order (`-0.0 < 0.0`), SQL calls the zeros equal, and pruning
/// keeps files under either reading (`evaluate`), so the partition value
/// cannot decide such a filter.
fn float_comparison(pred: &Predicate, f: &BoundPartitionField<'_>) -> bool {
    f.result_type.is_floating() && !matches!(pred, Predicate::Unary { .. })
}

/// Whether every row of a file with partition values `partition` (in the
/// spec's field order) matches `pred`, decided by those values alone (so a
/// DELETE can drop the file without reading it).
pub fn all_rows_match(pred: &Predicate, fields: &[BoundPartitionField<'_>], partition: &[ScalarValue]) -> bool {
    if matches!(pred, Predicate::True) {
        return true;
    }
    if !is_exact(pred, fields) {
        return false;
    }
    let projected = super::project_inclusive(pred, fields);
    let column = |id: i32| {
        let idx = fields.iter().position(|f| f.field.field_id == id)?;
        partition.get(idx)?.to_array().ok()
    };
    matches!(super::evaluate(&projected, 1, &column), Ok(m) if m.is_valid(0) && m.value(0))
}

fn leaf_is_exact(pred: &Predicate, transform: Transform) -> bool {
    if transform == Transform::Void {
        return false;
    }
    if transform == Transform::Identity {
        return true;
    }
    match pred {
        Predicate::Unary {
            op: UnaryOp::IsNull | UnaryOp::NotNull,
            ..
        } => true,
        Predicate::Binary { op, literal, .. } => binary_is_exact(transform, *op, literal),
        Predicate::Set {
            op: SetOp::In,
            literals,
            ..
        } => literals.iter().all(|l| binary_is_exact(transform, BinaryOp::Eq, l)),
        _ => false,
    }
}

fn binary_is_exact(transform: Transform, op: BinaryOp, v: &ScalarValue) -> bool {
    if matches!(transform, Transform::Bucket(_)) {
        return false;
    }
    if let Transform::Truncate(width) = transform
        && is_string_like(v)
    {
        return matches!(op, BinaryOp::StartsWith | BinaryOp::NotStartsWith)
            && char_len(v).is_some_and(|n| n <= width as usize);
    }
    // Order-preserving transforms of ordered domains (time units, truncate on numbers).
    let starts = |x: &ScalarValue| starts_partition(transform, x);
    match op {
        BinaryOp::GtEq | BinaryOp::Lt => starts(v),
        BinaryOp::Gt | BinaryOp::LtEq => step(v, 1).is_some_and(|n| starts(&n)),
        BinaryOp::Eq => starts(v) && step(v, 1).is_some_and(|n| starts(&n)),
        _ => false,
    }
}

/// `v` is the smallest value mapping to its partition: `t(v - 1) < t(v)`.
fn starts_partition(transform: Transform, v: &ScalarValue) -> bool {
    let Ok(here) = transform.apply_scalar(v) else {
        return false;
    };
    match step(v, -1) {
        Some(prev) => transform.apply_scalar(&prev).is_ok_and(|p| p != here),
        None => false,
    }
}
