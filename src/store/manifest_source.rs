//! Where a table's manifest batches come from (a seam the table's location
//! carries, so that layers above choose the reader).
//!
//! Planning (`plan::files`) and the metadata tables ask for a
//! manifest as one Arrow batch in the layout of `manifest::format`; they do
//! not know whether it was a Parquet manifest of ours or, say, an Iceberg
//! Avro manifest converted on the fly. A [`TableLocation`] carries the
//! source: none means our own Parquet manifests.
//!
//! | table                    | source                                   | `ManifestFile.path` names      |
//! |--------------------------|------------------------------------------|--------------------------------|
//! | ours                     | (default) Parquet reader in `manifest::io` | `metadata/<uuid>-m.parquet`  |
//! | Iceberg (`formats::iceberg`) | Avro manifest → Arrow                | the Avro manifest              |
//! | Delta (`formats::delta`) | log replay, grouped into batches          | a slice of the replayed log    |

use std::fmt::Debug;

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;

use super::location::TableLocation;
use crate::error::Result;
use crate::spec::{ManifestFile, TableSpec};

/// Supplies the manifest batch of a `ManifestFile` listed in a snapshot.
#[async_trait]
pub trait ManifestSource: Debug + Send + Sync {
    /// The manifest's files as one batch in the layout of
    /// `manifest::format::manifest_schema` for `spec`; with
    /// `columns`, only those (e.g. `path`, `partition`, `stats.3`).
    async fn read(
        &self,
        location: &TableLocation,
        manifest: &ManifestFile,
        spec: &TableSpec,
        columns: Option<&[String]>,
    ) -> Result<RecordBatch>;

    /// Whether manifests written for this table are Iceberg Avro manifests
    /// only (an Iceberg table of another engine that we write to), not our
    /// Parquet manifests with Avro twins.
    fn writes_iceberg_manifests(&self) -> bool {
        false
    }

    /// Whether those Iceberg manifests are of a format version 3 table.
    fn writes_iceberg_v3(&self) -> bool {
        false
    }
}
