//! One Iceberg data manifest (Avro, format v2) for data files of one table spec.
//!
//! | id  | manifest_entry field  | id  | data_file field (record `r2`)                         |
//! |-----|-----------------------|-----|-------------------------------------------------------|
//! | 0   | status: 0 existing, 1 added | 134 | content: 0 (data)                             |
//! | 1   | snapshot_id           | 100 | file_path: table location + `/` + the decoded path    |
//! | 3   | sequence_number       | 101 | file_format: `PARQUET`                                |
//! |     |                       | 142 | first_row_id (v3 only): null for new files (inherited), the assigned id for kept ones |
//! | 4   | file_sequence_number  | 102 | partition (record `r102`, one optional field per spec field, typed by its transform) |
//! |     |                       | 103, 104 | record_count, file_size_in_bytes                 |
//! |     |                       | 109, 110 | value / null counts per top-level primitive column with stats |
//! |     |                       | 137 | NaN counts: 0 for float columns that have bounds (our stats keep none when a NaN is present) |
//! |     |                       | 125, 128 | lower / upper bounds (single-value binary)       |
//! |     |                       | 108, 131, 132, 135 | null: column sizes, key metadata, split offsets, equality ids |
//! |     |                       | 140 | the file's sort order id, or null |
//!
//! A delete manifest lists position delete files (content 1) with the data
//! file each names (`referenced_data_file`, 143; also both bounds of its
//! `file_path` column). In a v3 table they are deletion vectors instead:
//! `file_format` `PUFFIN`, and the blob's place, `content_offset` (144) and
//! `content_size_in_bytes` (145).
//!
//! ADDED entries leave snapshot id and sequence numbers null: readers inherit
//! them from the manifest list, so a manifest is written before its
//! snapshot's numbers are final. EXISTING entries carry them.
//!
//! Partition values are typed by the transform's result type as the spec's
//! Avro mapping has it: `day` a `date`, `year`/`month`/`hour`/`bucket` an
//! `int`, identity and truncate the source type (decimals as `fixed` with the
//! `decimal` logical type, timestamps `long` with `timestamp-micros`/`-nanos`
//! and `adjust-to-utc`). Names that are not Avro names are sanitized as Java
//! does (`ts-day` → `ts_x2Dday`), the original kept in `iceberg-field-name`.
//!
//! The file's key-value metadata holds the Iceberg schema and partition spec
//! so a reader can use the manifest on its own, and the format version: 3
//! when the spec has a type only v3 has or a file carries a row id
//! (`first_row_id`, Iceberg v3 row lineage), 2 otherwise.

use std::collections::{HashMap, HashSet};

use apache_avro::Decimal;
use apache_avro::types::Value;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use serde_json::{Value as Json, json};

use super::avro::{field, int_map, int_map_value, list, null, opt, optional, some, write_container};
use super::bounds::{encode_bound, minimal_be};
use super::json::{partition_spec_json, schema_json};
use super::manifest_list::{FieldSummaryBinary, ManifestListEntry, partition_summaries};
use crate::error::{Error, Result};
use crate::spec::{ColumnStats, DataFile, ManifestContent, PrimitiveType, TableSpec};

/// An entry's status (Iceberg: 0 existing, 1 added; 2 deleted is not written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryStatus {
    Existing,
    Added,
}

/// What one manifest is written for.
#[derive(Debug, Clone)]
pub struct ManifestWrite<'a> {
    pub spec: &'a TableSpec,
    /// Absolute table root as Iceberg paths start (`/tmp/wh/t`, `s3://b/wh/t`), no trailing `/`.
    pub table_location: &'a str,
    pub status: EntryStatus,
    /// For Existing entries: the snapshot that added the files and their data
    /// sequence number (written explicitly). For Added entries both are
    /// written null (inherited from the manifest list) whatever is given here.
    pub snapshot_id: Option<i64>,
    pub sequence_number: Option<i64>,
    /// Write format version 3 (also implied by a v3 type in the spec or a
    /// file with a row id): for every manifest of a v3 table.
    pub v3: bool,
    /// Data files, or position delete files (each naming its data file).
    pub content: ManifestContent,
}

/// A written manifest and what its manifest-list record needs.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenManifest {
    /// The Avro file.
    pub bytes: Vec<u8>,
    /// Iceberg's id of its partition spec.
    pub spec_id: i32,
    pub added_files: i32,
    pub existing_files: i32,
    pub added_rows: i64,
    pub existing_rows: i64,
    /// The data sequence number written into Existing entries (`None` when Added).
    pub existing_sequence_number: Option<i64>,
    /// One per partition field, in spec order.
    pub partitions: Vec<FieldSummaryBinary>,
    pub content: ManifestContent,
}

