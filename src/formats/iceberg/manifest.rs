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
//!
//! Entries are decoded straight into columns (`iceberg::manifest_entries`). A manifest is
//! decoded once per table; the statistics of a column are decoded when
//! first asked for (planning asks only for the columns its filters name),
//! from the manifest bytes kept with the decoded columns.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch, RecordBatchOptions,
    StringArray, StringBuilder, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Float32Type, Float64Type, Schema as ArrowSchema};
use datafusion::common::ScalarValue;
use object_store::ObjectStoreExt;
use object_store::path::Path;

use super::metadata::Rebase;
use crate::error::{Error, Result};
use crate::iceberg::bounds_read::bounds_array;
use crate::iceberg::convert::SpecMapping;
use crate::iceberg::manifest_entries::row_scalars;
use crate::iceberg::manifest_entries::{Columns, SlotColumns, Wanted, decode};
pub use crate::iceberg::manifest_entries::{Content, Entry, read_entries};
use crate::iceberg::manifest_list_read::ManifestEntryFile;
use crate::manifest::format::{
    FILE_SIZE, FIRST_ROW_ID, NULL_COUNT, PARTITION, PARTITION_STRINGS, PATH, RECORD_COUNT, SPEC_ID, STATS,
    manifest_schema, stats_fields,
};
use crate::manifest::source::ManifestSource;
use crate::spec::{ManifestFile, TableSpec};
use crate::store::TableLocation;

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

/// A data manifest, decoded once per session: the columns every reader
/// needs, and per-column statistics as they are asked for.
#[derive(Debug)]
pub struct DecodedManifest {
    bytes: Bytes,
    what: String,
    inherited: i64,
    spec_id: i32,
    rows: usize,
    /// `path`, `file_size_in_bytes`, `record_count`, `spec_id`, `partition` (when partitioned).
    base: Vec<(&'static str, ArrayRef)>,
    original_paths: StringArray,
    sequence_numbers: Vec<i64>,
    /// Iceberg v3 row lineage: each file's first row id (its own or
    /// inherited), when the manifest list assigned the manifest one.
    row_ids: Option<ArrayRef>,
    /// Per Iceberg partition field (kept or not), for delete scopes.
    partition_all: Vec<ArrayRef>,
    stats: Mutex<HashMap<i32, ArrayRef>>,
    strings: OnceLock<ArrayRef>,
    infos: OnceLock<Vec<DataFileInfo>>,
}

/// Field id and Arrow type of each column of `spec`'s schema.
fn column_types(spec: &TableSpec) -> Vec<(i32, DataType)> {
    spec.schema
        .fields
        .iter()
        .map(|c| (c.id, crate::spec::types::strip_metadata(&c.field_type.to_arrow())))
        .collect()
}

/// The stats children of each column, `null_count` nullable (foreign
/// writers may not have written it: null means unknown).
fn foreign_stats_fields(spec: &TableSpec) -> Vec<(i32, Fields)> {
    stats_fields(spec)
        .iter()
        .zip(&spec.schema.fields)
        .map(|(f, c)| {
            let DataType::Struct(children) = f.data_type() else {
                unreachable!("stats fields are structs")
            };
            let children: Fields = children
                .iter()
                .map(|ch| {
                    if ch.name() == NULL_COUNT {
                        Arc::new(Field::new(NULL_COUNT, DataType::Int64, true))
                    } else {
                        Arc::clone(ch)
                    }
                })
                .collect();
            (c.id, children)
        })
        .collect()
}

/// Float bounds with NaNs present (or possibly present) bound nothing, and
/// our layout widens zero bounds (the engine orders -0.0 < 0.0).
fn float_bounds(bounds: ArrayRef, nan: &Int64Array, max: bool) -> ArrayRef {
    let usable = |row: usize| nan.is_valid(row) && nan.value(row) <= 0;
    let zero = if max { 0.0 } else { -0.0 };
    match bounds.data_type() {
        DataType::Float32 => {
            let b = bounds.as_primitive::<Float32Type>();
            let out: Float32Array = (0..b.len())
                .map(|i| {
                    (b.is_valid(i) && usable(i))
                        .then(|| b.value(i))
                        .map(|v| if v == 0.0 { zero as f32 } else { v })
                })
                .collect();
            Arc::new(out)
        }
        DataType::Float64 => {
            let b = bounds.as_primitive::<Float64Type>();
            let out: Float64Array = (0..b.len())
                .map(|i| {
                    (b.is_valid(i) && usable(i))
                        .then(|| b.value(i))
                        .map(|v| if v == 0.0 { zero } else { v })
                })
                .collect();
            Arc::new(out)
        }
        _ => bounds,
    }
}

/// The `stats.<id>` column of one column of type `dt`.
fn stats_column(slot: &SlotColumns, dt: &DataType, children: &Fields) -> Result<ArrayRef> {
    let null_count: Int64Array = slot.null_count.iter().map(|n| n.map(|n| n.max(0))).collect();
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(null_count)];
    if children.len() == 3 {
        let (mut min, mut max) = (bounds_array(&slot.lower, dt), bounds_array(&slot.upper, dt));
        if dt.is_floating() {
            min = float_bounds(min, &slot.nan_count, false);
            max = float_bounds(max, &slot.nan_count, true);
        }
        arrays.push(min);
        arrays.push(max);
    }
    Ok(Arc::new(StructArray::try_new(children.clone(), arrays, None)?))
}

