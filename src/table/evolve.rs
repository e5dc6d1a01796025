//! Partition evolution: a new table spec, committed as metadata only.
//!
//! | statement                                              | new partition spec                     |
//! |--------------------------------------------------------|----------------------------------------|
//! | `ADD PARTITION FIELD bucket(16, id) AS id_b`           | old fields + `id_b`                    |
//! | `DROP PARTITION FIELD ts_month` (or `month(ts)`)       | old fields − that one                  |
//! | `REPLACE PARTITION FIELD ts_month WITH day(ts)`        | `ts_month` replaced by `ts_day`        |
//!
//! Existing files keep the spec they were written with and are pruned
//! through it; new data is written under the new spec. Field ids follow the
//! Iceberg rules: a new field gets `last-partition-id + 1`; a field whose
//! source and transform match a field of an earlier spec gets that field's id
//! back (so a dropped and re-added field is the same field); an id is never
//! given to a different definition. A spec identical to an earlier one
//! becomes current again instead of being duplicated.

use crate::error::Result;
use crate::invalid;
use crate::spec::{PartitionField, PartitionSpec, TableMetadata};
use crate::store::Versioned;
use crate::table::{PartitionFieldDef, Table};
use crate::transform::Transform;

/// One change to the current partition spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionChange {
    Add(PartitionFieldDef),
    /// A field by name, or by its definition (`month(ts)`).
    Drop(FieldRef),
    Replace(FieldRef, PartitionFieldDef),
}

/// How a statement names an existing partition field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldRef {
    Name(String),
    Definition(PartitionFieldDef),
}

impl Table {
    /// Commit a new current table spec whose schema has one more column
    /// (a fresh field id; files written before read it as NULL).
    pub async fn add_column(&self, field: &datafusion::arrow::datatypes::Field) -> Result<Versioned> {
        self.commit(|md| add_column(md, field)).await
    }

    /// Commit a new current table spec with column `from` named `to` (same field id).
    pub async fn rename_column(&self, from: &str, to: &str) -> Result<Versioned> {
        self.commit(|md| rename_column(md, from, to)).await
    }

    /// Commit a new current table spec without column `name`.
    pub async fn drop_column(&self, name: &str) -> Result<Versioned> {
        self.commit(|md| drop_column(md, name)).await
    }

    /// Commit a new current table spec with column `name` widened to `to`.
    pub async fn widen_column(&self, name: &str, to: &datafusion::arrow::datatypes::DataType) -> Result<Versioned> {
        self.commit(|md| widen_column(md, name, to)).await
    }

    /// Commit a new current table spec with the partition spec changed.
    pub async fn evolve_partition_spec(&self, change: PartitionChange) -> Result<Versioned> {
        self.commit(|md| apply(md, &change)).await
    }
}

