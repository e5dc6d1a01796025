//! Iceberg manifest entries decoded straight into Arrow columns.
//!
//! The writer schema is compiled once per manifest into a plan: which
//! position holds which field id, and for each partition field which Arrow
//! builder its values go to (chosen from the Avro type and our result type,
//! once). Records are then walked field by field; fields nobody asked for
//! (column sizes, value counts, split offsets, bounds of columns not
//! projected) are skipped without allocating. An entry is decoded into a
//! scratch view first (any field order), then appended — unless DELETED.
//!
//! | id  | field                      | kept as                                        |
//! |-----|----------------------------|------------------------------------------------|
//! | 0, 3 | status, sequence_number   | DELETED skipped; null sequence inherited when ADDED |
//! | 100, 101, 134 | path, format, content | columns                                   |
//! | 102 | partition (ids ≥ 1000)     | one typed column per spec field                 |
//! | 110, 137, 125, 128 | null/NaN counts, bounds | per wanted column id (`Slots`)         |
//! | 135, 143, 144, 145 | equality ids, referenced file, content offset and size | delete files only (`Extras`) |
//! | 142 | first_row_id (v3)          | a column; null when inherited                   |

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BinaryArray, BinaryBuilder, BooleanBuilder, Decimal128Array, FixedSizeBinaryBuilder, Float32Array,
    Float64Array, Int64Array, Int64Builder, NullArray, PrimitiveArray, StringArray, StringBuilder,
};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Int32Type, Int64Type, Time64MicrosecondType, Time64NanosecondType, TimeUnit,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use datafusion::common::ScalarValue;

use super::avro_container::{Container, Node, Reader, field_id};
use super::bounds_read::be_i128;
use super::convert::SpecMapping;
use super::manifest_list_read::ManifestEntryFile;
use crate::error::{Error, Result};

/// What a manifest entry's file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    Data,
    PositionDeletes,
    EqualityDeletes,
}

/// Which per-column statistics to keep, and whether to keep everything
/// delete files need.
#[derive(Debug, Clone, Default)]
pub struct Wanted {
    /// Column ids whose counts and bounds become columns, in this order.
    pub stats: Vec<i32>,
    /// Keep every count and bound by id, and the delete-file fields (`Extras`).
    pub extras: bool,
}

/// The per-column statistics of the wanted ids, one row per live entry.
#[derive(Debug, Clone)]
pub struct SlotColumns {
    pub null_count: Int64Array,
    pub nan_count: Int64Array,
    pub lower: BinaryArray,
    pub upper: BinaryArray,
}

/// What delete files need beyond the columns (with `Wanted::extras`).
#[derive(Debug, Clone, Default)]
pub struct Extras {
    pub null_counts: HashMap<i32, i64>,
    pub nan_counts: HashMap<i32, i64>,
    pub lower: HashMap<i32, Vec<u8>>,
    pub upper: HashMap<i32, Vec<u8>>,
    pub equality_ids: Vec<i32>,
    pub referenced_data_file: Option<String>,
    pub content_offset: Option<i64>,
    pub content_size: Option<i64>,
}

/// A manifest's live entries as columns.
#[derive(Debug)]
pub struct Columns {
    pub rows: usize,
    pub content: Vec<Content>,
    /// As written in the manifest.
    pub file_path: StringArray,
    pub file_format: StringArray,
    pub record_count: Vec<i64>,
    pub file_size: Vec<i64>,
    /// Data sequence numbers, inherited when not written.
    pub sequence_number: Vec<i64>,
    /// Iceberg v3 row lineage: the entry's own `first_row_id` (null when
    /// it inherits one from the manifest list).
    pub first_row_id: Vec<Option<i64>>,
    /// Per Iceberg partition field (spec order): typed by our result type
    /// when kept, by its Avro type otherwise.
    pub partition: Vec<ArrayRef>,
    /// Per `Wanted::stats` id.
    pub stats: Vec<SlotColumns>,
    /// Per row, with `Wanted::extras`.
    pub extras: Vec<Extras>,
}

/// Decode the live entries of the manifest `bytes`; `what` names it for
/// errors; `inherited` is the manifest list's sequence number.
pub fn decode(bytes: &[u8], what: &str, inherited: i64, spec: &SpecMapping, wanted: &Wanted) -> Result<Columns> {
    let file = Container::read(bytes, what)?;
    let mut names = HashMap::new();
    let root = Node::of(&file.schema, &mut names)?;
    let plan = EntryPlan::compile(&root, &file.schema, spec, what)?;
    let slots = SlotIndex::new(&wanted.stats);
    let mut out = Builders::new(&plan, wanted);
    for (count, data) in &file.blocks {
        let mut r = Reader::new(data);
        let mut scratch = Scratch::new(&plan, wanted.stats.len());
        for _ in 0..*count {
            scratch.reset();
            plan.read(&mut r, &mut scratch, &slots, wanted.extras).ok_or_else(|| {
                Error::Format(format!(
                    "{what} is not a readable Avro file: a record is truncated or corrupt"
                ))
            })?;
            if scratch.status == 2 {
                continue;
            }
            out.push(&scratch, &plan, inherited, what)?;
        }
    }
    out.finish(&plan)
}

