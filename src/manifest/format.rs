//! The manifest file: Parquet, one row per data file, one table spec per file.
//!
//! | column                 | type                                             |
//! |------------------------|--------------------------------------------------|
//! | `path`                 | utf8, relative to the table root, URI-encoded    |
//! | `file_size_in_bytes`   | int64                                            |
//! | `record_count`         | int64                                            |
//! | `spec_id`              | int32                                            |
//! | `partition`            | struct, one typed child per partition field      |
//! | `partition_strings`    | struct, one utf8 child per partition field       |
//! | `stats`                | struct, child `"<field id>"` per top-level column:|
//! |                        | `struct<null_count: int64, min: T, max: T>`      |
//! | `first_row_id`         | int64, nullable; only in manifests of Iceberg v3 |
//! |                        | tables that list files with assigned row ids     |
//! | `referenced_data_file` | utf8; only in delete manifests: the data file   |
//! |                        | (stored path) whose rows the delete file deletes |
//! | `content_offset`, `content_size_in_bytes` | int64; only in delete manifests |
//! |                        | of v3 tables: a deletion vector's blob in its Puffin file |
//! | `sort_order_id`        | int32, nullable; only when some file was written |
//! |                        | in a sort order: its id (`spec::sort_order`)     |
//!
//! A delete manifest (`content` 1 in the snapshot) has the same columns, one
//! row per position delete file: `record_count` is its number of deleted
//! positions, `partition` the partition of the data file it names, and its
//! `stats` are empty (null counts 0, no bounds).
//!
//! `partition`/`partition_strings` are left out for unpartitioned specs;
//! `min`/`max` are left out for columns without an order (nested, variant).
//! Keeping values typed and columnar lets pruning run as Arrow kernels.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, StructArray};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema as ArrowSchema, SchemaRef};
use datafusion::common::ScalarValue;

use super::stats::has_bounds;
use crate::error::Result;
use crate::spec::TableSpec;
use crate::spec::types::strip_metadata;
use crate::spec::{ColumnStats, DataFile};

pub const PATH: &str = "path";
pub const FILE_SIZE: &str = "file_size_in_bytes";
pub const RECORD_COUNT: &str = "record_count";
pub const SPEC_ID: &str = "spec_id";
pub const PARTITION: &str = "partition";
pub const PARTITION_STRINGS: &str = "partition_strings";
pub const STATS: &str = "stats";
pub const FIRST_ROW_ID: &str = "first_row_id";
pub const REFERENCED_DATA_FILE: &str = "referenced_data_file";
pub const CONTENT_OFFSET: &str = "content_offset";
pub const CONTENT_SIZE: &str = "content_size_in_bytes";
pub const SORT_ORDER_ID: &str = "sort_order_id";
pub const NULL_COUNT: &str = "null_count";
pub const MIN: &str = "min";
pub const MAX: &str = "max";

/// Partition struct fields (name, result type) of a spec.
pub fn partition_fields(spec: &TableSpec) -> Result<Fields> {
    let bound = spec.partition_spec.bind(&spec.schema)?;
    Ok(bound
        .iter()
        .map(|b| Arc::new(Field::new(&b.field.name, b.result_type.clone(), true)))
        .collect())
}

/// One stats child per top-level column of the spec's schema.
pub fn stats_fields(spec: &TableSpec) -> Fields {
    spec.schema
        .fields
        .iter()
        .map(|f| {
            let dt = strip_metadata(&f.field_type.to_arrow());
            let mut children = vec![Field::new(NULL_COUNT, DataType::Int64, false)];
            if has_bounds(&dt) {
                children.push(Field::new(MIN, dt.clone(), true));
                children.push(Field::new(MAX, dt, true));
            }
            Arc::new(Field::new(
                f.id.to_string(),
                DataType::Struct(Fields::from(children)),
                false,
            ))
        })
        .collect()
}

/// The Arrow schema of a manifest for `spec`.
pub fn manifest_schema(spec: &TableSpec) -> Result<SchemaRef> {
    let mut fields = vec![
        Field::new(PATH, DataType::Utf8, false),
        Field::new(FILE_SIZE, DataType::Int64, false),
        Field::new(RECORD_COUNT, DataType::Int64, false),
        Field::new(SPEC_ID, DataType::Int32, false),
    ];
    let parts = partition_fields(spec)?;
    if !parts.is_empty() {
        let strings: Fields = parts
            .iter()
            .map(|f| Arc::new(Field::new(f.name(), DataType::Utf8, true)))
            .collect();
        fields.push(Field::new(PARTITION, DataType::Struct(parts), false));
        fields.push(Field::new(PARTITION_STRINGS, DataType::Struct(strings), false));
    }
    let stats = stats_fields(spec);
    if !stats.is_empty() {
        fields.push(Field::new(STATS, DataType::Struct(stats), false));
    }
    Ok(Arc::new(ArrowSchema::new(fields)))
}

