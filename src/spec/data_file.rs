//! One file as tracked in a manifest: a data file, or a position delete
//! file naming the data file whose rows it deletes (Iceberg's `data_file`
//! struct; our Parquet manifests and the Avro ones hold the same).

use std::any::Any;
use std::sync::Arc;

use datafusion::common::ScalarValue;

/// Statistics of one top-level column in one data file.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnStats {
    pub field_id: i32,
    pub null_count: u64,
    /// `None` for types without an order (and when every value is null).
    pub min: Option<ScalarValue>,
    pub max: Option<ScalarValue>,
}

/// A data file: where it is, how big, which spec and partition, column stats.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFile {
    /// Relative to the table root, in stored (URI-encoded) form.
    pub path: String,
    pub file_size: u64,
    pub record_count: u64,
    pub spec_id: i32,
    /// Typed partition values in partition-spec order.
    pub partition: Vec<ScalarValue>,
    /// The serialized (protocol string) form of each partition value.
    pub partition_strings: Vec<Option<String>>,
    pub column_stats: Vec<ColumnStats>,
    /// Set on files this process wrote and has not committed yet: while it
    /// lives, orphan removal keeps the file (a `store::pending::Pending`).
    pub pending: Option<Hold>,
    /// Iceberg v3 row lineage: the row id of the file's first row, once a
    /// manifest list assigned it (`None` for new files: inherited).
    pub first_row_id: Option<i64>,
    /// The sort order its rows were written in (Iceberg's `sort_order_id`);
    /// `None` when unsorted or not known.
    pub sort_order_id: Option<i32>,
    /// For a position delete file: the data file whose rows it deletes
    /// (stored form, as `path`); `None` for data files.
    pub referenced_data_file: Option<String>,
    /// For a deletion vector (Iceberg v3): where its blob lies in the
    /// Puffin file `path` names; `None` for Parquet files.
    pub blob: Option<BlobRange>,
}

/// A blob's place in its Puffin file (Iceberg's `content_offset` and
/// `content_size_in_bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobRange {
    pub offset: i64,
    pub length: i64,
}

impl AsRef<DataFile> for DataFile {
    fn as_ref(&self) -> &DataFile {
        self
    }
}

/// What a file description keeps alive while it lives (a writer's
/// registration of its uncommitted files). Bookkeeping, not part of what
/// the file is: any two holds are equal.
#[derive(Clone)]
pub struct Hold {
    _held: Arc<dyn Any + Send + Sync>,
}

impl Hold {
    pub fn new(held: impl Any + Send + Sync) -> Self {
        Self { _held: Arc::new(held) }
    }
}

impl std::fmt::Debug for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hold")
    }
}

impl PartialEq for Hold {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
