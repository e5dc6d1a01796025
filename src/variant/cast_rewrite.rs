//! `CAST(x AS VARIANT)`: rewritten to `to_variant(x)` before type checking.
//!
//! With [`super::VariantTypePlanner`] installed, `VARIANT` in a cast becomes a
//! `Cast` to the marked variant field; Arrow cannot cast scalars into that
//! struct, so this analyzer rewrite (registered by
//! [`super::register_functions`]) replaces the cast by the function.
//!
//! | SQL                                   | planned as                     |
//! |---------------------------------------|--------------------------------|
//! | `CAST(42 AS VARIANT)`                 | `to_variant(42)`               |
//! | `TRY_CAST('x' AS VARIANT)`            | `to_variant('x')`              |
//! | `CAST(v AS VARIANT)` (v a variant)    | `to_variant(v)` (pass-through) |
//! | `CAST(s AS STRUCT<metadata BYTEA, value BYTEA>)` | unchanged (no marker) |

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{Cast, TryCast};
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Expr, ScalarUDF};

use super::arrow_type::{EXTENSION_NAME_KEY, VARIANT_EXTENSION};
use super::udf::ToVariant;

/// Rewrites casts to the marked variant type into `to_variant`.
#[derive(Debug, Default, Clone, Copy)]
pub struct VariantCastRewrite;

fn is_marked(field: &arrow::datatypes::Field) -> bool {
    field
        .metadata()
        .get(EXTENSION_NAME_KEY)
        .is_some_and(|n| n == VARIANT_EXTENSION)
}

impl FunctionRewrite for VariantCastRewrite {
    fn name(&self) -> &str {
        "variant_cast"
    }

    fn rewrite(&self, expr: Expr, _schema: &DFSchema, _config: &ConfigOptions) -> Result<Transformed<Expr>> {
        let to_variant = || Arc::new(ScalarUDF::new_from_impl(ToVariant::new()));
        Ok(match expr {
            Expr::Cast(Cast { expr, field }) if is_marked(&field) => Transformed::yes(to_variant().call(vec![*expr])),
            Expr::TryCast(TryCast { expr, field }) if is_marked(&field) => {
                Transformed::yes(to_variant().call(vec![*expr]))
            }
            other => Transformed::no(other),
        })
    }
}
