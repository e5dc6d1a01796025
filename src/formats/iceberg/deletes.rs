//! Which Iceberg delete files apply to which data files, and reading them.
//!
//! The rules (Iceberg spec, "Scan Planning"), with `deletes` of the fixtures:
//!
//! | delete kind | applies to a data file when                                        | example                                   |
//! |-------------|--------------------------------------------------------------------|-------------------------------------------|
//! | position    | same spec and partition, delete seq **≥** data seq, file_path = data file | S5's position delete removes id 21 of the file added in the same commit (5 ≥ 5) |
//! | equality    | same spec and partition (or an unpartitioned delete spec), delete seq **>** data seq | S3's `id ∈ {5, 11}` removes id 5 (seq 1) but not id 11 (seq 4) |
//!
//! | deletion vector (v3) | as a position delete, for the one file its `referenced_data_file` names | a Puffin blob at `content_offset`, `content_size_in_bytes` long (see `iceberg::deletion_vector`) |
//!
//! Position delete files name data files by the path written in the
//! manifest, so that path (not the rebased one) is compared. A deletion
//! vector is read with one ranged GET of its blob; its cardinality must be
//! the entry's `record_count`.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{Field, Schema as ArrowSchema};
use object_store::ObjectStoreExt;
use object_store::path::Path;

use super::manifest::{Content, DataFileInfo, Entry, IcebergManifests};
use crate::error::{Error, Result};
use crate::formats::deletes::{EqualityDeletes, FileDeletes};
use crate::iceberg::manifest_list_read::ManifestEntryFile;
use crate::manifest::deletes::{FILE_PATH_ID, POS_ID, read_columns, read_vector};
use crate::spec::Schema;
use crate::store::TableLocation;

/// A delete file of the snapshot, with its scope.
#[derive(Debug, Clone)]
struct DeleteFile {
    entry: Entry,
    spec_id: i32,
    unpartitioned: bool,
    path: Path,
}

/// The delete files of a snapshot.
#[derive(Debug, Default)]
pub struct DeleteIndex {
    files: Vec<DeleteFile>,
}

