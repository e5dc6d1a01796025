//! Shredded variants → plain `struct{metadata, value}`.
//!
//! A shredded column stores part of each value in typed Arrow columns
//! (`typed_value`) beside the binary `value` (Parquet "VariantShredding"):
//!
//! | metadata | value              | typed_value            | variant            |
//! |----------|--------------------|------------------------|--------------------|
//! | m        | `0c 05`            | NULL                   | `5`                |
//! | m        | NULL               | `7` (Int64)            | `7`                |
//! | m        | `{"c":true}` bytes | `{a: {typed_value: 1}}` | `{"a":1,"c":true}` (partially shredded object) |
//! | m        | NULL               | NULL                   | variant null       |
//!
//! Objects shred into a struct of per-field `{value, typed_value}` structs, arrays
//! into a list of such structs. A field with both parts NULL is missing from
//! the object. Values in `value` use the row's metadata, so the rebuilt value
//! keeps those dictionary ids and copies the bytes verbatim.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StructArray};
use arrow::datatypes::DataType;

use super::array::{Bin, VariantArrayBuilder};
use super::arrow_type::is_shredded_type;
use super::decode::{Variant, VariantValue};
use super::encode::VariantBuilder;
use super::from_arrow::append_arrow_value;
use super::metadata::VariantMetadata;
use super::{MAX_DEPTH, Result, VariantError};

/// `{value, typed_value}` at one level of the shredding tree.
struct Node<'a> {
    value: Option<Bin<'a>>,
    typed: Typed<'a>,
}

enum Offsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
}

enum Typed<'a> {
    None,
    Primitive(&'a dyn Array),
    Object {
        array: &'a StructArray,
        fields: Vec<(&'a str, Node<'a>)>,
    },
    List {
        array: &'a dyn Array,
        offsets: Offsets<'a>,
        element: Box<Node<'a>>,
    },
}

fn invalid(msg: impl Into<String>) -> VariantError {
    VariantError::malformed(format!("shredded variant: {}", msg.into()))
}

fn build_node(s: &StructArray, depth: usize) -> Result<Node<'_>> {
    if depth > MAX_DEPTH {
        return Err(VariantError::TooDeep(MAX_DEPTH));
    }
    let value = s
        .column_by_name("value")
        .map(|v| Bin::try_new(v.as_ref(), "value"))
        .transpose()?;
    let typed = match s.column_by_name("typed_value") {
        None => Typed::None,
        Some(t) => build_typed(t, depth)?,
    };
    Ok(Node { value, typed })
}

fn element_node(values: &ArrayRef, depth: usize) -> Result<Node<'_>> {
    let s = values
        .as_struct_opt()
        .ok_or_else(|| invalid("array elements must be {value, typed_value} structs"))?;
    build_node(s, depth + 1)
}

fn build_typed(t: &ArrayRef, depth: usize) -> Result<Typed<'_>> {
    Ok(match t.data_type() {
        DataType::Struct(fields) => {
            let array = t.as_struct();
            let mut nodes = Vec::with_capacity(fields.len());
            for (f, col) in fields.iter().zip(array.columns()) {
                let s = col
                    .as_struct_opt()
                    .ok_or_else(|| invalid(format!("field `{}` must be a {{value, typed_value}} struct", f.name())))?;
                nodes.push((f.name().as_str(), build_node(s, depth + 1)?));
            }
            Typed::Object { array, fields: nodes }
        }
        DataType::List(_) => {
            let l = t.as_list::<i32>();
            Typed::List {
                array: t.as_ref(),
                offsets: Offsets::Small(l.value_offsets()),
                element: Box::new(element_node(l.values(), depth)?),
            }
        }
        DataType::LargeList(_) => {
            let l = t.as_list::<i64>();
            Typed::List {
                array: t.as_ref(),
                offsets: Offsets::Large(l.value_offsets()),
                element: Box::new(element_node(l.values(), depth)?),
            }
        }
        _ => Typed::Primitive(t.as_ref()),
    })
}

