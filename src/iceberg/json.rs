//! Our metadata version as an Iceberg table metadata file (format version
//! 2, or 3 for tables with a type only v3 has).
//!
//! One JSON document serves both readers: ours reads its own fields
//! (`table-specs`, `snapshots[].manifests` or `manifests-file`, …) and ignores Iceberg's; an
//! Iceberg reader reads Iceberg's and ignores ours. Iceberg's are derived
//! here from ours each time a version is written, so they cannot disagree:
//!
//! | Iceberg field                       | from                                          |
//! |-------------------------------------|-----------------------------------------------|
//! | `schemas`, `current-schema-id`      | `table-specs[].schema` (one per `schema-id`), the current spec's |
//! | `partition-specs`, `default-spec-id`| `table-specs[].partition-spec` (one per `partition-spec-id`), the current spec's |
//! | `sort-orders`, `default-sort-order-id` | ours (`spec::sort_order`), or the unsorted order 0 |
//! | `refs`                              | our tags, and `main` on the current snapshot  |
//! | `snapshots[].summary.operation`     | `operation` (update, merge → overwrite; optimize → replace) |
//! | `snapshots[].schema-id`             | the `schema-id` of its `table-spec-id`        |
//! | `current-snapshot-id`               | `-1` when there is none                       |
//!
//! A version file is read back by [`parse_metadata`] (our fields only, checked
//! by `spec::validate`), and a commit writes only what that accepts
//! ([`to_checked_json`]).
//!
//! `location`, `metadata-log`, `snapshot-log`, `manifest-list` and the
//! counts in `summary` have the same names on both sides. A table with a
//! snapshot that has no manifest list (written before this existed) is
//! written in our legacy form (format version 1) until it gets them, and
//! so is a table with a nanosecond TIME column (no Iceberg version has one).
//!
//! A v3 table also has row lineage: `next-row-id`, and per snapshot
//! `first-row-id` and `added-rows` (assigned with its manifest list, see
//! `table::iceberg_commit`).
//!
//! A table spec of ours is one (schema, partition spec) pair with one id,
//! and the Iceberg ids of its two halves (`TableSpec::schema_id`,
//! `TableSpec::partition_spec_id`: shared by table specs with an equal
//! schema, or partition spec, so a schema change keeps the partition spec's
//! id as Iceberg does). Field ids, names, types and transforms are written
//! as they are: our JSON for them already follows the Iceberg spec.
//!
//! ```json
//! {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": false, "type": "long"}]}
//! {"spec-id": 0, "fields": [{"field-id": 1000, "source-id": 1, "transform": "bucket[16]", "name": "id_bucket"}]}
//! ```

use serde_json::{Map, Value, json};

use crate::error::Result;
use crate::spec::TableSpec;
use crate::spec::metadata::{FORMAT_VERSION, ICEBERG_V3, LEGACY_FORMAT_VERSION, Snapshot, TableMetadata};
use crate::spec::types::{PrimitiveType, Type};

/// Whether `md` can be written as Iceberg metadata: it knows its location,
/// every snapshot has a manifest list, and every column has an Iceberg type.
pub fn is_iceberg(md: &TableMetadata) -> bool {
    md.location.is_some() && md.snapshots.iter().all(|s| s.manifest_list.is_some()) && has_iceberg_types(md)
}

/// The Iceberg format version `md` is written as, `None` when it is not an
/// Iceberg table (see [`is_iceberg`]): 3 once a table spec has a type only
/// v3 has (the table stays v3: `next-row-id` is set), 2 otherwise.
pub fn iceberg_format_version(md: &TableMetadata) -> Option<u32> {
    if !is_iceberg(md) {
        return None;
    }
    Some(if needs_v3(md) { ICEBERG_V3 } else { FORMAT_VERSION })
}

/// Whether `md` is (or is about to become) an Iceberg v3 table.
pub fn needs_v3(md: &TableMetadata) -> bool {
    md.next_row_id.is_some() || md.table_specs.iter().any(spec_needs_v3)
}

