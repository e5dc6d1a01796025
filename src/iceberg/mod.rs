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
//!
//! A commit's Avro side, as pure functions (the caller stores the bytes):
//!
//! ```text
//! write_manifest(&ManifestWrite { spec, table_location, status: Added, .. }, &new_files)
//!     → WrittenManifest { bytes, counts, partition summaries }   store at <loc>/metadata/<m>.avro
//! written.list_entry(path, snapshot_id, sequence_number)          (reused manifests keep their entry)
//! write_manifest_list(snapshot_id, parent, sequence_number, &entries)  store, name it in the snapshot
//! ```

pub mod avro;
pub mod bounds;
pub mod json;
pub mod manifest;
pub mod manifest_list;
