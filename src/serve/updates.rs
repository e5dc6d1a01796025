//! An Iceberg `CommitTableRequest` on a table of ours: requirements checked
//! against the Iceberg view of our metadata, updates applied in order to
//! our metadata.
//!
//! ```json
//! {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 42}],
//!  "updates": [{"action": "add-snapshot", "snapshot": {…}},
//!              {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 43}]}
//! ```
//!
//! Our metadata pairs a schema with a partition spec (a table spec, one id
//! for both: Iceberg's `schema-id` and `spec-id` are that id). So a new
//! current schema makes a table spec of it and the current partition spec,
//! a new default partition spec one of the current schema and it (an
//! existing table spec with the same pair is reused), and ids a client
//! proposed for new schemas or specs are replaced by ours; the response's
//! metadata says which.
//!
//! | update | applied as |
//! |---|---|
//! | `assign-uuid` | accepted when it is the table's uuid |
//! | `upgrade-format-version` | 2 → 3 starts row lineage; never down |
//! | `add-schema`, `set-current-schema` | a new table spec; field ids kept (by id, old files read right), promotions int → long, float → double, wider decimal; new required columns, required ← optional, a reused field id and dropping a partition source are refused |
//! | `add-spec`, `set-default-spec` | a new table spec; partition field ids kept or assigned |
//! | `add-sort-order`, `set-default-sort-order` | the order (an equal known one is reused, ids are ours; `-1` is the one just added); its columns must be in the current schema |
//! | `add-snapshot` + `set-snapshot-ref main` | the client's snapshot as a change of ours (`formats::iceberg::adopt`) |
//! | `set-snapshot-ref` to an existing snapshot | `main`: roll back to it; a tag: the tag |
//! | `remove-snapshot-ref` | a tag |
//! | `remove-snapshots` | dropped from the metadata (files stay until orphan removal) |
//! | `set-location` | accepted when it is the table's location |
//! | `set-properties`, `remove-properties` | the table's properties |
//!
//! Anything else (statistics files, encryption keys, branches other than
//! `main`, snapshots left off `main`) is refused with a message naming it,
//! and nothing is committed.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::formats::iceberg::adopt::ForeignSnapshot;
use crate::spec::metadata::{ICEBERG_V3, SnapshotRef};
use crate::spec::types::{PrimitiveType, Type};
use crate::spec::{NestedField, PartitionField, PartitionSpec, Schema, TableMetadata};
use crate::table::change::Change;

/// A precondition of a commit (Iceberg's `TableRequirement`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Requirement {
    AssertCreate,
    AssertTableUuid {
        uuid: String,
    },
    AssertRefSnapshotId {
        #[serde(rename = "ref")]
        reference: String,
        #[serde(rename = "snapshot-id")]
        snapshot_id: Option<i64>,
    },
    AssertLastAssignedFieldId {
        #[serde(rename = "last-assigned-field-id")]
        id: i32,
    },
    AssertCurrentSchemaId {
        #[serde(rename = "current-schema-id")]
        id: i32,
    },
    AssertLastAssignedPartitionId {
        #[serde(rename = "last-assigned-partition-id")]
        id: i32,
    },
    AssertDefaultSpecId {
        #[serde(rename = "default-spec-id")]
        id: i32,
    },
    AssertDefaultSortOrderId {
        #[serde(rename = "default-sort-order-id")]
        id: i32,
    },
}

const REQUIREMENTS: [&str; 8] = [
    "assert-create",
    "assert-table-uuid",
    "assert-ref-snapshot-id",
    "assert-last-assigned-field-id",
    "assert-current-schema-id",
    "assert-last-assigned-partition-id",
    "assert-default-spec-id",
    "assert-default-sort-order-id",
];

/// A change to the table (Iceberg's `TableUpdate`), of the kinds we apply.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Update {
    AssignUuid {
        uuid: String,
    },
    UpgradeFormatVersion {
        #[serde(rename = "format-version")]
        format_version: u32,
    },
    AddSchema {
        schema: Json,
        #[serde(rename = "last-column-id", default)]
        last_column_id: Option<i32>,
    },
    SetCurrentSchema {
        #[serde(rename = "schema-id")]
        schema_id: i32,
    },
    AddSpec {
        spec: Json,
    },
    SetDefaultSpec {
        #[serde(rename = "spec-id")]
        spec_id: i32,
    },
    AddSortOrder {
        #[serde(rename = "sort-order")]
        sort_order: Json,
    },
    SetDefaultSortOrder {
        #[serde(rename = "sort-order-id")]
        sort_order_id: i32,
    },
    AddSnapshot {
        snapshot: Json,
    },
    SetSnapshotRef {
        #[serde(rename = "ref-name")]
        ref_name: String,
        #[serde(rename = "type")]
        kind: String,
        #[serde(rename = "snapshot-id")]
        snapshot_id: i64,
    },
    RemoveSnapshots {
        #[serde(rename = "snapshot-ids")]
        snapshot_ids: Vec<i64>,
    },
    RemoveSnapshotRef {
        #[serde(rename = "ref-name")]
        ref_name: String,
    },
    SetLocation {
        location: String,
    },
    SetProperties {
        updates: BTreeMap<String, String>,
    },
    RemoveProperties {
        removals: Vec<String>,
    },
}