impl WrittenManifest {
    /// Its manifest-list record, once stored at `manifest_path` (absolute) by
    /// snapshot `added_snapshot_id` with sequence number `sequence_number`.
    pub fn list_entry(&self, manifest_path: String, added_snapshot_id: i64, sequence_number: i64) -> ManifestListEntry {
        ManifestListEntry {
            manifest_path,
            manifest_length: self.bytes.len() as i64,
            partition_spec_id: self.spec_id,
            content: self.content.id(),
            sequence_number,
            min_sequence_number: self.existing_sequence_number.unwrap_or(sequence_number),
            added_snapshot_id,
            added_files_count: self.added_files,
            existing_files_count: self.existing_files,
            deleted_files_count: 0,
            added_rows_count: self.added_rows,
            existing_rows_count: self.existing_rows,
            deleted_rows_count: 0,
            partitions: Some(self.partitions.clone()),
            first_row_id: None,
        }
    }
}

/// Write the manifest of `files` (all of `w.spec`).
pub fn write_manifest(w: &ManifestWrite, files: &[DataFile]) -> Result<WrittenManifest> {
    let spec = w.spec;
    let partition = PartitionType::of(spec)?;
    let (snapshot_id, sequence_number) = match w.status {
        EntryStatus::Added => (None, None),
        EntryStatus::Existing => match (w.snapshot_id, w.sequence_number) {
            (Some(s), Some(n)) => (Some(s), Some(n)),
            _ => {
                return crate::invalid!(
                    "an Iceberg manifest of EXISTING entries needs the snapshot id and sequence number that added them"
                );
            }
        },
    };
    // Iceberg keeps metrics of primitive columns only.
    let columns: HashMap<i32, PrimitiveType> = spec
        .schema
        .fields
        .iter()
        .filter_map(|f| Some((f.id, f.field_type.as_primitive()?)))
        .collect();
    // Row ids and deletion vectors exist in v3 only.
    let v3 = w.v3
        || crate::iceberg::json::spec_needs_v3(spec)
        || files.iter().any(|f| f.first_row_id.is_some() || f.blob.is_some());
    let deletes = w.content == ManifestContent::Deletes;
    // Position delete files a table had before it became v3 may stay.
    if deletes
        && v3
        && w.status == EntryStatus::Added
        && let Some(f) = files.iter().find(|f| f.blob.is_none())
    {
        return crate::invalid!(
            "Iceberg format version 3 tables take deletion vectors, not position delete files ({}); nothing was written",
            f.path
        );
    }
    if let Some(f) = files.iter().find(|f| f.blob.is_some() && !deletes) {
        return crate::invalid!(
            "deletion vector {} belongs in a delete manifest, not a data manifest; nothing was written",
            f.path
        );
    }
    let mut records = Vec::with_capacity(files.len());
    let mut rows = 0i64;
    for file in files {
        if file.spec_id != spec.spec_id {
            return crate::invalid!(
                "data file {} belongs to spec {}, not to the manifest's spec {}",
                file.path,
                file.spec_id,
                spec.spec_id
            );
        }
        let record_count = as_long(file.record_count, "record count", &file.path)?;
        rows = rows.checked_add(record_count).ok_or_else(|| {
            Error::Invalid("the files' record counts add up to more than an Iceberg long holds".into())
        })?;
        let mut data_file = data_file_record(w, &partition, &columns, file, record_count)?;
        if let Value::Record(fields) = &mut data_file {
            // In the schema's order: first_row_id (142), referenced_data_file
            // (143), content_offset (144), content_size_in_bytes (145).
            let referenced = fields.iter().position(|(name, _)| name == "referenced_data_file");
            if v3 {
                let row_id = ("first_row_id".into(), opt(file.first_row_id.map(Value::Long)));
                fields.insert(referenced.unwrap_or(fields.len()), row_id);
            }
            if deletes && v3 {
                let blob = file.blob.as_ref();
                fields.push(("content_offset".into(), opt(blob.map(|b| Value::Long(b.offset)))));
                fields.push(("content_size_in_bytes".into(), opt(blob.map(|b| Value::Long(b.length)))));
            }
        }
        records.push(entry_record(w.status, snapshot_id, sequence_number, data_file));
    }
    let metadata = [
        ("schema", schema_json(spec)?.to_string()),
        ("schema-id", spec.schema_id().to_string()),
        ("partition-spec", partition_spec_json(spec)?["fields"].to_string()),
        ("partition-spec-id", spec.partition_spec_id().to_string()),
        ("format-version", if v3 { "3" } else { "2" }.to_string()),
        ("content", if deletes { "deletes" } else { "data" }.to_string()),
    ];
    let bytes = write_container(
        &entry_schema(partition.schema, v3, deletes),
        &metadata,
        records,
        &format!("an Iceberg manifest of spec {}", spec.spec_id),
    )?;
    let count = i32::try_from(files.len())
        .map_err(|_| Error::Invalid(format!("{} files are too many for one Iceberg manifest", files.len())))?;
    let added = w.status == EntryStatus::Added;
    Ok(WrittenManifest {
        bytes,
        spec_id: spec.partition_spec_id(),
        added_files: if added { count } else { 0 },
        existing_files: if added { 0 } else { count },
        added_rows: if added { rows } else { 0 },
        existing_rows: if added { 0 } else { rows },
        existing_sequence_number: sequence_number,
        partitions: partition_summaries(spec, files)?,
        content: w.content,
    })
}