/// Field ids → wanted slot (dense: column ids are small).
struct SlotIndex {
    dense: Vec<u32>,
}

impl SlotIndex {
    fn new(ids: &[i32]) -> Self {
        let max = ids
            .iter()
            .copied()
            .filter(|i| (0..1 << 20).contains(i))
            .max()
            .unwrap_or(-1);
        let mut dense = vec![u32::MAX; (max + 1) as usize];
        for (slot, id) in ids.iter().enumerate() {
            if let Some(d) = usize::try_from(*id).ok().and_then(|i| dense.get_mut(i)) {
                *d = slot as u32;
            }
        }
        Self { dense }
    }

    #[inline]
    fn get(&self, id: i32) -> Option<usize> {
        let s = *self.dense.get(usize::try_from(id).ok()?)?;
        (s != u32::MAX).then_some(s as usize)
    }
}

/// What a manifest_entry / data_file position holds.
#[derive(Debug, Clone, Copy)]
enum Role {
    Status,
    Sequence,
    DataFile,
    Content,
    Path,
    Format,
    Partition,
    RecordCount,
    FileSize,
    NullCounts,
    NanCounts,
    Lower,
    Upper,
    EqualityIds,
    Referenced,
    ContentOffset,
    ContentSize,
    FirstRowId,
    Skip,
}

/// How a partition field's Avro values are read as our type.
#[derive(Debug, Clone)]
enum Wire {
    Bool,
    Int,
    Float,
    Double,
    Str,
    Bytes,
    Decimal,
    Uuid,
    UuidStr,
    Other,
}

#[derive(Debug, Clone)]
struct PartField {
    name: String,
    wire: Wire,
    /// The type of an unkept field's column (the Avro type's own).
    natural: DataType,
    /// The column's type: our result type when kept, else `natural`.
    target: DataType,
}

/// The compiled writer schema of one manifest.
struct EntryPlan {
    entry: Vec<(Role, Node)>,
    file: Vec<(Role, Node)>,
    /// Avro partition record position → spec field index.
    partition_positions: Vec<(Option<usize>, Node)>,
    /// Per spec field.
    parts: Vec<PartField>,
}

fn record_fields(node: &Node) -> &[(Option<i32>, Node)] {
    match node.non_null() {
        Node::Record(f) => f,
        _ => &[],
    }
}

/// The record schema inside `schema` (itself, or a union branch).
fn record_schema(schema: &apache_avro::Schema) -> Option<&apache_avro::schema::RecordSchema> {
    match schema {
        apache_avro::Schema::Record(r) => Some(r),
        apache_avro::Schema::Union(u) => u.variants().iter().find_map(record_schema),
        _ => None,
    }
}

/// The Avro schema of the record field with `id` (union unwrapped).
fn field_schema(record: &apache_avro::schema::RecordSchema, id: i32) -> Option<&apache_avro::Schema> {
    let f = record
        .fields
        .iter()
        .find(|f| field_id(&f.custom_attributes) == Some(id))?;
    Some(non_null_schema(&f.schema))
}

fn non_null_schema(s: &apache_avro::Schema) -> &apache_avro::Schema {
    match s {
        apache_avro::Schema::Union(u) => u
            .variants()
            .iter()
            .find(|v| !matches!(v, apache_avro::Schema::Null))
            .unwrap_or(s),
        other => other,
    }
}

/// How to read values of `schema`, and the Arrow type they are on their own.
fn wire_of(schema: &apache_avro::Schema) -> (Wire, DataType) {
    use apache_avro::Schema as S;
    match schema {
        S::Boolean => (Wire::Bool, DataType::Boolean),
        S::Int => (Wire::Int, DataType::Int32),
        S::Date => (Wire::Int, DataType::Date32),
        S::Long | S::TimeMillis | S::TimestampMillis | S::LocalTimestampMillis => (Wire::Int, DataType::Int64),
        S::TimeMicros => (Wire::Int, DataType::Time64(TimeUnit::Microsecond)),
        S::TimestampMicros | S::LocalTimestampMicros => (Wire::Int, DataType::Timestamp(TimeUnit::Microsecond, None)),
        S::TimestampNanos | S::LocalTimestampNanos => (Wire::Int, DataType::Timestamp(TimeUnit::Nanosecond, None)),
        S::Float => (Wire::Float, DataType::Float32),
        S::Double => (Wire::Double, DataType::Float64),
        S::String | S::Enum(_) => (Wire::Str, DataType::Utf8),
        S::Bytes | S::Fixed(_) => (Wire::Bytes, DataType::Binary),
        S::Uuid(apache_avro::schema::UuidSchema::String) => (Wire::UuidStr, DataType::FixedSizeBinary(16)),
        S::Uuid(_) => (Wire::Uuid, DataType::FixedSizeBinary(16)),
        // A decimal is unknown without its result type (never compared then).
        S::Decimal(_) => (Wire::Decimal, DataType::Null),
        _ => (Wire::Other, DataType::Null),
    }
}

