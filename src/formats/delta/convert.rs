//! A replayed Delta log in our shape: one table spec, manifest batches.
//!
//! Delta has one partition layout per table (changing it rewrites the
//! table), so there is one table spec: an identity field per partition
//! column, plus a time transform of the source column for each generated
//! partition column we recognise (see `generated`). For `delta/dated`
//! (`id, d DATE, n INT, v`, partitioned by `d, n`):
//!
//! | field | transform      | value of file `d=1969-12-31/n=0/…`          |
//! |-------|----------------|---------------------------------------------|
//! | 1000  | identity(d)    | `1969-12-31` (from `partitionValues`, typed by `values::parse`) |
//! | 1001  | identity(n)    | `0`                                         |
//!
//! Kernel hands over the live files as Arrow columns (typed partition
//! values and statistics); the manifest columns are built from them a
//! column at a time, never a file at a time. The files are sorted by
//! partition and cut into manifests of [`FILES_PER_MANIFEST`], each with
//! partition summaries, so summary pruning skips whole groups as it does
//! for our own manifests.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray, StringBuilder,
    StructArray, make_array, new_empty_array, new_null_array,
};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::compute::kernels::boolean::not;
use datafusion::arrow::compute::kernels::nullif::nullif;
use datafusion::arrow::compute::{SortColumn, cast, lexsort_to_indices, take};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Int64Type, Schema as ArrowSchema};
use datafusion::common::ScalarValue;
use delta_kernel::engine::arrow_conversion::TryFromKernel;

use super::generated::{derive, derived_value};
use super::log::LogSnapshot;
use super::stats::stats_bound;
use crate::error::{Error, Result};
use crate::manifest::format::{NULL_COUNT, STATS, manifest_schema, partition_fields, stats_fields};
use crate::manifest::source::{ManifestSource, project_columns};
use crate::spec::types::{NestedField, Type};
use crate::spec::{ManifestFile, PartitionField, PartitionSpec, Schema, TableSpec};
use crate::store::TableLocation;
use crate::transform::Transform;

/// Files per synthetic manifest.
pub const FILES_PER_MANIFEST: usize = 1024;

/// The table converted: spec, per-file deletes, manifests with their batches.
#[derive(Debug)]
pub struct Converted {
    pub spec: TableSpec,
    /// Column index → identity partition field index (columns not stored in files).
    pub constants: Vec<(usize, usize)>,
    /// File column name → field id (physical names under column mapping).
    pub physical_names: HashMap<String, i32>,
    pub manifests: Vec<ManifestFile>,
    pub batches: HashMap<String, RecordBatch>,
    /// Deleted row indexes per file (by stored path).
    pub deleted: HashMap<String, Vec<u64>>,
    /// Whether every file recorded its row count.
    pub counts_exact: bool,
}

/// Our schema for the log's schema; field ids are the column-mapping ids when present.
fn schema(log: &LogSnapshot, table: &str) -> Result<Schema> {
    let top_ids: Vec<i32> = log
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| c.mapping_id.map(|id| id as i32).unwrap_or(i as i32 + 1))
        .collect();
    let mut next = top_ids.iter().copied().max().unwrap_or(0);
    let mut next_id = || {
        next += 1;
        next
    };
    let mut fields = Vec::with_capacity(log.columns.len());
    for (c, id) in log.columns.iter().zip(top_ids) {
        let arrow = DataType::try_from_kernel(c.field.data_type()).map_err(|e| {
            Error::Invalid(format!(
                "Delta table {table}: column {:?} has an unsupported type: {e}",
                c.name
            ))
        })?;
        let field_type = Type::from_arrow(&arrow, &mut next_id)
            .map_err(|e| Error::Invalid(format!("Delta table {table}: column {:?}: {e}", c.name)))?;
        if field_type == Type::Variant {
            return Err(Error::Invalid(format!(
                "Delta table {table}: column {:?} is a VARIANT, which is not read from Delta tables yet",
                c.name
            )));
        }
        fields.push(NestedField {
            id,
            name: c.name.clone(),
            required: !c.field.is_nullable(),
            field_type,
            doc: None,
        });
    }
    Ok(Schema { fields })
}