/// A manifest_entry record; snapshot id and sequence numbers null when inherited.
fn entry_record(
    status: EntryStatus,
    snapshot_id: Option<i64>,
    sequence_number: Option<i64>,
    data_file: Value,
) -> Value {
    let status = match status {
        EntryStatus::Existing => 0,
        EntryStatus::Added => 1,
    };
    Value::Record(vec![
        ("status".into(), Value::Int(status)),
        ("snapshot_id".into(), opt(snapshot_id.map(Value::Long))),
        ("sequence_number".into(), opt(sequence_number.map(Value::Long))),
        ("file_sequence_number".into(), opt(sequence_number.map(Value::Long))),
        ("data_file".into(), data_file),
    ])
}

fn as_long(v: u64, what: &str, path: &str) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::Invalid(format!("data file {path}: {what} {v} does not fit an Iceberg long")))
}

/// The metrics of one data_file record: value, null and NaN counts, lower
/// and upper bounds (each an optional map by field id).
struct Metrics {
    value_counts: Value,
    null_value_counts: Value,
    nan_value_counts: Value,
    lower_bounds: Value,
    upper_bounds: Value,
}

fn data_file_record(
    w: &ManifestWrite,
    partition: &PartitionType,
    columns: &HashMap<i32, PrimitiveType>,
    file: &DataFile,
    record_count: i64,
) -> Result<Value> {
    let absolute = |stored: &str| -> Result<String> {
        let relative = crate::values::uri::decode(stored)
            .map_err(|e| Error::Invalid(format!("file path {stored:?} is not URI-encoded: {e}")))?;
        Ok(format!("{}/{relative}", w.table_location))
    };
    // A position delete file names its data file as `referenced_data_file`
    // and as both bounds of its `file_path` column (readers match deletes to
    // data files by either); it has no other metrics.
    let (content, metrics, referenced) = match w.content {
        ManifestContent::Data => (0, data_metrics(columns, file)?, None),
        ManifestContent::Deletes => {
            let Some(referenced) = &file.referenced_data_file else {
                return crate::invalid!("delete file {} names no data file", file.path);
            };
            let referenced = absolute(referenced)?;
            let bound = || {
                some(int_map_value(vec![(
                    POS_FILE_PATH_ID,
                    Value::Bytes(referenced.clone().into_bytes()),
                )]))
            };
            let metrics = Metrics {
                value_counts: null(),
                null_value_counts: null(),
                nan_value_counts: null(),
                lower_bounds: bound(),
                upper_bounds: bound(),
            };
            (1, metrics, Some(referenced))
        }
    };
    let mut fields = vec![
        ("content".into(), Value::Int(content)),
        ("file_path".into(), Value::String(absolute(&file.path)?)),
        (
            "file_format".into(),
            Value::String(if file.blob.is_some() { "PUFFIN" } else { "PARQUET" }.into()),
        ),
        ("partition".into(), partition.record(file)?),
        ("record_count".into(), Value::Long(record_count)),
        (
            "file_size_in_bytes".into(),
            Value::Long(as_long(file.file_size, "file size", &file.path)?),
        ),
        ("column_sizes".into(), null()),
        ("value_counts".into(), metrics.value_counts),
        ("null_value_counts".into(), metrics.null_value_counts),
        ("nan_value_counts".into(), metrics.nan_value_counts),
        ("lower_bounds".into(), metrics.lower_bounds),
        ("upper_bounds".into(), metrics.upper_bounds),
        ("key_metadata".into(), null()),
        ("split_offsets".into(), null()),
        ("equality_ids".into(), null()),
        (
            "sort_order_id".into(),
            file.sort_order_id.map_or_else(null, |id| some(Value::Int(id))),
        ),
    ];
    if let Some(referenced) = referenced {
        fields.push(("referenced_data_file".into(), some(Value::String(referenced))));
    }
    Ok(Value::Record(fields))
}

/// The metrics of a data file: its column statistics.
fn data_metrics(columns: &HashMap<i32, PrimitiveType>, file: &DataFile) -> Result<Metrics> {
    let stats: Vec<&ColumnStats> = file
        .column_stats
        .iter()
        .filter(|s| columns.contains_key(&s.field_id))
        .collect();
    let map_or_null = |entries: Vec<(i32, Value)>| {
        if entries.is_empty() {
            null()
        } else {
            some(int_map_value(entries))
        }
    };
    let bounds = |upper: bool| -> Vec<(i32, Value)> {
        stats
            .iter()
            .filter_map(|s| {
                let v = if upper { s.max.as_ref() } else { s.min.as_ref() }?;
                Some((s.field_id, Value::Bytes(encode_bound(v)?)))
            })
            .collect()
    };
    // Our stats drop float bounds when the file holds a NaN: bounds mean none.
    let nan_counts = stats
        .iter()
        .filter(|s| {
            let float = matches!(
                columns.get(&s.field_id),
                Some(PrimitiveType::Float | PrimitiveType::Double)
            );
            float && s.min.is_some() && s.max.is_some()
        })
        .map(|s| (s.field_id, Value::Long(0)))
        .collect();
    let counts = |f: &dyn Fn(&ColumnStats) -> u64| -> Result<Vec<(i32, Value)>> {
        stats
            .iter()
            .map(|s| Ok((s.field_id, Value::Long(as_long(f(s), "a column count", &file.path)?))))
            .collect()
    };
    Ok(Metrics {
        value_counts: map_or_null(counts(&|_| file.record_count)?),
        null_value_counts: map_or_null(counts(&|s| s.null_count)?),
        nan_value_counts: map_or_null(nan_counts),
        lower_bounds: map_or_null(bounds(false)),
        upper_bounds: map_or_null(bounds(true)),
    })
}

