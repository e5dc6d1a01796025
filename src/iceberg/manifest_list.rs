//! A snapshot's Iceberg manifest list (Avro, format v2): one record per manifest.
//!
//! | id  | field                  | id  | field                                  |
//! |-----|------------------------|-----|----------------------------------------|
//! | 500 | manifest_path          | 504 | added_files_count                      |
//! | 501 | manifest_length        | 505 | existing_files_count                   |
//! | 502 | partition_spec_id      | 506 | deleted_files_count                    |
//! | 517 | content (0 data)       | 512–514 | added / existing / deleted rows    |
//! | 515 | sequence_number        | 507 | partitions: per field 509 contains_null, 518 contains_nan, 510/511 bounds |
//! | 516 | min_sequence_number    | 519 | key_metadata (null)                    |
//! | 503 | added_snapshot_id      | 520 | first_row_id (v3 only: row lineage)    |
//!
//! The file's key-value metadata names the snapshot (`snapshot-id`,
//! `parent-snapshot-id` — `"null"` for the first, as Java writes it —
//! `sequence-number`, `format-version`).
//!
//! The partition summaries bound a manifest's partition values so readers
//! skip it whole; [`partition_summaries`] computes them from the files' typed
//! values. Floats follow our stats (`manifest::stats`): NaN only sets
//! `contains_nan`, and a zero bound is widened (`-0.0` below, `0.0` above).

use std::cmp::Ordering;

use apache_avro::types::Value;
use datafusion::common::ScalarValue;
use serde_json::{Value as Json, json};

use super::avro::{field, list, null, opt, optional, write_container};
use super::bounds::encode_bound;
use crate::error::{Error, Result};
use crate::spec::{DataFile, TableSpec};
use crate::values::widen_zero;

/// One partition field's summary over a manifest, bounds in single-value binary.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSummaryBinary {
    pub contains_null: bool,
    /// `Some(false)` for types that have no NaN.
    pub contains_nan: Option<bool>,
    pub lower: Option<Vec<u8>>,
    pub upper: Option<Vec<u8>>,
}

/// One manifest as a manifest list describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestListEntry {
    /// Absolute, as Iceberg paths are.
    pub manifest_path: String,
    pub manifest_length: i64,
    pub partition_spec_id: i32,
    /// 0 data, 1 deletes.
    pub content: i32,
    /// Of the snapshot that added the manifest.
    pub sequence_number: i64,
    /// The smallest data sequence number of its entries.
    pub min_sequence_number: i64,
    pub added_snapshot_id: i64,
    pub added_files_count: i32,
    pub existing_files_count: i32,
    pub deleted_files_count: i32,
    pub added_rows_count: i64,
    pub existing_rows_count: i64,
    pub deleted_rows_count: i64,
    /// One per partition field of the manifest's spec, in spec order;
    /// `None` writes no summaries (readers then cannot skip the manifest).
    pub partitions: Option<Vec<FieldSummaryBinary>>,
    /// Iceberg v3: the first row id its files without one inherit from.
    pub first_row_id: Option<i64>,
}

fn schema(v3: bool) -> Json {
    let summary = json!({
        "type": "record",
        "name": "r508",
        "fields": [
            field("contains_null", 509, json!("boolean")),
            optional("contains_nan", 518, json!("boolean")),
            optional("lower_bound", 510, json!("bytes")),
            optional("upper_bound", 511, json!("bytes")),
        ],
    });
    let mut schema = json!({
        "type": "record",
        "name": "manifest_file",
        "fields": [
            field("manifest_path", 500, json!("string")),
            field("manifest_length", 501, json!("long")),
            field("partition_spec_id", 502, json!("int")),
            field("content", 517, json!("int")),
            field("sequence_number", 515, json!("long")),
            field("min_sequence_number", 516, json!("long")),
            field("added_snapshot_id", 503, json!("long")),
            field("added_files_count", 504, json!("int")),
            field("existing_files_count", 505, json!("int")),
            field("deleted_files_count", 506, json!("int")),
            field("added_rows_count", 512, json!("long")),
            field("existing_rows_count", 513, json!("long")),
            field("deleted_rows_count", 514, json!("long")),
            optional("partitions", 507, list(508, summary)),
            optional("key_metadata", 519, json!("bytes")),
        ],
    });
    if v3 && let Some(fields) = schema["fields"].as_array_mut() {
        fields.push(optional("first_row_id", 520, json!("long")));
    }
    schema
}