impl EntryPlan {
    fn compile(root: &Node, schema: &apache_avro::Schema, spec: &SpecMapping, what: &str) -> Result<Self> {
        let Node::Record(entry_fields) = root else {
            return Err(Error::Format(format!("{what}: expected an Avro record schema")));
        };
        let role = |id: Option<i32>, table: &[(i32, Role)]| {
            id.and_then(|id| table.iter().find(|(i, _)| *i == id).map(|(_, r)| *r))
                .unwrap_or(Role::Skip)
        };
        let entry_roles = [(0, Role::Status), (3, Role::Sequence), (2, Role::DataFile)];
        let entry: Vec<(Role, Node)> = entry_fields
            .iter()
            .map(|(id, n)| (role(*id, &entry_roles), n.clone()))
            .collect();
        let file_node = entry_fields.iter().find(|(id, _)| *id == Some(2)).map(|(_, n)| n);
        let file_roles = [
            (134, Role::Content),
            (100, Role::Path),
            (101, Role::Format),
            (102, Role::Partition),
            (103, Role::RecordCount),
            (104, Role::FileSize),
            (110, Role::NullCounts),
            (137, Role::NanCounts),
            (125, Role::Lower),
            (128, Role::Upper),
            (135, Role::EqualityIds),
            (143, Role::Referenced),
            (144, Role::ContentOffset),
            (145, Role::ContentSize),
            (142, Role::FirstRowId),
        ];
        let file: Vec<(Role, Node)> = file_node
            .map(record_fields)
            .unwrap_or_default()
            .iter()
            .map(|(id, n)| (role(*id, &file_roles), n.clone()))
            .collect();
        let partition_node = file_node
            .map(record_fields)
            .unwrap_or_default()
            .iter()
            .find(|(id, _)| *id == Some(102))
            .map(|(_, n)| n);
        // The Avro schemas behind the nodes, for logical types.
        let file_schema = record_schema(schema)
            .and_then(|r| field_schema(r, 2))
            .and_then(record_schema);
        let partition_schema = file_schema.and_then(|r| field_schema(r, 102)).and_then(record_schema);
        let partition_positions = partition_node
            .map(record_fields)
            .unwrap_or_default()
            .iter()
            .map(|(id, n)| {
                let index = id.and_then(|id| spec.iceberg.fields.iter().position(|f| f.field_id == id));
                (index, n.clone())
            })
            .collect();
        let parts = spec
            .iceberg
            .fields
            .iter()
            .zip(&spec.kept)
            .map(|(f, kept)| {
                let (wire, natural) = partition_schema
                    .and_then(|r| field_schema(r, f.field_id))
                    .map(wire_of)
                    .unwrap_or((Wire::Other, DataType::Null));
                PartField {
                    name: f.name.clone(),
                    target: kept.clone().unwrap_or_else(|| natural.clone()),
                    wire,
                    natural,
                }
            })
            .collect();
        Ok(Self {
            entry,
            file,
            partition_positions,
            parts,
        })
    }