const UPDATES: [&str; 15] = [
    "assign-uuid",
    "upgrade-format-version",
    "add-schema",
    "set-current-schema",
    "add-spec",
    "set-default-spec",
    "add-sort-order",
    "set-default-sort-order",
    "add-snapshot",
    "set-snapshot-ref",
    "remove-snapshots",
    "remove-snapshot-ref",
    "set-location",
    "set-properties",
    "remove-properties",
];

/// A parsed `CommitTableRequest` (the identifier is the caller's).
#[derive(Debug, Clone, Default)]
pub struct CommitRequest {
    pub requirements: Vec<Requirement>,
    pub updates: Vec<Update>,
}

fn tagged<T: for<'de> Deserialize<'de>>(item: &Json, tag: &str, known: &[&str], what: &str) -> Result<T> {
    let Some(name) = item.get(tag).and_then(Json::as_str) else {
        return Err(Error::Invalid(format!("a {what} without {tag:?}: {item}")));
    };
    if !known.contains(&name) {
        return Err(Error::Invalid(format!(
            "{what} {name:?} is not supported by this catalog (supported: {})",
            known.join(", ")
        )));
    }
    serde_json::from_value(item.clone()).map_err(|e| Error::Invalid(format!("{what} {name:?}: {e}")))
}

impl CommitRequest {
    /// From the request body; unknown requirement or update kinds, and
    /// snapshots a commit adds without making them `main`, are refused.
    pub fn parse(doc: &Json) -> Result<Self> {
        let list = |key: &str| -> Result<&[Json]> {
            match doc.get(key) {
                Some(Json::Array(items)) => Ok(items),
                None | Some(Json::Null) => Ok(&[]),
                Some(other) => Err(Error::Invalid(format!("{key:?} must be a list, not {other}"))),
            }
        };
        let requirements = list("requirements")?
            .iter()
            .map(|r| tagged(r, "type", &REQUIREMENTS, "requirement"))
            .collect::<Result<Vec<Requirement>>>()?;
        let updates = list("updates")?
            .iter()
            .map(|u| tagged(u, "action", &UPDATES, "update"))
            .collect::<Result<Vec<Update>>>()?;
        let request = Self { requirements, updates };
        request.check_snapshots_reach_main()?;
        Ok(request)
    }

    /// Whether this creates the table (`assert-create`).
    pub fn creates(&self) -> bool {
        self.requirements.contains(&Requirement::AssertCreate)
    }

    /// Our tables have one branch: each snapshot added here must become `main`.
    fn check_snapshots_reach_main(&self) -> Result<()> {
        for (i, u) in self.updates.iter().enumerate() {
            let Update::AddSnapshot { snapshot } = u else { continue };
            let id = snapshot.get("snapshot-id").and_then(Json::as_i64);
            let reaches = self.updates[i + 1..].iter().any(|later| {
                matches!(later, Update::SetSnapshotRef { ref_name, snapshot_id, .. }
                    if ref_name == "main" && Some(*snapshot_id) == id)
            });
            if !reaches {
                return Err(Error::Invalid(format!(
                    "add-snapshot: snapshot {} is not made the current snapshot of branch main in the same commit; this catalog's tables have one branch (main)",
                    id.map_or("?".to_string(), |i| i.to_string())
                )));
            }
        }
        Ok(())
    }
}

fn failed(table: &str, detail: String) -> Error {
    Error::CommitConflict {
        table: table.to_string(),
        detail: format!("{detail}; the table changed since it was read (reload it and try again)"),
    }
}

