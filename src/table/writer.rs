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
use std::sync::atomic::{AtomicU64, Ordering};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryArray, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{cast, concat_batches, take_record_batch};
use datafusion::arrow::datatypes::{DataType, Fields, Schema as ArrowSchema, SchemaRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::ScalarValue;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryPool, MemoryReservation, UnboundedMemoryPool};
use futures::StreamExt;
use object_store::{ObjectStoreExt, PutPayload};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use tokio::task::JoinSet;

use crate::error::{Error, Result};
use crate::invalid;
use crate::manifest::stats::StatsCollector;
use crate::manifest::{ColumnStats, DataFile};
use crate::plan::copies::{self, FileCopies, SourcePaths, Sources};
use crate::spec::{TableMetadata, TableSpec};
use crate::store::TableLocation;
use crate::store::pending::Pending;
use crate::table::clustering::ClusterKey;
use crate::table::sort_order::{RowOrder, write_order};
use crate::transform::Transform;
use crate::values;

/// A partition's buffered rows are written as a file once they reach this size.
pub const PARTITION_BUFFER_SIZE: usize = 128 * 1024 * 1024;

pub use crate::config::DEFAULT_WRITE_BUFFER;

/// Small batches a partition collects before they are merged into one.
const MERGE_AFTER_BATCHES: usize = 64;

/// How a write may use memory and threads.
#[derive(Clone)]
pub struct WriteOptions {
    /// Bytes of buffered rows (plus files being encoded) before the largest
    /// partitions are written out as files.
    pub buffer_limit: usize,
    /// Buffers are reserved from this pool too (`datafusion.runtime.memory_limit`).
    pub memory_pool: Arc<dyn MemoryPool>,
    /// Files encoded and uploaded at once.
    pub parallelism: usize,
    /// The order of each file's rows and the size files are cut at.
    pub layout: FileLayout,
    /// Rows come with their lineage after the table's columns (a rewrite
    /// of a format version 3 table): written as `_row_id` and
    /// `_last_updated_sequence_number` (see `plan::lineage`).
    pub lineage: bool,
    /// Rows come with their source after the table's columns (and the
    /// lineage): a copy-on-write rewrite of a table without lineage. Each
    /// file records the rows it copied in its footer (see `plan::copies`).
    pub copies: bool,
}

/// The default of `write.target-file-size-bytes`: 512 MiB, as Iceberg's.
pub const DEFAULT_TARGET_FILE_SIZE: u64 = 512 * 1024 * 1024;

/// The table property that sets the size data files are cut at.
pub const TARGET_FILE_SIZE_PROPERTY: &str = "write.target-file-size-bytes";

/// How a table's writers lay rows out in files: each file's rows in the
/// table's sort order (and that order's id on the file), files cut once
/// their encoded size reaches the target.
#[derive(Debug, Clone)]
pub struct FileLayout {
    /// The order each file's rows are put in (`None`: as they come).
    pub order: Option<Arc<RowOrder>>,
    /// The sort order id recorded on each file: the rows are in that order.
    pub sort_order_id: Option<i32>,
    pub target_file_size: u64,
    /// Rows that arrive ordered along a space-filling curve (Z-order
    /// clustering): each row's key on it, so that files end where the curve
    /// leaves a large cell (see [`cut_at`]).
    pub curve: Option<Arc<ClusterKey>>,
}

impl Default for FileLayout {
    fn default() -> Self {
        Self {
            order: None,
            sort_order_id: None,
            target_file_size: DEFAULT_TARGET_FILE_SIZE,
            curve: None,
        }
    }
}

impl FileLayout {
    /// The layout `md`'s properties and default sort order ask for.
    pub fn of(md: &TableMetadata) -> Result<Self> {
        let target_file_size = match md.properties.get(TARGET_FILE_SIZE_PROPERTY) {
            Some(v) => parse_target_size(v)?,
            None => DEFAULT_TARGET_FILE_SIZE,
        };
        let (order, sort_order_id) = match write_order(md)? {
            Some((order, id)) => (Some(order), Some(id)),
            None => (None, None),
        };
        Ok(Self {
            order,
            sort_order_id,
            target_file_size,
            curve: None,
        })
    }
}

