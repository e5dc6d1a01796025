//! Variant columns: the semi-structured type of Spark 4 / Delta / Parquet.
//!
//! A variant value is two byte strings (Parquet "VariantEncoding"):
//! `metadata` (a dictionary of object keys) and `value` (a self-describing
//! tree: primitives, short strings, objects, arrays). In Arrow it is a struct of
//! two binaries marked with the canonical extension `arrow.parquet.variant`:
//!
//! | row | metadata (hex)   | value (hex)           | to_json       |
//! |-----|------------------|-----------------------|---------------|
//! | 0   | `01 00 00`       | `0c 2a`               | `42`          |
//! | 1   | `01 01 00 01 61` | `02 01 00 00 02 0c 01` | `{"a":1}`     |
//! | 2   | NULL             | NULL                  | NULL          |
//!
//! The module is independent of the table layers. Pieces, bottom up:
//! [`metadata`] (key dictionary) → [`decode`] (bounds-checked reader, never
//! panics) → [`encode`] (builder) → [`json`] (parse / print like Spark) →
//! [`format`](mod@format) (Spark's number/date text) → [`path`] (`$.a.b[0]`) → [`cast`]
//! (variant → Spark types) → [`schema`] (`schema_of_variant`) →
//! [`from_arrow`] (Arrow values → variant) → [`shredding`] (typed_value →
//! plain variant) → [`arrow_type`] / [`array`](mod@array) (Arrow representation) →
//! [`udf`] (SQL functions), [`type_planner`] (`VARIANT` in SQL) and
//! [`cast_rewrite`] (`CAST(x AS VARIANT)`).
//!
//! Why a decoder of our own: every read is bounds-checked so hostile bytes give
//! [`VariantError::Malformed`] instead of a panic, and path extraction walks
//! the bytes directly without materialising values.
//!
//! ```text
//! SELECT variant_get(parse_json('{"a":{"b":[7]}}'), '$.a.b[0]', 'int');  -- 7
//! SELECT schema_of_variant(parse_json('{"b":[1],"a":"x"}'));           -- OBJECT<a: STRING, b: ARRAY<BIGINT>>
//! ```
//!
//! Time zone: values of type TIMESTAMP are printed and cast in UTC.

pub mod array;
pub mod arrow_type;
pub mod cast;
pub mod cast_rewrite;
pub mod decode;
pub mod encode;
pub mod format;
pub mod from_arrow;
pub mod json;
pub mod metadata;
pub mod path;
pub mod schema;
pub mod shredding;
pub mod type_planner;
pub mod udf;

use std::sync::Arc;

use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::prelude::SessionContext;

pub use array::{VariantArrayBuilder, VariantArrayView};
pub use arrow_type::{VARIANT_EXTENSION, is_variant_field, variant_data_type, variant_field};
pub use cast::SparkType;
pub use cast_rewrite::VariantCastRewrite;
pub use decode::{Variant, VariantArray, VariantObject, VariantValue};
pub use encode::VariantBuilder;
pub use json::{parse_json, to_json, write_json};
pub use metadata::VariantMetadata;
pub use path::{PathSegment, VariantPath};
pub use schema::{VariantSchema, schema_of_variant};
pub use shredding::unshred_variant_array;
pub use type_planner::VariantTypePlanner;

/// Deepest nesting of objects/arrays accepted by the parser and the readers.
/// Keeps recursion bounded on hostile input.
pub const MAX_DEPTH: usize = 500;

/// Errors of the variant module. Messages name the problem and, where it
/// helps, the offending position or value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VariantError {
    /// The binary encoding is broken (truncated, bad offsets, unknown type id, …).
    #[error("malformed variant: {0}")]
    Malformed(String),
    /// `parse_json` input is not valid JSON.
    #[error("invalid JSON at byte {pos}: {msg}")]
    InvalidJson { pos: usize, msg: String },
    /// `parse_json` input has a key twice in one object.
    #[error("duplicate key {0:?} in JSON object")]
    DuplicateKey(String),
    /// A `$.a[0]` path that does not follow Spark's grammar.
    #[error("invalid variant path {path:?}: {msg}")]
    InvalidPath { path: String, msg: String },
    /// A type name `variant_get` does not know.
    #[error("unsupported target type {0:?} (expected a Spark type name such as int, bigint, string, decimal(10,2))")]
    UnsupportedType(String),
    /// The value at the path cannot be represented in the requested type.
    #[error("the variant value `{value}` cannot be cast into `{target}`; use try_variant_get to get NULL instead")]
    InvalidCast { value: String, target: String },
    /// Nesting deeper than [`MAX_DEPTH`].
    #[error("variant nesting deeper than {0} levels")]
    TooDeep(usize),
    /// Anything else (input types the functions do not take, …).
    #[error("{0}")]
    Unsupported(String),
}

impl VariantError {
    pub(crate) fn malformed(msg: impl Into<String>) -> Self {
        VariantError::Malformed(msg.into())
    }
}

impl From<VariantError> for datafusion::error::DataFusionError {
    fn from(e: VariantError) -> Self {
        datafusion::error::DataFusionError::Execution(e.to_string())
    }
}

/// Result alias of the module.
pub type Result<T, E = VariantError> = std::result::Result<T, E>;

/// All variant scalar functions: `parse_json`, `try_parse_json`, `to_json`,
/// `variant_get`, `try_variant_get`, `is_variant_null`, `schema_of_variant`,
/// `to_variant`.
pub fn scalar_functions() -> Vec<Arc<ScalarUDF>> {
    udf::scalar_functions()
}

/// All variant aggregate functions: `schema_of_variant_agg`.
pub fn aggregate_functions() -> Vec<Arc<AggregateUDF>> {
    udf::aggregate_functions()
}

/// Registers every variant function on `ctx`, and the rewrite of
/// `CAST(x AS VARIANT)` into `to_variant(x)` (effective when the session also
/// has [`VariantTypePlanner`], which makes `VARIANT` a SQL type).
pub fn register_functions(ctx: &SessionContext) {
    for f in scalar_functions() {
        ctx.register_udf(f.as_ref().clone());
    }
    for f in aggregate_functions() {
        ctx.register_udaf(f.as_ref().clone());
    }
    let state = ctx.state_ref();
    let mut state = state.write();
    // SessionState's registration never fails; nothing to report if it did.
    let _ =
        datafusion::execution::FunctionRegistry::register_function_rewrite(&mut *state, Arc::new(VariantCastRewrite));
}

#[cfg(test)]
mod tests;
