//! Foreign file lists in the manifest layout of `manifest::format`.
//!
//! The batch is built by the same code our own manifests use
//! ([`manifest_batch`]), with one difference: a foreign writer may not have
//! recorded a column's null count (an Iceberg file written before a column
//! was added, a Delta file without stats). Ours are never missing, so our
//! layout has no way to say so; here the `null_count` child becomes
//! nullable and is null where unknown. DataFusion's pruning reads a null
//! statistic as "unknown" and keeps the file; a 0 would let
//! `WHERE x IS NULL` drop files that hold NULLs.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, Int64Array, RecordBatch, StructArray};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Int64Type, Schema};

use crate::error::Result;
use crate::manifest::DataFile;
use crate::manifest::format::{NULL_COUNT, STATS, manifest_batch};
use crate::spec::TableSpec;

/// A data file of a foreign table and the columns whose null counts it knows.
#[derive(Debug, Clone)]
pub struct ForeignDataFile {
    pub file: DataFile,
    pub known_null_counts: HashSet<i32>,
}

impl AsRef<DataFile> for ForeignDataFile {
    fn as_ref(&self) -> &DataFile {
        &self.file
    }
}

/// The manifest batch of `files` (all of `spec`), unknown null counts null.
pub fn foreign_manifest_batch(spec: &TableSpec, files: &[ForeignDataFile]) -> Result<RecordBatch> {
    let batch = manifest_batch(spec, files)?;
    let Some(stats_index) = batch.schema().index_of(STATS).ok() else {
        return Ok(batch);
    };
    let stats = batch.column(stats_index).as_struct();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(stats.num_columns());
    let mut fields: Vec<Arc<Field>> = Vec::with_capacity(stats.num_columns());
    for (field, column) in stats.fields().iter().zip(stats.columns()) {
        let id: i32 = field.name().parse().unwrap_or(i32::MIN);
        let per_column = column.as_struct();
        let mut children: Vec<Arc<Field>> = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for (child, array) in per_column.fields().iter().zip(per_column.columns()) {
            if child.name() == NULL_COUNT {
                let counts = array.as_primitive::<Int64Type>();
                let patched: Int64Array = counts
                    .iter()
                    .zip(files)
                    .map(|(n, f)| n.filter(|_| f.known_null_counts.contains(&id)))
                    .collect();
                children.push(Arc::new(Field::new(NULL_COUNT, DataType::Int64, true)));
                arrays.push(Arc::new(patched));
            } else {
                children.push(Arc::clone(child));
                arrays.push(Arc::clone(array));
            }
        }
        let children = Fields::from(children);
        fields.push(Arc::new(Field::new(
            field.name(),
            DataType::Struct(children.clone()),
            field.is_nullable(),
        )));
        columns.push(Arc::new(StructArray::try_new(children, arrays, None)?));
    }
    let fields = Fields::from(fields);
    let new_stats = StructArray::try_new(fields.clone(), columns, None)?;
    let mut schema_fields: Vec<Arc<Field>> = batch.schema().fields().iter().cloned().collect();
    schema_fields[stats_index] = Arc::new(Field::new(STATS, DataType::Struct(fields), false));
    let mut arrays = batch.columns().to_vec();
    arrays[stats_index] = Arc::new(new_stats);
    Ok(RecordBatch::try_new(Arc::new(Schema::new(schema_fields)), arrays)?)
}
