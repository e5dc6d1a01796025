//! Bind a *physical* filter to field ids: the form in which filters reach the
//! scan during physical planning and execution — including dynamic filters
//! from hash joins (`k >= 3 AND k <= 9 AND k IN (3, 5, 9)`, per partition
//! in a `CASE` when the join is partitioned) and TopK
//! (`ts > 2024-05-01 12:00`), whose current state is snapshotted first.
//!
//! Same rules as the logical binder: columns by name against the table
//! schema, literals converted only when exact, widening casts, and a key
//! function of a column (`CAST(ts AS DATE) IN (…)` from a join on a date)
//! as ranges of the column (`normalize`); everything else is `Unknown`.

use std::sync::Arc;

use datafusion::logical_expr::Operator;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{
    BinaryExpr, CaseExpr, CastExpr, Column, InListExpr, IsNotNullExpr, IsNullExpr, Literal, NotExpr, TryCastExpr,
};
use datafusion::physical_expr_common::physical_expr::snapshot_physical_expr;

use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Cast, Expr};
use datafusion::physical_expr::ScalarFunctionExpr;

use super::bind::{binary_op, exact_literal, function_set, is_widening, list_values, set};
use super::key_function::KeyFunction;
use super::normalize;
use super::predicate::{BinaryOp, Predicate, UnaryOp};
use crate::spec::Schema;

