//! Table specs and metadata: schema with field ids, column types, partition
//! specs, table specs and the metadata JSON document that ties them together.

pub mod data_file;
pub mod metadata;
pub mod partition;
pub mod schema;
pub mod sort_order;
pub mod table_spec;
pub mod types;
pub mod validate;

pub use data_file::{BlobRange, ColumnStats, DataFile};
pub use metadata::{
    FieldSummary, IcebergManifest, ManifestContent, ManifestFile, Manifests, MetadataLogEntry, Snapshot, SnapshotRef,
    TableMetadata,
};
pub use partition::{BoundPartitionField, PartitionField, PartitionSpec};
pub use schema::Schema;
pub use table_spec::TableSpec;
pub use types::{NestedField, PrimitiveType, Type};
