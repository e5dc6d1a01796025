//! `__hp_exact_key(x)`: a value as a key that tells apart what SQL equality
//! (and so grouping) does not: `-0.0` and `0.0`, and values that cannot be
//! grouped at all (VARIANT, which has no equality). Changelog reads group
//! rows by it (`provider::changes`), so that any change of a stored value is
//! a change. Every NaN is one value (no reader shows a NaN's sign or payload).
//!
//! | x                         | key                                  |
//! |---------------------------|--------------------------------------|
//! | `0.0` / `-0.0` (DOUBLE)   | its bits: 0 / -9223372036854775808   |
//! | `NaN`, `-NaN`             | one BIGINT for both                  |
//! | a VARIANT, struct or list | its bytes in Arrow's row format      |
//! | NULL                      | NULL (floats) / the row format's NULL |

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, BinaryArray};
use datafusion::arrow::datatypes::{DataType, Float16Type, Float32Type, Float64Type};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::Result;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ExactKey {
    signature: Signature,
}

impl ExactKey {
    pub fn udf() -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(Self {
            signature: Signature::any(1, Volatility::Immutable),
        }))
    }

    /// Whether grouping by a column of type `dt` itself could merge values
    /// a reader tells apart, or is refused.
    pub fn needed_for(dt: &DataType) -> bool {
        dt.is_floating() || dt.is_nested()
    }
}

impl ScalarUDFImpl for ExactKey {
    fn name(&self) -> &str {
        "__hp_exact_key"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(match arg_types.first().is_some_and(DataType::is_floating) {
            true => DataType::Int64,
            false => DataType::Binary,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let array = args.args[0].to_array(args.number_rows)?;
        let key: Arc<dyn Array> = match array.data_type() {
            DataType::Float16 => Arc::new(
                array
                    .as_primitive::<Float16Type>()
                    .unary::<_, datafusion::arrow::datatypes::Int64Type>(|v| bits(v.to_f64())),
            ),
            DataType::Float32 => Arc::new(
                array
                    .as_primitive::<Float32Type>()
                    .unary::<_, datafusion::arrow::datatypes::Int64Type>(|v| bits(v as f64)),
            ),
            DataType::Float64 => Arc::new(
                array
                    .as_primitive::<Float64Type>()
                    .unary::<_, datafusion::arrow::datatypes::Int64Type>(bits),
            ),
            dt => {
                let converter = RowConverter::new(vec![SortField::new(dt.clone())])?;
                let rows = converter.convert_columns(&[Arc::clone(&array)])?;
                Arc::new(BinaryArray::from_iter_values(rows.iter()))
            }
        };
        Ok(ColumnarValue::Array(key))
    }
}

/// Widening to f64 keeps a value and its sign exactly.
fn bits(v: f64) -> i64 {
    if v.is_nan() {
        f64::NAN.to_bits() as i64
    } else {
        v.to_bits() as i64
    }
}
