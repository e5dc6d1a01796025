//! Spark's file-level metadata tables, read from the table's Iceberg
//! manifests (Avro): exactly what Spark, Trino, pyiceberg and DuckDB see.
//!
//! | table                | rows                                                        |
//! |----------------------|-------------------------------------------------------------|
//! | `t$entries`          | every entry of the current snapshot's manifests             |
//! | `t$all_entries`      | every entry of every live snapshot's manifests (each manifest once) |
//! | `t$data_files`, `t$delete_files` | live data / delete files of the current snapshot |
//! | `t$all_data_files`, `t$all_delete_files`, `t$all_files` | live files of every live snapshot's manifests, each file once (Spark lists a file again for each manifest that carries it) |
//!
//! Entries have Spark's columns `status` (0 existing, 1 added, 2 deleted),
//! `snapshot_id`, `sequence_number`, `file_sequence_number`, `data_file`,
//! `readable_metrics`; file tables the fields of `data_file` as columns, then
//! `readable_metrics`. Values an ADDED entry leaves null are shown inherited
//! from its manifest, as readers apply them.
//!
//! `partition` is one struct for all specs (fields by partition field id,
//! typed by their transform: `ts_day` a DATE, `id_bucket` an INT), null
//! where a file's spec lacks the field. `readable_metrics` has one struct
//! per top-level primitive column of the current schema: `column_size`,
//! `value_count`, `null_value_count`, `nan_value_count`, and the bounds
//! decoded to the column's type (`lower_bounds` stays single-value binary).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use apache_avro::types::Value;
use datafusion::arrow::array::{
    ArrayRef, BinaryArray, BinaryBuilder, Int32Array, Int32Builder, Int64Array, Int64Builder, ListBuilder, MapBuilder,
    MapFieldNames, RecordBatch, StringArray, StructArray, new_null_array,
};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema as ArrowSchema};
use datafusion::common::ScalarValue;
use object_store::ObjectStoreExt;

use crate::error::{Error, Result};
use crate::iceberg::avro_records::{AvroFile, RecordIds, as_i64, avro_to_scalar, unwrap};
use crate::iceberg::bounds_read::bounds_array;
use crate::spec::{ManifestFile, TableMetadata, Type};
use crate::store::TableLocation;

