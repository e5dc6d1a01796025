//! Our table specs in Iceberg's JSON shapes.
//!
//! A table spec of ours is one (schema, partition spec) pair with one id;
//! on the Iceberg side it is schema `schema-id = spec-id` and partition spec
//! `spec-id = spec-id`. Field ids, names, types and transforms are written
//! as they are: our JSON for them already follows the Iceberg spec.
//!
//! ```json
//! {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": false, "type": "long"}]}
//! {"spec-id": 0, "fields": [{"field-id": 1000, "source-id": 1, "transform": "bucket[16]", "name": "id_bucket"}]}
//! ```

use serde_json::{Value, json};

use crate::error::Result;
use crate::spec::TableSpec;

/// The Iceberg schema of a table spec.
pub fn schema_json(spec: &TableSpec) -> Result<Value> {
    Ok(json!({
        "type": "struct",
        "schema-id": spec.spec_id,
        "fields": serde_json::to_value(&spec.schema.fields)?,
    }))
}

/// The Iceberg partition spec of a table spec.
pub fn partition_spec_json(spec: &TableSpec) -> Result<Value> {
    Ok(json!({
        "spec-id": spec.spec_id,
        "fields": serde_json::to_value(&spec.partition_spec.fields)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{PartitionSpec, Schema};
    use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};

    #[test]
    fn schema_and_spec_in_iceberg_shape() {
        let arrow = ArrowSchema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new(
                "tags",
                DataType::List(Field::new("item", DataType::Utf8, true).into()),
                true,
            ),
        ]);
        let schema = Schema::from_arrow(&arrow, 1).unwrap();
        let spec = TableSpec {
            spec_id: 3,
            schema,
            partition_spec: PartitionSpec { fields: vec![] },
        };
        let s = schema_json(&spec).unwrap();
        assert_eq!(s["type"], "struct");
        assert_eq!(s["schema-id"], 3);
        assert_eq!(
            s["fields"][0],
            json!({"id": 1, "name": "id", "required": true, "type": "long"})
        );
        assert_eq!(s["fields"][1]["type"]["type"], "list");
        assert_eq!(s["fields"][1]["type"]["element-id"], 3);
        let p = partition_spec_json(&spec).unwrap();
        assert_eq!(p, json!({"spec-id": 3, "fields": []}));
    }
}
