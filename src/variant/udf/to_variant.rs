//! `to_variant(x)`: any Arrow value as a variant (see
//! [`super::super::from_arrow`] for the mapping). A variant input passes
//! through; SQL NULL stays NULL.
//!
//! | x                               | to_json(to_variant(x)) |
//! |---------------------------------|------------------------|
//! | `42`                            | `42`                   |
//! | `'hi'`                          | `"hi"`                 |
//! | `DATE '2024-01-01'`             | `"2024-01-01"`         |
//! | `named_struct('a', 1, 'b', [true])` | `{"a":1,"b":[true]}` |

use std::sync::Arc;

use arrow::array::Array;
use arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

use super::super::array::VariantArrayBuilder;
use super::super::arrow_type::{is_variant_type, variant_data_type};
use super::super::encode::VariantBuilder;
use super::super::from_arrow::append_arrow_value;
use super::{arrays_of, output, variant_input, variant_return_field, view};

/// `to_variant(any)`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToVariant {
    signature: Signature,
}

impl ToVariant {
    pub fn new() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl Default for ToVariant {
    fn default() -> Self {
        Self::new()
    }
}

impl ScalarUDFImpl for ToVariant {
    fn name(&self) -> &str {
        "to_variant"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(variant_data_type())
    }

    fn return_field_from_args(&self, _args: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(variant_return_field(self.name()))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, all_scalar) = arrays_of(&args.args)?;
        let input = &arrays[0];
        let n = input.len();
        let mut out = VariantArrayBuilder::with_capacity(n);
        if is_variant_type(input.data_type()) {
            // Re-emit in the canonical layout (Binary children, unshredded).
            if let Some(plain) = variant_input(input, false)? {
                let rows = view(&plain)?;
                for i in 0..n {
                    match rows.get(i) {
                        Some((m, v)) => out.append_variant(m, v),
                        None => out.append_null(),
                    }
                }
            }
            return output(Arc::new(out.finish()?), all_scalar);
        }
        let mut b = VariantBuilder::new();
        let mut meta = Vec::new();
        let nulls = input.logical_nulls();
        for i in 0..n {
            if nulls.as_ref().is_some_and(|nb| nb.is_null(i)) {
                out.append_null();
                continue;
            }
            b.reset();
            if let Err(e) = append_arrow_value(&mut b, input.as_ref(), i) {
                return exec_err!("to_variant: {e}");
            }
            b.write_metadata(&mut meta);
            out.append_variant(&meta, b.value());
        }
        output(Arc::new(out.finish()?), all_scalar)
    }
}
