//! Writing and reading manifest files.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::concat_batches;
use datafusion::common::ScalarValue;
use object_store::{ObjectStoreExt, PutPayload};
use parquet::arrow::ArrowWriter;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;

use super::format::{PARTITION, RECORD_COUNT, manifest_batch};
use crate::error::Result;
use crate::iceberg::manifest::{EntryStatus, ManifestWrite};
use crate::spec::DataFile;
use crate::spec::{FieldSummary, IcebergManifest, ManifestContent, ManifestFile, TableSpec};
use crate::store::TableLocation;
use crate::values;

/// Whose files a new manifest lists, for its Iceberg twin's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Files the committing snapshot adds (ADDED entries).
    New,
    /// Files an earlier snapshot added, kept by this one (EXISTING entries).
    Kept { snapshot_id: i64, sequence_number: i64 },
}

impl Origin {
    /// The origin of the files of `manifest`, listed in `md`.
    pub fn of(manifest: &ManifestFile, md: &crate::spec::TableMetadata) -> Origin {
        let own_sequence = || md.snapshot(manifest.added_snapshot_id).map_or(0, |s| s.sequence_number);
        match &manifest.iceberg {
            Some(twin) if !twin.added() => Origin::Kept {
                snapshot_id: twin.files_snapshot_id.unwrap_or(manifest.added_snapshot_id),
                sequence_number: twin.files_sequence_number.unwrap_or(0),
            },
            Some(twin) => Origin::Kept {
                snapshot_id: manifest.added_snapshot_id,
                sequence_number: twin.sequence_number.unwrap_or_else(own_sequence),
            },
            None => Origin::Kept {
                snapshot_id: manifest.added_snapshot_id,
                sequence_number: own_sequence(),
            },
        }
    }
}

/// Write `files` (all under `spec`, new in snapshot `snapshot_id`) as a new
/// manifest and its Iceberg twin, and describe them for the snapshot.
pub async fn write_manifest(
    location: &TableLocation,
    spec: &TableSpec,
    files: &[DataFile],
    snapshot_id: i64,
) -> Result<Vec<ManifestFile>> {
    write_in_chunks(
        location,
        spec,
        &manifest_batch(spec, files)?,
        files,
        snapshot_id,
        Origin::New,
        ManifestContent::Data,
    )
    .await
}

/// Write new position delete files (each naming its data file in
/// `referenced_data_file`; all of data files of `spec`) as a delete manifest
/// and its Iceberg twin.
pub async fn write_delete_manifest(
    location: &TableLocation,
    spec: &TableSpec,
    files: &[DataFile],
    snapshot_id: i64,
) -> Result<Vec<ManifestFile>> {
    if let Some(f) = files.iter().find(|f| f.referenced_data_file.is_none()) {
        return crate::invalid!("delete file {} names no data file; nothing was written", f.path);
    }
    write_in_chunks(
        location,
        spec,
        &manifest_batch(spec, files)?,
        files,
        snapshot_id,
        Origin::New,
        ManifestContent::Deletes,
    )
    .await
}

/// Write a manifest batch (all files under `spec`; e.g. the survivors of a
/// manifest some of whose files a statement removed) as a new manifest of
/// `content`.
pub async fn write_manifest_batch(
    location: &TableLocation,
    spec: &TableSpec,
    batch: &RecordBatch,
    snapshot_id: i64,
    origin: Origin,
    content: ManifestContent,
) -> Result<Vec<ManifestFile>> {
    let files = super::format::data_files(spec, batch)?;
    write_in_chunks(location, spec, batch, &files, snapshot_id, origin, content).await
}

/// The most entries a manifest we write holds. DuckDB 1.4's Avro reader
/// carries a NULL of an optional field from one entry to the entry 2048
/// rows further in the same file, so a partition value there reads as NULL
/// and its file is skipped by any filter on that field (pyiceberg's
/// manifests too: `tests/interop/duckdb_known_bugs.py`, `manifest_over_2048_entries`);
/// it reads manifests of at most 2048 entries right.
pub const MAX_MANIFEST_ENTRIES: usize = 2048;

