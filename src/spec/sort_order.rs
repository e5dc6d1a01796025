//! Sort orders (Iceberg's `sort-orders`): how writers order the rows of each
//! data file, so that files and their row groups and pages hold narrow
//! ranges of the sort columns and a point query on them skips the rest.
//!
//! | order id | fields                                            | set by                                   |
//! |----------|---------------------------------------------------|------------------------------------------|
//! | 0        | none (unsorted, reserved by Iceberg)              | every table; `WRITE UNORDERED`           |
//! | 1        | `a ASC NULLS FIRST`, `bucket(16, id) DESC NULLS LAST` | `ALTER TABLE t WRITE ORDERED BY (a, bucket(16, id) DESC)` |
//!
//! In the version file (Iceberg's shape, also ours):
//!
//! ```json
//! "sort-orders": [{"order-id": 0, "fields": []},
//!                 {"order-id": 1, "fields": [{"transform": "identity", "source-id": 2,
//!                                             "direction": "asc", "null-order": "nulls-first"}]}],
//! "default-sort-order-id": 1
//! ```
//!
//! An order is kept once defined (ids are never reused for a different
//! order); setting an order equal to a known one makes that one the default.

use serde::{Deserialize, Serialize};

use super::schema::Schema;
use crate::error::Result;
use crate::invalid;
use crate::transform::Transform;

/// Iceberg's id of the unsorted order.
pub const UNSORTED_ORDER_ID: i32 = 0;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortOrder {
    #[serde(rename = "order-id")]
    pub order_id: i32,
    #[serde(default)]
    pub fields: Vec<SortField>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortField {
    pub transform: Transform,
    #[serde(rename = "source-id")]
    pub source_id: i32,
    pub direction: SortDirection,
    #[serde(rename = "null-order")]
    pub null_order: NullOrder,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SortDirection {
    #[serde(rename = "asc")]
    Asc,
    #[serde(rename = "desc")]
    Desc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NullOrder {
    #[serde(rename = "nulls-first")]
    First,
    #[serde(rename = "nulls-last")]
    Last,
}

impl SortOrder {
    pub fn unsorted() -> Self {
        Self {
            order_id: UNSORTED_ORDER_ID,
            fields: Vec::new(),
        }
    }

    pub fn is_unsorted(&self) -> bool {
        self.fields.is_empty()
    }

    /// Check every field against `schema`: its column exists and the
    /// transform applies to its type.
    pub fn check(&self, schema: &Schema) -> Result<()> {
        for field in &self.fields {
            let Some(column) = schema.fields.iter().find(|f| f.id == field.source_id) else {
                return invalid!(
                    "sort order {} refers to column id {}, which is not in the schema (drop it from the order first: ALTER TABLE … WRITE ORDERED BY … or WRITE UNORDERED)",
                    self.order_id,
                    field.source_id
                );
            };
            if column.field_type == crate::spec::Type::Variant {
                return invalid!(
                    "column {:?} is a VARIANT, which cannot be a sort column (variant values have no order)",
                    column.name
                );
            }
            if let Err(e) = field.transform.result_type(&column.field_type.to_arrow()) {
                return invalid!(
                    "sort order: cannot apply {} to column {:?} of type {}: {e}",
                    field.transform,
                    column.name,
                    column.field_type.to_arrow()
                );
            }
        }
        Ok(())
    }
}

/// `orders` with `fields` as the default: the known order with equal fields,
/// or a new one with the next id. Returns the default id.
pub fn add_order(orders: &mut Vec<SortOrder>, fields: Vec<SortField>) -> i32 {
    if orders.is_empty() {
        orders.push(SortOrder::unsorted());
    }
    if fields.is_empty() {
        return UNSORTED_ORDER_ID;
    }
    if let Some(known) = orders.iter().find(|o| o.fields == fields) {
        return known.order_id;
    }
    let id = orders.iter().map(|o| o.order_id).max().unwrap_or(0) + 1;
    orders.push(SortOrder { order_id: id, fields });
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iceberg_json_shape() {
        let order = SortOrder {
            order_id: 1,
            fields: vec![SortField {
                transform: Transform::Bucket(16),
                source_id: 2,
                direction: SortDirection::Desc,
                null_order: NullOrder::Last,
            }],
        };
        let json = serde_json::to_value(&order).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"order-id": 1, "fields": [{"transform": "bucket[16]", "source-id": 2,
                "direction": "desc", "null-order": "nulls-last"}]})
        );
        assert_eq!(serde_json::from_value::<SortOrder>(json).unwrap(), order);
    }

    #[test]
    fn equal_orders_share_an_id() {
        let f = |id| SortField {
            transform: Transform::Identity,
            source_id: id,
            direction: SortDirection::Asc,
            null_order: NullOrder::First,
        };
        let mut orders = Vec::new();
        assert_eq!(add_order(&mut orders, vec![f(1)]), 1);
        assert_eq!(add_order(&mut orders, vec![f(2)]), 2);
        assert_eq!(add_order(&mut orders, vec![f(1)]), 1);
        assert_eq!(add_order(&mut orders, vec![]), 0);
        assert_eq!(orders.len(), 3);
    }
}
