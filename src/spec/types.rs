//! Column types of a table schema and their Arrow form.
//!
//! The schema JSON names types the way Iceberg does; every type has exactly
//! one Arrow form, so the table's Arrow schema is a pure function of the JSON.
//!
//! | JSON type            | Arrow type                          | SQL spelling (DataFusion)        |
//! |----------------------|-------------------------------------|----------------------------------|
//! | `boolean`            | `Boolean`                           | `BOOLEAN`                        |
//! | `int`                | `Int32`                             | `INT`, `SMALLINT`, `TINYINT`     |
//! | `long`               | `Int64`                             | `BIGINT`                         |
//! | `float` / `double`   | `Float32` / `Float64`               | `REAL` / `DOUBLE`                |
//! | `decimal(10,2)`      | `Decimal128(10, 2)`                 | `DECIMAL(10,2)`                  |
//! | `date`               | `Date32`                            | `DATE`                           |
//! | `time` / `time_ns`   | `Time64(µs)` / `Time64(ns)`         | `TIME` (in column definitions) / a CTAS of `TIME` values |
//! | `timestamp`          | `Timestamp(µs, None)`               | `TIMESTAMP` (in column definitions) |
//! | `timestamp_ns`       | `Timestamp(ns, None)`               | `TIMESTAMP(9)`                   |
//! | `timestamptz(_ns)`   | `Timestamp(µs/ns, "UTC")`           | `TIMESTAMPTZ`, `TIMESTAMP(9) WITH TIME ZONE` |
//! | `string`             | `Utf8`                              | `VARCHAR`, `TEXT`                |
//! | `binary`             | `Binary`                            | `BYTEA`                          |
//! | `fixed[16]`          | `FixedSizeBinary(16)`               |                                  |
//! | `{"type":"struct"…}` | `Struct`                            | `STRUCT<…>`                      |
//! | `{"type":"list"…}`   | `List`                              | `INT[]`                          |
//! | `{"type":"map"…}`    | `Map`                               |                                  |
//!
//! Arrow types without a JSON name of their own are widened on the way in
//! (`Int8`/`Int16` → `int`, `Utf8View`/`LargeUtf8` → `string`, seconds and
//! milliseconds timestamps → microseconds), so inserts are cast to the table's
//! canonical form.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Result;
use crate::invalid;

/// A primitive column type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Decimal { precision: u8, scale: i8 },
    Date,
    Time,
    TimeNs,
    Timestamp,
    TimestampTz,
    TimestampNs,
    TimestampTzNs,
    String,
    Binary,
    Fixed(i32),
}

/// A column type: primitive, variant or nested. Nested children carry field ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    Primitive(PrimitiveType),
    /// Semi-structured data: in Arrow and Parquet a struct of binary
    /// `metadata` and `value` (Variant binary encoding), marked with the
    /// `arrow.parquet.variant` extension.
    Variant,
    Struct(Vec<NestedField>),
    List {
        element_id: i32,
        element_required: bool,
        element: Box<Type>,
    },
    Map {
        key_id: i32,
        key: Box<Type>,
        value_id: i32,
        value_required: bool,
        value: Box<Type>,
    },
}

/// A named field with a stable id (the id survives renames).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NestedField {
    pub id: i32,
    pub name: String,
    pub required: bool,
    #[serde(rename = "type")]
    pub field_type: Type,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
}

/// Arrow field metadata key under which Parquet stores field ids.
pub const PARQUET_FIELD_ID: &str = "PARQUET:field_id";

impl PrimitiveType {
    pub fn to_arrow(self) -> DataType {
        use PrimitiveType::*;
        match self {
            Boolean => DataType::Boolean,
            Int => DataType::Int32,
            Long => DataType::Int64,
            Float => DataType::Float32,
            Double => DataType::Float64,
            Decimal { precision, scale } => DataType::Decimal128(precision, scale),
            Date => DataType::Date32,
            Time => DataType::Time64(TimeUnit::Microsecond),
            TimeNs => DataType::Time64(TimeUnit::Nanosecond),
            Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
            TimestampTz => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            TimestampNs => DataType::Timestamp(TimeUnit::Nanosecond, None),
            TimestampTzNs => DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
            String => DataType::Utf8,
            Binary => DataType::Binary,
            Fixed(n) => DataType::FixedSizeBinary(n),
        }
    }

