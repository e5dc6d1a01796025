//! Merge-on-read: find the positions of the rows a condition selects in a
//! data file, and write them as a position delete file.
//!
//! A position is a row's index in its data file (0-based), which is what
//! Iceberg position deletes record. The rows of one file are numbered by a
//! plan that reads that file alone, in one partition, deleted rows included
//! (`HiddenPartitionsTable::with_deleted_rows`):
//!
//! ```text
//! SELECT pos FROM (SELECT *, row_number() OVER () - 1 AS pos FROM <file>) WHERE (cond) IS TRUE
//! ```
//!
//! The numbering happens before the condition, so whatever the optimizer
//! does with the condition (a subquery becomes a join) the numbers stay
//! positions. Positions already deleted are left out, so the statement's
//! count is of rows that were there.
//!
//! The delete file is Iceberg's v2 layout, sorted by position, next to its
//! data file (same partition directory):
//!
//! | column      | type                 | field id   |
//! |-------------|----------------------|------------|
//! | `file_path` | string, required     | 2147483546 |
//! | `pos`       | long, required       | 2147483545 |
//!
//! `file_path` holds the data file's absolute path as Iceberg metadata
//! names it, so other engines match the delete file to its data file.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::datasource::provider_as_source;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, col, lit};
use datafusion::physical_plan::collect;
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectStoreExt, PutPayload};
use parquet::arrow::ArrowWriter;

use crate::error::{Error, Result};
use crate::manifest::DataFile;
use crate::manifest::deletes::{FILE_PATH_ID, POS_ID, checked_positions};
use crate::provider::HiddenPartitionsTable;
use crate::provider::planning::PlannedFile;
use crate::spec::types::PARQUET_FIELD_ID;
use crate::store::TableLocation;
use crate::table::pending::Pending;

/// Name of the position column of the numbering plan.
const POS: &str = "__hp_pos";

/// How many files are numbered at once.
const FILES_IN_FLIGHT: usize = 4;

/// The positions of the rows of each of `files` (of `table`) for which
/// `condition` is true, leaving out rows already deleted; files with none
/// are left out.
pub async fn matching_positions(
    state: &SessionState,
    table: &HiddenPartitionsTable,
    files: &[PlannedFile],
    condition: &Expr,
) -> Result<Vec<(usize, Vec<u64>)>> {
    // One partition: row_number() numbers the file's rows in file order.
    // (Not creating a default catalog: that would replace the session's.)
    let mut config = state.config().clone().with_create_default_catalog_and_schema(false);
    config.options_mut().execution.target_partitions = 1;
    let single = SessionStateBuilder::new_from_existing(state.clone())
        .with_config(config)
        .build();
    let all_rows = table.with_deleted_rows();
    let numbered: Vec<_> = files
        .iter()
        .enumerate()
        .map(|(i, f)| new_positions_in(&single, &all_rows, i, f, condition))
        .collect();
    let mut out: Vec<(usize, Vec<u64>)> = futures::stream::iter(numbered)
        .buffer_unordered(FILES_IN_FLIGHT)
        .try_collect()
        .await?;
    out.retain(|(_, p)| !p.is_empty());
    out.sort_by_key(|(i, _)| *i);
    Ok(out)
}

/// [`positions_in`] less the positions `file` already has deleted.
async fn new_positions_in(
    state: &SessionState,
    table: &HiddenPartitionsTable,
    index: usize,
    file: &PlannedFile,
    condition: &Expr,
) -> Result<(usize, Vec<u64>)> {
    let mut positions = positions_in(state, table, file, condition).await?;
    if let Some(deleted) = &file.deletes {
        positions.retain(|p| deleted.binary_search(p).is_err());
    }
    Ok((index, positions))
}

async fn positions_in(
    state: &SessionState,
    table: &HiddenPartitionsTable,
    file: &PlannedFile,
    condition: &Expr,
) -> Result<Vec<u64>> {
    let one = table.restricted_to(HashSet::from([file.path.clone()]));
    let plan = LogicalPlanBuilder::scan(table.table().name.clone(), provider_as_source(Arc::new(one)), None)?
        .window(vec![datafusion::functions_window::expr_fn::row_number().alias(POS)])?
        .filter(condition.clone().is_true())?
        .project(vec![col(POS) - lit(1u64)])?
        .build()?;
    let physical = state.create_physical_plan(&plan).await?;
    let batches = collect(physical, state.task_ctx()).await?;
    let numbered = match batches.first() {
        Some(first) => concat_batches(&first.schema(), &batches)?,
        None => return Ok(Vec::new()),
    };
    checked_positions(numbered.column(0), file.record_count, |p| {
        format!(
            "numbering the rows of data file {} gave position {}, but the manifest says it has {} rows; nothing was written",
            file.path,
            p.map_or("NULL".to_string(), |p| p.to_string()),
            file.record_count
        )
    })
}

/// Write the position delete file deleting `positions` (sorted) of data
/// file `data`, and describe it for a delete manifest.
pub async fn write_position_deletes(
    location: &TableLocation,
    data: &PlannedFile,
    positions: &[u64],
    pending: &Pending,
) -> Result<DataFile> {
    let stored_data = location.stored(&data.path)?;
    let absolute = location.iceberg_path(&stored_data);
    let field = |name: &str, dt: DataType, id: i32| {
        Field::new(name, dt, false).with_metadata(HashMap::from([(PARQUET_FIELD_ID.to_string(), id.to_string())]))
    };
    let schema = Arc::new(ArrowSchema::new(vec![
        field("file_path", DataType::Utf8, FILE_PATH_ID),
        field("pos", DataType::Int64, POS_ID),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                absolute.as_str(),
                positions.len(),
            ))),
            Arc::new(Int64Array::from_iter_values(positions.iter().map(|p| *p as i64))),
        ],
    )?;
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(
        &mut buf,
        schema,
        Some(crate::table::writer::writer_properties(&batch.schema())),
    )?;
    writer.write(&batch)?;
    writer.close()?;
    // Beside its data file: `<dir>/<table prefix>-<uuid>-deletes.parquet`.
    let name = format!("{}-deletes.parquet", location.fresh_name());
    let dir = stored_data.rsplit_once('/').map_or("", |(dir, _)| dir);
    let stored = if dir.is_empty() {
        TableLocation::stored_path([name.as_str()])
    } else {
        format!("{dir}/{}", TableLocation::stored_path([name.as_str()]))
    };
    let size = buf.len() as u64;
    location
        .store
        .put(&location.resolve(&stored)?, PutPayload::from(buf))
        .await?;
    let partition_strings = data
        .partition
        .iter()
        .map(|v| {
            crate::values::serialize(v).map_err(|e| Error::Invalid(format!("partition value of {}: {e}", data.path)))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(DataFile {
        path: stored,
        file_size: size,
        record_count: positions.len() as u64,
        spec_id: data.spec_id,
        partition: data.partition.clone(),
        partition_strings,
        column_stats: Vec::new(),
        pending: Some(pending.clone()),
        first_row_id: None,
        referenced_data_file: Some(stored_data),
    })
}
