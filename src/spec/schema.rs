//! A table schema: top-level fields with stable ids.
//!
//! Field ids, not names, identify columns across table specs: a renamed
//! column keeps its id, a dropped one's id is never reused. The Arrow schema
//! the engine sees is derived from it (without id metadata); the Arrow schema
//! written into Parquet carries the ids (`PARQUET:field_id`).

use std::sync::Arc;

use datafusion::arrow::datatypes::{Schema as ArrowSchema, SchemaRef};
use serde::{Deserialize, Serialize};

use super::types::{NestedField, PrimitiveType, Type};
use crate::error::Result;
use crate::invalid;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    pub fields: Vec<NestedField>,
}

impl Schema {
    /// Build a schema from an Arrow schema, numbering fields from `first_id`.
    pub fn from_arrow(arrow: &ArrowSchema, first_id: i32) -> Result<Schema> {
        let mut next = first_id - 1;
        let mut next_id = || {
            next += 1;
            next
        };
        let mut fields = Vec::with_capacity(arrow.fields().len());
        // Top-level ids first, so column n has id first_id + n like Iceberg's fresh ids.
        let ids: Vec<i32> = arrow.fields().iter().map(|_| next_id()).collect();
        for (f, id) in arrow.fields().iter().zip(ids) {
            if f.name().is_empty() {
                return invalid!("column names must not be empty");
            }
            fields.push(NestedField {
                id,
                name: f.name().clone(),
                required: !f.is_nullable(),
                field_type: Type::from_arrow(f.data_type(), &mut next_id)
                    .map_err(|e| crate::error::Error::Invalid(format!("column {}: {e}", f.name())))?,
                doc: None,
            });
        }
        let schema = Schema { fields };
        schema.check_unique_names()?;
        Ok(schema)
    }

    fn check_unique_names(&self) -> Result<()> {
        for (i, f) in self.fields.iter().enumerate() {
            if self.fields[..i].iter().any(|g| g.name.eq_ignore_ascii_case(&f.name)) {
                return invalid!("duplicate column name {:?}", f.name);
            }
        }
        Ok(())
    }

    /// The engine-facing Arrow schema (no field-id metadata).
    pub fn arrow_schema(&self) -> SchemaRef {
        Arc::new(ArrowSchema::new(
            self.fields.iter().map(|f| f.to_engine_arrow()).collect::<Vec<_>>(),
        ))
    }

    /// The Arrow schema written into data files (field ids in metadata).
    pub fn arrow_schema_with_ids(&self) -> SchemaRef {
        Arc::new(ArrowSchema::new(
            self.fields.iter().map(|f| f.to_arrow()).collect::<Vec<_>>(),
        ))
    }

    /// Top-level field by exact name, falling back to a unique case-insensitive match.
    pub fn field_by_name(&self, name: &str) -> Option<&NestedField> {
        self.fields.iter().find(|f| f.name == name).or_else(|| {
            let mut it = self.fields.iter().filter(|f| f.name.eq_ignore_ascii_case(name));
            match (it.next(), it.next()) {
                (Some(f), None) => Some(f),
                _ => None,
            }
        })
    }

    pub fn field_by_id(&self, id: i32) -> Option<&NestedField> {
        self.fields.iter().find(|f| f.id == id)
    }

    /// The top-level column names, `a, b, c` (for messages).
    pub fn column_names(&self) -> String {
        self.fields
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn index_of_id(&self, id: i32) -> Option<usize> {
        self.fields.iter().position(|f| f.id == id)
    }

    /// Primitive type of a top-level column, if it is primitive.
    pub fn primitive(&self, id: i32) -> Option<PrimitiveType> {
        self.field_by_id(id).and_then(|f| f.field_type.as_primitive())
    }

    /// Highest field id used anywhere in the schema (nested ids included).
    pub fn highest_field_id(&self) -> i32 {
        fn walk(t: &Type, max: &mut i32) {
            match t {
                Type::Primitive(_) | Type::Variant => {}
                Type::Struct(fs) => {
                    for f in fs {
                        *max = (*max).max(f.id);
                        walk(&f.field_type, max);
                    }
                }
                Type::List {
                    element_id, element, ..
                } => {
                    *max = (*max).max(*element_id);
                    walk(element, max);
                }
                Type::Map {
                    key_id,
                    key,
                    value_id,
                    value,
                    ..
                } => {
                    *max = (*max).max(*key_id).max(*value_id);
                    walk(key, max);
                    walk(value, max);
                }
            }
        }
        let mut max = 0;
        walk(&Type::Struct(self.fields.clone()), &mut max);
        max
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{DataType, Field};

    #[test]
    fn ids_are_assigned_in_order_and_round_trip() {
        let arrow = ArrowSchema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8View, true),
        ]);
        let s = Schema::from_arrow(&arrow, 1).unwrap();
        assert_eq!(s.fields[0].id, 1);
        assert_eq!(s.fields[1].id, 2);
        assert_eq!(s.arrow_schema().field(1).data_type(), &DataType::Utf8);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Schema>(&json).unwrap(), s);
        assert_eq!(s.field_by_name("NAME").unwrap().id, 2);
    }

    #[test]
    fn duplicate_names_are_rejected() {
        let arrow = ArrowSchema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("A", DataType::Int64, true),
        ]);
        assert!(
            Schema::from_arrow(&arrow, 1)
                .unwrap_err()
                .to_string()
                .contains("duplicate")
        );
    }
}
