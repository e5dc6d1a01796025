//! Partition specs: which transform of which source column partitions a table.
//!
//! | field id | source id | transform   | name         | value for `ts = 2024-01-15 10:00`, `id = 34` |
//! |----------|-----------|-------------|--------------|----------------------------------------------|
//! | 1000     | 2 (ts)    | `day`       | `ts_day`     | `2024-01-15` (a DATE)                        |
//! | 1001     | 1 (id)    | `bucket[16]`| `id_bucket`  | `bucket(16, 34)`                             |
//!
//! Partition field ids start at 1000 and are never reused for a different
//! definition.

use datafusion::arrow::datatypes::DataType;
use serde::{Deserialize, Serialize};

use super::schema::Schema;
use super::types::NestedField;
use crate::error::Result;
use crate::invalid;
use crate::transform::Transform;

/// First partition field id of a table.
pub const FIRST_PARTITION_FIELD_ID: i32 = 1000;

/// The longest partition field name (as a directory name) a spec takes: a
/// path component holds 255 bytes, the name and `=` and the value.
pub const MAX_PARTITION_NAME_BYTES: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionField {
    #[serde(rename = "field-id")]
    pub field_id: i32,
    #[serde(rename = "source-id")]
    pub source_id: i32,
    pub transform: Transform,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PartitionSpec {
    pub fields: Vec<PartitionField>,
}

/// A partition field bound to its source column and result type.
#[derive(Debug, Clone)]
pub struct BoundPartitionField<'a> {
    pub field: &'a PartitionField,
    pub source: &'a NestedField,
    pub source_index: usize,
    pub result_type: DataType,
}

impl PartitionSpec {
    pub fn is_unpartitioned(&self) -> bool {
        self.fields.iter().all(|f| f.transform == Transform::Void)
    }

    /// Bind every field to its source column in `schema`, checking the transform applies.
    pub fn bind<'a>(&'a self, schema: &'a Schema) -> Result<Vec<BoundPartitionField<'a>>> {
        self.fields
            .iter()
            .map(|field| {
                let Some(source_index) = schema.index_of_id(field.source_id) else {
                    return invalid!(
                        "partition field {:?} refers to source column id {} which is not in the schema",
                        field.name,
                        field.source_id
                    );
                };
                let source = &schema.fields[source_index];
                if source.field_type == crate::spec::Type::Variant {
                    return invalid!(
                        "partition field {:?}: column {:?} is a VARIANT, which cannot be a partition source (variant values have no order)",
                        field.name,
                        source.name
                    );
                }
                let source_type = source.field_type.to_arrow();
                let result_type = field.transform.result_type(&source_type).map_err(|e| {
                    crate::error::Error::Invalid(format!(
                        "partition field {:?}: cannot apply {} to column {:?} of type {}: {e}",
                        field.name, field.transform, source.name, source_type
                    ))
                })?;
                Ok(BoundPartitionField {
                    field,
                    source,
                    source_index,
                    result_type,
                })
            })
            .collect()
    }

    /// Default name of a partition field, as Iceberg names them.
    pub fn default_name(transform: &Transform, source: &str) -> String {
        match transform {
            Transform::Identity => source.to_string(),
            Transform::Year => format!("{source}_year"),
            Transform::Month => format!("{source}_month"),
            Transform::Day => format!("{source}_day"),
            Transform::Hour => format!("{source}_hour"),
            Transform::Bucket(n) => format!("{source}_bucket_{n}"),
            Transform::Truncate(w) => format!("{source}_trunc_{w}"),
            Transform::Void => format!("{source}_null"),
        }
    }

    /// Check names are unique and sources exist and accept their transforms.
    pub fn validate(&self, schema: &Schema) -> Result<()> {
        for (i, f) in self.fields.iter().enumerate() {
            // `<name>=<value>` is one directory name (255 bytes on most file
            // systems): leave the value room.
            let directory = crate::values::hive::escape(&f.name).len();
            if directory > MAX_PARTITION_NAME_BYTES {
                return invalid!(
                    "partition field name {:?} is {directory} bytes as a directory name, and at most {MAX_PARTITION_NAME_BYTES} leave room for its values in a path component (255 bytes); give it a shorter name with AS",
                    f.name
                );
            }
            if self.fields[..i].iter().any(|g| g.name.eq_ignore_ascii_case(&f.name)) {
                return invalid!("duplicate partition field name {:?}", f.name);
            }
            if self.fields[..i]
                .iter()
                .any(|g| g.source_id == f.source_id && g.transform == f.transform)
            {
                return invalid!(
                    "partition field {:?} repeats the transform {} of the same column",
                    f.name,
                    f.transform
                );
            }
            let time =
                |t: &Transform| matches!(t, Transform::Year | Transform::Month | Transform::Day | Transform::Hour);
            if let Some(g) = self.fields[..i]
                .iter()
                .find(|g| g.source_id == f.source_id && time(&g.transform) && time(&f.transform))
            {
                let column = schema
                    .field_by_id(f.source_id)
                    .map_or_else(|| format!("field {}", f.source_id), |c| format!("{:?}", c.name));
                return invalid!(
                    "partition fields {:?} ({}) and {:?} ({}) are redundant: Iceberg allows one of year, month, day and hour per column, and both are on column {column}; keep one",
                    g.name,
                    g.transform,
                    f.name,
                    f.transform
                );
            }
            if let Some(col) = schema.field_by_name(&f.name)
                && !(f.transform == Transform::Identity && col.id == f.source_id)
            {
                return invalid!(
                    "partition field name {:?} conflicts with column {:?}; name it with AS",
                    f.name,
                    col.name
                );
            }
        }
        for b in self.bind(schema)? {
            if b.field.transform != Transform::Void && !crate::values::validation::is_supported_type(&b.result_type) {
                return invalid!(
                    "partition field {:?}: values of type {} cannot be partition values; partition {:?} by another transform",
                    b.field.name,
                    b.result_type,
                    b.source.name
                );
            }
        }
        Ok(())
    }

    pub fn highest_field_id(&self) -> i32 {
        self.fields
            .iter()
            .map(|f| f.field_id)
            .max()
            .unwrap_or(FIRST_PARTITION_FIELD_ID - 1)
    }
}
