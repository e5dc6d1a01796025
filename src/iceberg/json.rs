//! Our table specs in Iceberg's JSON shapes (defined with the metadata, in
//! `spec::iceberg_json`).

pub use crate::spec::iceberg_json::{partition_spec_json, schema_json};