/// Convert a replayed log; `table` names it for errors.
pub fn convert(log: &LogSnapshot, table: &str) -> Result<Converted> {
    let schema = schema(log, table)?;
    let arrow_type = |name: &str| {
        schema
            .field_by_name(name)
            .map(|f| crate::spec::types::strip_metadata(&f.field_type.to_arrow()))
    };
    let mut fields = Vec::new();
    let mut constants = Vec::new();
    for (i, name) in log.partition_columns.iter().enumerate() {
        let Some(index) = schema.fields.iter().position(|f| &f.name == name) else {
            return Err(Error::Format(format!(
                "Delta table {table}: partition column {name:?} is not in the schema"
            )));
        };
        constants.push((index, i));
        fields.push(PartitionField {
            field_id: 1000 + i as i32,
            source_id: schema.fields[index].id,
            transform: Transform::Identity,
            name: name.clone(),
        });
    }
    // Generated partition columns that are time transforms of another column.
    let mut derived = Vec::new();
    for (i, name) in log.partition_columns.iter().enumerate() {
        let Some(column) = log.columns.iter().find(|c| &c.name == name) else {
            continue;
        };
        let Some(d) = column
            .generation_expression
            .as_deref()
            .and_then(|e| derive(e, arrow_type))
        else {
            continue;
        };
        let Some(source) = schema.field_by_name(&d.source) else {
            continue;
        };
        if log.partition_columns.contains(&source.name) {
            continue;
        }
        derived.push((i, d.transform, source.id));
    }

    let files = &log.files;
    let rows = files.num_rows();
    let paths = string_column(files, "path", table)?;
    for p in paths.iter().flatten() {
        stored_path(p, table)?;
    }
    let sizes: Int64Array = match files.column_by_name("size") {
        Some(c) => cast(c, &DataType::Int64)?.as_primitive::<Int64Type>().clone(),
        None => return Err(Error::Format(format!("Delta table {table}: kernel gave no file sizes"))),
    };
    let stats = files.column_by_name("stats_parsed").map(|c| c.as_struct().clone());
    let record_counts: Int64Array = match stats.as_ref().and_then(|s| Some((s, s.column_by_name("numRecords")?))) {
        Some((parent, counts)) => cast(&with_parent_nulls(counts, parent), &DataType::Int64)?
            .as_primitive::<Int64Type>()
            .clone(),
        None => Int64Array::new_null(rows),
    };
    let counts_exact = record_counts.null_count() == 0;
    for path in log.deleted.keys() {
        let row = paths.iter().position(|p| p == Some(path.as_str()));
        if row.is_none_or(|r| record_counts.is_null(r)) {
            return Err(Error::Invalid(format!(
                "Delta table {table}: file {path} has a deletion vector but no numRecords statistic; reading it is not supported"
            )));
        }
    }

    // Typed partition values of every file (kernel parsed them from the
    // logged strings, physical names).
    let parsed = files
        .column_by_name("partitionValues_parsed")
        .map(|c| c.as_struct().clone());
    let mut partitions: Vec<ArrayRef> = Vec::with_capacity(fields.len() + derived.len());
    for name in &log.partition_columns {
        let physical = log
            .columns
            .iter()
            .find(|c| &c.name == name)
            .map(|c| c.physical_name.as_str())
            .unwrap_or(name);
        let dt = arrow_type(name).unwrap_or(DataType::Utf8);
        // A version without files (a table just created) has no values.
        let none = (rows == 0).then(|| datafusion::arrow::array::new_empty_array(&dt));
        let raw = parsed
            .as_ref()
            .and_then(|p| Some(with_parent_nulls(p.column_by_name(physical)?, p)))
            .or(none)
            .ok_or_else(|| {
                Error::Format(format!(
                    "Delta table {table}: no values of partition column {name:?} in the log"
                ))
            })?;
        partitions.push(cast(&empty_as_null(&raw)?, &dt).map_err(|e| {
            Error::Format(format!(
                "Delta table {table}: partition values of column {name:?} are not {dt}: {e}"
            ))
        })?);
    }
    // A derived field is kept only if every file's value converts.
    for (i, transform, source_id) in derived {
        let converted: Option<Vec<ScalarValue>> = (0..rows)
            .map(|row| derived_value(transform, &ScalarValue::try_from_array(&partitions[i], row).ok()?))
            .collect();
        let Some(values) = converted else { continue };
        let field_id = 1000 + (fields.len() as i32);
        let source_name = schema
            .field_by_id(source_id)
            .map(|f| f.name.clone())
            .unwrap_or_default();
        fields.push(PartitionField {
            field_id,
            source_id,
            transform,
            name: PartitionSpec::default_name(&transform, &source_name),
        });
        partitions.push(match values.is_empty() {
            true => new_empty_array(
                &derived_value(transform, &ScalarValue::Null).map_or(DataType::Int32, |v| v.data_type()),
            ),
            false => ScalarValue::iter_to_array(values)?,
        });
    }
    let spec = TableSpec::new(0, schema.clone(), PartitionSpec { fields });
    let part_fields = partition_fields(&spec)?;
    for (array, field) in partitions.iter_mut().zip(part_fields.iter()) {
        if array.data_type() != field.data_type() {
            *array = cast(array, field.data_type())?;
        }
    }

    // Per-column statistics, by the rules of `stats`.
    let stats_parts = stats.as_ref().map(|s| {
        let part = |key: &str| s.column_by_name(key).map(|c| c.as_struct().clone());
        (part("nullCount"), part("minValues"), part("maxValues"))
    });
    let mut stats_columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields.len());
    let stats_fields: Fields = stats_fields(&spec)
        .iter()
        .map(|f| Arc::new(with_nullable_counts(f)))
        .collect();
    for (index, (field, stats_field)) in schema.fields.iter().zip(stats_fields.iter()).enumerate() {
        let DataType::Struct(children) = stats_field.data_type() else {
            unreachable!("stats fields are structs")
        };
        let bounded = children.len() == 3;
        let dt = crate::spec::types::strip_metadata(&field.field_type.to_arrow());
        let (null_count, min, max): (ArrayRef, Option<ArrayRef>, Option<ArrayRef>) =
            if let Some((_, k)) = constants.iter().find(|(c, _)| *c == index) {
                // A partition column: its value is the file's, known once the row count is.
                let value = &partitions[*k];
                let counts: Int64Array = (0..rows)
                    .map(|r| {
                        record_counts
                            .is_valid(r)
                            .then(|| if value.is_null(r) { record_counts.value(r) } else { 0 })
                    })
                    .collect();
                let known = BooleanArray::from_iter((0..rows).map(|r| Some(record_counts.is_valid(r))));
                let bound = || -> Result<ArrayRef> { Ok(nullif(value, &not(&known)?)?) };
                (
                    Arc::new(counts),
                    bounded.then(bound).transpose()?,
                    bounded.then(bound).transpose()?,
                )
            } else {
                let physical = log
                    .columns
                    .get(index)
                    .map(|c| c.physical_name.as_str())
                    .unwrap_or(&field.name);
                let primitive = field.field_type.as_primitive().is_some();
                let child = |part: Option<&StructArray>| -> Option<ArrayRef> {
                    let part = part?;
                    primitive.then(|| part.column_by_name(physical).map(|c| with_parent_nulls(c, part)))?
                };
                let (counts, mins, maxs) = match &stats_parts {
                    Some((c, lo, hi)) => (child(c.as_ref()), child(lo.as_ref()), child(hi.as_ref())),
                    None => (None, None, None),
                };
                let null_count = match counts {
                    Some(c) => cast(&c, &DataType::Int64).unwrap_or_else(|_| new_null_array(&DataType::Int64, rows)),
                    None => new_null_array(&DataType::Int64, rows),
                };
                let bound = |b: Option<ArrayRef>, is_max: bool| -> ArrayRef {
                    b.and_then(|b| stats_bound(&b, &dt, is_max))
                        .unwrap_or_else(|| new_null_array(&dt, rows))
                };
                (
                    null_count,
                    bounded.then(|| bound(mins, false)),
                    bounded.then(|| bound(maxs, true)),
                )
            };
        let mut arrays = vec![null_count];
        arrays.extend(min);
        arrays.extend(max);
        stats_columns.push(Arc::new(StructArray::try_new(children.clone(), arrays, None)?));
    }

    // Sorted by partition so each manifest covers a narrow range.
    let order = match partitions.is_empty() {
        true => None,
        false => {
            let columns: Vec<SortColumn> = partitions
                .iter()
                .map(|values| SortColumn {
                    values: Arc::clone(values),
                    options: None,
                })
                .collect();
            Some(lexsort_to_indices(&columns, None)?)
        }
    };
    let sorted = |a: &ArrayRef| -> Result<ArrayRef> {
        Ok(match &order {
            Some(o) => take(a.as_ref(), o, None)?,
            None => Arc::clone(a),
        })
    };
    let manifest_fields: Vec<Arc<Field>> = manifest_schema(&spec)?
        .fields()
        .iter()
        .map(|f| match f.name() == STATS {
            true => Arc::new(Field::new(STATS, DataType::Struct(stats_fields.clone()), false)),
            false => Arc::clone(f),
        })
        .collect();
    let mut columns: Vec<ArrayRef> = vec![
        sorted(&(Arc::new(paths.clone()) as ArrayRef))?,
        sorted(&(Arc::new(sizes) as ArrayRef))?,
        sorted(&zero_filled(&record_counts))?,
        Arc::new(Int32Array::from(vec![0; rows])),
    ];
    if !part_fields.is_empty() {
        let partitions: Vec<ArrayRef> = partitions.iter().map(sorted).collect::<Result<_>>()?;
        let strings: Vec<ArrayRef> = partitions.iter().map(|a| partition_strings(a)).collect::<Result<_>>()?;
        let string_fields: Fields = part_fields
            .iter()
            .map(|f| Arc::new(Field::new(f.name(), DataType::Utf8, true)))
            .collect();
        columns.push(Arc::new(StructArray::try_new(part_fields.clone(), partitions, None)?));
        columns.push(Arc::new(StructArray::try_new(string_fields, strings, None)?));
    }
    if !stats_fields.is_empty() {
        let stats_columns: Vec<ArrayRef> = stats_columns.iter().map(sorted).collect::<Result<_>>()?;
        columns.push(Arc::new(StructArray::try_new(
            stats_fields.clone(),
            stats_columns,
            None,
        )?));
    }
    let all = RecordBatch::try_new(Arc::new(ArrowSchema::new(manifest_fields)), columns)?;
    let deleted: HashMap<String, Vec<u64>> = log
        .deleted
        .iter()
        .map(|(path, rows)| {
            let mut rows = rows.clone();
            rows.sort_unstable();
            rows.dedup();
            (path.clone(), rows)
        })
        .collect();
    let mut manifests = Vec::new();
    let mut batches = HashMap::new();
    for (i, offset) in (0..rows).step_by(FILES_PER_MANIFEST).enumerate() {
        let path = format!("_delta_log/v{}#{i}", log.version);
        let batch = all.slice(offset, FILES_PER_MANIFEST.min(rows - offset));
        let partitions = crate::manifest::io::summarize(&spec, &batch)?;
        let counts = batch.column(2).as_primitive::<Int64Type>();
        manifests.push(ManifestFile {
            path: path.clone(),
            length: 0,
            spec_id: 0,
            added_snapshot_id: log.version as i64,
            file_count: batch.num_rows() as u64,
            record_count: counts.values().iter().map(|&c| c.max(0) as u64).sum(),
            partitions,
            iceberg: None,
            content: crate::spec::ManifestContent::Data,
        });
        batches.insert(path, batch);
    }
    let mapped = log.column_mapping != delta_kernel::table_features::ColumnMappingMode::None;
    let physical_names = log
        .columns
        .iter()
        .zip(&schema.fields)
        .filter(|_| mapped)
        .map(|(c, f)| (c.physical_name.clone(), f.id))
        .collect();
    Ok(Converted {
        spec,
        constants,
        physical_names,
        manifests,
        batches,
        deleted,
        counts_exact,
    })
}

