//! Inclusive projection: a predicate on source columns → a predicate on
//! partition values that is true for every file that may hold a matching row.
//!
//! | source predicate      | `identity`  | `day(ts)` / `truncate[W]` (ints)  | `bucket[N]`          |
//! |-----------------------|-------------|------------------------------------|----------------------|
//! | `x = v`               | `p = v`     | `p = t(v)`                         | `p = bucket(v)`      |
//! | `x < v`               | `p < v`     | `p <= t(v - 1)`                    | true                 |
//! | `x <= v`              | `p <= v`    | `p <= t(v)`                        | true                 |
//! | `x > v`               | `p > v`     | `p >= t(v + 1)`                    | true                 |
//! | `x >= v`              | `p >= v`    | `p >= t(v)`                        | true                 |
//! | `x <> v`, `NOT IN`    | same        | true                               | true                 |
//! | `x IN (a, b)`         | same        | `p IN (t(a), t(b))`                | `p IN (bucket(a), …)`|
//! | `x IS [NOT] NULL`     | same        | same                               | same                 |
//! | `x LIKE 'ab%'`        | same        | `truncate[W]` on strings: `p LIKE 'ab%'` if 2 < W, else `p = t('ab…')` | true |
//!
//! Strings under truncate compare by prefix: `x < v` gives `p <= t(v)`.
//! Every transform here is order preserving and floors pre-1970 values, so
//! the one-unit shift for strict bounds is exact. `void` projects to true.
//! Anything unknown projects to true: pruning may keep too much, never too
//! little.

use datafusion::common::ScalarValue;

use super::predicate::{BinaryOp, Predicate, SetOp, UnaryOp};
use crate::spec::BoundPartitionField;
use crate::transform::Transform;