impl DecodedManifest {
    /// Decode the manifest `bytes` listed as `listed`, with the statistics of `stats_ids`.
    fn new(
        bytes: Bytes,
        listed: &ManifestEntryFile,
        mapping: &SpecMapping,
        rebase: &Rebase,
        stats_ids: &[i32],
    ) -> Result<Self> {
        let what = listed.path.clone();
        let wanted = Wanted {
            stats: stats_ids.to_vec(),
            extras: false,
        };
        let columns = decode(&bytes, &what, listed.sequence_number, mapping, &wanted)?;
        let Columns {
            rows,
            content,
            file_path,
            file_format,
            record_count,
            file_size,
            sequence_number,
            first_row_id,
            partition,
            stats,
            ..
        } = columns;
        // As Java reads them: without the manifest's id, no file has one.
        let row_ids = listed.first_row_id.map(|first| {
            let ids = crate::manifest::format::inherit_row_ids(first, first_row_id, record_count.iter().copied());
            Arc::new(ids) as ArrayRef
        });
        let mut paths = StringBuilder::with_capacity(rows, file_path.value_data().len());
        for row in 0..rows {
            let path = file_path.value(row);
            if content[row] != Content::Data {
                return crate::format_err!("data manifest {} lists delete file {}", listed.path, path);
            }
            let format = file_format.value(row);
            if !format.eq_ignore_ascii_case("parquet") {
                return Err(Error::Invalid(format!(
                    "data file {path} is {format}; only Parquet data files are supported"
                )));
            }
            paths.append_value(rebase.stored(path)?);
        }
        let mut base: Vec<(&'static str, ArrayRef)> = vec![
            (PATH, Arc::new(paths.finish())),
            (
                FILE_SIZE,
                Arc::new(file_size.iter().map(|v| (*v).max(0)).collect::<Int64Array>()),
            ),
            (
                RECORD_COUNT,
                Arc::new(record_count.iter().map(|v| (*v).max(0)).collect::<Int64Array>()),
            ),
            (SPEC_ID, Arc::new(Int32Array::from(vec![listed.spec_id; rows]))),
        ];
        let kept: Vec<ArrayRef> = partition
            .iter()
            .zip(&mapping.kept)
            .filter(|(_, k)| k.is_some())
            .map(|(a, _)| Arc::clone(a))
            .collect();
        if !kept.is_empty() {
            let fields: Fields = mapping
                .spec
                .partition_spec
                .fields
                .iter()
                .zip(&kept)
                .map(|(f, a)| Arc::new(Field::new(&f.name, a.data_type().clone(), true)))
                .collect();
            base.push((PARTITION, Arc::new(StructArray::try_new(fields, kept, None)?)));
        }
        let decoded = Self {
            bytes,
            what,
            inherited: listed.sequence_number,
            spec_id: listed.spec_id,
            rows,
            base,
            original_paths: file_path,
            sequence_numbers: sequence_number,
            row_ids,
            partition_all: partition,
            stats: Mutex::default(),
            strings: OnceLock::new(),
            infos: OnceLock::new(),
        };
        decoded.insert_stats(mapping, stats_ids, &stats)?;
        Ok(decoded)
    }

    fn insert_stats(&self, mapping: &SpecMapping, ids: &[i32], slots: &[SlotColumns]) -> Result<()> {
        let types: HashMap<i32, DataType> = column_types(&mapping.spec).into_iter().collect();
        let children: HashMap<i32, Fields> = foreign_stats_fields(&mapping.spec).into_iter().collect();
        let mut built = Vec::with_capacity(ids.len());
        for (id, slot) in ids.iter().zip(slots) {
            if let (Some(dt), Some(ch)) = (types.get(id), children.get(id)) {
                built.push((*id, stats_column(slot, dt, ch)?));
            }
        }
        if let Ok(mut m) = self.stats.lock() {
            m.extend(built);
        }
        Ok(())
    }

    /// Make sure the statistics of `ids` are decoded.
    fn ensure_stats(&self, mapping: &SpecMapping, ids: &[i32]) -> Result<()> {
        let missing: Vec<i32> = match self.stats.lock() {
            Ok(m) => ids.iter().copied().filter(|id| !m.contains_key(id)).collect(),
            Err(_) => ids.to_vec(),
        };
        if missing.is_empty() {
            return Ok(());
        }
        let wanted = Wanted {
            stats: missing.clone(),
            extras: false,
        };
        let columns = decode(&self.bytes, &self.what, self.inherited, mapping, &wanted)?;
        self.insert_stats(mapping, &missing, &columns.stats)
    }

