//! Row-level deletes of foreign tables, in the two shapes the scan applies.
//!
//! | source                              | shape                         | applied by                                   |
//! |-------------------------------------|-------------------------------|----------------------------------------------|
//! | Iceberg position deletes            | deleted row positions         | a Parquet row selection of the file (`manifest::deletes::keep_selection`) |
//! | Iceberg deletion vectors (v3)       | deleted row positions         | the same                                     |
//! | Delta deletion vectors              | deleted row positions         | the same                                     |
//! | Iceberg equality deletes            | rows of key columns           | [`super::equality_exec::EqualityDeleteExec`] above the scan |
//!
//! A file with deletes no longer has `record_count` rows, so a scan that
//! reads one reports its row count as inexact (COUNT(*) is then counted,
//! not answered from metadata).

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;

/// Deletes that apply to one data file.
#[derive(Debug, Clone, Default)]
pub struct FileDeletes {
    /// Deleted row positions (0-based in the file), sorted, no duplicates.
    pub positions: Vec<u64>,
    /// Equality delete sets whose matching rows are deleted.
    pub equality: Vec<Arc<EqualityDeletes>>,
}

impl FileDeletes {
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty() && self.equality.is_empty()
    }
}

/// The rows of one equality delete file: a row of the data file whose
/// values in these columns equal one of these rows (NULL equals NULL) is deleted.
#[derive(Debug)]
pub struct EqualityDeletes {
    /// The delete file, for messages.
    pub file: String,
    /// Table column names (current schema), one per column of `rows`.
    pub columns: Vec<String>,
    pub rows: RecordBatch,
}