    /// Read one manifest_entry record into `s`.
    fn read<'a>(&'a self, r: &mut Reader<'a>, s: &mut Scratch<'a>, slots: &SlotIndex, extras: bool) -> Option<()> {
        for (role, node) in &self.entry {
            match role {
                Role::Status => s.status = read_long(node, r)?.and_then(|v| i32::try_from(v).ok()).unwrap_or(1),
                Role::Sequence => s.sequence = read_long(node, r)?,
                Role::DataFile => match node.branch(r)? {
                    Some(Node::Record(_)) => {
                        s.has_file = true;
                        self.read_file(r, s, slots, extras)?;
                    }
                    Some(other) => other.skip(r)?,
                    None => {}
                },
                _ => node.skip(r)?,
            }
        }
        Some(())
    }

    fn read_file<'a>(&'a self, r: &mut Reader<'a>, s: &mut Scratch<'a>, slots: &SlotIndex, extras: bool) -> Option<()> {
        for (role, node) in &self.file {
            match role {
                Role::Content => s.content = read_long(node, r)?,
                Role::Path => s.path = read_str(node, r)?,
                Role::Format => s.format = read_str(node, r)?,
                Role::RecordCount => s.record_count = read_long(node, r)?,
                Role::FileSize => s.file_size = read_long(node, r)?,
                Role::Partition => match node.branch(r)? {
                    Some(Node::Record(_)) => {
                        for (index, field) in &self.partition_positions {
                            match index {
                                Some(i) => s.partition[*i] = read_part(field, r)?,
                                None => field.skip(r)?,
                            }
                        }
                    }
                    Some(other) => other.skip(r)?,
                    None => {}
                },
                Role::NullCounts | Role::NanCounts => {
                    let null = matches!(role, Role::NullCounts);
                    read_int_map(node, r, |id, value, r| {
                        let v = match value.branch(r)? {
                            Some(Node::Long) => r.long()?,
                            Some(other) => return other.skip(r),
                            None => return Some(()),
                        };
                        if let Some(slot) = slots.get(id) {
                            if null {
                                s.null[slot] = Some(v);
                            } else {
                                s.nan[slot] = Some(v);
                            }
                        }
                        if extras {
                            let map = if null {
                                &mut s.extras.null_counts
                            } else {
                                &mut s.extras.nan_counts
                            };
                            map.insert(id, v);
                        }
                        Some(())
                    })?;
                }
                Role::Lower | Role::Upper => {
                    let lower = matches!(role, Role::Lower);
                    read_int_map(node, r, |id, value, r| {
                        let v = match value.branch(r)? {
                            Some(Node::Bytes) => r.bytes()?,
                            Some(Node::Fixed(n)) => r.take(*n)?,
                            Some(other) => return other.skip(r),
                            None => return Some(()),
                        };
                        if let Some(slot) = slots.get(id) {
                            if lower {
                                s.lower[slot] = Some(v);
                            } else {
                                s.upper[slot] = Some(v);
                            }
                        }
                        if extras {
                            let map = if lower {
                                &mut s.extras.lower
                            } else {
                                &mut s.extras.upper
                            };
                            map.insert(id, v.to_vec());
                        }
                        Some(())
                    })?;
                }
                Role::EqualityIds if extras => match node.branch(r)? {
                    Some(Node::Array(item)) => loop {
                        let n = r.block_count()?;
                        if n == 0 {
                            break;
                        }
                        for _ in 0..n {
                            match item.branch(r)? {
                                Some(Node::Long) => s.extras.equality_ids.push(r.long()? as i32),
                                Some(other) => other.skip(r)?,
                                None => {}
                            }
                        }
                    },
                    Some(other) => other.skip(r)?,
                    None => {}
                },
                Role::Referenced if extras => {
                    s.extras.referenced_data_file = read_str(node, r)?.map(|b| String::from_utf8_lossy(b).into_owned())
                }
                Role::ContentOffset if extras => s.extras.content_offset = read_long(node, r)?,
                Role::ContentSize if extras => s.extras.content_size = read_long(node, r)?,
                Role::FirstRowId => s.first_row_id = read_long(node, r)?,
                _ => node.skip(r)?,
            }
        }
        Some(())
    }
}

/// An `int`/`long` (null or another type: `None`).
#[inline]
fn read_long(node: &Node, r: &mut Reader) -> Option<Option<i64>> {
    match node.branch(r)? {
        Some(Node::Long) => Some(Some(r.long()?)),
        Some(other) => other.skip(r).map(|_| None),
        None => Some(None),
    }
}

/// A `string` or enum symbol (null or another type: `None`).
#[inline]
fn read_str<'a>(node: &'a Node, r: &mut Reader<'a>) -> Option<Option<&'a [u8]>> {
    match node.branch(r)? {
        Some(Node::String) => Some(Some(r.bytes()?)),
        Some(Node::Enum(symbols)) => {
            let i = usize::try_from(r.long()?).ok()?;
            Some(symbols.get(i).map(|s| s.as_bytes()))
        }
        Some(other) => other.skip(r).map(|_| None),
        None => Some(None),
    }
}

/// An Iceberg map with int keys: an array of key/value records (as Java
/// and pyiceberg write it) or an Avro map with numeric string keys.
/// `value` reads (or skips) the value of key `id`.
fn read_int_map<'a>(
    node: &'a Node,
    r: &mut Reader<'a>,
    mut value: impl FnMut(i32, &'a Node, &mut Reader<'a>) -> Option<()>,
) -> Option<()> {
    let Some(node) = node.branch(r)? else {
        return Some(());
    };
    match node {
        Node::Array(item) => {
            let pair = match item.non_null() {
                Node::Record(f) if f.len() == 2 => Some((&f[0].1, &f[1].1)),
                _ => None,
            };
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    let Some((k, v)) = pair else {
                        item.skip(r)?;
                        continue;
                    };
                    if let Node::Union(_) = item.as_ref() {
                        // An optional item: null items hold nothing.
                        if item.branch(r)?.is_none() {
                            continue;
                        }
                    }
                    match k.branch(r)? {
                        Some(Node::Long) => {
                            let id = r.long()? as i32;
                            value(id, v, r)?;
                        }
                        Some(other) => {
                            other.skip(r)?;
                            v.skip(r)?;
                        }
                        None => v.skip(r)?,
                    }
                }
            }
        }
        Node::Map(v) => loop {
            let n = r.block_count()?;
            if n == 0 {
                break;
            }
            for _ in 0..n {
                let key = r.bytes()?;
                match std::str::from_utf8(key).ok().and_then(|k| k.parse::<i32>().ok()) {
                    Some(id) => value(id, v, r)?,
                    None => v.skip(r)?,
                }
            }
        },
        other => other.skip(r)?,
    }
    Some(())
}

