//! `__hp_float_bits(x)`: a floating-point value's bits as a BIGINT, so that
//! grouping tells values apart that SQL equality does not (`-0.0` and
//! `0.0`); changelog reads group rows by it (`provider::changes`). Every
//! NaN is one value (no reader shows a NaN's sign or payload).
//!
//! | x              | bits                 |
//! |----------------|----------------------|
//! | `0.0`          | 0                    |
//! | `-0.0`         | -9223372036854775808 |
//! | `NaN`, `-NaN`  | 9221120237041090560  |
//! | NULL           | NULL                 |

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, Int64Array};
use datafusion::arrow::datatypes::{DataType, Float16Type, Float32Type, Float64Type};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct FloatBits {
    signature: Signature,
}

impl FloatBits {
    pub fn udf() -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(Self {
            signature: Signature::any(1, Volatility::Immutable),
        }))
    }
}

impl ScalarUDFImpl for FloatBits {
    fn name(&self) -> &str {
        "__hp_float_bits"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let array = args.args[0].to_array(args.number_rows)?;
        let bits: Int64Array = match array.data_type() {
            DataType::Float16 => array.as_primitive::<Float16Type>().unary(|v| bits(v.to_f64())),
            DataType::Float32 => array.as_primitive::<Float32Type>().unary(|v| bits(v as f64)),
            DataType::Float64 => array.as_primitive::<Float64Type>().unary(bits),
            other => return exec_err!("__hp_float_bits takes a floating-point value, not {other}"),
        };
        debug_assert_eq!(bits.len(), array.len());
        Ok(ColumnarValue::Array(Arc::new(bits)))
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
