//! Delta's change data feed, read by `delta_kernel`: the changes writers
//! recorded, for `table_changes` on a table with
//! `delta.enableChangeDataFeed`.
//!
//! A commit that rewrote files (DELETE, UPDATE, MERGE) records its changed
//! rows in `_change_data/` files, each row with its `_change_type`; kernel
//! reads those, and for commits without them takes the rows of added files
//! as inserts and of removed files as deletes, skipping `dataChange: false`
//! commits (OPTIMIZE).
//!
//! | version | commit                               | rows of the feed                          |
//! |---------|--------------------------------------|-------------------------------------------|
//! | 1       | add (5,'e')                          | (5,'e') `insert`                          |
//! | 2       | UPDATE id = 3: remove, add, cdc file | (3,'c') `update_preimage`, (3,'C') `update_postimage` |
//!
//! The feed is used when kernel accepts the range (the feed enabled at its
//! first and last version) and no commit inside it changed the metadata (a
//! schema change, or the feed switched off and on); otherwise the changes
//! are derived from the versions, as for any table.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch, StringBuilder, new_null_array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::streaming::PartitionStream;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::table_changes::TableChanges;
use delta_kernel::{Engine, KernelError};
use object_store::ObjectStore;

use super::log::{engine, kernel_error};
use crate::error::{Error, Result};
use crate::provider::changes::{CHANGE_TYPE, COMMIT_SNAPSHOT_ID};

/// Kernel's name of a feed row's version.
const COMMIT_VERSION: &str = "_commit_version";

/// The feed of the table at `root` (a URL ending in `/`) from version
/// `first` to `last` (both included), as `columns`, each read from the
/// column `select` names at `last` (NULL where `None`), then `_change_type` (`INSERT`, `DELETE`, `UPDATE_BEFORE`, `UPDATE_AFTER`)
/// and `_commit_snapshot_id` (the
/// version); `None` when the feed is not enabled over the whole range.
pub async fn open(
    name: &str,
    store: Arc<dyn ObjectStore>,
    root: &str,
    (first, last): (u64, u64),
    columns: &SchemaRef,
    select: &[Option<String>],
) -> Result<Option<Arc<dyn TableProvider>>> {
    let url = url::Url::parse(root).map_err(|e| Error::Invalid(format!("Delta table {name}: root {root}: {e}")))?;
    let check = {
        let (store, url) = (Arc::clone(&store), url.clone());
        move || {
            let engine = engine(store);
            TableChanges::try_new(url, engine.as_ref(), first, Some(last)).map(|_| ())
        }
    };
    let accepted = tokio::task::spawn_blocking(check).await.map_err(|e| {
        Error::Invalid(format!(
            "reading the change data feed of Delta table {name} failed: {e}"
        ))
    })?;
    match accepted {
        Ok(()) => {}
        Err(KernelError::ChangeDataFeedUnsupported(_) | KernelError::ChangeDataFeedIncompatibleSchema(..)) => {
            return Ok(None);
        }
        Err(e) => return Err(kernel_error(name, e)),
    }
    let mut fields: Vec<Field> = columns
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    fields.push(Field::new(CHANGE_TYPE, DataType::Utf8, false));
    fields.push(Field::new(COMMIT_SNAPSHOT_ID, DataType::Int64, false));
    let schema = Arc::new(ArrowSchema::new(fields));
    let feed = Arc::new(Feed {
        name: name.to_string(),
        store,
        url,
        first,
        last,
        schema: Arc::clone(&schema),
        select: select.to_vec(),
    });
    Ok(Some(Arc::new(StreamingTable::try_new(schema, vec![feed])?)))
}

/// One partition streaming kernel's feed.
#[derive(Debug)]
struct Feed {
    name: String,
    store: Arc<dyn ObjectStore>,
    url: url::Url,
    first: u64,
    last: u64,
    schema: SchemaRef,
    /// Per column of `schema` before the last two: its name in the feed.
    select: Vec<Option<String>>,
}

impl PartitionStream for Feed {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut builder = RecordBatchReceiverStream::builder(Arc::clone(&self.schema), 2);
        let tx = builder.tx();
        let (store, url, first, last) = (Arc::clone(&self.store), self.url.clone(), self.first, self.last);
        let (name, schema, select) = (self.name.clone(), Arc::clone(&self.schema), self.select.clone());
        // Kernel's API is synchronous: run it on a blocking thread.
        builder.spawn_blocking(move || {
            let fail = |e: KernelError| datafusion::error::DataFusionError::External(Box::new(kernel_error(&name, e)));
            let engine: Arc<dyn Engine> = engine(store);
            let changes = TableChanges::try_new(url, engine.as_ref(), first, Some(last)).map_err(fail)?;
            let scan = changes.into_scan_builder().build().map_err(fail)?;
            for data in scan.execute(Arc::clone(&engine)).map_err(fail)? {
                let data = ArrowEngineData::try_from_engine_data(data.map_err(fail)?).map_err(fail)?;
                let batch = as_feed_row(data.record_batch(), &schema, &select, &name)?;
                if tx.blocking_send(Ok(batch)).is_err() {
                    break; // the reader stopped
                }
            }
            Ok(())
        });
        builder.build()
    }
}

/// Kernel's batch (logical columns, `_change_type`, `_commit_version`,
/// `_commit_timestamp`) as the feed's columns, each found by name and cast
/// to the changelog's type.
fn as_feed_row(
    batch: &RecordBatch,
    schema: &SchemaRef,
    select: &[Option<String>],
    name: &str,
) -> datafusion::error::Result<RecordBatch> {
    let names = select
        .iter()
        .map(Option::as_deref)
        .chain([Some(CHANGE_TYPE), Some(COMMIT_VERSION)]);
    let columns = schema
        .fields()
        .iter()
        .zip(names)
        .map(|(field, source)| {
            let Some(source) = source else {
                return Ok(new_null_array(field.data_type(), batch.num_rows()));
            };
            let Some(column) = batch.column_by_name(source) else {
                return Err(datafusion::error::DataFusionError::Execution(format!(
                    "the change data feed of Delta table {name} has no column {source}"
                )));
            };
            if field.name() == CHANGE_TYPE {
                return change_types(column, name);
            }
            Ok(match column.data_type() == field.data_type() {
                true => Arc::clone(column),
                false => cast(column, field.data_type())?,
            })
        })
        .collect::<datafusion::error::Result<Vec<ArrayRef>>>()?;
    Ok(RecordBatch::try_new(Arc::clone(schema), columns)?)
}

/// Delta's change types in the changelog's words.
fn change_types(column: &ArrayRef, name: &str) -> datafusion::error::Result<ArrayRef> {
    let column = cast(column, &DataType::Utf8)?;
    let mut out = StringBuilder::with_capacity(column.len(), column.len() * 6);
    for value in column.as_string::<i32>() {
        out.append_value(match value {
            Some("insert") => "INSERT",
            Some("delete") => "DELETE",
            Some("update_preimage") => "UPDATE_BEFORE",
            Some("update_postimage") => "UPDATE_AFTER",
            other => {
                return Err(datafusion::error::DataFusionError::Execution(format!(
                    "the change data feed of Delta table {name} has a row of change type {other:?} (expected insert, delete, update_preimage or update_postimage)"
                )));
            }
        });
    }
    Ok(Arc::new(out.finish()))
}
