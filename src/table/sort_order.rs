//! The table's write order: `ALTER TABLE t WRITE ORDERED BY (…)` /
//! `WRITE UNORDERED` as metadata-only commits, and the order the writers
//! put each file's rows in.
//!
//! | statement                                                   | default sort order                        |
//! |-------------------------------------------------------------|-------------------------------------------|
//! | `ALTER TABLE t WRITE ORDERED BY (a, b DESC)`                | `a ASC NULLS FIRST, b DESC NULLS LAST`     |
//! | `ALTER TABLE t WRITE ORDERED BY bucket(16, id) NULLS LAST`  | `bucket[16](id) ASC NULLS LAST`            |
//! | `ALTER TABLE t WRITE LOCALLY ORDERED BY a`                  | `a ASC NULLS FIRST` (files are always sorted one by one) |
//! | `ALTER TABLE t WRITE UNORDERED`                             | the unsorted order 0                      |
//! | `CREATE TABLE t (…) ORDERED BY (a)`                         | `a ASC NULLS FIRST` from the start        |
//!
//! Nulls go first in ascending and last in descending order unless the
//! statement says otherwise (Spark's and Iceberg's default).
//!
//! A file's rows are put in order by Arrow's sort kernels over the order's
//! values, transforms applied (`bucket(16, id)` sorts by the bucket); the
//! Arrow row format ([`RowOrder::keys`]: one byte string per row that
//! compares as the order does) serves clustering keys and key types the
//! kernels do not take.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, UInt32Array};
use datafusion::arrow::compute::{
    SortColumn, SortOptions, concat, interleave, lexsort_to_indices, sort_to_indices, take,
};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::row::{RowConverter, Rows, SortField as RowSortField};

use crate::error::Result;
use crate::invalid;
use crate::spec::sort_order::{NullOrder, SortDirection, SortField, SortOrder, add_order};
use crate::spec::{Schema, TableMetadata};
use crate::store::Versioned;
use crate::table::Table;
use crate::transform::Transform;

/// One term of `ORDERED BY` as the user writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortFieldDef {
    pub source: String,
    pub transform: Transform,
    pub descending: bool,
    /// `None`: first when ascending, last when descending.
    pub nulls_first: Option<bool>,
}

impl Table {
    /// `ALTER TABLE t WRITE ORDERED BY (…)`, or `WRITE UNORDERED` for an
    /// empty list: a metadata-only commit.
    pub async fn write_ordered_by(&self, fields: &[SortFieldDef]) -> Result<Versioned> {
        self.commit(|md| with_sort_order(md, fields)).await
    }
}

/// `md` whose default sort order is `fields` (unsorted when empty).
pub fn with_sort_order(md: &TableMetadata, fields: &[SortFieldDef]) -> Result<TableMetadata> {
    if fields.is_empty() && md.sort_order().is_none() {
        return Ok(md.clone());
    }
    let schema = &md.current_spec()?.schema;
    let fields = fields
        .iter()
        .map(|def| sort_field(schema, def))
        .collect::<Result<Vec<_>>>()?;
    let mut next = md.clone();
    let id = add_order(&mut next.sort_orders, fields);
    if let Some(order) = next.sort_orders.iter().find(|o| o.order_id == id) {
        order.check(schema)?;
    }
    next.default_sort_order_id = Some(id);
    Ok(next)
}

fn sort_field(schema: &Schema, def: &SortFieldDef) -> Result<SortField> {
    let Some(column) = schema.field_by_name(&def.source) else {
        return invalid!(
            "ORDERED BY: {:?} is not a column of the table (columns: {})",
            def.source,
            schema.column_names()
        );
    };
    if def.transform == Transform::Void {
        return invalid!("ORDERED BY: void({}) orders nothing; leave it out", def.source);
    }
    Ok(SortField {
        transform: def.transform,
        source_id: column.id,
        direction: if def.descending {
            SortDirection::Desc
        } else {
            SortDirection::Asc
        },
        null_order: match def.nulls_first.unwrap_or(!def.descending) {
            true => NullOrder::First,
            false => NullOrder::Last,
        },
    })
}

/// One key of a row order: a column of the rows, a transform of it, the
/// direction and null order.
#[derive(Debug, Clone)]
pub struct OrderKey {
    pub column: usize,
    pub transform: Transform,
    pub options: SortOptions,
}

/// Puts rows in an order of keys (see the module docs).
#[derive(Debug)]
pub struct RowOrder {
    keys: Vec<OrderKey>,
    converter: RowConverter,
}