/// Snapshot dynamic parts of `expr` and bind it against `schema`.
pub fn bind_physical(expr: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Predicate {
    match snapshot_physical_expr(Arc::clone(expr)) {
        Ok(snapshot) => bind(&snapshot, schema),
        Err(_) => Predicate::Unknown,
    }
}

struct Term {
    field: i32,
    data_type: datafusion::arrow::datatypes::DataType,
}

fn term(expr: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Option<Term> {
    if let Some(c) = expr.downcast_ref::<Column>() {
        let f = schema.field_by_name(c.name())?;
        return Some(Term {
            field: f.id,
            data_type: f.field_type.to_arrow(),
        });
    }
    if let Some(c) = expr.downcast_ref::<CastExpr>() {
        let inner = term(c.expr(), schema)?;
        return is_widening(&inner.data_type, c.cast_type()).then_some(inner);
    }
    if let Some(c) = expr.downcast_ref::<TryCastExpr>() {
        let inner = term(c.expr(), schema)?;
        return is_widening(&inner.data_type, c.cast_type()).then_some(inner);
    }
    None
}

fn literal(expr: &Arc<dyn PhysicalExpr>) -> Option<datafusion::common::ScalarValue> {
    expr.downcast_ref::<Literal>().map(|l| l.value().clone())
}

fn bind(expr: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Predicate {
    if let Some(b) = expr.downcast_ref::<BinaryExpr>() {
        return match b.op() {
            Operator::And => Predicate::and(bind(b.left(), schema), bind(b.right(), schema)),
            Operator::Or => Predicate::or(bind(b.left(), schema), bind(b.right(), schema)),
            op => comparison(b.left(), *op, b.right(), schema),
        };
    }
    if let Some(n) = expr.downcast_ref::<NotExpr>() {
        return Predicate::Not(Box::new(bind(n.arg(), schema)));
    }
    if let Some(n) = expr.downcast_ref::<IsNullExpr>() {
        return term(n.arg(), schema).map_or(Predicate::Unknown, |t| Predicate::Unary {
            op: UnaryOp::IsNull,
            field: t.field,
        });
    }
    if let Some(n) = expr.downcast_ref::<IsNotNullExpr>() {
        return term(n.arg(), schema).map_or(Predicate::Unknown, |t| Predicate::Unary {
            op: UnaryOp::NotNull,
            field: t.field,
        });
    }
    if let Some(l) = expr.downcast_ref::<InListExpr>() {
        let values = match list_values(l.list().iter().map(literal), l.negated()) {
            Ok(values) => values,
            Err(decided) => return decided,
        };
        return match term(l.expr(), schema) {
            Some(t) => set(t.field, &t.data_type, values, l.negated()),
            None => function_set(values, l.negated(), |op, v| {
                function_comparison(l.expr(), op, v, schema)
            }),
        };
    }
    if let Some(c) = expr.downcast_ref::<CaseExpr>() {
        // A CASE is the value of one of its branches, so a row it passes
        // passes one of them: their disjunction. This is the form of a
        // partitioned hash join's dynamic filter, `CASE hash(k) % n WHEN 0
        // THEN <partition 0's keys> … ELSE false END`.
        let branches = c.when_then_expr().iter().map(|(_, then)| then).chain(c.else_expr());
        return Predicate::or_all(branches.map(|e| bind(e, schema)));
    }
    if let Some(v) = literal(expr) {
        return match v {
            datafusion::common::ScalarValue::Boolean(Some(true)) => Predicate::True,
            datafusion::common::ScalarValue::Boolean(Some(false)) => Predicate::False,
            _ => Predicate::Unknown,
        };
    }
    Predicate::Unknown
}

fn comparison(left: &Arc<dyn PhysicalExpr>, op: Operator, right: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Predicate {
    let Some(op) = binary_op(op) else {
        return Predicate::Unknown;
    };
    let (t, v, op) = match (term(left, schema), literal(right), term(right, schema), literal(left)) {
        (Some(t), Some(v), _, _) => (t, v, op),
        (_, _, Some(t), Some(v)) => (t, v, op.flip()),
        // A function of a column (a hash join's dynamic filter on a key
        // such as `CAST(ts AS DATE)`): maybe a range of the column.
        (None, Some(v), _, _) => return function_comparison(left, op, &v, schema),
        (_, _, None, Some(v)) => return function_comparison(right, op.flip(), &v, schema),
        _ => return Predicate::Unknown,
    };
    match exact_literal(v, &t.data_type) {
        Some(v) if !v.is_null() => Predicate::Binary {
            op,
            field: t.field,
            literal: v,
        },
        _ => Predicate::Unknown,
    }
}

/// `f(column) op value` for an invertible key function `f`
/// (`KeyFunction`), as the logical binder's `normalize` rewrites it.
fn function_comparison(
    function: &Arc<dyn PhysicalExpr>,
    op: BinaryOp,
    value: &ScalarValue,
    schema: &Schema,
) -> Predicate {
    if value.is_null() {
        return Predicate::Unknown;
    }
    let Some((column, Some(f))) = logical(function).as_ref().and_then(KeyFunction::of) else {
        return Predicate::Unknown;
    };
    let Some(field) = schema.field_by_name(&column.name) else {
        return Predicate::Unknown;
    };
    if !f.invertible(&field.field_type.to_arrow()) {
        return Predicate::Unknown;
    }
    let resolve = |e: &Expr| match e {
        Expr::Column(c) => schema.field_by_name(&c.name).map(|f| normalize::Column {
            field: f.id,
            data_type: f.field_type.to_arrow(),
        }),
        _ => None,
    };
    normalize::normalize(&f.apply(Expr::Column(column)), op, value, &resolve).unwrap_or(Predicate::Unknown)
}

/// A physical function of columns and literals as the logical expression
/// it was planned from (casts and scalar functions only).
fn logical(expr: &Arc<dyn PhysicalExpr>) -> Option<Expr> {
    if let Some(c) = expr.downcast_ref::<Column>() {
        return Some(Expr::Column(datafusion::common::Column::from_name(c.name())));
    }
    if let Some(l) = expr.downcast_ref::<Literal>() {
        return Some(Expr::Literal(l.value().clone(), None));
    }
    if let Some(c) = expr.downcast_ref::<CastExpr>() {
        return Some(Expr::Cast(Cast::new(
            Box::new(logical(c.expr())?),
            c.cast_type().clone(),
        )));
    }
    if let Some(f) = expr.downcast_ref::<ScalarFunctionExpr>() {
        let args = f.args().iter().map(logical).collect::<Option<Vec<_>>>()?;
        return Some(Expr::ScalarFunction(ScalarFunction::new_udf(
            Arc::new(f.fun().clone()),
            args,
        )));
    }
    None
}
