//! The Value-tree decoder the direct one (`iceberg::manifest_entries`) replaced, kept as a
//! test oracle only: every manifest the tests decode is decoded both ways
//! and the batches compared. Not compiled outside tests.

use std::collections::{HashMap, HashSet};

use apache_avro::types::Value;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;

use super::manifest::{Content, Entry};
use super::metadata::Rebase;
use crate::error::{Error, Result};
use crate::formats::manifest_batch::{ForeignDataFile, foreign_manifest_batch};
use crate::iceberg::avro_records::{AvroFile, RecordIds, as_i64, avro_as, avro_to_scalar, unwrap};
use crate::iceberg::bounds_read::decode_bound;
use crate::iceberg::convert::SpecMapping;
use crate::iceberg::manifest_list_read::ManifestEntryFile;
use crate::manifest::{ColumnStats, DataFile};
use crate::spec::TableSpec;

/// An Avro value as the scalar its own type suggests (for partition fields
/// whose transform is unknown: compared, never pruned on).
pub fn avro_natural(value: &Value) -> ScalarValue {
    let value = unwrap(value);
    let hint = match value {
        Value::Date(_) => DataType::Date32,
        Value::Int(_) => DataType::Int32,
        Value::TimestampMicros(_) | Value::LocalTimestampMicros(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
        Value::TimestampNanos(_) | Value::LocalTimestampNanos(_) => DataType::Timestamp(TimeUnit::Nanosecond, None),
        Value::TimeMicros(_) => DataType::Time64(TimeUnit::Microsecond),
        _ => DataType::Int64,
    };
    if matches!(value, Value::Null) {
        return ScalarValue::Null;
    }
    avro_as(value, &hint).unwrap_or(ScalarValue::Null)
}

/// Decode a manifest's live entries; `what` names the file for errors.
pub fn read_entries_old(
    bytes: &[u8],
    what: &str,
    listed: &ManifestEntryFile,
    spec: &SpecMapping,
) -> Result<Vec<Entry>> {
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
                .filter_map(|(k, v)| Some((k, as_i64(v)?)))
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
            content_size: file_ids.long(data_file, 145),
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

/// The whole manifest batch of a data manifest, the old way.
pub fn batch_old(
    bytes: &[u8],
    listed: &ManifestEntryFile,
    mapping: &SpecMapping,
    rebase: &Rebase,
) -> Result<RecordBatch> {
    let entries = read_entries_old(bytes, &listed.path, listed, mapping)?;
    let columns = column_types(&mapping.spec);
    let mut files = Vec::with_capacity(entries.len());
    for e in entries {
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
        files.push(ForeignDataFile {
            file: DataFile {
                path: rebase.stored(&e.file_path)?,
                file_size: e.file_size.max(0) as u64,
                record_count: e.record_count.max(0) as u64,
                spec_id: listed.spec_id,
                partition: typed,
                partition_strings: strings,
                column_stats,
                pending: None,
                first_row_id: None,
                sort_order_id: None,
                referenced_data_file: None,
                blob: None,
            },
            known_null_counts: known,
        });
    }
    foreign_manifest_batch(&mapping.spec, &files)
}