/// A `write.target-file-size-bytes` value: a positive number of bytes.
pub fn parse_target_size(value: &str) -> Result<u64> {
    match value.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => invalid!("table property {TARGET_FILE_SIZE_PROPERTY} is a positive number of bytes, not {value:?}"),
    }
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            buffer_limit: DEFAULT_WRITE_BUFFER,
            memory_pool: Arc::new(UnboundedMemoryPool::default()),
            parallelism: std::thread::available_parallelism().map_or(2, |n| n.get()),
            layout: FileLayout::default(),
            lineage: false,
            copies: false,
        }
    }
}

/// Rows and files written by all writers of this process so far (the
/// command line shows them while a long INSERT runs).
#[derive(Debug, Default)]
pub struct WriteProgress {
    pub rows: AtomicU64,
    pub files: AtomicU64,
    pub bytes: AtomicU64,
}

/// The process's [`WriteProgress`].
pub fn progress() -> &'static WriteProgress {
    static PROGRESS: WriteProgress = WriteProgress {
        rows: AtomicU64::new(0),
        files: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
    };
    &PROGRESS
}

/// The partition of a group of rows: typed values, their strings, the directory.
#[derive(Debug, Clone)]
struct PartitionKey {
    values: Vec<ScalarValue>,
    strings: Vec<Option<String>>,
    dirs: Vec<String>,
}

/// Rows of one partition waiting to be written.
struct Buffer {
    key: Arc<PartitionKey>,
    batches: Vec<RecordBatch>,
    bytes: usize,
}

/// Writes batches of a table spec's schema into partitioned Parquet files,
/// within a memory budget: rows are buffered per partition, and when the
/// buffers (plus files being encoded) would exceed the budget, the largest
/// partitions are written out as finished files, encoded and uploaded on
/// other threads while routing goes on.
pub struct PartitionedWriter {
    location: TableLocation,
    spec: TableSpec,
    /// The rows as buffered: the file's columns, then the [`copies::COPIED`] codes
    /// when the rows come with their source.
    file_schema: SchemaRef,
    /// Numbers the source files of copied rows (with `copies`).
    sources: Option<Sources>,
    transforms: Vec<(usize, Transform)>,
    partition_columns: Vec<values::PartitionColumn>,
    validated: Vec<usize>,
    converter: Option<RowConverter>,
    buffers: HashMap<Vec<u8>, Buffer>,
    /// Bytes buffered, plus bytes of files still being encoded.
    held: usize,
    reservation: MemoryReservation,
    options: WriteOptions,
    props: WriterProperties,
    in_flight: JoinSet<Result<(Vec<DataFile>, usize)>>,
    written: Vec<DataFile>,
    /// Registered before the first file is written; every file carries it.
    pending: Pending,
}

impl PartitionedWriter {
    pub fn try_new(location: TableLocation, spec: TableSpec) -> Result<Self> {
        Self::with_options(location, spec, WriteOptions::default())
    }

    pub fn with_options(location: TableLocation, spec: TableSpec, options: WriteOptions) -> Result<Self> {
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
        let mut file_schema = spec.schema.arrow_schema_with_ids();
        if options.lineage {
            let mut fields: Vec<_> = file_schema.fields().iter().cloned().collect();
            fields.extend(crate::plan::lineage::written_fields());
            file_schema = Arc::new(ArrowSchema::new_with_metadata(fields, file_schema.metadata().clone()));
        }
        let props = writer_properties(&file_schema);
        if options.copies {
            let mut fields: Vec<_> = file_schema.fields().iter().cloned().collect();
            fields.push(copies::written_field());
            file_schema = Arc::new(ArrowSchema::new_with_metadata(fields, file_schema.metadata().clone()));
        }
        let sources = options.copies.then(Sources::default);
        let reservation = MemoryConsumer::new("HiddenPartitionsWriter")
            .with_can_spill(true)
            .register(&options.memory_pool);
        Ok(Self {
            location,
            spec,
            file_schema,
            sources,
            transforms,
            partition_columns,
            validated,
            converter,
            buffers: HashMap::new(),
            held: 0,
            reservation,
            options,
            props,
            in_flight: JoinSet::new(),
            written: Vec::new(),
            pending: Pending::start(),
        })
    }