/// The `column` of `batch` as strings.
fn string_column(batch: &RecordBatch, column: &str, table: &str) -> Result<StringArray> {
    match batch.column_by_name(column) {
        Some(c) => Ok(cast(c, &DataType::Utf8)?.as_string::<i32>().clone()),
        None => Err(Error::Format(format!(
            "Delta table {table}: kernel gave no column {column:?}"
        ))),
    }
}

/// `child` of `parent`, null where `parent` is.
fn with_parent_nulls(child: &ArrayRef, parent: &StructArray) -> ArrayRef {
    let nulls = NullBuffer::union(parent.nulls(), child.nulls());
    match child.to_data().into_builder().nulls(nulls).build() {
        Ok(data) => make_array(data),
        Err(_) => Arc::clone(child),
    }
}

/// Delta logs an empty partition value and a null alike: both are null.
fn empty_as_null(values: &ArrayRef) -> Result<ArrayRef> {
    let empty = match values.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let text = cast(values, &DataType::Utf8)?;
            text.as_string::<i32>()
                .iter()
                .map(|v| Some(v == Some("")))
                .collect::<BooleanArray>()
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let bytes = cast(values, &DataType::Binary)?;
            bytes
                .as_binary::<i32>()
                .iter()
                .map(|v| Some(v == Some(b"".as_slice())))
                .collect::<BooleanArray>()
        }
        _ => return Ok(Arc::clone(values)),
    };
    Ok(nullif(values, &empty)?)
}

