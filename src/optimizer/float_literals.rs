//! Decimal literals beside floats are floats.
//!
//! Our sessions parse `12345678901234567.89` as an exact decimal (as Spark,
//! Trino and DuckDB do; `sql_parser.parse_float_as_decimal`). DataFusion's
//! type coercion then prefers the decimal in a comparison with a float, and
//! casts the float column to `DECIMAL(30, 15)`: `NaN` and infinities fail,
//! large values overflow, small ones lose digits. Spark compares a decimal
//! with a double as doubles. This analyzer rule, run before type coercion,
//! turns a decimal literal into a `DOUBLE` where it meets a float operand:
//!
//! | expression              | literal becomes               |
//! |-------------------------|-------------------------------|
//! | `f = 0.1` (f DOUBLE)    | `0.1` DOUBLE                  |
//! | `f IN (0.5, 1.5)`       | both DOUBLE                   |
//! | `f BETWEEN 0.5 AND 2.5` | both DOUBLE                   |
//! | `coalesce(f, 0.0)`      | DOUBLE                        |
//! | `CASE WHEN … THEN f ELSE 0.0 END` | DOUBLE              |
//! | `d = 0.1` (d DECIMAL)   | unchanged: exact              |
//!
//! The double is parsed from the literal's digits, so it is the double the
//! literal names (what parsing it as a float gave before).
//!
//! Where a float is compared (`=`, `<>`, `<`, `<=`, `>`, `>=`, `BETWEEN`),
//! a negative zero constant (`CAST('-0.0' AS DOUBLE)`) becomes `0.0`: see
//! `zeros_unsigned`.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::Result;
use datafusion::logical_expr::expr::{Case, InList, ScalarFunction};
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

/// The name the rule is registered under.
pub const FLOAT_LITERALS_NAME: &str = "hidden_partitions_decimal_literals_beside_floats";

#[derive(Debug, Default)]
pub struct DecimalLiteralsBesideFloats;

impl AnalyzerRule for DecimalLiteralsBesideFloats {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            let schema = merge_schema(&node.inputs());
            let rewritten = node.map_expressions(|e| rewrite(e, &schema))?;
            if rewritten.transformed {
                rewritten.transform_data(|p| p.recompute_schema().map(Transformed::yes))
            } else {
                Ok(rewritten)
            }
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        FLOAT_LITERALS_NAME
    }
}

fn rewrite(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    expr.transform_up(|e| {
        Ok(match e {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
                let mut sides = [*left, *right];
                let mut changed = floats_beside_floats(&mut sides, schema);
                if is_comparison(op) {
                    changed |= zeros_unsigned(&mut sides, schema);
                }
                let [left, right] = sides;
                changed.then_transformed(Expr::BinaryExpr(BinaryExpr::new(Box::new(left), op, Box::new(right))))
            }
            Expr::Between(Between {
                expr,
                negated,
                low,
                high,
            }) => {
                let mut parts = [*expr, *low, *high];
                let mut changed = floats_beside_floats(&mut parts, schema);
                changed |= zeros_unsigned(&mut parts, schema);
                let [expr, low, high] = parts;
                changed.then_transformed(Expr::Between(Between::new(
                    Box::new(expr),
                    negated,
                    Box::new(low),
                    Box::new(high),
                )))
            }
            Expr::InList(InList { expr, list, negated }) => {
                let mut all = Vec::with_capacity(list.len() + 1);
                all.push(*expr);
                all.extend(list);
                let changed = floats_beside_floats(&mut all, schema);
                let expr = all.remove(0);
                changed.then_transformed(Expr::InList(InList::new(Box::new(expr), all, negated)))
            }
            Expr::Case(Case {
                expr,
                when_then_expr,
                else_expr,
            }) => {
                let (whens, thens): (Vec<_>, Vec<_>) = when_then_expr.into_iter().map(|(w, t)| (*w, *t)).unzip();
                let mut results: Vec<Expr> = thens;
                let has_else = else_expr.is_some();
                results.extend(else_expr.map(|e| *e));
                let mut changed = floats_beside_floats(&mut results, schema);
                let else_expr = if has_else { results.pop().map(Box::new) } else { None };
                let (expr, whens) = match expr {
                    Some(e) => {
                        let mut compared = Vec::with_capacity(whens.len() + 1);
                        compared.push(*e);
                        compared.extend(whens);
                        changed |= floats_beside_floats(&mut compared, schema);
                        let e = compared.remove(0);
                        (Some(Box::new(e)), compared)
                    }
                    None => (None, whens),
                };
                let when_then_expr = whens
                    .into_iter()
                    .zip(results)
                    .map(|(w, t)| (Box::new(w), Box::new(t)))
                    .collect();
                changed.then_transformed(Expr::Case(Case::new(expr, when_then_expr, else_expr)))
            }
            Expr::ScalarFunction(ScalarFunction { func, mut args }) => {
                let changed = floats_beside_floats(&mut args, schema);
                changed.then_transformed(Expr::ScalarFunction(ScalarFunction::new_udf(func, args)))
            }
            other => Transformed::no(other),
        })
    })
}

