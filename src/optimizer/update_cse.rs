//! UPDATE assignments stay readable by the table.
//!
//! DataFusion 55 hands `TableProvider::update` the assignments it finds in
//! the projection under `Dml: op=[Update]`. Common-subexpression
//! elimination can split that projection in two, e.g.
//!
//! | statement | projection after CSE |
//! |---|---|
//! | `SET n = coalesce(n, 0) + 1` | `CASE WHEN __common_expr_1 IS NOT NULL …` over `CAST(n AS Int64) AS __common_expr_1` |
//!
//! and the table then receives an expression over a column it does not
//! have. This wrapper runs DataFusion's rule everywhere except on UPDATE
//! plans, which are a single projection with nothing to share.

use std::sync::Arc;

use datafusion::common::tree_node::Transformed;
use datafusion::error::Result;
use datafusion::logical_expr::{LogicalPlan, WriteOp};
use datafusion::optimizer::common_subexpr_eliminate::CommonSubexprEliminate;
use datafusion::optimizer::optimizer::ApplyOrder;
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};

/// The name the wrapper is registered under.
pub const UPDATE_CSE_NAME: &str = "common_sub_expression_eliminate_except_update";

#[derive(Debug)]
pub struct CseExceptUpdate {
    inner: CommonSubexprEliminate,
}

impl Default for CseExceptUpdate {
    fn default() -> Self {
        Self {
            inner: CommonSubexprEliminate::new(),
        }
    }
}

impl OptimizerRule for CseExceptUpdate {
    fn name(&self) -> &str {
        UPDATE_CSE_NAME
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        self.inner.apply_order()
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(&self, plan: LogicalPlan, config: &dyn OptimizerConfig) -> Result<Transformed<LogicalPlan>> {
        if let LogicalPlan::Dml(dml) = &plan
            && dml.op == WriteOp::Update
        {
            return Ok(Transformed::no(plan));
        }
        self.inner.rewrite(plan, config)
    }
}

/// `rules` with DataFusion's common-subexpression elimination replaced by
/// [`CseExceptUpdate`] (kept in place, so the order of the others holds).
pub fn replace_cse(rules: &[Arc<dyn OptimizerRule + Send + Sync>]) -> Vec<Arc<dyn OptimizerRule + Send + Sync>> {
    let inner_name = CommonSubexprEliminate::new().name().to_string();
    rules
        .iter()
        .map(|r| {
            if r.name() == inner_name {
                Arc::new(CseExceptUpdate::default()) as Arc<dyn OptimizerRule + Send + Sync>
            } else {
                Arc::clone(r)
            }
        })
        .collect()
}