fn summary_record(s: &FieldSummaryBinary) -> Value {
    Value::Record(vec![
        ("contains_null".into(), Value::Boolean(s.contains_null)),
        ("contains_nan".into(), opt(s.contains_nan.map(Value::Boolean))),
        ("lower_bound".into(), opt(s.lower.clone().map(Value::Bytes))),
        ("upper_bound".into(), opt(s.upper.clone().map(Value::Bytes))),
    ])
}

fn record(e: &ManifestListEntry, v3: bool) -> Value {
    let partitions = e
        .partitions
        .as_ref()
        .map(|p| Value::Array(p.iter().map(summary_record).collect()));
    let mut fields = vec![
        ("manifest_path".into(), Value::String(e.manifest_path.clone())),
        ("manifest_length".into(), Value::Long(e.manifest_length)),
        ("partition_spec_id".into(), Value::Int(e.partition_spec_id)),
        ("content".into(), Value::Int(e.content)),
        ("sequence_number".into(), Value::Long(e.sequence_number)),
        ("min_sequence_number".into(), Value::Long(e.min_sequence_number)),
        ("added_snapshot_id".into(), Value::Long(e.added_snapshot_id)),
        ("added_files_count".into(), Value::Int(e.added_files_count)),
        ("existing_files_count".into(), Value::Int(e.existing_files_count)),
        ("deleted_files_count".into(), Value::Int(e.deleted_files_count)),
        ("added_rows_count".into(), Value::Long(e.added_rows_count)),
        ("existing_rows_count".into(), Value::Long(e.existing_rows_count)),
        ("deleted_rows_count".into(), Value::Long(e.deleted_rows_count)),
        ("partitions".into(), opt(partitions)),
        ("key_metadata".into(), null()),
    ];
    if v3 {
        fields.push(("first_row_id".into(), opt(e.first_row_id.map(Value::Long))));
    }
    Value::Record(fields)
}

/// The manifest list (Avro bytes) of snapshot `snapshot_id`; format
/// version 3 (with `first_row_id`) when `first_row_id` (the snapshot's) is
/// given, 2 otherwise.
pub fn write_manifest_list(
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    first_row_id: Option<i64>,
    entries: &[ManifestListEntry],
) -> Result<Vec<u8>> {
    let v3 = first_row_id.is_some();
    let parent = parent_snapshot_id.map_or_else(|| "null".to_string(), |p| p.to_string());
    let mut metadata = vec![
        ("snapshot-id", snapshot_id.to_string()),
        ("parent-snapshot-id", parent),
        ("sequence-number", sequence_number.to_string()),
        ("format-version", if v3 { "3" } else { "2" }.to_string()),
    ];
    if let Some(first) = first_row_id {
        metadata.push(("first-row-id", first.to_string()));
    }
    let records = entries.iter().map(|e| record(e, v3)).collect();
    write_container(
        &schema(v3),
        &metadata,
        records,
        &format!("the Iceberg manifest list of snapshot {snapshot_id}"),
    )
}