impl RowOrder {
    /// The order of `order`'s fields over rows of `schema` (by position);
    /// `None` when `order` is unsorted.
    pub fn of(order: &SortOrder, schema: &Schema) -> Result<Option<Self>> {
        if order.is_unsorted() {
            return Ok(None);
        }
        order.check(schema)?;
        let mut keys = Vec::new();
        for f in &order.fields {
            let Some(column) = schema.index_of_id(f.source_id) else {
                return invalid!(
                    "sort order {}: column id {} is not in the schema",
                    order.order_id,
                    f.source_id
                );
            };
            keys.push(OrderKey {
                column,
                transform: f.transform,
                options: SortOptions {
                    descending: f.direction == SortDirection::Desc,
                    nulls_first: f.null_order == NullOrder::First,
                },
            });
        }
        Self::new(schema, keys).map(Some)
    }

    /// An order of `keys` over rows of `schema`.
    pub fn new(schema: &Schema, keys: Vec<OrderKey>) -> Result<Self> {
        let fields = keys
            .iter()
            .map(|k| {
                let source = schema.fields[k.column].field_type.to_arrow();
                Ok(RowSortField::new_with_options(
                    k.transform.result_type(&source)?,
                    k.options,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            keys,
            converter: RowConverter::new(fields)?,
        })
    }

    /// Each row's key: byte strings that compare as the order does.
    pub fn keys(&self, batch: &RecordBatch) -> Result<Rows> {
        let columns = self
            .keys
            .iter()
            .map(|k| k.transform.apply(batch.column(k.column)).map_err(Into::into))
            .collect::<Result<Vec<ArrayRef>>>()?;
        Ok(self.converter.convert_columns(&columns)?)
    }

    /// `batch` with its rows in this order.
    pub fn sort(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        self.sort_batches(&batch.schema(), vec![batch.clone()])
    }

    /// The rows of `batches` as one batch in this order. The sort looks at
    /// the key columns only; the rows are then gathered one column at a
    /// time, each input column dropped once gathered, so the copy never
    /// holds more than one column beside the input.
    pub fn sort_batches(&self, schema: &SchemaRef, batches: Vec<RecordBatch>) -> Result<RecordBatch> {
        let indices = self.sorted_indices(&batches)?;
        let mut starts = Vec::with_capacity(batches.len());
        let mut columns: Vec<Vec<ArrayRef>> = vec![Vec::with_capacity(batches.len()); schema.fields().len()];
        let mut rows = 0;
        for batch in batches {
            starts.push(rows);
            rows += batch.num_rows();
            for (column, array) in columns.iter_mut().zip(batch.into_parts().1) {
                column.push(array);
            }
        }
        // (batch, row) of each position, for gathering from several batches.
        let at: Vec<(usize, usize)> = match starts.len() {
            1 => Vec::new(),
            _ => indices
                .values()
                .iter()
                .map(|&i| {
                    let b = starts.partition_point(|&s| s <= i as usize) - 1;
                    (b, i as usize - starts[b])
                })
                .collect(),
        };
        let sorted = columns
            .into_iter()
            .map(|parts| match parts.as_slice() {
                [one] => take(one.as_ref(), &indices, None),
                _ => interleave(&parts.iter().map(|a| a.as_ref()).collect::<Vec<_>>(), &at),
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(RecordBatch::try_new_with_options(
            Arc::clone(schema),
            sorted,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )?)
    }

    /// Positions of the rows of `batches` (counted across them) in order:
    /// Arrow's sort kernels on the transformed key columns, the row format
    /// for key types they do not take.
    fn sorted_indices(&self, batches: &[RecordBatch]) -> Result<UInt32Array> {
        let mut keys = Vec::with_capacity(self.keys.len());
        for k in &self.keys {
            let parts = batches
                .iter()
                .map(|b| k.transform.apply(b.column(k.column)).map_err(Into::into))
                .collect::<Result<Vec<ArrayRef>>>()?;
            let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            keys.push(concat(&refs)?);
        }
        let columns: Vec<SortColumn> = keys
            .iter()
            .zip(&self.keys)
            .map(|(values, k)| SortColumn {
                values: Arc::clone(values),
                options: Some(k.options),
            })
            .collect();
        let sorted = match columns.as_slice() {
            [one] => sort_to_indices(&one.values, one.options, None),
            many => lexsort_to_indices(many, None),
        };
        if let Ok(indices) = sorted {
            return Ok(indices);
        }
        let rows = self.converter.convert_columns(&keys)?;
        let mut indices: Vec<u32> = (0..rows.num_rows() as u32).collect();
        indices.sort_by(|&a, &b| rows.row(a as usize).cmp(&rows.row(b as usize)));
        Ok(UInt32Array::from(indices))
    }
}

/// The row order writers of `md` follow and the id they record on each
/// file: the default sort order over the current schema, if any.
pub fn write_order(md: &TableMetadata) -> Result<Option<(Arc<RowOrder>, i32)>> {
    let Some(order) = md.sort_order() else {
        return Ok(None);
    };
    let schema = &md.current_spec()?.schema;
    Ok(RowOrder::of(order, schema)?.map(|o| (Arc::new(o), order.order_id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{AsArray, Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema as ArrowSchema};

    fn schema() -> Schema {
        let arrow = ArrowSchema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        Schema::from_arrow(&arrow, 1).unwrap()
    }

    #[test]
    fn sorts_by_direction_and_null_order() {
        let schema = schema();
        let md = TableMetadata::new(schema.clone(), Default::default()).unwrap();
        let def = |s: &str, descending, nulls_first| SortFieldDef {
            source: s.into(),
            transform: Transform::Identity,
            descending,
            nulls_first,
        };
        let md = with_sort_order(&md, &[def("s", false, None), def("a", true, None)]).unwrap();
        let order = md.sort_order().unwrap();
        assert_eq!(order.order_id, 1);
        assert_eq!(order.fields[1].null_order, NullOrder::Last);
        let batch = RecordBatch::try_new(
            schema.arrow_schema(),
            vec![
                Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(2)])),
                Arc::new(StringArray::from(vec![Some("x"), Some("x"), None, Some("x")])),
            ],
        )
        .unwrap();
        let (row_order, id) = write_order(&md).unwrap().unwrap();
        assert_eq!(id, 1);
        let sorted = row_order.sort(&batch).unwrap();
        let a: Vec<Option<i64>> = sorted.column(0).as_primitive::<Int64Type>().iter().collect();
        assert_eq!(a, vec![Some(3), Some(2), Some(1), None]);
        assert!(with_sort_order(&md, &[def("nope", false, None)]).is_err());
        let unsorted = with_sort_order(&md, &[]).unwrap();
        assert!(unsorted.sort_order().is_none());
        assert_eq!(unsorted.sort_orders.len(), 2);
    }

    #[test]
    fn sorts_several_batches_as_one() {
        let schema = schema();
        let md = TableMetadata::new(schema.clone(), Default::default()).unwrap();
        let md = with_sort_order(
            &md,
            &[
                SortFieldDef {
                    source: "s".into(),
                    transform: Transform::Identity,
                    descending: true,
                    nulls_first: None,
                },
                SortFieldDef {
                    source: "a".into(),
                    transform: Transform::Bucket(4),
                    descending: false,
                    nulls_first: None,
                },
            ],
        )
        .unwrap();
        let (order, _) = write_order(&md).unwrap().unwrap();
        let batch = |a: Vec<Option<i64>>, s: Vec<Option<&str>>| {
            RecordBatch::try_new(
                schema.arrow_schema(),
                vec![Arc::new(Int64Array::from(a)), Arc::new(StringArray::from(s))],
            )
            .unwrap()
        };
        let parts = vec![
            batch(vec![Some(1), Some(2), None], vec![Some("x"), None, Some("y")]),
            batch(vec![Some(3), Some(4)], vec![Some("x"), Some("z")]),
            batch(vec![Some(5), Some(6), Some(7)], vec![Some("y"), Some("x"), None]),
        ];
        let all = datafusion::arrow::compute::concat_batches(&schema.arrow_schema(), &parts).unwrap();
        let sorted = order.sort_batches(&schema.arrow_schema(), parts).unwrap();
        assert_eq!(sorted.num_rows(), 8);
        // The same order as the row format's byte strings give.
        let keys = order.keys(&sorted).unwrap();
        for i in 1..sorted.num_rows() {
            assert!(keys.row(i - 1) <= keys.row(i), "row {i} is out of order");
        }
        let mut before: Vec<Option<i64>> = all.column(0).as_primitive::<Int64Type>().iter().collect();
        let mut after: Vec<Option<i64>> = sorted.column(0).as_primitive::<Int64Type>().iter().collect();
        before.sort();
        after.sort();
        assert_eq!(before, after);
        let s: Vec<Option<&str>> = sorted.column(1).as_string::<i32>().iter().collect();
        assert_eq!(&s[..4], &[Some("z"), Some("y"), Some("y"), Some("x")]);
        assert_eq!(&s[6..], &[None, None]);
    }
}
