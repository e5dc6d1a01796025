//! Writing rows into partitioned data files.
//!
//! Per batch: apply each partition field's transform to its source column
//! (one kernel call per field), encode the partition tuple of every row with
//! the Arrow row format, group row indices by tuple, and append each group to
//! the open Parquet writer of that partition. Each partition value is
//! serialized once per partition, not per row.
//!
//! | row (`ts`, `id`)        | `day(ts)`    | `bucket(4, id)` | file                                         |
//! |-------------------------|--------------|-----------------|----------------------------------------------|
//! | 2024-01-15 10:00, 34    | 2024-01-15   | 3               | `data/ts_day=2024-01-15/id_bucket_4=3/….parquet` |
//! | 2024-01-15 23:59, 7     | 2024-01-15   | 1               | `data/ts_day=2024-01-15/id_bucket_4=1/….parquet` |

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{cast, take_record_batch};
use datafusion::arrow::datatypes::{DataType, Fields, Schema as ArrowSchema, SchemaRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::ScalarValue;
use datafusion::execution::SendableRecordBatchStream;
use futures::StreamExt;
use object_store::{PutMode, PutOptions, PutPayload};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use crate::error::Result;
use crate::invalid;
use crate::manifest::stats::StatsCollector;
use crate::manifest::{ColumnStats, DataFile};
use crate::spec::TableSpec;
use crate::store::TableLocation;
use crate::transform::Transform;
use crate::values;

/// A data file rolls over to a new one past this many bytes.
pub const TARGET_FILE_SIZE: usize = 128 * 1024 * 1024;

/// The partition of a group of rows: typed values, their strings, the directory.
#[derive(Debug, Clone)]
struct PartitionKey {
    values: Vec<ScalarValue>,
    strings: Vec<Option<String>>,
    dirs: Vec<String>,
}

struct OpenFile {
    writer: ArrowWriter<Vec<u8>>,
    stats: Vec<StatsCollector>,
    rows: u64,
}

struct OpenPartition {
    key: PartitionKey,
    file: Option<OpenFile>,
}

/// Writes batches of a table spec's schema into partitioned Parquet files.
pub struct PartitionedWriter {
    location: TableLocation,
    spec: TableSpec,
    file_schema: SchemaRef,
    transforms: Vec<(usize, Transform)>,
    partition_columns: Vec<values::PartitionColumn>,
    validated: Vec<usize>,
    converter: Option<RowConverter>,
    partitions: HashMap<Vec<u8>, OpenPartition>,
    props: WriterProperties,
    written: Vec<DataFile>,
}

impl PartitionedWriter {
    pub fn try_new(location: TableLocation, spec: TableSpec) -> Result<Self> {
        let bound = spec.partition_spec.bind(&spec.schema)?;
        let transforms = bound.iter().map(|b| (b.source_index, b.field.transform)).collect();
        // Void fields are always null (of any type): nothing to validate.
        let validated: Vec<usize> = (0..bound.len())
            .filter(|&i| bound[i].field.transform != Transform::Void)
            .collect();
        let partition_columns = validated
            .iter()
            .map(|&i| values::PartitionColumn {
                name: bound[i].field.name.clone(),
                data_type: bound[i].result_type.clone(),
                nullable: true,
            })
            .collect();
        let converter = if bound.is_empty() {
            None
        } else {
            Some(RowConverter::new(
                bound.iter().map(|b| SortField::new(b.result_type.clone())).collect(),
            )?)
        };
        let file_schema = spec.schema.arrow_schema_with_ids();
        let props = writer_properties(&file_schema);
        Ok(Self {
            location,
            spec,
            file_schema,
            transforms,
            partition_columns,
            validated,
            converter,
            partitions: HashMap::new(),
            props,
            written: Vec::new(),
        })
    }

    /// Route the rows of `batch` (in the table's schema) to their partitions.
    pub async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let batch = self.conform(batch)?;
        let partition_arrays = self
            .transforms
            .iter()
            .map(|(idx, t)| t.apply(batch.column(*idx)).map_err(Into::into))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let Some(converter) = &self.converter else {
            return self.append(Vec::new(), &partition_arrays, 0, batch).await;
        };
        let rows = converter.convert_columns(&partition_arrays)?;
        let mut groups: HashMap<&[u8], Vec<u32>> = HashMap::new();
        let mut order: Vec<&[u8]> = Vec::new();
        for i in 0..rows.num_rows() {
            let key = rows.row(i).data();
            groups
                .entry(key)
                .or_insert_with(|| {
                    order.push(key);
                    Vec::new()
                })
                .push(i as u32);
        }
        let groups: Vec<(Vec<u8>, Vec<u32>)> = order.into_iter().map(|k| (k.to_vec(), groups[k].clone())).collect();
        for (key, indices) in groups {
            let first = indices[0] as usize;
            let rows = if indices.len() == batch.num_rows() {
                batch.clone()
            } else {
                take_record_batch(&batch, &UInt32Array::from(indices))?
            };
            self.append(key, &partition_arrays, first, rows).await?;
        }
        Ok(())
    }

    /// Cast to the file schema (field ids on nested children) and check NOT NULL.
    fn conform(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        if batch.num_columns() != self.file_schema.fields().len() {
            return invalid!(
                "insert has {} columns but the table has {}",
                batch.num_columns(),
                self.file_schema.fields().len()
            );
        }
        let mut columns = Vec::with_capacity(batch.num_columns());
        for (col, field) in batch.columns().iter().zip(self.file_schema.fields()) {
            if !field.is_nullable() && col.logical_null_count() > 0 {
                return invalid!("column {:?} is NOT NULL but the insert has NULL values", field.name());
            }
            columns.push(if col.data_type() == field.data_type() {
                Arc::clone(col)
            } else {
                cast(col, field.data_type())?
            });
        }
        Ok(RecordBatch::try_new(Arc::clone(&self.file_schema), columns)?)
    }

    fn partition_key(&self, arrays: &[ArrayRef], row: usize) -> Result<PartitionKey> {
        let fields = &self.spec.partition_spec.fields;
        let raw = arrays
            .iter()
            .zip(fields)
            .map(|(array, field)| Ok((field.name.clone(), ScalarValue::try_from_array(array, row)?)))
            .collect::<Result<Vec<_>>>()?;
        // Step 1 of the value pipeline: keys complete, types exact.
        let to_check: Vec<(String, ScalarValue)> = self.validated.iter().map(|&i| raw[i].clone()).collect();
        let checked = values::validate(&self.partition_columns, &to_check)?;
        let mut values: Vec<ScalarValue> = raw.into_iter().map(|(_, v)| v).collect();
        for (&i, v) in self.validated.iter().zip(checked) {
            values[i] = v;
        }
        let mut key = PartitionKey {
            values: Vec::new(),
            strings: Vec::new(),
            dirs: Vec::new(),
        };
        for ((value, field), (_, transform)) in values.into_iter().zip(fields).zip(&self.transforms) {
            let string = match transform.to_human_string(&value) {
                Some(s) => Some(s),
                None => values::serialize(&value)
                    .map_err(|e| crate::error::Error::Invalid(format!("partition field {:?}: {e}", field.name)))?,
            };
            key.dirs
                .push(values::hive::partition_dir(&field.name, string.as_deref()));
            key.values.push(value);
            key.strings.push(string);
        }
        Ok(key)
    }

    async fn append(&mut self, key: Vec<u8>, arrays: &[ArrayRef], first: usize, rows: RecordBatch) -> Result<()> {
        if !self.partitions.contains_key(&key) {
            let pkey = self.partition_key(arrays, first)?;
            self.partitions
                .insert(key.clone(), OpenPartition { key: pkey, file: None });
        }
        let schema = Arc::clone(&self.file_schema);
        let props = self.props.clone();
        let spec = &self.spec;
        let Some(part) = self.partitions.get_mut(&key) else {
            return Ok(());
        };
        if part.file.is_none() {
            let stats = spec
                .schema
                .fields
                .iter()
                .zip(schema.fields())
                .map(|(f, af)| StatsCollector::new(f.id, af.data_type()))
                .collect::<Result<Vec<_>>>()?;
            part.file = Some(OpenFile {
                writer: ArrowWriter::try_new(Vec::new(), schema, Some(props))?,
                stats,
                rows: 0,
            });
        }
        let Some(file) = part.file.as_mut() else { return Ok(()) };
        file.writer.write(&rows)?;
        for (collector, col) in file.stats.iter_mut().zip(rows.columns()) {
            collector.update(col)?;
        }
        file.rows += rows.num_rows() as u64;
        if file.writer.bytes_written() + file.writer.in_progress_size() >= TARGET_FILE_SIZE {
            let (file, pkey) = (part.file.take(), part.key.clone());
            if let Some(file) = file {
                let df = flush(&self.location, self.spec.spec_id, file, &pkey).await?;
                self.written.push(df);
            }
        }
        Ok(())
    }

    /// Close every open file and return the data files written.
    pub async fn finish(mut self) -> Result<Vec<DataFile>> {
        let partitions = std::mem::take(&mut self.partitions);
        for (_, part) in partitions {
            if let Some(file) = part.file {
                let df = flush(&self.location, self.spec.spec_id, file, &part.key).await?;
                self.written.push(df);
            }
        }
        Ok(self.written)
    }

    /// Data files flushed so far (for cleanup when a write fails).
    pub fn written(&self) -> &[DataFile] {
        &self.written
    }
}

