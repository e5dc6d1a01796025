//! Arrow values → variant values (`to_variant`, and typed values of
//! shredded columns).
//!
//! | Arrow type                          | variant                          |
//! |-------------------------------------|----------------------------------|
//! | Boolean                             | true / false                     |
//! | Int8..Int64, UInt8..UInt32          | int (smallest width)             |
//! | UInt64 above i64::MAX               | decimal(20,0)                    |
//! | Float16/32, Float64                 | float, double                    |
//! | Decimal32/64/128/256 (scale 0..=38) | decimal4/8/16                    |
//! | Utf8 / LargeUtf8 / Utf8View         | string                           |
//! | Binary / LargeBinary / BinaryView / FixedSizeBinary | binary           |
//! | Date32, Date64                      | date                             |
//! | Timestamp(s/ms/µs, tz?)             | timestamp (tz) / timestamp_ntz   |
//! | Timestamp(ns, tz?)                  | timestamp_nanos / _ntz_nanos     |
//! | Time32, Time64                      | time (µs)                        |
//! | List / LargeList / FixedSizeList    | array                            |
//! | Struct (a variant struct is copied) | object                           |
//! | Map with string keys                | object                           |
//!
//! A null inside a container becomes a variant null.

use arrow::array::{Array, AsArray};
use arrow::datatypes::{
    DataType, Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type, Float16Type,
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};

use super::array::VariantArrayView;
use super::arrow_type::{is_shredded_type, is_variant_type};
use super::decode::Variant;
use super::encode::VariantBuilder;
use super::{MAX_DEPTH, Result, VariantError};

fn overflow(what: &str) -> VariantError {
    VariantError::Unsupported(format!("{what} out of range for a variant"))
}

fn decimal_scale(scale: i8) -> Result<u8> {
    u8::try_from(scale)
        .ok()
        .filter(|s| *s <= 38)
        .ok_or_else(|| VariantError::Unsupported(format!("decimal scale {scale} cannot be stored in a variant")))
}

/// Appends row `row` of `array` as a variant value.
pub fn append_arrow_value(b: &mut VariantBuilder, array: &dyn Array, row: usize) -> Result<()> {
    append_at(b, array, row, 0)
}

