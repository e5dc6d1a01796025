//! Bind a *physical* filter to field ids: the form in which filters reach the
//! scan during physical planning and execution — including dynamic filters
//! from hash joins (`k >= 3 AND k <= 9 AND k IN (3, 5, 9)`) and TopK
//! (`ts > 2024-05-01 12:00`), whose current state is snapshotted first.
//!
//! Same rules as the logical binder: columns by name against the table
//! schema, literals converted only when exact, widening casts only;
//! everything else is `Unknown`.

use std::sync::Arc;

use datafusion::logical_expr::Operator;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{
    BinaryExpr, CastExpr, Column, InListExpr, IsNotNullExpr, IsNullExpr, Literal, NotExpr, TryCastExpr,
};
use datafusion::physical_expr_common::physical_expr::snapshot_physical_expr;

use super::bind::{binary_op, exact_literal, is_widening};
use super::predicate::{Predicate, SetOp, UnaryOp};
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
        let Some(t) = term(l.expr(), schema) else {
            return Predicate::Unknown;
        };
        let mut literals = Vec::with_capacity(l.list().len());
        for item in l.list() {
            let Some(v) = literal(item) else {
                return Predicate::Unknown;
            };
            if v.is_null() {
                if l.negated() {
                    return Predicate::False;
                }
                continue;
            }
            match exact_literal(v, &t.data_type) {
                Some(v) => literals.push(v),
                None => return Predicate::Unknown,
            }
        }
        let op = if l.negated() { SetOp::NotIn } else { SetOp::In };
        return Predicate::Set {
            op,
            field: t.field,
            literals,
        };
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
