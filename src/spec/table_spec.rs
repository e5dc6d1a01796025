//! A table spec: one version of the table's schema and partition spec.
//!
//! Schema and partition spec evolve together as one unit with one id. New
//! data is written under the newest spec; every data file records the id of
//! the spec it was written with, and is read and pruned through that spec.

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
}
