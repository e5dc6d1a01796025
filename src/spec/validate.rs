//! Metadata is checked when it is read, before anything trusts it.
//!
//! A hand-edited or damaged version file must not read as a smaller table,
//! and above all must not become the base of the next commit (which would
//! hide every earlier row for good). Each rule below names what is wrong:
//!
//! | rule | example of a violation |
//! |---|---|
//! | `current-spec-id` names a table spec | `"current-spec-id": 7` with specs 0 and 1 |
//! | spec ids, snapshot ids and tag names are unique | two snapshots with id 42 |
//! | `current-snapshot-id` names a snapshot | `"current-snapshot-id": 123` with no snapshot 123 |
//! | every tag names a snapshot | `refs.before → 99` missing |
//! | a snapshot's `table-spec-id` and its manifests' `spec-id` name table specs | manifest with `"spec-id": 5` |
//! | a snapshot lists its manifests or names their file; the current one lists them | current snapshot with only `manifests-file` |
//! | a snapshot's parent, if still listed, has a lower sequence number; no sequence number exceeds `last-sequence-number` | a cycle of parents |
//! | field ids are unique within a schema and at most `last-column-id` | two columns with id 3 |
//! | names are unique among a struct's fields (ignoring ASCII case, as SQL names them) | columns `id` and `ID` |
//! | a partition field's source id names a column of its schema; partition field ids are unique and at most `last-partition-id` | `source-id` 9 in a 3-column schema |
//! | sort order ids are unique; `default-sort-order-id` names one, whose columns the current schema has | `"default-sort-order-id": 3` with orders 0 and 1 |
//! | a bucket count or truncate width is in 1..=2147483647 (a Java int, as in Iceberg) | `bucket[3000000000]` |
//!
//! The same checks guard the other end: a commit serializes a new version
//! with `iceberg::json::to_checked_json`, which reads the bytes back as a reader would,
//! so no commit ever writes a version that readers refuse.
//! A parent that is no longer listed is fine: `expire_snapshots` removes
//! old snapshots and keeps their children.

use std::collections::{HashMap, HashSet};

use super::metadata::TableMetadata;
use super::types::{NestedField, Type};
use crate::transform::{MAX_PARAM, Transform};

