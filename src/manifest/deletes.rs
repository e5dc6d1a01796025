//! Position deletes of our own tables: which delete file names which data
//! file, and the row positions it deletes.
//!
//! A merge-on-read DELETE writes one position delete file per data file it
//! touches (Iceberg v2 layout, see `table::position_deletes`) and lists it in
//! a delete manifest (`content` 1) with the data file it names:
//!
//! | delete manifest row | `path`                        | `record_count` | `referenced_data_file` |
//! |---------------------|-------------------------------|----------------|------------------------|
//! | one delete file     | `data/…/<p>-<uuid>-deletes.parquet` | 3 positions | `data/…/<p>-<uuid>.parquet` |
//!
//! In an Iceberg v3 table the deletes of a data file are one deletion
//! vector instead (`iceberg::deletion_vector`): a blob in a Puffin file,
//! whose place the entry adds (`content_offset`, `content_size_in_bytes`);
//! several blobs may share one Puffin file.
//!
//! A scan reads the delete manifests whose partition summaries may match
//! (as for data manifests), then, for the data files it kept, the `pos`
//! column of their delete files (cached: the files never change), and
//! merges them into one sorted vector per data file. A position at or past
//! the end of its data file, a delete file that is missing, or one naming a
//! data file the snapshot does not list is an error naming the files —
//! never a silently wrong answer.

use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::{cast, concat_batches, min};
use datafusion::arrow::datatypes::{DataType, Int64Type, Schema as ArrowSchema};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::ParquetRowSelection;
use object_store::ObjectStoreExt;
use object_store::path::Path;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReaderBuilder, RowSelection, RowSelector};

use super::format::{CONTENT_OFFSET, CONTENT_SIZE, PATH, RECORD_COUNT, REFERENCED_DATA_FILE};
use super::io::read_manifest;
use crate::error::{Error, Result};
use crate::spec::types::PARQUET_FIELD_ID;
use crate::spec::{BlobRange, ManifestFile, TableMetadata};
use crate::store::TableLocation;

pub use crate::iceberg::manifest::{POS_FILE_PATH_ID as FILE_PATH_ID, POS_ID};

/// One position delete file of a snapshot, as its delete manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteEntry {
    /// The delete file (stored form).
    pub path: String,
    /// The data file whose rows it deletes (stored form).
    pub data_file: String,
    /// Its number of positions.
    pub record_count: u64,
    /// For a deletion vector: its blob in the Puffin file `path`.
    pub blob: Option<BlobRange>,
}

/// The entries of delete manifests `manifests` (all of `md`).
pub async fn delete_entries(
    location: &TableLocation,
    md: &TableMetadata,
    manifests: &[&ManifestFile],
) -> Result<Vec<DeleteEntry>> {
    let columns = [
        PATH.to_string(),
        RECORD_COUNT.to_string(),
        REFERENCED_DATA_FILE.to_string(),
        CONTENT_OFFSET.to_string(),
        CONTENT_SIZE.to_string(),
    ];
    let reads = manifests.iter().map(|m| async {
        let spec = md.spec(m.spec_id)?;
        let batch = read_manifest(location, m, spec, Some(&columns)).await?;
        entries_of(&batch, m)
    });
    let per_manifest: Vec<Vec<DeleteEntry>> = futures::future::try_join_all(reads).await?;
    Ok(per_manifest.into_iter().flatten().collect())
}

fn entries_of(batch: &RecordBatch, manifest: &ManifestFile) -> Result<Vec<DeleteEntry>> {
    let column = |name: &str| {
        batch
            .column_by_name(name)
            .ok_or_else(|| Error::Format(format!("delete manifest {} has no column {name}", manifest.path)))
    };
    let paths = column(PATH)?.as_string::<i32>();
    let counts = column(RECORD_COUNT)?.as_primitive::<Int64Type>();
    let referenced = column(REFERENCED_DATA_FILE)?.as_string::<i32>();
    let blobs = super::format::blob_ranges(batch);
    (0..batch.num_rows())
        .map(|i| {
            if referenced.is_null(i) {
                return crate::format_err!(
                    "delete file {} in manifest {} names no data file",
                    paths.value(i),
                    manifest.path
                );
            }
            Ok(DeleteEntry {
                path: paths.value(i).to_string(),
                data_file: referenced.value(i).to_string(),
                record_count: counts.value(i).max(0) as u64,
                blob: blobs[i],
            })
        })
        .collect()
}

