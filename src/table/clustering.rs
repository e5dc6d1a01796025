//! Where `optimize(strategy => 'sort' | 'zorder')` puts each row: one byte
//! string per row (its cluster key) that a single sort of the rewritten
//! rows orders by; the writer then cuts the sorted rows into files, so
//! files of a partition hold key ranges that do not overlap.
//!
//! | strategy                         | key of a row                                              |
//! |----------------------------------|-----------------------------------------------------------|
//! | `sort` by `a DESC, b`            | partition values, then `a` descending, `b` (Arrow row format) |
//! | `zorder(a, b)`                   | partition values, then the bits of `a` and `b` interleaved |
//!
//! Z-order maps each value to 64 bits that keep its order: numbers (and
//! dates, times, timestamps, decimals) scaled into the range of the
//! rewritten rows (their min and max), so that two columns of different
//! magnitudes weigh alike; strings and binaries by their first 8 bytes after
//! the prefix the range shares; booleans as 0 and 1; nulls below every
//! value. Interleaving takes the top bit of each column in turn (32 bits each), so rows
//! near in every column are near in the key:
//!
//! | a (scaled) | b (scaled) | key bits           |
//! |------------|------------|--------------------|
//! | `10…`      | `01…`      | `1 0 0 1 …`        |

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility};

use crate::table::sort_order::RowOrder;

/// How the rewritten rows are ordered after their partition.
#[derive(Debug)]
pub enum Clustering {
    /// By the keys of a row order.
    Sort(RowOrder),
    /// By Z-order over columns (positions in the rows), each with the range
    /// of its values when known.
    ZOrder(Vec<ZColumn>),
}

/// One column of a Z-order.
#[derive(Debug, Clone)]
pub struct ZColumn {
    pub column: usize,
    /// The smallest and largest value among the rows (for scaling).
    pub min: Option<ScalarValue>,
    pub max: Option<ScalarValue>,
}

/// The cluster key as a SQL function over every column of the table (in
/// schema order): `Binary`, comparing bytewise as the layout orders.
#[derive(Debug)]
pub struct ClusterKey {
    partition: Option<RowOrder>,
    clustering: Clustering,
    signature: Signature,
}

impl ClusterKey {
    pub fn new(partition: Option<RowOrder>, clustering: Clustering) -> Self {
        Self {
            partition,
            clustering,
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }

    /// The key of every row of `batch` (the table's columns).
    pub fn keys(&self, batch: &RecordBatch) -> crate::error::Result<ArrayRef> {
        let n = batch.num_rows();
        let partition = self.partition.as_ref().map(|p| p.keys(batch)).transpose()?;
        let mut builder = BinaryBuilder::with_capacity(n, n * 16);
        match &self.clustering {
            Clustering::Sort(order) => {
                let rows = order.keys(batch)?;
                let mut buf = Vec::new();
                for i in 0..n {
                    buf.clear();
                    if let Some(p) = &partition {
                        buf.extend_from_slice(p.row(i).data());
                    }
                    buf.extend_from_slice(rows.row(i).data());
                    builder.append_value(&buf);
                }
            }
            Clustering::ZOrder(columns) => {
                let mapped = columns
                    .iter()
                    .map(|c| ordered_bits(batch.column(c.column), c))
                    .collect::<crate::error::Result<Vec<Vec<u64>>>>()?;
                let (mut buf, mut values) = (Vec::new(), vec![0u64; mapped.len()]);
                for i in 0..n {
                    buf.clear();
                    if let Some(p) = &partition {
                        buf.extend_from_slice(p.row(i).data());
                    }
                    for (v, m) in values.iter_mut().zip(&mapped) {
                        *v = m[i];
                    }
                    interleave(&values, &mut buf);
                    builder.append_value(&buf);
                }
            }
        }
        Ok(Arc::new(builder.finish()))
    }
}

impl PartialEq for ClusterKey {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for ClusterKey {}

impl std::hash::Hash for ClusterKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self as *const Self as usize).hash(state)
    }
}

impl ScalarUDFImpl for ClusterKey {
    fn name(&self) -> &str {
        "hp_cluster_key"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> datafusion::error::Result<DataType> {
        Ok(DataType::Binary)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> datafusion::error::Result<ColumnarValue> {
        let n = args.number_rows;
        let columns = args
            .args
            .iter()
            .map(|a| a.to_array(n))
            .collect::<datafusion::error::Result<Vec<_>>>()?;
        let fields: Vec<_> = args.arg_fields.iter().map(|f| f.as_ref().clone()).collect();
        let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(fields));
        let batch = RecordBatch::try_new_with_options(
            schema,
            columns,
            &datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(n)),
        )?;
        Ok(ColumnarValue::Array(self.keys(&batch)?))
    }
}

