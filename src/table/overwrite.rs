//! `INSERT OVERWRITE t SELECT …`: the new rows replace the table, or only
//! the partitions they fall into.
//!
//! | `hidden_partitions.partition_overwrite_mode` | files removed                                                      |
//! |----------------------------------------------|--------------------------------------------------------------------|
//! | `static` (default, DataFusion's meaning)     | every file of the table, of every spec                             |
//! | `dynamic` (Spark's `partitionOverwriteMode`) | files of the *current* spec whose partition some new row falls into |
//!
//! Under partition evolution a "partition" is the current spec's: files of
//! older specs are never removed by a dynamic overwrite (their rows cannot
//! be matched to a current-spec partition without reading them); a static
//! overwrite removes them like all others.
//!
//! The statement's rows are read once, so a conflict cannot be retried: a
//! concurrent append into the overwritten partitions (or any, for static)
//! fails the statement and leaves the table as the other statement left it.

use std::collections::HashSet;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::ScalarValue;

use crate::error::{Error, Result};
use crate::expr::predicate::{BinaryOp, Predicate, UnaryOp};
use crate::manifest::format::{FILE_SIZE, PARTITION, PATH, RECORD_COUNT};
use crate::manifest::{DataFile, read_manifest};
use crate::plan::files::PlannedFile;
use crate::spec::{Snapshot, TableMetadata, TableSpec};
use crate::store::Versioned;
use crate::table::Table;
use crate::table::change::{Change, ConflictScope, Operation};

/// Which files an overwrite replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverwriteMode {
    /// The whole table.
    Static,
    /// The current spec's partitions the new rows fall into.
    Dynamic,
}

impl OverwriteMode {
    pub fn parse(value: &str) -> Result<Self> {
        match value.to_ascii_lowercase().as_str() {
            "static" => Ok(Self::Static),
            "dynamic" => Ok(Self::Dynamic),
            other => Err(Error::Invalid(format!(
                "hidden_partitions.partition_overwrite_mode is {other:?}; expected 'static' or 'dynamic'"
            ))),
        }
    }
}

/// Commit `files` (written under `spec`) in place of what `mode` replaces in
/// `base`, the version the statement read.
pub async fn commit_overwrite(
    table: &Table,
    base: &Versioned,
    spec: &TableSpec,
    files: &[DataFile],
    mode: OverwriteMode,
) -> Result<()> {
    let md = &base.metadata;
    let snapshot = md.current_snapshot();
    let mut change = Change::new(Operation::Overwrite, snapshot)?;
    let built = async {
        if let Some(snapshot) = snapshot {
            match mode {
                OverwriteMode::Static => {
                    change.scope = ConflictScope::Everything;
                    for m in snapshot.manifests()? {
                        change.replaced.insert(m.path.clone());
                        if m.is_deletes() {
                            change.removed_delete_files += m.file_count;
                            change.removed_position_deletes += m.record_count;
                        } else {
                            change.removed_files += m.file_count;
                            change.removed_rows += m.record_count;
                        }
                    }
                }
                OverwriteMode::Dynamic => {
                    let replaced = files_in_partitions(table, md, snapshot, spec, files).await?;
                    change.scope = ConflictScope::Partitions {
                        spec_id: spec.spec_id,
                        predicate: partitions_predicate(spec, files),
                    };
                    change.remove_files(&table.location, md, snapshot, &replaced).await?;
                }
            }
        }
        change.add_files(&table.location, spec, files).await
    }
    .await;
    if let Err(e) = built {
        change.discard(&table.location).await;
        return Err(e);
    }
    if change.is_empty() {
        return Ok(());
    }
    if let Err(e) = table.commit_change(&change).await {
        if !e.commit_may_have_happened() {
            change.discard(&table.location).await;
        }
        return Err(e);
    }
    Ok(())
}