/// One partition value as read off the wire.
#[derive(Debug, Clone, Copy)]
enum PartVal<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Bytes(&'a [u8]),
}

fn read_part<'a>(node: &'a Node, r: &mut Reader<'a>) -> Option<PartVal<'a>> {
    Some(match node.branch(r)? {
        None => PartVal::Null,
        Some(Node::Boolean) => PartVal::Bool(r.take(1)?[0] != 0),
        Some(Node::Long) => PartVal::Int(r.long()?),
        Some(Node::Float) => PartVal::Float(f32::from_le_bytes(r.take(4)?.try_into().ok()?) as f64),
        Some(Node::Double) => PartVal::Float(f64::from_le_bytes(r.take(8)?.try_into().ok()?)),
        Some(Node::Bytes | Node::String) => PartVal::Bytes(r.bytes()?),
        Some(Node::Fixed(n)) => PartVal::Bytes(r.take(*n)?),
        Some(Node::Enum(symbols)) => {
            let i = usize::try_from(r.long()?).ok()?;
            PartVal::Bytes(symbols.get(i)?.as_bytes())
        }
        Some(other) => {
            other.skip(r)?;
            PartVal::Null
        }
    })
}

/// One entry as read, before it is kept or dropped.
struct Scratch<'a> {
    status: i32,
    sequence: Option<i64>,
    has_file: bool,
    content: Option<i64>,
    path: Option<&'a [u8]>,
    format: Option<&'a [u8]>,
    record_count: Option<i64>,
    file_size: Option<i64>,
    first_row_id: Option<i64>,
    partition: Vec<PartVal<'a>>,
    null: Vec<Option<i64>>,
    nan: Vec<Option<i64>>,
    lower: Vec<Option<&'a [u8]>>,
    upper: Vec<Option<&'a [u8]>>,
    extras: Extras,
}

impl<'a> Scratch<'a> {
    fn new(plan: &EntryPlan, slots: usize) -> Self {
        Self {
            status: 1,
            sequence: None,
            has_file: false,
            content: None,
            path: None,
            format: None,
            record_count: None,
            file_size: None,
            first_row_id: None,
            partition: vec![PartVal::Null; plan.parts.len()],
            null: vec![None; slots],
            nan: vec![None; slots],
            lower: vec![None; slots],
            upper: vec![None; slots],
            extras: Extras::default(),
        }
    }

    fn reset(&mut self) {
        self.status = 1;
        self.sequence = None;
        self.has_file = false;
        self.content = None;
        self.path = None;
        self.format = None;
        self.record_count = None;
        self.file_size = None;
        self.first_row_id = None;
        self.partition.fill(PartVal::Null);
        self.null.fill(None);
        self.nan.fill(None);
        self.lower.fill(None);
        self.upper.fill(None);
        self.extras = Extras::default();
    }
}

/// A partition column being built, of the type chosen once per manifest.
enum PartBuilder {
    Nulls(usize),
    Bool(BooleanBuilder),
    /// Int32, Date32, Int64, Time64, Timestamp.
    Ints(Vec<Option<i64>>),
    Floats(Vec<Option<f64>>),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Fixed(FixedSizeBinaryBuilder),
    Decimal(Vec<Option<i128>>),
    /// Any other pairing: the Avro value's own scalar, cast.
    Cast(Vec<ScalarValue>),
}

impl PartBuilder {
    fn of(f: &PartField) -> Self {
        use DataType as D;
        match (&f.target, &f.wire) {
            (D::Null, _) => PartBuilder::Nulls(0),
            (D::Boolean, Wire::Bool) => PartBuilder::Bool(BooleanBuilder::new()),
            (
                D::Int32
                | D::Date32
                | D::Int64
                | D::Time64(TimeUnit::Microsecond | TimeUnit::Nanosecond)
                | D::Timestamp(_, _),
                Wire::Int,
            ) => PartBuilder::Ints(Vec::new()),
            (D::Float32 | D::Float64, Wire::Float | Wire::Double) => PartBuilder::Floats(Vec::new()),
            (D::Utf8, Wire::Str) => PartBuilder::Utf8(StringBuilder::new()),
            (D::Decimal128(_, _), Wire::Bytes | Wire::Decimal) => PartBuilder::Decimal(Vec::new()),
            (D::FixedSizeBinary(n), Wire::Bytes) | (D::FixedSizeBinary(n @ 16), Wire::Uuid | Wire::UuidStr) => {
                PartBuilder::Fixed(FixedSizeBinaryBuilder::new(*n))
            }
            (D::Binary, Wire::Bytes) => PartBuilder::Binary(BinaryBuilder::new()),
            _ => PartBuilder::Cast(Vec::new()),
        }
    }

