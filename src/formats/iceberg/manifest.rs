//! Iceberg manifests (Avro) → our Arrow manifest batches.
//!
//! One manifest entry per data (or delete) file:
//!
//! | id  | field                 | becomes                                                  |
//! |-----|-----------------------|----------------------------------------------------------|
//! | 0   | status                | 2 (DELETED) entries are skipped                          |
//! | 3   | sequence_number       | the file's data sequence number (null → inherited from the manifest list when ADDED) |
//! | 100 | file_path             | `path`, rebased onto the table's real location           |
//! | 102 | partition             | `partition` (by partition field id) and `partition_strings` |
//! | 103, 104 | record_count, file_size_in_bytes | same                                  |
//! | 110, 137 | null / NaN value counts | `stats.<id>.null_count` (null when not written)    |
//! | 125, 128 | lower / upper bounds  | `stats.<id>.min` / `max` (float bounds dropped when NaNs may be present) |
//! | 134, 135 | content, equality_ids | delete files: 1 position, 2 equality (see `deletes`)    |

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use object_store::ObjectStoreExt;
use object_store::path::Path;

use super::avro::{AvroFile, RecordIds};
use super::convert::SpecMapping;
use super::manifest_list::ManifestEntryFile;
use super::metadata::Rebase;
use super::values::{avro_natural, avro_to_scalar, decode_bound};
use crate::error::{Error, Result};
use crate::formats::manifest_batch::{ForeignDataFile, foreign_manifest_batch};
use crate::manifest::source::{ManifestSource, project_columns};
use crate::manifest::{ColumnStats, DataFile};
use crate::spec::{ManifestFile, TableSpec};
use crate::store::TableLocation;

/// What a manifest entry's file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    Data,
    PositionDeletes,
    EqualityDeletes,
}

/// A live (not DELETED) manifest entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub content: Content,
    /// As written in the manifest (position deletes name files this way).
    pub file_path: String,
    pub file_format: String,
    /// Per Iceberg partition field: typed by our result type when the field
    /// is kept, by its Avro type otherwise (still compared for delete scope).
    pub partition: Vec<ScalarValue>,
    pub record_count: i64,
    pub file_size: i64,
    pub null_counts: HashMap<i32, i64>,
    pub nan_counts: HashMap<i32, i64>,
    pub lower: HashMap<i32, Vec<u8>>,
    pub upper: HashMap<i32, Vec<u8>>,
    pub equality_ids: Vec<i32>,
    /// The data sequence number (inherited when not written).
    pub sequence_number: i64,
    pub referenced_data_file: Option<String>,
    /// Set for v3 deletion vectors (a blob inside a Puffin file).
    pub content_offset: Option<i64>,
}

/// Decode a manifest's live entries; `what` names the file for errors.
pub fn read_entries(bytes: &[u8], what: &str, listed: &ManifestEntryFile, spec: &SpecMapping) -> Result<Vec<Entry>> {
    let file = AvroFile::decode(bytes, what)?;
    let entry_ids = RecordIds::of(&file.schema, what)?;
    let file_ids = entry_ids.nested(2, what)?;
    let partition_ids = file_ids.nested(102, what)?;
    let mut out = Vec::with_capacity(file.records.len());
    for record in &file.records {
        let status = entry_ids.int(record, 0).unwrap_or(1);
        if status == 2 {
            continue;
        }
        let Some(data_file) = entry_ids.get(record, 2) else {
            return crate::format_err!("{what}: a manifest entry has no data_file (field 2)");
        };
        let Some(file_path) = file_ids.string(data_file, 100) else {
            return crate::format_err!("{what}: a manifest entry has no file_path (field 100)");
        };
        let content = match file_ids.int(data_file, 134).unwrap_or(0) {
            0 => Content::Data,
            1 => Content::PositionDeletes,
            2 => Content::EqualityDeletes,
            other => return crate::format_err!("{what}: unknown content {other} for {file_path}"),
        };
        let partition_record = file_ids.get(data_file, 102);
        let mut partition = Vec::with_capacity(spec.iceberg.fields.len());
        for (field, kept) in spec.iceberg.fields.iter().zip(&spec.kept) {
            let value = partition_record.and_then(|p| partition_ids.get(p, field.field_id));
            let scalar = match (value, kept) {
                (Some(v), Some(dt)) => avro_to_scalar(v, dt).ok_or_else(|| {
                    Error::Format(format!(
                        "{what}: partition value {v:?} of field {:?} in {file_path} is not a {dt}",
                        field.name
                    ))
                })?,
                (None, Some(dt)) => ScalarValue::try_from(dt)?,
                (Some(v), None) => avro_natural(v),
                (None, None) => ScalarValue::Null,
            };
            partition.push(scalar);
        }
        let longs = |id: i32| -> HashMap<i32, i64> {
            file_ids
                .int_map(data_file, id)
                .into_iter()
                .filter_map(|(k, v)| Some((k, super::avro::as_i64(v)?)))
                .collect()
        };
        let blobs = |id: i32| -> HashMap<i32, Vec<u8>> {
            file_ids
                .int_map(data_file, id)
                .into_iter()
                .filter_map(|(k, v)| match v {
                    apache_avro::types::Value::Bytes(b) | apache_avro::types::Value::Fixed(_, b) => {
                        Some((k, b.clone()))
                    }
                    _ => None,
                })
                .collect()
        };
        // ADDED entries of the committing snapshot leave it out: inherit.
        let sequence_number = entry_ids
            .long(record, 3)
            .unwrap_or(if status == 1 { listed.sequence_number } else { 0 });
        out.push(Entry {
            content,
            file_path: file_path.to_string(),
            file_format: file_ids.string(data_file, 101).unwrap_or("PARQUET").to_string(),
            partition,
            record_count: file_ids.long(data_file, 103).unwrap_or(0),
            file_size: file_ids.long(data_file, 104).unwrap_or(0),
            null_counts: longs(110),
            nan_counts: longs(137),
            lower: blobs(125),
            upper: blobs(128),
            equality_ids: file_ids.int_list(data_file, 135),
            sequence_number,
            referenced_data_file: file_ids.string(data_file, 143).map(str::to_string),
            content_offset: file_ids.long(data_file, 144),
        });
    }
    Ok(out)
}

