//! `is_variant_null(v)`: true only for a variant null; SQL NULL gives false.
//!
//! | v                        | is_variant_null(v) |
//! |--------------------------|--------------------|
//! | `parse_json('null')`     | true               |
//! | `parse_json('1')`        | false              |
//! | SQL NULL                 | false              |

use std::sync::Arc;

use arrow::array::BooleanBuilder;
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

use super::{arrays_of, check_variant_arg, output, variant_input, view};

/// `is_variant_null(variant)`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct IsVariantNull {
    signature: Signature,
}

impl IsVariantNull {
    pub fn new() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl Default for IsVariantNull {
    fn default() -> Self {
        Self::new()
    }
}

impl ScalarUDFImpl for IsVariantNull {
    fn name(&self) -> &str {
        "is_variant_null"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_arg(self.name(), &args.arg_fields[0])?;
        Ok(Arc::new(Field::new(self.name(), DataType::Boolean, false)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, all_scalar) = arrays_of(&args.args)?;
        let n = arrays[0].len();
        let mut out = BooleanBuilder::with_capacity(n);
        match variant_input(&arrays[0], true)? {
            None => out.append_n(n, false),
            Some(input) => {
                let rows = view(&input)?;
                for i in 0..n {
                    // A variant null is the single header byte 0x00.
                    out.append_value(rows.get(i).is_some_and(|(_, v)| v.first() == Some(&0)));
                }
            }
        }
        output(Arc::new(out.finish()), all_scalar)
    }
}