/// Check `requirements` against the table as Iceberg readers see it.
pub fn check_requirements(md: &TableMetadata, requirements: &[Requirement], table: &str) -> Result<()> {
    for r in requirements {
        match r {
            Requirement::AssertCreate => {
                return Err(Error::TableExists(format!("table {table} already exists")));
            }
            Requirement::AssertTableUuid { uuid } if *uuid != md.table_uuid => {
                return Err(failed(
                    table,
                    format!(
                        "requirement assert-table-uuid: the table's uuid is {}, not {uuid}",
                        md.table_uuid
                    ),
                ));
            }
            Requirement::AssertRefSnapshotId { reference, snapshot_id } => {
                let actual = match reference.as_str() {
                    "main" => md.current_snapshot_id,
                    tag => md.refs.get(tag).map(|r| r.snapshot_id),
                };
                if actual != *snapshot_id {
                    let show = |v: Option<i64>| v.map_or("absent".to_string(), |v| v.to_string());
                    return Err(failed(
                        table,
                        format!(
                            "requirement assert-ref-snapshot-id: {reference} is {}, expected {}",
                            show(actual),
                            show(*snapshot_id)
                        ),
                    ));
                }
            }
            Requirement::AssertLastAssignedFieldId { id } if *id != md.last_column_id => {
                return Err(failed(
                    table,
                    format!(
                        "requirement assert-last-assigned-field-id: it is {}, expected {id}",
                        md.last_column_id
                    ),
                ));
            }
            Requirement::AssertCurrentSchemaId { id } if *id != md.current_spec()?.schema_id() => {
                return Err(failed(
                    table,
                    format!(
                        "requirement assert-current-schema-id: it is {}, expected {id}",
                        md.current_spec()?.schema_id()
                    ),
                ));
            }
            Requirement::AssertLastAssignedPartitionId { id } if *id != md.last_partition_id => {
                return Err(failed(
                    table,
                    format!(
                        "requirement assert-last-assigned-partition-id: it is {}, expected {id}",
                        md.last_partition_id
                    ),
                ));
            }
            Requirement::AssertDefaultSpecId { id } if *id != md.current_spec()?.partition_spec_id() => {
                return Err(failed(
                    table,
                    format!(
                        "requirement assert-default-spec-id: it is {}, expected {id}",
                        md.current_spec()?.partition_spec_id()
                    ),
                ));
            }
            Requirement::AssertDefaultSortOrderId { id } if *id != md.default_sort_order_id.unwrap_or(0) => {
                return Err(failed(
                    table,
                    format!(
                        "requirement assert-default-sort-order-id: it is {}, expected {id}",
                        md.default_sort_order_id.unwrap_or(0)
                    ),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// What earlier updates of the same commit added (for ids they refer to).
#[derive(Debug, Default)]
pub struct Pending {
    /// The Iceberg ids of the schemas and partition specs this commit
    /// added, in order, by the id the client gave each (if any).
    schemas: Vec<(Option<i32>, i32)>,
    specs: Vec<(Option<i32>, i32)>,
    /// The sort orders this commit added: (the client's id, ours).
    orders: Vec<(Option<i32>, i32)>,
}

impl Pending {
    /// The schema (or spec, `specs`) a later update names: `-1` is the last
    /// one added, another id one the client gave an added one, else the
    /// table's own id.
    fn resolve(added: &[(Option<i32>, i32)], id: i32) -> Option<i32> {
        match id {
            -1 => added.last().map(|(_, ours)| *ours),
            id => Some(
                added
                    .iter()
                    .rev()
                    .find(|(given, _)| *given == Some(id))
                    .map_or(id, |(_, ours)| *ours),
            ),
        }
    }
}

/// An Iceberg schema (`{"type": "struct", "fields": […]}`) as ours.
pub fn parse_schema(doc: &Json) -> Result<Schema> {
    let schema = crate::iceberg::metadata::parse_schema(doc, "the request")
        .map(|(_, s)| s)
        .map_err(|e| Error::Invalid(e.to_string()))?;
    crate::spec::validate::unique_names(&schema.fields).map_err(|e| Error::Invalid(format!("schema: {e}")))?;
    Ok(schema)
}

/// An Iceberg partition spec on `schema`: field ids as given, or reused from
/// an earlier spec of the same source and transform, or new above `last`.
pub fn parse_spec(doc: &Json, schema: &Schema, earlier: &[&PartitionSpec], last: &mut i32) -> Result<PartitionSpec> {
    let Some(items) = doc.get("fields").and_then(Json::as_array) else {
        return Err(Error::Invalid(format!("partition spec without fields: {doc}")));
    };
    let mut fields = Vec::with_capacity(items.len());
    for item in items {
        let source_id = item
            .get("source-id")
            .and_then(Json::as_i64)
            .ok_or_else(|| Error::Invalid(format!("partition field without source-id: {item}")))?
            as i32;
        let transform_text = item.get("transform").and_then(Json::as_str).unwrap_or_default();
        let transform: crate::transform::Transform = transform_text
            .parse()
            .map_err(|e| Error::Invalid(format!("partition field {item}: transform {transform_text:?}: {e}")))?;
        let Some(source) = schema.field_by_id(source_id) else {
            return Err(Error::Invalid(format!(
                "partition field {item}: source-id {source_id} is not a column of the schema"
            )));
        };
        let name = item
            .get("name")
            .and_then(Json::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| PartitionSpec::default_name(&transform, &source.name));
        let field_id = match item.get("field-id").and_then(Json::as_i64) {
            Some(id) => id as i32,
            None => match earlier
                .iter()
                .flat_map(|s| &s.fields)
                .find(|f| f.source_id == source_id && f.transform == transform)
            {
                Some(f) => f.field_id,
                None => {
                    *last += 1;
                    *last
                }
            },
        };
        *last = (*last).max(field_id);
        fields.push(PartitionField {
            field_id,
            source_id,
            transform,
            name,
        });
    }
    for (i, f) in fields.iter().enumerate() {
        if fields[..i].iter().any(|g| g.field_id == f.field_id) {
            return Err(Error::Invalid(format!(
                "partition field id {} appears twice",
                f.field_id
            )));
        }
    }
    let spec = PartitionSpec { fields };
    spec.validate(schema)?;
    spec.bind(schema)?;
    Ok(spec)
}

/// Whether `to` may replace `from` for one field id: the same type, or a
/// promotion Iceberg allows (nested types compared field by field).
fn type_change_ok(from: &Type, to: &Type) -> bool {
    use PrimitiveType as P;
    match (from, to) {
        (Type::Primitive(a), Type::Primitive(b)) if a == b => true,
        (Type::Primitive(P::Int), Type::Primitive(P::Long)) => true,
        (Type::Primitive(P::Float), Type::Primitive(P::Double)) => true,
        (
            Type::Primitive(P::Decimal {
                precision: p1,
                scale: s1,
            }),
            Type::Primitive(P::Decimal {
                precision: p2,
                scale: s2,
            }),
        ) => s1 == s2 && p2 >= p1,
        (Type::Primitive(_), _) | (_, Type::Primitive(_)) => false,
        (Type::Struct(_), Type::Struct(_)) => true,
        (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b) && nested_ok(a, b),
    }
}

/// The fields directly inside a nested type (list elements and map keys
/// and values as fields with their ids).
fn children(t: &Type) -> Vec<NestedField> {
    let field = |id: i32, name: &str, required: bool, t: &Type| NestedField {
        id,
        name: name.to_string(),
        required,
        field_type: t.clone(),
        doc: None,
    };
    match t {
        Type::Struct(fields) => fields.clone(),
        Type::List {
            element_id,
            element_required,
            element,
        } => vec![field(*element_id, "element", *element_required, element)],
        Type::Map {
            key_id,
            key,
            value_id,
            value_required,
            value,
        } => vec![
            field(*key_id, "key", true, key),
            field(*value_id, "value", *value_required, value),
        ],
        Type::Primitive(_) | Type::Variant => Vec::new(),
    }
}

fn nested_ok(a: &Type, b: &Type) -> bool {
    let (ca, cb) = (children(a), children(b));
    ca.iter().all(|x| match cb.iter().find(|y| y.id == x.id) {
        Some(y) => type_change_ok(&x.field_type, &y.field_type),
        None => false,
    })
}

fn all_fields(fields: &[NestedField], out: &mut HashMap<i32, NestedField>) {
    for f in fields {
        out.insert(f.id, f.clone());
        all_fields(&children(&f.field_type), out);
    }
}

/// A type as Iceberg spells it (`int`, `decimal(9, 2)`, `struct<…>`).
fn type_name(t: &Type) -> String {
    match serde_json::to_value(t) {
        Ok(Json::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => format!("{t:?}"),
    }
}

/// Refuse a schema Iceberg's `Schema` would refuse, or one that gives an id
/// of an earlier column another type, or a new column an id the table used
/// before (checked when it is added, made current or not).
fn check_new_schema(md: &TableMetadata, schema: &Schema, doc: &Json) -> Result<()> {
    let mut fields = HashMap::new();
    all_fields(&schema.fields, &mut fields);
    let mut known = HashMap::new();
    for spec in &md.table_specs {
        all_fields(&spec.schema.fields, &mut known);
    }
    for (id, f) in &fields {
        match known.get(id) {
            Some(was)
                if !type_change_ok(&was.field_type, &f.field_type)
                    && !type_change_ok(&f.field_type, &was.field_type) =>
            {
                return Err(Error::Invalid(format!(
                    "add-schema: field id {id} ({:?}) was {} in an earlier schema and cannot be {} (ids are never reused for another type)",
                    f.name,
                    type_name(&was.field_type),
                    type_name(&f.field_type)
                )));
            }
            Some(_) => {}
            None if *id <= md.last_column_id => {
                return Err(Error::Invalid(format!(
                    "add-schema: column {:?} takes field id {id}, which the table used before (ids of new columns must be above {})",
                    f.name, md.last_column_id
                )));
            }
            None => {}
        }
    }
    let identifiers = doc
        .get("identifier-field-ids")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    for id in identifiers {
        let field = id.as_i64().and_then(|i| fields.get(&(i as i32)));
        match field {
            Some(f) if f.required && matches!(f.field_type, Type::Primitive(_)) => {}
            Some(f) => {
                return Err(Error::Invalid(format!(
                    "add-schema: identifier field {:?} must be a required column of a primitive type",
                    f.name
                )));
            }
            None => {
                return Err(Error::Invalid(format!(
                    "add-schema: identifier field id {id} is not a field of the schema"
                )));
            }
        }
    }
    Ok(())
}

/// Refuse `schema` when `spec` partitions by a column it lacks.
fn check_partition_sources(schema: &Schema, spec: &PartitionSpec, what: &str) -> Result<()> {
    match spec.fields.iter().find(|p| schema.field_by_id(p.source_id).is_none()) {
        Some(p) => Err(Error::Invalid(format!(
            "{what}: the schema drops the source column of partition field {:?}; change the partition spec first",
            p.name
        ))),
        None => Ok(()),
    }
}

/// Refuse a new schema that would misread files written under `md`.
fn check_schema_change(md: &TableMetadata, schema: &Schema) -> Result<()> {
    let current = md.current_spec()?;
    let mut old = HashMap::new();
    all_fields(&current.schema.fields, &mut old);
    let mut new = HashMap::new();
    all_fields(&schema.fields, &mut new);
    for (id, f) in &new {
        match old.get(id) {
            Some(was) => {
                if !type_change_ok(&was.field_type, &f.field_type) {
                    return Err(Error::Invalid(format!(
                        "add-schema: column {:?} (field {id}) cannot change from {} to {}: only int → long, float → double and wider decimal precision are safe",
                        f.name,
                        type_name(&was.field_type),
                        type_name(&f.field_type)
                    )));
                }
                if f.required && !was.required {
                    return Err(Error::Invalid(format!(
                        "add-schema: column {:?} cannot become required: files may hold nulls in it",
                        f.name
                    )));
                }
            }
            // (Its id was checked when the schema was added.)
            None => {
                if f.required {
                    return Err(Error::Invalid(format!(
                        "add-schema: new column {:?} cannot be required: files written before hold no values for it",
                        f.name
                    )));
                }
            }
        }
    }
    check_partition_sources(schema, &current.partition_spec, "set-current-schema")
}

/// `md` with table spec (`schema`, `partition_spec`) current: an existing
/// one with both, or a new one.
fn with_table_spec(md: &TableMetadata, schema: Schema, partition_spec: PartitionSpec) -> Result<TableMetadata> {
    partition_spec.validate(&schema)?;
    partition_spec.bind(&schema)?;
    let mut next = md.clone();
    next.last_updated_ms = chrono::Utc::now().timestamp_millis();
    next.last_column_id = next.last_column_id.max(schema.highest_field_id());
    next.last_partition_id = next.last_partition_id.max(partition_spec.highest_field_id());
    next.use_table_spec(schema, partition_spec);
    Ok(next)
}

fn same_location(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim_end_matches('/');
        s.strip_prefix("file://").unwrap_or(s).to_string()
    };
    norm(a) == norm(b)
}

/// Apply one update to `md`. An `add-snapshot` takes the change prepared
/// for its snapshot (`prepared`, by snapshot id).
pub fn apply_one(
    md: &TableMetadata,
    update: &Update,
    prepared: &HashMap<i64, Change>,
    pending: &mut Pending,
    table: &str,
) -> Result<TableMetadata> {
    // A snapshot is built from its prepared change, not from a copy of `md`.
    let mut next = match update {
        Update::AddSnapshot { snapshot } => return add_snapshot(md, snapshot, prepared, table),
        _ => md.clone(),
    };
    let now = chrono::Utc::now().timestamp_millis();
    match update {
        Update::AssignUuid { uuid } => {
            if *uuid != md.table_uuid {
                return Err(Error::Invalid(format!(
                    "assign-uuid: the table's uuid is {}; it cannot change",
                    md.table_uuid
                )));
            }
        }
        Update::UpgradeFormatVersion { format_version } => {
            let current = crate::iceberg::json::iceberg_format_version(md).unwrap_or(2);
            match *format_version {
                v if v == current => {}
                v if v < current => {
                    return Err(Error::Invalid(format!(
                        "upgrade-format-version: the table is format version {current}; it cannot go down to {v}"
                    )));
                }
                ICEBERG_V3 => {
                    next.next_row_id = Some(next.next_row_id.unwrap_or(0));
                }
                v => {
                    return Err(Error::Invalid(format!(
                        "upgrade-format-version: format version {v} is not supported (2 and 3 are)"
                    )));
                }
            }
        }
        // `last-column-id` is deprecated and means the new highest id (Java
        // sends it, pyiceberg does not): ours follows from the schemas.
        Update::AddSchema { schema, .. } => {
            let parsed = parse_schema(schema)?;
            check_new_schema(md, &parsed, schema)?;
            let current = md.current_spec()?;
            check_partition_sources(&parsed, &current.partition_spec, "add-schema")?;
            next.last_column_id = next.last_column_id.max(parsed.highest_field_id());
            next.last_updated_ms = now;
            let id = next.add_table_spec(parsed, current.partition_spec.clone());
            let given = schema.get("schema-id").and_then(Json::as_i64).map(|i| i as i32);
            pending.schemas.push((given, next.spec(id)?.schema_id()));
        }
        Update::SetCurrentSchema { schema_id } => {
            let Some(spec) = Pending::resolve(&pending.schemas, *schema_id).and_then(|id| md.spec_of_schema(id)) else {
                return Err(Error::Invalid(format!(
                    "set-current-schema: there is no schema {schema_id}"
                )));
            };
            let schema = spec.schema.clone();
            if schema != md.current_spec()?.schema {
                check_schema_change(md, &schema)?;
                next = with_table_spec(md, schema, md.current_spec()?.partition_spec.clone())?;
            }
        }
        Update::AddSpec { spec } => {
            let current = md.current_spec()?;
            let earlier: Vec<&PartitionSpec> = md.table_specs.iter().map(|s| &s.partition_spec).collect();
            let mut last = md.last_partition_id;
            let partition_spec = parse_spec(spec, &current.schema, &earlier, &mut last)?;
            next.last_partition_id = next.last_partition_id.max(last);
            next.last_updated_ms = now;
            let id = next.add_table_spec(current.schema.clone(), partition_spec);
            let given = spec.get("spec-id").and_then(Json::as_i64).map(|i| i as i32);
            pending.specs.push((given, next.spec(id)?.partition_spec_id()));
        }
        Update::SetDefaultSpec { spec_id } => {
            let current = md.current_spec()?;
            let Some(spec) = Pending::resolve(&pending.specs, *spec_id).and_then(|id| md.spec_of_partition_spec(id))
            else {
                return Err(Error::Invalid(format!(
                    "set-default-spec: there is no partition spec {spec_id}"
                )));
            };
            let partition_spec = spec.partition_spec.clone();
            if partition_spec != current.partition_spec {
                next = with_table_spec(md, current.schema.clone(), partition_spec)?;
            }
        }
        Update::AddSortOrder { sort_order } => {
            let order: crate::spec::sort_order::SortOrder = serde_json::from_value(sort_order.clone())
                .map_err(|e| Error::Invalid(format!("add-sort-order: not a sort order ({e}): {sort_order}")))?;
            let given = sort_order.get("order-id").and_then(Json::as_i64).map(|id| id as i32);
            let probe = crate::spec::sort_order::SortOrder {
                order_id: 1,
                fields: order.fields.clone(),
            };
            probe
                .check(&md.current_spec()?.schema)
                .map_err(|e| Error::Invalid(format!("add-sort-order: {e}")))?;
            let ours = crate::spec::sort_order::add_order(&mut next.sort_orders, order.fields);
            pending.orders.push((given, ours));
        }
        Update::SetDefaultSortOrder { sort_order_id } => {
            let Some(id) = Pending::resolve(&pending.orders, *sort_order_id) else {
                return Err(Error::Invalid(
                    "set-default-sort-order: -1 names the order added last, and this commit added none".into(),
                ));
            };
            if id != 0 && !next.sort_orders.iter().any(|o| o.order_id == id) {
                return Err(Error::Invalid(format!(
                    "set-default-sort-order: there is no sort order {sort_order_id}"
                )));
            }
            if next.sort_orders.is_empty() {
                next.sort_orders.push(crate::spec::sort_order::SortOrder::unsorted());
            }
            next.default_sort_order_id = Some(id);
        }
        // Returned above.
        Update::AddSnapshot { .. } => {}
        Update::SetSnapshotRef {
            ref_name,
            kind,
            snapshot_id,
        } => {
            if md.snapshot(*snapshot_id).is_none() {
                return Err(Error::Invalid(format!(
                    "set-snapshot-ref {ref_name}: snapshot {snapshot_id} is not in the table"
                )));
            }
            match (ref_name.as_str(), kind.as_str()) {
                ("main", "branch") => {
                    if md.current_snapshot_id != Some(*snapshot_id) {
                        next.set_current_snapshot(*snapshot_id, now);
                        next.last_updated_ms = now;
                    }
                }
                ("main", _) => {
                    return Err(Error::Invalid("set-snapshot-ref: main is a branch".to_string()));
                }
                (_, "tag") => {
                    next.refs.insert(
                        ref_name.clone(),
                        SnapshotRef {
                            snapshot_id: *snapshot_id,
                            kind: "tag".to_string(),
                        },
                    );
                }
                (_, _) => {
                    return Err(Error::Invalid(format!(
                        "set-snapshot-ref {ref_name}: branches other than main are not supported"
                    )));
                }
            }
        }
        Update::RemoveSnapshotRef { ref_name } => {
            if ref_name == "main" {
                return Err(Error::Invalid(
                    "remove-snapshot-ref: main cannot be removed".to_string(),
                ));
            }
            next.refs.remove(ref_name);
        }
        Update::RemoveSnapshots { snapshot_ids } => {
            for id in snapshot_ids {
                if md.current_snapshot_id == Some(*id) {
                    return Err(Error::Invalid(format!(
                        "remove-snapshots: snapshot {id} is the current snapshot"
                    )));
                }
                if let Some((tag, _)) = md.refs.iter().find(|(_, r)| r.snapshot_id == *id) {
                    return Err(Error::Invalid(format!(
                        "remove-snapshots: snapshot {id} is tagged {tag}; remove the tag first"
                    )));
                }
            }
            next.snapshots.retain(|s| !snapshot_ids.contains(&s.snapshot_id));
        }
        Update::SetLocation { location } => {
            let here = md.location.as_deref().unwrap_or_default();
            if !same_location(location, here) {
                return Err(Error::Invalid(format!(
                    "set-location: the table lives at {here}; moving it to {location} is not supported"
                )));
            }
        }
        Update::SetProperties { updates } => {
            next = crate::table::properties::set_properties(&next, updates)
                .map_err(|e| Error::Invalid(format!("set-properties: {e}")))?;
        }
        Update::RemoveProperties { removals } => {
            next = crate::table::properties::unset_properties(&next, removals, true)
                .map_err(|e| Error::Invalid(format!("remove-properties: {e}")))?;
        }
    }
    Ok(next)
}

/// `add-snapshot`: the client's snapshot as its prepared change applied to
/// `md`, keeping the client's timestamp, summary counts and schema id.
fn add_snapshot(
    md: &TableMetadata,
    snapshot: &Json,
    prepared: &HashMap<i64, Change>,
    table: &str,
) -> Result<TableMetadata> {
    let foreign = ForeignSnapshot::parse(snapshot)?;
    let Some(change) = prepared.get(&foreign.snapshot_id) else {
        return Err(Error::Invalid(format!(
            "add-snapshot: snapshot {} was not prepared",
            foreign.snapshot_id
        )));
    };
    let mut next = change.apply(md, table)?;
    if let Some(s) = next.snapshots.iter_mut().find(|s| s.snapshot_id == foreign.snapshot_id) {
        s.timestamp_ms = foreign.timestamp_ms;
        let summary = std::sync::Arc::make_mut(&mut s.summary);
        for (k, v) in &foreign.summary {
            if k != "operation" {
                summary.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        // The client's schema id names the table spec with that schema
        // and the current partition spec, if there is one.
        if let Some(schema_id) = foreign.schema_id
            && let Some(spec) = md.table_specs.iter().find(|t| {
                t.schema_id() == schema_id && md.current_spec().is_ok_and(|c| c.partition_spec == t.partition_spec)
            })
        {
            s.table_spec_id = Some(spec.spec_id);
        }
    }
    Ok(next)
}

/// The metadata of a table created by a commit with `assert-create`: its
/// schema, partition spec, location, properties and format version, from
/// the updates that set them (the rest of the commit applies on top).
pub fn created_metadata(updates: &[Update], location: &str) -> Result<TableMetadata> {
    let mut schema: Option<Schema> = None;
    let mut added_schemas: Vec<(Option<i32>, Schema)> = Vec::new();
    let mut added_specs: Vec<(Option<i32>, Json)> = Vec::new();
    let mut spec_doc: Option<Json> = None;
    let mut properties = BTreeMap::new();
    let mut format_version = 2;
    let mut uuid = None;
    for u in updates {
        match u {
            Update::AssignUuid { uuid: u } => uuid = Some(u.clone()),
            Update::UpgradeFormatVersion { format_version: v } => format_version = *v,
            Update::AddSchema { schema: s, .. } => {
                added_schemas.push((
                    s.get("schema-id").and_then(Json::as_i64).map(|i| i as i32),
                    parse_schema(s)?,
                ));
            }
            Update::SetCurrentSchema { schema_id } => {
                schema = match *schema_id {
                    -1 => added_schemas.last().map(|(_, s)| s.clone()),
                    id => added_schemas
                        .iter()
                        .rev()
                        .find(|(g, _)| *g == Some(id))
                        .map(|(_, s)| s.clone()),
                };
            }
            Update::AddSpec { spec } => {
                added_specs.push((
                    spec.get("spec-id").and_then(Json::as_i64).map(|i| i as i32),
                    spec.clone(),
                ));
            }
            Update::SetDefaultSpec { spec_id } => {
                spec_doc = match *spec_id {
                    -1 => added_specs.last().map(|(_, s)| s.clone()),
                    id => added_specs
                        .iter()
                        .rev()
                        .find(|(g, _)| *g == Some(id))
                        .map(|(_, s)| s.clone()),
                };
            }
            Update::SetLocation { location: l } if !same_location(l, location) => {
                return Err(Error::Invalid(format!(
                    "set-location: a table of this catalog is created at {location}, not {l}"
                )));
            }
            Update::SetProperties { updates } => properties.extend(updates.clone()),
            Update::RemoveProperties { removals } => {
                for k in removals {
                    properties.remove(k);
                }
            }
            _ => {}
        }
    }
    let Some(schema) = schema.or_else(|| added_schemas.last().map(|(_, s)| s.clone())) else {
        return Err(Error::Invalid(
            "a table created by a commit needs add-schema and set-current-schema".into(),
        ));
    };
    let mut last = crate::spec::partition::FIRST_PARTITION_FIELD_ID - 1;
    let partition_spec = match spec_doc.or_else(|| added_specs.last().map(|(_, s)| s.clone())) {
        Some(doc) => parse_spec(&doc, &schema, &[], &mut last)?,
        None => PartitionSpec::default(),
    };
    let mut md = crate::table::Table::initial_metadata_of(schema, partition_spec, properties)?;
    if let Some(uuid) = uuid {
        md.file_prefix = Some(crate::spec::metadata::file_prefix_of(&uuid));
        md.table_uuid = uuid;
    }
    match format_version {
        1 | 2 => {}
        ICEBERG_V3 => {
            md.next_row_id = Some(0);
        }
        v => {
            return Err(Error::Invalid(format!(
                "upgrade-format-version: format version {v} is not supported (2 and 3 are)"
            )));
        }
    }
    Ok(md)
}

/// The updates that [`created_metadata`] does not apply (snapshots, refs),
/// in order.
pub fn after_creation(updates: &[Update]) -> Vec<Update> {
    updates
        .iter()
        .filter(|u| {
            matches!(
                u,
                Update::AddSnapshot { .. }
                    | Update::SetSnapshotRef { .. }
                    | Update::RemoveSnapshotRef { .. }
                    | Update::RemoveSnapshots { .. }
            )
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn md() -> TableMetadata {
        let schema = parse_schema(&json!({"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": false, "type": "int"},
            {"id": 2, "name": "ts", "required": false, "type": "timestamp"}]}))
        .unwrap();
        crate::table::Table::initial_metadata_of(schema, PartitionSpec::default(), BTreeMap::new()).unwrap()
    }

    #[test]
    fn unknown_kinds_are_refused_by_name() {
        let e = CommitRequest::parse(&json!({"requirements": [], "updates": [{"action": "set-statistics"}]}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("update \"set-statistics\" is not supported"), "{e}");
        let e = CommitRequest::parse(&json!({"requirements": [{"type": "assert-nothing"}], "updates": []}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("requirement \"assert-nothing\" is not supported"), "{e}");
    }

    #[test]
    fn a_snapshot_must_become_main() {
        let e = CommitRequest::parse(&json!({"requirements": [], "updates": [
            {"action": "add-snapshot", "snapshot": {"snapshot-id": 7}}]}))
        .unwrap_err()
        .to_string();
        assert!(e.contains("snapshot 7 is not made the current snapshot"), "{e}");
    }

    #[test]
    fn requirements_compare_with_the_iceberg_view() {
        let md = md();
        let r = |doc: Json| {
            CommitRequest::parse(&json!({"requirements": [doc]}))
                .unwrap()
                .requirements
        };
        check_requirements(
            &md,
            &r(json!({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null})),
            "t",
        )
        .unwrap();
        let e = check_requirements(
            &md,
            &r(json!({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 5})),
            "t",
        )
        .unwrap_err();
        assert!(matches!(e, Error::CommitConflict { .. }), "{e}");
        check_requirements(
            &md,
            &r(json!({"type": "assert-current-schema-id", "current-schema-id": 0})),
            "t",
        )
        .unwrap();
        check_requirements(
            &md,
            &r(json!({"type": "assert-table-uuid", "uuid": md.table_uuid})),
            "t",
        )
        .unwrap();
        let e = check_requirements(
            &md,
            &r(json!({"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 1000})),
            "t",
        )
        .unwrap_err();
        assert!(matches!(e, Error::CommitConflict { .. }), "{e}");
    }

    #[test]
    fn schema_changes_make_table_specs_and_refuse_unsafe_ones() {
        let md = md();
        let mut pending = Pending::default();
        let apply = |md: &TableMetadata, u: Json, p: &mut Pending| {
            let u: Update = serde_json::from_value(u).unwrap();
            apply_one(md, &u, &HashMap::new(), p, "t")
        };
        let added = apply(
            &md,
            json!({"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [
            {"id": 1, "name": "id", "required": false, "type": "long"},
            {"id": 2, "name": "ts", "required": false, "type": "timestamp"},
            {"id": 3, "name": "note", "required": false, "type": "string"}]}}),
            &mut pending,
        )
        .unwrap();
        let next = apply(
            &added,
            json!({"action": "set-current-schema", "schema-id": -1}),
            &mut pending,
        )
        .unwrap();
        assert_eq!(next.current_spec_id, 1);
        assert_eq!(next.last_column_id, 3);
        assert_eq!(next.current_spec().unwrap().schema.fields.len(), 3);

        let mut pending = Pending::default();
        let narrowing = json!({"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [
            {"id": 1, "name": "id", "required": false, "type": "string"}]}});
        // Refused when it is added (an id is never another type), made current or not.
        let e = apply(&md, narrowing, &mut pending).unwrap_err();
        assert!(
            e.to_string()
                .contains("was int in an earlier schema and cannot be string"),
            "{e}"
        );

        let mut pending = Pending::default();
        let spec = apply(
            &md,
            json!({"action": "add-spec", "spec": {"spec-id": 1, "fields": [
            {"source-id": 2, "transform": "day", "name": "ts_day"}]}}),
            &mut pending,
        )
        .unwrap();
        let next = apply(
            &spec,
            json!({"action": "set-default-spec", "spec-id": -1}),
            &mut pending,
        )
        .unwrap();
        let partition = &next.current_spec().unwrap().partition_spec;
        assert_eq!(partition.fields[0].field_id, 1000);
        assert_eq!(next.last_partition_id, 1000);
    }

    #[test]
    fn created_metadata_takes_schema_spec_and_properties() {
        let updates: Vec<Update> = serde_json::from_value(json!([
            {"action": "assign-uuid", "uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1"},
            {"action": "upgrade-format-version", "format-version": 2},
            {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "required": false, "type": "long"}]}, "last-column-id": 1},
            {"action": "set-current-schema", "schema-id": 0},
            {"action": "add-spec", "spec": {"spec-id": 0, "fields": [
                {"source-id": 1, "transform": "bucket[16]", "name": "id_bucket", "field-id": 1000}]}},
            {"action": "set-default-spec", "spec-id": 0},
            {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
            {"action": "set-default-sort-order", "sort-order-id": 0},
            {"action": "set-location", "location": "file:///wh/ns.db/t"},
            {"action": "set-properties", "updates": {"owner": "me"}}
        ]))
        .unwrap();
        let md = created_metadata(&updates, "/wh/ns.db/t").unwrap();
        assert_eq!(md.table_uuid, "9c12d441-03fe-4693-9a96-a0705ddf69c1");
        assert_eq!(md.properties.get("owner").map(String::as_str), Some("me"));
        assert_eq!(md.current_spec().unwrap().partition_spec.fields.len(), 1);
        let e = created_metadata(&updates, "/elsewhere").unwrap_err().to_string();
        assert!(e.contains("is created at /elsewhere"), "{e}");
    }
}
