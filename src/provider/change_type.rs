//! `__hp_change_type(sign)`: a changelog row's `_change_type` from its
//! sign in the difference of a snapshot's sides (`difference.rs`).
//!
//! | sign | `_change_type` |
//! |------|----------------|
//! | 1    | `INSERT`       |
//! | -1   | `DELETE`       |
//! | NULL | NULL           |
//!
//! A `CASE` would say the same, evaluated generically row by row; both
//! names are six bytes long, so here the offsets are fixed and each row
//! copies its six bytes (every row of a changelog read passes here).

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, StringArray};
use datafusion::arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Int64Type};
use datafusion::common::{Result, ScalarValue, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

const INSERT: &str = "INSERT";
const DELETE: &str = "DELETE";

fn name(sign: i64) -> &'static str {
    if sign > 0 { INSERT } else { DELETE }
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ChangeType {
    signature: Signature,
}

impl ChangeType {
    pub const NAME: &'static str = "__hp_change_type";

    pub fn udf() -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(Self {
            signature: Signature::exact(vec![DataType::Int64], Volatility::Immutable),
        }))
    }
}

impl ScalarUDFImpl for ChangeType {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    /// NULL only for a NULL sign.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let nullable = args.arg_fields.first().is_none_or(|f| f.is_nullable());
        Ok(Arc::new(Field::new(self.name(), DataType::Utf8, nullable)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        match &args.args[0] {
            ColumnarValue::Scalar(ScalarValue::Int64(sign)) => Ok(ColumnarValue::Scalar(ScalarValue::Utf8(
                sign.map(|s| name(s).to_string()),
            ))),
            ColumnarValue::Array(signs) if signs.data_type() == &DataType::Int64 => {
                let signs = signs.as_primitive::<Int64Type>();
                let width = INSERT.len();
                let mut values = Vec::with_capacity(signs.len() * width);
                for sign in signs.values() {
                    values.extend_from_slice(name(*sign).as_bytes());
                }
                let offsets: ScalarBuffer<i32> = (0..=signs.len()).map(|i| (i * width) as i32).collect();
                let names = StringArray::try_new(
                    OffsetBuffer::new(offsets),
                    Buffer::from_vec(values),
                    signs.nulls().cloned(),
                )?;
                Ok(ColumnarValue::Array(Arc::new(names)))
            }
            other => exec_err!("{} takes a BIGINT sign, not {}", Self::NAME, other.data_type()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;

    fn call(arg: ColumnarValue, rows: usize) -> ColumnarValue {
        let udf = ChangeType::udf();
        udf.invoke_with_args(ScalarFunctionArgs {
            args: vec![arg],
            arg_fields: vec![Arc::new(Field::new("sign", DataType::Int64, true))],
            number_rows: rows,
            return_field: Arc::new(Field::new("t", DataType::Utf8, true)),
            config_options: Arc::new(Default::default()),
        })
        .unwrap()
    }

    #[test]
    fn each_sign_names_its_change_and_null_stays_null() {
        let signs = Int64Array::from(vec![Some(1), Some(-1), None, Some(1)]);
        let ColumnarValue::Array(names) = call(ColumnarValue::Array(Arc::new(signs)), 4) else {
            panic!("an array in, an array out");
        };
        let names: Vec<Option<&str>> = names.as_string::<i32>().iter().collect();
        assert_eq!(names, vec![Some("INSERT"), Some("DELETE"), None, Some("INSERT")]);
        let ColumnarValue::Scalar(one) = call(ColumnarValue::Scalar(ScalarValue::Int64(Some(-1))), 1) else {
            panic!("a scalar in, a scalar out");
        };
        assert_eq!(one, ScalarValue::Utf8(Some("DELETE".into())));
    }
}
