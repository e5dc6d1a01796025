//! `schema_of_variant_agg(v)`: the merged schema of a variant column.
//!
//! | v (rows)                          | schema_of_variant_agg(v)            |
//! |-----------------------------------|-------------------------------------|
//! | `{"a":1}`, `{"b":"x"}`            | `OBJECT<a: BIGINT, b: STRING>`      |
//! | `1`, `2.5`                        | `DECIMAL(21,1)`                     |
//! | `1`, `"x"`                        | `VARIANT`                           |
//! | no rows / only NULL               | `VOID`                              |
//!
//! The partial state is the printed schema, parsed back when merging.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue, exec_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{Accumulator, AggregateUDFImpl, Signature, Volatility};

use super::super::decode::Variant;
use super::super::schema::{VariantSchema, merge, schema_of_variant};
use super::{Strings, variant_input, view};

/// `schema_of_variant_agg(variant)`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SchemaOfVariantAgg {
    signature: Signature,
}

impl SchemaOfVariantAgg {
    pub fn new() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl Default for SchemaOfVariantAgg {
    fn default() -> Self {
        Self::new()
    }
}

impl AggregateUDFImpl for SchemaOfVariantAgg {
    fn name(&self) -> &str {
        "schema_of_variant_agg"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        let t = &arg_types[0];
        if !(super::super::arrow_type::is_variant_type(t) || t == &DataType::Null) {
            return datafusion::common::plan_err!("schema_of_variant_agg expects a VARIANT argument, got {t}");
        }
        Ok(DataType::Utf8)
    }

    fn accumulator(&self, _acc_args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(SchemaAccumulator {
            schema: VariantSchema::Void,
        }))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "schema"),
            DataType::Utf8,
            true,
        ))])
    }
}

/// Running merged schema.
#[derive(Debug)]
struct SchemaAccumulator {
    schema: VariantSchema,
}

impl SchemaAccumulator {
    fn add(&mut self, s: VariantSchema) {
        let cur = std::mem::replace(&mut self.schema, VariantSchema::Void);
        self.schema = merge(cur, s);
    }
}

impl Accumulator for SchemaAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(input) = variant_input(&values[0], false)? else {
            return Ok(());
        };
        let rows = view(&input)?;
        for i in 0..rows.len() {
            if let Some((m, v)) = rows.get(i) {
                match Variant::try_new(m, v).and_then(|var| schema_of_variant(&var)) {
                    Ok(s) => self.add(s),
                    Err(e) => return exec_err!("schema_of_variant_agg: {e}"),
                }
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let strings = Strings::try_new(&states[0], "schema_of_variant_agg")?;
        for i in 0..states[0].len() {
            if let Some(s) = strings.get(i) {
                self.add(VariantSchema::parse(s)?);
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Utf8(Some(self.schema.to_string()))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(Some(self.schema.to_string())))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + 64
    }
}
