//! SQL functions over variants, with Spark's names and semantics.
//!
//! | function                              | returns                               |
//! |---------------------------------------|---------------------------------------|
//! | `parse_json(str)` / `try_parse_json`  | VARIANT (error / NULL on bad JSON)    |
//! | `to_json(v)`                          | compact JSON text                     |
//! | `variant_get(v, path[, type])`        | value at path cast to type (error)    |
//! | `try_variant_get(v, path[, type])`    | same, NULL when the cast fails        |
//! | `is_variant_null(v)`                  | true only for a variant null          |
//! | `schema_of_variant(v)`                | `OBJECT<a: BIGINT>` …                 |
//! | `schema_of_variant_agg(v)` (aggregate)| merged schema over rows               |
//! | `to_variant(x)`                       | VARIANT from any Arrow value          |
//!
//! Inputs may be Binary, LargeBinary or BinaryView structs, marked or not,
//! and shredded (`typed_value`) columns are unshredded first.

pub mod is_variant_null;
pub mod parse_json;
pub mod schema_of_variant;
pub mod schema_of_variant_agg;
pub mod to_json;
pub mod to_variant;
pub mod variant_get;

use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue, plan_err};
use datafusion::logical_expr::{AggregateUDF, ColumnarValue, ScalarUDF};

use super::array::VariantArrayView;
use super::arrow_type::{is_variant_field, is_variant_type, variant_field};
use super::shredding::plain_variant_array;

pub use is_variant_null::IsVariantNull;
pub use parse_json::{ParseJson, parse_json_array};
pub use schema_of_variant::SchemaOfVariant;
pub use schema_of_variant_agg::SchemaOfVariantAgg;
pub use to_json::{ToJson, to_json_array};
pub use to_variant::ToVariant;
pub use variant_get::{VariantGet, variant_get_array};

/// Every scalar function of the module.
pub fn scalar_functions() -> Vec<Arc<ScalarUDF>> {
    vec![
        Arc::new(ScalarUDF::new_from_impl(ParseJson::new(false))),
        Arc::new(ScalarUDF::new_from_impl(ParseJson::new(true))),
        Arc::new(ScalarUDF::new_from_impl(ToJson::new())),
        Arc::new(ScalarUDF::new_from_impl(VariantGet::new(false))),
        Arc::new(ScalarUDF::new_from_impl(VariantGet::new(true))),
        Arc::new(ScalarUDF::new_from_impl(IsVariantNull::new())),
        Arc::new(ScalarUDF::new_from_impl(SchemaOfVariant::new())),
        Arc::new(ScalarUDF::new_from_impl(ToVariant::new())),
    ]
}

/// Every aggregate function of the module.
pub fn aggregate_functions() -> Vec<Arc<AggregateUDF>> {
    vec![Arc::new(AggregateUDF::new_from_impl(SchemaOfVariantAgg::new()))]
}

/// Plan-time check that argument `field` of `func` is a variant (or NULL).
pub(crate) fn check_variant_arg(func: &str, field: &Field) -> Result<()> {
    if is_variant_field(field) || is_variant_type(field.data_type()) || field.data_type() == &DataType::Null {
        Ok(())
    } else {
        plan_err!(
            "{func} expects a VARIANT argument (struct of binary metadata and value), got {}",
            field.data_type()
        )
    }
}

/// The return field of functions producing variants.
pub(crate) fn variant_return_field(name: &str) -> FieldRef {
    Arc::new(variant_field(name, true))
}

/// Arguments as arrays, and whether they were all scalars.
pub(crate) fn arrays_of(args: &[ColumnarValue]) -> Result<(Vec<ArrayRef>, bool)> {
    let all_scalar = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
    Ok((ColumnarValue::values_to_arrays(args)?, all_scalar))
}

/// Wraps a result array: a scalar when all inputs were scalars.
pub(crate) fn output(array: ArrayRef, all_scalar: bool) -> Result<ColumnarValue> {
    if all_scalar && array.len() == 1 {
        Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&array, 0)?))
    } else {
        Ok(ColumnarValue::Array(array))
    }
}

/// A variant input column, unshredded when needed; `None` for a NULL-typed column.
pub(crate) fn variant_input(array: &ArrayRef, null_on_error: bool) -> Result<Option<ArrayRef>> {
    if array.data_type() == &DataType::Null {
        return Ok(None);
    }
    Ok(Some(plain_variant_array(array, null_on_error)?))
}

/// View over a prepared variant input.
pub(crate) fn view(array: &ArrayRef) -> Result<VariantArrayView<'_>> {
    Ok(VariantArrayView::try_new(array.as_ref())?)
}

/// Reads string argument `i` as a literal, when it is one.
pub(crate) fn literal_string(value: Option<&ScalarValue>) -> Option<Option<&str>> {
    match value? {
        ScalarValue::Utf8(s) | ScalarValue::LargeUtf8(s) | ScalarValue::Utf8View(s) => Some(s.as_deref()),
        ScalarValue::Null => Some(None),
        _ => None,
    }
}

/// Row access to a string column of any of the three layouts.
pub(crate) enum Strings<'a> {
    Utf8(&'a arrow::array::StringArray),
    Large(&'a arrow::array::LargeStringArray),
    View(&'a arrow::array::StringViewArray),
    Null,
}

impl<'a> Strings<'a> {
    pub(crate) fn try_new(array: &'a ArrayRef, func: &str) -> Result<Self> {
        use arrow::array::AsArray;
        Ok(match array.data_type() {
            DataType::Utf8 => Strings::Utf8(array.as_string::<i32>()),
            DataType::LargeUtf8 => Strings::Large(array.as_string::<i64>()),
            DataType::Utf8View => Strings::View(array.as_string_view()),
            DataType::Null => Strings::Null,
            other => return plan_err!("{func} expects a string argument, got {other}"),
        })
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Strings::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::View(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::Null => None,
        }
    }
}