/// Which rows a table of this module shows.
#[derive(Debug, Clone, Copy)]
pub(super) struct Selection {
    /// Every live snapshot's manifests, or only the current snapshot's.
    pub all_snapshots: bool,
    /// Entries (all statuses, with `status` … columns) or live files.
    pub entries: bool,
    /// For files: only this `content` (0 data, 1 position deletes, 2 equality
    /// deletes as one "delete" kind), or every file.
    pub content: Option<FileKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileKind {
    Data,
    Deletes,
}

impl Selection {
    /// The selection behind a metadata table's name, if it is one of ours.
    pub fn of(kind: &str) -> Option<Self> {
        let (all_snapshots, rest) = match kind.strip_prefix("all_") {
            Some(rest) => (true, rest),
            None => (false, kind),
        };
        let (entries, content) = match rest {
            "entries" => (true, None),
            "data_files" => (false, Some(FileKind::Data)),
            "delete_files" => (false, Some(FileKind::Deletes)),
            "files" if all_snapshots => (false, None),
            _ => return None,
        };
        Some(Self {
            all_snapshots,
            entries,
            content,
        })
    }
}

/// One manifest entry as written.
struct Entry {
    status: i32,
    snapshot_id: Option<i64>,
    sequence_number: Option<i64>,
    file_sequence_number: Option<i64>,
    content: i32,
    path: String,
    format: String,
    spec_id: i32,
    /// By partition field id.
    partition: BTreeMap<i32, ScalarValue>,
    record_count: i64,
    file_size: i64,
    column_sizes: BTreeMap<i32, i64>,
    value_counts: BTreeMap<i32, i64>,
    null_value_counts: BTreeMap<i32, i64>,
    nan_value_counts: BTreeMap<i32, i64>,
    lower_bounds: BTreeMap<i32, Vec<u8>>,
    upper_bounds: BTreeMap<i32, Vec<u8>>,
    key_metadata: Option<Vec<u8>>,
    split_offsets: Option<Vec<i64>>,
    equality_ids: Option<Vec<i32>>,
    sort_order_id: Option<i32>,
    /// Delete files: the data file whose rows they delete; deletion
    /// vectors also their blob in the Puffin file (Iceberg v3).
    referenced_data_file: Option<String>,
    content_offset: Option<i64>,
    content_size: Option<i64>,
}

/// The rows of the metadata table `selection` (`md` has every snapshot's
/// manifests loaded when `all_snapshots`).
pub(super) async fn table(location: &TableLocation, md: &TableMetadata, selection: Selection) -> Result<RecordBatch> {
    let partition = PartitionType::of(md);
    let mut rows = Vec::new();
    let mut seen = HashSet::new();
    let mut files = HashSet::new();
    let sequence_of: HashMap<i64, i64> = md
        .snapshots
        .iter()
        .map(|s| (s.snapshot_id, s.sequence_number))
        .collect();
    let manifests: Vec<&ManifestFile> = if selection.all_snapshots {
        md.snapshots
            .iter()
            .filter_map(|s| s.manifests.as_deref())
            .flatten()
            .collect()
    } else {
        match md.current_snapshot() {
            Some(_) => md.current_manifests()?.iter().collect(),
            None => Vec::new(),
        }
    };
    for m in manifests {
        let path = avro_path(m)?;
        if !seen.insert(path.to_string()) {
            continue;
        }
        let inherited_sequence = sequence_of
            .get(&m.added_snapshot_id)
            .copied()
            .or_else(|| m.iceberg.as_ref().and_then(|i| i.sequence_number));
        let spec_id = md.spec(m.spec_id)?.partition_spec_id();
        let bytes = location.store.get(&location.resolve(path)?).await?.bytes().await?;
        for mut e in read_entries(&bytes, path, spec_id, &partition)? {
            if e.status == 1 {
                e.snapshot_id = e.snapshot_id.or(Some(m.added_snapshot_id));
                e.sequence_number = e.sequence_number.or(inherited_sequence);
                e.file_sequence_number = e.file_sequence_number.or(inherited_sequence);
            }
            let wanted = selection.entries
                || (e.status != 2
                    && match selection.content {
                        None => true,
                        Some(FileKind::Data) => e.content == 0,
                        Some(FileKind::Deletes) => e.content != 0,
                    });
            // A file carried into a rewritten manifest is listed again: once
            // here (a deletion vector by its blob: one Puffin file has many).
            if wanted && (selection.entries || files.insert((e.path.clone(), e.content_offset))) {
                rows.push(e);
            }
        }
    }
    build(md, &partition, &rows, selection.entries)
}

/// Where the Iceberg manifest of `m` is: its Avro twin, or `m` itself when
/// the table came from another Iceberg writer.
fn avro_path(m: &ManifestFile) -> Result<&str> {
    match &m.iceberg {
        Some(i) => Ok(i.path.as_str()),
        None if m.path.ends_with(".avro") => Ok(m.path.as_str()),
        None => Err(Error::Invalid(format!(
            "manifest {} has no Iceberg manifest; Spark's file tables ($entries, $all_data_files, …) need one (use $files)",
            m.path
        ))),
    }
}

fn read_entries(bytes: &[u8], path: &str, spec_id: i32, partition: &PartitionType) -> Result<Vec<Entry>> {
    let what = format!("Iceberg manifest {path}");
    let file = AvroFile::decode(bytes, &what)?;
    let ids = RecordIds::of(&file.schema, &what)?;
    let df_ids = ids.nested(2, &what)?;
    let part_ids = df_ids.nested(102, &what)?;
    let spec_id = file
        .meta("partition-spec-id")
        .and_then(|s| s.parse().ok())
        .unwrap_or(spec_id);
    let long_map = |r: &Value, id: i32| -> BTreeMap<i32, i64> {
        df_ids
            .int_map(r, id)
            .into_iter()
            .filter_map(|(k, v)| Some((k, as_i64(v)?)))
            .collect()
    };
    let bytes_map = |r: &Value, id: i32| -> BTreeMap<i32, Vec<u8>> {
        df_ids
            .int_map(r, id)
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::Bytes(b) | Value::Fixed(_, b) => Some((k, b.clone())),
                _ => None,
            })
            .collect()
    };
    let mut out = Vec::with_capacity(file.records.len());
    for record in &file.records {
        let Some(df) = ids.get(record, 2) else {
            return Err(Error::Format(format!("{what}: an entry has no data_file")));
        };
        let mut values = BTreeMap::new();
        if let Some(p) = df_ids.get(df, 102) {
            for (field_id, target) in &partition.fields {
                if !part_ids.has(*field_id) {
                    continue;
                }
                let value = match part_ids.get(p, *field_id) {
                    Some(v) => avro_to_scalar(v, &target.1).ok_or_else(|| {
                        Error::Format(format!(
                            "{what}: partition field {field_id} holds {v:?}, expected a {}",
                            target.1
                        ))
                    })?,
                    None => ScalarValue::try_from(&target.1)?,
                };
                values.insert(*field_id, value);
            }
        }
        out.push(Entry {
            status: ids.int(record, 0).unwrap_or(1),
            snapshot_id: ids.long(record, 1),
            sequence_number: ids.long(record, 3),
            file_sequence_number: ids.long(record, 4),
            content: df_ids.int(df, 134).unwrap_or(0),
            path: df_ids.string(df, 100).unwrap_or_default().to_string(),
            format: df_ids.string(df, 101).unwrap_or_default().to_string(),
            spec_id,
            partition: values,
            record_count: df_ids.long(df, 103).unwrap_or(0),
            file_size: df_ids.long(df, 104).unwrap_or(0),
            column_sizes: long_map(df, 108),
            value_counts: long_map(df, 109),
            null_value_counts: long_map(df, 110),
            nan_value_counts: long_map(df, 137),
            lower_bounds: bytes_map(df, 125),
            upper_bounds: bytes_map(df, 128),
            key_metadata: df_ids.bytes(df, 131).map(<[u8]>::to_vec),
            split_offsets: df_ids.get(df, 132).map(|v| match v {
                Value::Array(items) => items.iter().filter_map(|i| as_i64(unwrap(i))).collect(),
                _ => Vec::new(),
            }),
            equality_ids: df_ids.get(df, 135).map(|_| df_ids.int_list(df, 135)),
            sort_order_id: df_ids.int(df, 140),
            referenced_data_file: df_ids.string(df, 143).map(str::to_string),
            content_offset: df_ids.long(df, 144),
            content_size: df_ids.long(df, 145),
        });
    }
    Ok(out)
}

