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
//!
//! A source read with its lineage (`SnapshotSource::with_lineage`, a format
//! version 3 table) gives the shaping plan two more columns after the
//! table's, each row's id and last-updated sequence number
//! (`plan::lineage`). A plan that keeps them (with
//! `plan::lineage::carried`, which clears the sequence number of the rows
//! the statement changes) has them written into the new files, so copied
//! rows keep their ids; a plan that drops them writes rows as new.
//!
//! A table without lineage is read with positions instead ([`copy_source`]):
//! a plan that ends with `plan::copies::columns` (the source of each row,
//! none for rows the statement changes) has each new file record the rows
//! it copied in its footer, for the changelog.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::datasource::provider_as_source;
use datafusion::execution::SessionState;
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, col};
use datafusion::physical_plan::execute_stream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use futures::StreamExt;
use object_store::path::Path;

use crate::error::Result;
use crate::manifest::DataFile;
use crate::plan::positions::{FILE, POS};
use crate::plan::{copies, lineage};
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
/// table's schema, then the lineage when the plan has it) and a count
/// (e.g. rows matched).
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

/// The snapshot a copy-on-write statement reads to rewrite files: with
/// the rows' lineage where the table tracks it, else with their positions
/// (so that the new files can record their copies), except for other
/// engines' tables, whose changelogs do not use them.
pub fn copy_source(provider: &dyn SnapshotSource) -> Arc<dyn SnapshotSource> {
    if lineage::tracked(provider.metadata()) || provider.table().is_foreign() {
        provider.with_lineage()
    } else {
        provider.with_positions()
    }
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
    let read = restricted.schema();
    let mut scan = LogicalPlanBuilder::scan(table.table().name.clone(), provider_as_source(restricted), None)?;
    if read.index_of(lineage::STORED_ROW_ID).is_ok() {
        // The table's columns, the lineage, and the positions when asked for.
        let mut columns: Vec<Expr> = table.arrow_schema().fields().iter().map(|f| col(f.name())).collect();
        columns.extend(lineage::columns());
        if read.index_of(FILE).is_ok() {
            columns.extend([col(FILE), col(POS)]);
        }
        scan = scan.project(columns)?;
    }
    let plan = shape(scan)?.build()?;
    let with_lineage = plan.schema().index_of_column_by_name(None, lineage::ROW_SEQ).is_some();
    let with_copies = plan
        .schema()
        .index_of_column_by_name(None, copies::COPIED_POS)
        .is_some();
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
    let mut written = table.arrow_schema();
    if with_lineage {
        let mut fields: Vec<_> = written.fields().iter().cloned().collect();
        fields.extend(lineage::written_fields());
        written = Arc::new(datafusion::arrow::datatypes::Schema::new(fields));
    }
    if with_copies {
        let mut fields: Vec<_> = written.fields().iter().cloned().collect();
        for name in [copies::COPIED_FILE, copies::COPIED_POS] {
            let (_, field) = plan.schema().qualified_field_with_unqualified_name(name)?;
            fields.push(Arc::clone(field));
        }
        written = Arc::new(datafusion::arrow::datatypes::Schema::new(fields));
    }
    let stream = Box::pin(RecordBatchStreamAdapter::new(written, mapped));
    let spec = table.metadata().current_spec()?.clone();
    let mut options = crate::table::writer::write_options(&task);
    options.layout = layout;
    options.lineage = with_lineage;
    options.copies = with_copies;
    let (files, rows) = write_stream(&table.table().location, &spec, stream, options).await?;
    Ok(Rewritten {
        files,
        rows,
        counted: counted.load(Ordering::Relaxed),
    })
}