/// Whether every column of every table spec has an Iceberg type.
pub fn has_iceberg_types(md: &TableMetadata) -> bool {
    md.table_specs.iter().all(spec_has_iceberg_types)
}

/// Whether every column of `spec` has an Iceberg type (of any version).
pub fn spec_has_iceberg_types(spec: &TableSpec) -> bool {
    spec_version(spec).is_some()
}

/// Whether some column of `spec` has a type only Iceberg v3 has.
pub fn spec_needs_v3(spec: &TableSpec) -> bool {
    spec_version(spec) == Some(ICEBERG_V3)
}

fn spec_version(spec: &TableSpec) -> Option<u32> {
    fields_version(&spec.schema.fields)
}

/// The highest [`type_version`] of `fields`, `None` if one has none.
fn fields_version(fields: &[crate::spec::types::NestedField]) -> Option<u32> {
    fields
        .iter()
        .try_fold(FORMAT_VERSION, |v, f| Some(v.max(type_version(&f.field_type)?)))
}

/// Whether Iceberg v2 has this type.
pub fn iceberg_v2_type(t: &Type) -> bool {
    type_version(t) == Some(FORMAT_VERSION)
}

/// The first Iceberg format version (from 2) that has this type: VARIANT
/// and nanosecond timestamps come with v3; a nanosecond TIME is in none.
pub fn type_version(t: &Type) -> Option<u32> {
    let max = |a: Option<u32>, b: Option<u32>| Some(a?.max(b?));
    match t {
        Type::Primitive(PrimitiveType::TimeNs) => None,
        Type::Primitive(PrimitiveType::TimestampNs | PrimitiveType::TimestampTzNs) | Type::Variant => Some(ICEBERG_V3),
        Type::Primitive(_) => Some(FORMAT_VERSION),
        Type::Struct(fields) => fields_version(fields),
        Type::List { element, .. } => type_version(element),
        Type::Map { key, value, .. } => max(type_version(key), type_version(value)),
    }
}

/// The bytes of `md`'s version file (see the module docs).
pub fn metadata_json(md: &TableMetadata) -> Result<Vec<u8>> {
    let mut value = serde_json::to_value(md)?;
    let Some(doc) = value.as_object_mut() else {
        return crate::format_err!("table metadata did not serialize as a JSON object");
    };
    if let Some(current) = md.current_snapshot()
        && !current.is_loaded()
    {
        return crate::format_err!(
            "the current snapshot {} must list its manifests inline, and they were not loaded",
            current.snapshot_id
        );
    }
    // Older snapshots whose manifests have a file of their own point to it.
    if let Some(Value::Array(snapshots)) = doc.get_mut("snapshots") {
        for (json, snapshot) in snapshots.iter_mut().zip(&md.snapshots) {
            if snapshot.manifests_file.is_some()
                && Some(snapshot.snapshot_id) != md.current_snapshot_id
                && let Some(obj) = json.as_object_mut()
            {
                obj.remove("manifests");
            }
        }
    }
    let Some(version) = iceberg_format_version(md) else {
        doc.insert("format-version".into(), json!(LEGACY_FORMAT_VERSION));
        return Ok(serde_json::to_vec_pretty(&value)?);
    };
    doc.insert("format-version".into(), json!(version));
    // One schema per Iceberg schema id, one partition spec per Iceberg spec
    // id, each as its first table spec has it.
    let mut schemas = Vec::new();
    let mut specs = Vec::new();
    let (mut schema_ids, mut spec_ids) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    for spec in &md.table_specs {
        if schema_ids.insert(spec.schema_id()) {
            schemas.push(schema_json(spec)?);
        }
        if spec_ids.insert(spec.partition_spec_id()) {
            specs.push(partition_spec_json(spec)?);
        }
    }
    let current = md.current_spec()?;
    doc.insert("schemas".into(), Value::Array(schemas));
    doc.insert("current-schema-id".into(), json!(current.schema_id()));
    doc.insert("partition-specs".into(), Value::Array(specs));
    doc.insert("default-spec-id".into(), json!(current.partition_spec_id()));
    if md.sort_orders.is_empty() {
        doc.insert("sort-orders".into(), json!([{"order-id": 0, "fields": []}]));
    }
    doc.insert(
        "default-sort-order-id".into(),
        json!(md.default_sort_order_id.unwrap_or(0)),
    );
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
            if let Some(spec) = snapshot.table_spec_id.and_then(|id| md.spec(id).ok()) {
                obj.insert("schema-id".into(), json!(spec.schema_id()));
            }
        }
    }
    Ok(serde_json::to_vec_pretty(&value)?)
}