/// Write every batch of `data` (in the spec's schema) into partitioned files
/// under `location`. Nothing is committed; on failure the files written so
/// far are deleted.
pub async fn write_stream(
    location: &TableLocation,
    spec: &TableSpec,
    mut data: SendableRecordBatchStream,
) -> Result<(Vec<DataFile>, u64)> {
    let mut writer = PartitionedWriter::try_new(location.clone(), spec.clone())?;
    let mut rows = 0u64;
    while let Some(batch) = data.next().await {
        let result = match batch {
            Ok(batch) => {
                rows += batch.num_rows() as u64;
                writer.write(&batch).await
            }
            Err(e) => Err(e.into()),
        };
        if let Err(e) = result {
            delete_files(location, writer.written()).await;
            return Err(e);
        }
    }
    Ok((writer.finish().await?, rows))
}

/// Delete data files that were written but not committed (best effort).
pub async fn delete_files(location: &TableLocation, files: &[DataFile]) {
    let paths = files.iter().filter_map(|f| location.resolve(&f.path).ok()).collect();
    let _ = crate::table::purge::delete_all(location, paths).await;
}

/// Write one finished file and describe it for the manifest.
async fn flush(location: &TableLocation, spec_id: i32, file: OpenFile, key: &PartitionKey) -> Result<DataFile> {
    let bytes = file.writer.into_inner()?;
    let name = format!("{}.parquet", uuid::Uuid::new_v4());
    let mut segments: Vec<&str> = vec!["data"];
    segments.extend(key.dirs.iter().map(String::as_str));
    segments.push(&name);
    let path = TableLocation::stored_path(segments);
    let size = bytes.len() as u64;
    let opts = PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    location
        .store
        .put_opts(&location.resolve(&path)?, PutPayload::from(bytes), opts)
        .await?;
    let column_stats = file
        .stats
        .into_iter()
        .map(StatsCollector::finish)
        .collect::<Result<Vec<ColumnStats>>>()?;
    Ok(DataFile {
        path,
        file_size: size,
        record_count: file.rows,
        spec_id: spec_id,
        partition: key.values.clone(),
        partition_strings: key.strings.clone(),
        column_stats,
    })
}

/// Parquet writer settings for data files.
///
/// Float columns are written without Parquet min/max statistics: Parquet
/// leaves NaN out of them while DataFusion compares floats in total order
/// (NaN above everything), so row-group pruning on them would drop rows
/// where `x > 9` holds for a NaN. The manifest keeps NaN-aware bounds instead.
pub fn writer_properties(schema: &ArrowSchema) -> WriterProperties {
    let mut builder = WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::default()));
    let mut paths = Vec::new();
    float_leaves(schema.fields(), &mut Vec::new(), &mut paths);
    for path in paths {
        builder = builder.set_column_statistics_enabled(ColumnPath::new(path), EnabledStatistics::None);
    }
    builder.build()
}

fn float_leaves(fields: &Fields, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    for f in fields {
        prefix.push(f.name().clone());
        match f.data_type() {
            DataType::Float16 | DataType::Float32 | DataType::Float64 => out.push(prefix.clone()),
            DataType::Struct(children) => float_leaves(children, prefix, out),
            _ => {}
        }
        prefix.pop();
    }
}
