//! Our SQL functions by name, for nodes that decode plans calling them.
//!
//! Plans carry a function call as its name; a scheduler or executor that
//! was not started with our functions registered still resolves
//! `bucket`, `variant_get`, … through the codecs.

use std::sync::Arc;

use datafusion::logical_expr::{AggregateUDF, ScalarUDF};

/// The transform and Variant scalar functions, and the row hash of
/// changelog reads.
pub fn scalar_functions() -> Vec<Arc<ScalarUDF>> {
    let mut all = crate::functions::transform_functions();
    all.extend(crate::variant::scalar_functions());
    all.push(crate::provider::row_hash::RowHash::udf());
    all
}

/// The Variant aggregate functions.
pub fn aggregate_functions() -> Vec<Arc<AggregateUDF>> {
    crate::variant::aggregate_functions()
}

pub fn scalar_by_name(name: &str) -> Option<Arc<ScalarUDF>> {
    scalar_functions()
        .into_iter()
        .find(|f| f.name() == name || f.aliases().iter().any(|a| a == name))
}

pub fn aggregate_by_name(name: &str) -> Option<Arc<AggregateUDF>> {
    aggregate_functions()
        .into_iter()
        .find(|f| f.name() == name || f.aliases().iter().any(|a| a == name))
}