/// Files of `spec` in `snapshot` whose partition is one the new `files` have.
async fn files_in_partitions(
    table: &Table,
    md: &TableMetadata,
    snapshot: &Snapshot,
    spec: &TableSpec,
    files: &[DataFile],
) -> Result<Vec<PlannedFile>> {
    let location = &table.location;
    let bound = spec.partition_spec.bind(&spec.schema)?;
    let converter = RowConverter::new(bound.iter().map(|b| SortField::new(b.result_type.clone())).collect())?;
    // The new partitions, in the Arrow row format.
    let mut columns = Vec::with_capacity(bound.len());
    for (i, b) in bound.iter().enumerate() {
        let values: Vec<ScalarValue> = files
            .iter()
            .map(|f| f.partition.get(i).cloned().unwrap_or(ScalarValue::Null))
            .map(|v| {
                if v.is_null() {
                    ScalarValue::try_from(&b.result_type)
                } else {
                    Ok(v)
                }
            })
            .collect::<datafusion::common::Result<_>>()?;
        columns.push(if values.is_empty() {
            datafusion::arrow::array::new_empty_array(&b.result_type)
        } else {
            ScalarValue::iter_to_array(values)?
        });
    }
    let new_rows = converter.convert_columns(&columns)?;
    let wanted: HashSet<Vec<u8>> = (0..new_rows.num_rows())
        .map(|i| new_rows.row(i).data().to_vec())
        .collect();
    let needed = [
        PATH.to_string(),
        FILE_SIZE.to_string(),
        RECORD_COUNT.to_string(),
        PARTITION.to_string(),
    ];
    let mut out = Vec::new();
    for (index, manifest) in snapshot.manifests()?.iter().enumerate() {
        if manifest.spec_id != spec.spec_id || manifest.is_deletes() {
            continue;
        }
        let batch = read_manifest(location, manifest, md.spec(manifest.spec_id)?, Some(&needed)).await?;
        let partition_columns: Vec<_> = match batch.column_by_name(PARTITION) {
            Some(p) => p.as_struct().columns().to_vec(),
            None => Vec::new(),
        };
        let rows = converter.convert_columns(&partition_columns)?;
        let (Some(paths), Some(sizes), Some(counts)) = (
            batch.column_by_name(PATH).map(|c| c.as_string::<i32>().clone()),
            batch
                .column_by_name(FILE_SIZE)
                .map(|c| c.as_primitive::<Int64Type>().clone()),
            batch
                .column_by_name(RECORD_COUNT)
                .map(|c| c.as_primitive::<Int64Type>().clone()),
        ) else {
            return crate::format_err!("manifest {} lacks path/size/record count", manifest.path);
        };
        for i in 0..batch.num_rows() {
            if !wanted.contains(rows.row(i).data()) || paths.is_null(i) {
                continue;
            }
            out.push(PlannedFile {
                path: location.resolve(paths.value(i))?,
                size: sizes.value(i) as u64,
                record_count: counts.value(i) as u64,
                spec_id: spec.spec_id,
                partition: partition_columns
                    .iter()
                    .map(|c| ScalarValue::try_from_array(c, i))
                    .collect::<datafusion::common::Result<_>>()?,
                manifest: index,
                deletes: None,
            });
        }
    }
    Ok(out)
}

/// A partition-level predicate that holds for exactly the partitions of
/// `files` (to check concurrent appends' manifest summaries against).
fn partitions_predicate(spec: &TableSpec, files: &[DataFile]) -> Predicate {
    let mut seen: HashSet<String> = HashSet::new();
    let mut tuples = Vec::new();
    for f in files {
        if seen.insert(format!("{:?}", f.partition)) {
            tuples.push(&f.partition);
        }
    }
    let ids: Vec<i32> = spec.partition_spec.fields.iter().map(|f| f.field_id).collect();
    let tuple_predicate = |tuple: &Vec<ScalarValue>| {
        Predicate::and_all(ids.iter().zip(tuple).map(|(&field, value)| {
            if value.is_null() {
                Predicate::Unary {
                    op: UnaryOp::IsNull,
                    field,
                }
            } else {
                Predicate::Binary {
                    op: BinaryOp::Eq,
                    field,
                    literal: value.clone(),
                }
            }
        }))
    };
    // Past a thousand partitions the summaries are checked against their
    // bounds per field only (conservative).
    if tuples.len() > 1000 {
        return Predicate::True;
    }
    tuples
        .into_iter()
        .map(tuple_predicate)
        .reduce(|a, b| Predicate::Or(Box::new(a), Box::new(b)))
        .unwrap_or(Predicate::False)
}
