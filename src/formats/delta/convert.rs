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
//! The live files are sorted by partition and cut into manifests of
//! [`FILES_PER_MANIFEST`], each with partition summaries, so summary
//! pruning skips whole groups as it does for our own manifests.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use delta_kernel::engine::arrow_conversion::TryFromKernel;

use super::generated::{derive, derived_value};
use super::log::LogSnapshot;
use super::stats::file_stats;
use crate::error::{Error, Result};
use crate::formats::manifest_batch::{ForeignDataFile, foreign_manifest_batch};
use crate::manifest::DataFile;
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

    // Typed partition values of every file.
    let physical: Vec<String> = log
        .partition_columns
        .iter()
        .map(|n| {
            log.columns
                .iter()
                .find(|c| &c.name == n)
                .map(|c| c.physical_name.clone())
                .unwrap_or_else(|| n.clone())
        })
        .collect();
    let mut rows: Vec<(Vec<ScalarValue>, &super::log::LogFile)> = Vec::with_capacity(log.files.len());
    for f in &log.files {
        let mut values = Vec::with_capacity(fields.len() + derived.len());
        for (name, phys) in log.partition_columns.iter().zip(&physical) {
            let dt = arrow_type(name).unwrap_or(DataType::Utf8);
            let raw = f.partition_values.get(phys).cloned().flatten();
            let value = crate::values::parse(raw.as_deref(), &dt).map_err(|e| {
                Error::Format(format!(
                    "Delta table {table}: partition value {raw:?} of column {name:?} in {}: {e}",
                    f.path
                ))
            })?;
            values.push(value);
        }
        rows.push((values, f));
    }
    // A derived field is kept only if every file's value converts.
    let mut kept_derived = Vec::new();
    for (i, transform, source_id) in derived {
        let converted: Option<Vec<ScalarValue>> = rows.iter().map(|(v, _)| derived_value(transform, &v[i])).collect();
        if let Some(values) = converted {
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
            kept_derived.push(values);
        }
    }
    for values in &kept_derived {
        for ((row, _), v) in rows.iter_mut().zip(values) {
            row.push(v.clone());
        }
    }
    let spec = TableSpec {
        spec_id: 0,
        schema: schema.clone(),
        partition_spec: PartitionSpec { fields },
    };
    // Sorted by partition so each manifest covers a narrow range.
    rows.sort_by(|(a, _), (b, _)| {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut counts_exact = true;
    let mut deleted = HashMap::new();
    let mut files = Vec::with_capacity(rows.len());
    for (values, f) in &rows {
        let stored = stored_path(&f.path, table)?;
        let stats = file_stats(
            f.stats.as_deref(),
            &schema,
            &log.columns,
            constants_of(&constants, values),
        );
        if stats.record_count.is_none() {
            counts_exact = false;
        }
        if let Some(d) = &f.deleted {
            if stats.record_count.is_none() {
                return Err(Error::Invalid(format!(
                    "Delta table {table}: file {} has a deletion vector but no numRecords statistic; reading it is not supported",
                    f.path
                )));
            }
            let mut d = d.clone();
            d.sort_unstable();
            d.dedup();
            deleted.insert(stored.clone(), d);
        }
        files.push(ForeignDataFile {
            file: DataFile {
                path: stored,
                file_size: f.size,
                record_count: stats.record_count.unwrap_or(0),
                spec_id: 0,
                partition_strings: values
                    .iter()
                    .map(|v| crate::values::serialize(v).ok().flatten())
                    .collect(),
                partition: values.clone(),
                column_stats: stats.columns,
                pending: None,
                first_row_id: None,
            },
            known_null_counts: stats.known_null_counts,
        });
    }
    let mut manifests = Vec::new();
    let mut batches = HashMap::new();
    for (i, chunk) in files.chunks(FILES_PER_MANIFEST).enumerate() {
        let path = format!("_delta_log/v{}#{i}", log.version);
        let batch = foreign_manifest_batch(&spec, chunk)?;
        let partitions = crate::manifest::io::summarize(&spec, &batch)?;
        batches.insert(path.clone(), batch);
        manifests.push(ManifestFile {
            path,
            length: 0,
            spec_id: 0,
            added_snapshot_id: log.version as i64,
            file_count: chunk.len() as u64,
            record_count: chunk.iter().map(|f| f.file.record_count).sum(),
            partitions,
            iceberg: None,
        });
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

/// Each partition column's value for a file: field id → typed value.
fn constants_of(constants: &[(usize, usize)], values: &[ScalarValue]) -> HashMap<usize, ScalarValue> {
    constants
        .iter()
        .filter_map(|(column, field)| Some((*column, values.get(*field)?.clone())))
        .collect()
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