fn scalars_to_array(values: impl IntoIterator<Item = ScalarValue>, dt: &DataType) -> Result<ArrayRef> {
    let values: Vec<ScalarValue> = values
        .into_iter()
        .map(|v| {
            if v.is_null() {
                ScalarValue::try_from(dt)
            } else {
                v.cast_to(dt)
            }
        })
        .collect::<datafusion::common::Result<_>>()?;
    if values.is_empty() {
        return Ok(datafusion::arrow::array::new_empty_array(dt));
    }
    Ok(ScalarValue::iter_to_array(values)?)
}

/// Whether `schema` is that of a manifest of `spec`: [`manifest_schema`],
/// perhaps followed by `first_row_id`, `referenced_data_file`, `content_offset`,
/// `content_size_in_bytes` and `sort_order_id` (each at most once, in any order).
pub fn has_manifest_columns(schema: &ArrowSchema, spec: &TableSpec) -> Result<bool> {
    let expected = manifest_schema(spec)?;
    let fields = schema.fields();
    let n = expected.fields().len();
    let extra = |f: &Arc<Field>| {
        ([FIRST_ROW_ID, CONTENT_OFFSET, CONTENT_SIZE].contains(&f.name().as_str()) && f.data_type() == &DataType::Int64)
            || (f.name() == REFERENCED_DATA_FILE && f.data_type() == &DataType::Utf8)
            || (f.name() == SORT_ORDER_ID && f.data_type() == &DataType::Int32)
    };
    let rest: Vec<_> = fields.iter().skip(n).collect();
    let names: std::collections::HashSet<&str> = rest.iter().map(|f| f.name().as_str()).collect();
    let rest_ok = rest.iter().all(|f| extra(f)) && names.len() == rest.len();
    Ok(fields.len() >= n && fields.iter().take(n).eq(expected.fields().iter()) && rest_ok)
}

/// `batch` (a manifest's) with each file's Iceberg v3 row id: its own, or
/// inherited from `manifest_first_row_id` (the manifest's, as its manifest
/// list assigned it) plus the rows of the files before it that have none.
/// Unchanged when neither is known.
pub fn with_row_ids(batch: &RecordBatch, manifest_first_row_id: Option<i64>) -> Result<RecordBatch> {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::Int64Type;
    let own = batch
        .column_by_name(FIRST_ROW_ID)
        .map(|c| c.as_primitive::<Int64Type>().clone());
    let Some(first) = manifest_first_row_id else {
        return Ok(batch.clone());
    };
    let Some(counts) = batch.column_by_name(RECORD_COUNT) else {
        return crate::format_err!("manifest batch has no column {RECORD_COUNT}");
    };
    let counts = counts.as_primitive::<Int64Type>();
    let own = (0..batch.num_rows()).map(|row| own.as_ref().filter(|o| o.is_valid(row)).map(|o| o.value(row)));
    let ids: ArrayRef = Arc::new(inherit_row_ids(first, own, counts.values().iter().copied()));
    let mut fields: Vec<Field> = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if field.name() != FIRST_ROW_ID {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
        }
    }
    fields.push(Field::new(FIRST_ROW_ID, DataType::Int64, true));
    columns.push(ids);
    Ok(RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns)?)
}

/// Iceberg v3 first row id inheritance within one manifest: each file
/// keeps its own id, and those without one get `first` plus the rows of
/// the files before them that had none (`record_counts`, in order).
pub fn inherit_row_ids(
    first: i64,
    own: impl IntoIterator<Item = Option<i64>>,
    record_counts: impl IntoIterator<Item = i64>,
) -> Int64Array {
    let mut next = first;
    own.into_iter()
        .zip(record_counts)
        .map(|(own, rows)| {
            Some(own.unwrap_or_else(|| {
                let id = next;
                next += rows.max(0);
                id
            }))
        })
        .collect()
}