/// Field id of the `file_path` column of a position delete file.
pub const POS_FILE_PATH_ID: i32 = 2147483546;
/// Field id of the `pos` column of a position delete file.
pub const POS_ID: i32 = 2147483545;

fn entry_schema(partition: Json, v3: bool, deletes: bool) -> Json {
    let mut data_file = json!({
        "type": "record",
        "name": "r2",
        "fields": [
            field("content", 134, json!("int")),
            field("file_path", 100, json!("string")),
            field("file_format", 101, json!("string")),
            field("partition", 102, partition),
            field("record_count", 103, json!("long")),
            field("file_size_in_bytes", 104, json!("long")),
            optional("column_sizes", 108, int_map(117, 118, "long")),
            optional("value_counts", 109, int_map(119, 120, "long")),
            optional("null_value_counts", 110, int_map(121, 122, "long")),
            optional("nan_value_counts", 137, int_map(138, 139, "long")),
            optional("lower_bounds", 125, int_map(126, 127, "bytes")),
            optional("upper_bounds", 128, int_map(129, 130, "bytes")),
            optional("key_metadata", 131, json!("bytes")),
            optional("split_offsets", 132, list(133, json!("long"))),
            optional("equality_ids", 135, list(136, json!("int"))),
            optional("sort_order_id", 140, json!("int")),
        ],
    });
    if v3 && let Some(fields) = data_file["fields"].as_array_mut() {
        fields.push(optional("first_row_id", 142, json!("long")));
    }
    if deletes && let Some(fields) = data_file["fields"].as_array_mut() {
        fields.push(optional("referenced_data_file", 143, json!("string")));
        if v3 {
            fields.push(optional("content_offset", 144, json!("long")));
            fields.push(optional("content_size_in_bytes", 145, json!("long")));
        }
    }
    json!({
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            field("status", 0, json!("int")),
            optional("snapshot_id", 1, json!("long")),
            optional("sequence_number", 3, json!("long")),
            optional("file_sequence_number", 4, json!("long")),
            field("data_file", 2, data_file),
        ],
    })
}

/// The partition record of a spec: its Avro schema and field names.
struct PartitionType {
    schema: Json,
    /// Per spec field: Avro name and result type.
    fields: Vec<(String, DataType)>,
}

impl PartitionType {
    fn of(spec: &TableSpec) -> Result<Self> {
        let bound = spec.partition_spec.bind(&spec.schema)?;
        let mut named = HashSet::new();
        let mut avro_fields = Vec::with_capacity(bound.len());
        let mut fields = Vec::with_capacity(bound.len());
        for b in &bound {
            let name = avro_name(&b.field.name);
            let ty = avro_type(&b.result_type, b.field.field_id, &mut named).ok_or_else(|| {
                Error::Invalid(format!(
                    "partition field {:?}: type {} has no Iceberg Avro form",
                    b.field.name, b.result_type
                ))
            })?;
            let mut f = optional(&name, b.field.field_id, ty);
            if name != b.field.name {
                f["iceberg-field-name"] = json!(b.field.name);
            }
            avro_fields.push(f);
            fields.push((name, b.result_type.clone()));
        }
        Ok(Self {
            schema: json!({"type": "record", "name": "r102", "fields": avro_fields}),
            fields,
        })
    }

    fn record(&self, file: &DataFile) -> Result<Value> {
        if file.partition.len() != self.fields.len() {
            return crate::invalid!(
                "data file {} has {} partition values, its spec has {} partition fields",
                file.path,
                file.partition.len(),
                self.fields.len()
            );
        }
        let mut out = Vec::with_capacity(self.fields.len());
        for ((name, dt), value) in self.fields.iter().zip(&file.partition) {
            let avro = partition_value(value, dt).ok_or_else(|| {
                Error::Invalid(format!(
                    "data file {}: partition value {value:?} of field {name:?} is not a {dt}",
                    file.path
                ))
            })?;
            out.push((name.clone(), avro));
        }
        Ok(Value::Record(out))
    }
}

/// A name Avro accepts: `[A-Za-z_][A-Za-z0-9_]*`, others as `_x<HEX>` (Java's rule).
fn avro_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_alphabetic() || c == '_' || (i > 0 && c.is_ascii_digit()) {
            out.push(c);
        } else if i == 0 && c.is_ascii_digit() {
            out.push('_');
            out.push(c);
        } else {
            out.push_str(&format!("_x{:X}", c as u32));
        }
    }
    if out.is_empty() { "_".to_string() } else { out }
}