/// The partition struct shared by every spec: fields by partition field id.
struct PartitionType {
    /// Field id → (name, result type), in order of first appearance.
    fields: Vec<(i32, (String, DataType))>,
}

impl PartitionType {
    fn of(md: &TableMetadata) -> Self {
        let mut fields: Vec<(i32, (String, DataType))> = Vec::new();
        let mut specs: Vec<_> = md.table_specs.iter().collect();
        specs.sort_by_key(|s| s.partition_spec_id());
        for spec in specs {
            for f in &spec.partition_spec.fields {
                let Some(source) = spec.schema.field_by_id(f.source_id) else {
                    continue;
                };
                let Ok(dt) = f.transform.result_type(&source.field_type.to_arrow()) else {
                    continue;
                };
                match fields.iter_mut().find(|(id, _)| *id == f.field_id) {
                    // A later spec's name wins (fields can be renamed).
                    Some((_, known)) => known.0 = f.name.clone(),
                    None => fields.push((f.field_id, (f.name.clone(), dt))),
                }
            }
        }
        Self { fields }
    }

    fn array(&self, rows: &[Entry]) -> Result<ArrayRef> {
        let mut columns = Vec::new();
        let mut out_fields = Vec::new();
        for (id, (name, dt)) in &self.fields {
            let null = ScalarValue::try_from(dt)?;
            let values = rows
                .iter()
                .map(|r| r.partition.get(id).cloned().unwrap_or_else(|| null.clone()));
            let array = if rows.is_empty() {
                new_null_array(dt, 0)
            } else {
                ScalarValue::iter_to_array(values)?
            };
            out_fields.push(Field::new(name, dt.clone(), true));
            columns.push(array);
        }
        Ok(if columns.is_empty() {
            Arc::new(StructArray::new_empty_fields(rows.len(), None))
        } else {
            Arc::new(StructArray::try_new(Fields::from(out_fields), columns, None)?)
        })
    }
}

fn map_names() -> MapFieldNames {
    MapFieldNames {
        entry: "entries".into(),
        key: "key".into(),
        value: "value".into(),
    }
}

fn long_maps(rows: &[Entry], f: impl Fn(&Entry) -> &BTreeMap<i32, i64>) -> Result<ArrayRef> {
    let mut b = MapBuilder::new(Some(map_names()), Int32Builder::new(), Int64Builder::new());
    for r in rows {
        for (k, v) in f(r) {
            b.keys().append_value(*k);
            b.values().append_value(*v);
        }
        b.append(true)?;
    }
    Ok(Arc::new(b.finish()))
}

fn bytes_maps(rows: &[Entry], f: impl Fn(&Entry) -> &BTreeMap<i32, Vec<u8>>) -> Result<ArrayRef> {
    let mut b = MapBuilder::new(Some(map_names()), Int32Builder::new(), BinaryBuilder::new());
    for r in rows {
        for (k, v) in f(r) {
            b.keys().append_value(*k);
            b.values().append_value(v);
        }
        b.append(true)?;
    }
    Ok(Arc::new(b.finish()))
}

