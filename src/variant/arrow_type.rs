//! The Arrow representation of a variant column.
//!
//! A struct of two binaries, marked with the canonical extension type
//! `arrow.parquet.variant` in the field metadata:
//!
//! | field      | type   | nullable |
//! |------------|--------|----------|
//! | `metadata` | Binary | no       |
//! | `value`    | Binary | no       |
//!
//! Files written by other engines (Spark 4, Delta) usually lack the marker, so
//! a column is also recognised by its shape: a struct with a binary `metadata`
//! plus a binary `value` and/or a `typed_value` (shredded), ignoring fields
//! whose name starts with `_`. Binary, LargeBinary and BinaryView all count as
//! binary.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields};

/// Name of the canonical Arrow extension type.
pub const VARIANT_EXTENSION: &str = "arrow.parquet.variant";

/// Field-metadata key holding an extension type name.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";

/// The struct type produced by this module's functions.
pub fn variant_data_type() -> DataType {
    DataType::Struct(variant_fields())
}

/// The children of [`variant_data_type`].
pub fn variant_fields() -> Fields {
    Fields::from(vec![
        Arc::new(Field::new("metadata", DataType::Binary, false)),
        Arc::new(Field::new("value", DataType::Binary, false)),
    ])
}

/// A field of [`variant_data_type`] carrying the extension marker.
pub fn variant_field(name: &str, nullable: bool) -> Field {
    Field::new(name, variant_data_type(), nullable).with_metadata(HashMap::from([(
        EXTENSION_NAME_KEY.to_string(),
        VARIANT_EXTENSION.to_string(),
    )]))
}

/// True for Binary, LargeBinary and BinaryView.
pub fn is_binary(dt: &DataType) -> bool {
    matches!(dt, DataType::Binary | DataType::LargeBinary | DataType::BinaryView)
}

/// True when `dt` has the variant shape: struct with binary `metadata` and a
/// binary `value` and/or a `typed_value`; `_`-prefixed fields ignored.
pub fn is_variant_type(dt: &DataType) -> bool {
    let DataType::Struct(fields) = dt else {
        return false;
    };
    let (mut metadata, mut value, mut typed) = (false, false, false);
    for f in fields.iter().filter(|f| !f.name().starts_with('_')) {
        match f.name().as_str() {
            "metadata" if is_binary(f.data_type()) => metadata = true,
            "value" if is_binary(f.data_type()) => value = true,
            "typed_value" => typed = true,
            _ => return false,
        }
    }
    metadata && (value || typed)
}

/// True when `field` is a variant: by the extension marker or by shape.
pub fn is_variant_field(field: &Field) -> bool {
    let marked = field
        .metadata()
        .get(EXTENSION_NAME_KEY)
        .is_some_and(|n| n == VARIANT_EXTENSION);
    (marked && matches!(field.data_type(), DataType::Struct(_))) || is_variant_type(field.data_type())
}

/// True when the struct type has a `typed_value` child (shredded).
pub fn is_shredded_type(dt: &DataType) -> bool {
    matches!(dt, DataType::Struct(fields) if fields.iter().any(|f| f.name() == "typed_value"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_marker_and_shape() {
        let f = variant_field("v", true);
        assert!(is_variant_field(&f));
        assert_eq!(
            f.metadata().get(EXTENSION_NAME_KEY).map(String::as_str),
            Some(VARIANT_EXTENSION)
        );
        // Spark-written: value first, BinaryView, an ignorable extra field
        let spark = Field::new(
            "v",
            DataType::Struct(Fields::from(vec![
                Field::new("value", DataType::BinaryView, false),
                Field::new("metadata", DataType::BinaryView, false),
                Field::new("_extra", DataType::Int32, true),
            ])),
            true,
        );
        assert!(is_variant_field(&spark));
        let shredded = DataType::Struct(Fields::from(vec![
            Field::new("metadata", DataType::LargeBinary, false),
            Field::new("typed_value", DataType::Int64, true),
        ]));
        assert!(is_variant_type(&shredded) && is_shredded_type(&shredded));
        let other = DataType::Struct(Fields::from(vec![
            Field::new("metadata", DataType::Binary, false),
            Field::new("value", DataType::Binary, false),
            Field::new("x", DataType::Int32, true),
        ]));
        assert!(!is_variant_type(&other));
        assert!(!is_variant_type(&DataType::Binary));
        let no_value = DataType::Struct(Fields::from(vec![Field::new("metadata", DataType::Binary, false)]));
        assert!(!is_variant_type(&no_value));
    }
}
