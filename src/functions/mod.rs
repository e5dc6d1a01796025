//! SQL functions this crate adds to a session: the partition transforms
//! and the Variant functions (`parse_json`, `variant_get`, `to_json`, …).

pub mod transforms;

use datafusion::prelude::SessionContext;

pub use transforms::transform_functions;

/// Register every function of this crate in `ctx`.
pub fn register_functions(ctx: &SessionContext) {
    for f in transform_functions() {
        ctx.register_udf(f.as_ref().clone());
    }
    crate::variant::register_functions(ctx);
}