/// Build the manifest batch for `files`, all written under `spec`; with a
/// `first_row_id` column when some file has a row id.
pub fn manifest_batch<F: AsRef<DataFile>>(spec: &TableSpec, files: &[F]) -> Result<RecordBatch> {
    let files: Vec<&DataFile> = files.iter().map(AsRef::as_ref).collect();
    let with_ids = files.iter().any(|f| f.first_row_id.is_some());
    let with_references = files.iter().any(|f| f.referenced_data_file.is_some());
    let with_blobs = files.iter().any(|f| f.blob.is_some());
    let with_orders = files.iter().any(|f| f.sort_order_id.is_some());
    let schema = if with_ids || with_references || with_blobs || with_orders {
        let mut fields: Vec<Field> = manifest_schema(spec)?
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        if with_ids {
            fields.push(Field::new(FIRST_ROW_ID, DataType::Int64, true));
        }
        if with_references {
            fields.push(Field::new(REFERENCED_DATA_FILE, DataType::Utf8, true));
        }
        if with_blobs {
            fields.push(Field::new(CONTENT_OFFSET, DataType::Int64, true));
            fields.push(Field::new(CONTENT_SIZE, DataType::Int64, true));
        }
        if with_orders {
            fields.push(Field::new(SORT_ORDER_ID, DataType::Int32, true));
        }
        Arc::new(ArrowSchema::new(fields))
    } else {
        manifest_schema(spec)?
    };
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(files.iter().map(|f| f.path.as_str()))),
        Arc::new(Int64Array::from_iter_values(files.iter().map(|f| f.file_size as i64))),
        Arc::new(Int64Array::from_iter_values(
            files.iter().map(|f| f.record_count as i64),
        )),
        Arc::new(Int32Array::from_iter_values(files.iter().map(|f| f.spec_id))),
    ];
    let parts = partition_fields(spec)?;
    if !parts.is_empty() {
        let mut children = Vec::with_capacity(parts.len());
        let mut strings = Vec::with_capacity(parts.len());
        for (i, field) in parts.iter().enumerate() {
            children.push(scalars_to_array(
                files.iter().map(|f| f.partition[i].clone()),
                field.data_type(),
            )?);
            strings.push(Arc::new(StringArray::from_iter(
                files.iter().map(|f| f.partition_strings[i].as_deref()),
            )) as ArrayRef);
        }
        let string_fields: Fields = parts
            .iter()
            .map(|f| Arc::new(Field::new(f.name(), DataType::Utf8, true)))
            .collect();
        columns.push(Arc::new(StructArray::try_new(parts.clone(), children, None)?));
        columns.push(Arc::new(StructArray::try_new(string_fields, strings, None)?));
    }
    let stats = stats_fields(spec);
    if !stats.is_empty() {
        let mut per_column = Vec::with_capacity(stats.len());
        for (col, field) in spec.schema.fields.iter().zip(stats.iter()) {
            let DataType::Struct(children) = field.data_type() else {
                unreachable!("stats fields are structs")
            };
            let mut arrays: Vec<ArrayRef> =
                vec![Arc::new(Int64Array::from_iter_values(files.iter().map(|f| {
                    column_stats_of(f, col.id).map(|s| s.null_count as i64).unwrap_or(0)
                })))];
            if children.len() == 3 {
                let dt = children[1].data_type();
                arrays.push(scalars_to_array(
                    files.iter().map(|f| {
                        column_stats_of(f, col.id)
                            .and_then(|s| s.min.clone())
                            .unwrap_or(ScalarValue::Null)
                    }),
                    dt,
                )?);
                arrays.push(scalars_to_array(
                    files.iter().map(|f| {
                        column_stats_of(f, col.id)
                            .and_then(|s| s.max.clone())
                            .unwrap_or(ScalarValue::Null)
                    }),
                    dt,
                )?);
            }
            per_column.push(Arc::new(StructArray::try_new(children.clone(), arrays, None)?) as ArrayRef);
        }
        columns.push(Arc::new(StructArray::try_new(stats, per_column, None)?));
    }
    if with_ids {
        columns.push(Arc::new(Int64Array::from_iter(files.iter().map(|f| f.first_row_id))));
    }
    if with_references {
        columns.push(Arc::new(StringArray::from_iter(
            files.iter().map(|f| f.referenced_data_file.as_deref()),
        )));
    }
    if with_blobs {
        columns.push(Arc::new(Int64Array::from_iter(
            files.iter().map(|f| f.blob.map(|b| b.offset)),
        )));
        columns.push(Arc::new(Int64Array::from_iter(
            files.iter().map(|f| f.blob.map(|b| b.length)),
        )));
    }
    if with_orders {
        columns.push(Arc::new(Int32Array::from_iter(files.iter().map(|f| f.sort_order_id))));
    }
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// Each row's deletion-vector blob (`None` for files, and for every row of
/// a manifest without the columns).
pub fn blob_ranges(batch: &RecordBatch) -> Vec<Option<crate::spec::BlobRange>> {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::Int64Type;
    let column = |name: &str| batch.column_by_name(name).map(|c| c.as_primitive::<Int64Type>());
    match (column(CONTENT_OFFSET), column(CONTENT_SIZE)) {
        (Some(offsets), Some(lengths)) => (0..batch.num_rows())
            .map(|row| {
                (offsets.is_valid(row) && lengths.is_valid(row)).then(|| crate::spec::BlobRange {
                    offset: offsets.value(row),
                    length: lengths.value(row),
                })
            })
            .collect(),
        _ => vec![None; batch.num_rows()],
    }
}

