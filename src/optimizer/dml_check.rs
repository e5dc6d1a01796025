//! DELETE and UPDATE never touch more rows than asked.
//!
//! DataFusion 55 hands a table provider the conditions of `DELETE … WHERE`
//! and `UPDATE … WHERE`, except those with a subquery (`IN (SELECT …)`,
//! `EXISTS (…)`, a scalar subquery): after decorrelation they become joins
//! and the provider receives no condition at all — indistinguishable from
//! "every row" (apache/datafusion#24567). This analyzer rule runs before
//! that, and refuses such statements on hidden-partitions tables with an
//! error that names the way out (MERGE INTO).

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::source_as_provider;
use datafusion::error::Result;
use datafusion::logical_expr::{Expr, LogicalPlan, WriteOp};
use datafusion::optimizer::AnalyzerRule;

use crate::provider::HiddenPartitionsTable;

/// The name the rule is registered under.
pub const DML_CHECK_NAME: &str = "hidden_partitions_dml_subquery_check";

#[derive(Debug, Default)]
pub struct DmlSubqueryCheck;

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

impl AnalyzerRule for DmlSubqueryCheck {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        if let LogicalPlan::Dml(dml) = &plan
            && matches!(dml.op, WriteOp::Delete | WriteOp::Update)
            && source_as_provider(&dml.target).is_ok_and(|p| p.downcast_ref::<HiddenPartitionsTable>().is_some())
            && has_subquery(&dml.input)?
        {
            let what = if dml.op == WriteOp::Delete { "DELETE" } else { "UPDATE" };
            return datafusion::common::plan_err!(
                "{what} on table {} with a subquery in its condition is not supported: DataFusion would not pass that condition to the table and every row would be affected (apache/datafusion#24567); write it as MERGE INTO {} USING (<subquery>) s ON … WHEN MATCHED THEN {}",
                dml.table_name,
                dml.table_name,
                if dml.op == WriteOp::Delete {
                    "DELETE"
                } else {
                    "UPDATE SET …"
                }
            );
        }
        Ok(plan)
    }

    fn name(&self) -> &str {
        DML_CHECK_NAME
    }
}