/// The fields of an Iceberg table metadata file (format versions 2 and 3).
const ICEBERG_FIELDS: &[&str] = &[
    "format-version",
    "table-uuid",
    "location",
    "last-sequence-number",
    "last-updated-ms",
    "last-column-id",
    "schemas",
    "current-schema-id",
    "partition-specs",
    "default-spec-id",
    "last-partition-id",
    "properties",
    "current-snapshot-id",
    "snapshots",
    "snapshot-log",
    "metadata-log",
    "sort-orders",
    "default-sort-order-id",
    "refs",
    "next-row-id",
];

/// `md` (without snapshots) as a metadata file of Iceberg's only, without
/// our fields: the first version of a table that other engines' commits
/// move on (a catalog's table, see `catalog::clients`).
pub fn iceberg_only_json(md: &TableMetadata) -> Result<Value> {
    if !md.snapshots.is_empty() || iceberg_format_version(md).is_none() {
        return crate::invalid!("only a new table with Iceberg types is written as Iceberg's metadata alone");
    }
    let mut value: Value = serde_json::from_slice(&metadata_json(md)?)?;
    if let Some(doc) = value.as_object_mut() {
        doc.retain(|key, _| ICEBERG_FIELDS.contains(&key.as_str()));
    }
    Ok(value)
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
    // Only the unsorted order: what a table that never had one writes.
    if md.sort_orders.iter().all(|o| o.is_unsorted()) && md.default_sort_order_id.unwrap_or(0) == 0 {
        md.sort_orders.clear();
        md.default_sort_order_id = None;
    }
    for snapshot in &mut md.snapshots {
        if snapshot.summary.contains_key("operation") {
            std::sync::Arc::make_mut(&mut snapshot.summary).remove("operation");
        }
    }
}

/// The Iceberg schema of a table spec.
pub fn schema_json(spec: &TableSpec) -> Result<Value> {
    Ok(json!({
        "type": "struct",
        "schema-id": spec.schema_id(),
        "fields": serde_json::to_value(&spec.schema.fields)?,
    }))
}

/// The Iceberg partition spec of a table spec.
pub fn partition_spec_json(spec: &TableSpec) -> Result<Value> {
    Ok(json!({
        "spec-id": spec.partition_spec_id(),
        "fields": serde_json::to_value(&spec.partition_spec.fields)?,
    }))
}

/// A version file's metadata as every reader of ours loads it: our fields
/// (Iceberg's dropped), refused when inconsistent.
pub fn parse_metadata(bytes: &[u8]) -> Result<TableMetadata> {
    let mut md: TableMetadata = serde_json::from_slice(bytes)?;
    if !(LEGACY_FORMAT_VERSION..=ICEBERG_V3).contains(&md.format_version) {
        return crate::format_err!(
            "table format version {} is not supported (this build reads versions {LEGACY_FORMAT_VERSION} to {ICEBERG_V3})",
            md.format_version
        );
    }
    strip_iceberg_only(&mut md);
    // In memory a table is always of the version written next; the form
    // on disk follows from its content (see `iceberg::json`).
    md.format_version = FORMAT_VERSION;
    if let Err(problem) = crate::spec::validate::check(&md) {
        return crate::format_err!("inconsistent table metadata: {problem}");
    }
    Ok(md)
}