trait ThenTransformed {
    fn then_transformed(self, e: Expr) -> Transformed<Expr>;
}

impl ThenTransformed for bool {
    fn then_transformed(self, e: Expr) -> Transformed<Expr> {
        if self { Transformed::yes(e) } else { Transformed::no(e) }
    }
}

/// If one of `exprs` is a float, make each decimal literal among them a
/// `DOUBLE` literal. Whether anything changed.
fn floats_beside_floats(exprs: &mut [Expr], schema: &DFSchema) -> bool {
    let has_float = exprs
        .iter()
        .any(|e| !is_decimal_literal(e) && e.get_type(schema).is_ok_and(|t| is_float(&t)));
    if !has_float {
        return false;
    }
    let mut changed = false;
    for e in exprs.iter_mut() {
        if let Some(f) = as_double(e) {
            *e = Expr::Literal(ScalarValue::Float64(Some(f)), None);
            changed = true;
        }
    }
    changed
}

fn is_comparison(op: Operator) -> bool {
    matches!(
        op,
        Operator::Eq | Operator::NotEq | Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq
    )
}

/// Where a float is compared, a constant `-0.0` (`CAST('-0.0' AS DOUBLE)`)
/// becomes `0.0`. DataFusion compares floats with the zeros made equal, as
/// SQL does, but its simplifier reasons about literals in Arrow's total
/// order, where they differ: `x NOT IN (0.0, -0.0) AND x = CAST('-0.0' AS
/// DOUBLE)` lost its first half and matched `-0.0`. Whether anything changed.
fn zeros_unsigned(exprs: &mut [Expr], schema: &DFSchema) -> bool {
    let has_float = exprs.iter().any(|e| e.get_type(schema).is_ok_and(|t| is_float(&t)));
    if !has_float {
        return false;
    }
    let mut changed = false;
    for e in exprs.iter_mut() {
        let constant = match e {
            Expr::Literal(v, _) => Some(v.clone()),
            Expr::Cast(c) => cast_literal(&c.expr, c.field.data_type()),
            Expr::TryCast(c) => cast_literal(&c.expr, c.field.data_type()),
            _ => None,
        };
        let unsigned = match constant {
            Some(ScalarValue::Float64(Some(v))) if v == 0.0 && v.is_sign_negative() => ScalarValue::Float64(Some(0.0)),
            Some(ScalarValue::Float32(Some(v))) if v == 0.0 && v.is_sign_negative() => ScalarValue::Float32(Some(0.0)),
            _ => continue,
        };
        *e = Expr::Literal(unsigned, None);
        changed = true;
    }
    changed
}

/// The value of a literal cast to `to`.
fn cast_literal(e: &Expr, to: &DataType) -> Option<ScalarValue> {
    match e {
        Expr::Literal(v, _) => v.cast_to(to).ok(),
        _ => None,
    }
}

fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

fn is_decimal_literal(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Literal(
            ScalarValue::Decimal128(Some(_), _, _) | ScalarValue::Decimal256(Some(_), _, _),
            _
        )
    )
}

/// The double a decimal literal names, parsed from its digits.
fn as_double(e: &Expr) -> Option<f64> {
    match e {
        Expr::Literal(v @ (ScalarValue::Decimal128(Some(_), _, _) | ScalarValue::Decimal256(Some(_), _, _)), _) => {
            v.to_string().parse().ok()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::logical_expr::{col, lit};

    fn schema() -> DFSchema {
        DFSchema::try_from(Schema::new(vec![
            Field::new("f", DataType::Float64, true),
            Field::new("d", DataType::Decimal128(10, 2), true),
        ]))
        .unwrap()
    }

    fn dec(unscaled: i128, scale: i8) -> Expr {
        lit(ScalarValue::Decimal128(Some(unscaled), 38, scale))
    }

    #[test]
    fn decimal_literals_beside_floats_become_doubles() {
        let s = schema();
        let e = rewrite(col("f").eq(dec(-1, 1)), &s).unwrap().data;
        assert_eq!(e, col("f").eq(lit(-0.1f64)));
        let e = rewrite(col("f").in_list(vec![dec(5, 1), dec(15, 1)], false), &s)
            .unwrap()
            .data;
        assert_eq!(e, col("f").in_list(vec![lit(0.5f64), lit(1.5f64)], false));
        // Exact where the other side is a decimal.
        let e = rewrite(col("d").eq(dec(1, 1)), &s).unwrap().data;
        assert_eq!(e, col("d").eq(dec(1, 1)));
        // Digits beyond a double's precision give the nearest double.
        let e = rewrite(col("f").gt(dec(1234567890123456789, 2)), &s).unwrap().data;
        assert_eq!(e, col("f").gt(lit(12345678901234567.89f64)));
    }
}
