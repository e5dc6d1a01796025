//! Evaluate a projected predicate over partition-value columns, one Arrow
//! kernel call per leaf for a whole manifest.
//!
//! Three-valued: a leaf on a NULL partition value is NULL, and only rows
//! whose result is `true` survive. That matches SQL: a NULL partition value
//! means every source value in the file is NULL, where `x < 5` is NULL too.
//!
//! Floats: Arrow's kernels compare in IEEE total order (`-0.0 < 0.0`), SQL
//! calls the two zeros equal. A comparison on a float partition value is
//! true when it holds for the value or for the value with the other sign of
//! zero, so a file is kept under either reading (`f = 0.0` keeps the `-0.0`
//! partition, `f < 0.0` keeps it too); such leaves are never exact
//! (`expr::exact`), so the rows themselves are filtered by DataFusion.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, Scalar};
use datafusion::arrow::compute::kernels::cmp;
use datafusion::arrow::compute::{and_kleene, is_not_null, is_null, not, or_kleene};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::ScalarValue;

use super::predicate::{BinaryOp, Predicate, SetOp, UnaryOp};
use crate::error::Result;

/// Evaluate `pred` over `num_rows` rows whose field `id` is `column(id)`.
/// A field with no column (or an unsupported comparison) evaluates to true.
pub fn evaluate(pred: &Predicate, num_rows: usize, column: &dyn Fn(i32) -> Option<ArrayRef>) -> Result<BooleanArray> {
    let all = |v: bool| BooleanArray::from(vec![v; num_rows]);
    Ok(match pred {
        Predicate::True | Predicate::Unknown => all(true),
        Predicate::False => all(false),
        Predicate::And(a, b) => and_kleene(&evaluate(a, num_rows, column)?, &evaluate(b, num_rows, column)?)?,
        Predicate::Or(a, b) => or_kleene(&evaluate(a, num_rows, column)?, &evaluate(b, num_rows, column)?)?,
        Predicate::Not(a) => not(&evaluate(a, num_rows, column)?)?,
        Predicate::Unary { op, field } => {
            let Some(c) = column(*field) else { return Ok(all(true)) };
            match op {
                UnaryOp::IsNull => is_null(&c)?,
                UnaryOp::NotNull => is_not_null(&c)?,
                UnaryOp::IsNan => nan(&c, true).unwrap_or_else(|| all(true)),
                UnaryOp::NotNan => nan(&c, false).unwrap_or_else(|| all(true)),
            }
        }
        Predicate::Binary { op, field, literal } => {
            let Some(c) = column(*field) else { return Ok(all(true)) };
            either_zero(&c, |c| compare(c, *op, literal))?.unwrap_or_else(|| all(true))
        }
        Predicate::Set { op, field, literals } => {
            let Some(c) = column(*field) else { return Ok(all(true)) };
            let found = either_zero(&c, |c| {
                Ok(match (op, in_set(c, literals)?) {
                    (SetOp::In, found) => found,
                    (SetOp::NotIn, found) => found.map(|f| not(&f)).transpose()?,
                })
            })?;
            found.unwrap_or_else(|| all(true))
        }
    })
}

/// `leaf(c)`, or for a float column with a zero, `leaf(c) OR leaf(c with
/// the zeros' signs flipped)`: true when either reading may match.
fn either_zero(c: &ArrayRef, leaf: impl Fn(&ArrayRef) -> Result<Option<BooleanArray>>) -> Result<Option<BooleanArray>> {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::{Float32Type, Float64Type};
    let flipped: ArrayRef = match c.data_type() {
        DataType::Float64 if c.as_primitive::<Float64Type>().iter().any(|v| v == Some(0.0)) => Arc::new(
            c.as_primitive::<Float64Type>()
                .unary::<_, Float64Type>(|v| if v == 0.0 { -v } else { v }),
        ) as ArrayRef,
        DataType::Float32 if c.as_primitive::<Float32Type>().iter().any(|v| v == Some(0.0)) => Arc::new(
            c.as_primitive::<Float32Type>()
                .unary::<_, Float32Type>(|v| if v == 0.0 { -v } else { v }),
        ) as ArrayRef,
        _ => return leaf(c),
    };
    match (leaf(c)?, leaf(&flipped)?) {
        (Some(a), Some(b)) => Ok(Some(or_kleene(&a, &b)?)),
        _ => Ok(None),
    }
}

/// `c IN (literals)`, NULL where `c` is NULL. Values are compared in the Arrow
/// row format (total order, like the engine's `=`): one hash probe per row.
fn in_set(c: &ArrayRef, literals: &[ScalarValue]) -> Result<Option<BooleanArray>> {
    let mut typed = Vec::with_capacity(literals.len());
    for l in literals {
        match l.cast_to(c.data_type()) {
            Ok(v) if !v.is_null() => typed.push(v),
            _ => return Ok(None),
        }
    }
    if typed.is_empty() {
        let none = vec![false; c.len()];
        return Ok(Some(BooleanArray::new(none.into(), c.logical_nulls())));
    }
    let converter = RowConverter::new(vec![SortField::new(c.data_type().clone())])?;
    let wanted = converter.convert_columns(&[ScalarValue::iter_to_array(typed)?])?;
    let set: HashSet<&[u8]> = (0..wanted.num_rows()).map(|i| wanted.row(i).data()).collect();
    let rows = converter.convert_columns(std::slice::from_ref(c))?;
    let found: BooleanArray = (0..c.len())
        .map(|i| {
            if c.is_null(i) {
                None
            } else {
                Some(set.contains(rows.row(i).data()))
            }
        })
        .collect();
    Ok(Some(found))
}

fn nan(c: &ArrayRef, want: bool) -> Option<BooleanArray> {
    use datafusion::arrow::array::{Float32Array, Float64Array};
    let out: BooleanArray = match c.data_type() {
        DataType::Float32 => c
            .as_any()
            .downcast_ref::<Float32Array>()?
            .iter()
            .map(|v| v.map(|f| f.is_nan() == want))
            .collect(),
        DataType::Float64 => c
            .as_any()
            .downcast_ref::<Float64Array>()?
            .iter()
            .map(|v| v.map(|f| f.is_nan() == want))
            .collect(),
        _ => BooleanArray::from(vec![!want; c.len()]),
    };
    Some(out)
}

/// `column op literal`, or `None` when the literal can't be put in the column's type.
fn compare(c: &ArrayRef, op: BinaryOp, literal: &ScalarValue) -> Result<Option<BooleanArray>> {
    let Ok(lit) = literal.cast_to(c.data_type()) else {
        return Ok(None);
    };
    if lit.is_null() {
        return Ok(None);
    }
    let scalar = Scalar::new(lit.to_array()?);
    Ok(Some(match op {
        BinaryOp::Eq => cmp::eq(c, &scalar)?,
        BinaryOp::NotEq => cmp::neq(c, &scalar)?,
        BinaryOp::Lt => cmp::lt(c, &scalar)?,
        BinaryOp::LtEq => cmp::lt_eq(c, &scalar)?,
        BinaryOp::Gt => cmp::gt(c, &scalar)?,
        BinaryOp::GtEq => cmp::gt_eq(c, &scalar)?,
        BinaryOp::StartsWith | BinaryOp::NotStartsWith => {
            let Ok(sw) = datafusion::arrow::compute::kernels::comparison::starts_with(c, &scalar) else {
                return Ok(None);
            };
            if op == BinaryOp::StartsWith { sw } else { not(&sw)? }
        }
    }))
}