    /// Canonical primitive type for an Arrow type, or an error naming it.
    pub fn from_arrow(dt: &DataType) -> Result<Self> {
        use PrimitiveType::*;
        Ok(match dt {
            DataType::Boolean => Boolean,
            DataType::Int8 | DataType::Int16 | DataType::Int32 => Int,
            DataType::UInt8 | DataType::UInt16 => Int,
            DataType::Int64 | DataType::UInt32 => Long,
            DataType::Float16 | DataType::Float32 => Float,
            DataType::Float64 => Double,
            DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => Decimal {
                precision: *p,
                scale: *s,
            },
            DataType::Date32 | DataType::Date64 => Date,
            DataType::Time32(_) | DataType::Time64(TimeUnit::Microsecond) => Time,
            DataType::Time64(_) => TimeNs,
            DataType::Timestamp(TimeUnit::Nanosecond, None) => TimestampNs,
            DataType::Timestamp(TimeUnit::Nanosecond, Some(_)) => TimestampTzNs,
            DataType::Timestamp(_, None) => Timestamp,
            DataType::Timestamp(_, Some(_)) => TimestampTz,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => String,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Binary,
            DataType::FixedSizeBinary(n) => Fixed(*n),
            // Lossless, as Spark stores an unsigned long.
            DataType::UInt64 => Decimal {
                precision: 20,
                scale: 0,
            },
            // Dictionary-encoded values (pandas categoricals) are stored as their values.
            DataType::Dictionary(_, values) => return Self::from_arrow(values),
            DataType::RunEndEncoded(_, values) => return Self::from_arrow(values.data_type()),
            DataType::Null => {
                return invalid!("the type of NULL is not known: give it one, e.g. CAST(NULL AS INT)");
            }
            other => return invalid!("unsupported column type {other}"),
        })
    }

    /// Whether min/max statistics make sense for values of this type.
    pub fn has_bounds(self) -> bool {
        true
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PrimitiveType::*;
        match self {
            Boolean => write!(f, "boolean"),
            Int => write!(f, "int"),
            Long => write!(f, "long"),
            Float => write!(f, "float"),
            Double => write!(f, "double"),
            Decimal { precision, scale } => write!(f, "decimal({precision},{scale})"),
            Date => write!(f, "date"),
            Time => write!(f, "time"),
            TimeNs => write!(f, "time_ns"),
            Timestamp => write!(f, "timestamp"),
            TimestampTz => write!(f, "timestamptz"),
            TimestampNs => write!(f, "timestamp_ns"),
            TimestampTzNs => write!(f, "timestamptz_ns"),
            String => write!(f, "string"),
            Binary => write!(f, "binary"),
            Fixed(n) => write!(f, "fixed[{n}]"),
        }
    }
}

impl std::str::FromStr for PrimitiveType {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self> {
        use PrimitiveType::*;
        let s = s.trim();
        Ok(match s {
            "boolean" => Boolean,
            "int" => Int,
            "long" => Long,
            "float" => Float,
            "double" => Double,
            "date" => Date,
            "time" => Time,
            "time_ns" => TimeNs,
            "timestamp" => Timestamp,
            "timestamptz" => TimestampTz,
            "timestamp_ns" => TimestampNs,
            "timestamptz_ns" => TimestampTzNs,
            "string" => String,
            "binary" => Binary,
            _ => {
                if let Some(args) = s.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
                    let (p, sc) = args
                        .split_once(',')
                        .ok_or_else(|| crate::error::Error::Format(format!("bad decimal type {s:?}")))?;
                    let precision = p.trim().parse().map_err(|_| bad_type(s))?;
                    let scale = sc.trim().parse().map_err(|_| bad_type(s))?;
                    Decimal { precision, scale }
                } else if let Some(n) = s.strip_prefix("fixed[").and_then(|r| r.strip_suffix(']')) {
                    Fixed(n.trim().parse().map_err(|_| bad_type(s))?)
                } else {
                    return Err(bad_type(s));
                }
            }
        })
    }
}

