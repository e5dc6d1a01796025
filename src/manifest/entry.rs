//! One file as tracked in a manifest: a data file, or a position delete
//! file naming the data file whose rows it deletes.

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
    /// lives, orphan removal keeps the file (see `store::pending`).
    pub pending: Option<crate::store::pending::Pending>,
    /// Iceberg v3 row lineage: the row id of the file's first row, once a
    /// manifest list assigned it (`None` for new files: inherited).
    pub first_row_id: Option<i64>,
    /// For a position delete file: the data file whose rows it deletes
    /// (stored form, as `path`); `None` for data files.
    pub referenced_data_file: Option<String>,
}

impl AsRef<DataFile> for DataFile {
    fn as_ref(&self) -> &DataFile {
        self
    }
}
