//! Filters → partition predicates, one visitor per step:
//! [`bind`] (DataFusion `Expr` → [`Predicate`] on field ids) →
//! [`rewrite_not`] (push NOT to the leaves) → [`project`] (per table spec,
//! inclusive projection through each partition transform) → [`evaluate`]
//! (vectorized over a manifest's partition columns).

pub mod bind;
pub mod bind_physical;
pub mod evaluate;
pub mod exact;
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
