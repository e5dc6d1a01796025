//! DELETE and UPDATE never touch more rows than asked.
//!
//! DataFusion 55 gives a table provider the filters of the *optimized*
//! `DELETE` / `UPDATE` plan, and "no filter" also when the optimizer folded
//! the condition away (`WHERE false` becomes an empty relation), when a
//! subquery was decorrelated into a join (apache/datafusion#24567), or when
//! the condition is on another table (`UPDATE … FROM`). Each of those reads
//! as "every row".
//!
//! This analyzer rule runs before the optimizer. For a DELETE or UPDATE on a
//! hidden-partitions table it records the condition and the assignments as
//! written ([`DmlIntent`]) in the provider the statement will be planned
//! with; the provider acts on that record only and refuses a statement
//! that has none. Shapes whose rows the record could not describe are
//! refused here, with the way out:
//!
//! | statement                          | outcome                          |
//! |------------------------------------|----------------------------------|
//! | `DELETE FROM t [WHERE c]`          | recorded                         |
//! | `UPDATE t [AS a] SET … [WHERE c]`  | recorded                         |
//! | a subquery in the condition        | refused: use MERGE INTO          |
//! | `UPDATE t SET … FROM s …`          | refused: use MERGE INTO          |
//! | `DELETE … LIMIT n`                 | refused                          |
//! | an already optimized plan (Ballista scheduler) | refused: run it locally |
//!
//! The statement layer runs `UPDATE … FROM s` and `DELETE … WHERE k IN
//! (SELECT …)` (under AND) as the MERGE they mean before they get here
//! (`sql::dml_as_merge`); the other shapes with subqueries reach this rule.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{TableReference, plan_err};
use datafusion::datasource::{provider_as_source, source_as_provider};
use datafusion::error::Result;
use datafusion::logical_expr::{Expr, LogicalPlan, WriteOp};
use datafusion::optimizer::AnalyzerRule;

use crate::provider::HiddenPartitionsTable;
use crate::provider::dml::DmlIntent;

pub use crate::provider::dml::DML_CHECK_NAME;

#[derive(Debug, Default)]
pub struct DmlCheck;

fn has_subquery(plan: &LogicalPlan) -> Result<bool> {
    let mut found = false;
    plan.apply(|node| {
        if matches!(node, LogicalPlan::Subquery(_)) {
            found = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        for e in node.expressions() {
            if e.exists(|e| {
                Ok(matches!(
                    e,
                    Expr::Exists(_) | Expr::InSubquery(_) | Expr::ScalarSubquery(_)
                ))
            })? {
                found = true;
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(found)
}

/// `Projection` (UPDATE only) over `Filter` (with WHERE) over the table's
/// scan, possibly under an alias: the shapes DataFusion's SQL planner
/// builds for a single-table DELETE or UPDATE.
fn intent(op: &WriteOp, input: &LogicalPlan, table: &TableReference) -> Result<DmlIntent> {
    let what = if *op == WriteOp::Delete { "DELETE" } else { "UPDATE" };
    let (assignments, below) = match (op, input) {
        (WriteOp::Update, LogicalPlan::Projection(p)) => {
            let mut assignments = Vec::new();
            for e in &p.expr {
                let Expr::Alias(alias) = e else {
                    return plan_err!("UPDATE of table {table}: unexpected assignment {e}; nothing was changed");
                };
                let unchanged = matches!(alias.expr.as_ref(), Expr::Column(c) if c.name == alias.name);
                if !unchanged {
                    assignments.push((alias.name.clone(), alias.expr.as_ref().clone()));
                }
            }
            (assignments, p.input.as_ref())
        }
        (WriteOp::Update, other) => {
            return plan_err!(
                "UPDATE of table {table}: cannot tell which rows it changes (plan {}); nothing was changed",
                other.display()
            );
        }
        (_, other) => (Vec::new(), other),
    };
    let (condition, scan) = match below {
        LogicalPlan::Filter(f) => (Some(f.predicate.clone()), f.input.as_ref()),
        other => (None, other),
    };
    let scan = match scan {
        LogicalPlan::SubqueryAlias(a) => a.input.as_ref(),
        other => other,
    };
    match scan {
        LogicalPlan::TableScan(s) if s.table_name.resolved_eq(table) && s.filters.is_empty() && s.fetch.is_none() => {
            Ok(DmlIntent { condition, assignments })
        }
        LogicalPlan::TableScan(s) if s.table_name.resolved_eq(table) => plan_err!(
            "{what} on table {table} reached the planner already optimized (its condition was pushed into the scan, as a Ballista scheduler receives it), so the condition as written is not known; nothing was changed ({what} must run in a local session)"
        ),
        LogicalPlan::Join(_) => plan_err!(
            "UPDATE … FROM on table {table} is not supported: its condition is on another table, and DataFusion would not pass it to this one; write it as MERGE INTO {table} USING <source> s ON … WHEN MATCHED THEN UPDATE SET …"
        ),
        LogicalPlan::Limit(_) => {
            plan_err!("{what} … LIMIT on table {table} is not supported: the table would not know which rows to keep")
        }
        other => plan_err!(
            "{what} on table {table}: cannot tell which rows it selects (plan {}); nothing was changed",
            other.display()
        ),
    }
}

impl AnalyzerRule for DmlCheck {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up(|node| {
            let LogicalPlan::Dml(dml) = &node else {
                return Ok(Transformed::no(node));
            };
            if !matches!(dml.op, WriteOp::Delete | WriteOp::Update) {
                return Ok(Transformed::no(node));
            }
            let Ok(provider) = source_as_provider(&dml.target) else {
                return Ok(Transformed::no(node));
            };
            let ours = provider.downcast_ref::<HiddenPartitionsTable>();
            let foreign = provider
                .downcast_ref::<crate::formats::ForeignTable>()
                .filter(|f| f.is_writable());
            if ours.is_none() && foreign.is_none() {
                return Ok(Transformed::no(node));
            }
            let name = &dml.table_name;
            if has_subquery(&dml.input)? {
                let (what, then) = if dml.op == WriteOp::Delete {
                    ("DELETE", "DELETE")
                } else {
                    ("UPDATE", "UPDATE SET …")
                };
                return plan_err!(
                    "{what} on table {name} with a subquery in its condition is not supported: DataFusion would not pass that condition to the table and every row would be affected (apache/datafusion#24567); write it as MERGE INTO {name} USING (<subquery>) s ON … WHEN MATCHED THEN {then}"
                );
            }
            let intent = intent(&dml.op, &dml.input, name)?;
            let mut dml = dml.clone();
            dml.target = match (ours, foreign) {
                (Some(table), _) => provider_as_source(Arc::new(table.clone().with_dml(intent))),
                (None, Some(table)) => provider_as_source(Arc::new(table.clone().with_dml(intent))),
                (None, None) => return Ok(Transformed::no(node)),
            };
            Ok(Transformed::yes(LogicalPlan::Dml(dml)))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        DML_CHECK_NAME
    }
}