    /// Route the rows of `batch` (in the table's schema) to their partitions:
    /// one `take` puts the rows in partition order (a counting sort on the
    /// partition of each row), then each partition gets a zero-copy slice.
    pub async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let folded;
        let batch = match &mut self.sources {
            Some(sources) => {
                folded = sources.fold(batch)?;
                &folded
            }
            None => batch,
        };
        let batch = self.conform(batch)?;
        let partition_arrays = self
            .transforms
            .iter()
            .map(|(idx, t)| t.apply(batch.column(*idx)).map_err(Into::into))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let Some(converter) = &self.converter else {
            let bytes = batch.get_array_memory_size();
            return self.append(&[], &partition_arrays, 0, batch, bytes).await;
        };
        let rows = converter.convert_columns(&partition_arrays)?;
        let n = rows.num_rows();
        let mut ids: HashMap<&[u8], u32> = HashMap::new();
        let mut firsts: Vec<usize> = Vec::new();
        let mut group_of: Vec<u32> = Vec::with_capacity(n);
        for i in 0..n {
            let key = rows.row(i).data();
            let g = *ids.entry(key).or_insert_with(|| {
                firsts.push(i);
                (firsts.len() - 1) as u32
            });
            group_of.push(g);
        }
        if firsts.len() == 1 {
            let bytes = batch.get_array_memory_size();
            let key = rows.row(0).data().to_vec();
            return self.append(&key, &partition_arrays, 0, batch, bytes).await;
        }
        // Counting sort of row indices by partition.
        let mut starts = vec![0usize; firsts.len() + 1];
        for &g in &group_of {
            starts[g as usize + 1] += 1;
        }
        for g in 1..starts.len() {
            starts[g] += starts[g - 1];
        }
        let mut next = starts.clone();
        let mut order = vec![0u32; n];
        for (i, &g) in group_of.iter().enumerate() {
            order[next[g as usize]] = i as u32;
            next[g as usize] += 1;
        }
        let sorted = take_record_batch(&batch, &UInt32Array::from(order))?;
        let per_row = sorted.get_array_memory_size() / n.max(1);
        let keys: Vec<Vec<u8>> = firsts.iter().map(|&i| rows.row(i).data().to_vec()).collect();
        for (g, key) in keys.iter().enumerate() {
            let (start, len) = (starts[g], starts[g + 1] - starts[g]);
            let slice = sorted.slice(start, len);
            self.append(key, &partition_arrays, firsts[g], slice, per_row * len)
                .await?;
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
                    .map_err(|e| Error::Invalid(format!("partition field {:?}: {e}", field.name)))?,
            };
            key.dirs
                .push(values::hive::partition_dir(&field.name, string.as_deref()));
            key.values.push(value);
            key.strings.push(string);
        }
        Ok(key)
    }

    /// Buffer `rows` (about `bytes` of memory) for the partition `key`.
    async fn append(
        &mut self,
        key: &[u8],
        arrays: &[ArrayRef],
        first: usize,
        rows: RecordBatch,
        bytes: usize,
    ) -> Result<()> {
        progress().rows.fetch_add(rows.num_rows() as u64, Ordering::Relaxed);
        if !self.buffers.contains_key(key) {
            let pkey = Arc::new(self.partition_key(arrays, first)?);
            self.buffers.insert(
                key.to_vec(),
                Buffer {
                    key: pkey,
                    batches: Vec::new(),
                    bytes: 0,
                },
            );
        }
        let Some(buffer) = self.buffers.get_mut(key) else {
            return Ok(());
        };
        buffer.batches.push(rows);
        buffer.bytes += bytes;
        self.held += bytes;
        if buffer.batches.len() >= MERGE_AFTER_BATCHES {
            // Many small slices (each keeping its whole input batch alive):
            // one compact batch holds them in less memory.
            let merged = concat_batches(&self.file_schema, &buffer.batches)?;
            let merged_bytes = merged.get_array_memory_size();
            self.held = self.held - buffer.bytes + merged_bytes;
            buffer.bytes = merged_bytes;
            buffer.batches = vec![merged];
        }
        if buffer.bytes >= PARTITION_BUFFER_SIZE {
            self.flush(key).await?;
        }
        self.make_room().await
    }

    /// Write out the largest partitions until the buffers fit the budget and
    /// the session's memory pool grants them.
    async fn make_room(&mut self) -> Result<()> {
        loop {
            let wanted = self.held.saturating_sub(self.reservation.size());
            let within_budget = self.held <= self.options.buffer_limit;
            if within_budget && (wanted == 0 || self.reservation.try_grow(wanted).is_ok()) {
                return Ok(());
            }
            let largest = self.buffers.iter().max_by_key(|(_, b)| b.bytes).map(|(k, _)| k.clone());
            // A sorted flush adds its copy to what is held: wait for one
            // in flight first.
            let sorting = self.options.layout.order.is_some() && !self.in_flight.is_empty();
            match largest {
                Some(key) if !sorting => self.flush(&key).await?,
                _ if !self.in_flight.is_empty() => self.join_one().await?,
                Some(key) => self.flush(&key).await?,
                None => {
                    // Nothing left to write out: proceed with what is held.
                    self.reservation.grow(wanted);
                    return Ok(());
                }
            }
        }
    }

    /// Encode and upload one partition's buffer as a file, on another thread.
    async fn flush(&mut self, key: &[u8]) -> Result<()> {
        let Some(buffer) = self.buffers.remove(key) else {
            return Ok(());
        };
        while self.in_flight.len() >= self.options.parallelism.max(1) {
            self.join_one().await?;
        }
        let (location, schema, props) = (self.location.clone(), Arc::clone(&self.file_schema), self.props.clone());
        let fields: Vec<(i32, DataType)> = self
            .spec
            .schema
            .fields
            .iter()
            .zip(self.file_schema.fields())
            .map(|(f, af)| (f.id, af.data_type().clone()))
            .collect();
        let spec_id = self.spec.spec_id;
        let pending = self.pending.clone();
        let sources = self.sources.as_ref().map(Sources::paths);
        let layout = self.options.layout.clone();
        // Sorting holds a sorted copy beside the buffer while the file is
        // encoded: it counts against the budget until the file is written.
        let bytes = match layout.order {
            Some(_) => {
                self.held += buffer.bytes;
                2 * buffer.bytes
            }
            None => buffer.bytes,
        };
        self.in_flight.spawn(async move {
            let key = Arc::clone(&buffer.key);
            let sort_order_id = layout.sort_order_id;
            let encoded =
                tokio::task::spawn_blocking(move || encode(buffer.batches, schema, props, &fields, &layout, sources))
                    .await
                    .map_err(|e| Error::Invalid(format!("writing a data file failed: {e}")))??;
            let mut files = Vec::with_capacity(encoded.len());
            for file in encoded {
                files.push(upload(&location, spec_id, file, &key, pending.clone(), sort_order_id).await?);
            }
            Ok((files, bytes))
        });
        Ok(())
    }

    async fn join_one(&mut self) -> Result<()> {
        let Some(done) = self.in_flight.join_next().await else {
            return Ok(());
        };
        let (files, bytes) = done.map_err(|e| Error::Invalid(format!("writing a data file failed: {e}")))??;
        self.held = self.held.saturating_sub(bytes);
        self.reservation.shrink(bytes.min(self.reservation.size()));
        for file in files {
            progress().files.fetch_add(1, Ordering::Relaxed);
            progress().bytes.fetch_add(file.file_size, Ordering::Relaxed);
            self.written.push(file);
        }
        Ok(())
    }

    /// Write every buffered partition and return all data files written.
    pub async fn finish(mut self) -> Result<Vec<DataFile>> {
        let keys: Vec<Vec<u8>> = self.buffers.keys().cloned().collect();
        for key in keys {
            self.flush(&key).await?;
            self.make_room().await?;
        }
        while !self.in_flight.is_empty() {
            self.join_one().await?;
        }
        Ok(std::mem::take(&mut self.written))
    }

    /// Data files written so far (for cleanup when a write fails).
    pub fn written(&self) -> &[DataFile] {
        &self.written
    }

    /// Stop: wait for files being written, so that [`Self::written`] names
    /// every file that reached storage (for cleanup).
    pub async fn abort(&mut self) {
        self.buffers.clear();
        while let Some(done) = self.in_flight.join_next().await {
            if let Ok(Ok((files, _))) = done {
                self.written.extend(files);
            }
        }
    }
}