fn bad_type(s: &str) -> crate::error::Error {
    crate::error::Error::Format(format!("unknown type {s:?} in table schema"))
}

impl Type {
    /// The Arrow form of this type (children carry their field ids as metadata).
    pub fn to_arrow(&self) -> DataType {
        match self {
            Type::Primitive(p) => p.to_arrow(),
            Type::Variant => crate::variant::variant_data_type(),
            Type::Struct(fields) => DataType::Struct(fields_to_arrow(fields)),
            Type::List {
                element_id,
                element_required,
                element,
            } => DataType::List(Arc::new(with_field_id(
                Field::new("element", element.to_arrow(), !element_required),
                *element_id,
            ))),
            Type::Map {
                key_id,
                key,
                value_id,
                value_required,
                value,
            } => {
                let entries = Field::new(
                    "key_value",
                    DataType::Struct(Fields::from(vec![
                        with_field_id(Field::new("key", key.to_arrow(), false), *key_id),
                        with_field_id(Field::new("value", value.to_arrow(), !value_required), *value_id),
                    ])),
                    false,
                );
                DataType::Map(Arc::new(entries), false)
            }
        }
    }

    pub fn as_primitive(&self) -> Option<PrimitiveType> {
        match self {
            Type::Primitive(p) => Some(*p),
            _ => None,
        }
    }

    /// Build a type from Arrow, assigning fresh ids to nested children with `next_id`.
    pub fn from_arrow(dt: &DataType, next_id: &mut dyn FnMut() -> i32) -> Result<Type> {
        if crate::variant::arrow_type::is_variant_type(dt) {
            return Ok(Type::Variant);
        }
        Ok(match dt {
            DataType::Struct(fields) => {
                let mut out = Vec::with_capacity(fields.len());
                for f in fields {
                    let id = next_id();
                    out.push(NestedField {
                        id,
                        name: f.name().clone(),
                        required: !f.is_nullable(),
                        field_type: Type::from_arrow(f.data_type(), next_id)?,
                        doc: None,
                    });
                }
                Type::Struct(out)
            }
            DataType::List(f) | DataType::LargeList(f) | DataType::ListView(f) | DataType::FixedSizeList(f, _) => {
                let element_id = next_id();
                Type::List {
                    element_id,
                    element_required: !f.is_nullable(),
                    element: Box::new(Type::from_arrow(f.data_type(), next_id)?),
                }
            }
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return invalid!("map type without key/value struct: {dt}");
                };
                if kv.len() != 2 {
                    return invalid!("map type must have a key and a value: {dt}");
                }
                let key_id = next_id();
                let value_id = next_id();
                Type::Map {
                    key_id,
                    key: Box::new(Type::from_arrow(kv[0].data_type(), next_id)?),
                    value_id,
                    value_required: !kv[1].is_nullable(),
                    value: Box::new(Type::from_arrow(kv[1].data_type(), next_id)?),
                }
            }
            other => Type::Primitive(PrimitiveType::from_arrow(other)?),
        })
    }
}

/// Arrow fields for a list of nested fields, each tagged with its field id.
pub fn fields_to_arrow(fields: &[NestedField]) -> Fields {
    fields.iter().map(|f| Arc::new(f.to_arrow())).collect()
}

impl NestedField {
    /// The Arrow field, with the field id in its metadata (`PARQUET:field_id`).
    pub fn to_arrow(&self) -> Field {
        let field = with_field_id(
            Field::new(&self.name, self.field_type.to_arrow(), !self.required),
            self.id,
        );
        if self.field_type == Type::Variant {
            let mut md = field.metadata().clone();
            md.extend(crate::variant::variant_field(&self.name, true).metadata().clone());
            return field.with_metadata(md);
        }
        field
    }

    /// The engine-facing Arrow field: no field ids, the variant marker kept.
    pub fn to_engine_arrow(&self) -> Field {
        if self.field_type == Type::Variant {
            return crate::variant::variant_field(&self.name, !self.required);
        }
        Field::new(&self.name, strip_metadata(&self.field_type.to_arrow()), !self.required)
    }
}

fn with_field_id(field: Field, id: i32) -> Field {
    field.with_metadata([(PARQUET_FIELD_ID.to_string(), id.to_string())].into())
}

