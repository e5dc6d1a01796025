//! A scan that says where each row lives: its data file and its position
//! in that file (0-based, counting every row the file holds).
//!
//! Merge-on-read statements write Iceberg position deletes, which name rows
//! by `(file_path, pos)`. A positions scan
//! (`HiddenPartitionsTable::with_positions` in `provider/`)
//! adds two columns after the table's:
//!
//! | column      | type                        | from                                                    |
//! |-------------|-----------------------------|---------------------------------------------------------|
//! | `__hp_file` | run-end encoded string      | the data file's path (a constant per file, like a partition column) |
//! | `__hp_pos`  | long                        | Parquet's row number (a virtual column of the reader)   |
//!
//! The row number is the reader's own, absolute within the file, so it
//! stays right whatever the scan skips: rows already deleted (a row
//! selection), row groups pruned by statistics, rows filtered in the reader.
//! The path is run-end encoded: one run per batch, whatever its length, so
//! the column costs nothing per row (a dictionary would be validated key
//! by key, 10 M keys for a 10 M-row DELETE).
//!
//! Any plan over the scan (a filter, a join with a subquery or a MERGE
//! source) carries the two columns along to the rows it keeps.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::min;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Int32Type, Int64Type};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result as DFResult};
use parquet::arrow::RowNumber;

use crate::error::{Error, Result};

/// The column naming a row's data file.
pub const FILE: &str = "__hp_file";
/// The column holding a row's position in its data file.
pub const POS: &str = "__hp_pos";

/// The data file column (a partition column of the Parquet scan).
pub fn file_field() -> FieldRef {
    Arc::new(Field::new(FILE, file_type(), false))
}

/// The position column (the Parquet reader's row number).
pub fn pos_field() -> FieldRef {
    Arc::new(Field::new(POS, DataType::Int64, false).with_extension_type(RowNumber))
}

fn file_type() -> DataType {
    DataType::RunEndEncoded(run_ends_field(), values_field())
}

fn run_ends_field() -> FieldRef {
    Arc::new(Field::new("run_ends", DataType::Int32, false))
}

fn values_field() -> FieldRef {
    Arc::new(Field::new("values", DataType::Utf8, true))
}

/// The value of the data file column for the rows of `path`.
pub fn file_value(path: &str) -> ScalarValue {
    ScalarValue::RunEndEncoded(
        run_ends_field(),
        values_field(),
        Box::new(ScalarValue::Utf8(Some(path.to_string()))),
    )
}

/// Positions by data file path, gathered batch by batch from the two
/// columns (at `file` and `pos` in the batches).
#[derive(Debug, Default)]
pub struct Positions {
    by_file: HashMap<String, Vec<u64>>,
}

impl Positions {
    /// Add the positions of the rows of `batch`; one map lookup per run of
    /// rows from the same file (a run of the `__hp_file` column).
    pub fn add(&mut self, batch: &RecordBatch, file: usize, pos: usize) -> Result<()> {
        let column = batch.column(file);
        let Some(files) = column.as_run_opt::<Int32Type>() else {
            return Err(Error::Invalid(format!(
                "the {FILE} column is {}, not run-end encoded",
                column.data_type()
            )));
        };
        let positions = batch.column(pos).as_primitive::<Int64Type>();
        if files.values().null_count() > 0 || positions.null_count() > 0 {
            let missing = if files.values().null_count() > 0 { FILE } else { POS };
            return Err(Error::Invalid(format!("a row of a positions scan has no {missing}")));
        }
        if let Some(p) = min(positions).filter(|p| *p < 0) {
            return Err(Error::Invalid(format!(
                "a positions scan gave the negative position {p}"
            )));
        }
        let names = files.values().as_string::<i32>();
        let values = positions.values();
        let first = files.run_ends().get_start_physical_index();
        let mut start = 0;
        for (i, end) in files.run_ends().sliced_values().enumerate() {
            let end = end as usize;
            if end <= start {
                continue;
            }
            let name = names.value(first + i);
            let run = values[start..end].iter().map(|p| *p as u64);
            match self.by_file.get_mut(name) {
                Some(v) => v.extend(run),
                None => {
                    self.by_file.insert(name.to_string(), run.collect());
                }
            }
            start = end;
        }
        Ok(())
    }

    /// [`Self::add`] to positions shared with the statement that reads them.
    pub fn add_to(shared: &Mutex<Self>, batch: &RecordBatch, file: usize, pos: usize) -> DFResult<()> {
        let mut positions = shared.lock().map_err(|_| {
            DataFusionError::Internal("the positions of the changed rows were lost (a writer panicked)".into())
        })?;
        Ok(positions.add(batch, file, pos)?)
    }

    /// The positions gathered, by data file path, in no order.
    pub fn into_map(self) -> HashMap<String, Vec<u64>> {
        self.by_file
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{ArrayRef, Int64Array, RunArray, StringArray};
    use datafusion::arrow::datatypes::Schema;

    use super::*;

    fn batch(runs: &[(i32, &str)], positions: Vec<i64>) -> RecordBatch {
        let ends = datafusion::arrow::array::Int32Array::from(runs.iter().map(|r| r.0).collect::<Vec<_>>());
        let names = StringArray::from(runs.iter().map(|r| r.1).collect::<Vec<_>>());
        let files: ArrayRef = Arc::new(RunArray::<Int32Type>::try_new(&ends, &names).unwrap());
        let schema = Arc::new(Schema::new(vec![
            Field::new(FILE, files.data_type().clone(), false),
            Field::new(POS, DataType::Int64, false),
        ]));
        RecordBatch::try_new(schema, vec![files, Arc::new(Int64Array::from(positions))]).unwrap()
    }

    #[test]
    fn runs_of_files_give_each_file_its_positions_also_in_a_slice() {
        let b = batch(&[(2, "a"), (5, "b"), (6, "a")], vec![0, 7, 1, 2, 3, 9]);
        let mut gathered = Positions::default();
        gathered.add(&b, 0, 1).unwrap();
        // A slice starting inside the second run and ending inside it.
        gathered.add(&b.slice(3, 1), 0, 1).unwrap();
        let mut map = gathered.into_map();
        map.values_mut().for_each(|v| v.sort());
        assert_eq!(map["a"], vec![0, 7, 9]);
        assert_eq!(map["b"], vec![1, 2, 2, 3]);
    }

    #[test]
    fn a_file_column_of_another_type_or_a_negative_position_is_an_error() {
        let schema = Arc::new(Schema::new(vec![
            Field::new(FILE, DataType::Utf8, false),
            Field::new(POS, DataType::Int64, false),
        ]));
        let plain = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["a"])),
                Arc::new(Int64Array::from(vec![1])),
            ],
        )
        .unwrap();
        let e = Positions::default().add(&plain, 0, 1).unwrap_err().to_string();
        assert!(e.contains("not run-end encoded"), "{e}");
        let e = Positions::default()
            .add(&batch(&[(1, "a")], vec![-1]), 0, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("negative position -1"), "{e}");
    }
}