/// A file being written: its writer, column statistics, rows so far and
/// the copies among them (when the rows come with their source).
type OpenFile = (ArrowWriter<Vec<u8>>, Vec<StatsCollector>, u64, Option<FileCopies>);

/// One file's Parquet bytes, row count and column statistics.
struct Encoded {
    bytes: Vec<u8>,
    rows: u64,
    stats: Vec<ColumnStats>,
}

/// Rows a file is written in at a time, so that it is cut close to the
/// target size.
const ENCODE_CHUNK_ROWS: usize = 1024;

/// Encode one partition's rows as files: sorted by the layout's order, cut
/// when a file's encoded size reaches the layout's target (or, for rows
/// along a curve, at the curve's coarsest step once it is half that).
/// With `sources`, the rows' last column is their [`copies::COPIED`] code:
/// not written as a column, but gathered into each file's footer.
fn encode(
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
    props: WriterProperties,
    fields: &[(i32, DataType)],
    layout: &FileLayout,
    sources: Option<SourcePaths>,
) -> Result<Vec<Encoded>> {
    let batches = match (&layout.order, &layout.curve) {
        (Some(order), _) => vec![order.sort_batches(&schema, batches)?],
        (None, Some(_)) if batches.len() > 1 => vec![concat_batches(&schema, &batches)?],
        _ => batches,
    };
    // The rows as written, and their copy codes.
    let (schema, batches, codes): (SchemaRef, Vec<RecordBatch>, Option<Vec<ArrayRef>>) = match &sources {
        Some(_) => {
            let width = schema.fields().len() - 1;
            let kept: Vec<usize> = (0..width).collect();
            let codes = batches.iter().map(|b| Arc::clone(b.column(width))).collect();
            let batches = batches
                .iter()
                .map(|b| b.project(&kept))
                .collect::<std::result::Result<_, _>>()?;
            (Arc::new(schema.project(&kept)?), batches, Some(codes))
        }
        None => (schema, batches, None),
    };
    let props = crate::table::encodings::for_file(props, &schema, &batches);
    let mut files = Vec::new();
    let mut current: Option<OpenFile> = None;
    let finish = |file: OpenFile| match &sources {
        Some(paths) => finish_file(file, &copies::read_paths(paths)?),
        None => finish_file(file, &[]),
    };
    for (b, batch) in batches.iter().enumerate() {
        // Where the open file ends within this batch, once chosen.
        let mut end: Option<usize> = None;
        let mut offset = 0;
        while offset < batch.num_rows() {
            let limit = end.unwrap_or(batch.num_rows());
            let len = ENCODE_CHUNK_ROWS.min(limit - offset);
            let chunk = batch.slice(offset, len);
            offset += len;
            if current.is_none() {
                let stats = fields
                    .iter()
                    .map(|(id, dt)| StatsCollector::new(*id, dt))
                    .collect::<Result<Vec<_>>>()?;
                let writer = ArrowWriter::try_new(Vec::new(), Arc::clone(&schema), Some(props.clone()))?;
                current = Some((writer, stats, 0, codes.as_ref().map(|_| FileCopies::default())));
            }
            let Some((writer, stats, rows, copied)) = current.as_mut() else {
                unreachable!("a writer was just opened")
            };
            writer.write(&chunk)?;
            if let (Some(copied), Some(codes)) = (copied.as_mut(), &codes) {
                copied.add(*rows, codes[b].slice(offset - len, len).as_primitive());
            }
            for (collector, col) in stats.iter_mut().zip(chunk.columns()) {
                collector.update(col)?;
            }
            *rows += len as u64;
            let size = (writer.bytes_written() + writer.in_progress_size()) as u64;
            if let (Some(curve), None) = (&layout.curve, end)
                && size >= layout.target_file_size / 2
            {
                // As many rows again take the file to about the target:
                // end it at the coarsest step of the curve among them. Only
                // those rows' keys (and the one before) are computed.
                let window = (offset + *rows as usize).min(batch.num_rows());
                let from = offset - 1;
                let keys = curve.keys(&batch.slice(from, window - from))?;
                end = Some(from + cut_at(keys.as_binary::<i32>(), 1, window - from));
            }
            if size >= layout.target_file_size || end == Some(offset) {
                end = None;
                if let Some(done) = current.take() {
                    files.push(finish(done)?);
                }
            }
        }
    }
    if let Some(done) = current.take() {
        files.push(finish(done)?);
    }
    Ok(files)
}