/// The statistics `file` has for column `id`.
fn column_stats_of(file: &DataFile, id: i32) -> Option<&ColumnStats> {
    file.column_stats.iter().find(|s| s.field_id == id)
}

/// The data files of a manifest batch of `spec` (the inverse of [`manifest_batch`]).
pub fn data_files(spec: &TableSpec, batch: &RecordBatch) -> Result<Vec<DataFile>> {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::{Int32Type, Int64Type};
    let column = |name: &str| {
        batch
            .column_by_name(name)
            .ok_or_else(|| crate::error::Error::Format(format!("manifest batch has no column {name}")))
    };
    let paths = column(PATH)?.as_string::<i32>();
    let sizes = column(FILE_SIZE)?.as_primitive::<Int64Type>();
    let counts = column(RECORD_COUNT)?.as_primitive::<Int64Type>();
    let spec_ids = column(SPEC_ID)?.as_primitive::<Int32Type>();
    let partition = batch.column_by_name(PARTITION).map(|c| c.as_struct());
    let strings = batch.column_by_name(PARTITION_STRINGS).map(|c| c.as_struct());
    let stats = batch.column_by_name(STATS).map(|c| c.as_struct());
    let row_ids = batch
        .column_by_name(FIRST_ROW_ID)
        .map(|c| c.as_primitive::<Int64Type>());
    let references = batch.column_by_name(REFERENCED_DATA_FILE).map(|c| c.as_string::<i32>());
    let blobs = blob_ranges(batch);
    let orders = batch
        .column_by_name(SORT_ORDER_ID)
        .map(|c| c.as_primitive::<Int32Type>());
    let mut files = Vec::with_capacity(batch.num_rows());
    for row in 0..batch.num_rows() {
        let partition_values = match partition {
            Some(p) => p
                .columns()
                .iter()
                .map(|c| ScalarValue::try_from_array(c, row))
                .collect::<datafusion::common::Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        let partition_strings = match strings {
            Some(s) => s
                .columns()
                .iter()
                .map(|c| {
                    let c = c.as_string::<i32>();
                    c.is_valid(row).then(|| c.value(row).to_string())
                })
                .collect(),
            None => Vec::new(),
        };
        let mut column_stats = Vec::new();
        if let Some(stats) = stats {
            for (field, per_column) in stats.fields().iter().zip(stats.columns()) {
                let Ok(field_id) = field.name().parse::<i32>() else {
                    continue;
                };
                let per_column = per_column.as_struct();
                let bound = |name: &str| -> Result<Option<ScalarValue>> {
                    match per_column.column_by_name(name) {
                        Some(c) => {
                            let v = ScalarValue::try_from_array(c, row)?;
                            Ok((!v.is_null()).then_some(v))
                        }
                        None => Ok(None),
                    }
                };
                let null_count = per_column
                    .column_by_name(NULL_COUNT)
                    .map(|c| c.as_primitive::<Int64Type>())
                    .filter(|c| c.is_valid(row))
                    .map_or(0, |c| c.value(row) as u64);
                column_stats.push(ColumnStats {
                    field_id,
                    null_count,
                    min: bound(MIN)?,
                    max: bound(MAX)?,
                });
            }
        }
        files.push(DataFile {
            path: paths.value(row).to_string(),
            file_size: sizes.value(row) as u64,
            record_count: counts.value(row) as u64,
            spec_id: spec_ids.value(row),
            partition: partition_values,
            partition_strings,
            column_stats,
            pending: None,
            first_row_id: row_ids.filter(|c| c.is_valid(row)).map(|c| c.value(row)),
            sort_order_id: orders.filter(|c| c.is_valid(row)).map(|c| c.value(row)),
            referenced_data_file: references.filter(|c| c.is_valid(row)).map(|c| c.value(row).to_string()),
            blob: blobs[row],
        });
    }
    let _ = spec;
    Ok(files)
}