/// `md` as the JSON of a new version file, refused (before anything is
/// written) when a reader would refuse those bytes: they are parsed and
/// checked exactly as the loader does. Returns the bytes and what a reader
/// gets from them (so a writer can cache the version without reading it).
pub fn to_checked_json(md: &TableMetadata) -> crate::error::Result<(Vec<u8>, TableMetadata)> {
    let bytes = metadata_json(md)?;
    match parse_metadata(&bytes) {
        Ok(read) => Ok((bytes, read)),
        Err(e) => Err(crate::error::Error::Invalid(format!(
            "refusing to commit a metadata version that readers would refuse ({e}); nothing was written"
        ))),
    }
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
            iceberg_schema_id: None,
            iceberg_spec_id: None,
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
        let mut md = TableMetadata::new(Schema::from_arrow(&arrow, 1).unwrap(), PartitionSpec::default()).unwrap();
        md.location = Some("/tmp/wh/t".into());
        md.last_sequence_number = 1;
        md.snapshots.push(Snapshot {
            snapshot_id: 42,
            parent_snapshot_id: None,
            sequence_number: 1,
            timestamp_ms: 1_700_000_000_000,
            operation: "update".into(),
            summary: std::sync::Arc::new([("added-data-files".to_string(), "1".to_string())].into()),
            manifests: Some(Default::default()),
            manifests_file: None,
            table_spec_id: Some(0),
            manifest_list: list.map(str::to_string),
            first_row_id: None,
            added_rows: None,
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
        assert_eq!(parse_metadata(&bytes).unwrap(), md);
    }

    #[test]
    fn no_snapshot_is_minus_one_and_legacy_tables_stay_legacy() {
        let arrow = ArrowSchema::new(vec![Field::new("id", DataType::Int64, true)]);
        let mut md = TableMetadata::new(Schema::from_arrow(&arrow, 1).unwrap(), PartitionSpec::default()).unwrap();
        md.location = Some("/tmp/wh/t".into());
        let v: Value = serde_json::from_slice(&metadata_json(&md).unwrap()).unwrap();
        assert_eq!(v["current-snapshot-id"], -1);
        assert_eq!(
            parse_metadata(&metadata_json(&md).unwrap())
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
    fn v3_types_make_a_v3_table_and_nanosecond_time_stays_legacy() {
        use datafusion::arrow::datatypes::TimeUnit;
        let table = |dt: DataType| {
            let arrow = ArrowSchema::new(vec![Field::new("t", dt, true)]);
            let mut md = TableMetadata::new(Schema::from_arrow(&arrow, 1).unwrap(), PartitionSpec::default()).unwrap();
            md.location = Some("/tmp/wh/t".into());
            md
        };
        let mut md = table(DataType::Timestamp(TimeUnit::Nanosecond, None));
        assert_eq!(iceberg_format_version(&md), Some(3));
        md.next_row_id = Some(7);
        let v: Value = serde_json::from_slice(&metadata_json(&md).unwrap()).unwrap();
        assert_eq!(v["format-version"], 3);
        assert_eq!(v["next-row-id"], 7);
        assert_eq!(v["schemas"][0]["fields"][0]["type"], "timestamp_ns");
        assert_eq!(parse_metadata(&metadata_json(&md).unwrap()).unwrap(), md);
        // Once v3, always v3.
        let mut plain = table(DataType::Int64);
        assert_eq!(iceberg_format_version(&plain), Some(2));
        plain.next_row_id = Some(0);
        assert_eq!(iceberg_format_version(&plain), Some(3));
        let time = table(DataType::Time64(TimeUnit::Nanosecond));
        assert!(!is_iceberg(&time));
        let v: Value = serde_json::from_slice(&metadata_json(&time).unwrap()).unwrap();
        assert_eq!(v["format-version"], 1);
    }

    #[test]
    fn a_version_is_written_only_if_it_reads_back() {
        let md = crate::spec::validate::tests::bucketed(16);
        let (bytes, read) = to_checked_json(&md).unwrap();
        assert_eq!(parse_metadata(&bytes).unwrap(), md);
        assert_eq!(read, md);
        let err = to_checked_json(&crate::spec::validate::tests::bucketed(3_000_000_000))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("refusing to commit a metadata version that readers would refuse"),
            "{err}"
        );
    }
}