    /// Append `v` of field `f`; `None` when it is not a value of the column's type.
    fn push(&mut self, v: PartVal, f: &PartField) -> Option<()> {
        let null = matches!(v, PartVal::Null);
        match self {
            PartBuilder::Nulls(n) => *n += 1,
            PartBuilder::Bool(b) => match v {
                PartVal::Bool(x) => b.append_value(x),
                _ if null => b.append_null(),
                _ => return None,
            },
            PartBuilder::Ints(b) => match v {
                PartVal::Int(x) => {
                    if matches!(f.target, DataType::Int32 | DataType::Date32) {
                        i32::try_from(x).ok()?;
                    }
                    b.push(Some(x))
                }
                _ if null => b.push(None),
                _ => return None,
            },
            PartBuilder::Floats(b) => match v {
                PartVal::Float(x) => b.push(Some(x)),
                _ if null => b.push(None),
                _ => return None,
            },
            PartBuilder::Utf8(b) => match v {
                PartVal::Bytes(x) => b.append_value(std::str::from_utf8(x).ok()?),
                _ if null => b.append_null(),
                _ => return None,
            },
            PartBuilder::Binary(b) => match v {
                PartVal::Bytes(x) => b.append_value(x),
                _ if null => b.append_null(),
                _ => return None,
            },
            PartBuilder::Fixed(b) => match v {
                PartVal::Bytes(x) if matches!(f.wire, Wire::UuidStr) => {
                    let u = uuid::Uuid::parse_str(std::str::from_utf8(x).ok()?).ok()?;
                    b.append_value(u.as_bytes()).ok()?
                }
                PartVal::Bytes(x) => b.append_value(x).ok()?,
                _ if null => b.append_null(),
                _ => return None,
            },
            PartBuilder::Decimal(b) => match v {
                PartVal::Bytes(x) => b.push(Some(be_i128(x)?)),
                _ if null => b.push(None),
                _ => return None,
            },
            PartBuilder::Cast(b) => {
                let natural = natural_scalar(v, f)?;
                let value = if natural.is_null() {
                    ScalarValue::try_from(&f.target).ok()?
                } else {
                    natural.cast_to(&f.target).ok()?
                };
                b.push(value)
            }
        }
        Some(())
    }

    fn finish(self, dt: &DataType) -> Result<ArrayRef> {
        Ok(match self {
            PartBuilder::Nulls(n) => Arc::new(NullArray::new(n)),
            PartBuilder::Bool(mut b) => Arc::new(b.finish()),
            PartBuilder::Ints(v) => ints_array(v, dt),
            PartBuilder::Floats(v) => match dt {
                DataType::Float32 => Arc::new(v.into_iter().map(|x| x.map(|x| x as f32)).collect::<Float32Array>()),
                _ => Arc::new(v.into_iter().collect::<Float64Array>()),
            },
            PartBuilder::Utf8(mut b) => Arc::new(b.finish()),
            PartBuilder::Binary(mut b) => Arc::new(b.finish()),
            PartBuilder::Fixed(mut b) => Arc::new(b.finish()),
            PartBuilder::Decimal(v) => {
                let DataType::Decimal128(p, s) = dt else {
                    unreachable!("decimal builders are made for decimal columns")
                };
                Arc::new(
                    v.into_iter()
                        .collect::<Decimal128Array>()
                        .with_precision_and_scale(*p, *s)?,
                )
            }
            PartBuilder::Cast(v) => {
                if v.is_empty() {
                    datafusion::arrow::array::new_empty_array(dt)
                } else {
                    ScalarValue::iter_to_array(v)?
                }
            }
        })
    }
}

/// A column of integers of type `dt` (chosen once for the column).
fn ints_array(v: Vec<Option<i64>>, dt: &DataType) -> ArrayRef {
    fn narrow<T: datafusion::arrow::datatypes::ArrowPrimitiveType<Native = i32>>(
        v: Vec<Option<i64>>,
    ) -> PrimitiveArray<T> {
        v.into_iter().map(|x| x.map(|x| x as i32)).collect()
    }
    fn wide<T: datafusion::arrow::datatypes::ArrowPrimitiveType<Native = i64>>(
        v: Vec<Option<i64>>,
    ) -> PrimitiveArray<T> {
        v.into_iter().collect()
    }
    match dt {
        DataType::Int32 => Arc::new(narrow::<Int32Type>(v)),
        DataType::Date32 => Arc::new(narrow::<Date32Type>(v)),
        DataType::Time64(TimeUnit::Microsecond) => Arc::new(wide::<Time64MicrosecondType>(v)),
        DataType::Time64(_) => Arc::new(wide::<Time64NanosecondType>(v)),
        DataType::Timestamp(unit, tz) => match unit {
            TimeUnit::Second => Arc::new(wide::<TimestampSecondType>(v).with_timezone_opt(tz.clone())),
            TimeUnit::Millisecond => Arc::new(wide::<TimestampMillisecondType>(v).with_timezone_opt(tz.clone())),
            TimeUnit::Microsecond => Arc::new(wide::<TimestampMicrosecondType>(v).with_timezone_opt(tz.clone())),
            TimeUnit::Nanosecond => Arc::new(wide::<TimestampNanosecondType>(v).with_timezone_opt(tz.clone())),
        },
        _ => Arc::new(wide::<Int64Type>(v)),
    }
}