/// `files` (rows of `batch`) as manifests of at most [`MAX_MANIFEST_ENTRIES`]
/// entries each; when one cannot be written, those already written are
/// deleted.
async fn write_in_chunks(
    location: &TableLocation,
    spec: &TableSpec,
    batch: &RecordBatch,
    files: &[DataFile],
    snapshot_id: i64,
    origin: Origin,
    content: ManifestContent,
) -> Result<Vec<ManifestFile>> {
    let mut written = Vec::with_capacity(files.len().div_ceil(MAX_MANIFEST_ENTRIES).max(1));
    let chunks: Vec<&[DataFile]> = match files.is_empty() {
        true => vec![files],
        false => files.chunks(MAX_MANIFEST_ENTRIES).collect(),
    };
    for (i, chunk) in chunks.into_iter().enumerate() {
        let rows = batch.slice(i * MAX_MANIFEST_ENTRIES, chunk.len());
        match write_both(location, spec, &rows, chunk, snapshot_id, origin, content).await {
            Ok(m) => written.push(m),
            Err(e) => {
                delete_manifests(location, &written).await;
                return Err(e);
            }
        }
    }
    Ok(written)
}

/// Delete `manifests` and their Iceberg twins, written by a statement that
/// did not commit them (best effort: what remains is an orphan).
pub async fn delete_manifests(location: &TableLocation, manifests: &[ManifestFile]) {
    for path in manifests
        .iter()
        .flat_map(|m| m.files())
        .filter_map(|p| location.resolve(p).ok())
    {
        let _ = location.store.delete(&path).await;
    }
}

async fn write_both(
    location: &TableLocation,
    spec: &TableSpec,
    batch: &RecordBatch,
    files: &[DataFile],
    snapshot_id: i64,
    origin: Origin,
    content: ManifestContent,
) -> Result<ManifestFile> {
    super::unique::check_batch_lists_once(batch)?;
    let iceberg_only = location
        .manifest_source
        .as_ref()
        .is_some_and(|s| s.writes_iceberg_manifests());
    // An Iceberg table of another engine: its manifests are the Avro ones,
    // so no Parquet manifest is encoded.
    let mut buf = Vec::new();
    if !iceberg_only {
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props))?;
        writer.write(batch)?;
        writer.close()?;
    }
    // `<table prefix>-<uuid>-m.parquet`: a fresh name no other writer uses;
    // its twin is `<table prefix>-<uuid>-m.avro`.
    let fresh = location.fresh_name();
    let name = format!("{fresh}-m.parquet");
    let rel = TableLocation::stored_path(["metadata", name.as_str()]);
    let twin_name = format!("{fresh}-m.avro");
    let twin_rel = TableLocation::stored_path(["metadata", twin_name.as_str()]);
    let length = buf.len() as u64;
    let (status, files_snapshot_id, files_sequence_number) = match origin {
        Origin::New => (EntryStatus::Added, None, None),
        Origin::Kept {
            snapshot_id,
            sequence_number,
        } => (EntryStatus::Existing, Some(snapshot_id), Some(sequence_number)),
    };
    let root = location.iceberg_root();
    // Another engine's v2 table stays v2.
    let v3 = location.manifest_source.as_ref().is_some_and(|s| s.writes_iceberg_v3());
    if iceberg_only && !v3 && crate::iceberg::json::spec_needs_v3(spec) {
        return crate::invalid!(
            "table {} is an Iceberg format version 2 table, and a column type of it (VARIANT or a nanosecond timestamp) needs version 3; nothing was written",
            location.url()
        );
    }
    // Specs with a type no Iceberg version has get no twin (docs/FORMAT.md).
    let twin = if crate::iceberg::json::spec_has_iceberg_types(spec) {
        Some(
            crate::iceberg::manifest::write_manifest(
                &ManifestWrite {
                    spec,
                    table_location: &root,
                    status,
                    snapshot_id: files_snapshot_id,
                    sequence_number: files_sequence_number,
                    v3,
                    content,
                },
                files,
            )?
            .bytes,
        )
    } else {
        None
    };
    let twin_length = twin.as_ref().map(|t| t.len() as u64);
    // Fresh UUID names: plain puts (no store needs conditional writes for them).
    let (manifest_path, twin_path) = (location.resolve(&rel)?, location.resolve(&twin_rel)?);
    let put_twin = async {
        match twin {
            Some(bytes) => location
                .store
                .put(&twin_path, PutPayload::from(bytes))
                .await
                .map(|_| ()),
            None => Ok(()),
        }
    };
    let (rel, length) = if iceberg_only {
        let Some(length) = twin_length else {
            return crate::invalid!(
                "table {} is an Iceberg table, and Iceberg has no type for some of its columns (a nanosecond TIME); nothing was written",
                location.url()
            );
        };
        put_twin.await?;
        (twin_rel.clone(), length)
    } else {
        futures::try_join!(location.store.put(&manifest_path, PutPayload::from(buf)), put_twin)?;
        (rel, length)
    };
    let record_count = batch
        .column_by_name(RECORD_COUNT)
        .map(|c| c.as_primitive::<Int64Type>().values().iter().map(|v| *v as u64).sum())
        .unwrap_or(0);
    Ok(ManifestFile {
        path: rel,
        length,
        spec_id: spec.spec_id,
        added_snapshot_id: snapshot_id,
        file_count: batch.num_rows() as u64,
        record_count,
        partitions: summarize(spec, batch)?,
        iceberg: twin_length.map(|length| IcebergManifest {
            path: twin_rel,
            length,
            sequence_number: None,
            files_snapshot_id,
            files_sequence_number,
            first_row_id: None,
        }),
        content,
    })
}