/// Project a NOT-free predicate onto the partition fields of one spec.
pub fn project_inclusive(pred: &Predicate, fields: &[BoundPartitionField<'_>]) -> Predicate {
    match pred {
        Predicate::True | Predicate::Unknown => Predicate::True,
        Predicate::False => Predicate::False,
        Predicate::And(a, b) => Predicate::and(project_inclusive(a, fields), project_inclusive(b, fields)),
        Predicate::Or(a, b) => Predicate::or(project_inclusive(a, fields), project_inclusive(b, fields)),
        // rewrite_not runs first; a NOT here is unknown territory.
        Predicate::Not(_) => Predicate::True,
        Predicate::Unary { field, .. } | Predicate::Binary { field, .. } | Predicate::Set { field, .. } => {
            Predicate::and_all(
                fields
                    .iter()
                    .filter(|f| f.field.source_id == *field)
                    .map(|f| project_leaf(pred, f).unwrap_or(Predicate::True)),
            )
        }
    }
}

fn project_leaf(pred: &Predicate, pf: &BoundPartitionField<'_>) -> Option<Predicate> {
    let transform = pf.field.transform;
    let field = pf.field.field_id;
    match pred {
        Predicate::Unary { op, .. } => match (transform, op) {
            (Transform::Void, _) => None,
            (_, UnaryOp::IsNull | UnaryOp::NotNull) => Some(Predicate::Unary { op: *op, field }),
            (Transform::Identity, _) => Some(Predicate::Unary { op: *op, field }),
            _ => None,
        },
        Predicate::Binary { op, literal, .. } => project_binary(transform, *op, literal, field),
        Predicate::Set {
            op: SetOp::In,
            literals,
            ..
        } => {
            if transform == Transform::Void {
                return None;
            }
            // Distinct first: many keys share few partition values (bucket).
            let mut seen = std::collections::HashSet::new();
            let mut out: Vec<ScalarValue> = transform
                .apply_scalars(literals)
                .ok()?
                .into_iter()
                .filter(|v| seen.insert(v.clone()))
                .collect();
            out.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            Some(Predicate::Set {
                op: SetOp::In,
                field,
                literals: out,
            })
        }
        Predicate::Set {
            op: SetOp::NotIn,
            literals,
            ..
        } => (transform == Transform::Identity).then(|| Predicate::Set {
            op: SetOp::NotIn,
            field,
            literals: literals.clone(),
        }),
        _ => None,
    }
}

fn project_binary(transform: Transform, op: BinaryOp, v: &ScalarValue, field: i32) -> Option<Predicate> {
    let leaf = |op: BinaryOp, literal: ScalarValue| Some(Predicate::Binary { op, field, literal });
    match transform {
        Transform::Void => None,
        Transform::Identity => leaf(op, v.clone()),
        Transform::Bucket(_) => match op {
            BinaryOp::Eq => leaf(BinaryOp::Eq, transform.apply_scalar(v).ok()?),
            _ => None,
        },
        Transform::Truncate(width) if is_string_like(v) => {
            let t = |x: &ScalarValue| transform.apply_scalar(x).ok();
            match op {
                BinaryOp::Lt | BinaryOp::LtEq => leaf(BinaryOp::LtEq, t(v)?),
                BinaryOp::Gt | BinaryOp::GtEq => leaf(BinaryOp::GtEq, t(v)?),
                BinaryOp::Eq => leaf(BinaryOp::Eq, t(v)?),
                BinaryOp::StartsWith => {
                    let len = char_len(v)?;
                    if len < width as usize {
                        leaf(BinaryOp::StartsWith, v.clone())
                    } else {
                        leaf(BinaryOp::Eq, t(v)?)
                    }
                }
                BinaryOp::NotStartsWith => {
                    let len = char_len(v)?;
                    (len <= width as usize).then(|| Predicate::Binary {
                        op,
                        field,
                        literal: v.clone(),
                    })
                }
                BinaryOp::NotEq => None,
            }
        }
        // Order-preserving transforms of ordered domains: truncate on numbers, time units.
        _ => {
            let t = |x: &ScalarValue| transform.apply_scalar(x).ok();
            match op {
                BinaryOp::Lt => leaf(BinaryOp::LtEq, t(&step(v, -1)?)?),
                BinaryOp::LtEq => leaf(BinaryOp::LtEq, t(v)?),
                BinaryOp::Gt => leaf(BinaryOp::GtEq, t(&step(v, 1)?)?),
                BinaryOp::GtEq => leaf(BinaryOp::GtEq, t(v)?),
                BinaryOp::Eq => leaf(BinaryOp::Eq, t(v)?),
                _ => None,
            }
        }
    }
}

pub(crate) fn is_string_like(v: &ScalarValue) -> bool {
    matches!(
        v,
        ScalarValue::Utf8(_)
            | ScalarValue::LargeUtf8(_)
            | ScalarValue::Utf8View(_)
            | ScalarValue::Binary(_)
            | ScalarValue::LargeBinary(_)
            | ScalarValue::BinaryView(_)
            | ScalarValue::FixedSizeBinary(_, _)
    )
}

/// Length in code points (strings) or bytes (binary).
pub(crate) fn char_len(v: &ScalarValue) -> Option<usize> {
    match v {
        ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => {
            Some(s.chars().count())
        }
        ScalarValue::Binary(Some(b)) | ScalarValue::LargeBinary(Some(b)) | ScalarValue::BinaryView(Some(b)) => {
            Some(b.len())
        }
        _ => None,
    }
}

/// The next value up (`delta = 1`) or down (`-1`) in the literal's own unit;
/// `None` on overflow, so the caller prunes nothing.
pub(crate) fn step(v: &ScalarValue, delta: i64) -> Option<ScalarValue> {
    use ScalarValue::*;
    Some(match v {
        Int8(Some(x)) => Int8(Some(x.checked_add(delta as i8)?)),
        Int16(Some(x)) => Int16(Some(x.checked_add(delta as i16)?)),
        Int32(Some(x)) => Int32(Some(x.checked_add(delta as i32)?)),
        Int64(Some(x)) => Int64(Some(x.checked_add(delta)?)),
        Date32(Some(x)) => Date32(Some(x.checked_add(delta as i32)?)),
        Decimal128(Some(x), p, s) => Decimal128(Some(x.checked_add(delta as i128)?), *p, *s),
        TimestampSecond(Some(x), tz) => TimestampSecond(Some(x.checked_add(delta)?), tz.clone()),
        TimestampMillisecond(Some(x), tz) => TimestampMillisecond(Some(x.checked_add(delta)?), tz.clone()),
        TimestampMicrosecond(Some(x), tz) => TimestampMicrosecond(Some(x.checked_add(delta)?), tz.clone()),
        TimestampNanosecond(Some(x), tz) => TimestampNanosecond(Some(x.checked_add(delta)?), tz.clone()),
        Time64Microsecond(Some(x)) => Time64Microsecond(Some(x.checked_add(delta)?)),
        Time64Nanosecond(Some(x)) => Time64Nanosecond(Some(x.checked_add(delta)?)),
        _ => return None,
    })
}
