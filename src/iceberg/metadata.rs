//! Iceberg table metadata JSON (format v1 and v2) as other engines write
//! it, parsed: schemas, partition specs, snapshots, refs. Every schema and
//! partition spec of the table's history is kept: each manifest is read
//! with its own spec, and time travel reads a snapshot with the schema it
//! was written with. Pure: finding the current file and rebasing paths are
//! `formats::iceberg::metadata`'s.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::spec::Schema;

/// One partition field as Iceberg writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct IcebergPartitionField {
    pub field_id: i32,
    pub source_id: i32,
    /// As written (`day`, `bucket[16]`, …): an unknown one is kept so the
    /// table can still be read, just not pruned on that field.
    pub transform: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IcebergSpec {
    pub spec_id: i32,
    pub fields: Vec<IcebergPartitionField>,
}

impl IcebergSpec {
    /// The partition spec of one of our table specs, as Iceberg writes it.
    pub fn of(spec: &crate::spec::TableSpec) -> Self {
        Self {
            spec_id: spec.spec_id,
            fields: spec
                .partition_spec
                .fields
                .iter()
                .map(|f| IcebergPartitionField {
                    field_id: f.field_id,
                    source_id: f.source_id,
                    transform: f.transform.to_string(),
                    name: f.name.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct IcebergSnapshot {
    pub snapshot_id: i64,
    pub parent_snapshot_id: Option<i64>,
    pub sequence_number: i64,
    pub timestamp_ms: i64,
    pub manifest_list: String,
    pub summary: BTreeMap<String, String>,
    pub schema_id: Option<i32>,
}

/// A table's metadata file, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct IcebergMetadata {
    pub format_version: i64,
    pub table_uuid: String,
    /// Where the table was written (`/tmp/t`, `file:///tmp/t`, `s3://b/t`).
    pub location: String,
    pub last_updated_ms: i64,
    pub schemas: BTreeMap<i32, Schema>,
    /// Each schema's `identifier-field-ids` (the columns that identify a
    /// row), where set.
    pub identifier_field_ids: BTreeMap<i32, Vec<i32>>,
    pub current_schema_id: i32,
    pub specs: Vec<IcebergSpec>,
    pub default_spec_id: i32,
    pub snapshots: Vec<IcebergSnapshot>,
    pub current_snapshot_id: Option<i64>,
    /// Branches and tags: name → (snapshot id, `branch` | `tag`).
    pub refs: BTreeMap<String, (i64, String)>,
    pub properties: BTreeMap<String, String>,
    /// The sort orders this engine can follow (an order with a transform
    /// it does not know is left out), and the default order's id.
    pub sort_orders: Vec<crate::spec::sort_order::SortOrder>,
    pub default_sort_order_id: Option<i32>,
}

fn field<'a>(doc: &'a Json, key: &str, file: &str) -> Result<&'a Json> {
    doc.get(key)
        .ok_or_else(|| Error::Format(format!("Iceberg metadata {file} has no {key:?}")))
}

fn int(doc: &Json, key: &str, file: &str) -> Result<i64> {
    field(doc, key, file)?
        .as_i64()
        .ok_or_else(|| Error::Format(format!("Iceberg metadata {file}: {key:?} is not an integer")))
}

fn text(doc: &Json, key: &str, file: &str) -> Result<String> {
    field(doc, key, file)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| Error::Format(format!("Iceberg metadata {file}: {key:?} is not a string")))
}

fn string_map(doc: Option<&Json>) -> BTreeMap<String, String> {
    doc.and_then(Json::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Iceberg type names our schema does not spell the same way.
fn normalize_types(value: &mut Json, file: &str) -> Result<()> {
    match value {
        Json::Object(map) => {
            if map.get("initial-default").is_some_and(|d| !d.is_null()) {
                let name = map.get("name").and_then(Json::as_str).unwrap_or("?");
                return Err(Error::Invalid(format!(
                    "Iceberg metadata {file}: column {name:?} has an initial default value (format v3); reading it is not supported yet"
                )));
            }
            for (key, v) in map.iter_mut() {
                if matches!(key.as_str(), "type" | "element" | "key" | "value")
                    && let Json::String(s) = v
                {
                    match s.as_str() {
                        "uuid" => *s = "fixed[16]".to_string(),
                        "unknown" | "geometry" | "geography" => {
                            return Err(Error::Invalid(format!(
                                "Iceberg metadata {file}: columns of type {s:?} are not supported"
                            )));
                        }
                        _ => {}
                    }
                } else {
                    normalize_types(v, file)?;
                }
            }
            Ok(())
        }
        Json::Array(items) => items.iter_mut().try_for_each(|v| normalize_types(v, file)),
        _ => Ok(()),
    }
}

pub(crate) fn parse_schema(doc: &Json, file: &str) -> Result<(i32, Schema)> {
    let id = doc.get("schema-id").and_then(Json::as_i64).unwrap_or(0) as i32;
    let mut doc = doc.clone();
    normalize_types(&mut doc, file)?;
    let schema: Schema =
        serde_json::from_value(doc).map_err(|e| Error::Format(format!("Iceberg metadata {file}: schema {id}: {e}")))?;
    Ok((id, schema))
}

fn parse_spec_fields(fields: &Json, file: &str) -> Result<Vec<IcebergPartitionField>> {
    let Some(items) = fields.as_array() else {
        return Err(Error::Format(format!(
            "Iceberg metadata {file}: partition fields are not a list"
        )));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let source_id = f
                .get("source-id")
                .and_then(Json::as_i64)
                .or_else(|| f.get("source-ids").and_then(|s| s.get(0)).and_then(Json::as_i64))
                .ok_or_else(|| Error::Format(format!("Iceberg metadata {file}: partition field without source-id")))?;
            Ok(IcebergPartitionField {
                // v1 specs may leave field ids out: they are assigned from 1000 in order.
                field_id: f.get("field-id").and_then(Json::as_i64).unwrap_or(1000 + i as i64) as i32,
                source_id: source_id as i32,
                transform: f.get("transform").and_then(Json::as_str).unwrap_or("").to_string(),
                name: f.get("name").and_then(Json::as_str).unwrap_or("").to_string(),
            })
        })
        .collect()
}

impl IcebergMetadata {
    /// Parse a metadata file; `file` names it for errors.
    pub fn parse(bytes: &[u8], file: &str) -> Result<Self> {
        let doc: Json = serde_json::from_slice(bytes)
            .map_err(|e| Error::Format(format!("{file} is not Iceberg table metadata: not JSON ({e})")))?;
        Self::from_json(&doc, file)
    }

    /// [`Self::parse`] of a document already parsed as JSON.
    pub fn from_json(doc: &Json, file: &str) -> Result<Self> {
        let looks_like_iceberg = doc.is_object()
            && doc.get("format-version").is_some()
            && doc.get("location").is_some()
            && (doc.get("schemas").is_some() || doc.get("schema").is_some());
        if !looks_like_iceberg {
            return Err(Error::Invalid(format!(
                "{file} is not Iceberg table metadata (expected a JSON object with \"format-version\", \"location\" and \"schemas\")"
            )));
        }
        let format_version = int(&doc, "format-version", file)?;
        if !(1..=3).contains(&format_version) {
            return Err(Error::Invalid(format!(
                "{file}: Iceberg format version {format_version} is not supported (versions 1 and 2 are read)"
            )));
        }
        let mut schemas = BTreeMap::new();
        let mut identifier_field_ids = BTreeMap::new();
        match doc.get("schemas").and_then(Json::as_array) {
            Some(list) => {
                for s in list {
                    let (id, schema) = parse_schema(s, file)?;
                    schemas.insert(id, schema);
                    let ids: Vec<i32> = s
                        .get("identifier-field-ids")
                        .and_then(Json::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|i| i.as_i64().map(|i| i as i32))
                        .collect();
                    if !ids.is_empty() {
                        identifier_field_ids.insert(id, ids);
                    }
                }
            }
            None => {
                let (id, schema) = parse_schema(field(&doc, "schema", file)?, file)?;
                schemas.insert(id, schema);
            }
        }
        let current_schema_id = doc
            .get("current-schema-id")
            .and_then(Json::as_i64)
            .map(|v| v as i32)
            .or_else(|| schemas.keys().next_back().copied())
            .unwrap_or(0);
        if !schemas.contains_key(&current_schema_id) {
            return Err(Error::Format(format!(
                "Iceberg metadata {file}: current schema {current_schema_id} is not among its schemas"
            )));
        }
        let mut specs = Vec::new();
        match doc.get("partition-specs").and_then(Json::as_array) {
            Some(list) => {
                for s in list {
                    specs.push(IcebergSpec {
                        spec_id: int(s, "spec-id", file)? as i32,
                        fields: parse_spec_fields(field(s, "fields", file)?, file)?,
                    });
                }
            }
            None => specs.push(IcebergSpec {
                spec_id: 0,
                fields: parse_spec_fields(field(&doc, "partition-spec", file)?, file)?,
            }),
        }
        let default_spec_id = doc.get("default-spec-id").and_then(Json::as_i64).unwrap_or(0) as i32;
        let mut snapshots = Vec::new();
        for s in doc.get("snapshots").and_then(Json::as_array).into_iter().flatten() {
            let Some(manifest_list) = s.get("manifest-list").and_then(Json::as_str) else {
                return Err(Error::Invalid(format!(
                    "Iceberg metadata {file}: snapshot {} lists its manifests inline (an early v1 layout); only manifest lists are supported",
                    s.get("snapshot-id").map(|v| v.to_string()).unwrap_or_default()
                )));
            };
            let summary = string_map(s.get("summary"));
            snapshots.push(IcebergSnapshot {
                snapshot_id: int(s, "snapshot-id", file)?,
                parent_snapshot_id: s.get("parent-snapshot-id").and_then(Json::as_i64),
                sequence_number: s.get("sequence-number").and_then(Json::as_i64).unwrap_or(0),
                timestamp_ms: int(s, "timestamp-ms", file)?,
                manifest_list: manifest_list.to_string(),
                summary,
                schema_id: s.get("schema-id").and_then(Json::as_i64).map(|v| v as i32),
            });
        }
        let current_snapshot_id = doc
            .get("current-snapshot-id")
            .and_then(Json::as_i64)
            .filter(|id| *id != -1);
        let mut refs = BTreeMap::new();
        if let Some(map) = doc.get("refs").and_then(Json::as_object) {
            for (name, r) in map {
                if let Some(id) = r.get("snapshot-id").and_then(Json::as_i64) {
                    let kind = r.get("type").and_then(Json::as_str).unwrap_or("tag").to_string();
                    refs.insert(name.clone(), (id, kind));
                }
            }
        }
        Ok(Self {
            format_version,
            table_uuid: doc.get("table-uuid").and_then(Json::as_str).unwrap_or("").to_string(),
            location: text(&doc, "location", file)?,
            last_updated_ms: doc.get("last-updated-ms").and_then(Json::as_i64).unwrap_or(0),
            schemas,
            identifier_field_ids,
            current_schema_id,
            specs,
            default_spec_id,
            snapshots,
            current_snapshot_id,
            refs,
            properties: string_map(doc.get("properties")),
            sort_orders: doc
                .get("sort-orders")
                .and_then(Json::as_array)
                .map(|orders| {
                    orders
                        .iter()
                        .filter_map(|o| serde_json::from_value(o.clone()).ok())
                        .collect()
                })
                .unwrap_or_default(),
            default_sort_order_id: doc
                .get("default-sort-order-id")
                .and_then(Json::as_i64)
                .map(|id| id as i32),
        })
    }

    pub fn snapshot(&self, id: i64) -> Option<&IcebergSnapshot> {
        self.snapshots.iter().find(|s| s.snapshot_id == id)
    }

    pub fn spec(&self, id: i32) -> Option<&IcebergSpec> {
        self.specs.iter().find(|s| s.spec_id == id)
    }

    /// The schema a snapshot is read with: its own when recorded, else the current one.
    pub fn schema_for(&self, snapshot: Option<&IcebergSnapshot>) -> (i32, &Schema) {
        let id = snapshot
            .and_then(|s| s.schema_id)
            .filter(|id| self.schemas.contains_key(id))
            .unwrap_or(self.current_schema_id);
        // `current_schema_id` is checked to exist when parsing.
        let schema = self.schemas.get(&id).or_else(|| self.schemas.values().next());
        (id, schema.expect("Iceberg metadata has at least one schema"))
    }
}

/// The version number in a metadata file name: `v12.metadata.json` → 12,
/// `00012-<uuid>.metadata.json` → 12.
pub fn metadata_version(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".metadata.json")?;
    if let Some(n) = stem.strip_prefix('v') {
        return n.parse().ok();
    }
    let (n, rest) = stem.split_once('-')?;
    (!rest.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_numbers_in_both_naming_styles() {
        assert_eq!(metadata_version("v12.metadata.json"), Some(12));
        assert_eq!(metadata_version("00008-ecca9117-a3cc.metadata.json"), Some(8));
        assert_eq!(metadata_version("version-hint.text"), None);
        assert_eq!(metadata_version("x-1.metadata.json"), None);
    }

    #[test]
    fn not_iceberg_is_a_clear_error() {
        let err = IcebergMetadata::parse(br#"{"name":"pkg","version":"1.0.0"}"#, "v1.metadata.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not Iceberg table metadata"), "{err}");
    }
}
