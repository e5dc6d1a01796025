//! Reading Iceberg's Avro files by field id, never by name.
//!
//! Iceberg identifies every manifest and manifest-list field by a
//! `field-id` attribute on the Avro schema; names vary between writers
//! (older Java wrote `added_data_files_count` for id 504, pyiceberg and
//! current Java `added_files_count`) and partition field names are
//! sanitized by Java (`ts-day` → `ts_x2Dday`). So a record is read by
//! looking its field ids up in the writer's schema once, then taking values
//! by position:
//!
//! | id  | manifest_entry field | id  | data_file field (record `r2`)   |
//! |-----|----------------------|-----|---------------------------------|
//! | 0   | status               | 100 | file_path                       |
//! | 1   | snapshot_id          | 102 | partition (one field per spec field, ids ≥ 1000) |
//! | 3   | sequence_number      | 103 | record_count                    |
//! | 2   | data_file            | 110 | null_value_counts (map id → n)  |

use std::collections::HashMap;

use apache_avro::Schema;
use apache_avro::types::Value;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;

use super::bounds_read::{be_i128, timestamp};
use crate::error::{Error, Result};

/// An Avro record schema's fields, by Iceberg field id.
#[derive(Debug, Clone, Default)]
pub struct RecordIds {
    by_id: HashMap<i32, (usize, Schema)>,
}

/// The record schema inside `schema` (itself, or the non-null branch of a union).
fn record_schema(schema: &Schema) -> Option<&apache_avro::schema::RecordSchema> {
    match schema {
        Schema::Record(r) => Some(r),
        Schema::Union(u) => u.variants().iter().find_map(record_schema),
        _ => None,
    }
}

impl RecordIds {
    /// Field ids of the record `schema`; `what` names the file for errors.
    pub fn of(schema: &Schema, what: &str) -> Result<Self> {
        let Some(record) = record_schema(schema) else {
            return Err(Error::Format(format!("{what}: expected an Avro record schema")));
        };
        let mut by_id = HashMap::new();
        for (pos, field) in record.fields.iter().enumerate() {
            let id = field
                .custom_attributes
                .get("field-id")
                .and_then(|v| v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok())));
            if let Some(id) = id {
                by_id.insert(id as i32, (pos, field.schema.clone()));
            }
        }
        Ok(Self { by_id })
    }

    /// Field ids of the record nested under field `id` (e.g. `data_file`, `partition`).
    pub fn nested(&self, id: i32, what: &str) -> Result<Self> {
        match self.by_id.get(&id) {
            Some((_, schema)) => Self::of(schema, what),
            None => Ok(Self::default()),
        }
    }

    /// The schema of field `id` (unions unwrapped to their non-null branch).
    pub fn schema(&self, id: i32) -> Option<&Schema> {
        let (_, schema) = self.by_id.get(&id)?;
        match schema {
            Schema::Union(u) => u.variants().iter().find(|s| !matches!(s, Schema::Null)),
            other => Some(other),
        }
    }

    /// Whether the writer's schema has field `id` at all.
    pub fn has(&self, id: i32) -> bool {
        self.by_id.contains_key(&id)
    }

    /// The value of field `id` of `record`; `None` when absent or null.
    pub fn get<'v>(&self, record: &'v Value, id: i32) -> Option<&'v Value> {
        let (pos, _) = self.by_id.get(&id)?;
        let Value::Record(fields) = unwrap(record) else {
            return None;
        };
        let value = unwrap(&fields.get(*pos)?.1);
        (!matches!(value, Value::Null)).then_some(value)
    }

    pub fn long(&self, record: &Value, id: i32) -> Option<i64> {
        match self.get(record, id)? {
            Value::Long(v) => Some(*v),
            Value::Int(v) => Some(*v as i64),
            _ => None,
        }
    }

    pub fn int(&self, record: &Value, id: i32) -> Option<i32> {
        match self.get(record, id)? {
            Value::Int(v) => Some(*v),
            Value::Long(v) => i32::try_from(*v).ok(),
            _ => None,
        }
    }

    pub fn string<'v>(&self, record: &'v Value, id: i32) -> Option<&'v str> {
        match self.get(record, id)? {
            Value::String(s) => Some(s.as_str()),
            Value::Enum(_, s) => Some(s.as_str()),
            _ => None,
        }
    }

    pub fn bytes<'v>(&self, record: &'v Value, id: i32) -> Option<&'v [u8]> {
        match self.get(record, id)? {
            Value::Bytes(b) | Value::Fixed(_, b) => Some(b.as_slice()),
            _ => None,
        }
    }

    pub fn boolean(&self, record: &Value, id: i32) -> Option<bool> {
        match self.get(record, id)? {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    /// An Iceberg map with int keys (stored as an array of key/value
    /// records, or as an Avro map with string keys).
    pub fn int_map<'v>(&self, record: &'v Value, id: i32) -> HashMap<i32, &'v Value> {
        let mut out = HashMap::new();
        match self.get(record, id) {
            Some(Value::Array(items)) => {
                for item in items {
                    if let Value::Record(kv) = unwrap(item)
                        && let [(_, k), (_, v)] = kv.as_slice()
                        && let Some(k) = as_i64(unwrap(k))
                    {
                        out.insert(k as i32, unwrap(v));
                    }
                }
            }
            Some(Value::Map(map)) => {
                for (k, v) in map {
                    if let Ok(k) = k.parse::<i32>() {
                        out.insert(k, unwrap(v));
                    }
                }
            }
            _ => {}
        }
        out
    }

    /// An array of ints (e.g. `equality_ids`).
    pub fn int_list(&self, record: &Value, id: i32) -> Vec<i32> {
        match self.get(record, id) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| as_i64(unwrap(v)))
                .map(|v| v as i32)
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The value inside a union branch.
pub fn unwrap(value: &Value) -> &Value {
    match value {
        Value::Union(_, inner) => unwrap(inner),
        other => other,
    }
}

