//! Merge-on-read: find the positions of the rows a statement takes out of
//! data files, write them as position delete files, and make them (with
//! the statement's new rows) one change ([`RowDeletes`]).
//!
//! A position is a row's index in its data file (0-based), which is what
//! Iceberg position deletes record. One plan finds them for all files: a
//! positions scan (`plan::positions`) of the files, then the condition
//! (DELETE; UPDATE and MERGE gather them from their own plans the same way):
//!
//! ```text
//! SELECT __hp_file, __hp_pos FROM <files> WHERE cond
//! ```
//!
//! The positions are the Parquet reader's row numbers, so whatever the
//! optimizer does with the condition (a subquery becomes a join, a filter
//! moves into the reader) they stay positions. Rows already deleted are not
//! read, so they are not deleted twice and the statement counts rows that
//! were there.
//!
//! The delete file is Iceberg's v2 layout, sorted by position, next to its
//! data file (same partition directory):
//!
//! | column      | type                 | field id   |
//! |-------------|----------------------|------------|
//! | `file_path` | string, required     | 2147483546 |
//! | `pos`       | long, required       | 2147483545 |
//!
//! `file_path` holds the data file's absolute path as Iceberg metadata
//! names it, so other engines match the delete file to its data file.
//!
//! An Iceberg v3 table takes deletion vectors instead: at most one per data
//! file, holding all of its deleted positions. A statement writes one Puffin
//! file, `data/<table prefix>-<uuid>-deletes.puffin`, with a vector for each
//! data file it touches (the file's earlier deletes and its own), and the
//! change takes the earlier vectors (or position delete files) of those
//! data files out of the snapshot:
//!
//! | delete manifest entry | `path`                  | `record_count` | `referenced_data_file` | blob |
//! |-----------------------|-------------------------|----------------|------------------------|------|
//! | one vector            | `data/<p>-<uuid>-deletes.puffin` | 5 positions | `data/…/<p>-<uuid>.parquet` | offset 4, 50 bytes |

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::datasource::provider_as_source;
use datafusion::execution::SessionState;
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, col};
use datafusion::physical_plan::execute_stream;
use futures::StreamExt;
use object_store::{ObjectStoreExt, PutPayload};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::error::{Error, Result};
use crate::iceberg::{deletion_vector, puffin};
use crate::manifest::DataFile;
use crate::manifest::deletes::{FILE_PATH_ID, POS_ID, sorted_within};
use crate::plan::files::PlannedFile;
use crate::plan::positions::{FILE, POS, Positions};
use crate::spec::data_file::Hold;
use crate::spec::types::PARQUET_FIELD_ID;
use crate::spec::{BlobRange, Snapshot, TableMetadata};
use crate::store::TableLocation;
use crate::store::pending::Pending;
use crate::table::change::{Change, ConflictScope, Operation};
use crate::table::retry::Attempt;
use crate::table::rewrite::Rewritten;
use crate::table::source::SnapshotSource;
use crate::table::writer::delete_files;

/// The positions of the rows of each of `files` (of `table`) for which
/// `condition` is true; files with none are left out.
pub async fn matching_positions(
    state: &SessionState,
    table: &dyn SnapshotSource,
    files: &[PlannedFile],
    condition: &Expr,
) -> Result<Vec<(usize, Vec<u64>)>> {
    let paths: HashSet<_> = files.iter().map(|f| f.path.clone()).collect();
    let scan = table.with_positions().restricted_to(paths);
    let plan = LogicalPlanBuilder::scan(table.table().name.clone(), provider_as_source(scan), None)?
        .filter(condition.clone())?
        .project(vec![col(FILE), col(POS)])?
        .build()?;
    let physical = state.create_physical_plan(&plan).await?;
    let mut stream = execute_stream(physical, state.task_ctx())?;
    let mut gathered = Positions::default();
    while let Some(batch) = stream.next().await {
        gathered.add(&batch?, 0, 1)?;
    }
    by_planned_file(gathered, files)
}

