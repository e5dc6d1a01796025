//! The INSERT sink: partition, write data files, write a manifest, commit.
//!
//! Nothing becomes visible before the commit; when any step fails, the files
//! written so far are deleted (best effort) and the table is unchanged.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::datasource::sink::DataSink;
use datafusion::error::Result;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};

use crate::spec::TableSpec;
use crate::spec::sort_order::SortOrder;
use crate::store::Versioned;
use crate::table::Table;
use crate::table::overwrite::{OverwriteMode, commit_overwrite};
use crate::table::sort_order::RowOrder;
use crate::table::writer::FileLayout;
use crate::table::writer::{delete_files, write_stream};

#[derive(Debug)]
pub struct HiddenPartitionsSink {
    pub(crate) table: Table,
    pub(crate) spec: TableSpec,
    pub(crate) schema: SchemaRef,
    /// `None`: append; `Some(base)`: overwrite what the statement read.
    pub(crate) overwrite: Option<Versioned>,
    /// The table's write order (each file's rows sorted by it), if any.
    pub(crate) order: Option<SortOrder>,
    /// `write.target-file-size-bytes`.
    pub(crate) target_file_size: u64,
    layout: FileLayout,
}

impl HiddenPartitionsSink {
    pub fn new(table: Table, spec: TableSpec, schema: SchemaRef) -> Self {
        Self {
            table,
            spec,
            schema,
            overwrite: None,
            order: None,
            target_file_size: crate::table::writer::DEFAULT_TARGET_FILE_SIZE,
            layout: FileLayout::default(),
        }
    }

    /// Files in the table's write order `order`, cut at `target_file_size` bytes.
    pub fn with_layout(mut self, order: Option<SortOrder>, target_file_size: u64) -> crate::error::Result<Self> {
        let row_order = match &order {
            Some(o) => RowOrder::of(o, &self.spec.schema)?.map(Arc::new),
            None => None,
        };
        self.layout = FileLayout {
            sort_order_id: row_order.as_ref().and(order.as_ref()).map(|o| o.order_id),
            order: row_order,
            target_file_size: target_file_size.max(1),
            curve: None,
        };
        self.order = order;
        self.target_file_size = target_file_size.max(1);
        Ok(self)
    }

    /// An INSERT OVERWRITE of the table as of `base`.
    pub fn overwrite(mut self, base: Versioned) -> Self {
        self.overwrite = Some(base);
        self
    }
}

impl DisplayAs for HiddenPartitionsSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "HiddenPartitionsSink: table={}, spec={}{}",
            self.table.name,
            self.spec.spec_id,
            if self.overwrite.is_some() { ", overwrite" } else { "" }
        )
    }
}

#[async_trait]
impl DataSink for HiddenPartitionsSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(&self, data: SendableRecordBatchStream, context: &Arc<TaskContext>) -> Result<u64> {
        let mut options = crate::table::writer::write_options(context);
        options.layout = self.layout.clone();
        let mode = match &self.overwrite {
            Some(_) => {
                let ours = context
                    .session_config()
                    .options()
                    .extensions
                    .get::<crate::config::HiddenPartitionsOptions>()
                    .cloned()
                    .unwrap_or_default();
                Some(OverwriteMode::parse(&ours.partition_overwrite_mode)?)
            }
            None => None,
        };
        let (files, rows) = write_stream(&self.table.location, &self.spec, data, options).await?;
        let committed = match (&self.overwrite, mode) {
            (Some(base), Some(mode)) => commit_overwrite(&self.table, base, &self.spec, &files, mode).await,
            _ => self.table.append(&self.spec, files.clone()).await.map(|_| ()),
        };
        if let Err(e) = committed {
            if !e.commit_may_have_happened() {
                delete_files(&self.table.location, &files).await;
            }
            return Err(e.into());
        }
        Ok(rows)
    }
}