pub fn as_i64(value: &Value) -> Option<i64> {
    match value {
        Value::Int(v) | Value::Date(v) | Value::TimeMillis(v) => Some(*v as i64),
        Value::Long(v)
        | Value::TimeMicros(v)
        | Value::TimestampMillis(v)
        | Value::TimestampMicros(v)
        | Value::TimestampNanos(v)
        | Value::LocalTimestampMillis(v)
        | Value::LocalTimestampMicros(v)
        | Value::LocalTimestampNanos(v) => Some(*v),
        _ => None,
    }
}

/// An Avro value as a scalar of `target` (the partition field's result type).
/// `None` when the value cannot be read as that type.
pub fn avro_to_scalar(value: &Value, target: &DataType) -> Option<ScalarValue> {
    if matches!(unwrap(value), Value::Null) {
        return ScalarValue::try_from(target).ok();
    }
    let scalar = avro_as(unwrap(value), target)?;
    if &scalar.data_type() == target {
        Some(scalar)
    } else {
        scalar.cast_to(target).ok()
    }
}

/// A (non-null, unwrapped) Avro value read as `target` where it can be,
/// else as its own type.
pub fn avro_as(value: &Value, target: &DataType) -> Option<ScalarValue> {
    Some(match (value, target) {
        (Value::Boolean(b), _) => ScalarValue::Boolean(Some(*b)),
        (Value::String(s) | Value::Enum(_, s), _) => ScalarValue::Utf8(Some(s.clone())),
        (Value::Float(f), _) => ScalarValue::Float32(Some(*f)),
        (Value::Double(f), _) => ScalarValue::Float64(Some(*f)),
        (Value::Bytes(b) | Value::Fixed(_, b), DataType::Decimal128(p, s)) => {
            ScalarValue::Decimal128(Some(be_i128(b)?), *p, *s)
        }
        (Value::Decimal(d), DataType::Decimal128(p, s)) => {
            let bytes: Vec<u8> = Vec::try_from(d).ok()?;
            ScalarValue::Decimal128(Some(be_i128(&bytes)?), *p, *s)
        }
        (Value::Bytes(b), DataType::FixedSizeBinary(n)) | (Value::Fixed(_, b), DataType::FixedSizeBinary(n)) => {
            ScalarValue::FixedSizeBinary(*n, Some(b.clone()))
        }
        (Value::Uuid(u), _) => ScalarValue::FixedSizeBinary(16, Some(u.as_bytes().to_vec())),
        (Value::Bytes(b) | Value::Fixed(_, b), _) => ScalarValue::Binary(Some(b.clone())),
        (other, DataType::Date32) => ScalarValue::Date32(Some(i32::try_from(as_i64(other)?).ok()?)),
        (other, DataType::Int32) => ScalarValue::Int32(Some(i32::try_from(as_i64(other)?).ok()?)),
        (other, DataType::Int64) => ScalarValue::Int64(Some(as_i64(other)?)),
        (other, DataType::Timestamp(unit, tz)) => timestamp(as_i64(other)?, unit, tz.clone()),
        (other, DataType::Time64(TimeUnit::Microsecond)) => ScalarValue::Time64Microsecond(Some(as_i64(other)?)),
        (other, DataType::Time64(TimeUnit::Nanosecond)) => ScalarValue::Time64Nanosecond(Some(as_i64(other)?)),
        (other, _) => ScalarValue::Int64(Some(as_i64(other)?)),
    })
}

/// An Avro container file: writer schema, key-value metadata and records.
pub struct AvroFile {
    pub schema: Schema,
    pub metadata: HashMap<String, Vec<u8>>,
    pub records: Vec<Value>,
}

impl AvroFile {
    /// Decode a whole Avro container file; `what` names it for errors.
    pub fn decode(bytes: &[u8], what: &str) -> Result<Self> {
        let bad = |e: apache_avro::Error| Error::Format(format!("{what} is not a readable Avro file: {e}"));
        let reader = apache_avro::Reader::new(bytes).map_err(bad)?;
        let schema = reader.writer_schema().clone();
        let metadata = reader.user_metadata().clone();
        let records = reader.collect::<std::result::Result<Vec<_>, _>>().map_err(bad)?;
        Ok(Self {
            schema,
            metadata,
            records,
        })
    }

    /// A key-value metadata entry as text.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(|v| std::str::from_utf8(v).ok())
    }
}