/// The deleted positions of `entry`, a delete file of the `rows`-row data
/// file it names: sorted, without duplicates, each below `rows`.
pub async fn positions(location: &TableLocation, entry: &DeleteEntry, rows: u64) -> Result<Arc<[u64]>> {
    if let Some(blob) = entry.blob {
        return vector_positions(location, entry, blob, rows).await;
    }
    let path = location.resolve(&entry.path)?;
    let key = format!("{}#pos", location.cache_key(&path));
    let batch = match location.cache.batch(&key) {
        Some(b) => b,
        None => {
            let bytes = fetch(location, &path, &entry.path).await?;
            let (batch, _) = read_columns(bytes, &[(POS_ID, "pos")], &entry.path)?;
            location.cache.put_batch(key, batch.clone());
            batch
        }
    };
    let positions = checked_positions(batch.column(0), rows, |p| match p {
        Some(p) => format!(
            "delete file {} deletes row {p} of data file {}, which has {rows} rows",
            entry.path, entry.data_file
        ),
        None => format!("delete file {} has a null position", entry.path),
    })?;
    Ok(positions.into())
}

/// The data files a Parquet position delete file (`stored`) deletes rows
/// of, as its `file_path` column names them: distinct, sorted.
pub async fn named_data_files(location: &TableLocation, stored: &str) -> Result<Vec<String>> {
    let path = location.resolve(stored)?;
    let bytes = fetch(location, &path, stored).await?;
    let (batch, _) = read_columns(bytes, &[(FILE_PATH_ID, "file_path")], stored)?;
    let column = cast(batch.column(0), &DataType::Utf8)?;
    let names = column.as_string::<i32>();
    if names.null_count() > 0 {
        return crate::format_err!("delete file {stored} has a null file_path");
    }
    let distinct: std::collections::BTreeSet<&str> = names.iter().flatten().collect();
    Ok(distinct.into_iter().map(str::to_string).collect())
}

/// The positions of a deletion vector: one ranged read of its blob
/// (cached), its cardinality checked against the entry.
async fn vector_positions(
    location: &TableLocation,
    entry: &DeleteEntry,
    blob: BlobRange,
    rows: u64,
) -> Result<Arc<[u64]>> {
    let path = location.resolve(&entry.path)?;
    let bitmap = read_vector(location, &path, &entry.path, blob, entry.record_count).await?;
    let what = format!("{} at {}", entry.path, blob.offset);
    let positions: Vec<u64> = bitmap.iter().collect();
    sorted_within(positions, rows, |p| {
        format!(
            "deletion vector {what} deletes row {p} of data file {}, which has {rows} rows",
            entry.data_file
        )
    })
    .map(Into::into)
}

/// The deletion vector whose blob is `blob` of the Puffin file `path`
/// (`stored`: as the manifest names it), read with one ranged GET (cached:
/// the file never changes), its cardinality checked against the entry's
/// `record_count`. Our tables' scans and other engines' share it.
pub async fn read_vector(
    location: &TableLocation,
    path: &Path,
    stored: &str,
    blob: BlobRange,
    record_count: u64,
) -> Result<roaring::RoaringTreemap> {
    let key = format!("{}#{}+{}", location.cache_key(path), blob.offset, blob.length);
    let bytes = match location.cache.bytes(&key) {
        Some(b) => b,
        None => {
            let (Ok(start), Ok(length)) = (u64::try_from(blob.offset), u64::try_from(blob.length)) else {
                return crate::format_err!(
                    "deletion vector {stored} names a negative blob offset {} or length {}",
                    blob.offset,
                    blob.length
                );
            };
            let b = match location
                .store
                .get_range(path, start..start.saturating_add(length))
                .await
            {
                Ok(b) => b,
                Err(object_store::Error::NotFound { .. }) => {
                    return Err(Error::Invalid(format!(
                        "deletion vector file {stored} of table {} does not exist",
                        location.url()
                    )));
                }
                Err(e) => return Err(e.into()),
            };
            location.cache.put_bytes(key, b.clone());
            b
        }
    };
    let what = format!("{stored} at {}", blob.offset);
    let bitmap = crate::iceberg::deletion_vector::decode(&bytes, &what)?;
    if bitmap.len() != record_count {
        return crate::format_err!(
            "deletion vector {what} holds {} positions, its manifest entry says {record_count}",
            bitmap.len()
        );
    }
    Ok(bitmap)
}

