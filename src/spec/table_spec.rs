//! A table spec: one version of the table's schema and partition spec.
//!
//! Schema and partition spec evolve together as one unit with one id. New
//! data is written under the newest spec; every data file records the id of
//! the spec it was written with, and is read and pruned through that spec.
//!
//! Iceberg numbers schemas and partition specs apart: a schema change keeps
//! the partition spec's id, a partition change the schema's. So each table
//! spec also carries the Iceberg ids of its two halves, shared by every
//! table spec with an equal schema (or partition spec). Those are the ids
//! the Iceberg metadata, manifests and users see.
//!
//! | statement               | table spec | Iceberg schema id | Iceberg partition spec id |
//! |-------------------------|------------|-------------------|---------------------------|
//! | `CREATE TABLE … (day(ts))` | 0       | 0                 | 0                         |
//! | `ADD COLUMN note`       | 1          | 1                 | 0                         |
//! | `ADD PARTITION FIELD region` | 2     | 1                 | 1                         |
//!
//! Tables written before the ids were kept have none: each table spec's id
//! is then both (as was written to their Iceberg metadata).

use serde::{Deserialize, Serialize};

use super::partition::PartitionSpec;
use super::schema::Schema;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSpec {
    #[serde(rename = "spec-id")]
    pub spec_id: i32,
    pub schema: Schema,
    #[serde(rename = "partition-spec")]
    pub partition_spec: PartitionSpec,
    /// Iceberg's id of `schema` (`None`: `spec_id`).
    #[serde(rename = "schema-id", default, skip_serializing_if = "Option::is_none")]
    pub iceberg_schema_id: Option<i32>,
    /// Iceberg's id of `partition_spec` (`None`: `spec_id`).
    #[serde(rename = "partition-spec-id", default, skip_serializing_if = "Option::is_none")]
    pub iceberg_spec_id: Option<i32>,
}

impl TableSpec {
    /// A table spec whose Iceberg ids are its own id.
    pub fn new(spec_id: i32, schema: Schema, partition_spec: PartitionSpec) -> Self {
        Self {
            spec_id,
            schema,
            partition_spec,
            iceberg_schema_id: None,
            iceberg_spec_id: None,
        }
    }

    /// Iceberg's id of this spec's schema.
    pub fn schema_id(&self) -> i32 {
        self.iceberg_schema_id.unwrap_or(self.spec_id)
    }

    /// Iceberg's id of this spec's partition spec.
    pub fn partition_spec_id(&self) -> i32 {
        self.iceberg_spec_id.unwrap_or(self.spec_id)
    }
}
