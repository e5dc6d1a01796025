//! The table on an object store: layout of its files and the atomic commit.

pub mod cache;
pub mod commit;
pub mod connect;
pub mod location;
pub mod manifest_source;
pub mod observe;
pub mod pending;
pub mod snapshot_manifests;
pub mod url;

pub use commit::Versioned;
pub use location::TableLocation;
