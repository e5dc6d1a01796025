//! Columns that hold one value in a whole data file: those its partition
//! spec partitions by `identity`. The file's partition tuple gives that
//! value exactly, so a scan hands it to DataFusion's Parquet reader as the
//! file's statistics (minimum = maximum, no NULLs), and the reader fills the
//! column in as a constant instead of decoding it.
//!
//! | table `PARTITIONED BY (region)` | file `region=EU/…` | read as |
//! |---------------------------------|--------------------|---------|
//! | `region` (identity)             | partition `'EU'`   | the constant `'EU'` |
//! | `id`, `v`                       | —                  | decoded |
//!
//! Left out, so decoded as before:
//! - floating-point columns: `-0.0` and `0.0` are equal in SQL, so one
//!   partition may hold both, and a constant would change a row's sign;
//! - NULL partition values;
//! - columns the scan's schema no longer has, or nested ones.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, Statistics};

use super::PlannedFile;
use crate::spec::{Schema, TableMetadata};
use crate::transform::Transform;

/// Per table spec, the identity-partitioned columns of a scan's schema.
#[derive(Debug, Default)]
pub struct IdentityColumns {
    /// Table spec id → (column index in the scan, partition field index, column type).
    by_spec: HashMap<i32, Vec<(usize, usize, DataType)>>,
    /// Columns the scan reads from its files.
    width: usize,
}

impl IdentityColumns {
    /// The identity columns of every table spec of `metadata`, as columns
    /// of `schema` (found by field id); `width` is the number of columns the
    /// scan reads from its files (`schema`'s, then any others).
    pub fn new(metadata: &TableMetadata, schema: &Schema, width: usize) -> Self {
        let index: HashMap<i32, usize> = schema.fields.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
        let by_spec = metadata
            .table_specs
            .iter()
            .map(|spec| {
                let columns = spec
                    .partition_spec
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.transform == Transform::Identity)
                    .filter_map(|(p, f)| {
                        let column = *index.get(&f.source_id)?;
                        let data_type = schema.fields[column].field_type.to_arrow();
                        (!data_type.is_floating() && column < width).then_some((column, p, data_type))
                    })
                    .collect();
                (spec.spec_id, columns)
            })
            .collect();
        Self { by_spec, width }
    }

    /// Statistics of `file` that name its identity columns' values; `None`
    /// when it has none to name.
    pub fn statistics(&self, file: &PlannedFile) -> Option<Arc<Statistics>> {
        let columns = self.by_spec.get(&file.spec_id)?;
        let mut statistics: Option<Statistics> = None;
        for (column, p, data_type) in columns {
            let Some(value) = file.partition.get(*p).filter(|v| !v.is_null()) else {
                continue;
            };
            let Ok(value) = value.cast_to(data_type) else {
                continue;
            };
            if value.is_null() {
                continue;
            }
            let stats = statistics.get_or_insert_with(|| Statistics {
                num_rows: Precision::Absent,
                total_byte_size: Precision::Absent,
                column_statistics: vec![ColumnStatistics::new_unknown(); self.width],
            });
            stats.column_statistics[*column] = ColumnStatistics {
                null_count: Precision::Exact(0),
                min_value: Precision::Exact(value.clone()),
                max_value: Precision::Exact(value),
                ..ColumnStatistics::new_unknown()
            };
        }
        statistics.map(Arc::new)
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::datatypes::{Field, Schema as ArrowSchema};
    use datafusion::common::ScalarValue;

    use super::*;
    use crate::spec::{PartitionField, PartitionSpec};

    fn file(partition: Vec<ScalarValue>) -> PlannedFile {
        PlannedFile {
            path: "data/f.parquet".into(),
            size: 1,
            record_count: 1,
            spec_id: 0,
            partition,
            manifest: 0,
            deletes: None,
        }
    }

    #[test]
    fn names_non_null_identity_values_but_not_floats_or_other_transforms() {
        let arrow = ArrowSchema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("p", DataType::Int32, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        let schema = Schema::from_arrow(&arrow, 1).unwrap();
        let field = |source_id, transform: &str, name: &str| PartitionField {
            field_id: 1000 + source_id,
            source_id,
            transform: transform.parse().unwrap(),
            name: name.into(),
        };
        let spec = PartitionSpec {
            fields: vec![
                field(2, "identity", "p"),
                field(3, "identity", "f"),
                field(4, "truncate[1]", "s_trunc"),
            ],
        };
        let metadata = TableMetadata::new(schema.clone(), spec).unwrap();
        let identity = IdentityColumns::new(&metadata, &schema, 5);
        let values = vec![
            ScalarValue::Int32(Some(7)),
            ScalarValue::Float64(Some(-0.0)),
            ScalarValue::from("a"),
        ];
        let stats = identity.statistics(&file(values)).unwrap();
        assert_eq!(stats.column_statistics.len(), 5);
        assert_eq!(stats.num_rows, Precision::Absent);
        let p = &stats.column_statistics[1];
        assert_eq!(p.min_value, Precision::Exact(ScalarValue::Int32(Some(7))));
        assert_eq!(p.max_value, Precision::Exact(ScalarValue::Int32(Some(7))));
        assert_eq!(p.null_count, Precision::Exact(0));
        for other in [0, 2, 3, 4] {
            assert_eq!(
                stats.column_statistics[other],
                ColumnStatistics::new_unknown(),
                "column {other}"
            );
        }
        // A NULL partition value names nothing.
        let nulls = vec![
            ScalarValue::Int32(None),
            ScalarValue::Float64(Some(1.0)),
            ScalarValue::from("a"),
        ];
        assert!(identity.statistics(&file(nulls)).is_none());
        // Partition values of an older type are cast to the column's.
        let promoted = Schema::from_arrow(
            &ArrowSchema::new(vec![
                Field::new("id", DataType::Int64, true),
                Field::new("p", DataType::Int64, true),
            ]),
            1,
        )
        .unwrap();
        let stats = IdentityColumns::new(&metadata, &promoted, 2)
            .statistics(&file(vec![ScalarValue::Int32(Some(7))]))
            .unwrap();
        assert_eq!(
            stats.column_statistics[1].min_value,
            Precision::Exact(ScalarValue::Int64(Some(7)))
        );
    }
}