/// The row in `from..=to` before which the curve takes its largest step:
/// where consecutive keys share the fewest leading bits (the first such
/// row). A file ending there covers whole cells of the curve instead of
/// straddling the border of a large one, so its bounding box stays small.
fn cut_at(keys: &BinaryArray, from: usize, to: usize) -> usize {
    let mut best = (usize::MAX, to);
    for i in from.max(1)..to {
        let shared = shared_bits(keys.value(i - 1), keys.value(i));
        if shared < best.0 {
            best = (shared, i);
        }
    }
    best.1
}

/// The number of leading bits two byte strings have in common.
fn shared_bits(a: &[u8], b: &[u8]) -> usize {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => i * 8 + (a[i] ^ b[i]).leading_zeros() as usize,
        None => a.len().min(b.len()) * 8,
    }
}

/// Close a file, its copies (numbered as `sources` says) in its footer.
fn finish_file((mut writer, stats, rows, copied): OpenFile, sources: &[String]) -> Result<Encoded> {
    if let Some(entry) = copied.map(|c| c.footer(sources)).transpose()?.flatten() {
        writer.append_key_value_metadata(entry);
    }
    Ok(Encoded {
        bytes: writer.into_inner()?,
        rows,
        stats: stats
            .into_iter()
            .map(StatsCollector::finish)
            .collect::<Result<Vec<ColumnStats>>>()?,
    })
}

