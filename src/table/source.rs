//! How a write operation reads the table it rewrites.
//!
//! DELETE, UPDATE, MERGE and OPTIMIZE read rows through DataFusion: a scan
//! of the snapshot they were planned on, restricted to the files they
//! rewrite, with each row's file and position for merge-on-read. That scan
//! is the `TableProvider` of `provider/`, a layer above this one, so the
//! operations see it through this trait and are handed a constructor
//! ([`OpenSource`]) by whoever builds them; `table/` never imports
//! `provider/`.
//!
//! | method           | a DELETE … WHERE day = '2024-05-01' uses it to                 |
//! |------------------|-----------------------------------------------------------------|
//! | `plan_files`     | choose the files of that day (the rest stay as they are)        |
//! | `restricted_to`  | read only those files while rewriting them                      |
//! | `with_positions` | find the deleted rows' positions (merge-on-read)                |
//! | `with_lineage`   | copy the rows' ids (format version 3) into the files it writes  |

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::logical_expr::Expr;
use object_store::path::Path;

use crate::error::Result;
use crate::plan::FilePlan;
use crate::spec::TableMetadata;
use crate::store::Versioned;
use crate::table::Table;

/// One snapshot of a table, readable by DataFusion.
#[async_trait]
pub trait SnapshotSource: TableProvider {
    /// The table read.
    fn table(&self) -> &Table;
    /// The metadata version read.
    fn metadata(&self) -> &TableMetadata;
    /// The table's columns (without the positions columns).
    fn arrow_schema(&self) -> SchemaRef;
    /// The files a scan with `filters` reads.
    async fn plan_files(&self, state: &dyn Session, filters: &[Expr]) -> datafusion::error::Result<FilePlan>;
    /// This snapshot read with each row's data file and position after the
    /// table's columns (see `plan::positions`).
    fn with_positions(&self) -> Arc<dyn SnapshotSource>;
    /// This snapshot read with its rows' lineage parts after the table's
    /// columns (see `plan::lineage`); as it is when the table tracks none.
    fn with_lineage(&self) -> Arc<dyn SnapshotSource>;
    /// This snapshot reading only `files`.
    fn restricted_to(&self, files: HashSet<Path>) -> Arc<dyn SnapshotSource>;
}

/// Opens `version` of a table as a [`SnapshotSource`] (a write statement
/// opens the snapshot it is attempted on, again after each conflict).
pub type OpenSource = fn(Table, Versioned) -> Result<Arc<dyn SnapshotSource>>;

/// How many lineage columns `source` reads after the table's: 2 when it was
/// opened `with_lineage` on a table that tracks lineage, else 0.
pub fn lineage_width(source: &dyn SnapshotSource) -> usize {
    if source.schema().index_of(crate::plan::lineage::STORED_ROW_ID).is_ok() {
        2
    } else {
        0
    }
}
