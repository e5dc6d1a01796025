//! What a DELETE or UPDATE asked for, as written.
//!
//! DataFusion hands `TableProvider::delete_from` and `update` the filters it
//! finds in the *optimized* plan. Those are not always the user's: a
//! condition that folds to false or NULL (`WHERE false`, `s = NULL`,
//! `id IN (NULL)`) is replaced by an empty relation and arrives as no filter
//! at all, the same as "every row"; common-subexpression elimination can
//! hand over expressions on columns the table does not have.
//!
//! So the analyzer rule `optimizer::dml_check` records the statement before
//! any optimization, and the provider acts on that record alone:
//!
//! | statement                      | record                          | rows acted on |
//! |--------------------------------|---------------------------------|---------------|
//! | `DELETE FROM t`                | no condition                    | all           |
//! | `DELETE FROM t WHERE id > 5`   | `id > 5`                        | those         |
//! | `DELETE FROM t WHERE s = NULL` | `s = NULL` (folds to NULL)      | none          |
//! | planned without the rule       | —                               | refused       |

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::Result;
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::logical_expr::utils::split_conjunction_owned;
use datafusion::logical_expr::{Expr, lit};
use datafusion::optimizer::simplify_expressions::ExprSimplifier;

use crate::expr::unqualified;

/// The name the analyzer rule that hands DML statements their conditions
/// (`optimizer::DmlCheck`) is registered under; our errors name it.
pub const DML_CHECK_NAME: &str = "hidden_partitions_dml_check";

/// A DELETE or UPDATE as the analyzer saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct DmlIntent {
    /// The `WHERE` condition (type-coerced, otherwise as written); `None`
    /// when the statement has no `WHERE`.
    pub condition: Option<Expr>,
    /// UPDATE: `SET column = value`, as written (columns set to themselves
    /// left out).
    pub assignments: Vec<(String, Expr)>,
}

impl DmlIntent {
    /// The condition as a list of unqualified conjuncts for the statement:
    /// empty for "every row", `[false]` when it can never be true (a row
    /// whose condition is NULL is never acted on). Constants are folded
    /// with the statement's start time (`now()`), as DataFusion's optimizer
    /// folds them for a query, so that literals reach pruning in the
    /// column's type.
    pub fn filters(&self, schema: &SchemaRef, state: &dyn Session) -> Result<Vec<Expr>> {
        let Some(condition) = &self.condition else {
            return Ok(Vec::new());
        };
        let df_schema = Arc::new(DFSchema::try_from(schema.as_ref().clone())?);
        let context = SimplifyContext::builder()
            .with_schema(df_schema)
            .with_config_options(Arc::new(state.config_options().clone()))
            .with_query_execution_start_time(state.execution_props().query_execution_start_time)
            .build();
        match ExprSimplifier::new(context).simplify(unqualified(condition.clone())?)? {
            Expr::Literal(ScalarValue::Boolean(Some(true)), _) => Ok(Vec::new()),
            Expr::Literal(ScalarValue::Boolean(Some(false)) | ScalarValue::Boolean(None) | ScalarValue::Null, _) => {
                Ok(vec![lit(false)])
            }
            folded => Ok(split_conjunction_owned(folded)),
        }
    }

    /// The assignments with their columns unqualified.
    pub fn unqualified_assignments(&self) -> Result<Vec<(String, Expr)>> {
        self.assignments
            .iter()
            .map(|(c, e)| Ok((c.clone(), unqualified(e.clone())?)))
            .collect()
    }
}
