//! The table on an object store: layout of its files and the atomic commit.

pub mod commit;
pub mod location;
pub mod url;

pub use commit::Versioned;
pub use location::TableLocation;
