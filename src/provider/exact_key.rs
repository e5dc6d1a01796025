//! A value's exact key: what tells apart the values SQL equality (and so
//! grouping) does not: `-0.0` and `0.0`, and values that cannot be grouped
//! at all (VARIANT, which has no equality). Changelog reads hash
//! (`row_hash`) and group (`difference`) rows by it, so that any change of
//! a stored value is a change. Every NaN is one value (no reader shows a
//! NaN's sign or payload).
//!
//! | x                         | key                                  |
//! |---------------------------|--------------------------------------|
//! | `0.0` / `-0.0` (DOUBLE)   | its bits: 0 / -9223372036854775808   |
//! | `NaN`, `-NaN`             | one BIGINT for both                  |
//! | a VARIANT, struct or list | its bytes in Arrow's row format      |
//! | NULL                      | NULL (floats) / the row format's NULL |
//! | any other value           | itself                               |

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, BinaryArray};
use datafusion::arrow::datatypes::{DataType, Float16Type, Float32Type, Float64Type, Int64Type};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::Result;

/// The type of a column of type `dt`'s exact keys.
pub fn key_type(dt: &DataType) -> DataType {
    match dt {
        dt if dt.is_floating() => DataType::Int64,
        dt if dt.is_nested() => DataType::Binary,
        dt => dt.clone(),
    }
}

/// `array`'s exact keys (of [`key_type`]): `array` itself where it needs
/// none.
pub fn exact_key(array: &ArrayRef) -> Result<ArrayRef> {
    Ok(match array.data_type() {
        DataType::Float16 => Arc::new(
            array
                .as_primitive::<Float16Type>()
                .unary::<_, Int64Type>(|v| bits(v.to_f64())),
        ),
        DataType::Float32 => Arc::new(
            array
                .as_primitive::<Float32Type>()
                .unary::<_, Int64Type>(|v| bits(v as f64)),
        ),
        DataType::Float64 => Arc::new(array.as_primitive::<Float64Type>().unary::<_, Int64Type>(bits)),
        dt if dt.is_nested() => {
            let converter = RowConverter::new(vec![SortField::new(dt.clone())])?;
            let rows = converter.convert_columns(&[Arc::clone(array)])?;
            Arc::new(BinaryArray::from_iter_values(rows.iter()))
        }
        _ => Arc::clone(array),
    })
}

/// Each of `columns` by its exact keys.
pub fn exact_keys(columns: &[ArrayRef]) -> Result<Vec<ArrayRef>> {
    columns.iter().map(exact_key).collect()
}

/// Widening to f64 keeps a value and its sign exactly.
fn bits(v: f64) -> i64 {
    if v.is_nan() {
        f64::NAN.to_bits() as i64
    } else {
        v.to_bits() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, Float64Array, Int32Array, ListArray};
    use datafusion::arrow::datatypes::Int32Type;

    #[test]
    fn zeros_differ_nans_are_one_and_nested_values_are_their_bytes() {
        let floats: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(0.0),
            Some(-0.0),
            Some(f64::NAN),
            Some(-f64::NAN),
            None,
        ]));
        let key = exact_key(&floats).unwrap();
        let key = key.as_primitive::<Int64Type>();
        assert_ne!(key.value(0), key.value(1));
        assert_eq!(key.value(2), key.value(3));
        assert!(key.is_null(4));
        let lists: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), Some(2)]),
            Some(vec![Some(1), Some(2)]),
            Some(vec![Some(2), Some(1)]),
        ]));
        let key = exact_key(&lists).unwrap();
        let key = key.as_binary::<i32>();
        assert_eq!(key.value(0), key.value(1));
        assert_ne!(key.value(0), key.value(2));
        assert_eq!(key.data_type(), &key_type(lists.data_type()));
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        assert!(Arc::ptr_eq(&exact_key(&ints).unwrap(), &ints));
    }
}
