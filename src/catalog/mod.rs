//! The warehouse catalog: finding tables by name, creating and dropping them.

pub mod clients;
pub mod ddl;
pub mod definitions;
pub mod information_schema;
pub mod metadata_tables;
pub mod namespace;
pub mod read_only;
pub mod rename;
pub mod schema;
pub mod stores;
pub mod url_tables;
pub mod warehouse;

pub use schema::WarehouseSchema;
pub use warehouse::Warehouse;
