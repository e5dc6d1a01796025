//! The Delta log, replayed by `delta_kernel`: protocol, schema, live files.
//!
//! Kernel reads JSON commits and Parquet checkpoints (classic, multi-part,
//! v2 with sidecars), reconciles `add`/`remove`, and refuses reader
//! features it cannot read. We take from it, as Arrow columns with one row
//! per live file: the path as logged (relative, URL-encoded), size, the
//! partition values typed (physical column names), the statistics typed
//! per column (kernel parses the `stats` JSON once, columnar, or takes a
//! checkpoint's `stats_parsed`); and each deletion vector's deleted row
//! indexes. Its API is synchronous: call [`replay`] from a blocking thread.
//!
//! Why kernel and not our own log reader: checkpoints in three layouts,
//! log compaction, `_last_checkpoint`, deletion-vector storage (Z85 inline,
//! UUID-named files, RoaringTreemap with CRC) and the protocol's feature
//! rules are exactly what kernel exists to get right.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, BooleanArray, RecordBatch};
use datafusion::arrow::compute::{concat_batches, filter_record_batch};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::scan::state::ScanFile;
use delta_kernel::scan::{PartitionValuesOptions, StatsOptions};
use delta_kernel::schema::{ColumnMetadataKey, MetadataValue, StructType};
use delta_kernel::table_features::ColumnMappingMode;
use delta_kernel::{Engine, KernelError, Snapshot};
use delta_kernel_default_engine::DefaultEngineBuilder;
use delta_kernel_default_engine::executor::tokio::TokioMultiThreadExecutor;
use object_store::ObjectStore;

use crate::error::{Error, Result};

/// Reader features whose effect on the data our reader handles.
const SUPPORTED_READER_FEATURES: &[&str] = &[
    "columnMapping",
    "deletionVectors",
    "timestampNtz",
    "timestampWithoutTimezone",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "typeWidening",
    "typeWidening-preview",
    // Written by delta-rs even without a variant column; a variant column
    // itself is refused when the schema is converted.
    "variantType",
    "variantType-preview",
];

/// One column of the logical schema.
#[derive(Debug, Clone)]
pub struct LogColumn {
    pub name: String,
    pub physical_name: String,
    pub mapping_id: Option<i64>,
    pub generation_expression: Option<String>,
    pub field: delta_kernel::schema::StructField,
}

/// A version of a Delta table.
#[derive(Debug, Clone)]
pub struct LogSnapshot {
    pub version: u64,
    pub timestamp_ms: i64,
    pub table_id: String,
    pub columns: Vec<LogColumn>,
    pub schema: Arc<StructType>,
    pub partition_columns: Vec<String>,
    pub column_mapping: ColumnMappingMode,
    /// The live files, one row each, as kernel's scan metadata gives them:
    /// `path` (as logged: relative, URL-encoded, or an absolute URL),
    /// `size`, `stats_parsed` (`numRecords`, `nullCount`, `minValues`,
    /// `maxValues` typed by column, physical names) and, for a partitioned
    /// table, `partitionValues_parsed` (typed, physical names).
    pub files: RecordBatch,
    /// Deleted row indexes from each deletion vector, by logged path.
    pub deleted: HashMap<String, Vec<u64>>,
}

pub(super) fn kernel_error(table: &str, e: KernelError) -> Error {
    match e {
        KernelError::MissingVersion(v) => Error::Invalid(format!(
            "Delta table {table}: log version {v} is missing or unavailable (the _delta_log has a gap, or the version does not exist)"
        )),
        KernelError::EmptyLog => Error::Invalid(format!("no Delta table at {table}: _delta_log holds no commit")),
        KernelError::InvalidTableLocation(l) => Error::Invalid(format!("no Delta table at {table}: {l}")),
        KernelError::Unsupported(m) => Error::Invalid(format!("Delta table {table} cannot be read: {m}")),
        other => Error::Invalid(format!("Delta table {table}: {other}")),
    }
}

fn collect(acc: &mut Vec<ScanFile>, f: ScanFile) {
    if f.dv_info.has_vector() {
        acc.push(f);
    }
}

/// The columns of the scan metadata we read, in this order.
const FILE_COLUMNS: [&str; 4] = ["path", "size", "stats_parsed", "partitionValues_parsed"];

/// Replay the log of the table at `root` (a URL ending in `/`) at `version`
/// (latest when `None`). Blocking.
pub fn replay(store: Arc<dyn ObjectStore>, root: &str, version: Option<u64>) -> Result<LogSnapshot> {
    replay_with(engine(store).as_ref(), root, version)
}

