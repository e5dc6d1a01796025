//! Writing Iceberg's Avro files: schema JSON helpers and the container.
//!
//! Iceberg readers find every field by its `field-id` attribute and read an
//! Iceberg map with int keys from an Avro array of key/value records marked
//! `"logicalType": "map"` (Avro maps only have string keys):
//!
//! ```json
//! {"name": "null_value_counts", "field-id": 110, "default": null, "type": ["null",
//!   {"type": "array", "logicalType": "map", "items": {"type": "record", "name": "k121_v122",
//!     "fields": [{"name": "key", "type": "int", "field-id": 121},
//!                {"name": "value", "type": "long", "field-id": 122}]}}]}
//! ```
//!
//! `apache-avro` keeps `field-id` when it writes a schema back out, but drops
//! attributes it interprets itself (`logicalType` on an array, `adjust-to-utc`
//! on a timestamp). So the container header is written here, with the schema
//! JSON exactly as built, and the crate's `Writer` (which validates every
//! record against the parsed schema) writes the data blocks after it.

use std::collections::HashMap;

use apache_avro::types::Value;
use apache_avro::{Codec, DeflateSettings, Schema, Writer};
use serde_json::{Value as Json, json};

use crate::error::{Error, Result};

/// A required record field.
pub fn field(name: &str, id: i32, ty: Json) -> Json {
    json!({"name": name, "type": ty, "field-id": id})
}

/// An optional record field: a union with null, null by default.
pub fn optional(name: &str, id: i32, ty: Json) -> Json {
    json!({"name": name, "type": ["null", ty], "default": null, "field-id": id})
}

/// An Iceberg `map<int, value_type>` as Java and pyiceberg write it.
pub fn int_map(key_id: i32, value_id: i32, value_type: &str) -> Json {
    json!({
        "type": "array",
        "logicalType": "map",
        "items": {
            "type": "record",
            "name": format!("k{key_id}_v{value_id}"),
            "fields": [field("key", key_id, json!("int")), field("value", value_id, json!(value_type))],
        },
    })
}

/// An Iceberg `list<element_type>` (required elements).
pub fn list(element_id: i32, element_type: Json) -> Json {
    json!({"type": "array", "items": element_type, "element-id": element_id})
}

/// A value of an optional field.
pub fn some(value: Value) -> Value {
    Value::Union(1, Box::new(value))
}

/// The null of an optional field.
pub fn null() -> Value {
    Value::Union(0, Box::new(Value::Null))
}

/// An optional value: `None` → null.
pub fn opt(value: Option<Value>) -> Value {
    value.map_or_else(null, some)
}

/// An Iceberg int map's entries as Avro key/value records.
pub fn int_map_value(entries: impl IntoIterator<Item = (i32, Value)>) -> Value {
    Value::Array(
        entries
            .into_iter()
            .map(|(k, v)| Value::Record(vec![("key".into(), Value::Int(k)), ("value".into(), v)]))
            .collect(),
    )
}

/// An Avro container file (deflate) of `records` with writer schema `schema`
/// and key-value `metadata`; `what` names the file for errors.
pub fn write_container(schema: &Json, metadata: &[(&str, String)], records: Vec<Value>, what: &str) -> Result<Vec<u8>> {
    let bad = |e: apache_avro::Error| Error::Format(format!("writing {what}: {e}"));
    let schema_text = schema.to_string();
    let parsed = Schema::parse_str(&schema_text).map_err(bad)?;
    let codec = Codec::Deflate(DeflateSettings::default());
    let marker = *uuid::Uuid::new_v4().as_bytes();
    let mut meta: HashMap<String, Value> = metadata
        .iter()
        .map(|(k, v)| (k.to_string(), Value::Bytes(v.as_bytes().to_vec())))
        .collect();
    meta.insert("avro.schema".into(), Value::Bytes(schema_text.into_bytes()));
    meta.insert("avro.codec".into(), Value::Bytes(b"deflate".to_vec()));
    let meta_schema = Schema::map(Schema::Bytes).build();
    let mut out = b"Obj\x01".to_vec();
    let meta_bytes = apache_avro::writer::datum::GenericDatumWriter::builder(&meta_schema)
        .build()
        .and_then(|w| w.write_value_to_vec(Value::Map(meta)))
        .map_err(bad)?;
    out.extend(meta_bytes);
    out.extend(marker);
    let mut writer = Writer::builder()
        .schema(&parsed)
        .writer(out)
        .codec(codec)
        .marker(marker)
        .has_header(true)
        .build()
        .map_err(bad)?;
    for record in records {
        writer.append_value(record).map_err(bad)?;
    }
    writer.into_inner().map_err(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iceberg::avro_records::AvroFile;

    #[test]
    fn container_keeps_the_schema_text_and_metadata() {
        let schema = json!({
            "type": "record",
            "name": "r",
            "fields": [
                field("a", 1, json!("int")),
                optional("m", 2, int_map(3, 4, "long")),
            ],
        });
        let records = vec![
            Value::Record(vec![
                ("a".into(), Value::Int(7)),
                ("m".into(), some(int_map_value([(5, Value::Long(9))]))),
            ]),
            Value::Record(vec![("a".into(), Value::Int(8)), ("m".into(), null())]),
        ];
        let bytes = write_container(&schema, &[("k", "v".into())], records, "test file").unwrap();
        let file = AvroFile::decode(&bytes, "test file").unwrap();
        assert_eq!(file.records.len(), 2);
        assert_eq!(file.meta("k"), Some("v"));
        // The header holds our schema text, attributes apache-avro drops included.
        let text = schema.to_string();
        assert!(text.contains(r#""logicalType":"map""#), "{text}");
        assert!(bytes.windows(text.len()).any(|w| w == text.as_bytes()));
        let ids = crate::iceberg::avro_records::RecordIds::of(&file.schema, "t").unwrap();
        assert_eq!(ids.int(&file.records[0], 1), Some(7));
        assert_eq!(ids.int_map(&file.records[0], 2).get(&5), Some(&&Value::Long(9)));
        assert!(ids.int_map(&file.records[1], 2).is_empty());
    }

    #[test]
    fn a_record_that_does_not_fit_the_schema_is_an_error() {
        let schema = json!({"type": "record", "name": "r", "fields": [field("a", 1, json!("int"))]});
        let records = vec![Value::Record(vec![("a".into(), Value::String("x".into()))])];
        let err = write_container(&schema, &[], records, "bad file")
            .unwrap_err()
            .to_string();
        assert!(err.contains("writing bad file"), "{err}");
    }
}
