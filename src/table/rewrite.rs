//! Copy-on-write: read some data files through DataFusion, reshape their
//! rows, write the result as new files.
//!
//! The files are read like any scan of the table (by field id, with the
//! schema of the snapshot, so old files of older specs read right), the plan
//! is shaped by the statement (a filter for DELETE, a projection for UPDATE,
//! a join for MERGE), and the rows are written with the current spec by the
//! same bounded-memory writer as INSERT. A row whose partition source
//! changed lands in its new partition.
//!
//! | statement | shape of the plan over the files read                         |
//! |-----------|----------------------------------------------------------------|
//! | DELETE    | `WHERE (cond) IS NOT TRUE` — the rows that stay                |
//! | UPDATE    | `SELECT CASE WHEN (cond) IS TRUE THEN v ELSE c END …`, plus a matched flag |
//! | optimize  | the rows as they are                                           |

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use datafusion::arrow::array::AsArray;
use datafusion::datasource::provider_as_source;
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlanBuilder;
use datafusion::physical_plan::execute_stream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use futures::StreamExt;
use object_store::path::Path;

use crate::error::Result;
use crate::manifest::DataFile;
use crate::provider::HiddenPartitionsTable;
use crate::table::writer::write_stream;

/// Name of the flag column a shape may append to count matched rows.
pub const MATCHED: &str = "__hp_matched";

/// What a rewrite wrote.
#[derive(Debug, Default)]
pub struct Rewritten {
    pub files: Vec<DataFile>,
    pub rows: u64,
    /// Rows whose [`MATCHED`] flag was true (when the shape added one).
    pub matched: u64,
}

/// Read `files` of `table`, shape the plan, write its rows as new files.
/// With `counts_matched`, the shaped plan's last column is the boolean
/// [`MATCHED`] flag: it is counted and not written.
pub async fn rewrite(
    state: &SessionState,
    table: &HiddenPartitionsTable,
    files: HashSet<Path>,
    shape: impl FnOnce(LogicalPlanBuilder) -> datafusion::error::Result<LogicalPlanBuilder>,
    counts_matched: bool,
) -> Result<Rewritten> {
    let restricted = table.restricted_to(files);
    let scan = LogicalPlanBuilder::scan(table.table().name.clone(), provider_as_source(Arc::new(restricted)), None)?;
    let plan = shape(scan)?.build()?;
    let physical = state.create_physical_plan(&plan).await?;
    let task = state.task_ctx();
    let mut stream = execute_stream(physical, Arc::clone(&task))?;
    let matched = Arc::new(AtomicU64::new(0));
    if counts_matched {
        let schema = stream.schema();
        let keep: Vec<usize> = (0..schema.fields().len().saturating_sub(1)).collect();
        let projected = Arc::new(schema.project(&keep)?);
        let counter = Arc::clone(&matched);
        let mapped = stream.map(move |batch| {
            let batch = batch?;
            let flags = batch.column(batch.num_columns() - 1).as_boolean();
            counter.fetch_add(flags.true_count() as u64, Ordering::Relaxed);
            Ok(batch.project(&keep)?)
        });
        stream = Box::pin(RecordBatchStreamAdapter::new(projected, mapped));
    }
    let spec = table.metadata().current_spec()?.clone();
    let options = crate::config::write_options(&task);
    let (files, rows) = write_stream(&table.table().location, &spec, stream, options).await?;
    Ok(Rewritten {
        files,
        rows,
        matched: matched.load(Ordering::Relaxed),
    })
}
