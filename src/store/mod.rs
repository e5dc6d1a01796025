//! The table on an object store: layout of its files and the atomic commit.

pub mod cache;
pub mod commit;
pub mod connect;
pub mod iceberg_commit;
pub mod location;
pub mod observe;
pub mod pending;
pub mod snapshot_manifests;
pub mod url;

pub use commit::Versioned;
pub use location::TableLocation;