/// `column` (integers) as row positions of a `rows`-row file: sorted,
/// without duplicates. A null (`None`) or a position outside `0..rows` is
/// the error `problem` describes.
pub fn checked_positions(column: &ArrayRef, rows: u64, problem: impl Fn(Option<i64>) -> String) -> Result<Vec<u64>> {
    let column = cast(column, &DataType::Int64)?;
    let pos = column.as_primitive::<Int64Type>();
    if pos.null_count() > 0 {
        return Err(Error::Format(problem(None)));
    }
    if let Some(bad) = min(pos).filter(|p| *p < 0) {
        return Err(Error::Format(problem(Some(bad))));
    }
    sorted_within(pos.values().iter().map(|p| *p as u64).collect(), rows, |p| {
        problem(Some(p as i64))
    })
}

/// `positions` sorted, without duplicates; one at or past `rows` is the
/// error `problem` describes.
pub fn sorted_within(mut positions: Vec<u64>, rows: u64, problem: impl Fn(u64) -> String) -> Result<Vec<u64>> {
    if let Some(bad) = positions.iter().max().filter(|p| **p >= rows) {
        return Err(Error::Format(problem(*bad)));
    }
    if !positions.is_sorted() {
        positions.sort_unstable();
    }
    positions.dedup();
    Ok(positions)
}

/// Merge sorted position vectors into one (sorted, no duplicates).
pub fn merge(vectors: &[Arc<[u64]>]) -> Arc<[u64]> {
    match vectors {
        [] => Arc::from(Vec::new()),
        [one] => Arc::clone(one),
        many => {
            let mut all: Vec<u64> = many.iter().flat_map(|v| v.iter().copied()).collect();
            all.sort_unstable();
            all.dedup();
            all.into()
        }
    }
}

async fn fetch(location: &TableLocation, path: &Path, stored: &str) -> Result<Bytes> {
    match location.store.get(path).await {
        Ok(r) => Ok(r.bytes().await?),
        Err(object_store::Error::NotFound { .. }) => Err(Error::Invalid(format!(
            "delete file {stored} of table {} does not exist",
            location.url()
        ))),
        Err(e) => Err(e.into()),
    }
}

/// Index of the Arrow column with field id `id` (or named `name` when the file has no ids).
fn column_index(schema: &ArrowSchema, id: i32, name: &str) -> Option<usize> {
    let by_id = schema
        .fields()
        .iter()
        .position(|f| f.metadata().get(PARQUET_FIELD_ID).and_then(|v| v.parse::<i32>().ok()) == Some(id));
    by_id.or_else(|| schema.fields().iter().position(|f| f.name() == name))
}

/// Read the columns `ids` (field id, name) of a Parquet delete file `what`:
/// one batch, and per requested id the index of its column in it.
pub fn read_columns(bytes: Bytes, ids: &[(i32, &str)], what: &str) -> Result<(RecordBatch, Vec<usize>)> {
    let (batch, found) = read_present_columns(bytes, ids, what)?;
    let mut out = Vec::with_capacity(found.len());
    for ((id, name), index) in ids.iter().zip(found) {
        let Some(index) = index else {
            return crate::format_err!("delete file {what} has no column with field id {id} ({name})");
        };
        out.push(index);
    }
    Ok((batch, out))
}

