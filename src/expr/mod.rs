//! Filters → partition predicates, one visitor per step:
//! [`bind`](fn@bind) (DataFusion `Expr` → [`Predicate`] on field ids) →
//! [`rewrite_not`](fn@rewrite_not) (push NOT to the leaves) → [`project`] (per table spec,
//! inclusive projection through each partition transform) → [`evaluate`](fn@evaluate)
//! (vectorized over a manifest's partition columns).

pub mod bind;
pub mod bind_physical;
pub mod evaluate;
pub mod exact;
pub mod key_function;
pub mod normalize;
pub mod predicate;
pub mod project;
pub mod rewrite_not;
pub mod summary;

pub use bind::bind;
pub use bind_physical::bind_physical;
pub use evaluate::evaluate;
pub use exact::{all_rows_match, is_exact};
pub use predicate::Predicate;
pub use project::project_inclusive;
pub use rewrite_not::rewrite_not;

/// Column references without their table qualifier: a statement on one
/// table may spell a column `t.c`, `public.t.c` or `c`.
pub fn unqualified(expr: datafusion::logical_expr::Expr) -> datafusion::error::Result<datafusion::logical_expr::Expr> {
    use datafusion::common::tree_node::{Transformed, TreeNode};
    use datafusion::logical_expr::Expr;
    Ok(expr
        .transform_up(|e| match e {
            Expr::Column(c) if c.relation.is_some() => Ok(Transformed::yes(Expr::Column(
                datafusion::common::Column::new_unqualified(c.name),
            ))),
            other => Ok(Transformed::no(other)),
        })?
        .data)
}