/// Write every batch of `data` (in the spec's schema) into partitioned files
/// under `location`. Nothing is committed; on failure the files written so
/// far are deleted.
pub async fn write_stream(
    location: &TableLocation,
    spec: &TableSpec,
    mut data: SendableRecordBatchStream,
    options: WriteOptions,
) -> Result<(Vec<DataFile>, u64)> {
    let mut writer = PartitionedWriter::with_options(location.clone(), spec.clone(), options)?;
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
            writer.abort().await;
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

/// Upload one encoded file and describe it for the manifest.
async fn upload(
    location: &TableLocation,
    spec_id: i32,
    file: Encoded,
    key: &PartitionKey,
    pending: Pending,
    sort_order_id: Option<i32>,
) -> Result<DataFile> {
    // `<table prefix>-<uuid>.parquet`: a fresh name no other writer uses.
    let name = format!("{}.parquet", location.fresh_name());
    let mut segments: Vec<&str> = vec!["data"];
    segments.extend(key.dirs.iter().map(String::as_str));
    segments.push(&name);
    let path = TableLocation::stored_path(segments);
    let size = file.bytes.len() as u64;
    // A fresh UUID name: a plain put.
    location
        .store
        .put(&location.resolve(&path)?, PutPayload::from(file.bytes))
        .await?;
    Ok(DataFile {
        path,
        file_size: size,
        record_count: file.rows,
        spec_id,
        partition: key.values.clone(),
        partition_strings: key.strings.clone(),
        column_stats: file.stats,
        pending: Some(crate::spec::data_file::Hold::new(pending)),
        first_row_id: None,
        sort_order_id,
        referenced_data_file: None,
        blob: None,
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

/// How a statement running in `task` may write: its memory pool, the
/// write buffer size, and as many files at once as target partitions.
pub fn write_options(task: &datafusion::execution::TaskContext) -> WriteOptions {
    let config = task.session_config();
    let ours = config
        .options()
        .extensions
        .get::<crate::config::HiddenPartitionsOptions>()
        .cloned()
        .unwrap_or_default();
    WriteOptions {
        buffer_limit: ours.write_buffer_size,
        memory_pool: task.memory_pool().clone(),
        parallelism: config.target_partitions(),
        layout: FileLayout::default(),
        lineage: false,
        copies: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_end_at_the_largest_step_of_the_curve() {
        assert_eq!(shared_bits(&[0b1010_0000], &[0b1011_0000]), 3);
        assert_eq!(shared_bits(&[7, 1], &[7, 1]), 16);
        assert_eq!(shared_bits(&[7, 0b0100_0000], &[7, 0]), 9);
        // The step into row 1 shares 7 bits, into row 2 6, into row 3 1, into row 4 4.
        let keys = BinaryArray::from(vec![
            &[0b0000_0000u8][..],
            &[0b0000_0001],
            &[0b0000_0010],
            &[0b0100_0000],
            &[0b0100_1000],
        ]);
        assert_eq!(cut_at(&keys, 1, 5), 3);
        assert_eq!(cut_at(&keys, 4, 5), 4);
        // No step inside the window: the file ends at its end.
        assert_eq!(cut_at(&keys, 5, 5), 5);
    }
}
