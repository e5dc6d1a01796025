//! The Delta log, replayed by `delta_kernel`: protocol, schema, live files.
//!
//! Kernel reads JSON commits and Parquet checkpoints (classic, multi-part,
//! v2 with sidecars), reconciles `add`/`remove`, and refuses reader
//! features it cannot read. We take from it, per live file: the path as
//! logged (relative, URL-encoded), size, raw `partitionValues` (physical
//! column names), the `stats` JSON string, and the deletion vector's
//! deleted row indexes. Its API is synchronous: call [`replay`] from a
//! blocking thread.
//!
//! Why kernel and not our own log reader: checkpoints in three layouts,
//! log compaction, `_last_checkpoint`, deletion-vector storage (Z85 inline,
//! UUID-named files, RoaringTreemap with CRC) and the protocol's feature
//! rules are exactly what kernel exists to get right.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::scan::state::ScanFile;
use delta_kernel::schema::{ColumnMetadataKey, MetadataValue, StructType};
use delta_kernel::table_features::ColumnMappingMode;
use delta_kernel::{KernelError, Snapshot};
use delta_kernel_default_engine::DefaultEngineBuilder;
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

/// One live data file.
#[derive(Debug, Clone)]
pub struct LogFile {
    /// As logged: relative to the table root and URL-encoded (or an absolute URL).
    pub path: String,
    pub size: u64,
    /// Physical column name → raw value (`None` for JSON null).
    pub partition_values: HashMap<String, Option<String>>,
    pub stats: Option<String>,
    /// Deleted row indexes from the file's deletion vector.
    pub deleted: Option<Vec<u64>>,
}

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
    pub files: Vec<LogFile>,
}

fn kernel_error(table: &str, e: KernelError) -> Error {
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
    acc.push(f);
}

/// Replay the log of the table at `root` (a URL ending in `/`) at `version`
/// (latest when `None`). Blocking.
pub fn replay(store: Arc<dyn ObjectStore>, root: &str, version: Option<u64>) -> Result<LogSnapshot> {
    let engine = DefaultEngineBuilder::new(store).build();
    let err = |e: KernelError| kernel_error(root, e);
    let mut builder = Snapshot::builder_for(root);
    if let Some(v) = version {
        builder = builder.at_version(v);
    }
    let snapshot = builder.build(&engine).map_err(err)?;
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
    let timestamp_ms = snapshot.get_timestamp(&engine).unwrap_or(0);
    let version_read = snapshot.version();
    let scan = Arc::clone(&snapshot).scan_builder().build().map_err(err)?;
    let table_root = scan.table_root().clone();
    let mut files = Vec::new();
    for meta in scan.scan_metadata(&engine).map_err(err)? {
        let meta = meta.map_err(err)?;
        // The stats JSON is not in ScanFile: read it from the batch by path.
        let mut stats_by_path: HashMap<String, String> = HashMap::new();
        if let Some(data) = meta.scan_files.data().any_ref().downcast_ref::<ArrowEngineData>() {
            let batch = data.record_batch();
            if let (Some(paths), Some(stats)) = (batch.column_by_name("path"), batch.column_by_name("stats")) {
                let (paths, stats) = (paths.as_string::<i32>(), stats.as_string::<i32>());
                for i in 0..batch.num_rows() {
                    if paths.is_valid(i) && stats.is_valid(i) {
                        stats_by_path.insert(paths.value(i).to_string(), stats.value(i).to_string());
                    }
                }
            }
        }
        for f in meta.visit_scan_files(Vec::new(), collect).map_err(err)? {
            let deleted = if f.dv_info.has_vector() {
                f.dv_info.get_row_indexes(&engine, &table_root).map_err(err)?
            } else {
                None
            };
            files.push(LogFile {
                stats: stats_by_path.remove(&f.path),
                size: f.size.max(0) as u64,
                partition_values: f.partition_values.into_iter().map(|(k, v)| (k, Some(v))).collect(),
                path: f.path,
                deleted,
            });
        }
    }
    Ok(LogSnapshot {
        version: version_read,
        timestamp_ms,
        table_id,
        columns,
        schema,
        partition_columns,
        column_mapping: mode,
        files,
    })
}