/// The attempt of a merge-on-read UPDATE or MERGE on `snapshot`:
/// `rewritten` holds its new rows, `gathered` the positions (in `read`) of
/// the rows it replaced or deleted. Nothing to commit when it acted on no
/// row; on error, what it wrote is deleted.
pub async fn replacing_rows(
    provider: &dyn SnapshotSource,
    snapshot: &Snapshot,
    operation: Operation,
    scope: ConflictScope,
    read: &[PlannedFile],
    gathered: &Mutex<Positions>,
    rewritten: Rewritten,
) -> Result<Attempt> {
    let location = &provider.table().location;
    let found = gathered_positions(location, gathered, read, &rewritten.files).await?;
    let deletes = RowDeletes::new(Vec::new(), read, found);
    if rewritten.counted == 0 || (deletes.is_empty() && rewritten.files.is_empty()) {
        delete_files(location, &rewritten.files).await;
        return Ok(Attempt::nothing(operation));
    }
    let mut change = Change::new(operation, Some(snapshot))?;
    change.scope = scope;
    let written = deletes
        .apply(&mut change, location, provider.metadata(), snapshot, rewritten.files)
        .await?;
    Ok(Attempt {
        change,
        written,
        count: rewritten.counted,
    })
}

/// The positions a statement gathered while writing `written` (its new
/// rows), matched to `files` as [`by_planned_file`] does; on error the new
/// files are deleted.
async fn gathered_positions(
    location: &TableLocation,
    gathered: &Mutex<Positions>,
    files: &[PlannedFile],
    written: &[DataFile],
) -> Result<Vec<(usize, Vec<u64>)>> {
    let taken = gathered.lock().map(|mut g| std::mem::take(&mut *g)).ok();
    let found = match taken {
        Some(positions) => by_planned_file(positions, files),
        None => {
            crate::format_err!("the positions of the changed rows were lost (a writer panicked); nothing was committed")
        }
    };
    if found.is_err() {
        delete_files(location, written).await;
    }
    found
}

/// Gathered positions matched to `files` (by index), checked against each
/// file's row count and sorted.
pub fn by_planned_file(gathered: Positions, files: &[PlannedFile]) -> Result<Vec<(usize, Vec<u64>)>> {
    let mut by_path = gathered.into_map();
    let mut out = Vec::with_capacity(by_path.len());
    for (i, file) in files.iter().enumerate() {
        let Some(positions) = by_path.remove(file.path.as_ref()) else {
            continue;
        };
        let positions = sorted_within(positions, file.record_count, |p| {
            format!(
                "reading data file {} gave row position {p}, but the manifest says it has {} rows; nothing was written",
                file.path, file.record_count
            )
        })?;
        out.push((i, positions));
    }
    if let Some(path) = by_path.keys().next() {
        return Err(Error::Invalid(format!(
            "a positions scan returned rows of data file {path}, which the statement did not plan; nothing was written"
        )));
    }
    Ok(out)
}

/// How many position delete files a statement uploads at once.
const DELETE_FILES_IN_FLIGHT: usize = 16;

/// The rows a merge-on-read statement takes out of its base snapshot.
#[derive(Debug, Default)]
pub struct RowDeletes {
    /// Files leaving the table whole (with their delete files).
    pub whole: Vec<PlannedFile>,
    /// Files keeping some rows, with the positions of the rows leaving.
    pub marked: Vec<(PlannedFile, Vec<u64>)>,
}

impl RowDeletes {
    /// `files` marked at the positions found (indexes into `files`, as
    /// [`matching_positions`] gives them); a file left without rows leaves
    /// whole instead.
    pub fn new(mut whole: Vec<PlannedFile>, files: &[PlannedFile], found: Vec<(usize, Vec<u64>)>) -> Self {
        let mut marked = Vec::with_capacity(found.len());
        for (i, positions) in found {
            let file = files[i].clone();
            if positions.len() as u64 == file.live_rows() {
                whole.push(file);
            } else {
                marked.push((file, positions));
            }
        }
        Self { whole, marked }
    }

    pub fn is_empty(&self) -> bool {
        self.whole.is_empty() && self.marked.is_empty()
    }

    /// The rows taken out.
    pub fn rows(&self) -> u64 {
        self.whole.iter().map(PlannedFile::live_rows).sum::<u64>()
            + self.marked.iter().map(|(_, p)| p.len() as u64).sum::<u64>()
    }

