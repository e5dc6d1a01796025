//! The warehouse as an Iceberg REST catalog: what `serve/` answers.
//!
//! - `service.rs` — namespaces and tables in the protocol's terms, over the
//!   same session (and so the same DDL rules) as SQL;
//! - `updates.rs` — a `CommitTableRequest`'s requirements and updates on our
//!   metadata (pure, so a commit that lost a race re-applies it);
//! - `commit.rs` — such a commit through our commit protocol, the client's
//!   snapshots turned into changes of ours (`formats::iceberg::adopt`);
//! - `error.rs` — the protocol's error model.

pub mod commit;
pub mod error;
pub mod service;
pub mod updates;

pub use error::RestError;
pub use service::RestCatalog;
