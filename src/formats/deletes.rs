//! Row-level deletes of foreign tables, in the two shapes the scan applies.
//!
//! | source                              | shape                         | applied by                                   |
//! |-------------------------------------|-------------------------------|----------------------------------------------|
//! | Iceberg position deletes            | deleted row positions         | a Parquet row selection of the file (`ParquetRowSelection`) |
//! | Delta deletion vectors              | deleted row positions         | the same                                     |
//! | Iceberg equality deletes            | rows of key columns           | [`super::equality_exec::EqualityDeleteExec`] above the scan |
//!
//! A file with deletes no longer has `record_count` rows, so a scan that
//! reads one reports its row count as inexact (COUNT(*) is then counted,
//! not answered from metadata).

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};

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

/// The row selection keeping every row of a `rows`-row file except `deleted`
/// (sorted); positions past the end are ignored.
pub fn keep_selection(rows: u64, deleted: &[u64]) -> RowSelection {
    let mut selectors = Vec::new();
    let mut next = 0u64;
    for &p in deleted.iter().filter(|p| **p < rows) {
        if p < next {
            continue;
        }
        if p > next {
            selectors.push(RowSelector::select((p - next) as usize));
        }
        selectors.push(RowSelector::skip(1));
        next = p + 1;
    }
    if next < rows {
        selectors.push(RowSelector::select((rows - next) as usize));
    }
    RowSelection::from(selectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_skips_exactly_the_deleted_rows() {
        let s = keep_selection(6, &[0, 2, 3, 9]);
        let v: Vec<RowSelector> = s.into();
        assert_eq!(
            v,
            vec![
                RowSelector::skip(1),
                RowSelector::select(1),
                RowSelector::skip(2),
                RowSelector::select(2),
            ]
        );
        let total: usize = keep_selection(6, &[0, 2, 3, 9]).iter().map(|s| s.row_count).sum();
        assert_eq!(total, 6);
    }
}