/// The Avro type of partition field `field_id`'s values, of Arrow type
/// `dt`. Named types (`fixed`) get a name not in `named` yet: readers such
/// as pyiceberg do not resolve references to a name defined earlier.
fn avro_type(dt: &DataType, field_id: i32, named: &mut HashSet<String>) -> Option<Json> {
    let mut fixed = |base: String, extra: Json| {
        let name = if named.contains(&base) {
            format!("{base}_{field_id}")
        } else {
            base
        };
        named.insert(name.clone());
        let mut t = json!({"type": "fixed", "name": name});
        if let (Some(t), Json::Object(extra)) = (t.as_object_mut(), extra) {
            t.extend(extra);
        }
        t
    };
    Some(match dt {
        DataType::Boolean => json!("boolean"),
        DataType::Int32 => json!("int"),
        DataType::Int64 => json!("long"),
        DataType::Float32 => json!("float"),
        DataType::Float64 => json!("double"),
        DataType::Utf8 => json!("string"),
        DataType::Binary => json!("bytes"),
        DataType::Date32 => json!({"type": "int", "logicalType": "date"}),
        DataType::Time64(TimeUnit::Microsecond) => json!({"type": "long", "logicalType": "time-micros"}),
        // Iceberg has no nanosecond time: a plain long of nanoseconds.
        DataType::Time64(TimeUnit::Nanosecond) => json!("long"),
        DataType::Timestamp(unit, tz) => {
            let logical = match unit {
                TimeUnit::Microsecond => "timestamp-micros",
                TimeUnit::Nanosecond => "timestamp-nanos",
                _ => return None,
            };
            json!({"type": "long", "logicalType": logical, "adjust-to-utc": tz.is_some()})
        }
        DataType::FixedSizeBinary(n) => fixed(format!("fixed_{n}"), json!({"size": n})),
        DataType::Decimal128(p, s) => fixed(
            format!("decimal_{p}_{s}"),
            json!({"size": decimal_bytes(*p), "logicalType": "decimal", "precision": p, "scale": s}),
        ),
        _ => return None,
    })
}

/// The fewest bytes that hold every unscaled value of `precision` digits.
fn decimal_bytes(precision: u8) -> usize {
    let max = 10i128
        .checked_pow(u32::from(precision.min(38)))
        .map_or(i128::MAX, |p| p - 1);
    (1..=16).find(|n| *n == 16 || max < 1i128 << (8 * n - 1)).unwrap_or(16)
}

