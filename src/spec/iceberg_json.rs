//! Our metadata version as an Iceberg v2 table metadata file.
//!
//! One JSON document serves both readers: ours reads its own fields
//! (`table-specs`, `snapshots[].manifests`, …) and ignores Iceberg's; an
//! Iceberg reader reads Iceberg's and ignores ours. Iceberg's are derived
//! here from ours each time a version is written, so they cannot disagree:
//!
//! | Iceberg field                       | from                                          |
//! |-------------------------------------|-----------------------------------------------|
//! | `schemas`, `current-schema-id`      | `table-specs[].schema`, `current-spec-id`     |
//! | `partition-specs`, `default-spec-id`| `table-specs[].partition-spec`, `current-spec-id` |
//! | `sort-orders`                       | the unsorted order 0                          |
//! | `refs`                              | our tags, and `main` on the current snapshot  |
//! | `snapshots[].summary.operation`     | `operation` (update, merge → overwrite; optimize → replace) |
//! | `snapshots[].schema-id`             | `table-spec-id`                               |
//! | `current-snapshot-id`               | `-1` when there is none                       |
//!
//! `location`, `metadata-log`, `snapshot-log`, `manifest-list` and the
//! counts in `summary` have the same names on both sides. A table with a
//! snapshot that has no manifest list (written before this existed) is
//! written in our legacy form (format version 1) until it gets them.
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

use serde_json::{Map, Value, json};

use crate::error::Result;
use crate::spec::TableSpec;
use crate::spec::metadata::{FORMAT_VERSION, LEGACY_FORMAT_VERSION, Snapshot, TableMetadata};
use crate::spec::types::{PrimitiveType, Type};

/// Whether `md` can be written as Iceberg metadata: it knows its location,
/// every snapshot has a manifest list, and every column has an Iceberg v2
/// type.
pub fn is_iceberg(md: &TableMetadata) -> bool {
    md.location.is_some() && md.snapshots.iter().all(|s| s.manifest_list.is_some()) && has_iceberg_types(md)
}

/// Whether every column of every table spec has an Iceberg v2 type.
pub fn has_iceberg_types(md: &TableMetadata) -> bool {
    md.table_specs.iter().all(spec_has_iceberg_types)
}

/// Whether every column of `spec` has an Iceberg v2 type.
pub fn spec_has_iceberg_types(spec: &TableSpec) -> bool {
    spec.schema.fields.iter().all(|f| iceberg_v2_type(&f.field_type))
}

/// Whether Iceberg v2 has this type: VARIANT and nanosecond timestamps
/// come with v3, a nanosecond TIME is in no version.
pub fn iceberg_v2_type(t: &Type) -> bool {
    match t {
        Type::Primitive(p) => !matches!(
            p,
            PrimitiveType::TimeNs | PrimitiveType::TimestampNs | PrimitiveType::TimestampTzNs
        ),
        Type::Variant => false,
        Type::Struct(fields) => fields.iter().all(|f| iceberg_v2_type(&f.field_type)),
        Type::List { element, .. } => iceberg_v2_type(element),
        Type::Map { key, value, .. } => iceberg_v2_type(key) && iceberg_v2_type(value),
    }
}

/// The bytes of `md`'s version file (see the module docs).
pub fn metadata_json(md: &TableMetadata) -> Result<Vec<u8>> {
    let mut value = serde_json::to_value(md)?;
    let Some(doc) = value.as_object_mut() else {
        return crate::format_err!("table metadata did not serialize as a JSON object");
    };
    if !is_iceberg(md) {
        doc.insert("format-version".into(), json!(LEGACY_FORMAT_VERSION));
        return Ok(serde_json::to_vec_pretty(&value)?);
    }
    doc.insert("format-version".into(), json!(FORMAT_VERSION));
    let schemas = md.table_specs.iter().map(schema_json).collect::<Result<Vec<_>>>()?;
    let specs = md
        .table_specs
        .iter()
        .map(partition_spec_json)
        .collect::<Result<Vec<_>>>()?;
    doc.insert("schemas".into(), Value::Array(schemas));
    doc.insert("current-schema-id".into(), json!(md.current_spec_id));
    doc.insert("partition-specs".into(), Value::Array(specs));
    doc.insert("default-spec-id".into(), json!(md.current_spec_id));
    doc.insert("sort-orders".into(), json!([{"order-id": 0, "fields": []}]));
    doc.insert("default-sort-order-id".into(), json!(0));
    doc.insert(
        "current-snapshot-id".into(),
        json!(md.current_snapshot_id.unwrap_or(-1)),
    );
    let mut refs: Map<String, Value> = md
        .refs
        .iter()
        .map(|(name, r)| (name.clone(), json!({"snapshot-id": r.snapshot_id, "type": r.kind})))
        .collect();
    if let Some(current) = md.current_snapshot_id {
        refs.insert("main".into(), json!({"snapshot-id": current, "type": "branch"}));
    }
    doc.insert("refs".into(), Value::Object(refs));
    if let Some(Value::Array(snapshots)) = doc.get_mut("snapshots") {
        for (json, snapshot) in snapshots.iter_mut().zip(&md.snapshots) {
            let Some(obj) = json.as_object_mut() else { continue };
            // Omitted, not null, when there is none (DuckDB insists).
            if obj.get("parent-snapshot-id").is_some_and(Value::is_null) {
                obj.remove("parent-snapshot-id");
            }
            if let Some(Value::Object(summary)) = obj.get_mut("summary") {
                summary.insert("operation".into(), json!(iceberg_operation(snapshot)));
            } else {
                obj.insert("summary".into(), json!({"operation": iceberg_operation(snapshot)}));
            }
            if let Some(id) = snapshot.table_spec_id {
                obj.insert("schema-id".into(), json!(id));
            }
        }
    }
    Ok(serde_json::to_vec_pretty(&value)?)
}