/// Record counts with unknown ones as 0 (the manifest column is not null;
/// the reader's `counts_exact` says whether they are all known).
fn zero_filled(counts: &Int64Array) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(
        (0..counts.len()).map(|i| if counts.is_valid(i) { counts.value(i) } else { 0 }),
    ))
}

/// A stats field with a nullable `null_count` (unknown where the log has none).
fn with_nullable_counts(field: &Field) -> Field {
    let DataType::Struct(children) = field.data_type() else {
        return field.clone();
    };
    let children: Fields = children
        .iter()
        .map(|c| match c.name() == NULL_COUNT {
            true => Arc::new(Field::new(NULL_COUNT, DataType::Int64, true)),
            false => Arc::clone(c),
        })
        .collect();
    Field::new(field.name(), DataType::Struct(children), field.is_nullable())
}

/// Each value's serialized partition string (sorted input: serialized once
/// per run of equal values).
fn partition_strings(values: &ArrayRef) -> Result<ArrayRef> {
    let mut out = StringBuilder::with_capacity(values.len(), values.len() * 8);
    let mut last: Option<(ScalarValue, Option<String>)> = None;
    for row in 0..values.len() {
        let value = ScalarValue::try_from_array(values, row)?;
        let text = match &last {
            Some((v, text)) if *v == value => text.clone(),
            _ => crate::values::serialize(&value).ok().flatten(),
        };
        out.append_option(text.as_deref());
        last = Some((value, text));
    }
    Ok(Arc::new(out.finish()))
}

/// The logged path in our stored form (relative, URL-encoded). Absolute
/// URLs (shallow clones) are refused.
fn stored_path(logged: &str, table: &str) -> Result<String> {
    if logged.contains("://") || logged.starts_with('/') {
        return Err(Error::Invalid(format!(
            "Delta table {table}: file {logged} is an absolute path outside the table; reading it is not supported"
        )));
    }
    Ok(logged.to_string())
}

/// Serves the manifest batches built from the log.
#[derive(Debug)]
pub struct DeltaManifests {
    batches: HashMap<String, RecordBatch>,
}

impl DeltaManifests {
    pub fn new(batches: HashMap<String, RecordBatch>) -> Arc<Self> {
        Arc::new(Self { batches })
    }
}

#[async_trait]
impl ManifestSource for DeltaManifests {
    async fn read(
        &self,
        _location: &TableLocation,
        manifest: &ManifestFile,
        _spec: &TableSpec,
        columns: Option<&[String]>,
    ) -> Result<RecordBatch> {
        let Some(batch) = self.batches.get(&manifest.path) else {
            return crate::format_err!("no file list {} in this Delta snapshot", manifest.path);
        };
        project_columns(batch, columns)
    }
}