/// `data_file`'s fields (Spark's order) as named columns.
fn file_columns(rows: &[Entry], partition: &PartitionType) -> Result<Vec<(&'static str, ArrayRef)>> {
    let mut split_offsets = ListBuilder::new(Int64Builder::new());
    let mut equality_ids = ListBuilder::new(Int32Builder::new());
    for r in rows {
        split_offsets.append_option(r.split_offsets.as_ref().map(|v| v.iter().map(|x| Some(*x))));
        equality_ids.append_option(r.equality_ids.as_ref().map(|v| v.iter().map(|x| Some(*x))));
    }
    Ok(vec![
        (
            "content",
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.content))),
        ),
        (
            "file_path",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.path.as_str()))),
        ),
        (
            "file_format",
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.format.as_str()))),
        ),
        (
            "spec_id",
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.spec_id))),
        ),
        ("partition", partition.array(rows)?),
        (
            "record_count",
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.record_count))),
        ),
        (
            "file_size_in_bytes",
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.file_size))),
        ),
        ("column_sizes", long_maps(rows, |r| &r.column_sizes)?),
        ("value_counts", long_maps(rows, |r| &r.value_counts)?),
        ("null_value_counts", long_maps(rows, |r| &r.null_value_counts)?),
        ("nan_value_counts", long_maps(rows, |r| &r.nan_value_counts)?),
        ("lower_bounds", bytes_maps(rows, |r| &r.lower_bounds)?),
        ("upper_bounds", bytes_maps(rows, |r| &r.upper_bounds)?),
        (
            "key_metadata",
            Arc::new(BinaryArray::from_iter(rows.iter().map(|r| r.key_metadata.as_deref()))),
        ),
        ("split_offsets", Arc::new(split_offsets.finish())),
        ("equality_ids", Arc::new(equality_ids.finish())),
        (
            "sort_order_id",
            Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.sort_order_id))),
        ),
        (
            "referenced_data_file",
            Arc::new(StringArray::from_iter(
                rows.iter().map(|r| r.referenced_data_file.as_deref()),
            )),
        ),
        (
            "content_offset",
            Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.content_offset))),
        ),
        (
            "content_size_in_bytes",
            Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.content_size))),
        ),
    ])
}

/// One struct per top-level primitive column of the current schema.
fn readable_metrics(md: &TableMetadata, rows: &[Entry]) -> Result<ArrayRef> {
    let schema = &md.spec(md.current_spec_id)?.schema;
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for column in schema
        .fields
        .iter()
        .filter(|f| matches!(f.field_type, Type::Primitive(_)))
    {
        let id = column.id;
        let dt = column.field_type.to_arrow();
        let count = |m: fn(&Entry) -> &BTreeMap<i32, i64>| -> ArrayRef {
            Arc::new(Int64Array::from_iter(rows.iter().map(|r| m(r).get(&id).copied())))
        };
        let bound = |m: fn(&Entry) -> &BTreeMap<i32, Vec<u8>>| -> ArrayRef {
            let raw = BinaryArray::from_iter(rows.iter().map(|r| m(r).get(&id).map(Vec::as_slice)));
            bounds_array(&raw, &dt)
        };
        let parts: Vec<(&str, ArrayRef)> = vec![
            ("column_size", count(|r| &r.column_sizes)),
            ("value_count", count(|r| &r.value_counts)),
            ("null_value_count", count(|r| &r.null_value_counts)),
            ("nan_value_count", count(|r| &r.nan_value_counts)),
            ("lower_bound", bound(|r| &r.lower_bounds)),
            ("upper_bound", bound(|r| &r.upper_bounds)),
        ];
        let inner = struct_of(parts)?;
        fields.push(Field::new(&column.name, inner.data_type().clone(), true));
        columns.push(inner);
    }
    Ok(if columns.is_empty() {
        Arc::new(StructArray::new_empty_fields(rows.len(), None))
    } else {
        Arc::new(StructArray::try_new(Fields::from(fields), columns, None)?)
    })
}

fn struct_of(parts: Vec<(&str, ArrayRef)>) -> Result<ArrayRef> {
    let fields: Vec<Field> = parts
        .iter()
        .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
        .collect();
    let arrays = parts.into_iter().map(|(_, a)| a).collect();
    Ok(Arc::new(StructArray::try_new(Fields::from(fields), arrays, None)?))
}

fn build(md: &TableMetadata, partition: &PartitionType, rows: &[Entry], entries: bool) -> Result<RecordBatch> {
    let file = file_columns(rows, partition)?;
    let mut columns: Vec<(&str, ArrayRef)> = if entries {
        vec![
            (
                "status",
                Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.status))),
            ),
            (
                "snapshot_id",
                Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.snapshot_id))),
            ),
            (
                "sequence_number",
                Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.sequence_number))),
            ),
            (
                "file_sequence_number",
                Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.file_sequence_number))),
            ),
            ("data_file", struct_of(file)?),
        ]
    } else {
        file
    };
    columns.push(("readable_metrics", readable_metrics(md, rows)?));
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
        .collect();
    Ok(RecordBatch::try_new(
        Arc::new(ArrowSchema::new(fields)),
        columns.into_iter().map(|(_, a)| a).collect(),
    )?)
}
