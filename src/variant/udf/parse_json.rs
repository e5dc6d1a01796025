//! `parse_json(str)` and `try_parse_json(str)`.
//!
//! | input              | parse_json          | try_parse_json |
//! |--------------------|---------------------|----------------|
//! | `'{"a":1}'`        | variant `{"a":1}`   | same           |
//! | `'{"a":1,"a":2}'`  | error (duplicate)   | NULL           |
//! | `'{'`              | error (invalid)     | NULL           |
//! | NULL               | NULL                | NULL           |

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, FieldRef};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

use super::super::array::VariantArrayBuilder;
use super::super::encode::VariantBuilder;
use super::super::json::parse_json;
use super::{Strings, arrays_of, output, variant_return_field};

/// `parse_json` (errors) or `try_parse_json` (NULL on error).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ParseJson {
    signature: Signature,
    try_mode: bool,
}

impl ParseJson {
    /// `try_mode` selects `try_parse_json`.
    pub fn new(try_mode: bool) -> Self {
        Self {
            signature: Signature::string(1, Volatility::Immutable),
            try_mode,
        }
    }
}

impl ScalarUDFImpl for ParseJson {
    fn name(&self) -> &str {
        if self.try_mode { "try_parse_json" } else { "parse_json" }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(super::super::arrow_type::variant_data_type())
    }

    fn return_field_from_args(&self, _args: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(variant_return_field(self.name()))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, all_scalar) = arrays_of(&args.args)?;
        output(parse_json_array(&arrays[0], self.try_mode)?, all_scalar)
    }
}

/// Parses every row of a string column (the kernel behind `parse_json`);
/// with `try_mode` invalid JSON gives NULL instead of an error.
pub fn parse_json_array(input: &ArrayRef, try_mode: bool) -> Result<ArrayRef> {
    let strings = Strings::try_new(input, "parse_json")?;
    let n = input.len();
    let mut out = VariantArrayBuilder::with_capacity(n);
    let mut b = VariantBuilder::new();
    let mut meta = Vec::new();
    for i in 0..n {
        let Some(s) = strings.get(i) else {
            out.append_null();
            continue;
        };
        b.reset();
        match parse_json(s, &mut b) {
            Ok(()) => {
                b.write_metadata(&mut meta);
                out.append_variant(&meta, b.value());
            }
            Err(_) if try_mode => out.append_null(),
            Err(e) => return exec_err!("parse_json: {e}"),
        }
    }
    Ok(std::sync::Arc::new(out.finish()?))
}
