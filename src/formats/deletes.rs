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

/// The positions (sorted) of the rows of data file `path` (`rows` rows) that
/// the equality deletes `sets` delete: the file's key columns are read by
/// field id (`schema`, the table's current schema, names them), a column
/// the file predates reads as NULL, and keys match when equal, NULL
/// matching NULL. For writers that keep deletes as positions.
pub async fn equality_positions(
    location: &crate::store::TableLocation,
    path: &object_store::path::Path,
    rows: u64,
    schema: &crate::spec::Schema,
    sets: &[Arc<EqualityDeletes>],
) -> crate::error::Result<Vec<u64>> {
    use datafusion::arrow::array::{ArrayRef, new_null_array};
    use datafusion::arrow::compute::cast;
    use object_store::ObjectStoreExt;

    if sets.is_empty() {
        return Ok(Vec::new());
    }
    let bytes = location.store.get(path).await?.bytes().await?;
    let mut deleted = vec![false; rows as usize];
    for set in sets {
        let mut ids = Vec::with_capacity(set.columns.len());
        for name in &set.columns {
            let Some(field) = schema.fields.iter().find(|f| &f.name == name) else {
                return crate::format_err!(
                    "equality delete file {} deletes by column {name}, which the table's schema does not have",
                    set.file
                );
            };
            ids.push((field.id, name.as_str()));
        }
        let (batch, present) = crate::manifest::deletes::read_present_columns(bytes.clone(), &ids, path.as_ref())?;
        if batch.num_rows() as u64 != rows {
            return crate::format_err!(
                "data file {path} has {} rows, its manifest says {rows}",
                batch.num_rows()
            );
        }
        let types: Vec<_> = set.rows.columns().iter().map(|c| c.data_type().clone()).collect();
        let keys: Vec<ArrayRef> = present
            .iter()
            .zip(&types)
            .map(|(i, t)| match i {
                Some(i) => cast(batch.column(*i), t),
                None => Ok(new_null_array(t, batch.num_rows())),
            })
            .collect::<std::result::Result<_, _>>()?;
        super::equality_exec::EqualityKeys::new(set, &types)?.mark(&keys, &mut deleted)?;
    }
    Ok((0..rows).filter(|p| deleted[*p as usize]).collect())
}
