//! Manifests: Parquet files listing data files with typed partition values
//! and column statistics, read column-wise for vectorized pruning.

pub mod deletes;
pub mod format;
pub mod io;
pub mod source;
pub mod stats;
pub mod unique;

pub use crate::spec::{ColumnStats, DataFile};
pub use io::{Origin, delete_manifests, read_manifest, write_delete_manifest, write_manifest, write_manifest_batch};
pub use source::ManifestSource;
