//! # hidden-partitions
//!
//! Partition-aware tables for Apache DataFusion: hidden partitioning with
//! Iceberg's transforms, manifests with typed partition values and column
//! statistics, and pruning that turns filters on source columns into
//! partition predicates.
//!
//! Layers, top to bottom; each imports only the ones below it (see
//! `docs/ARCHITECTURE.md`, and `tests/layers.rs`, which checks it):
//! [`cli`] → [`serve`] → [`session`] → [`sql`] → [`catalog`] → [`optimizer`] →
//! [`formats`] → [`provider`] → [`table`] → [`plan`] → [`manifest`] →
//! [`expr`] → [`functions`] → [`store`] → [`iceberg`] → [`spec`] →
//! [`variant`] / [`transform`] / [`values`]. [`formats`] reads Iceberg and
//! Delta tables into [`manifest`]'s shape; [`iceberg`] is the format itself,
//! both ways, without I/O.

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
