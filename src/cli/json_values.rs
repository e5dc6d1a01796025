//! Values as JSON, for `--format json` and for nested values in CSV.
//!
//! Arrow's JSON writer does most of it; three things are ours:
//!
//! | value                         | printed as                                   |
//! |-------------------------------|----------------------------------------------|
//! | NULL                          | `null`, the key kept (every row has every key) |
//! | VARIANT                       | its JSON value, embedded (not a string of it) |
//! | NaN, ±infinity (REAL, DOUBLE) | the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (JSON has no such numbers; Spark and pyiceberg spell them so) |
//!
//! Variant columns reach this module as the JSON text
//! [`super::variant_text`] made of them, in fields marked [`JSON_TEXT`].
//! In CSV a list, struct or map is one field holding its JSON text, as
//! DuckDB prints them.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray, RecordBatch, StringBuilder};
use datafusion::arrow::datatypes::{ArrowPrimitiveType, DataType, Field, FieldRef, Float32Type, Float64Type, Schema};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json::writer::{Encoder, EncoderFactory, EncoderOptions, NullableEncoder, make_encoder};

use crate::error::Result;

/// Field metadata key of a Utf8 field whose values are JSON text already.
pub const JSON_TEXT: &str = "hidden_partitions.json_text";

/// `field` marked as holding JSON text.
pub fn json_text_field(field: Field) -> Field {
    let mut metadata = field.metadata().clone();
    metadata.insert(JSON_TEXT.to_string(), "true".to_string());
    field.with_metadata(metadata)
}

/// The encoder options of our JSON: keys with null values kept, JSON text
/// embedded, non-finite floats as strings.
pub fn options() -> EncoderOptions {
    EncoderOptions::default()
        .with_explicit_nulls(true)
        .with_encoder_factory(factory())
}

/// The encoders of JSON text and non-finite floats.
pub fn factory() -> Arc<dyn EncoderFactory> {
    Arc::new(OurJson)
}

/// Arrow's defaults, for the values we print as it does.
static PLAIN: std::sync::LazyLock<EncoderOptions> = std::sync::LazyLock::new(EncoderOptions::default);

#[derive(Debug)]
struct OurJson;

impl EncoderFactory for OurJson {
    fn make_default_encoder<'a>(
        &self,
        field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> std::result::Result<Option<NullableEncoder<'a>>, ArrowError> {
        let nulls = array.nulls().cloned();
        if array.data_type() == &DataType::Utf8 && holds_json_text(field) {
            let text = array.as_string::<i32>();
            return Ok(Some(NullableEncoder::new(Box::new(Raw(text)), nulls)));
        }
        // Arrow's own encoder for the finite values, ours for the others.
        let encoder: Box<dyn Encoder + 'a> = match array.data_type() {
            DataType::Float32 => match Floats::of(array.as_primitive::<Float32Type>(), field, array)? {
                Some(floats) => Box::new(floats),
                None => return Ok(None),
            },
            DataType::Float64 => match Floats::of(array.as_primitive::<Float64Type>(), field, array)? {
                Some(floats) => Box::new(floats),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        Ok(Some(NullableEncoder::new(encoder, nulls)))
    }
}

/// Whether `field` is marked as JSON text; for list items Arrow hands over
/// the list's field, so a list whose items are marked counts too.
fn holds_json_text(field: &Field) -> bool {
    field.metadata().contains_key(JSON_TEXT)
        || match field.data_type() {
            DataType::List(item) | DataType::LargeList(item) | DataType::FixedSizeList(item, _) => {
                item.metadata().contains_key(JSON_TEXT)
            }
            _ => false,
        }
}

/// JSON text written as it is.
struct Raw<'a>(&'a datafusion::arrow::array::StringArray);

impl Encoder for Raw<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.value(idx).as_bytes());
    }
}

/// Floats: non-finite ones as strings, the others as Arrow writes them.
struct Floats<'a, T: ArrowPrimitiveType> {
    values: &'a PrimitiveArray<T>,
    finite: NullableEncoder<'a>,
}

impl<'a, T: ArrowPrimitiveType> Floats<'a, T>
where
    T::Native: Into<f64>,
{
    /// `None` when every value is finite: Arrow's encoder does.
    fn of(
        values: &'a PrimitiveArray<T>,
        field: &'a FieldRef,
        array: &'a dyn Array,
    ) -> std::result::Result<Option<Self>, ArrowError> {
        if values.iter().flatten().all(|v| v.into().is_finite()) {
            return Ok(None);
        }
        let finite = make_encoder(field, array, &PLAIN)?;
        Ok(Some(Self { values, finite }))
    }
}

impl<T: ArrowPrimitiveType> Encoder for Floats<'_, T>
where
    T::Native: Into<f64>,
{
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        match self.values.value(idx).into() {
            v if v.is_nan() => out.extend_from_slice(b"\"NaN\""),
            v if v == f64::INFINITY => out.extend_from_slice(b"\"Infinity\""),
            v if v == f64::NEG_INFINITY => out.extend_from_slice(b"\"-Infinity\""),
            _ => self.finite.encode(idx, out),
        }
    }
}

/// Whether CSV cannot hold this type as it is.
fn nested(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Struct(_)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::ListView(_)
            | DataType::LargeListView(_)
            | DataType::Map(..)
    )
}

/// `batch` with every list, struct and map column as a Utf8 column of each
/// value's JSON text (NULL stays NULL), for CSV.
pub fn nested_as_json_text(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    if !schema.fields().iter().any(|f| nested(f.data_type())) {
        return Ok(batch.clone());
    }
    let options = options();
    let mut fields: Vec<FieldRef> = Vec::with_capacity(schema.fields().len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if !nested(field.data_type()) {
            fields.push(field.clone());
            columns.push(column.clone());
            continue;
        }
        let mut encoder = make_encoder(field, column.as_ref(), &options)?;
        let mut text = StringBuilder::with_capacity(column.len(), column.len() * 16);
        let mut buf = Vec::new();
        for row in 0..column.len() {
            if column.is_null(row) {
                text.append_null();
                continue;
            }
            buf.clear();
            encoder.encode(row, &mut buf);
            text.append_value(String::from_utf8_lossy(&buf));
        }
        fields.push(Arc::new(Field::new(field.name(), DataType::Utf8, field.is_nullable())));
        columns.push(Arc::new(text.finish()));
    }
    let metadata: HashMap<String, String> = schema.metadata().clone();
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new_with_metadata(fields, metadata)),
        columns,
    )?)
}
