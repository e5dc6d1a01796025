//! `schema_of_variant(v)`: the Spark type of a variant value as text.
//!
//! | v                                        | schema_of_variant(v)                   |
//! |------------------------------------------|----------------------------------------|
//! | `parse_json('{"b":["x"],"a":1}')`        | `OBJECT<a: BIGINT, b: ARRAY<STRING>>`  |
//! | `parse_json('[1, 2.5]')`                 | `ARRAY<DECIMAL(21,1)>`                 |
//! | `parse_json('null')`                     | `VOID`                                 |
//! | SQL NULL                                 | NULL                                   |

use std::sync::Arc;

use arrow::array::StringBuilder;
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

use super::super::decode::Variant;
use super::super::schema::schema_of_variant;
use super::{arrays_of, check_variant_arg, output, variant_input, view};

/// `schema_of_variant(variant)`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SchemaOfVariant {
    signature: Signature,
}

impl SchemaOfVariant {
    pub fn new() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl Default for SchemaOfVariant {
    fn default() -> Self {
        Self::new()
    }
}

impl ScalarUDFImpl for SchemaOfVariant {
    fn name(&self) -> &str {
        "schema_of_variant"
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
        let n = arrays[0].len();
        let mut out = StringBuilder::with_capacity(n, n * 16);
        let Some(input) = variant_input(&arrays[0], false)? else {
            out.append_nulls(n);
            return output(Arc::new(out.finish()), all_scalar);
        };
        let rows = view(&input)?;
        for i in 0..n {
            match rows.get(i) {
                None => out.append_null(),
                Some((m, v)) => match Variant::try_new(m, v).and_then(|var| schema_of_variant(&var)) {
                    Ok(s) => out.append_value(s.to_string()),
                    Err(e) => return exec_err!("schema_of_variant: {e}"),
                },
            }
        }
        output(Arc::new(out.finish()), all_scalar)
    }
}