/// Each value of `array` as 64 bits in its order (see the module docs).
fn ordered_bits(array: &ArrayRef, column: &ZColumn) -> crate::error::Result<Vec<u64>> {
    let n = array.len();
    match array.data_type() {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => {
            let bytes = cast(array, &DataType::Binary)?;
            let bytes = bytes.as_binary::<i32>();
            let prefix = shared_prefix(column);
            Ok((0..n)
                .map(|i| {
                    if bytes.is_null(i) {
                        return 0;
                    }
                    let v = bytes.value(i);
                    let v = v.strip_prefix(prefix.as_slice()).unwrap_or(v);
                    let mut word = [0u8; 8];
                    let take = v.len().min(8);
                    word[..take].copy_from_slice(&v[..take]);
                    // Nulls are 0: a value is at least 1.
                    u64::from_be_bytes(word).max(1)
                })
                .collect())
        }
        DataType::Boolean => {
            let b = array.as_boolean();
            Ok((0..n)
                .map(|i| match (b.is_null(i), b.is_valid(i) && b.value(i)) {
                    (true, _) => 0,
                    (false, false) => 1 << 62,
                    (false, true) => 3 << 62,
                })
                .collect())
        }
        _ => {
            let numbers = as_f64(array)?;
            let numbers = numbers.as_primitive::<Float64Type>();
            let range = match (&column.min, &column.max) {
                (Some(min), Some(max)) => scalar_f64(min).zip(scalar_f64(max)).filter(|(a, b)| a < b),
                _ => None,
            };
            Ok((0..n)
                .map(|i| {
                    if numbers.is_null(i) {
                        return 0;
                    }
                    let v = numbers.value(i);
                    match range {
                        Some((min, max)) => {
                            let scaled = ((v - min) / (max - min)).clamp(0.0, 1.0);
                            // Top 62 bits: 0 stays for nulls.
                            1 + (scaled * ((1u64 << 62) as f64)) as u64
                        }
                        None => total_order_bits(v).max(1),
                    }
                })
                .collect())
        }
    }
}

/// A number array (ints, floats, decimals, dates, times, timestamps) as f64.
fn as_f64(array: &ArrayRef) -> crate::error::Result<ArrayRef> {
    let numeric = match array.data_type() {
        DataType::Date32 => cast(array, &DataType::Int32)?,
        DataType::Date64 | DataType::Timestamp(_, _) | DataType::Time64(_) | DataType::Duration(_) => {
            cast(array, &DataType::Int64)?
        }
        DataType::Time32(_) => cast(array, &DataType::Int32)?,
        _ => Arc::clone(array),
    };
    Ok(cast(&numeric, &DataType::Float64)?)
}

fn scalar_f64(v: &ScalarValue) -> Option<f64> {
    if v.is_null() {
        return None;
    }
    let array = as_f64(&v.to_array().ok()?).ok()?;
    let f = array.as_primitive::<Float64Type>();
    (f.is_valid(0) && f.value(0).is_finite()).then(|| f.value(0))
}

/// An f64's bits, ordered as the numbers are (negative below positive).
fn total_order_bits(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | (1 << 63) }
}

/// The bytes the column's min and max share at their start (strings).
fn shared_prefix(column: &ZColumn) -> Vec<u8> {
    let bytes = |v: &Option<ScalarValue>| match v {
        Some(ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) | ScalarValue::Utf8View(Some(s))) => {
            Some(s.as_bytes().to_vec())
        }
        Some(ScalarValue::Binary(Some(b)) | ScalarValue::LargeBinary(Some(b)) | ScalarValue::BinaryView(Some(b))) => {
            Some(b.clone())
        }
        _ => None,
    };
    match (bytes(&column.min), bytes(&column.max)) {
        (Some(a), Some(b)) => a.iter().zip(&b).take_while(|(x, y)| x == y).map(|(x, _)| *x).collect(),
        _ => Vec::new(),
    }
}

/// Append the top 32 bits of `values` interleaved, most significant first
/// (4 billion steps per column are finer than any file).
fn interleave(values: &[u64], out: &mut Vec<u8>) {
    let mut byte = 0u8;
    let mut filled = 0;
    for bit in (32..64).rev() {
        for v in values {
            byte = (byte << 1) | ((v >> bit) & 1) as u8;
            filled += 1;
            if filled == 8 {
                out.push(byte);
                byte = 0;
                filled = 0;
            }
        }
    }
    if filled > 0 {
        out.push(byte << (8 - filled));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;

    #[test]
    fn interleaves_most_significant_bits_first() {
        let mut out = Vec::new();
        interleave(&[u64::MAX, 0], &mut out);
        assert_eq!(out.len(), 8);
        assert!(out.iter().all(|b| *b == 0b1010_1010));
    }

    #[test]
    fn scaled_numbers_keep_their_order_and_nulls_go_first() {
        let array: ArrayRef = Arc::new(Int64Array::from(vec![Some(5), None, Some(-3), Some(100)]));
        let column = ZColumn {
            column: 0,
            min: Some(ScalarValue::Int64(Some(-3))),
            max: Some(ScalarValue::Int64(Some(100))),
        };
        let bits = ordered_bits(&array, &column).unwrap();
        assert_eq!(bits[1], 0);
        assert!(bits[2] < bits[0] && bits[0] < bits[3]);
        // Unscaled: still ordered.
        let bits = ordered_bits(
            &array,
            &ZColumn {
                min: None,
                max: None,
                ..column
            },
        )
        .unwrap();
        assert!(bits[1] < bits[2] && bits[2] < bits[0] && bits[0] < bits[3]);
    }

    #[test]
    fn strings_after_their_shared_prefix() {
        let array: ArrayRef = Arc::new(datafusion::arrow::array::StringArray::from(vec![
            "user-0001",
            "user-0999",
        ]));
        let column = ZColumn {
            column: 0,
            min: Some(ScalarValue::Utf8(Some("user-0001".into()))),
            max: Some(ScalarValue::Utf8(Some("user-0999".into()))),
        };
        let bits = ordered_bits(&array, &column).unwrap();
        assert!(bits[0] < bits[1]);
        assert_eq!(bits[0] >> 56, b'0' as u64);
    }
}