/// Field id and Arrow type of each column of `spec`'s schema (once per manifest).
fn column_types(spec: &TableSpec) -> Vec<(i32, DataType)> {
    spec.schema
        .fields
        .iter()
        .map(|c| (c.id, crate::spec::types::strip_metadata(&c.field_type.to_arrow())))
        .collect()
}

/// Our column statistics for an entry, for `columns` (see [`column_types`]).
fn column_stats(entry: &Entry, columns: &[(i32, DataType)]) -> (Vec<ColumnStats>, HashSet<i32>) {
    let mut stats = Vec::new();
    let mut known = HashSet::new();
    for (id, dt) in columns {
        let (id, dt) = (*id, dt.clone());
        let null_count = entry.null_counts.get(&id).copied();
        if null_count.is_some() {
            known.insert(id);
        }
        let mut min = entry.lower.get(&id).and_then(|b| decode_bound(b, &dt));
        let mut max = entry.upper.get(&id).and_then(|b| decode_bound(b, &dt));
        if dt.is_floating() {
            // Bounds never include NaN: with NaNs present (or possibly present) they don't bound the file.
            if entry.nan_counts.get(&id).is_none_or(|n| *n > 0) {
                min = None;
                max = None;
            }
            // Our layout widens zero bounds (the engine orders -0.0 < 0.0).
            min = min.map(|v| match v {
                ScalarValue::Float32(Some(f)) if f == 0.0 => ScalarValue::Float32(Some(-0.0)),
                ScalarValue::Float64(Some(f)) if f == 0.0 => ScalarValue::Float64(Some(-0.0)),
                other => other,
            });
            max = max.map(|v| match v {
                ScalarValue::Float32(Some(f)) if f == 0.0 => ScalarValue::Float32(Some(0.0)),
                ScalarValue::Float64(Some(f)) if f == 0.0 => ScalarValue::Float64(Some(0.0)),
                other => other,
            });
        }
        if null_count.is_none() && min.is_none() && max.is_none() {
            continue;
        }
        stats.push(ColumnStats {
            field_id: id,
            null_count: null_count.unwrap_or(0).max(0) as u64,
            min,
            max,
        });
    }
    (stats, known)
}

/// A data manifest, decoded once per session.
#[derive(Debug)]
pub struct DecodedManifest {
    pub batch: RecordBatch,
    pub files: Vec<DataFileInfo>,
}

/// What deletes need to know about a data file.
#[derive(Debug, Clone)]
pub struct DataFileInfo {
    pub path: Path,
    pub original_path: String,
    pub spec_id: i32,
    pub partition: Vec<ScalarValue>,
    pub sequence_number: i64,
    pub record_count: i64,
}

/// Serves an Iceberg snapshot's data manifests as manifest batches.
#[derive(Debug)]
pub struct IcebergManifests {
    rebase: Rebase,
    /// By stored (relative, URI-encoded) manifest path.
    listed: HashMap<String, ManifestEntryFile>,
    specs: HashMap<i32, SpecMapping>,
    decoded: Mutex<HashMap<String, Arc<DecodedManifest>>>,
}

