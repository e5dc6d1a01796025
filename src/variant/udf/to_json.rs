//! `to_json(v)`: compact JSON text of a variant, keys in the variant's
//! (sorted) order; SQL NULL stays NULL, a variant null prints `null`.
//!
//! | v                                  | to_json(v)                  |
//! |------------------------------------|-----------------------------|
//! | `parse_json('{"b":[true,null],"a":1}')` | `{"a":1,"b":[true,null]}` |
//! | `parse_json('1.50')`               | `1.5`                       |
//! | `parse_json('null')`               | `null`                      |
//! | malformed bytes                    | error                       |

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, StringBuilder};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

use super::super::decode::Variant;
use super::super::json::write_json;
use super::{arrays_of, check_variant_arg, output, variant_input, view};

/// `to_json(variant)`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToJson {
    signature: Signature,
}

impl ToJson {
    pub fn new() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl Default for ToJson {
    fn default() -> Self {
        Self::new()
    }
}

impl ScalarUDFImpl for ToJson {
    fn name(&self) -> &str {
        "to_json"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_arg(self.name(), &args.arg_fields[0])?;
        Ok(Arc::new(Field::new(self.name(), DataType::Utf8, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, all_scalar) = arrays_of(&args.args)?;
        output(to_json_array(&arrays[0])?, all_scalar)
    }
}

/// JSON text of every row of a variant column (the kernel behind `to_json`).
pub fn to_json_array(input: &ArrayRef) -> Result<ArrayRef> {
    let n = input.len();
    let mut out = StringBuilder::with_capacity(n, n * 16);
    let Some(input) = variant_input(input, false)? else {
        out.append_nulls(n);
        return Ok(Arc::new(out.finish()));
    };
    let rows = view(&input)?;
    let mut s = String::new();
    for i in 0..n {
        match rows.get(i) {
            None => out.append_null(),
            Some((m, v)) => {
                s.clear();
                if let Err(e) = Variant::try_new(m, v).and_then(|var| write_json(&var, &mut s)) {
                    return exec_err!("to_json: {e}");
                }
                out.append_value(&s);
            }
        }
    }
    Ok(Arc::new(out.finish()))
}
