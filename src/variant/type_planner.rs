//! `VARIANT` as a SQL type name.
//!
//! sqlparser reads an unknown type name as `DataType::Custom`; this planner
//! maps `VARIANT` (any case, no modifiers) to the variant struct field with the
//! `arrow.parquet.variant` marker, so `CREATE TABLE t (v VARIANT)` declares a
//! variant column. Install it with `SessionStateBuilder::with_type_planner`.
//!
//! | SQL type       | planned field                                      |
//! |----------------|----------------------------------------------------|
//! | `VARIANT`      | `Struct{metadata: Binary, value: Binary}` + marker |
//! | `variant`      | same                                               |
//! | anything else  | left to DataFusion                                 |

use std::sync::Arc;

use arrow::datatypes::FieldRef;
use datafusion::common::Result;
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast::{DataType as SqlDataType, ObjectNamePart};

use super::arrow_type::variant_field;

/// Plans the SQL type `VARIANT`.
#[derive(Debug, Default, Clone, Copy)]
pub struct VariantTypePlanner;

/// True when `sql_type` is `VARIANT` (case-insensitive, no modifiers).
pub fn is_variant_sql_type(sql_type: &SqlDataType) -> bool {
    match sql_type {
        SqlDataType::Custom(name, modifiers) if modifiers.is_empty() && name.0.len() == 1 => {
            matches!(&name.0[0], ObjectNamePart::Identifier(id) if id.value.eq_ignore_ascii_case("variant"))
        }
        _ => false,
    }
}

impl TypePlanner for VariantTypePlanner {
    fn plan_type_field(&self, sql_type: &SqlDataType) -> Result<Option<FieldRef>> {
        Ok(is_variant_sql_type(sql_type).then(|| Arc::new(variant_field("variant", true))))
    }
}
