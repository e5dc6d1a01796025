//! Manifest batches from a [`ManifestSource`] (the trait lives with the
//! table's location in `store::manifest_source`): narrowing a full batch to
//! the columns asked for.

use datafusion::arrow::array::RecordBatch;

use crate::error::Result;
pub use crate::store::manifest_source::ManifestSource;

/// Keep only `columns` (top-level names or `stats.<id>`) of a full manifest batch.
pub fn project_columns(batch: &RecordBatch, columns: Option<&[String]>) -> Result<RecordBatch> {
    use std::sync::Arc;

    use datafusion::arrow::array::{Array, ArrayRef, StructArray};
    use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema};

    let Some(columns) = columns else {
        return Ok(batch.clone());
    };
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    let mut stats: Vec<(Arc<Field>, ArrayRef)> = Vec::new();
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        if field.name() == super::format::STATS {
            let (DataType::Struct(children), Some(s)) =
                (field.data_type(), array.as_any().downcast_ref::<StructArray>())
            else {
                continue;
            };
            for (child, column) in children.iter().zip(s.columns()) {
                let wanted = format!("{}.{}", super::format::STATS, child.name());
                if columns.contains(&wanted) {
                    stats.push((Arc::clone(child), Arc::clone(column)));
                }
            }
            if !stats.is_empty() {
                let (f, a): (Vec<_>, Vec<_>) = std::mem::take(&mut stats).into_iter().unzip();
                let f = Fields::from(f);
                fields.push(Arc::new(Field::new(
                    super::format::STATS,
                    DataType::Struct(f.clone()),
                    field.is_nullable(),
                )));
                arrays.push(Arc::new(StructArray::try_new(f, a, None)?));
            }
        } else if columns.iter().any(|c| c == field.name()) {
            fields.push(Arc::clone(field));
            arrays.push(Arc::clone(array));
        }
    }
    let options = datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        arrays,
        &options,
    )?)
}