/// Iceberg v3 row lineage for a new manifest list: each data manifest
/// without a `first_row_id` (a slot `None`, with its rows) gets the next
/// range from `first`, in list order. Returns the next free row id.
pub fn assign_row_id_ranges<'a>(
    first: i64,
    manifests: impl IntoIterator<Item = (&'a mut Option<i64>, i64)>,
) -> Result<i64> {
    let mut next = first;
    for (slot, rows) in manifests {
        if slot.is_none() {
            *slot = Some(next);
            next = next
                .checked_add(rows.max(0))
                .ok_or_else(|| Error::Format("row ids exceed an Iceberg long".into()))?;
        }
    }
    Ok(next)
}

/// Per partition field of `spec`: whether `files` hold nulls or NaNs in it,
/// and the bounds of the rest.
pub fn partition_summaries(spec: &TableSpec, files: &[DataFile]) -> Result<Vec<FieldSummaryBinary>> {
    let fields = &spec.partition_spec.fields;
    let mut acc: Vec<Summary> = fields.iter().map(|_| Summary::default()).collect();
    for file in files {
        if file.partition.len() != fields.len() {
            return Err(Error::Invalid(format!(
                "data file {} has {} partition values, spec {} has {} partition fields",
                file.path,
                file.partition.len(),
                spec.spec_id,
                fields.len()
            )));
        }
        for ((s, value), f) in acc.iter_mut().zip(&file.partition).zip(fields) {
            s.add(value).map_err(|why| {
                Error::Invalid(format!(
                    "partition value {value:?} of field {:?} in data file {}: {why}",
                    f.name, file.path
                ))
            })?;
        }
    }
    acc.into_iter().map(Summary::finish).collect()
}

/// Running summary of one partition field.
#[derive(Default)]
struct Summary {
    contains_null: bool,
    contains_nan: bool,
    floating: bool,
    lower: Option<ScalarValue>,
    upper: Option<ScalarValue>,
}

impl Summary {
    fn add(&mut self, value: &ScalarValue) -> std::result::Result<(), String> {
        self.floating |= value.data_type().is_floating();
        if value.is_null() {
            self.contains_null = true;
            return Ok(());
        }
        if is_nan(value) {
            self.contains_nan = true;
            return Ok(());
        }
        if self
            .lower
            .as_ref()
            .is_none_or(|l| compare(value, l) == Some(Ordering::Less))
        {
            self.lower = Some(value.clone());
        }
        if self
            .upper
            .as_ref()
            .is_none_or(|u| compare(value, u) == Some(Ordering::Greater))
        {
            self.upper = Some(value.clone());
        }
        if let Some(l) = &self.lower
            && compare(value, l).is_none()
        {
            return Err(format!("not comparable with the other values of the field ({l:?})"));
        }
        Ok(())
    }

    fn finish(self) -> Result<FieldSummaryBinary> {
        let bound = |v: Option<ScalarValue>, lower: bool| -> Result<Option<Vec<u8>>> {
            let Some(v) = v.map(|v| widen_zero(v, lower)) else {
                return Ok(None);
            };
            match encode_bound(&v) {
                Some(b) => Ok(Some(b)),
                None => crate::invalid!("partition value {v:?} has no Iceberg binary form"),
            }
        };
        Ok(FieldSummaryBinary {
            contains_null: self.contains_null,
            contains_nan: Some(self.floating && self.contains_nan),
            lower: bound(self.lower, true)?,
            upper: bound(self.upper, false)?,
        })
    }
}

fn is_nan(v: &ScalarValue) -> bool {
    match v {
        ScalarValue::Float32(Some(f)) => f.is_nan(),
        ScalarValue::Float64(Some(f)) => f.is_nan(),
        _ => false,
    }
}

