//! Our tables as Apache Iceberg tables: what a commit writes so that any
//! Iceberg reader (pyiceberg, DuckDB, Spark, Trino) sees the same table.
//!
//! Our own metadata version `v<N>.metadata.json` is also a valid Iceberg
//! table metadata file (format version 2): its Iceberg fields are derived
//! from ours when it is written, so the one put-if-absent of that file is the
//! commit point for both views. Besides it a commit writes, in Avro as the
//! Iceberg spec lays them out, a twin of each new manifest and the
//! snapshot's manifest list.
//!
//! The format in one module, both directions, for every writer and reader
//! (our tables, and other engines' tables in `formats::iceberg`):
//!
//! | what            | encode (our tables)   | decode (any writer's files)                            |
//! |-----------------|-----------------------|--------------------------------------------------------|
//! | metadata JSON   | `json.rs` (our version file with Iceberg's fields; read back as ours) | `metadata.rs` (any writer's v1/v2/v3 metadata: schemas, specs, snapshots, refs) |
//! | partition specs | —                     | `convert.rs` (an Iceberg spec as our table spec, summaries) |
//! | bounds          | `bounds.rs` (single-value binary, Appendix D) | `bounds_read.rs` (one value or a whole column) |
//! | manifests       | `manifest.rs` (one Avro manifest per manifest of ours) | `manifest_entries.rs` (entries straight into Arrow columns) |
//! | manifest lists  | `manifest_list.rs`    | `manifest_list_read.rs`                                 |
//! | Avro files      | `avro.rs` (schema JSON helpers, container writer) | `avro_records.rs` (records by field id), `avro_container.rs` (the fast decoder) |
//! | deletion vectors | `deletion_vector.rs` (a Roaring bitmap in the v1 blob framing) | the same |
//! | Puffin files    | `puffin.rs` (blobs and the JSON footer) | the same |
//! | summaries       | `summary.rs` (a manifest's partition summaries in binary form) | (in `convert.rs`) |
//! | REST protocol   | `rest.rs`: the words our REST server and client share: capabilities, the error model | |
//!
//! Pure functions; the callers store the bytes. A manifest's twin is written
//! with it (`manifest::io`), ADDED entries for new files, EXISTING for the
//! survivors of a replaced manifest; the manifest list is written just
//! before the version file (`table::iceberg_commit`), one entry per twin,
//! from what our metadata records of it.

pub mod avro;
pub mod avro_container;
pub mod avro_records;
pub mod bounds;
pub mod bounds_read;
pub mod convert;
pub mod deletion_vector;
pub mod json;
pub mod manifest;
pub mod manifest_entries;
pub mod manifest_list;
pub mod manifest_list_read;
pub mod metadata;
pub mod puffin;
pub mod rest;
pub mod summary;