/// Like [`read_columns`], for a file that may lack some of the columns (a
/// data file older than a column): `None` for those.
pub fn read_present_columns(
    bytes: Bytes,
    ids: &[(i32, &str)],
    what: &str,
) -> Result<(RecordBatch, Vec<Option<usize>>)> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .map_err(|e| Error::Format(format!("file {what} is not a readable Parquet file: {e}")))?;
    let schema = Arc::clone(builder.schema());
    let indices: Vec<Option<usize>> = ids.iter().map(|(id, name)| column_index(&schema, *id, name)).collect();
    let mut present: Vec<usize> = indices.iter().flatten().copied().collect();
    present.sort_unstable();
    present.dedup();
    let mask = ProjectionMask::roots(builder.parquet_schema(), present.iter().copied());
    let reader = builder.with_projection(mask).build()?;
    let out_schema = datafusion::arrow::record_batch::RecordBatchReader::schema(&reader);
    let batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
    let batch = concat_batches(&out_schema, batches.iter())?;
    // The projected batch keeps file order: map each requested id to its column.
    let positions = indices
        .iter()
        .map(|i| i.and_then(|i| present.iter().position(|p| *p == i)))
        .collect();
    Ok((batch, positions))
}

/// `file` (of `rows` rows) read without its `deleted` rows: a Parquet row
/// selection, which the reader intersects with row-group and page pruning.
pub fn skipping_deleted(file: PartitionedFile, rows: u64, deleted: &[u64]) -> PartitionedFile {
    file.with_extension(ParquetRowSelection::new(keep_selection(rows, deleted)))
}

/// The row selection keeping every row of a `rows`-row file except `deleted`
/// (sorted); positions past the end are ignored.
pub fn keep_selection(rows: u64, deleted: &[u64]) -> RowSelection {
    let mut selectors = Vec::new();
    // Rows before `next` are decided; `skipping` of them, the last, are skipped.
    let (mut next, mut skipping) = (0u64, 0u64);
    for &p in deleted.iter().filter(|p| **p < rows) {
        if p < next {
            continue;
        }
        if p > next {
            if skipping > 0 {
                selectors.push(RowSelector::skip(skipping as usize));
                skipping = 0;
            }
            selectors.push(RowSelector::select((p - next) as usize));
        }
        skipping += 1;
        next = p + 1;
    }
    if skipping > 0 {
        selectors.push(RowSelector::skip(skipping as usize));
    }
    if next < rows {
        selectors.push(RowSelector::select((rows - next) as usize));
    }
    RowSelection::from(selectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_skips_exactly_the_deleted_rows() {
        let s = keep_selection(6, &[0, 2, 3, 9]);
        let v: Vec<RowSelector> = s.into();
        assert_eq!(
            v,
            vec![
                RowSelector::skip(1),
                RowSelector::select(1),
                RowSelector::skip(2),
                RowSelector::select(2),
            ]
        );
        let total: usize = keep_selection(6, &[0, 2, 3, 9]).iter().map(|s| s.row_count).sum();
        assert_eq!(total, 6);
    }

    #[test]
    fn positions_are_checked_sorted_and_unique() {
        let problem = |p: Option<i64>| format!("bad {p:?}");
        let column: ArrayRef = Arc::new(datafusion::arrow::array::Int64Array::from(vec![4, 1, 4, 0]));
        assert_eq!(checked_positions(&column, 5, problem).unwrap(), vec![0, 1, 4]);
        assert_eq!(
            checked_positions(&column, 4, problem).unwrap_err().to_string(),
            "invalid table format: bad Some(4)"
        );
        let negative: ArrayRef = Arc::new(datafusion::arrow::array::Int64Array::from(vec![-1, 2]));
        assert!(
            checked_positions(&negative, 5, problem)
                .unwrap_err()
                .to_string()
                .contains("Some(-1)")
        );
        let null: ArrayRef = Arc::new(datafusion::arrow::array::Int64Array::from(vec![Some(1), None]));
        assert!(
            checked_positions(&null, 5, problem)
                .unwrap_err()
                .to_string()
                .contains("None")
        );
    }

    #[test]
    fn merged_vectors_are_sorted_and_unique() {
        let a: Arc<[u64]> = Arc::from(vec![1, 5, 9]);
        let b: Arc<[u64]> = Arc::from(vec![2, 5, 10]);
        assert_eq!(&*merge(&[a.clone(), b]), &[1, 2, 5, 9, 10]);
        assert_eq!(&*merge(std::slice::from_ref(&a)), &[1, 5, 9]);
        assert!(merge(&[]).is_empty());
    }
}