/// Drop field-id metadata everywhere in a data type (the engine-facing form).
pub fn strip_metadata(dt: &DataType) -> DataType {
    match dt {
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|f| Arc::new(Field::new(f.name(), strip_metadata(f.data_type()), f.is_nullable())))
                .collect(),
        ),
        DataType::List(f) => DataType::List(Arc::new(Field::new(
            f.name(),
            strip_metadata(f.data_type()),
            f.is_nullable(),
        ))),
        DataType::Map(f, sorted) => DataType::Map(
            Arc::new(Field::new(f.name(), strip_metadata(f.data_type()), f.is_nullable())),
            *sorted,
        ),
        other => other.clone(),
    }
}

// ---- JSON form -------------------------------------------------------------

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum NestedJson {
    Struct {
        fields: Vec<NestedField>,
    },
    List {
        #[serde(rename = "element-id")]
        element_id: i32,
        #[serde(rename = "element-required")]
        element_required: bool,
        element: Type,
    },
    Map {
        #[serde(rename = "key-id")]
        key_id: i32,
        key: Type,
        #[serde(rename = "value-id")]
        value_id: i32,
        #[serde(rename = "value-required")]
        value_required: bool,
        value: Type,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum TypeJson {
    Primitive(String),
    Nested(NestedJson),
}

impl Serialize for Type {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let json = match self.clone() {
            Type::Primitive(p) => TypeJson::Primitive(p.to_string()),
            Type::Variant => TypeJson::Primitive("variant".to_string()),
            Type::Struct(fields) => TypeJson::Nested(NestedJson::Struct { fields }),
            Type::List {
                element_id,
                element_required,
                element,
            } => TypeJson::Nested(NestedJson::List {
                element_id,
                element_required,
                element: *element,
            }),
            Type::Map {
                key_id,
                key,
                value_id,
                value_required,
                value,
            } => TypeJson::Nested(NestedJson::Map {
                key_id,
                key: *key,
                value_id,
                value_required,
                value: *value,
            }),
        };
        json.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Type {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match TypeJson::deserialize(d)? {
            TypeJson::Primitive(s) if s == "variant" => Type::Variant,
            TypeJson::Primitive(s) => Type::Primitive(s.parse().map_err(serde::de::Error::custom)?),
            TypeJson::Nested(NestedJson::Struct { fields }) => Type::Struct(fields),
            TypeJson::Nested(NestedJson::List {
                element_id,
                element_required,
                element,
            }) => Type::List {
                element_id,
                element_required,
                element: Box::new(element),
            },
            TypeJson::Nested(NestedJson::Map {
                key_id,
                key,
                value_id,
                value_required,
                value,
            }) => Type::Map {
                key_id,
                key: Box::new(key),
                value_id,
                value_required,
                value: Box::new(value),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitive_round_trip_through_json_and_arrow() {
        for p in [
            PrimitiveType::Boolean,
            PrimitiveType::Int,
            PrimitiveType::Long,
            PrimitiveType::Decimal {
                precision: 38,
                scale: 18,
            },
            PrimitiveType::TimestampTzNs,
            PrimitiveType::Fixed(16),
        ] {
            let t = Type::Primitive(p);
            let json = serde_json::to_string(&t).unwrap();
            let back: Type = serde_json::from_str(&json).unwrap();
            assert_eq!(back, t);
            assert_eq!(PrimitiveType::from_arrow(&p.to_arrow()).unwrap(), p);
        }
    }

    #[test]
    fn nested_types_keep_ids() {
        let mut next = 10;
        let dt = DataType::List(Arc::new(Field::new(
            "item",
            DataType::Struct(Fields::from(vec![Field::new("a", DataType::Int64, true)])),
            true,
        )));
        let t = Type::from_arrow(&dt, &mut || {
            next += 1;
            next
        })
        .unwrap();
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains("\"element-id\":11"), "{json}");
        let back: Type = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn unknown_type_is_a_clear_error() {
        let err = serde_json::from_str::<Type>("\"varchar2\"").unwrap_err().to_string();
        assert!(err.contains("varchar2"), "{err}");
    }
}
