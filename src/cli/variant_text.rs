//! Variant columns as JSON text, for printing only.
//!
//! In Arrow a variant is a struct of two binaries (`metadata`, `value`), which
//! the table printer would show as raw bytes and the CSV writer refuses. The
//! CLI turns every variant column, also one nested in a struct or list, into a
//! Utf8 column of its JSON text (what `to_json` returns) just before printing.
//! Library users still receive the variant structs: only the CLI's output path
//! calls this.
//!
//! A struct that merely has the variant's shape but holds bytes that do not
//! decode is printed as it is rather than failing the statement.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, GenericListArray, OffsetSizeTrait, RecordBatch, StructArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};

use crate::error::Result;
use crate::variant::is_variant_field;
use crate::variant::udf::to_json_array;

/// `schema` with every variant field (at any depth) turned into Utf8.
pub fn display_schema(schema: &SchemaRef) -> SchemaRef {
    if !schema.fields().iter().any(has_variant) {
        return schema.clone();
    }
    let fields: Vec<FieldRef> = schema.fields().iter().map(display_field).collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// `batch` with every variant column (at any depth) as JSON text.
pub fn display_batch(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    if !schema.fields().iter().any(has_variant) {
        return Ok(batch.clone());
    }
    let (fields, columns): (Vec<FieldRef>, Vec<ArrayRef>) = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| display_column(f, c))
        .unzip();
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        columns,
    )?)
}

fn has_variant(field: &FieldRef) -> bool {
    if is_variant_field(field) {
        return true;
    }
    match field.data_type() {
        DataType::Struct(children) => children.iter().any(has_variant),
        DataType::List(item) | DataType::LargeList(item) => has_variant(item),
        _ => false,
    }
}

/// The field a column gets after [`display_column`]; for an empty result,
/// whose schema is all there is to print.
fn display_field(field: &FieldRef) -> FieldRef {
    if !has_variant(field) {
        return field.clone();
    }
    let data_type = match field.data_type() {
        _ if is_variant_field(field) => DataType::Utf8,
        DataType::Struct(children) => DataType::Struct(children.iter().map(display_field).collect()),
        DataType::List(item) => DataType::List(display_field(item)),
        DataType::LargeList(item) => DataType::LargeList(display_field(item)),
        other => other.clone(),
    };
    let display = Field::new(field.name(), data_type, field.is_nullable());
    if is_variant_field(field) {
        // JSON output embeds the text as the value it is.
        return Arc::new(super::json_values::json_text_field(display));
    }
    Arc::new(display)
}

/// The column with its variants as text, or as it is where they do not decode.
fn display_column(field: &FieldRef, column: &ArrayRef) -> (FieldRef, ArrayRef) {
    if !has_variant(field) {
        return (field.clone(), column.clone());
    }
    match convert(field, column) {
        Some(column) => (display_field(field), column),
        None => (field.clone(), column.clone()),
    }
}

fn convert(field: &FieldRef, column: &ArrayRef) -> Option<ArrayRef> {
    if is_variant_field(field) {
        return to_json_array(column).ok();
    }
    match field.data_type() {
        DataType::Struct(children) => {
            let s = column.as_struct();
            let columns = children
                .iter()
                .zip(s.columns())
                .map(|(f, c)| if has_variant(f) { convert(f, c) } else { Some(c.clone()) })
                .collect::<Option<Vec<_>>>()?;
            let fields: Vec<FieldRef> = children.iter().map(display_field).collect();
            Some(Arc::new(
                StructArray::try_new(fields.into(), columns, s.nulls().cloned()).ok()?,
            ))
        }
        DataType::List(item) => convert_list(item, column.as_list::<i32>()),
        DataType::LargeList(item) => convert_list(item, column.as_list::<i64>()),
        _ => None,
    }
}

fn convert_list<O: OffsetSizeTrait>(item: &FieldRef, list: &GenericListArray<O>) -> Option<ArrayRef> {
    let values = convert(item, list.values())?;
    let list = GenericListArray::<O>::try_new(
        display_field(item),
        list.offsets().clone(),
        values,
        list.nulls().cloned(),
    )
    .ok()?;
    Some(Arc::new(list))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{BinaryArray, StringArray};
    use datafusion::arrow::datatypes::Fields;

    use crate::variant::udf::parse_json_array;

    fn variants(json: &[Option<&str>]) -> ArrayRef {
        let text: ArrayRef = Arc::new(StringArray::from(json.to_vec()));
        parse_json_array(&text, false).unwrap()
    }

    fn text(column: &ArrayRef) -> Vec<Option<&str>> {
        column.as_string::<i32>().iter().collect()
    }

    #[test]
    fn top_level_variant_becomes_json_text() {
        let field = Arc::new(crate::variant::variant_field("v", true));
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![field])),
            vec![variants(&[Some(r#"{"b":[1,null],"a":"x"}"#), None])],
        )
        .unwrap();
        let shown = display_batch(&batch).unwrap();
        assert_eq!(shown.schema().field(0).data_type(), &DataType::Utf8);
        assert_eq!(text(shown.column(0)), vec![Some(r#"{"a":"x","b":[1,null]}"#), None]);
        assert_eq!(display_schema(&batch.schema()), shown.schema());
    }

    #[test]
    fn variants_nested_in_structs_and_lists() {
        let v = variants(&[Some("1"), Some("[true]"), Some("null")]);
        let item = Arc::new(crate::variant::variant_field("item", true));
        let list: ArrayRef = Arc::new(
            GenericListArray::<i32>::try_new(
                item.clone(),
                datafusion::arrow::buffer::OffsetBuffer::from_lengths([2, 1]),
                v.clone(),
                None,
            )
            .unwrap(),
        );
        let inner = Arc::new(crate::variant::variant_field("inner", true));
        let s: ArrayRef = Arc::new(StructArray::new(Fields::from(vec![inner]), vec![v.slice(0, 2)], None));
        let batch = RecordBatch::try_from_iter(vec![("l", list), ("s", s)]).unwrap();
        let shown = display_batch(&batch).unwrap();
        let l = shown.column(0).as_list::<i32>();
        assert_eq!(text(l.values()), vec![Some("1"), Some("[true]"), Some("null")]);
        let s = shown.column(1).as_struct();
        assert_eq!(text(s.column(0)), vec![Some("1"), Some("[true]")]);
        assert_eq!(display_schema(&batch.schema()), shown.schema());
    }

    #[test]
    fn undecodable_shape_alike_struct_is_left_as_it_is() {
        let bytes: ArrayRef = Arc::new(BinaryArray::from(vec![&[0xffu8, 0xff][..]]));
        let s: ArrayRef = Arc::new(StructArray::new(
            Fields::from(vec![
                Field::new("metadata", DataType::Binary, false),
                Field::new("value", DataType::Binary, false),
            ]),
            vec![bytes.clone(), bytes],
            None,
        ));
        let batch = RecordBatch::try_from_iter(vec![("s", s)]).unwrap();
        assert_eq!(display_batch(&batch).unwrap(), batch);
    }
}