fn find(md: &TableMetadata, spec: &PartitionSpec, r: &FieldRef) -> Result<usize> {
    let current = &md.current_spec()?.schema;
    let found = match r {
        FieldRef::Name(n) => spec.fields.iter().position(|f| f.name.eq_ignore_ascii_case(n)),
        FieldRef::Definition(d) => {
            let source = current.field_by_name(&d.source).map(|f| f.id);
            spec.fields
                .iter()
                .position(|f| Some(f.source_id) == source && f.transform == d.transform)
        }
    };
    match found {
        Some(i) => Ok(i),
        None => invalid!(
            "no partition field {} in the current spec (fields: {})",
            match r {
                FieldRef::Name(n) => format!("{n:?}"),
                FieldRef::Definition(d) => format!("{}({})", d.transform, d.source),
            },
            spec.fields
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A partition field for `def`, reusing the id of an identical historical field.
fn new_field(md: &TableMetadata, def: &PartitionFieldDef, next_id: &mut i32) -> Result<PartitionField> {
    let schema = &md.current_spec()?.schema;
    let Some(source) = schema.field_by_name(&def.source) else {
        return invalid!("partition column {:?} is not a column of the table", def.source);
    };
    let historical = md
        .table_specs
        .iter()
        .flat_map(|s| s.partition_spec.fields.iter())
        .find(|f| f.source_id == source.id && f.transform == def.transform && def.transform != Transform::Void);
    let name = def.name.clone().unwrap_or_else(|| match historical {
        Some(h) => h.name.clone(),
        None => PartitionSpec::default_name(&def.transform, &source.name),
    });
    let field_id = match historical {
        Some(h) => h.field_id,
        None => {
            *next_id += 1;
            *next_id
        }
    };
    Ok(PartitionField {
        field_id,
        source_id: source.id,
        transform: def.transform,
        name,
    })
}

/// The metadata after adding `field` to the current schema.
pub fn add_column(md: &TableMetadata, field: &datafusion::arrow::datatypes::Field) -> Result<TableMetadata> {
    let current = md.current_spec()?;
    if current.schema.field_by_name(field.name()).is_some() {
        return invalid!("column {:?} already exists", field.name());
    }
    if !field.is_nullable() {
        return invalid!(
            "a new column must be nullable: files written before have no values for {:?}",
            field.name()
        );
    }
    let mut next_id = md.last_column_id;
    let mut id = || {
        next_id += 1;
        next_id
    };
    let new_id = id();
    let field_type = crate::spec::Type::from_arrow(field.data_type(), &mut id)?;
    let mut schema = current.schema.clone();
    schema.fields.push(crate::spec::NestedField {
        id: new_id,
        name: field.name().clone(),
        required: false,
        field_type,
        doc: None,
    });
    let mut next = with_schema(md, schema)?;
    next.last_column_id = next_id;
    Ok(next)
}

/// `md` with `schema` current and the partition spec kept (its Iceberg id too).
fn with_schema(md: &TableMetadata, schema: crate::spec::Schema) -> Result<TableMetadata> {
    let current = md.current_spec()?;
    let mut next = md.clone();
    next.last_updated_ms = chrono::Utc::now().timestamp_millis();
    next.use_table_spec(schema, current.partition_spec.clone());
    Ok(next)
}

/// The metadata after renaming column `from` to `to`. The field id stays, so
/// files written before are read by id (see `provider::field_ids`).
pub fn rename_column(md: &TableMetadata, from: &str, to: &str) -> Result<TableMetadata> {
    let current = md.current_spec()?;
    let Some(column) = current.schema.field_by_name(from) else {
        return invalid!("column {from:?} does not exist");
    };
    if to.is_empty() {
        return invalid!("a column name must not be empty");
    }
    if current
        .schema
        .fields
        .iter()
        .any(|f| f.id != column.id && f.name.eq_ignore_ascii_case(to))
    {
        return invalid!("column {to:?} already exists");
    }
    let id = column.id;
    let mut schema = current.schema.clone();
    for f in &mut schema.fields {
        if f.id == id {
            f.name = to.to_string();
        }
    }
    with_schema(md, schema)
}

/// The metadata after dropping column `name`. A column a current partition
/// field uses can't be dropped; its field id is never reused.
pub fn drop_column(md: &TableMetadata, name: &str) -> Result<TableMetadata> {
    let current = md.current_spec()?;
    let Some(column) = current.schema.field_by_name(name) else {
        return invalid!("column {name:?} does not exist");
    };
    if let Some(f) = current.partition_spec.fields.iter().find(|f| f.source_id == column.id) {
        return invalid!(
            "column {:?} is the source of partition field {:?}; drop the partition field first (ALTER TABLE … DROP PARTITION FIELD {})",
            column.name,
            f.name,
            f.name
        );
    }
    if current.schema.fields.len() == 1 {
        return invalid!("cannot drop {:?}, the table's only column", column.name);
    }
    let mut schema = current.schema.clone();
    schema.fields.retain(|f| f.id != column.id);
    with_schema(md, schema)
}

/// The metadata after widening column `name` to `to`: int → bigint,
/// float → double, decimal(P, S) → decimal(P', S) with P' > P.
pub fn widen_column(
    md: &TableMetadata,
    name: &str,
    to: &datafusion::arrow::datatypes::DataType,
) -> Result<TableMetadata> {
    use crate::spec::{PrimitiveType as P, Type};
    let current = md.current_spec()?;
    let Some(column) = current.schema.field_by_name(name) else {
        return invalid!("column {name:?} does not exist");
    };
    let from = column.field_type.as_primitive();
    let target = P::from_arrow(to)?;
    let ok = match (from, target) {
        (Some(a), b) if a == b => return invalid!("column {name:?} already has type {b}"),
        (Some(P::Int), P::Long) | (Some(P::Float), P::Double) => true,
        (
            Some(P::Decimal {
                precision: p1,
                scale: s1,
            }),
            P::Decimal {
                precision: p2,
                scale: s2,
            },
        ) => s1 == s2 && p2 > p1,
        _ => false,
    };
    if !ok {
        return invalid!(
            "cannot change column {name:?} from {} to {target}: only int → long, float → double and wider decimal precision (same scale) are safe",
            from.map(|p| p.to_string()).unwrap_or_else(|| "a nested type".into())
        );
    }
    let mut schema = current.schema.clone();
    for f in &mut schema.fields {
        if f.id == column.id {
            f.field_type = Type::Primitive(target);
        }
    }
    let next = with_schema(md, schema)?;
    next.current_spec()?
        .partition_spec
        .validate(&next.current_spec()?.schema)?;
    Ok(next)
}

/// Insert `f` at `at` unless the spec already partitions the same source the same way.
fn insert_unique(
    fields: &mut Vec<PartitionField>,
    at: usize,
    f: PartitionField,
    def: &PartitionFieldDef,
) -> Result<()> {
    if fields
        .iter()
        .any(|g| g.source_id == f.source_id && g.transform == f.transform)
    {
        return invalid!(
            "the spec already has a partition field {}({})",
            def.transform,
            def.source
        );
    }
    fields.insert(at, f);
    Ok(())
}

/// The metadata after `change`: pure, so a commit can re-apply it after a lost race.
pub fn apply(md: &TableMetadata, change: &PartitionChange) -> Result<TableMetadata> {
    let current = md.current_spec()?;
    let mut fields = current.partition_spec.fields.clone();
    let mut next_id = md.last_partition_id;
    match change {
        PartitionChange::Add(def) => {
            let f = new_field(md, def, &mut next_id)?;
            let at = fields.len();
            insert_unique(&mut fields, at, f, def)?;
        }
        PartitionChange::Drop(r) => {
            let i = find(md, &current.partition_spec, r)?;
            fields.remove(i);
        }
        PartitionChange::Replace(r, def) => {
            let i = find(md, &current.partition_spec, r)?;
            fields.remove(i);
            let f = new_field(md, def, &mut next_id)?;
            insert_unique(&mut fields, i, f, def)?;
        }
    }
    // A field id must not name two definitions in one spec.
    for (i, f) in fields.iter().enumerate() {
        if fields[..i].iter().any(|g| g.field_id == f.field_id) {
            return invalid!("partition field {:?} appears twice", f.name);
        }
    }
    let partition_spec = PartitionSpec { fields };
    partition_spec.validate(&current.schema)?;
    let mut next = md.clone();
    next.last_partition_id = next_id.max(md.last_partition_id);
    next.last_updated_ms = chrono::Utc::now().timestamp_millis();
    next.use_table_spec(current.schema.clone(), partition_spec);
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};

    fn def(source: &str, transform: Transform) -> PartitionFieldDef {
        PartitionFieldDef {
            source: source.into(),
            transform,
            name: None,
        }
    }

    fn md() -> TableMetadata {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
            Field::new("region", DataType::Utf8, true),
        ]);
        Table::initial_metadata(&schema, &[def("ts", Transform::Month)]).unwrap()
    }

    #[test]
    fn replace_then_add_makes_new_specs_with_fresh_ids() {
        let m0 = md();
        let m1 = apply(
            &m0,
            &PartitionChange::Replace(FieldRef::Name("ts_month".into()), def("ts", Transform::Day)),
        )
        .unwrap();
        let m2 = apply(&m1, &PartitionChange::Add(def("region", Transform::Identity))).unwrap();
        assert_eq!(m2.table_specs.len(), 3);
        assert_eq!(m2.current_spec_id, 2);
        let ids: Vec<i32> = m2
            .current_spec()
            .unwrap()
            .partition_spec
            .fields
            .iter()
            .map(|f| f.field_id)
            .collect();
        assert_eq!(ids, vec![1001, 1002]);
        assert_eq!(m2.last_partition_id, 1002);
    }

    #[test]
    fn dropped_and_readded_field_keeps_its_id_and_spec_is_reused() {
        let m1 = apply(&md(), &PartitionChange::Add(def("region", Transform::Identity))).unwrap();
        let m2 = apply(
            &m1,
            &PartitionChange::Drop(FieldRef::Definition(def("region", Transform::Identity))),
        )
        .unwrap();
        // Same fields as spec 0 again: spec 0 becomes current, no duplicate.
        assert_eq!(m2.current_spec_id, 0);
        let m3 = apply(&m2, &PartitionChange::Add(def("id", Transform::Bucket(4)))).unwrap();
        let m4 = apply(&m3, &PartitionChange::Add(def("region", Transform::Identity))).unwrap();
        let region = m4
            .current_spec()
            .unwrap()
            .partition_spec
            .fields
            .iter()
            .find(|f| f.name == "region")
            .cloned();
        assert_eq!(region.map(|f| f.field_id), Some(1001));
        let bucket = m4
            .current_spec()
            .unwrap()
            .partition_spec
            .fields
            .iter()
            .find(|f| f.name == "id_bucket_4")
            .cloned();
        assert_eq!(bucket.map(|f| f.field_id), Some(1002));
    }

    #[test]
    fn errors_name_the_field() {
        let e = apply(&md(), &PartitionChange::Drop(FieldRef::Name("nope".into())))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope") && e.contains("ts_month"), "{e}");
        let e = apply(&md(), &PartitionChange::Add(def("ts", Transform::Month)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("already has"), "{e}");
    }

    /// Iceberg's ids: a schema change keeps the partition spec's, a partition change the
    /// schema's; going back to an earlier partition spec takes its id again.
    #[test]
    fn schema_changes_keep_the_iceberg_partition_spec_id() {
        let ids = |m: &TableMetadata| {
            let c = m.current_spec().unwrap();
            (c.schema_id(), c.partition_spec_id())
        };
        let m0 = md();
        assert_eq!(ids(&m0), (0, 0));
        let m1 = add_column(&m0, &Field::new("note", DataType::Utf8, true)).unwrap();
        let m2 = rename_column(&m1, "note", "remark").unwrap();
        assert_eq!((ids(&m1), ids(&m2)), ((1, 0), (2, 0)));
        let m3 = apply(&m2, &PartitionChange::Add(def("region", Transform::Identity))).unwrap();
        assert_eq!(ids(&m3), (2, 1));
        let m4 = apply(
            &m3,
            &PartitionChange::Drop(FieldRef::Definition(def("region", Transform::Identity))),
        )
        .unwrap();
        assert_eq!(ids(&m4), (2, 0), "spec 0's fields again: its id");
        assert_eq!(
            m4.table_specs.len(),
            4,
            "(schema 2, spec 0) was a table spec already: made current"
        );
        let mut m4 = m4;
        m4.location = Some("file:///tmp/t".into());
        let json: serde_json::Value =
            serde_json::from_slice(&crate::iceberg::json::metadata_json(&m4).unwrap()).unwrap();
        assert_eq!(json["partition-specs"].as_array().unwrap().len(), 2, "{json}");
        assert_eq!(json["schemas"].as_array().unwrap().len(), 3, "{json}");
        assert_eq!(
            (json["current-schema-id"].clone(), json["default-spec-id"].clone()),
            (2.into(), 0.into())
        );
    }
}
