//! # hidden-partitions
//!
//! Partition-aware tables for Apache DataFusion: hidden partitioning with
//! Iceberg's transforms, manifests with typed partition values and column
//! statistics, and pruning that turns filters on source columns into
//! partition predicates.
//!
//! Layers, top to bottom; each imports the ones below it (see
//! `docs/ARCHITECTURE.md`, and `tests/layers.rs` for what is checked):
//! [`sql`] → [`catalog`] → [`provider`] → [`table`] → [`plan`] → [`expr`] →
//! [`manifest`] → [`store`] → [`spec`] → [`transform`] / [`values`];
//! [`formats`] reads Iceberg and Delta tables into [`manifest`]'s shape.
//! Still looking up: `provider/` takes `SHOW CREATE TABLE` text and time
//! travel from `catalog/`, and `store/iceberg_commit.rs` reads manifests to
//! write their Iceberg twins with [`iceberg`]'s encoders, which take
//! [`manifest`]'s data files.

#[cfg(feature = "ballista")]
pub mod ballista;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod error;
pub mod expr;
pub mod formats;
pub mod functions;
pub mod iceberg;
pub mod manifest;
pub mod optimizer;
pub mod plan;
pub mod provider;
pub mod serve;
pub mod session;
pub mod slt;
pub mod spec;
pub mod sql;
pub mod store;
pub mod table;
pub mod transform;
pub mod values;
pub mod variant;

pub use catalog::{Warehouse, WarehouseSchema};
pub use error::{Error, Result};
pub use session::{SessionContextExt, session, session_with};
pub use sql::{StatementResult, execute_sql};
pub use store::connect::StorageOptions;