/// The Iceberg operation of one of our snapshots.
pub fn iceberg_operation(snapshot: &Snapshot) -> &'static str {
    let count = |key: &str| {
        snapshot
            .summary
            .get(key)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    match snapshot.operation.as_str() {
        "append" => "append",
        "optimize" => "replace",
        "overwrite" => "overwrite",
        _ if count("added-data-files") == 0 => "delete",
        _ => "overwrite",
    }
}

/// Undo what `metadata_json` added that our own fields do not hold.
pub fn strip_iceberg_only(md: &mut TableMetadata) {
    if md.current_snapshot_id == Some(-1) {
        md.current_snapshot_id = None;
    }
    md.refs.retain(|name, r| !(name == "main" && r.kind == "branch"));
    for snapshot in &mut md.snapshots {
        snapshot.summary.remove("operation");
    }
}

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

    fn table_with_snapshot(list: Option<&str>) -> TableMetadata {
        let arrow = ArrowSchema::new(vec![Field::new("id", DataType::Int64, true)]);
        let mut md = crate::table::Table::initial_metadata(&arrow, &[]).unwrap();
        md.location = Some("/tmp/wh/t".into());
        md.last_sequence_number = 1;
        md.snapshots.push(Snapshot {
            snapshot_id: 42,
            parent_snapshot_id: None,
            sequence_number: 1,
            timestamp_ms: 1_700_000_000_000,
            operation: "update".into(),
            summary: [("added-data-files".to_string(), "1".to_string())].into(),
            manifests: vec![],
            table_spec_id: Some(0),
            manifest_list: list.map(str::to_string),
        });
        md.set_current_snapshot(42, 1_700_000_000_000);
        md
    }

    #[test]
    fn an_iceberg_v2_document_that_reads_back_as_ours() {
        let md = table_with_snapshot(Some("/tmp/wh/t/metadata/x-snap-42.avro"));
        let bytes = metadata_json(&md).unwrap();
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["format-version"], 2);
        assert_eq!(v["location"], "/tmp/wh/t");
        assert_eq!(v["current-schema-id"], 0);
        assert_eq!(v["schemas"][0]["schema-id"], 0);
        assert_eq!(v["partition-specs"][0], json!({"spec-id": 0, "fields": []}));
        assert_eq!(v["default-sort-order-id"], 0);
        assert_eq!(v["refs"]["main"], json!({"snapshot-id": 42, "type": "branch"}));
        assert_eq!(v["snapshots"][0]["summary"]["operation"], "overwrite");
        assert_eq!(v["snapshots"][0]["schema-id"], 0);
        assert_eq!(v["snapshots"][0]["manifest-list"], "/tmp/wh/t/metadata/x-snap-42.avro");
        assert_eq!(TableMetadata::from_json(&bytes).unwrap(), md);
    }

    #[test]
    fn no_snapshot_is_minus_one_and_legacy_tables_stay_legacy() {
        let arrow = ArrowSchema::new(vec![Field::new("id", DataType::Int64, true)]);
        let mut md = crate::table::Table::initial_metadata(&arrow, &[]).unwrap();
        md.location = Some("/tmp/wh/t".into());
        let v: Value = serde_json::from_slice(&metadata_json(&md).unwrap()).unwrap();
        assert_eq!(v["current-snapshot-id"], -1);
        assert_eq!(
            TableMetadata::from_json(&metadata_json(&md).unwrap())
                .unwrap()
                .current_snapshot_id,
            None
        );
        // A snapshot without a manifest list: our legacy form, not Iceberg.
        let legacy = table_with_snapshot(None);
        let v: Value = serde_json::from_slice(&metadata_json(&legacy).unwrap()).unwrap();
        assert_eq!(v["format-version"], 1);
        assert!(v.get("schemas").is_none());
    }

    #[test]
    fn types_iceberg_v2_lacks_keep_the_legacy_form() {
        let arrow = ArrowSchema::new(vec![Field::new(
            "t",
            DataType::Timestamp(datafusion::arrow::datatypes::TimeUnit::Nanosecond, None),
            true,
        )]);
        let mut md = crate::table::Table::initial_metadata(&arrow, &[]).unwrap();
        md.location = Some("/tmp/wh/t".into());
        assert!(!is_iceberg(&md));
        let v: Value = serde_json::from_slice(&metadata_json(&md).unwrap()).unwrap();
        assert_eq!(v["format-version"], 1);
    }
}