/// Appends the value of `node` at `row`; `Ok(false)` when it is missing.
fn append_node(
    b: &mut VariantBuilder,
    node: &Node<'_>,
    row: usize,
    md: &VariantMetadata<'_>,
    depth: usize,
) -> Result<bool> {
    if depth > MAX_DEPTH {
        return Err(VariantError::TooDeep(MAX_DEPTH));
    }
    let value = node.value.as_ref().filter(|v| !v.is_null(row)).map(|v| v.value(row));
    let typed_valid = match &node.typed {
        Typed::None => false,
        Typed::Primitive(a) => a.is_valid(row),
        Typed::Object { array, .. } => array.is_valid(row),
        Typed::List { array, .. } => array.is_valid(row),
    };
    if !typed_valid {
        return match value {
            Some(v) => {
                b.append_raw(Variant::with_metadata(*md, v)?.exact_value_bytes()?);
                Ok(true)
            }
            None => Ok(false),
        };
    }
    match &node.typed {
        Typed::None => return Ok(false),
        Typed::Primitive(a) => append_arrow_value(b, *a, row)?,
        Typed::Object { fields, .. } => {
            let start = b.offset();
            let mut ids = Vec::with_capacity(fields.len());
            for (name, child) in fields {
                let off = b.offset() - start;
                if append_node(b, child, row, md, depth + 1)? {
                    ids.push((b.add_key(name), off));
                }
            }
            if let Some(v) = value {
                let var = Variant::with_metadata(*md, v)?;
                let VariantValue::Object(o) = var.decode()? else {
                    return Err(invalid("`value` beside a shredded object must be an object"));
                };
                for i in 0..o.len() {
                    let (k, child) = o.field(i)?;
                    if fields.iter().any(|(n, _)| *n == k) {
                        return Err(invalid(format!("field `{k}` is both shredded and in `value`")));
                    }
                    ids.push((b.add_key(k), b.offset() - start));
                    b.append_raw(child.exact_value_bytes()?);
                }
            }
            b.finish_object(start, &mut ids)?;
        }
        Typed::List { offsets, element, .. } => {
            let (from, to) = match offsets {
                Offsets::Small(o) => (o[row] as usize, o[row + 1] as usize),
                Offsets::Large(o) => (o[row] as usize, o[row + 1] as usize),
            };
            let start = b.offset();
            let mut offs = Vec::with_capacity(to.saturating_sub(from));
            for j in from..to {
                offs.push(b.offset() - start);
                if !append_node(b, element, j, md, depth + 1)? {
                    b.append_null();
                }
            }
            b.finish_array(start, &offs)?;
        }
    }
    Ok(true)
}

/// Turns a shredded variant struct (`metadata`, optional `value`, optional
/// `typed_value`) into the plain form of
/// [`super::arrow_type::variant_data_type`]. Errors on inconsistent rows.
pub fn unshred_variant_array(array: &dyn Array) -> Result<StructArray> {
    unshred(array, false)
}

/// Like [`unshred_variant_array`]; with `null_on_error` a row that cannot be
/// rebuilt becomes SQL NULL instead of failing the batch.
pub fn unshred(array: &dyn Array, null_on_error: bool) -> Result<StructArray> {
    let s = array
        .as_struct_opt()
        .ok_or_else(|| invalid(format!("expected a struct, found {}", array.data_type())))?;
    let metadata = Bin::try_new(
        s.column_by_name("metadata")
            .ok_or_else(|| invalid("no `metadata` field"))?
            .as_ref(),
        "metadata",
    )?;
    let node = build_node(s, 0)?;
    let mut out = VariantArrayBuilder::with_capacity(s.len());
    let mut b = VariantBuilder::new();
    let mut mbuf = Vec::new();
    for row in 0..s.len() {
        if s.is_null(row) {
            out.append_null();
            continue;
        }
        let r = (|| -> Result<()> {
            let md = VariantMetadata::try_new(metadata.value(row))?;
            b.reset_with_metadata(&md)?;
            if !append_node(&mut b, &node, row, &md, 0)? {
                b.append_null();
            }
            b.write_metadata(&mut mbuf);
            Ok(())
        })();
        match r {
            Ok(()) => out.append_variant(&mbuf, b.value()),
            Err(_) if null_on_error => out.append_null(),
            Err(e) => return Err(e),
        }
    }
    out.finish()
}