/// The scalar an Avro value is of its own type (`f.natural`).
fn natural_scalar(v: PartVal, f: &PartField) -> Option<ScalarValue> {
    if matches!(v, PartVal::Null) {
        return Some(ScalarValue::Null);
    }
    Some(match (v, &f.wire) {
        (PartVal::Bool(b), _) => ScalarValue::Boolean(Some(b)),
        (PartVal::Float(x), Wire::Float) => ScalarValue::Float32(Some(x as f32)),
        (PartVal::Float(x), _) => ScalarValue::Float64(Some(x)),
        (PartVal::Bytes(b), Wire::Str) => ScalarValue::Utf8(Some(std::str::from_utf8(b).ok()?.to_string())),
        (PartVal::Bytes(b), Wire::Decimal) => match &f.target {
            DataType::Decimal128(p, s) => ScalarValue::Decimal128(Some(be_i128(b)?), *p, *s),
            _ => ScalarValue::Null,
        },
        (PartVal::Bytes(b), Wire::UuidStr) => ScalarValue::FixedSizeBinary(
            16,
            Some(
                uuid::Uuid::parse_str(std::str::from_utf8(b).ok()?)
                    .ok()?
                    .as_bytes()
                    .to_vec(),
            ),
        ),
        (PartVal::Bytes(b), Wire::Uuid) => ScalarValue::FixedSizeBinary(16, Some(b.to_vec())),
        (PartVal::Bytes(b), _) => ScalarValue::Binary(Some(b.to_vec())),
        (PartVal::Int(x), _) => match &f.natural {
            DataType::Int32 => ScalarValue::Int32(Some(i32::try_from(x).ok()?)),
            DataType::Date32 => ScalarValue::Date32(Some(i32::try_from(x).ok()?)),
            DataType::Time64(_) => ScalarValue::Time64Microsecond(Some(x)),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => ScalarValue::TimestampNanosecond(Some(x), None),
            DataType::Timestamp(_, _) => ScalarValue::TimestampMicrosecond(Some(x), None),
            _ => ScalarValue::Int64(Some(x)),
        },
        (PartVal::Null, _) => ScalarValue::Null,
    })
}

/// The columns being built.
struct Builders {
    rows: usize,
    content: Vec<Content>,
    file_path: StringBuilder,
    file_format: StringBuilder,
    record_count: Vec<i64>,
    file_size: Vec<i64>,
    sequence_number: Vec<i64>,
    first_row_id: Vec<Option<i64>>,
    partition: Vec<PartBuilder>,
    null: Vec<Int64Builder>,
    nan: Vec<Int64Builder>,
    lower: Vec<BinaryBuilder>,
    upper: Vec<BinaryBuilder>,
    extras: Option<Vec<Extras>>,
}

fn text<'a>(bytes: &'a [u8], what: &str, field: &str) -> Result<&'a str> {
    std::str::from_utf8(bytes)
        .map_err(|_| Error::Format(format!("{what} is not a readable Avro file: a {field} is not UTF-8")))
}

impl Builders {
    fn new(plan: &EntryPlan, wanted: &Wanted) -> Self {
        let n = wanted.stats.len();
        Self {
            rows: 0,
            content: Vec::new(),
            file_path: StringBuilder::new(),
            file_format: StringBuilder::new(),
            record_count: Vec::new(),
            file_size: Vec::new(),
            sequence_number: Vec::new(),
            first_row_id: Vec::new(),
            partition: plan.parts.iter().map(PartBuilder::of).collect(),
            null: (0..n).map(|_| Int64Builder::new()).collect(),
            nan: (0..n).map(|_| Int64Builder::new()).collect(),
            lower: (0..n).map(|_| BinaryBuilder::new()).collect(),
            upper: (0..n).map(|_| BinaryBuilder::new()).collect(),
            extras: wanted.extras.then(Vec::new),
        }
    }

    fn push(&mut self, s: &Scratch, plan: &EntryPlan, inherited: i64, what: &str) -> Result<()> {
        if !s.has_file {
            return crate::format_err!("{what}: a manifest entry has no data_file (field 2)");
        }
        let Some(path) = s.path else {
            return crate::format_err!("{what}: a manifest entry has no file_path (field 100)");
        };
        let path = text(path, what, "file_path")?;
        let content = match s.content.unwrap_or(0) {
            0 => Content::Data,
            1 => Content::PositionDeletes,
            2 => Content::EqualityDeletes,
            other => return crate::format_err!("{what}: unknown content {other} for {path}"),
        };
        for ((b, v), f) in self.partition.iter_mut().zip(&s.partition).zip(&plan.parts) {
            if b.push(*v, f).is_none() {
                return Err(Error::Format(format!(
                    "{what}: partition value {} of field {:?} in {path} is not a {}",
                    show(*v),
                    f.name,
                    f.target
                )));
            }
        }
        self.rows += 1;
        self.content.push(content);
        self.file_path.append_value(path);
        match s.format {
            Some(f) => self.file_format.append_value(text(f, what, "file_format")?),
            None => self.file_format.append_value("PARQUET"),
        }
        self.record_count.push(s.record_count.unwrap_or(0));
        self.file_size.push(s.file_size.unwrap_or(0));
        // ADDED entries of the committing snapshot leave it out: inherit.
        self.sequence_number
            .push(s.sequence.unwrap_or(if s.status == 1 { inherited } else { 0 }));
        self.first_row_id.push(s.first_row_id);
        for i in 0..self.null.len() {
            self.null[i].append_option(s.null[i]);
            self.nan[i].append_option(s.nan[i]);
            self.lower[i].append_option(s.lower[i]);
            self.upper[i].append_option(s.upper[i]);
        }
        if let Some(extras) = &mut self.extras {
            extras.push(s.extras.clone());
        }
        Ok(())
    }

