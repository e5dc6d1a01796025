//! Where a table's manifest batches come from.
//!
//! Planning (`plan::files`) and the metadata tables ask for a
//! manifest as one Arrow batch in the layout of [`super::format`]; they do
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

use crate::error::Result;
use crate::spec::{ManifestFile, TableSpec};
use crate::store::TableLocation;

/// Supplies the manifest batch of a `ManifestFile` listed in a snapshot.
#[async_trait]
pub trait ManifestSource: Debug + Send + Sync {
    /// The manifest's files as one batch in the layout of
    /// [`manifest_schema`](super::format::manifest_schema) for `spec`; with
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

/// Keep only `columns` (top-level names or `stats.<id>`) of a full manifest batch.
pub fn project_columns(batch: &RecordBatch, columns: Option<&[String]>) -> Result<RecordBatch> {
    use std::sync::Arc;

    use datafusion::arrow::array::{Array, ArrayRef, StructArray};
    use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema};

    let Some(columns) = columns else {
        return Ok(batch.clone());
    };
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    let mut stats: Vec<(Arc<Field>, ArrayRef)> = Vec::new();
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        if field.name() == super::format::STATS {
            let (DataType::Struct(children), Some(s)) =
                (field.data_type(), array.as_any().downcast_ref::<StructArray>())
            else {
                continue;
            };
            for (child, column) in children.iter().zip(s.columns()) {
                let wanted = format!("{}.{}", super::format::STATS, child.name());
                if columns.contains(&wanted) {
                    stats.push((Arc::clone(child), Arc::clone(column)));
                }
            }
            if !stats.is_empty() {
                let (f, a): (Vec<_>, Vec<_>) = std::mem::take(&mut stats).into_iter().unzip();
                let f = Fields::from(f);
                fields.push(Arc::new(Field::new(
                    super::format::STATS,
                    DataType::Struct(f.clone()),
                    field.is_nullable(),
                )));
                arrays.push(Arc::new(StructArray::try_new(f, a, None)?));
            }
        } else if columns.iter().any(|c| c == field.name()) {
            fields.push(Arc::clone(field));
            arrays.push(Arc::clone(array));
        }
    }
    let options = datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        arrays,
        &options,
    )?)
}
