//! VARIANT values have no order and no equality, as in Spark.
//!
//! A variant is a struct of two binaries, and Arrow compares structs field
//! by field: the same JSON object with its keys in another order, or a
//! number written as `1` and as `1.0`, would compare unequal by its bytes
//! (`parse_json('{"a":1,"b":2}') = parse_json('{"b":2,"a":1}')` false,
//! `count(DISTINCT …)` counting both). Rather than answer wrongly, this
//! analyzer rule refuses, with the way out in the message:
//!
//! | refused on a VARIANT                                   | as in |
//! |--------------------------------------------------------|-------|
//! | `=`, `<>`, `<`, `<=`, `>`, `>=`, `IS [NOT] DISTINCT FROM`, `IN`, `BETWEEN` | `a = b` |
//! | `ORDER BY`, a window's `PARTITION BY` / `ORDER BY`      | `ORDER BY v` |
//! | `GROUP BY`, `DISTINCT`, `count(DISTINCT …)`, `min` / `max` | `SELECT DISTINCT v` |
//! | join keys (also `INTERSECT` / `EXCEPT`)                 | `JOIN … ON a.v = b.v` |
//!
//! `IS NULL`, `is_variant_null`, `variant_get` and `to_json` are unaffected:
//! compare `variant_get(v, '$.path', 'type')` or `to_json(v)` instead.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchemaRef, Result, plan_err};
use datafusion::logical_expr::{Distinct, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

use crate::variant::is_variant_field;

/// The rule's name in the session's analyzer.
pub const VARIANT_ORDER_NAME: &str = "hidden_partitions_variant_order";

/// Refuses comparing, ordering and grouping VARIANT values (module docs).
#[derive(Debug, Default)]
pub struct VariantOrder;

impl AnalyzerRule for VariantOrder {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.apply_with_subqueries(|node| {
            check(node)?;
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(plan)
    }

    fn name(&self) -> &str {
        VARIANT_ORDER_NAME
    }
}

/// The schema a node's expressions are written against.
fn expression_schema(node: &LogicalPlan) -> DFSchemaRef {
    match node.inputs().as_slice() {
        [input] => input.schema().clone(),
        _ => node.schema().clone(),
    }
}

fn is_variant(e: &Expr, schema: &DFSchemaRef) -> bool {
    e.to_field(schema.as_ref())
        .is_ok_and(|(_, field)| is_variant_field(&field))
}

fn refuse<T>(what: &str, e: &Expr) -> Result<T> {
    plan_err!(
        "VARIANT values cannot be compared, ordered or grouped ({what} on {e}): as in Spark, use a field of it, variant_get(v, '$.path', 'type'), or its JSON text, to_json(v)"
    )
}

fn check(node: &LogicalPlan) -> Result<()> {
    let schema = expression_schema(node);
    let variant = |e: &Expr| is_variant(e, &schema);
    match node {
        LogicalPlan::Sort(sort) => {
            if let Some(s) = sort.expr.iter().find(|s| variant(&s.expr)) {
                return refuse("ORDER BY", &s.expr);
            }
        }
        LogicalPlan::Aggregate(aggregate) => {
            for group in &aggregate.group_expr {
                let exprs: Vec<&Expr> = match group {
                    Expr::GroupingSet(set) => set.distinct_expr(),
                    other => vec![other],
                };
                if let Some(e) = exprs.into_iter().find(|e| variant(e)) {
                    return refuse("GROUP BY", e);
                }
            }
        }
        LogicalPlan::Distinct(Distinct::All(input)) => {
            if let Some(f) = input.schema().fields().iter().find(|f| is_variant_field(f)) {
                return refuse("DISTINCT", &Expr::Column(f.name().as_str().into()));
            }
        }
        LogicalPlan::Distinct(Distinct::On(on)) => {
            if let Some(e) = on.on_expr.iter().find(|e| variant(e)) {
                return refuse("DISTINCT ON", e);
            }
        }
        LogicalPlan::Join(join) => {
            let joined = node.schema();
            for (l, r) in &join.on {
                if is_variant(l, joined) || is_variant(r, joined) {
                    return refuse("a join key", l);
                }
            }
        }
        _ => {}
    }
    for e in node.expressions() {
        e.apply(|x| {
            match x {
                Expr::BinaryExpr(b) if is_comparison(b.op) && (variant(&b.left) || variant(&b.right)) => {
                    return refuse(&format!("`{}`", b.op), x);
                }
                Expr::InList(list) if variant(&list.expr) => return refuse("IN", x),
                Expr::Between(between) if variant(&between.expr) => return refuse("BETWEEN", x),
                Expr::AggregateFunction(f) => {
                    let name = f.func.name();
                    let ordering = matches!(name, "min" | "max");
                    if (f.params.distinct || ordering)
                        && let Some(arg) = f.params.args.iter().find(|a| variant(a))
                    {
                        let what = if ordering {
                            name.to_string()
                        } else {
                            format!("{name}(DISTINCT …)")
                        };
                        return refuse(&what, arg);
                    }
                }
                Expr::WindowFunction(w) => {
                    if let Some(p) = w.params.partition_by.iter().find(|p| variant(p)) {
                        return refuse("PARTITION BY", p);
                    }
                    if let Some(s) = w.params.order_by.iter().find(|s| variant(&s.expr)) {
                        return refuse("a window's ORDER BY", &s.expr);
                    }
                }
                _ => {}
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
    }
    Ok(())
}

fn is_comparison(op: Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}