    fn finish(self, plan: &EntryPlan) -> Result<Columns> {
        let partition = self
            .partition
            .into_iter()
            .zip(&plan.parts)
            .map(|(b, f)| b.finish(&f.target))
            .collect::<Result<_>>()?;
        let stats = self
            .null
            .into_iter()
            .zip(self.nan)
            .zip(self.lower.into_iter().zip(self.upper))
            .map(|((mut null, mut nan), (mut lower, mut upper))| SlotColumns {
                null_count: null.finish(),
                nan_count: nan.finish(),
                lower: lower.finish(),
                upper: upper.finish(),
            })
            .collect();
        let (mut file_path, mut file_format) = (self.file_path, self.file_format);
        Ok(Columns {
            rows: self.rows,
            content: self.content,
            file_path: file_path.finish(),
            file_format: file_format.finish(),
            record_count: self.record_count,
            file_size: self.file_size,
            sequence_number: self.sequence_number,
            first_row_id: self.first_row_id,
            partition,
            stats,
            extras: self.extras.unwrap_or_default(),
        })
    }
}

/// A partition value for an error message.
fn show(v: PartVal) -> String {
    match v {
        PartVal::Null => "null".into(),
        PartVal::Bool(b) => b.to_string(),
        PartVal::Int(i) => i.to_string(),
        PartVal::Float(f) => f.to_string(),
        PartVal::Bytes(b) => format!("{:?}", String::from_utf8_lossy(b)),
    }
}

/// A live (not DELETED) manifest entry, with everything delete files need.
#[derive(Debug, Clone)]
pub struct Entry {
    pub content: Content,
    /// As written in the manifest (position deletes name files this way).
    pub file_path: String,
    pub file_format: String,
    /// Per Iceberg partition field: typed by our result type when the field
    /// is kept, by its Avro type otherwise (still compared for delete scope).
    pub partition: Vec<ScalarValue>,
    pub record_count: i64,
    pub file_size: i64,
    pub null_counts: HashMap<i32, i64>,
    pub nan_counts: HashMap<i32, i64>,
    pub lower: HashMap<i32, Vec<u8>>,
    pub upper: HashMap<i32, Vec<u8>>,
    pub equality_ids: Vec<i32>,
    /// The data sequence number (inherited when not written).
    pub sequence_number: i64,
    pub referenced_data_file: Option<String>,
    /// Set for v3 deletion vectors (a blob inside a Puffin file): where
    /// the blob starts and how long it is.
    pub content_offset: Option<i64>,
    pub content_size: Option<i64>,
}

/// Row `row` of each column, as scalars.
pub fn row_scalars(columns: &[ArrayRef], row: usize) -> Result<Vec<ScalarValue>> {
    Ok(columns
        .iter()
        .map(|c| ScalarValue::try_from_array(c, row))
        .collect::<datafusion::common::Result<_>>()?)
}

/// Decode a manifest's live entries; `what` names the file for errors.
pub fn read_entries(bytes: &[u8], what: &str, listed: &ManifestEntryFile, spec: &SpecMapping) -> Result<Vec<Entry>> {
    let wanted = Wanted {
        stats: Vec::new(),
        extras: true,
    };
    let c = decode(bytes, what, listed.sequence_number, spec, &wanted)?;
    let mut out = Vec::with_capacity(c.rows);
    for (row, extras) in c.extras.into_iter().enumerate() {
        out.push(Entry {
            content: c.content[row],
            file_path: c.file_path.value(row).to_string(),
            file_format: c.file_format.value(row).to_string(),
            partition: row_scalars(&c.partition, row)?,
            record_count: c.record_count[row],
            file_size: c.file_size[row],
            null_counts: extras.null_counts,
            nan_counts: extras.nan_counts,
            lower: extras.lower,
            upper: extras.upper,
            equality_ids: extras.equality_ids,
            sequence_number: c.sequence_number[row],
            referenced_data_file: extras.referenced_data_file,
            content_offset: extras.content_offset,
            content_size: extras.content_size,
        });
    }
    Ok(out)
}
