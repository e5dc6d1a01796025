//! A scan that says where each row lives: its data file and its position
//! in that file (0-based, counting every row the file holds).
//!
//! Merge-on-read statements write Iceberg position deletes, which name rows
//! by `(file_path, pos)`. A positions scan
//! ([`HiddenPartitionsTable::with_positions`](super::HiddenPartitionsTable::with_positions))
//! adds two columns after the table's:
//!
//! | column      | type                        | from                                                    |
//! |-------------|-----------------------------|---------------------------------------------------------|
//! | `__hp_file` | dictionary of strings       | the data file's path (a constant per file, like a partition column) |
//! | `__hp_pos`  | long                        | Parquet's row number (a virtual column of the reader)   |
//!
//! The row number is the reader's own, absolute within the file, so it
//! stays right whatever the scan skips: rows already deleted (a row
//! selection), row groups pruned by statistics, rows filtered in the reader.
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
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The value of the data file column for the rows of `path`.
pub fn file_value(path: &str) -> ScalarValue {
    ScalarValue::Dictionary(
        Box::new(DataType::Int32),
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
    /// rows from the same file.
    pub fn add(&mut self, batch: &RecordBatch, file: usize, pos: usize) -> Result<()> {
        let files = batch.column(file).as_dictionary_opt::<Int32Type>().ok_or_else(|| {
            Error::Invalid(format!(
                "the {FILE} column is {}, not a dictionary",
                batch.column(file).data_type()
            ))
        })?;
        let positions = batch.column(pos).as_primitive::<Int64Type>();
        if files.null_count() > 0 || positions.null_count() > 0 {
            let missing = if files.null_count() > 0 { FILE } else { POS };
            return Err(Error::Invalid(format!("a row of a positions scan has no {missing}")));
        }
        if let Some(p) = min(positions).filter(|p| *p < 0) {
            return Err(Error::Invalid(format!(
                "a positions scan gave the negative position {p}"
            )));
        }
        let names = files.values().as_string::<i32>();
        let (keys, values) = (files.keys().values(), positions.values());
        let mut start = 0;
        while start < keys.len() {
            let key = keys[start];
            let end = keys[start..]
                .iter()
                .position(|k| *k != key)
                .map_or(keys.len(), |n| start + n);
            let name = names.value(key as usize);
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