/// Per partition field: nulls present, and lower/upper bounds as serialized values.
pub(crate) fn summarize(spec: &TableSpec, batch: &RecordBatch) -> Result<Vec<FieldSummary>> {
    let n = spec.partition_spec.fields.len();
    let mut out = Vec::with_capacity(n);
    let partition = batch.column_by_name(PARTITION).map(|c| c.as_struct().clone());
    for i in 0..n {
        let mut contains_null = false;
        let mut contains_nan = false;
        let mut lower: Option<ScalarValue> = None;
        let mut upper: Option<ScalarValue> = None;
        let column = partition.as_ref().map(|p| std::sync::Arc::clone(p.column(i)));
        for row in 0..batch.num_rows() {
            let v = match &column {
                Some(c) => ScalarValue::try_from_array(c, row)?,
                None => ScalarValue::Null,
            };
            if v.is_null() {
                contains_null = true;
                continue;
            }
            if is_nan(&v) {
                contains_nan = true;
                continue;
            }
            if lower
                .as_ref()
                .is_none_or(|l| v.partial_cmp(l) == Some(std::cmp::Ordering::Less))
            {
                lower = Some(v.clone());
            }
            if upper
                .as_ref()
                .is_none_or(|u| v.partial_cmp(u) == Some(std::cmp::Ordering::Greater))
            {
                upper = Some(v);
            }
        }
        let ser = |v: Option<&ScalarValue>| -> Result<Option<String>> {
            match v {
                Some(v) => Ok(values::serialize_bound(v)?),
                None => Ok(None),
            }
        };
        out.push(FieldSummary {
            contains_null,
            contains_nan,
            lower_bound: ser(lower.as_ref())?,
            upper_bound: ser(upper.as_ref())?,
            empty_bounds: true,
        });
    }
    Ok(out)
}

fn is_nan(v: &ScalarValue) -> bool {
    match v {
        ScalarValue::Float32(Some(f)) => f.is_nan(),
        ScalarValue::Float64(Some(f)) => f.is_nan(),
        _ => false,
    }
}

/// Read a manifest into one batch. With `columns`, only those (dotted paths
/// such as `partition` or `stats.3`) are decoded; the batch then has just
/// those columns.
pub async fn read_manifest(
    location: &TableLocation,
    manifest: &ManifestFile,
    spec: &TableSpec,
    columns: Option<&[String]>,
) -> Result<RecordBatch> {
    if let Some(source) = &location.manifest_source {
        return source.read(location, manifest, spec, columns).await;
    }
    let path = location.resolve(&manifest.path)?;
    let key = location.cache_key(&path);
    let batch_key = match columns {
        Some(c) => format!("{key}#{}", c.join(",")),
        None => format!("{key}#*"),
    };
    if let Some(batch) = location.cache.batch(&batch_key) {
        return Ok(batch);
    }
    let bytes = match location.cache.bytes(&key) {
        Some(b) => b,
        None => {
            let b = location.store.get(&path).await?.bytes().await?;
            location.cache.put_bytes(key, b.clone());
            b
        }
    };
    let mut builder = ParquetRecordBatchReaderBuilder::try_new(bytes)?.with_batch_size(64 * 1024);
    if let Some(columns) = columns {
        let mask = ProjectionMask::columns(builder.parquet_schema(), columns.iter().map(String::as_str));
        builder = builder.with_projection(mask);
    }
    let reader = builder.build()?;
    let schema = datafusion::arrow::record_batch::RecordBatchReader::schema(&reader);
    let batches = reader.collect::<Result<Vec<RecordBatch>, _>>()?;
    let batch = concat_batches(&schema, batches.iter())?;
    if columns.is_none() && !super::format::has_manifest_columns(&batch.schema(), spec)? {
        return crate::format_err!(
            "manifest {} does not have the columns of table spec {}",
            manifest.path,
            spec.spec_id
        );
    }
    location.cache.put_batch(batch_key, batch.clone());
    Ok(batch)
}