impl IcebergManifests {
    pub fn new(rebase: Rebase, listed: HashMap<String, ManifestEntryFile>, specs: HashMap<i32, SpecMapping>) -> Self {
        Self {
            rebase,
            listed,
            specs,
            decoded: Mutex::default(),
        }
    }

    pub fn rebase(&self) -> &Rebase {
        &self.rebase
    }

    pub fn spec(&self, spec_id: i32) -> Result<&SpecMapping> {
        self.specs
            .get(&spec_id)
            .ok_or_else(|| Error::Format(format!("Iceberg partition spec {spec_id} is not in the table metadata")))
    }

    /// Fetch and decode the entries of a listed manifest (data or deletes).
    pub async fn entries(&self, location: &TableLocation, listed: &ManifestEntryFile) -> Result<Vec<Entry>> {
        let path = self.rebase.resolve(location, &listed.path)?;
        let bytes = match location.store.get(&path).await {
            Ok(r) => r.bytes().await?,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(Error::Invalid(format!(
                    "the manifest list of table {} names manifest {} which does not exist (looked for {}{path})",
                    location.url(),
                    listed.path,
                    location.store_url.as_str()
                )));
            }
            Err(e) => return Err(e.into()),
        };
        read_entries(&bytes, &listed.path, listed, self.spec(listed.spec_id)?)
    }

    /// The decoded data manifest stored as `stored` (cached).
    pub async fn decode(&self, location: &TableLocation, stored: &str) -> Result<Arc<DecodedManifest>> {
        if let Some(d) = self.decoded.lock().ok().and_then(|m| m.get(stored).cloned()) {
            return Ok(d);
        }
        let Some(listed) = self.listed.get(stored) else {
            return crate::format_err!("manifest {stored} is not in the snapshot's manifest list");
        };
        let mapping = self.spec(listed.spec_id)?;
        let entries = self.entries(location, listed).await?;
        let mut files = Vec::with_capacity(entries.len());
        let mut infos = Vec::with_capacity(entries.len());
        let columns = column_types(&mapping.spec);
        for e in entries {
            if e.content != Content::Data {
                return crate::format_err!("data manifest {} lists delete file {}", listed.path, e.file_path);
            }
            if !e.file_format.eq_ignore_ascii_case("parquet") {
                return Err(Error::Invalid(format!(
                    "data file {} is {}; only Parquet data files are supported",
                    e.file_path, e.file_format
                )));
            }
            let (column_stats, known) = column_stats(&e, &columns);
            let typed: Vec<ScalarValue> = e
                .partition
                .iter()
                .zip(&mapping.kept)
                .filter(|(_, k)| k.is_some())
                .map(|(v, _)| v.clone())
                .collect();
            let strings = typed
                .iter()
                .map(|v| crate::values::serialize(v).ok().flatten())
                .collect();
            infos.push(DataFileInfo {
                path: self.rebase.resolve(location, &e.file_path)?,
                original_path: e.file_path.clone(),
                spec_id: listed.spec_id,
                partition: e.partition.clone(),
                sequence_number: e.sequence_number,
                record_count: e.record_count,
            });
            files.push(ForeignDataFile {
                file: DataFile {
                    path: self.rebase.stored(&e.file_path)?,
                    file_size: e.file_size.max(0) as u64,
                    record_count: e.record_count.max(0) as u64,
                    spec_id: listed.spec_id,
                    partition: typed,
                    partition_strings: strings,
                    column_stats,
                    pending: None,
                },
                known_null_counts: known,
            });
        }
        let batch = foreign_manifest_batch(&mapping.spec, &files)?;
        let decoded = Arc::new(DecodedManifest { batch, files: infos });
        if let Ok(mut m) = self.decoded.lock() {
            m.insert(stored.to_string(), Arc::clone(&decoded));
        }
        Ok(decoded)
    }

    /// What deletes need to know about the data files at `paths` (decoded manifests only).
    pub fn file_infos(&self) -> HashMap<Path, DataFileInfo> {
        let Ok(m) = self.decoded.lock() else {
            return HashMap::new();
        };
        m.values()
            .flat_map(|d| d.files.iter().map(|f| (f.path.clone(), f.clone())))
            .collect()
    }
}

#[async_trait]
impl ManifestSource for IcebergManifests {
    async fn read(
        &self,
        location: &TableLocation,
        manifest: &ManifestFile,
        _spec: &TableSpec,
        columns: Option<&[String]>,
    ) -> Result<RecordBatch> {
        let decoded = self.decode(location, &manifest.path).await?;
        project_columns(&decoded.batch, columns)
    }
}

/// The result type of each kept field, for tests and callers that need it.
pub fn kept_types(mapping: &SpecMapping) -> Vec<DataType> {
    mapping.kept.iter().flatten().cloned().collect()
}