/// Iceberg's order: floats in IEEE total order (`-0.0 < 0.0`), the rest as DataFusion orders them.
fn compare(a: &ScalarValue, b: &ScalarValue) -> Option<Ordering> {
    match (a, b) {
        (ScalarValue::Float32(Some(x)), ScalarValue::Float32(Some(y))) => Some(x.total_cmp(y)),
        (ScalarValue::Float64(Some(x)), ScalarValue::Float64(Some(y))) => Some(x.total_cmp(y)),
        _ => a.partial_cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iceberg::avro_records::AvroFile;
    use crate::iceberg::manifest_list_read::{RawFieldSummary, read_manifest_list};
    use crate::spec::{PartitionField, PartitionSpec, Schema};
    use crate::transform::Transform;

    fn entry(path: &str, partitions: Vec<FieldSummaryBinary>) -> ManifestListEntry {
        ManifestListEntry {
            manifest_path: path.to_string(),
            manifest_length: 4321,
            partition_spec_id: 2,
            content: 0,
            sequence_number: 7,
            min_sequence_number: 3,
            added_snapshot_id: 99,
            added_files_count: 2,
            existing_files_count: 5,
            deleted_files_count: 0,
            added_rows_count: 20,
            existing_rows_count: 500,
            deleted_rows_count: 0,
            partitions: Some(partitions),
            first_row_id: None,
        }
    }

    #[test]
    fn manifest_list_round_trips_through_our_reader() {
        let day = FieldSummaryBinary {
            contains_null: false,
            contains_nan: Some(false),
            lower: Some(19723i32.to_le_bytes().to_vec()),
            upper: Some(19724i32.to_le_bytes().to_vec()),
        };
        let nulls = FieldSummaryBinary {
            contains_null: true,
            contains_nan: None,
            lower: None,
            upper: None,
        };
        let entries = [
            entry("s3://b/wh/t/metadata/m1.avro", vec![day.clone(), nulls.clone()]),
            entry("s3://b/wh/t/metadata/m2.avro", vec![]),
        ];
        let bytes = write_manifest_list(100, Some(99), 7, None, &entries).unwrap();
        let read = read_manifest_list(&bytes, "list").unwrap();
        assert_eq!(read.len(), 2);
        let m = &read[0];
        assert_eq!(m.path, "s3://b/wh/t/metadata/m1.avro");
        assert_eq!((m.length, m.spec_id, m.content), (4321, 2, 0));
        assert_eq!((m.sequence_number, m.added_snapshot_id), (7, 99));
        assert_eq!((m.files, m.rows), (Some(7), Some(520)));
        let raw = |s: &FieldSummaryBinary| RawFieldSummary {
            contains_null: s.contains_null,
            contains_nan: s.contains_nan,
            lower: s.lower.clone(),
            upper: s.upper.clone(),
        };
        assert_eq!(m.partitions, Some(vec![raw(&day), raw(&nulls)]));
        assert_eq!(read[1].partitions, Some(vec![]));

        let file = AvroFile::decode(&bytes, "list").unwrap();
        assert_eq!(file.meta("snapshot-id"), Some("100"));
        assert_eq!(file.meta("parent-snapshot-id"), Some("99"));
        assert_eq!(file.meta("sequence-number"), Some("7"));
        assert_eq!(file.meta("format-version"), Some("2"));
        let first = write_manifest_list(1, None, 1, None, &[]).unwrap();
        let file = AvroFile::decode(&first, "list").unwrap();
        assert_eq!(file.meta("parent-snapshot-id"), Some("null"));
        assert!(file.records.is_empty());
    }

    fn spec(types: &[(&str, &str, Transform)]) -> TableSpec {
        let fields: Vec<String> = types
            .iter()
            .enumerate()
            .map(|(i, (name, ty, _))| format!(r#"{{"id":{},"name":"{name}","required":false,"type":"{ty}"}}"#, i + 1))
            .collect();
        let schema: Schema = serde_json::from_str(&format!(r#"{{"fields":[{}]}}"#, fields.join(","))).unwrap();
        let fields = types
            .iter()
            .enumerate()
            .map(|(i, (name, _, t))| PartitionField {
                field_id: 1000 + i as i32,
                source_id: i as i32 + 1,
                transform: *t,
                name: format!("{name}_p"),
            })
            .collect();
        TableSpec {
            spec_id: 0,
            schema,
            partition_spec: PartitionSpec { fields },
            iceberg_schema_id: None,
            iceberg_spec_id: None,
        }
    }

    fn file(partition: Vec<ScalarValue>) -> DataFile {
        DataFile {
            path: "data/f.parquet".into(),
            file_size: 1,
            record_count: 1,
            spec_id: 0,
            partition_strings: vec![None; partition.len()],
            partition,
            column_stats: vec![],
            pending: None,
            first_row_id: None,
            sort_order_id: None,
            referenced_data_file: None,
            blob: None,
        }
    }

    #[test]
    fn summaries_bound_values_and_flag_nulls_and_nans() {
        let spec = spec(&[
            ("s", "string", Transform::Identity),
            ("x", "double", Transform::Identity),
            ("y", "float", Transform::Identity),
            ("n", "long", Transform::Void),
        ]);
        let f = |s: Option<&str>, x: f64, y: f32| {
            file(vec![
                ScalarValue::Utf8(s.map(str::to_string)),
                ScalarValue::Float64(Some(x)),
                ScalarValue::Float32(Some(y)),
                ScalarValue::Int64(None),
            ])
        };
        let files = [
            f(Some("b"), 0.0, 2.0),
            f(None, f64::NAN, -1.0),
            f(Some("a"), 3.5, 0.0),
            f(Some("c"), 1.0, -0.0),
        ];
        let s = partition_summaries(&spec, &files).unwrap();
        assert_eq!(
            s[0],
            FieldSummaryBinary {
                contains_null: true,
                contains_nan: Some(false),
                lower: Some(b"a".to_vec()),
                upper: Some(b"c".to_vec()),
            }
        );
        // NaN flagged and left out of the bounds; the zero at the bottom becomes -0.0.
        assert!(s[1].contains_nan == Some(true) && !s[1].contains_null);
        assert_eq!(s[1].lower, Some((-0.0f64).to_le_bytes().to_vec()));
        assert_eq!(s[1].upper, Some(3.5f64.to_le_bytes().to_vec()));
        assert_eq!(s[2].contains_nan, Some(false));
        assert_eq!(s[2].lower, Some((-1.0f32).to_le_bytes().to_vec()));
        assert_eq!(s[2].upper, Some(2.0f32.to_le_bytes().to_vec()));
        assert_eq!(
            s[3],
            FieldSummaryBinary {
                contains_null: true,
                contains_nan: Some(false),
                lower: None,
                upper: None,
            }
        );
        // Zeros at the top: the upper bound is +0.0 whichever zero was seen.
        let s = partition_summaries(&spec, &[f(Some("a"), -0.0, -0.0), f(Some("a"), -2.0, -0.0)]).unwrap();
        assert_eq!(s[1].upper, Some(0.0f64.to_le_bytes().to_vec()));
        assert_eq!(s[2].upper, Some(0.0f32.to_le_bytes().to_vec()));
        assert_eq!(s[2].lower, Some((-0.0f32).to_le_bytes().to_vec()));
        // Only NaNs: no bounds.
        let s = partition_summaries(&spec, &[f(Some("a"), f64::NAN, 1.0)]).unwrap();
        assert_eq!((s[1].lower.as_ref(), s[1].upper.as_ref()), (None, None));
    }

    #[test]
    fn summaries_of_mismatched_files_are_an_error() {
        let spec = spec(&[("d", "date", Transform::Identity)]);
        let err = partition_summaries(&spec, &[file(vec![])]).unwrap_err().to_string();
        assert!(err.contains("has 0 partition values, spec 0 has 1"), "{err}");
        let files = [
            file(vec![ScalarValue::Date32(Some(1))]),
            file(vec![ScalarValue::Utf8(Some("x".into()))]),
        ];
        let err = partition_summaries(&spec, &files).unwrap_err().to_string();
        assert!(err.contains("\"d_p\"") && err.contains("not comparable"), "{err}");
    }
}