    /// Write the delete files and make `change` take the rows out of
    /// `snapshot` and put `added` (new data files of the current spec) in.
    /// Gives every file written (to delete if the commit fails); on error,
    /// they and the change's manifests are deleted already.
    pub async fn apply(
        &self,
        change: &mut Change,
        location: &TableLocation,
        md: &TableMetadata,
        snapshot: &Snapshot,
        added: Vec<DataFile>,
    ) -> Result<Vec<DataFile>> {
        let vectors = crate::iceberg::json::needs_v3(md);
        let (deletes, failed) = if vectors {
            self.write_vectors(location, &change.pending).await
        } else {
            self.write_position_files(location, &change.pending).await
        };
        let mut written = added.clone();
        written.extend(deletes.iter().map(|(f, _)| f.clone()));
        let built = async {
            if let Some(e) = failed {
                return Err(e);
            }
            if vectors {
                // The marked files' earlier deletes (and those of the files
                // leaving whole) leave with one rewrite of their manifests:
                // a data file has one vector, holding all of its deletes.
                change.deletion_vectors = true;
                let superseded: Vec<&PlannedFile> = self.marked.iter().map(|(f, _)| f).chain(&self.whole).collect();
                change
                    .remove_deletes_of_files(location, md, snapshot, &superseded)
                    .await?;
            }
            change.remove_files(location, md, snapshot, &self.whole).await?;
            change.add_deletes(location, md, snapshot, &deletes).await?;
            change.add_files(location, md.current_spec()?, &added).await
        }
        .await;
        if let Err(e) = built {
            delete_files(location, &written).await;
            change.discard(location).await;
            return Err(e);
        }
        Ok(written)
    }

