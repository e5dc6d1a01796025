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
//! | step           | file            | what                                                    |
//! |----------------|-----------------|---------------------------------------------------------|
//! | schema, spec   | `json.rs`       | our table specs as Iceberg `schemas` and `partition-specs` |
//! | bounds         | `bounds.rs`     | values in the single-value binary serialization (Appendix D) |
//! | manifests      | `manifest.rs`   | one Avro manifest per manifest of ours                  |
//! | manifest lists | `manifest_list.rs` | one Avro manifest list per snapshot                  |
//! | Avro files     | `avro.rs`       | schema JSON helpers and the container writer            |
//! | summaries      | `summary.rs`    | a manifest's partition summaries in binary form, from ours |
//! | REST protocol  | `rest.rs`       | the words our REST server and client share: capabilities, the error model |
//!
//! Pure functions; the callers store the bytes. A manifest's twin is written
//! with it (`manifest::io`), ADDED entries for new files, EXISTING for the
//! survivors of a replaced manifest; the manifest list is written just
//! before the version file (`store::iceberg_commit`), one entry per twin,
//! from what our metadata records of it.

pub mod avro;
pub mod bounds;
pub mod json;
pub mod manifest;
pub mod manifest_list;
pub mod rest;
pub mod summary;