fn append_at(b: &mut VariantBuilder, array: &dyn Array, row: usize, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(VariantError::TooDeep(MAX_DEPTH));
    }
    if row >= array.len() {
        return Err(VariantError::Unsupported(format!("row {row} out of range")));
    }
    if array.is_null(row) {
        b.append_null();
        return Ok(());
    }
    match array.data_type() {
        DataType::Null => b.append_null(),
        DataType::Boolean => b.append_bool(array.as_boolean().value(row)),
        DataType::Int8 => b.append_int(array.as_primitive::<Int8Type>().value(row) as i64),
        DataType::Int16 => b.append_int(array.as_primitive::<Int16Type>().value(row) as i64),
        DataType::Int32 => b.append_int(array.as_primitive::<Int32Type>().value(row) as i64),
        DataType::Int64 => b.append_int(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => b.append_int(array.as_primitive::<UInt8Type>().value(row) as i64),
        DataType::UInt16 => b.append_int(array.as_primitive::<UInt16Type>().value(row) as i64),
        DataType::UInt32 => b.append_int(array.as_primitive::<UInt32Type>().value(row) as i64),
        DataType::UInt64 => {
            let v = array.as_primitive::<UInt64Type>().value(row);
            match i64::try_from(v) {
                Ok(i) => b.append_int(i),
                Err(_) => b.append_decimal(v as i128, 0)?,
            }
        }
        DataType::Float16 => b.append_float(array.as_primitive::<Float16Type>().value(row).to_f32()),
        DataType::Float32 => b.append_float(array.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => b.append_double(array.as_primitive::<Float64Type>().value(row)),
        DataType::Decimal32(_, s) => b.append_decimal(
            array.as_primitive::<Decimal32Type>().value(row) as i128,
            decimal_scale(*s)?,
        )?,
        DataType::Decimal64(_, s) => b.append_decimal(
            array.as_primitive::<Decimal64Type>().value(row) as i128,
            decimal_scale(*s)?,
        )?,
        DataType::Decimal128(_, s) => {
            b.append_decimal(array.as_primitive::<Decimal128Type>().value(row), decimal_scale(*s)?)?
        }
        DataType::Decimal256(_, s) => {
            let v = array
                .as_primitive::<Decimal256Type>()
                .value(row)
                .to_i128()
                .ok_or_else(|| overflow("decimal256"))?;
            b.append_decimal(v, decimal_scale(*s)?)?
        }
        DataType::Utf8 => b.append_string(array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => b.append_string(array.as_string::<i64>().value(row)),
        DataType::Utf8View => b.append_string(array.as_string_view().value(row)),
        DataType::Binary => b.append_binary(array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => b.append_binary(array.as_binary::<i64>().value(row)),
        DataType::BinaryView => b.append_binary(array.as_binary_view().value(row)),
        DataType::FixedSizeBinary(_) => b.append_binary(array.as_fixed_size_binary().value(row)),
        DataType::Date32 => b.append_date(array.as_primitive::<Date32Type>().value(row)),
        DataType::Date64 => {
            let days = array.as_primitive::<Date64Type>().value(row).div_euclid(86_400_000);
            b.append_date(i32::try_from(days).map_err(|_| overflow("date"))?)
        }
        DataType::Timestamp(unit, tz) => {
            let utc = tz.is_some();
            let micros = |v: i64, f: i64| v.checked_mul(f).ok_or_else(|| overflow("timestamp"));
            match unit {
                TimeUnit::Second => b.append_timestamp_micros(
                    micros(array.as_primitive::<TimestampSecondType>().value(row), 1_000_000)?,
                    utc,
                ),
                TimeUnit::Millisecond => b.append_timestamp_micros(
                    micros(array.as_primitive::<TimestampMillisecondType>().value(row), 1000)?,
                    utc,
                ),
                TimeUnit::Microsecond => {
                    b.append_timestamp_micros(array.as_primitive::<TimestampMicrosecondType>().value(row), utc)
                }
                TimeUnit::Nanosecond => {
                    b.append_timestamp_nanos(array.as_primitive::<TimestampNanosecondType>().value(row), utc)
                }
            }
        }
        DataType::Time32(TimeUnit::Second) => {
            b.append_time_micros(array.as_primitive::<Time32SecondType>().value(row) as i64 * 1_000_000)
        }
        DataType::Time32(TimeUnit::Millisecond) => {
            b.append_time_micros(array.as_primitive::<Time32MillisecondType>().value(row) as i64 * 1000)
        }
        DataType::Time64(TimeUnit::Nanosecond) => {
            b.append_time_micros(array.as_primitive::<Time64NanosecondType>().value(row) / 1000)
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            b.append_time_micros(array.as_primitive::<Time64MicrosecondType>().value(row))
        }
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let o = list.value_offsets();
            append_list(b, list.values().as_ref(), o[row] as usize, o[row + 1] as usize, depth)?
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            let o = list.value_offsets();
            append_list(b, list.values().as_ref(), o[row] as usize, o[row + 1] as usize, depth)?
        }
        DataType::FixedSizeList(_, n) => {
            let list = array.as_fixed_size_list();
            let n = *n as usize;
            append_list(b, list.values().as_ref(), row * n, row * n + n, depth)?
        }
        dt @ DataType::Struct(fields) => {
            if is_variant_type(dt) && !is_shredded_type(dt) {
                let view = VariantArrayView::try_new(array)?;
                let (m, v) = view
                    .get(row)
                    .ok_or_else(|| VariantError::Unsupported("unexpected null".into()))?;
                b.append_variant(&Variant::try_new(m, v)?)?;
                return Ok(());
            }
            let s = array.as_struct();
            let start = b.offset();
            let mut ids = Vec::with_capacity(fields.len());
            for (f, col) in fields.iter().zip(s.columns()) {
                ids.push((b.add_key(f.name()), b.offset() - start));
                append_at(b, col.as_ref(), row, depth + 1)?;
            }
            b.finish_object(start, &mut ids)?
        }
        DataType::Map(_, _) => {
            let map = array.as_map();
            let o = map.value_offsets();
            let (keys, values) = (map.keys(), map.values());
            let start = b.offset();
            let mut ids = Vec::new();
            for j in o[row] as usize..o[row + 1] as usize {
                let key = match keys.data_type() {
                    DataType::Utf8 => keys.as_string::<i32>().value(j),
                    DataType::LargeUtf8 => keys.as_string::<i64>().value(j),
                    DataType::Utf8View => keys.as_string_view().value(j),
                    other => {
                        return Err(VariantError::Unsupported(format!(
                            "map keys of type {other} in a variant"
                        )));
                    }
                };
                ids.push((b.add_key(key), b.offset() - start));
                append_at(b, values.as_ref(), j, depth + 1)?;
            }
            b.finish_object(start, &mut ids)?
        }
        other => {
            return Err(VariantError::Unsupported(format!(
                "cannot convert {other} to a variant"
            )));
        }
    }
    Ok(())
}

fn append_list(b: &mut VariantBuilder, values: &dyn Array, from: usize, to: usize, depth: usize) -> Result<()> {
    let start = b.offset();
    let mut offsets = Vec::with_capacity(to.saturating_sub(from));
    for j in from..to {
        offsets.push(b.offset() - start);
        append_at(b, values, j, depth + 1)?;
    }
    b.finish_array(start, &offsets)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int32Array, ListArray, StringArray, StructArray};
    use arrow::datatypes::{Field, Int32Type};

    use super::super::json::to_json;
    use super::*;

    fn json_of(array: &dyn Array, row: usize) -> String {
        let mut b = VariantBuilder::new();
        append_arrow_value(&mut b, array, row).unwrap();
        let (m, v) = b.finish();
        to_json(&Variant::try_new(&m, &v).unwrap()).unwrap()
    }

    #[test]
    fn converts_nested() {
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1), None]), None]);
        let s = StructArray::from(vec![
            (
                Arc::new(Field::new("z", DataType::Utf8, true)),
                Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("a", list.data_type().clone(), true)),
                Arc::new(list) as ArrayRef,
            ),
        ]);
        assert_eq!(json_of(&s, 0), r#"{"a":[1,null],"z":"a"}"#);
        assert_eq!(json_of(&s, 1), r#"{"a":null,"z":"b"}"#);
        assert_eq!(json_of(&Int32Array::from(vec![70000]), 0), "70000");
    }
}
