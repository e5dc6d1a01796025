//! `variant_get(v, path[, type])` and `try_variant_get(v, path[, type])`.
//!
//! The path follows Spark's `$` grammar ([`VariantPath`]); the type is a
//! Spark type name given as a string literal (default `variant`). A path that
//! finds nothing gives NULL; a value that cannot be cast is an error for
//! `variant_get` and NULL for `try_variant_get`.
//!
//! | v                           | path      | type     | variant_get | try_variant_get |
//! |-----------------------------|-----------|----------|-------------|-----------------|
//! | `{"a":{"b":[7]}}`           | `$.a.b[0]`| `int`    | 7           | 7               |
//! | `{"a":"x"}`                 | `$.a`     | `int`    | error       | NULL            |
//! | `{"a":1}`                   | `$.z`     | `int`    | NULL        | NULL            |
//! | `{"a":[1,2]}`               | `$.a`     | `string` | `[1,2]`     | `[1,2]`         |
//!
//! A literal path is parsed once per batch; a path column once per distinct
//! text in the batch.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use super::super::cast::{CastBuilder, SparkType};
use super::super::decode::Variant;
use super::super::path::{VariantPath, fast};
use super::super::{Result as VResult, VariantError};
use super::{Strings, arrays_of, check_variant_arg, literal_string, output, variant_input, view};

/// `variant_get` (errors on a failed cast) or `try_variant_get` (NULL).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantGet {
    signature: Signature,
    try_mode: bool,
}

impl VariantGet {
    /// `try_mode` selects `try_variant_get`.
    pub fn new(try_mode: bool) -> Self {
        Self {
            signature: Signature::one_of(
                vec![TypeSignature::Any(2), TypeSignature::Any(3)],
                Volatility::Immutable,
            ),
            try_mode,
        }
    }

    fn target(&self, type_arg: Option<&datafusion::common::ScalarValue>, has_arg: bool) -> Result<SparkType> {
        if !has_arg {
            return Ok(SparkType::Variant);
        }
        match literal_string(type_arg) {
            Some(Some(t)) => Ok(SparkType::parse(t)?),
            _ => plan_err!(
                "{}: the type argument must be a string literal such as 'int'",
                self.name()
            ),
        }
    }
}

/// Extracts `path` from every row of a variant column and casts it to
/// `target` (the kernel behind `variant_get` with a literal path). With
/// `try_mode`, failed casts and malformed rows give NULL instead of an error.
pub fn variant_get_array(input: &ArrayRef, path: &VariantPath, target: SparkType, try_mode: bool) -> Result<ArrayRef> {
    let name = if try_mode { "try_variant_get" } else { "variant_get" };
    get_rows(input, target, try_mode, name, |_| Some(path))
}

/// Row loop shared by literal and per-row paths.
fn get_rows<'p>(
    input: &ArrayRef,
    target: SparkType,
    try_mode: bool,
    name: &str,
    path_of: impl Fn(usize) -> Option<&'p VariantPath>,
) -> Result<ArrayRef> {
    let n = input.len();
    let mut out = CastBuilder::new(target, n);
    let Some(input) = variant_input(input, try_mode)? else {
        for _ in 0..n {
            out.append_null();
        }
        return Ok(out.finish()?);
    };
    let rows = view(&input)?;
    for i in 0..n {
        let (Some((m, v)), Some(path)) = (rows.get(i), path_of(i)) else {
            out.append_null();
            continue;
        };
        // Fast walk over raw bytes; on anything malformed the checked walk
        // below produces the precise error.
        let r = match fast::extract(path.segments(), m, v) {
            Ok(Some(sub)) => out.append_bytes(m, sub, try_mode),
            Ok(None) => {
                out.append_null();
                Ok(())
            }
            Err(fast::NeedsCheck) => checked_get(&mut out, path, m, v, try_mode),
        };
        r.map_err(|e: VariantError| DataFusionError::Execution(format!("{name}: {e}")))?;
    }
    Ok(out.finish()?)
}

/// The fully checked walk (used when the fast walk meets malformed bytes).
fn checked_get(out: &mut CastBuilder, path: &VariantPath, m: &[u8], v: &[u8], try_mode: bool) -> VResult<()> {
    let found: VResult<Option<Variant<'_>>> = Variant::try_new(m, v).and_then(|var| path.extract(var));
    match found {
        Ok(Some(sub)) => out.append(sub, try_mode),
        Ok(None) => {
            out.append_null();
            Ok(())
        }
        Err(_) if try_mode => {
            out.append_null();
            Ok(())
        }
        Err(e) => Err(e),
    }
}

impl ScalarUDFImpl for VariantGet {
    fn name(&self) -> &str {
        if self.try_mode {
            "try_variant_get"
        } else {
            "variant_get"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        exec_err!("{} is planned through return_field_from_args", self.name())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant_arg(self.name(), &args.arg_fields[0])?;
        let path_type = args.arg_fields[1].data_type();
        if !matches!(
            path_type,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
        ) {
            return plan_err!("{}: the path must be a string, got {path_type}", self.name());
        }
        if let Some(Some(p)) = literal_string(args.scalar_arguments[1]) {
            VariantPath::parse(p)?;
        }
        let has_type = args.arg_fields.len() == 3;
        let target = self.target(args.scalar_arguments.get(2).copied().flatten(), has_type)?;
        Ok(match target {
            SparkType::Variant => super::variant_return_field(self.name()),
            t => Arc::new(Field::new(self.name(), t.data_type(), true)),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let type_arg = match args.args.get(2) {
            Some(ColumnarValue::Scalar(s)) => Some(s.clone()),
            Some(ColumnarValue::Array(_)) => return plan_err!("{}: the type must be a literal", self.name()),
            None => None,
        };
        let target = self.target(type_arg.as_ref(), args.args.len() == 3)?;
        let literal_path = match &args.args[1] {
            ColumnarValue::Scalar(s) => match literal_string(Some(s)) {
                Some(p) => Some(p.map(VariantPath::parse).transpose()?),
                None => return plan_err!("{}: the path must be a string", self.name()),
            },
            ColumnarValue::Array(_) => None,
        };
        let (arrays, all_scalar) = arrays_of(&args.args[..2])?;
        let result = match literal_path {
            Some(Some(path)) => variant_get_array(&arrays[0], &path, target, self.try_mode)?,
            Some(None) => get_rows(&arrays[0], target, self.try_mode, self.name(), |_| None)?,
            None => {
                // Per-row paths, each distinct text parsed once.
                let texts = Strings::try_new(&arrays[1], self.name())?;
                let mut parsed: HashMap<&str, usize> = HashMap::new();
                let mut paths: Vec<VariantPath> = Vec::new();
                let mut index: Vec<Option<usize>> = Vec::with_capacity(arrays[1].len());
                for i in 0..arrays[1].len() {
                    index.push(match texts.get(i) {
                        None => None,
                        Some(t) => Some(match parsed.get(t) {
                            Some(&k) => k,
                            None => {
                                paths.push(VariantPath::parse(t)?);
                                parsed.insert(t, paths.len() - 1);
                                paths.len() - 1
                            }
                        }),
                    });
                }
                get_rows(&arrays[0], target, self.try_mode, self.name(), |i| {
                    index.get(i).copied().flatten().and_then(|k| paths.get(k))
                })?
            }
        };
        output(result, all_scalar)
    }
}
