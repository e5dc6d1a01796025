//! The changelog sides' physical plan, planned as our code built them.
//!
//! A changelog difference (`difference.rs`) plans its sides when the
//! query is planned: a union of projections over table scans, each
//! projection already in its final form (`changes::side_plan`). Handing
//! that to the session's planner would run the analyzer, every logical
//! optimizer rule and every physical rule over it, and the query's own
//! physical rules then run over it again (the sides are the difference's
//! child). Here each node becomes its operator directly, and the filters
//! the difference was given are carried down to each side's scan, as
//! DataFusion's filter pushdown would carry them:
//!
//! | logical node               | operator                                      |
//! |----------------------------|-----------------------------------------------|
//! | `Union`                    | `UnionExec`; filters to each input by position |
//! | `Projection`               | `ProjectionExec`; filters rewritten through it |
//! | `TableScan` (no fetch)     | the provider's scan with the filters it takes, then `FilterExec` |
//! | anything else              | the session's planner, under a `Filter`       |

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::common::{Column, DFSchema};
use datafusion::datasource::source_as_provider;
use datafusion::error::Result;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder, TableProviderFilterPushDown};
use datafusion::optimizer::push_down_filter::replace_cols_by_name;
use datafusion::physical_expr::{PhysicalExpr, create_physical_expr};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::union::UnionExec;
use futures::future::BoxFuture;

/// `plan`'s operators, its rows those passing every one of `filters`
/// (expressions of `plan`'s output columns).
pub fn plan_sides<'a>(
    plan: &'a LogicalPlan,
    filters: Vec<Expr>,
    state: &'a dyn Session,
) -> BoxFuture<'a, Result<Arc<dyn ExecutionPlan>>> {
    Box::pin(async move {
        match plan {
            LogicalPlan::Union(union) => {
                let mut inputs = Vec::with_capacity(union.inputs.len());
                for input in &union.inputs {
                    // A union's columns are its inputs' by position.
                    let filters = rewritten(&filters, plan.schema(), |i| {
                        let (qualifier, field) = input.schema().qualified_field(i);
                        Expr::Column(Column::from((qualifier, field)))
                    })?;
                    inputs.push(plan_sides(input, filters, state).await?);
                }
                UnionExec::try_new(inputs)
            }
            LogicalPlan::Projection(projection) => {
                let filters = rewritten(&filters, plan.schema(), |i| projection.expr[i].clone().unalias())?;
                let input = plan_sides(&projection.input, filters, state).await?;
                let schema = projection.input.schema();
                let exprs = projection
                    .expr
                    .iter()
                    .zip(plan.schema().fields())
                    .map(|(e, f)| Ok((physical(e, schema, state)?, f.name().clone())))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Arc::new(ProjectionExec::try_new(exprs, input)?) as Arc<dyn ExecutionPlan>)
            }
            LogicalPlan::TableScan(scan) if scan.fetch.is_none() => {
                let provider = source_as_provider(&scan.source)?;
                // The provider knows its columns unqualified.
                let unqualified = filters
                    .iter()
                    .chain(&scan.filters)
                    .map(|f| crate::expr::unqualified(f.clone()))
                    .collect::<Result<Vec<_>>>()?;
                let offered: Vec<&Expr> = unqualified.iter().collect();
                let taken: Vec<Expr> = provider
                    .supports_filters_pushdown(&offered)?
                    .into_iter()
                    .zip(&offered)
                    .filter(|(p, _)| *p != TableProviderFilterPushDown::Unsupported)
                    .map(|(_, f)| (*f).clone())
                    .collect();
                let read = provider.scan(state, scan.projection.as_ref(), &taken, None).await?;
                // Pushed filters may be inexact: every filter is applied.
                let all: Vec<Expr> = filters.into_iter().chain(scan.filters.iter().cloned()).collect();
                match conjunction(all) {
                    Some(predicate) => Ok(Arc::new(FilterExec::try_new(
                        physical(&predicate, &scan.projected_schema, state)?,
                        read,
                    )?) as Arc<dyn ExecutionPlan>),
                    None => Ok(read),
                }
            }
            other => {
                let mut builder = LogicalPlanBuilder::from(other.clone());
                if let Some(predicate) = conjunction(filters) {
                    builder = builder.filter(predicate)?;
                }
                state.create_physical_plan(&builder.build()?).await
            }
        }
    })
}

/// `filters` (of `schema`'s columns) with each column, by its index in
/// `schema`, replaced by `value(index)`.
fn rewritten(filters: &[Expr], schema: &DFSchema, value: impl Fn(usize) -> Expr) -> Result<Vec<Expr>> {
    if filters.is_empty() {
        return Ok(Vec::new());
    }
    let values: HashMap<String, Expr> = schema
        .iter()
        .enumerate()
        .map(|(i, (qualifier, field))| (Column::from((qualifier, field)).flat_name(), value(i)))
        .collect();
    filters
        .iter()
        .map(|f| replace_cols_by_name(f.clone(), &values))
        .collect()
}

fn physical(expr: &Expr, schema: &DFSchema, state: &dyn Session) -> Result<Arc<dyn PhysicalExpr>> {
    create_physical_expr(
        expr,
        schema,
        state.execution_props(),
        &PhysicalPlanningContext::default(),
    )
}