    /// A position delete file for each marked file, each encoded on a task
    /// of its own (all cores), a bounded number at once, in order. Every
    /// file written is given (with its data file's manifest), and the first
    /// error, so the files of a failed attempt can all be deleted.
    async fn write_position_files(
        &self,
        location: &TableLocation,
        pending: &Pending,
    ) -> (Vec<(DataFile, usize)>, Option<Error>) {
        let writes: Vec<_> =
            self.marked
                .iter()
                .map(|(file, positions)| {
                    let (location, file, positions, pending) =
                        (location.clone(), file.clone(), positions.clone(), pending.clone());
                    async move {
                        let task = tokio::spawn(async move {
                            write_position_deletes(&location, &file, &positions, &pending).await
                        });
                        task.await
                            .unwrap_or_else(|e| crate::format_err!("writing a position delete file failed: {e}"))
                    }
                })
                .collect();
        let results: Vec<_> = futures::stream::iter(writes)
            .buffered(DELETE_FILES_IN_FLIGHT)
            .collect()
            .await;
        let mut deletes = Vec::with_capacity(results.len());
        let mut failed = None;
        for (result, (file, _)) in results.into_iter().zip(&self.marked) {
            match result {
                Ok(written) => deletes.push((written, file.manifest)),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        (deletes, failed)
    }

    /// One Puffin file with a deletion vector for each marked file (on a
    /// task of its own), as [`Self::write_position_files`] gives files.
    async fn write_vectors(
        &self,
        location: &TableLocation,
        pending: &Pending,
    ) -> (Vec<(DataFile, usize)>, Option<Error>) {
        let (task_location, marked, pending) = (location.clone(), self.marked.clone(), pending.clone());
        let written = tokio::spawn(async move { write_deletion_vectors(&task_location, &marked, &pending).await })
            .await
            .unwrap_or_else(|e| crate::format_err!("writing deletion vectors failed: {e}"));
        match written {
            Ok(vectors) => {
                let manifests = self.marked.iter().map(|(file, _)| file.manifest);
                (vectors.into_iter().zip(manifests).collect(), None)
            }
            Err(e) => (Vec::new(), Some(e)),
        }
    }
}

/// Field id of `_pos`, the row position column, which a deletion vector is
/// computed from (its Puffin blob's `fields`).
const ROW_POSITION_ID: i32 = 2147483645;

/// Write one Puffin file holding a deletion vector for each of `marked`:
/// the file's earlier deletes and the new positions. Describes each vector
/// for a delete manifest, in the order of `marked`.
pub async fn write_deletion_vectors(
    location: &TableLocation,
    marked: &[(PlannedFile, Vec<u64>)],
    pending: &Pending,
) -> Result<Vec<DataFile>> {
    if marked.is_empty() {
        return Ok(Vec::new());
    }
    let mut blobs = Vec::with_capacity(marked.len());
    let mut referenced = Vec::with_capacity(marked.len());
    for (file, positions) in marked {
        let mut bitmap: roaring::RoaringTreemap = positions.iter().copied().collect();
        if let Some(earlier) = &file.deletes {
            bitmap.extend(earlier.iter().copied());
        }
        let stored_data = location.stored(&file.path)?;
        let cardinality = bitmap.len();
        blobs.push(puffin::Blob {
            kind: deletion_vector::BLOB_TYPE.to_string(),
            fields: vec![ROW_POSITION_ID],
            // Inherited from the snapshot that adds the vector.
            snapshot_id: -1,
            sequence_number: -1,
            properties: BTreeMap::from([
                ("cardinality".to_string(), cardinality.to_string()),
                ("referenced-data-file".to_string(), location.iceberg_path(&stored_data)),
            ]),
            data: deletion_vector::encode(&bitmap)?,
        });
        referenced.push((file, stored_data, cardinality, partition_strings(file)?));
    }
    let created_by = format!("hidden-partitions {}", env!("CARGO_PKG_VERSION"));
    let (bytes, footer) = puffin::write(blobs, BTreeMap::from([("created-by".to_string(), created_by)]))?;
    let name = format!("{}-deletes.puffin", location.fresh_name());
    let stored = TableLocation::stored_path(["data", name.as_str()]);
    let size = bytes.len() as u64;
    location
        .store
        .put(&location.resolve(&stored)?, PutPayload::from(bytes))
        .await?;
    Ok(referenced
        .into_iter()
        .zip(footer.blobs)
        .map(|((file, stored_data, cardinality, partition_strings), blob)| DataFile {
            path: stored.clone(),
            file_size: size,
            record_count: cardinality,
            spec_id: file.spec_id,
            partition: file.partition.clone(),
            partition_strings,
            column_stats: Vec::new(),
            pending: Some(Hold::new(pending.clone())),
            first_row_id: None,
            sort_order_id: None,
            referenced_data_file: Some(stored_data),
            blob: Some(BlobRange {
                offset: blob.offset as i64,
                length: blob.length as i64,
            }),
        })
        .collect())
}

/// The protocol strings of `data`'s partition values.
fn partition_strings(data: &PlannedFile) -> Result<Vec<Option<String>>> {
    data.partition
        .iter()
        .map(|v| {
            crate::values::serialize(v).map_err(|e| Error::Invalid(format!("partition value of {}: {e}", data.path)))
        })
        .collect()
}

/// How a position delete file is encoded: the path once (a dictionary),
/// the sorted positions as deltas, nothing compressed. A delete file
/// usually holds a few positions, where a codec costs more to set up than
/// it saves, and deltas of sorted positions are small already.
fn delete_file_properties() -> WriterProperties {
    let pos = ColumnPath::new(vec!["pos".to_string()]);
    WriterProperties::builder()
        .set_compression(Compression::UNCOMPRESSED)
        .set_column_dictionary_enabled(pos.clone(), false)
        .set_column_encoding(pos, Encoding::DELTA_BINARY_PACKED)
        .build()
}

/// Write the position delete file deleting `positions` (sorted) of data
/// file `data`, and describe it for a delete manifest.
pub async fn write_position_deletes(
    location: &TableLocation,
    data: &PlannedFile,
    positions: &[u64],
    pending: &Pending,
) -> Result<DataFile> {
    let stored_data = location.stored(&data.path)?;
    let absolute = location.iceberg_path(&stored_data);
    let field = |name: &str, dt: DataType, id: i32| {
        Field::new(name, dt, false).with_metadata(HashMap::from([(PARQUET_FIELD_ID.to_string(), id.to_string())]))
    };
    let schema = Arc::new(ArrowSchema::new(vec![
        field("file_path", DataType::Utf8, FILE_PATH_ID),
        field("pos", DataType::Int64, POS_ID),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                absolute.as_str(),
                positions.len(),
            ))),
            Arc::new(Int64Array::from_iter_values(positions.iter().map(|p| *p as i64))),
        ],
    )?;
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buf, schema, Some(delete_file_properties()))?;
    writer.write(&batch)?;
    writer.close()?;
    // Beside its data file: `<dir>/<table prefix>-<uuid>-deletes.parquet`.
    let name = format!("{}-deletes.parquet", location.fresh_name());
    let dir = stored_data.rsplit_once('/').map_or("", |(dir, _)| dir);
    let stored = if dir.is_empty() {
        TableLocation::stored_path([name.as_str()])
    } else {
        format!("{dir}/{}", TableLocation::stored_path([name.as_str()]))
    };
    let size = buf.len() as u64;
    location
        .store
        .put(&location.resolve(&stored)?, PutPayload::from(buf))
        .await?;
    let partition_strings = partition_strings(data)?;
    Ok(DataFile {
        path: stored,
        file_size: size,
        record_count: positions.len() as u64,
        spec_id: data.spec_id,
        partition: data.partition.clone(),
        partition_strings,
        column_stats: Vec::new(),
        pending: Some(Hold::new(pending.clone())),
        first_row_id: None,
        sort_order_id: None,
        referenced_data_file: Some(stored_data),
        blob: None,
    })
}