/// The input as a plain variant array: unshredded when it has `typed_value`.
pub fn plain_variant_array(array: &ArrayRef, null_on_error: bool) -> Result<ArrayRef> {
    if is_shredded_type(array.data_type()) {
        Ok(Arc::new(unshred(array.as_ref(), null_on_error)?))
    } else {
        Ok(array.clone())
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{BinaryArray, Int64Array, ListArray, StringArray};
    use arrow::buffer::{NullBuffer, OffsetBuffer};
    use arrow::datatypes::{Field, Fields};

    use super::super::array::VariantArrayView;
    use super::super::json::{parse_json_to_vecs, to_json};
    use super::*;

    fn field_struct(value: Vec<Option<&[u8]>>, typed: ArrayRef) -> ArrayRef {
        let value: ArrayRef = Arc::new(BinaryArray::from(value));
        Arc::new(StructArray::from(vec![
            (Arc::new(Field::new("value", DataType::Binary, true)), value),
            (
                Arc::new(Field::new("typed_value", typed.data_type().clone(), true)),
                typed,
            ),
        ]))
    }

    fn rows(a: &StructArray) -> Vec<Option<String>> {
        let view = VariantArrayView::try_new(a).unwrap();
        (0..a.len())
            .map(|i| {
                view.get(i)
                    .map(|(m, v)| to_json(&Variant::try_new(m, v).unwrap()).unwrap())
            })
            .collect()
    }

    #[test]
    fn unshreds_objects_arrays_and_primitives() {
        // metadata shared by all rows: keys a, c
        let (meta, rest) = parse_json_to_vecs(r#"{"a":0,"c":true}"#).unwrap();
        let c_only = {
            let mut b = VariantBuilder::with_metadata(&VariantMetadata::try_new(&meta).unwrap()).unwrap();
            let mut f = vec![(b.add_key("c"), 0)];
            b.append_bool(true);
            b.finish_object(0, &mut f).unwrap();
            b.value().to_vec()
        };
        let _ = rest;
        // typed_value: struct { a: {value, typed_value: Int64}, b: {value, typed_value: Utf8} }
        let a = field_struct(
            vec![None, None, Some(&[0x09, b'x', b'y'][..])],
            Arc::new(Int64Array::from(vec![Some(1), None, None])),
        );
        let bcol = field_struct(
            vec![None, None, None],
            Arc::new(StringArray::from(vec![Some("s"), None, None])),
        );
        let typed = StructArray::try_new(
            Fields::from(vec![
                Field::new("a", a.data_type().clone(), true),
                Field::new("b", bcol.data_type().clone(), true),
            ]),
            vec![a, bcol],
            Some(NullBuffer::from(vec![true, false, true])),
        )
        .unwrap();
        let value: ArrayRef = Arc::new(BinaryArray::from(vec![Some(&c_only[..]), Some(&[0x0c, 5][..]), None]));
        let metadata: ArrayRef = Arc::new(BinaryArray::from(vec![&meta[..], &meta[..], &meta[..]]));
        let s = StructArray::from(vec![
            (Arc::new(Field::new("metadata", DataType::Binary, false)), metadata),
            (Arc::new(Field::new("value", DataType::Binary, true)), value),
            (
                Arc::new(Field::new("typed_value", typed.data_type().clone(), true)),
                Arc::new(typed) as ArrayRef,
            ),
        ]);
        let out = unshred_variant_array(&s).unwrap();
        assert_eq!(
            rows(&out),
            vec![
                Some(r#"{"a":1,"b":"s","c":true}"#.into()),
                Some("5".into()),
                Some(r#"{"a":"xy"}"#.into())
            ]
        );
    }

    #[test]
    fn unshreds_lists() {
        let (meta, _) = parse_json_to_vecs("null").unwrap();
        let elem = field_struct(
            vec![None, Some(&[0x04][..]), None],
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])),
        );
        let list = ListArray::new(
            Arc::new(Field::new("element", elem.data_type().clone(), false)),
            OffsetBuffer::new(vec![0, 2, 3].into()),
            elem,
            None,
        );
        let metadata: ArrayRef = Arc::new(BinaryArray::from(vec![&meta[..], &meta[..]]));
        let s = StructArray::from(vec![
            (Arc::new(Field::new("metadata", DataType::Binary, false)), metadata),
            (
                Arc::new(Field::new("typed_value", list.data_type().clone(), true)),
                Arc::new(list) as ArrayRef,
            ),
        ]);
        assert_eq!(
            rows(&unshred_variant_array(&s).unwrap()),
            vec![Some("[1,true]".into()), Some("[3]".into())]
        );
    }

    #[test]
    fn conflicting_field_is_an_error() {
        let (meta, obj) = parse_json_to_vecs(r#"{"a":2}"#).unwrap();
        let a = field_struct(vec![None], Arc::new(Int64Array::from(vec![Some(1)])));
        let typed = StructArray::from(vec![(Arc::new(Field::new("a", a.data_type().clone(), true)), a)]);
        let s = StructArray::from(vec![
            (
                Arc::new(Field::new("metadata", DataType::Binary, false)),
                Arc::new(BinaryArray::from(vec![&meta[..]])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("value", DataType::Binary, true)),
                Arc::new(BinaryArray::from(vec![&obj[..]])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("typed_value", typed.data_type().clone(), true)),
                Arc::new(typed) as ArrayRef,
            ),
        ]);
        assert!(unshred_variant_array(&s).is_err());
        assert_eq!(unshred(&s, true).unwrap().null_count(), 1);
    }
}
