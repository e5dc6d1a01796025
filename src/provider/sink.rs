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
use futures::StreamExt;
use object_store::ObjectStoreExt;

use crate::manifest::DataFile;
use crate::spec::TableSpec;
use crate::table::{PartitionedWriter, Table};

#[derive(Debug)]
pub struct HiddenPartitionsSink {
    table: Table,
    spec: TableSpec,
    schema: SchemaRef,
}

impl HiddenPartitionsSink {
    pub fn new(table: Table, spec: TableSpec, schema: SchemaRef) -> Self {
        Self { table, spec, schema }
    }

    async fn cleanup(&self, files: &[DataFile]) {
        for f in files {
            if let Ok(path) = self.table.location.resolve(&f.path) {
                let _ = self.table.location.store.delete(&path).await;
            }
        }
    }
}

impl DisplayAs for HiddenPartitionsSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "HiddenPartitionsSink: table={}, spec={}",
            self.table.name, self.spec.spec_id
        )
    }
}

#[async_trait]
impl DataSink for HiddenPartitionsSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(&self, mut data: SendableRecordBatchStream, _context: &Arc<TaskContext>) -> Result<u64> {
        let mut writer = PartitionedWriter::try_new(self.table.location.clone(), self.spec.clone())?;
        let mut rows = 0u64;
        while let Some(batch) = data.next().await {
            let result = match batch {
                Ok(batch) => {
                    rows += batch.num_rows() as u64;
                    writer.write(&batch).await.map_err(Into::into)
                }
                Err(e) => Err(e),
            };
            if let Err(e) = result {
                self.cleanup(writer.written()).await;
                return Err(e);
            }
        }
        let files = writer.finish().await?;
        if let Err(e) = self.table.append(self.spec.spec_id, files.clone()).await {
            self.cleanup(&files).await;
            return Err(e.into());
        }
        Ok(rows)
    }
}