impl DeleteIndex {
    /// Read every delete manifest of the snapshot.
    pub async fn load(
        manifests: &IcebergManifests,
        location: &TableLocation,
        delete_manifests: &[ManifestEntryFile],
    ) -> Result<Self> {
        let mut files = Vec::new();
        for listed in delete_manifests {
            let mapping = manifests.spec(listed.spec_id)?;
            let unpartitioned = mapping.iceberg.fields.iter().all(|f| f.transform == "void");
            for entry in manifests.entries(location, listed).await? {
                if entry.content == Content::Data {
                    return crate::format_err!("delete manifest {} lists data file {}", listed.path, entry.file_path);
                }
                let is_dv = entry.file_format.eq_ignore_ascii_case("puffin") || entry.content_offset.is_some();
                if is_dv {
                    check_deletion_vector(&entry, &listed.path)?;
                } else if !entry.file_format.eq_ignore_ascii_case("parquet") {
                    return Err(Error::Invalid(format!(
                        "delete file {} is {}; only Parquet delete files are supported",
                        entry.file_path, entry.file_format
                    )));
                }
                files.push(DeleteFile {
                    path: manifests.rebase().resolve(location, &entry.file_path)?,
                    entry,
                    spec_id: listed.spec_id,
                    unpartitioned,
                });
            }
        }
        Ok(Self { files })
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    fn applies(&self, d: &DeleteFile, data: &DataFileInfo) -> bool {
        let same_partition = d.spec_id == data.spec_id && d.entry.partition == data.partition;
        match d.entry.content {
            Content::PositionDeletes => {
                same_partition
                    && d.entry.sequence_number >= data.sequence_number
                    && d.entry
                        .referenced_data_file
                        .as_ref()
                        .is_none_or(|r| r == &data.original_path)
                    && may_reference(&d.entry, &data.original_path)
            }
            Content::EqualityDeletes => {
                (same_partition || d.unpartitioned) && d.entry.sequence_number > data.sequence_number
            }
            Content::Data => false,
        }
    }

    /// The deletes of each data file in `files` (by rebased path).
    pub async fn deletes_for(
        &self,
        location: &TableLocation,
        schema: &Schema,
        files: &[Option<&DataFileInfo>],
    ) -> Result<Vec<FileDeletes>> {
        let mut positions: HashMap<usize, Arc<HashMap<String, Vec<u64>>>> = HashMap::new();
        let mut equality: HashMap<usize, Arc<EqualityDeletes>> = HashMap::new();
        let mut out = Vec::with_capacity(files.len());
        for data in files {
            let mut deletes = FileDeletes::default();
            let Some(data) = data else {
                out.push(deletes);
                continue;
            };
            for (i, d) in self.files.iter().enumerate() {
                if !self.applies(d, data) {
                    continue;
                }
                match d.entry.content {
                    Content::PositionDeletes => {
                        let by_file = match positions.get(&i) {
                            Some(p) => Arc::clone(p),
                            None => {
                                let p = Arc::new(read_positions(location, d).await?);
                                positions.insert(i, Arc::clone(&p));
                                p
                            }
                        };
                        if let Some(p) = by_file.get(&data.original_path) {
                            deletes.positions.extend(p);
                        }
                    }
                    Content::EqualityDeletes => {
                        let set = match equality.get(&i) {
                            Some(s) => Arc::clone(s),
                            None => {
                                let s = Arc::new(read_equality(location, d, schema).await?);
                                equality.insert(i, Arc::clone(&s));
                                s
                            }
                        };
                        deletes.equality.push(set);
                    }
                    Content::Data => {}
                }
            }
            deletes.positions.sort_unstable();
            deletes.positions.dedup();
            out.push(deletes);
        }
        Ok(out)
    }
}

/// Whether a position delete file's `file_path` bounds allow `path`.
fn may_reference(entry: &Entry, path: &str) -> bool {
    let lower = entry.lower.get(&FILE_PATH_ID);
    let upper = entry.upper.get(&FILE_PATH_ID);
    let p = path.as_bytes();
    lower.is_none_or(|l| l.as_slice() <= p) && upper.is_none_or(|u| p <= u.as_slice() || u.len() < p.len())
}

async fn fetch(location: &TableLocation, d: &DeleteFile) -> Result<Bytes> {
    match location.store.get(&d.path).await {
        Ok(r) => Ok(r.bytes().await?),
        Err(object_store::Error::NotFound { .. }) => Err(Error::Invalid(format!(
            "delete file {} of table {} does not exist",
            d.entry.file_path,
            location.url()
        ))),
        Err(e) => Err(e.into()),
    }
}

/// A deletion vector's entry says where its blob is and which file it is for.
fn check_deletion_vector(entry: &Entry, manifest: &str) -> Result<()> {
    let complete = entry.content == Content::PositionDeletes
        && entry.referenced_data_file.is_some()
        && entry.content_offset.is_some_and(|o| o >= 0)
        && entry.content_size.is_some_and(|s| s >= 0);
    if !complete {
        return crate::format_err!(
            "deletion vector {} in delete manifest {manifest} needs content 1 (position deletes), a referenced_data_file, content_offset and content_size_in_bytes",
            entry.file_path
        );
    }
    Ok(())
}

/// The positions of a deletion vector (read as our tables' are).
async fn read_deletion_vector(location: &TableLocation, d: &DeleteFile) -> Result<HashMap<String, Vec<u64>>> {
    let (Some(offset), Some(length), Some(data_file)) = (
        d.entry.content_offset,
        d.entry.content_size,
        d.entry.referenced_data_file.as_ref(),
    ) else {
        return crate::format_err!("deletion vector {} lacks its blob's place", d.entry.file_path);
    };
    let blob = crate::spec::BlobRange { offset, length };
    let count = d.entry.record_count.max(0) as u64;
    let bitmap = read_vector(location, &d.path, &d.entry.file_path, blob, count).await?;
    Ok(HashMap::from([(data_file.clone(), bitmap.iter().collect())]))
}

async fn read_positions(location: &TableLocation, d: &DeleteFile) -> Result<HashMap<String, Vec<u64>>> {
    if d.entry.content_offset.is_some() || d.entry.file_format.eq_ignore_ascii_case("puffin") {
        return read_deletion_vector(location, d).await;
    }
    let bytes = fetch(location, d).await?;
    let (batch, cols) = read_columns(
        bytes,
        &[(FILE_PATH_ID, "file_path"), (POS_ID, "pos")],
        &d.entry.file_path,
    )?;
    let paths = cast(batch.column(cols[0]), &datafusion::arrow::datatypes::DataType::Utf8)?;
    let pos = cast(batch.column(cols[1]), &datafusion::arrow::datatypes::DataType::Int64)?;
    let (paths, pos) = (
        paths.as_string::<i32>(),
        pos.as_primitive::<datafusion::arrow::datatypes::Int64Type>(),
    );
    let mut out: HashMap<String, Vec<u64>> = HashMap::new();
    for i in 0..batch.num_rows() {
        if paths.is_null(i) || pos.is_null(i) || pos.value(i) < 0 {
            continue;
        }
        out.entry(paths.value(i).to_string())
            .or_default()
            .push(pos.value(i) as u64);
    }
    Ok(out)
}

async fn read_equality(location: &TableLocation, d: &DeleteFile, schema: &Schema) -> Result<EqualityDeletes> {
    read_equality_file(location, &d.path, &d.entry, schema).await
}

/// The rows of the equality delete file `entry` (at `path`), its key
/// columns typed as `schema` (the table's current schema) has them. A key
/// column must be a top-level column of that schema.
pub async fn read_equality_file(
    location: &TableLocation,
    path: &Path,
    entry: &Entry,
    schema: &Schema,
) -> Result<EqualityDeletes> {
    if entry.equality_ids.is_empty() {
        return crate::format_err!("equality delete file {} names no equality columns", entry.file_path);
    }
    let mut wanted = Vec::new();
    for id in &entry.equality_ids {
        let Some(column) = schema.fields.iter().find(|f| f.id == *id) else {
            return Err(Error::Invalid(format!(
                "equality delete file {} deletes by column id {id}, which is not a top-level column of the table's schema",
                entry.file_path
            )));
        };
        wanted.push((*id, column.name.as_str()));
    }
    let bytes = match location.store.get(path).await {
        Ok(r) => r.bytes().await?,
        Err(object_store::Error::NotFound { .. }) => {
            return Err(Error::Invalid(format!(
                "delete file {} of table {} does not exist",
                entry.file_path,
                location.url()
            )));
        }
        Err(e) => return Err(e.into()),
    };
    let (batch, cols) = read_columns(bytes, &wanted, &entry.file_path)?;
    let mut fields = Vec::new();
    let mut arrays = Vec::new();
    for ((id, name), col) in wanted.iter().zip(cols) {
        let dt = schema
            .field_by_id(*id)
            .map(|f| crate::spec::types::strip_metadata(&f.field_type.to_arrow()))
            .unwrap_or_else(|| batch.column(col).data_type().clone());
        arrays.push(cast(batch.column(col), &dt)?);
        fields.push(Field::new(*name, dt, true));
    }
    let rows = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), arrays)?;
    Ok(EqualityDeletes {
        file: entry.file_path.clone(),
        columns: wanted.iter().map(|(_, n)| n.to_string()).collect(),
        rows,
    })
}
