//! The partition transforms as SQL functions, so users can see where a row goes.
//!
//! | SQL                              | result                                   |
//! |----------------------------------|------------------------------------------|
//! | `bucket(16, id)`                 | INT in `[0, 16)` (Iceberg bucket hash)   |
//! | `truncate(4, name)`              | same type as `name`, first 4 code points |
//! | `years(ts)` / `months(ts)` / `hours(ts)` | INT units since 1970            |
//! | `days(ts)`                       | DATE                                     |
//!
//! They run the same kernels the writer uses, so `bucket(16, id)` is exactly
//! the partition value a row with that `id` is written under.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{ScalarValue, exec_err, plan_err};
use datafusion::error::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use crate::transform::{Transform, TransformError};

/// Which transform a function applies; parameterized ones take N/W as their first argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Bucket,
    Truncate,
    Fixed(Transform),
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TransformFunction {
    name: &'static str,
    kind: Kind,
    signature: Signature,
}

impl TransformFunction {
    fn new(name: &'static str, kind: Kind) -> Self {
        let arity = if matches!(kind, Kind::Fixed(_)) { 1 } else { 2 };
        let signature = Signature::new(TypeSignature::Any(arity), Volatility::Immutable);
        Self { name, kind, signature }
    }

    /// The transform for a call, given its (literal) parameter.
    fn transform(&self, param: Option<&ScalarValue>) -> Result<Transform> {
        let width = || -> Result<u32> {
            let n = match param {
                Some(ScalarValue::Int8(Some(v))) => *v as i64,
                Some(ScalarValue::Int16(Some(v))) => *v as i64,
                Some(ScalarValue::Int32(Some(v))) => *v as i64,
                Some(ScalarValue::Int64(Some(v))) => *v,
                Some(ScalarValue::UInt8(Some(v))) => *v as i64,
                Some(ScalarValue::UInt16(Some(v))) => *v as i64,
                Some(ScalarValue::UInt32(Some(v))) => *v as i64,
                Some(ScalarValue::UInt64(Some(v))) => i64::try_from(*v).unwrap_or(-1),
                _ => return plan_err!("{}(N, column): N must be a positive integer literal", self.name),
            };
            match u32::try_from(n) {
                Ok(n) if n > 0 && n <= i32::MAX as u32 => Ok(n),
                _ => plan_err!("{}(N, column): N must be a positive integer, got {n}", self.name),
            }
        };
        Ok(match self.kind {
            Kind::Bucket => Transform::Bucket(width()?),
            Kind::Truncate => Transform::Truncate(width()?),
            Kind::Fixed(t) => t,
        })
    }
}

impl ScalarUDFImpl for TransformFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        // N's value does not change the result type: check with a stand-in.
        let transform = match self.kind {
            Kind::Bucket => Transform::Bucket(1),
            Kind::Truncate => Transform::Truncate(1),
            Kind::Fixed(t) => t,
        };
        let Some(source) = arg_types.last() else {
            return plan_err!("{} needs a column argument", self.name);
        };
        if matches!(self.kind, Kind::Bucket | Kind::Truncate) && !arg_types[0].is_integer() {
            return plan_err!("{}(N, column): N must be an integer, got {}", self.name, arg_types[0]);
        }
        match transform.result_type(source) {
            Ok(t) => Ok(t),
            Err(TransformError::UnsupportedType {
                data_type, expected, ..
            }) => {
                plan_err!(
                    "cannot apply {} to a value of type {data_type}; it accepts {expected}",
                    self.name
                )
            }
            Err(e) => plan_err!("{}: {e}", self.name),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (param, value) = match args.args.as_slice() {
            [v] => (None, v),
            [ColumnarValue::Scalar(p), v] => (Some(p), v),
            [ColumnarValue::Array(_), _] => {
                return exec_err!("{}(N, column): N must be a literal, not a column", self.name);
            }
            _ => return exec_err!("{} called with {} arguments", self.name, args.args.len()),
        };
        let transform = self.transform(param)?;
        match value {
            ColumnarValue::Array(array) => {
                Ok(ColumnarValue::Array(transform.apply(array).map_err(|e| {
                    datafusion::error::DataFusionError::Execution(e.to_string())
                })?))
            }
            ColumnarValue::Scalar(v) => {
                let array = v.to_array()?;
                let out = transform
                    .apply(&array)
                    .map_err(|e| datafusion::error::DataFusionError::Execution(e.to_string()))?;
                Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
            }
        }
    }
}

/// `bucket`, `truncate`, `years`, `months`, `days`, `hours`.
pub fn transform_functions() -> Vec<Arc<ScalarUDF>> {
    [
        TransformFunction::new("bucket", Kind::Bucket),
        TransformFunction::new("truncate", Kind::Truncate),
        TransformFunction::new("years", Kind::Fixed(Transform::Year)),
        TransformFunction::new("months", Kind::Fixed(Transform::Month)),
        TransformFunction::new("days", Kind::Fixed(Transform::Day)),
        TransformFunction::new("hours", Kind::Fixed(Transform::Hour)),
    ]
    .into_iter()
    .map(|f| Arc::new(ScalarUDF::new_from_impl(f)))
    .collect()
}