/// A partition value as the Avro value of its optional field; `None` when
/// it is not of type `dt` (a null of any type, untyped included, is null).
fn partition_value(v: &ScalarValue, dt: &DataType) -> Option<Value> {
    if v.is_null() {
        return Some(null());
    }
    if &v.data_type() != dt {
        return None;
    }
    Some(some(match v {
        ScalarValue::Boolean(Some(b)) => Value::Boolean(*b),
        ScalarValue::Int32(Some(x)) => Value::Int(*x),
        ScalarValue::Int64(Some(x)) | ScalarValue::Time64Nanosecond(Some(x)) => Value::Long(*x),
        ScalarValue::Float32(Some(x)) => Value::Float(*x),
        ScalarValue::Float64(Some(x)) => Value::Double(*x),
        ScalarValue::Utf8(Some(s)) => Value::String(s.clone()),
        ScalarValue::Binary(Some(b)) => Value::Bytes(b.clone()),
        ScalarValue::Date32(Some(d)) => Value::Date(*d),
        ScalarValue::Time64Microsecond(Some(t)) => Value::TimeMicros(*t),
        ScalarValue::TimestampMicrosecond(Some(t), _) => Value::TimestampMicros(*t),
        ScalarValue::TimestampNanosecond(Some(t), _) => Value::TimestampNanos(*t),
        ScalarValue::FixedSizeBinary(n, Some(b)) => Value::Fixed(*n as usize, b.clone()),
        ScalarValue::Decimal128(Some(x), _, _) => Value::Decimal(Decimal::from(minimal_be(&x.to_be_bytes()))),
        _ => return None,
    }))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::iceberg::avro_records::AvroFile;
    use crate::iceberg::bounds_read::decode_bound;
    use crate::iceberg::convert::SpecMapping;
    use crate::iceberg::manifest_entries::{Content, read_entries};
    use crate::iceberg::manifest_list::write_manifest_list;
    use crate::iceberg::manifest_list_read::read_manifest_list;
    use crate::iceberg::metadata::IcebergSpec;
    use crate::spec::{PartitionField, PartitionSpec, Schema};
    use crate::transform::Transform;

    const SCHEMA: &str = r#"{"fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"s","required":false,"type":"string"},
        {"id":3,"name":"ts","required":false,"type":"timestamp"},
        {"id":4,"name":"d","required":false,"type":"decimal(9,2)"},
        {"id":5,"name":"x","required":false,"type":"double"},
        {"id":6,"name":"big","required":false,"type":"decimal(38,0)"},
        {"id":7,"name":"tags","required":false,"type":{"type":"list","element-id":8,"element-required":false,"element":"string"}}]}"#;

    pub(crate) fn table_spec() -> TableSpec {
        let schema: Schema = serde_json::from_str(SCHEMA).unwrap();
        let p = |field_id, source_id, transform, name: &str| PartitionField {
            field_id,
            source_id,
            transform,
            name: name.to_string(),
        };
        TableSpec {
            spec_id: 3,
            schema,
            partition_spec: PartitionSpec {
                fields: vec![
                    p(1000, 2, Transform::Identity, "s"),
                    p(1001, 3, Transform::Day, "ts-day"),
                    p(1002, 1, Transform::Bucket(16), "id_bucket"),
                    p(1003, 2, Transform::Truncate(2), "s_trunc"),
                    p(1004, 4, Transform::Identity, "d"),
                    p(1005, 4, Transform::Truncate(100), "d_trunc"),
                    p(1006, 1, Transform::Void, "id_null"),
                    p(1007, 3, Transform::Hour, "ts_hour"),
                    p(1008, 6, Transform::Identity, "big"),
                    p(1009, 3, Transform::Identity, "ts"),
                ],
            },
            iceberg_schema_id: None,
            iceberg_spec_id: None,
        }
    }

    fn stats(field_id: i32, null_count: u64, min: Option<ScalarValue>, max: Option<ScalarValue>) -> ColumnStats {
        ColumnStats {
            field_id,
            null_count,
            min,
            max,
        }
    }

    pub(crate) fn files() -> Vec<DataFile> {
        let ts = |v| ScalarValue::TimestampMicrosecond(v, None);
        let dec = |v| ScalarValue::Decimal128(v, 9, 2);
        let partition = |s: Option<&str>, day: Option<i32>, d: Option<i128>, t: Option<i64>| {
            vec![
                ScalarValue::Utf8(s.map(str::to_string)),
                ScalarValue::Date32(day),
                ScalarValue::Int32(Some(5)),
                ScalarValue::Utf8(s.map(|s| s.chars().take(2).collect())),
                dec(d),
                dec(d.map(|d| d - d.rem_euclid(100))),
                ScalarValue::Int64(None),
                ScalarValue::Int32(day.map(|d| d * 24)),
                ScalarValue::Decimal128(d.map(|d| -d * 1_000_000_000_000), 38, 0),
                ts(t),
            ]
        };
        let file = |path: &str, rows, partition, column_stats| DataFile {
            path: path.to_string(),
            file_size: 1234,
            record_count: rows,
            spec_id: 3,
            partition_strings: vec![None; 10],
            partition,
            column_stats,
            pending: None,
            first_row_id: None,
            sort_order_id: None,
            referenced_data_file: None,
            blob: None,
        };
        vec![
            file(
                "data/s=a%20b/ts_day=2024-01-01/f1.parquet",
                10,
                partition(Some("a b"), Some(19723), Some(1420), Some(1_704_067_200_000_000)),
                vec![
                    stats(
                        1,
                        0,
                        Some(ScalarValue::Int64(Some(-5))),
                        Some(ScalarValue::Int64(Some(99))),
                    ),
                    stats(
                        2,
                        0,
                        Some(ScalarValue::Utf8(Some("a b".into()))),
                        Some(ScalarValue::Utf8(Some("a b".into()))),
                    ),
                    stats(4, 2, Some(dec(Some(-1))), Some(dec(Some(1420)))),
                    stats(
                        5,
                        1,
                        Some(ScalarValue::Float64(Some(-0.0))),
                        Some(ScalarValue::Float64(Some(2.5))),
                    ),
                    stats(7, 3, None, None),
                ],
            ),
            file(
                "data/s=__HIVE_DEFAULT_PARTITION__/f2.parquet",
                3,
                partition(None, None, None, None),
                vec![
                    stats(2, 3, None, None),
                    // A NaN in the file: our stats keep no float bounds.
                    stats(5, 0, None, None),
                ],
            ),
            file(
                "data/s=zz/f3.parquet",
                1,
                partition(Some("zz"), Some(-1), Some(-99_999_999), Some(-1)),
                vec![],
            ),
        ]
    }

    pub(crate) fn mapping(spec: &TableSpec) -> SpecMapping {
        SpecMapping::new(&IcebergSpec::of(spec), &spec.schema)
    }

    pub(crate) fn added(spec: &TableSpec) -> ManifestWrite<'_> {
        ManifestWrite {
            spec,
            table_location: "s3://b/wh/t",
            status: EntryStatus::Added,
            snapshot_id: None,
            sequence_number: None,
            v3: false,
            content: ManifestContent::Data,
        }
    }

    #[test]
    fn added_manifest_round_trips_through_our_readers() {
        let spec = table_spec();
        let files = files();
        let written = write_manifest(&added(&spec), &files).unwrap();
        assert_eq!((written.added_files, written.existing_files), (3, 0));
        assert_eq!((written.added_rows, written.existing_rows), (14, 0));
        let entry = written.list_entry("s3://b/wh/t/metadata/m0.avro".into(), 77, 5);
        assert_eq!((entry.sequence_number, entry.min_sequence_number), (5, 5));
        assert_eq!(entry.manifest_length, written.bytes.len() as i64);
        let list = write_manifest_list(77, None, 5, None, &[entry]).unwrap();
        let listed = read_manifest_list(&list, "list").unwrap().remove(0);
        assert_eq!(listed.files, Some(3));

        let mapping = mapping(&spec);
        assert!(mapping.kept.iter().all(Option::is_some), "{:?}", mapping.kept);
        let entries = read_entries(&written.bytes, "m0", &listed, &mapping).unwrap();
        assert_eq!(entries.len(), 3);
        let paths: Vec<&str> = entries.iter().map(|e| e.file_path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "s3://b/wh/t/data/s=a b/ts_day=2024-01-01/f1.parquet",
                "s3://b/wh/t/data/s=__HIVE_DEFAULT_PARTITION__/f2.parquet",
                "s3://b/wh/t/data/s=zz/f3.parquet",
            ]
        );
        for (e, f) in entries.iter().zip(&files) {
            assert_eq!(e.content, Content::Data);
            assert_eq!(e.file_format, "PARQUET");
            assert_eq!(e.partition, f.partition, "{}", f.path);
            assert_eq!((e.record_count, e.file_size), (f.record_count as i64, 1234));
            // ADDED: inherited from the manifest list.
            assert_eq!(e.sequence_number, 5);
            // The list column (7) has no Iceberg metrics: they are for primitive columns.
            let primitive: Vec<&ColumnStats> = f.column_stats.iter().filter(|s| s.field_id != 7).collect();
            for s in &primitive {
                assert_eq!(e.null_counts.get(&s.field_id), Some(&(s.null_count as i64)));
                let dt = spec.schema.field_by_id(s.field_id).unwrap().field_type.to_arrow();
                let lower = e.lower.get(&s.field_id).and_then(|b| decode_bound(b, &dt));
                let upper = e.upper.get(&s.field_id).and_then(|b| decode_bound(b, &dt));
                assert_eq!((lower, upper), (s.min.clone(), s.max.clone()), "column {}", s.field_id);
            }
            let with_stats: HashSet<i32> = primitive.iter().map(|s| s.field_id).collect();
            assert_eq!(e.null_counts.keys().copied().collect::<HashSet<_>>(), with_stats);
        }
        // Float bounds come with a NaN count of 0; without bounds the count is unknown.
        assert_eq!(entries[0].nan_counts.get(&5), Some(&0));
        assert_eq!(entries[1].nan_counts.get(&5), None);
        assert!(entries[2].lower.is_empty() && entries[2].null_counts.is_empty());
        assert_eq!(entries[0].lower.get(&4), Some(&vec![0xFF]));

        // The manifest list's summaries cover the same partition values.
        let summaries = mapping.summaries(listed.partitions.as_deref());
        assert_eq!(summaries[0].lower_bound.as_deref(), Some("a b"));
        assert_eq!(summaries[0].upper_bound.as_deref(), Some("zz"));
        assert!(summaries[0].contains_null);
        assert_eq!(summaries[1].lower_bound.as_deref(), Some("1969-12-31"));
        assert!(summaries[6].contains_null && summaries[6].lower_bound.is_none());
    }

    #[test]
    fn existing_entries_carry_their_snapshot_and_sequence_number() {
        let spec = table_spec();
        let w = ManifestWrite {
            status: EntryStatus::Existing,
            snapshot_id: Some(41),
            sequence_number: Some(2),
            v3: false,
            content: ManifestContent::Data,
            ..added(&spec)
        };
        let written = write_manifest(&w, &files()[..1]).unwrap();
        assert_eq!((written.added_files, written.existing_files), (0, 1));
        assert_eq!((written.added_rows, written.existing_rows), (0, 10));
        let entry = written.list_entry("/m.avro".into(), 50, 9);
        assert_eq!((entry.sequence_number, entry.min_sequence_number), (9, 2));
        let list = write_manifest_list(50, Some(49), 9, None, &[entry]).unwrap();
        let listed = read_manifest_list(&list, "list").unwrap().remove(0);
        let entries = read_entries(&written.bytes, "m", &listed, &mapping(&spec)).unwrap();
        assert_eq!(entries[0].sequence_number, 2);
        let file = AvroFile::decode(&written.bytes, "m").unwrap();
        let ids = crate::iceberg::avro_records::RecordIds::of(&file.schema, "m").unwrap();
        assert_eq!(ids.int(&file.records[0], 0), Some(0));
        assert_eq!(ids.long(&file.records[0], 1), Some(41));
        assert_eq!(ids.long(&file.records[0], 4), Some(2));

        let w = ManifestWrite {
            sequence_number: None,
            v3: false,
            content: ManifestContent::Data,
            ..w
        };
        let err = write_manifest(&w, &files()).unwrap_err().to_string();
        assert!(err.contains("EXISTING entries need"), "{err}");
    }

    #[test]
    fn header_and_schema_are_what_iceberg_readers_expect() {
        let spec = table_spec();
        let written = write_manifest(&added(&spec), &files()).unwrap();
        let file = AvroFile::decode(&written.bytes, "m").unwrap();
        let schema: Json = serde_json::from_str(file.meta("schema").unwrap()).unwrap();
        assert_eq!(schema, schema_json(&spec).unwrap());
        let partition_spec: Json = serde_json::from_str(file.meta("partition-spec").unwrap()).unwrap();
        assert_eq!(partition_spec[1]["name"], "ts-day");
        assert_eq!(partition_spec[1]["field-id"], 1001);
        assert_eq!(file.meta("partition-spec-id"), Some("3"));
        assert_eq!(file.meta("schema-id"), Some("3"));
        assert_eq!(file.meta("format-version"), Some("2"));
        assert_eq!(file.meta("content"), Some("data"));

        let partition = PartitionType::of(&spec).unwrap().schema;
        let f = &partition["fields"];
        assert_eq!(f[1]["name"], "ts_x2Dday");
        assert_eq!(f[1]["iceberg-field-name"], "ts-day");
        assert_eq!(f[1]["type"], json!(["null", {"type": "int", "logicalType": "date"}]));
        assert_eq!(f[1]["field-id"], 1001);
        assert!(f[0].get("iceberg-field-name").is_none());
        assert_eq!(f[2]["type"][1], "int");
        assert_eq!(
            f[4]["type"][1],
            json!({"type": "fixed", "name": "decimal_9_2", "size": 4, "logicalType": "decimal", "precision": 9, "scale": 2})
        );
        // The second decimal(9,2) is defined again under a name of its own.
        assert_eq!(f[5]["type"][1]["name"], "decimal_9_2_1005");
        assert_eq!(f[5]["type"][1]["size"], 4);
        assert_eq!(f[6]["type"][1], "long");
        assert_eq!(f[8]["type"][1]["size"], 16);
        assert_eq!(
            f[9]["type"][1],
            json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false})
        );
        let entry = entry_schema(partition, false, false);
        let data_file = &entry["fields"][4]["type"]["fields"];
        assert_eq!(data_file[9]["field-id"], 137);
        assert_eq!(data_file[9]["type"][1]["logicalType"], "map");
        assert_eq!(data_file[9]["type"][1]["items"]["fields"][0]["field-id"], 138);
    }

    #[test]
    fn bad_files_are_clear_errors() {
        let spec = table_spec();
        let mut f = files().remove(0);
        f.partition[1] = ScalarValue::Int32(Some(1));
        let err = write_manifest(&added(&spec), &[f]).unwrap_err().to_string();
        assert!(err.contains("\"ts_x2Dday\" is not a Date32"), "{err}");
        // A null is a null, typed or not.
        let mut f = files().remove(0);
        f.partition[1] = ScalarValue::Null;
        f.partition[6] = ScalarValue::Utf8(None);
        let written = write_manifest(&added(&spec), &[f]).unwrap();
        assert!(written.partitions[1].contains_null && written.partitions[6].contains_null);
        let mut f = files().remove(0);
        f.path = "data/100%.parquet".into();
        let err = write_manifest(&added(&spec), &[f]).unwrap_err().to_string();
        assert!(err.contains("is not URI-encoded"), "{err}");
        let mut f = files().remove(0);
        f.spec_id = 1;
        let err = write_manifest(&added(&spec), &[f]).unwrap_err().to_string();
        assert!(err.contains("belongs to spec 1"), "{err}");
    }

    #[test]
    fn names_and_sizes() {
        assert_eq!(avro_name("ts-day"), "ts_x2Dday");
        assert_eq!(avro_name("1st"), "_1st");
        assert_eq!(avro_name("a.b c"), "a_x2Eb_x20c");
        assert_eq!(avro_name("ok_9"), "ok_9");
        let sizes: Vec<usize> = [1, 2, 3, 9, 10, 18, 19, 38].iter().map(|p| decimal_bytes(*p)).collect();
        assert_eq!(sizes, [1, 1, 2, 4, 5, 8, 9, 16]);
    }

    #[test]
    fn unpartitioned_manifest() {
        let mut spec = table_spec();
        spec.partition_spec.fields.clear();
        let mut f = files().remove(0);
        f.partition.clear();
        let written = write_manifest(&added(&spec), &[f]).unwrap();
        assert!(written.partitions.is_empty());
        let entry = written.list_entry("/m".into(), 1, 1);
        let list = write_manifest_list(1, None, 1, None, &[entry]).unwrap();
        let listed = read_manifest_list(&list, "list").unwrap().remove(0);
        let entries = read_entries(&written.bytes, "m", &listed, &mapping(&spec)).unwrap();
        assert!(entries[0].partition.is_empty());
    }
}
