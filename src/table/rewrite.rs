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

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::datasource::provider_as_source;
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlanBuilder;
use datafusion::physical_plan::execute_stream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use futures::StreamExt;
use object_store::path::Path;

use crate::error::Result;
use crate::manifest::DataFile;
use crate::table::source::SnapshotSource;
use crate::table::writer::write_stream;

/// Name of the flag column an UPDATE appends to count matched rows.
pub const MATCHED: &str = "__hp_matched";

/// What a rewrite wrote.
#[derive(Debug, Default)]
pub struct Rewritten {
    pub files: Vec<DataFile>,
    pub rows: u64,
    /// The statement's count, as [`Post`] reported it batch by batch.
    pub counted: u64,
}

/// Turns each batch of the shaped plan into the rows to write (in the
/// table's schema) and a count (e.g. rows matched).
pub type Post = Box<dyn FnMut(RecordBatch) -> datafusion::error::Result<(RecordBatch, u64)> + Send>;

/// Rows as they come, counting nothing.
pub fn as_is() -> Post {
    Box::new(|batch| Ok((batch, 0)))
}

/// Count the trues of the last column (a [`MATCHED`] flag) and drop it.
pub fn count_last_flag() -> Post {
    Box::new(|batch| {
        let n = batch.num_columns();
        let flags = batch.column(n - 1).as_boolean();
        let count = flags.true_count() as u64;
        let keep: Vec<usize> = (0..n - 1).collect();
        Ok((batch.project(&keep)?, count))
    })
}

/// Read `files` of `table`, shape the plan, pass each batch through `post`,
/// and write the resulting rows (the table's columns) as new files, laid
/// out as the table's properties and sort order say.
pub async fn rewrite(
    state: &SessionState,
    table: &dyn SnapshotSource,
    files: HashSet<Path>,
    shape: impl FnOnce(LogicalPlanBuilder) -> datafusion::error::Result<LogicalPlanBuilder>,
    post: Post,
) -> Result<Rewritten> {
    let layout = crate::table::writer::FileLayout::of(table.metadata())?;
    rewrite_with_layout(state, table, files, shape, post, layout).await
}

/// [`rewrite`], with files laid out as `layout` says.
pub async fn rewrite_with_layout(
    state: &SessionState,
    table: &dyn SnapshotSource,
    files: HashSet<Path>,
    shape: impl FnOnce(LogicalPlanBuilder) -> datafusion::error::Result<LogicalPlanBuilder>,
    mut post: Post,
    layout: crate::table::writer::FileLayout,
) -> Result<Rewritten> {
    let restricted = table.restricted_to(files);
    let scan = LogicalPlanBuilder::scan(table.table().name.clone(), provider_as_source(restricted), None)?;
    let plan = shape(scan)?.build()?;
    let physical = state.create_physical_plan(&plan).await?;
    let task = state.task_ctx();
    let stream = execute_stream(physical, Arc::clone(&task))?;
    let counted = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&counted);
    let mapped = stream.map(move |batch| {
        let (batch, n) = post(batch?)?;
        counter.fetch_add(n, Ordering::Relaxed);
        Ok(batch)
    });
    let stream = Box::pin(RecordBatchStreamAdapter::new(table.arrow_schema(), mapped));
    let spec = table.metadata().current_spec()?.clone();
    let mut options = crate::table::writer::write_options(&task);
    options.layout = layout;
    let (files, rows) = write_stream(&table.table().location, &spec, stream, options).await?;
    Ok(Rewritten {
        files,
        rows,
        counted: counted.load(Ordering::Relaxed),
    })
}