    /// `partition_strings`: each kept partition value in our serialized form.
    fn partition_strings(&self) -> Result<Option<ArrayRef>> {
        let Some((_, partition)) = self.base.iter().find(|(n, _)| *n == PARTITION) else {
            return Ok(None);
        };
        if let Some(s) = self.strings.get() {
            return Ok(Some(Arc::clone(s)));
        }
        let partition = partition.as_struct();
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for (f, column) in partition.fields().iter().zip(partition.columns()) {
            let mut b = StringBuilder::new();
            for row in 0..column.len() {
                let v = ScalarValue::try_from_array(column, row)?;
                b.append_option(crate::values::serialize(&v).ok().flatten());
            }
            fields.push(Arc::new(Field::new(f.name(), DataType::Utf8, true)));
            arrays.push(Arc::new(b.finish()));
        }
        let strings: ArrayRef = Arc::new(StructArray::try_new(Fields::from(fields), arrays, None)?);
        Ok(Some(Arc::clone(self.strings.get_or_init(|| strings))))
    }

    /// The manifest batch (the layout of `manifest::format` with unknown
    /// null counts null); with `columns`, only those (`stats.<id>` for one
    /// column's statistics).
    pub fn batch(&self, mapping: &SpecMapping, columns: Option<&[String]>) -> Result<RecordBatch> {
        let spec = &mapping.spec;
        let wants = |name: &str| columns.is_none_or(|c| c.iter().any(|x| x == name));
        let stats_children = foreign_stats_fields(spec);
        let stats_ids: Vec<i32> = stats_children
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| {
                columns.is_none_or(|c| {
                    c.iter()
                        .any(|x| x.strip_prefix("stats.") == Some(id.to_string().as_str()))
                })
            })
            .collect();
        self.ensure_stats(mapping, &stats_ids)?;
        let mut fields: Vec<Arc<Field>> = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for field in manifest_schema(spec)?.fields() {
            let name = field.name().as_str();
            if name == STATS {
                if stats_ids.is_empty() {
                    continue;
                }
                let stats = self
                    .stats
                    .lock()
                    .map_err(|_| Error::Format("manifest cache poisoned".into()))?;
                let mut sf = Vec::new();
                let mut sa = Vec::new();
                for (id, children) in &stats_children {
                    if !stats_ids.contains(id) {
                        continue;
                    }
                    let Some(a) = stats.get(id) else { continue };
                    sf.push(Arc::new(Field::new(
                        id.to_string(),
                        DataType::Struct(children.clone()),
                        false,
                    )));
                    sa.push(Arc::clone(a));
                }
                let sf = Fields::from(sf);
                fields.push(Arc::new(Field::new(STATS, DataType::Struct(sf.clone()), false)));
                arrays.push(Arc::new(StructArray::try_new(sf, sa, None)?));
            } else if name == PARTITION_STRINGS {
                if wants(name)
                    && let Some(s) = self.partition_strings()?
                {
                    fields.push(Arc::new(Field::new(PARTITION_STRINGS, s.data_type().clone(), false)));
                    arrays.push(s);
                }
            } else if wants(name)
                && let Some((_, a)) = self.base.iter().find(|(n, _)| *n == name)
            {
                fields.push(Arc::new(Field::new(name, a.data_type().clone(), false)));
                arrays.push(Arc::clone(a));
            }
        }
        if columns.is_none()
            && let Some(ids) = &self.row_ids
        {
            fields.push(Arc::new(Field::new(FIRST_ROW_ID, DataType::Int64, true)));
            arrays.push(Arc::clone(ids));
        }
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows));
        Ok(RecordBatch::try_new_with_options(
            Arc::new(ArrowSchema::new(fields)),
            arrays,
            &options,
        )?)
    }

    /// What deletes need to know about each file (computed once).
    fn infos(&self, location: &TableLocation, rebase: &Rebase) -> Result<&[DataFileInfo]> {
        if let Some(i) = self.infos.get() {
            return Ok(i);
        }
        let mut infos = Vec::with_capacity(self.rows);
        let counts = self
            .base
            .iter()
            .find(|(n, _)| *n == RECORD_COUNT)
            .map(|(_, a)| a.as_primitive::<datafusion::arrow::datatypes::Int64Type>().clone());
        for row in 0..self.rows {
            let original = self.original_paths.value(row);
            infos.push(DataFileInfo {
                path: rebase.resolve(location, original)?,
                original_path: original.to_string(),
                spec_id: self.spec_id,
                partition: row_scalars(&self.partition_all, row)?,
                sequence_number: self.sequence_numbers[row],
                record_count: counts.as_ref().map_or(0, |c| c.value(row)),
            });
        }
        Ok(self.infos.get_or_init(|| infos))
    }
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

    async fn fetch(&self, location: &TableLocation, listed: &ManifestEntryFile) -> Result<Bytes> {
        let path = self.rebase.resolve(location, &listed.path)?;
        match location.store.get(&path).await {
            Ok(r) => Ok(r.bytes().await?),
            Err(object_store::Error::NotFound { .. }) => Err(Error::Invalid(format!(
                "the manifest list of table {} names manifest {} which does not exist (looked for {}{path})",
                location.url(),
                listed.path,
                location.store_url.as_str()
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// Fetch and decode the entries of a listed manifest (data or deletes).
    pub async fn entries(&self, location: &TableLocation, listed: &ManifestEntryFile) -> Result<Vec<Entry>> {
        let bytes = self.fetch(location, listed).await?;
        read_entries(&bytes, &listed.path, listed, self.spec(listed.spec_id)?)
    }

    /// The decoded data manifest stored as `stored` (cached), with the
    /// statistics of `stats_ids` decoded.
    pub async fn decode(
        &self,
        location: &TableLocation,
        stored: &str,
        stats_ids: &[i32],
    ) -> Result<Arc<DecodedManifest>> {
        let Some(listed) = self.listed.get(stored) else {
            return crate::format_err!("manifest {stored} is not in the snapshot's manifest list");
        };
        let mapping = self.spec(listed.spec_id)?;
        if let Some(d) = self.decoded.lock().ok().and_then(|m| m.get(stored).cloned()) {
            d.ensure_stats(mapping, stats_ids)?;
            return Ok(d);
        }
        let bytes = self.fetch(location, listed).await?;
        let decoded = Arc::new(DecodedManifest::new(bytes, listed, mapping, &self.rebase, stats_ids)?);
        if let Ok(mut m) = self.decoded.lock() {
            m.insert(stored.to_string(), Arc::clone(&decoded));
        }
        Ok(decoded)
    }

    /// The manifest batch of the data manifest stored as `stored`; with
    /// `columns`, only those.
    pub async fn batch(
        &self,
        location: &TableLocation,
        stored: &str,
        columns: Option<&[String]>,
    ) -> Result<RecordBatch> {
        let Some(listed) = self.listed.get(stored) else {
            return crate::format_err!("manifest {stored} is not in the snapshot's manifest list");
        };
        let mapping = self.spec(listed.spec_id)?;
        let ids: Vec<i32> = match columns {
            None => mapping.spec.schema.fields.iter().map(|f| f.id).collect(),
            Some(c) => c
                .iter()
                .filter_map(|c| c.strip_prefix("stats.")?.parse().ok())
                .filter(|id| mapping.spec.schema.field_by_id(*id).is_some())
                .collect(),
        };
        let decoded = self.decode(location, stored, &ids).await?;
        decoded.batch(mapping, columns)
    }

    /// What deletes need to know about the data files of the manifests decoded so far.
    pub fn file_infos(&self, location: &TableLocation) -> Result<HashMap<Path, DataFileInfo>> {
        let decoded: Vec<Arc<DecodedManifest>> = match self.decoded.lock() {
            Ok(m) => m.values().cloned().collect(),
            Err(_) => return Ok(HashMap::new()),
        };
        let mut out = HashMap::new();
        for d in decoded {
            for f in d.infos(location, &self.rebase)? {
                out.insert(f.path.clone(), f.clone());
            }
        }
        Ok(out)
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
        self.batch(location, &manifest.path, columns).await
    }
}

/// The result type of each kept field, for tests and callers that need it.
pub fn kept_types(mapping: &SpecMapping) -> Vec<DataType> {
    mapping.kept.iter().flatten().cloned().collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use datafusion::arrow::datatypes::TimeUnit;

    use super::*;
    use crate::formats::iceberg::oracle::{batch_old, read_entries_old};
    use crate::iceberg::manifest::{EntryStatus, ManifestWrite, write_manifest};
    use crate::iceberg::manifest_list_read::read_manifest_list;
    use crate::iceberg::metadata::{IcebergMetadata, IcebergPartitionField, IcebergSpec};
    use crate::manifest::source::project_columns;
    use crate::manifest::{ColumnStats, DataFile};
    use crate::spec::{PartitionField, PartitionSpec, Schema};
    use crate::transform::Transform;

    /// Both decoders agree on `bytes` (a data manifest): the whole batch,
    /// and each projection planning asks for.
    fn assert_same_batches(bytes: &[u8], listed: &ManifestEntryFile, mapping: &SpecMapping, rebase: &Rebase) {
        let old = batch_old(bytes, listed, mapping, rebase).unwrap();
        let new = DecodedManifest::new(Bytes::copy_from_slice(bytes), listed, mapping, rebase, &[]).unwrap();
        assert_eq!(new.batch(mapping, None).unwrap(), old, "{}", listed.path);
        let ids: Vec<i32> = mapping.spec.schema.fields.iter().map(|f| f.id).collect();
        for id in ids.iter().rev() {
            let columns = vec![PATH.to_string(), PARTITION.to_string(), format!("stats.{id}")];
            let fresh = DecodedManifest::new(Bytes::copy_from_slice(bytes), listed, mapping, rebase, &[*id]).unwrap();
            let expected = project_columns(&old, Some(&columns)).unwrap();
            assert_eq!(
                fresh.batch(mapping, Some(&columns)).unwrap(),
                expected,
                "{} stats.{id}",
                listed.path
            );
            assert_eq!(
                new.batch(mapping, Some(&columns)).unwrap(),
                expected,
                "{} stats.{id}",
                listed.path
            );
        }
        let columns = [RECORD_COUNT.to_string(), PARTITION_STRINGS.to_string()];
        assert_eq!(
            new.batch(mapping, Some(&columns)).unwrap(),
            project_columns(&old, Some(&columns)).unwrap()
        );
    }

    /// Both decoders agree on the entries of `bytes` (data or deletes).
    fn assert_same_entries(bytes: &[u8], listed: &ManifestEntryFile, mapping: &SpecMapping) {
        let old = read_entries_old(bytes, &listed.path, listed, mapping).unwrap();
        let new = read_entries(bytes, &listed.path, listed, mapping).unwrap();
        assert_eq!(old.len(), new.len(), "{}", listed.path);
        for (o, n) in old.iter().zip(&new) {
            let what = &o.file_path;
            assert_eq!(o.content, n.content, "{what}");
            assert_eq!(
                (&o.file_path, &o.file_format, o.record_count, o.file_size),
                (&n.file_path, &n.file_format, n.record_count, n.file_size)
            );
            assert_eq!(
                (o.sequence_number, o.content_offset, o.content_size),
                (n.sequence_number, n.content_offset, n.content_size)
            );
            assert_eq!(
                (&o.null_counts, &o.nan_counts, &o.lower, &o.upper),
                (&n.null_counts, &n.nan_counts, &n.lower, &n.upper),
                "{what}"
            );
            assert_eq!(
                (&o.equality_ids, &o.referenced_data_file),
                (&n.equality_ids, &n.referenced_data_file)
            );
            // Kept fields are typed alike; unkept ones may differ in how a null is typed.
            for ((a, b), kept) in o.partition.iter().zip(&n.partition).zip(&mapping.kept) {
                if kept.is_some() || !a.is_null() {
                    assert_eq!(a, b, "{what}");
                } else {
                    assert!(b.is_null(), "{what}");
                }
            }
        }
    }

    #[test]
    fn committed_fixtures_decode_alike() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/iceberg");
        let mut manifests = 0;
        for table in ["deletes", "evolved", "no_field_ids", "v1"] {
            let dir = root.join(table);
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("metadata"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            files.sort();
            let latest = files
                .iter()
                .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
                .next_back()
                .unwrap();
            let md = IcebergMetadata::parse(&std::fs::read(latest).unwrap(), "md").unwrap();
            let rebase = Rebase::new(&md.location);
            let local = |p: &str| dir.join(rebase.relative(p).unwrap());
            for snap in &md.snapshots {
                for schema in [md.schema_for(None).1, md.schema_for(Some(snap)).1] {
                    let list = std::fs::read(local(&snap.manifest_list)).unwrap();
                    for listed in read_manifest_list(&list, "list").unwrap() {
                        let bytes = std::fs::read(local(&listed.path)).unwrap();
                        let ice = md.specs.iter().find(|s| s.spec_id == listed.spec_id).unwrap();
                        let mapping = SpecMapping::new(ice, schema);
                        assert_same_entries(&bytes, &listed, &mapping);
                        if listed.content == 0 {
                            assert_same_batches(&bytes, &listed, &mapping, &rebase);
                        }
                        manifests += 1;
                    }
                }
            }
        }
        assert!(manifests >= 20, "{manifests} manifests");
    }

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn pick<T: Clone>(&mut self, from: &[T]) -> T {
            from[(self.next() % from.len() as u64) as usize].clone()
        }

        fn chance(&mut self, in_8: u64) -> bool {
            self.next() % 8 < in_8
        }
    }

    /// A value of `dt`: often an edge (null, extremes, NaN, ±0, empty).
    fn value(rng: &mut Rng, dt: &DataType, nan: bool) -> ScalarValue {
        if rng.chance(1) {
            return ScalarValue::try_from(dt).unwrap();
        }
        let n = rng.next() as i64;
        let small = rng.pick(&[0i64, -1, 1, 19723, -719_162, 1_704_067_200_000_000, n]);
        match dt {
            DataType::Boolean => ScalarValue::Boolean(Some(n % 2 == 0)),
            DataType::Int32 => ScalarValue::Int32(Some(rng.pick(&[i32::MIN, i32::MAX, 0, -1, small as i32]))),
            DataType::Date32 => ScalarValue::Date32(Some(rng.pick(&[-1, 0, 19723, small as i32]))),
            DataType::Int64 => ScalarValue::Int64(Some(rng.pick(&[i64::MIN, i64::MAX, small]))),
            DataType::Float32 => ScalarValue::Float32(Some(rng.pick(&[
                -0.0,
                0.0,
                f32::MIN_POSITIVE,
                f32::INFINITY,
                -1.5,
                if nan { f32::NAN } else { 2.0 },
                small as f32,
            ]))),
            DataType::Float64 => ScalarValue::Float64(Some(rng.pick(&[
                -0.0,
                0.0,
                f64::NEG_INFINITY,
                1e300,
                if nan { f64::NAN } else { -2.0 },
                small as f64,
            ]))),
            DataType::Decimal128(p, s) => {
                let max = 10i128.pow(u32::from(*p)) - 1;
                let v = rng.pick(&[max, -max, 0, -1, (n as i128) % max]);
                ScalarValue::Decimal128(Some(v), *p, *s)
            }
            DataType::Time64(TimeUnit::Microsecond) => {
                ScalarValue::Time64Microsecond(Some(rng.pick(&[0, 86_399_999_999, small.rem_euclid(86_400_000_000)])))
            }
            DataType::Time64(_) => ScalarValue::Time64Nanosecond(Some(small.rem_euclid(86_400_000_000_000))),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                ScalarValue::TimestampMicrosecond(Some(small), tz.clone())
            }
            DataType::Timestamp(_, tz) => ScalarValue::TimestampNanosecond(Some(small), tz.clone()),
            DataType::Utf8 => ScalarValue::Utf8(Some(
                rng.pick(&["", "a b", "zz", "ü/%=ß", "__HIVE_DEFAULT_PARTITION__"])
                    .into(),
            )),
            DataType::Binary => ScalarValue::Binary(Some(rng.pick(&[vec![], vec![0], vec![0xFF, 0, 7]]))),
            DataType::FixedSizeBinary(w) => {
                ScalarValue::FixedSizeBinary(*w, Some((0..*w).map(|i| (n >> (i % 8)) as u8).collect()))
            }
            other => panic!("no generator for {other}"),
        }
    }

    const ALL_TYPES: &str = r#"{"fields":[
        {"id":1,"name":"b","required":false,"type":"boolean"},
        {"id":2,"name":"i","required":false,"type":"int"},
        {"id":3,"name":"l","required":true,"type":"long"},
        {"id":4,"name":"f","required":false,"type":"float"},
        {"id":5,"name":"d","required":false,"type":"double"},
        {"id":6,"name":"dec","required":false,"type":"decimal(9,2)"},
        {"id":7,"name":"big","required":false,"type":"decimal(38,0)"},
        {"id":8,"name":"day","required":false,"type":"date"},
        {"id":9,"name":"t","required":false,"type":"time"},
        {"id":10,"name":"ts","required":false,"type":"timestamp"},
        {"id":11,"name":"tstz","required":false,"type":"timestamptz"},
        {"id":12,"name":"tsns","required":false,"type":"timestamp_ns"},
        {"id":13,"name":"s","required":false,"type":"string"},
        {"id":14,"name":"bin","required":false,"type":"binary"},
        {"id":15,"name":"u","required":false,"type":"fixed[16]"},
        {"id":16,"name":"fx","required":false,"type":"fixed[3]"},
        {"id":17,"name":"tags","required":false,"type":{"type":"list","element-id":18,"element-required":false,"element":"string"}}]}"#;

    /// Every transform, and identity on every primitive type.
    fn all_types_spec() -> TableSpec {
        use Transform::*;
        let schema: Schema = serde_json::from_str(ALL_TYPES).unwrap();
        let mut fields = Vec::new();
        let mut add = |source_id, transform: Transform, name: String| {
            let field_id = 1000 + fields.len() as i32;
            fields.push(PartitionField {
                field_id,
                source_id,
                transform,
                name,
            })
        };
        for id in 1..=16 {
            add(id, Identity, format!("p-{id}"));
        }
        for (id, t) in [
            (10, Year),
            (11, Month),
            (10, Day),
            (12, Hour),
            (8, Day),
            (3, Bucket(16)),
            (13, Bucket(4)),
            (6, Bucket(3)),
            (13, Truncate(2)),
            (2, Truncate(10)),
            (7, Truncate(100)),
            (14, Truncate(1)),
            (5, Void),
        ] {
            add(id, t.clone(), format!("{t}_{id}").replace(['[', ']'], "_"));
        }
        TableSpec {
            spec_id: 4,
            schema,
            partition_spec: PartitionSpec { fields },
            iceberg_schema_id: None,
            iceberg_spec_id: None,
        }
    }

    fn mapping_of(spec: &TableSpec) -> SpecMapping {
        SpecMapping::new(&IcebergSpec::of(spec), &spec.schema)
    }

    fn random_files(rng: &mut Rng, spec: &TableSpec, n: usize) -> Vec<DataFile> {
        let bound = spec.partition_spec.bind(&spec.schema).unwrap();
        (0..n)
            .map(|i| {
                let partition: Vec<ScalarValue> = bound.iter().map(|b| value(rng, &b.result_type, true)).collect();
                let mut column_stats = Vec::new();
                for c in &spec.schema.fields {
                    if rng.chance(1) {
                        continue;
                    }
                    let dt = c.field_type.to_arrow();
                    let (min, max) = if c.field_type.as_primitive().is_some() && rng.chance(6) {
                        let (a, b) = (value(rng, &dt, false), value(rng, &dt, false));
                        (Some(a).filter(|v| !v.is_null()), Some(b).filter(|v| !v.is_null()))
                    } else {
                        (None, None)
                    };
                    column_stats.push(ColumnStats {
                        field_id: c.id,
                        null_count: rng.next() % 5,
                        min,
                        max,
                    });
                }
                DataFile {
                    path: format!("data/f{i}%20x.parquet"),
                    file_size: rng.next() % 10_000,
                    record_count: rng.next() % 1_000,
                    spec_id: spec.spec_id,
                    partition_strings: vec![None; partition.len()],
                    partition,
                    column_stats,
                    pending: None,
                    first_row_id: None,
                    sort_order_id: None,
                    referenced_data_file: None,
                    blob: None,
                }
            })
            .collect()
    }

    #[test]
    fn our_manifests_decode_alike() {
        let spec = all_types_spec();
        let mapping = mapping_of(&spec);
        assert!(mapping.kept.iter().all(Option::is_some), "{:?}", mapping.kept);
        let rebase = Rebase::new("s3://b/wh/t");
        for seed in 1..=25u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let files = random_files(&mut rng, &spec, 1 + (seed as usize * 7) % 60);
            let (status, snapshot_id, sequence_number) = if seed % 3 == 0 {
                (EntryStatus::Existing, Some(11), Some(seed as i64))
            } else {
                (EntryStatus::Added, None, None)
            };
            let w = ManifestWrite {
                spec: &spec,
                table_location: "s3://b/wh/t",
                status,
                snapshot_id,
                sequence_number,
                v3: false,
                content: crate::spec::ManifestContent::Data,
            };
            let written = write_manifest(&w, &files).unwrap();
            let listed = ManifestEntryFile {
                path: format!("s3://b/wh/t/metadata/m{seed}.avro"),
                length: written.bytes.len() as i64,
                spec_id: spec.spec_id,
                content: 0,
                sequence_number: 40 + seed as i64,
                added_snapshot_id: 12,
                files: None,
                rows: None,
                partitions: None,
                ..Default::default()
            };
            assert_same_entries(&written.bytes, &listed, &mapping);
            assert_same_batches(&written.bytes, &listed, &mapping, &rebase);
            // The same manifest read with a schema that lacks most sources:
            // their fields are not kept, and still decode for delete scopes.
            let mut narrow = spec.clone();
            narrow.schema.fields.retain(|f| f.id <= 3);
            let narrow = SpecMapping::new(&mapping.iceberg, &narrow.schema);
            assert!(narrow.kept.iter().any(Option::is_none));
            assert_same_entries(&written.bytes, &listed, &narrow);
            assert_same_batches(&written.bytes, &listed, &narrow, &rebase);
        }
    }

    /// Shapes other writers use: uuid partitions (fixed and string), an
    /// enum file format, an Avro map of counts, no sequence number (v1),
    /// DELETED and EXISTING entries, unknown transforms, a partition field
    /// the file lacks and one the spec lacks, a value cast to its column type.
    #[test]
    fn foreign_writer_shapes_decode_alike() {
        use apache_avro::types::Value;
        use serde_json::json;

        use crate::iceberg::avro::{field, int_map, optional, write_container};
        let partition = json!({"type": "record", "name": "r102", "fields": [
            optional("u", 1000, json!({"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"})),
            optional("v", 1001, json!({"type": "string", "logicalType": "uuid"})),
            optional("s", 1002, json!("int")),
            optional("z", 1003, json!({"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2})),
            optional("w", 1004, json!({"type": "long", "logicalType": "timestamp-micros"})),
            optional("extra", 1010, json!("double")),
        ]});
        let data_file = json!({"type": "record", "name": "r2", "fields": [
            field("file_path", 100, json!("string")),
            field("file_format", 101, json!({"type": "enum", "name": "fmt", "symbols": ["AVRO", "PARQUET"]})),
            field("partition", 102, partition),
            field("record_count", 103, json!("long")),
            field("file_size_in_bytes", 104, json!("long")),
            optional("null_value_counts", 110, json!({"type": "map", "values": "long"})),
            optional("lower_bounds", 125, int_map(126, 127, "bytes")),
            optional("upper_bounds", 128, int_map(129, 130, "bytes")),
        ]});
        let schema = json!({"type": "record", "name": "manifest_entry", "fields": [
            field("status", 0, json!("int")),
            optional("snapshot_id", 1, json!("long")),
            field("data_file", 2, data_file),
        ]});
        let some = |v: Value| Value::Union(1, Box::new(v));
        let null = || Value::Union(0, Box::new(Value::Null));
        let u = uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        let kv = |k: i32, v: &[u8]| {
            Value::Record(vec![
                ("key".into(), Value::Int(k)),
                ("value".into(), Value::Bytes(v.to_vec())),
            ])
        };
        let entry = |status: i32, i: i64, with_values: bool| {
            let p = |v: Value| if with_values { some(v) } else { null() };
            Value::Record(vec![
                ("status".into(), Value::Int(status)),
                ("snapshot_id".into(), some(Value::Long(3))),
                (
                    "data_file".into(),
                    Value::Record(vec![
                        (
                            "file_path".into(),
                            Value::String(format!("file:/w/t/data/f{i}.parquet")),
                        ),
                        ("file_format".into(), Value::Enum(1, "PARQUET".into())),
                        (
                            "partition".into(),
                            Value::Record(vec![
                                ("u".into(), p(Value::Uuid(u))),
                                ("v".into(), p(Value::Uuid(u))),
                                ("s".into(), p(Value::Int(-5 * i as i32))),
                                ("z".into(), p(Value::Decimal(vec![0xFF, 0x8A].into()))),
                                ("w".into(), p(Value::TimestampMicros(i * 1_000_000))),
                                ("extra".into(), p(Value::Double(f64::NAN))),
                            ]),
                        ),
                        ("record_count".into(), Value::Long(i)),
                        ("file_size_in_bytes".into(), Value::Long(100 + i)),
                        (
                            "null_value_counts".into(),
                            some(Value::Map(HashMap::from([
                                ("3".to_string(), Value::Long(i)),
                                ("5".to_string(), Value::Long(0)),
                                ("x".to_string(), Value::Long(9)),
                            ]))),
                        ),
                        (
                            "lower_bounds".into(),
                            some(Value::Array(vec![
                                kv(3, b"a"),
                                kv(5, &(-7i64).to_le_bytes()),
                                kv(4, &[0x80]),
                            ])),
                        ),
                        (
                            "upper_bounds".into(),
                            if i % 2 == 0 {
                                null()
                            } else {
                                some(Value::Array(vec![kv(3, b"zz")]))
                            },
                        ),
                    ]),
                ),
            ])
        };
        let records = vec![
            entry(1, 1, true),
            entry(2, 2, true),
            entry(0, 3, false),
            entry(1, 4, true),
        ];
        let bytes = write_container(&schema, &[], records, "m").unwrap();

        let md_schema: Schema = serde_json::from_str(
            r#"{"fields":[{"id":1,"name":"u","required":false,"type":"fixed[16]"},
                          {"id":2,"name":"v","required":false,"type":"fixed[16]"},
                          {"id":3,"name":"s","required":false,"type":"string"},
                          {"id":4,"name":"dec","required":false,"type":"decimal(9,2)"},
                          {"id":5,"name":"ts","required":false,"type":"timestamp"}]}"#,
        )
        .unwrap();
        let f = |field_id, source_id, transform: &str, name: &str| IcebergPartitionField {
            field_id,
            source_id,
            transform: transform.into(),
            name: name.into(),
        };
        let ice = IcebergSpec {
            spec_id: 0,
            fields: vec![
                f(1000, 1, "identity", "u"),
                f(1001, 2, "identity", "v"),
                f(1002, 3, "identity", "s"),
                f(1003, 4, "zorder", "z"),
                f(1004, 5, "zorder", "w"),
                f(1005, 5, "identity", "gone"),
            ],
        };
        let mapping = SpecMapping::new(&ice, &md_schema);
        let listed = ManifestEntryFile {
            path: "file:/w/t/metadata/m.avro".into(),
            length: bytes.len() as i64,
            spec_id: 0,
            content: 0,
            sequence_number: 8,
            added_snapshot_id: 3,
            files: None,
            rows: None,
            partitions: None,
            ..Default::default()
        };
        assert_same_entries(&bytes, &listed, &mapping);
        assert_same_batches(&bytes, &listed, &mapping, &Rebase::new("/w/t"));
        let entries = read_entries(&bytes, "m", &listed, &mapping).unwrap();
        // DELETED skipped; ADDED inherits the list's sequence number, EXISTING (v1) has 0.
        let seqs: Vec<i64> = entries.iter().map(|e| e.sequence_number).collect();
        assert_eq!(seqs, [8, 0, 8]);
        assert_eq!(
            entries[0].partition[0],
            ScalarValue::FixedSizeBinary(16, Some(u.as_bytes().to_vec()))
        );
        assert_eq!(entries[0].partition[1], entries[0].partition[0]);
        assert_eq!(entries[2].partition[2], ScalarValue::Utf8(Some("-20".into())));
        assert_eq!(
            entries[0].partition[4],
            ScalarValue::TimestampMicrosecond(Some(1_000_000), None)
        );
    }

    /// The twin read back by the engine's Iceberg reader is our manifest
    /// batch for the same files (less the list column's stats, which
    /// Iceberg does not keep).
    #[tokio::test]
    async fn the_engine_reads_the_twin_as_our_manifest() {
        use crate::formats::iceberg::metadata::Rebase;
        use crate::formats::manifest_batch::{ForeignDataFile, foreign_manifest_batch};
        use crate::iceberg::manifest::tests::{added, files, mapping, table_spec};
        use crate::iceberg::manifest::write_manifest;
        use crate::iceberg::manifest_list::write_manifest_list;
        use crate::iceberg::manifest_list_read::read_manifest_list;
        use crate::store::TableLocation;
        use datafusion::execution::object_store::ObjectStoreUrl;
        use object_store::ObjectStoreExt;
        use object_store::memory::InMemory;
        use object_store::path::Path;
        use std::collections::HashMap;
        use std::sync::Arc;

        let spec = table_spec();
        let written = write_manifest(&added(&spec), &files()).unwrap();
        let location = TableLocation::new(
            Arc::new(InMemory::new()),
            ObjectStoreUrl::parse("memory://").unwrap(),
            Path::from("wh/t"),
        );
        location
            .store
            .put(&Path::from("wh/t/metadata/m0.avro"), written.bytes.clone().into())
            .await
            .unwrap();
        let list = write_manifest_list(
            1,
            None,
            1,
            None,
            &[written.list_entry("s3://b/wh/t/metadata/m0.avro".into(), 1, 1)],
        )
        .unwrap();
        let listed = read_manifest_list(&list, "list").unwrap().remove(0);
        let manifests = IcebergManifests::new(
            Rebase::new("s3://b/wh/t"),
            HashMap::from([("metadata/m0.avro".to_string(), listed)]),
            HashMap::from([(spec.spec_id, mapping(&spec))]),
        );
        let batch = manifests.batch(&location, "metadata/m0.avro", None).await.unwrap();

        let expected: Vec<ForeignDataFile> = files()
            .into_iter()
            .map(|mut f| {
                f.column_stats.retain(|s| s.field_id != 7);
                f.partition_strings = f
                    .partition
                    .iter()
                    .map(|v| crate::values::serialize(v).unwrap())
                    .collect();
                let known_null_counts = f.column_stats.iter().map(|s| s.field_id).collect();
                ForeignDataFile {
                    file: f,
                    known_null_counts,
                }
            })
            .collect();
        let expected = foreign_manifest_batch(&spec, &expected).unwrap();
        assert_eq!(batch, expected);
    }
}