/// Kernel's default engine over `store`, doing its I/O on the caller's
/// runtime when there is a multi-threaded one (no thread and runtime of
/// its own per use).
pub fn engine(store: Arc<dyn ObjectStore>) -> Arc<dyn Engine> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            let executor = Arc::new(TokioMultiThreadExecutor::new(handle));
            Arc::new(DefaultEngineBuilder::new(store).with_task_executor(executor).build())
        }
        _ => Arc::new(DefaultEngineBuilder::new(store).build()),
    }
}

fn replay_with(engine: &dyn Engine, root: &str, version: Option<u64>) -> Result<LogSnapshot> {
    let err = |e: KernelError| kernel_error(root, e);
    let mut builder = Snapshot::builder_for(root);
    if let Some(v) = version {
        builder = builder.at_version(v);
    }
    let snapshot = builder.build(engine).map_err(err)?;
    let config = snapshot.table_configuration();
    let protocol = config.protocol();
    if protocol.min_reader_version() >= 3 {
        for feature in protocol.reader_features().unwrap_or_default() {
            let name = feature.to_string();
            if !SUPPORTED_READER_FEATURES.contains(&name.as_str()) {
                return Err(Error::Invalid(format!(
                    "Delta table {root} uses reader feature {name:?}, which hidden-partitions does not support; refusing to read it"
                )));
            }
        }
    }
    let metadata = config.metadata();
    let mode = config.column_mapping_mode();
    let schema = snapshot.schema();
    let columns = schema
        .fields()
        .map(|f| {
            let text = |key: ColumnMetadataKey| match f.get_config_value(&key) {
                Some(MetadataValue::String(s)) => Some(s.clone()),
                _ => None,
            };
            LogColumn {
                name: f.name().clone(),
                physical_name: f.physical_name(mode).to_string(),
                mapping_id: match f.get_config_value(&ColumnMetadataKey::ColumnMappingId) {
                    Some(MetadataValue::Number(n)) => Some(*n),
                    _ => None,
                },
                generation_expression: text(ColumnMetadataKey::GenerationExpression),
                field: f.clone(),
            }
        })
        .collect();
    let partition_columns = metadata.partition_columns().to_vec();
    let table_id = metadata.id().to_string();
    let timestamp_ms = snapshot.get_timestamp(engine).unwrap_or(0);
    let version_read = snapshot.version();
    // Typed statistics and partition values, straight from kernel (parsed
    // once, columnar; a checkpoint's own typed columns when it has them),
    // and no per-file transform expressions: our scan adds partition values.
    let scan = Arc::clone(&snapshot)
        .scan_builder()
        .without_row_transforms()
        .with_stats(StatsOptions::all_struct())
        .with_partition_values(PartitionValuesOptions::with_struct())
        .build()
        .map_err(err)?;
    let table_root = scan.table_root().clone();
    let mut batches = Vec::new();
    let mut deleted = HashMap::new();
    for meta in scan.scan_metadata(engine).map_err(err)? {
        let meta = meta.map_err(err)?;
        let Some(data) = meta.scan_files.data().any_ref().downcast_ref::<ArrowEngineData>() else {
            return Err(Error::Invalid(format!(
                "Delta table {root}: kernel returned scan metadata that is not Arrow data"
            )));
        };
        let batch = data.record_batch();
        let mut selected: Vec<bool> = meta.scan_files.selection_vector().to_vec();
        selected.resize(batch.num_rows(), true);
        let batch = filter_record_batch(batch, &BooleanArray::from(selected))?;
        if batch.num_rows() == 0 {
            continue;
        }
        let dv = batch.column_by_name("deletionVector");
        if dv.is_some_and(|dv| dv.null_count() < dv.len()) {
            for f in meta.visit_scan_files(Vec::new(), collect).map_err(err)? {
                if let Some(rows) = f.dv_info.get_row_indexes(engine, &table_root).map_err(err)? {
                    deleted.insert(f.path, rows);
                }
            }
        }
        let mut fields = Vec::new();
        let mut arrays = Vec::new();
        for name in FILE_COLUMNS {
            if let Ok(i) = batch.schema().index_of(name) {
                fields.push(batch.schema().field(i).clone());
                arrays.push(Arc::clone(batch.column(i)));
            }
        }
        batches.push(RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), arrays)?);
    }
    let files = match batches.first() {
        Some(first) => concat_batches(&first.schema(), &batches)?,
        None => RecordBatch::new_empty(Arc::new(ArrowSchema::new(vec![
            Field::new("path", DataType::Utf8, true),
            Field::new("size", DataType::Int64, true),
        ]))),
    };
    Ok(LogSnapshot {
        version: version_read,
        timestamp_ms,
        table_id,
        columns,
        schema,
        partition_columns,
        column_mapping: mode,
        files,
        deleted,
    })
}