/// The first inconsistency found in `md`, as a sentence.
pub fn check(md: &TableMetadata) -> Result<(), String> {
    let mut specs = HashSet::new();
    for spec in &md.table_specs {
        if !specs.insert(spec.spec_id) {
            return Err(format!("table spec {} is listed twice", spec.spec_id));
        }
        let mut ids = HashSet::new();
        collect_ids(&spec.schema.fields, &mut ids)
            .map_err(|id| format!("table spec {}: field id {id} is used twice", spec.spec_id))?;
        unique_names(&spec.schema.fields).map_err(|e| format!("table spec {}: {e}", spec.spec_id))?;
        if let Some(max) = ids.iter().max()
            && *max > md.last_column_id
        {
            return Err(format!(
                "table spec {}: field id {max} exceeds last-column-id {}",
                spec.spec_id, md.last_column_id
            ));
        }
        let mut partition_ids = HashSet::new();
        for f in &spec.partition_spec.fields {
            if !ids.contains(&f.source_id) {
                return Err(format!(
                    "table spec {}: partition field {:?} reads column id {}, which its schema does not have",
                    spec.spec_id, f.name, f.source_id
                ));
            }
            if !partition_ids.insert(f.field_id) {
                return Err(format!(
                    "table spec {}: partition field id {} is used twice",
                    spec.spec_id, f.field_id
                ));
            }
            if let Transform::Bucket(n) | Transform::Truncate(n) = f.transform
                && !(1..=MAX_PARAM).contains(&n)
            {
                return Err(format!(
                    "table spec {}: partition field {:?} has parameter {n}, outside 1..={MAX_PARAM}",
                    spec.spec_id, f.name
                ));
            }
            if f.field_id > md.last_partition_id {
                return Err(format!(
                    "table spec {}: partition field id {} exceeds last-partition-id {}",
                    spec.spec_id, f.field_id, md.last_partition_id
                ));
            }
        }
    }
    if !specs.contains(&md.current_spec_id) {
        return Err(format!("current-spec-id {} names no table spec", md.current_spec_id));
    }
    let mut snapshots = HashMap::new();
    for s in &md.snapshots {
        if snapshots.insert(s.snapshot_id, s).is_some() {
            return Err(format!("snapshot {} is listed twice", s.snapshot_id));
        }
    }
    if let Some(id) = md.current_snapshot_id
        && !snapshots.contains_key(&id)
    {
        return Err(format!("current-snapshot-id {id} names no snapshot"));
    }
    for (name, r) in &md.refs {
        if !snapshots.contains_key(&r.snapshot_id) {
            return Err(format!(
                "tag {name:?} names snapshot {}, which is not listed",
                r.snapshot_id
            ));
        }
    }
    for s in &md.snapshots {
        if s.sequence_number > md.last_sequence_number {
            return Err(format!(
                "snapshot {} has sequence number {}, above last-sequence-number {}",
                s.snapshot_id, s.sequence_number, md.last_sequence_number
            ));
        }
        if let Some(parent) = s.parent_snapshot_id.and_then(|p| snapshots.get(&p))
            && parent.sequence_number >= s.sequence_number
        {
            return Err(format!(
                "snapshot {} has parent {} with a sequence number that is not lower",
                s.snapshot_id, parent.snapshot_id
            ));
        }
        if let Some(spec) = s.table_spec_id
            && !specs.contains(&spec)
        {
            return Err(format!(
                "snapshot {} names table spec {spec}, which is not listed",
                s.snapshot_id
            ));
        }
        match (&s.manifests, &s.manifests_file) {
            (None, None) => {
                return Err(format!(
                    "snapshot {} has neither manifests nor a manifests-file",
                    s.snapshot_id
                ));
            }
            (None, Some(_)) if md.current_snapshot_id == Some(s.snapshot_id) => {
                return Err(format!(
                    "the current snapshot {} does not list its manifests inline",
                    s.snapshot_id
                ));
            }
            _ => {}
        }
        for m in s.manifests.iter().flat_map(|m| m.iter()) {
            if !specs.contains(&m.spec_id) {
                return Err(format!(
                    "snapshot {}: manifest {} names table spec {}, which is not listed",
                    s.snapshot_id, m.path, m.spec_id
                ));
            }
        }
    }
    let mut orders = HashSet::new();
    for order in &md.sort_orders {
        if !orders.insert(order.order_id) {
            return Err(format!("sort order {} is listed twice", order.order_id));
        }
    }
    if let Some(id) = md.default_sort_order_id.filter(|id| *id != 0) {
        let Some(order) = md.sort_orders.iter().find(|o| o.order_id == id) else {
            return Err(format!("default-sort-order-id {id} names no sort order"));
        };
        if let Ok(spec) = md.current_spec() {
            order.check(&spec.schema).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Every field id under `fields` into `ids`; the first repeated one as the error.
/// Whether the names of every struct's fields (the top level's too) are
/// unique, ignoring ASCII case: a reader could not tell the fields apart.
pub fn unique_names(fields: &[NestedField]) -> Result<(), String> {
    let mut seen = HashSet::new();
    for f in fields {
        if !seen.insert(f.name.to_ascii_lowercase()) {
            return Err(format!(
                "two fields are named {:?} (names are compared ignoring case)",
                f.name
            ));
        }
        let mut t = &f.field_type;
        loop {
            match t {
                Type::Struct(inner) => {
                    unique_names(inner).map_err(|e| format!("in {:?}: {e}", f.name))?;
                    break;
                }
                Type::List { element, .. } => t = element,
                Type::Map { value, .. } => t = value,
                Type::Primitive(_) | Type::Variant => break,
            }
        }
    }
    Ok(())
}

fn collect_ids(fields: &[NestedField], ids: &mut HashSet<i32>) -> Result<(), i32> {
    for f in fields {
        if !ids.insert(f.id) {
            return Err(f.id);
        }
        collect_type_ids(&f.field_type, ids)?;
    }
    Ok(())
}

fn collect_type_ids(t: &Type, ids: &mut HashSet<i32>) -> Result<(), i32> {
    match t {
        Type::Primitive(_) | Type::Variant => Ok(()),
        Type::Struct(fields) => collect_ids(fields, ids),
        Type::List {
            element_id, element, ..
        } => {
            if !ids.insert(*element_id) {
                return Err(*element_id);
            }
            collect_type_ids(element, ids)
        }
        Type::Map {
            key_id,
            key,
            value_id,
            value,
            ..
        } => {
            for id in [key_id, value_id] {
                if !ids.insert(*id) {
                    return Err(*id);
                }
            }
            collect_type_ids(key, ids)?;
            collect_type_ids(value, ids)
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    use super::*;
    use crate::spec::{PartitionField, PartitionSpec};

    pub(crate) fn bucketed(n: u32) -> TableMetadata {
        let schema = Schema::new(vec![Field::new("id", DataType::Int64, true)]);
        let spec = PartitionSpec {
            fields: vec![PartitionField {
                field_id: 1000,
                source_id: 1,
                transform: Transform::Bucket(16),
                name: "id_bucket".into(),
            }],
        };
        let schema = crate::spec::Schema::from_arrow(&schema, 1).unwrap();
        let mut md = TableMetadata::new(schema, spec).unwrap();
        md.table_specs[0].partition_spec.fields[0].transform = Transform::Bucket(n);
        md
    }

    #[test]
    fn transform_parameters_out_of_range_are_refused() {
        assert!(check(&bucketed(MAX_PARAM)).is_ok());
        for n in [0, MAX_PARAM + 1, u32::MAX] {
            let err = check(&bucketed(n)).unwrap_err();
            assert!(err.contains("outside 1..=2147483647"), "{err}");
        }
    }
}
