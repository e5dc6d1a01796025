//! Avro object container files read without a `Value` tree.
//!
//! `apache-avro`'s reader builds a `Value` per field of every record (a
//! `String` per name, a `Vec` per record); a manifest reader needs a few
//! fields typed and skips the rest. So the container is read here, and a
//! record is walked by a [`Node`] tree compiled once from the writer schema:
//!
//! ```text
//! "Obj" 0x01 | metadata map<bytes> (avro.schema, avro.codec, …) | 16-byte sync
//! block*: count (long) | size (long) | `size` bytes (codec-compressed) | sync
//! ```
//!
//! Codecs are whatever the `apache-avro` build decompresses (null, deflate
//! — Java's default and pyiceberg's —, snappy, zstandard); any other is an
//! error that names it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::str::FromStr;

use apache_avro::{Codec, Schema};

use crate::error::{Error, Result};

/// A cursor over Avro binary data; `what` names the file for errors.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

/// The error for data that ends or breaks mid-value.
fn corrupt(what: &str, detail: &str) -> Error {
    Error::Format(format!("{what} is not a readable Avro file: {detail}"))
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// A zigzag varint (`int` and `long` share the encoding).
    #[inline]
    pub fn long(&mut self) -> Option<i64> {
        let mut value: u64 = 0;
        let mut shift = 0;
        loop {
            let byte = *self.data.get(self.pos)?;
            self.pos += 1;
            value |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Some((value >> 1) as i64 ^ -((value & 1) as i64));
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    #[inline]
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// `bytes` or `string`: a length, then the bytes.
    #[inline]
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.long()?).ok()?;
        self.take(n)
    }

    /// The item count of the next array or map block (0 ends it); a
    /// negative count is followed by the block's size in bytes.
    #[inline]
    pub fn block_count(&mut self) -> Option<usize> {
        let n = self.long()?;
        if n < 0 {
            self.long()?;
        }
        usize::try_from(n.unsigned_abs()).ok()
    }
}

/// How one value is laid out: enough to read or skip it.
#[derive(Debug, Clone)]
pub enum Node {
    Null,
    Boolean,
    /// `int` and `long`, with any logical type.
    Long,
    Float,
    Double,
    /// `bytes` (decimals, uuids as bytes too).
    Bytes,
    /// `string` (and uuids as strings).
    String,
    Fixed(usize),
    Enum(Vec<String>),
    Array(Box<Node>),
    Map(Box<Node>),
    Union(Vec<Node>),
    /// Fields in writer order, with their `field-id` when they have one.
    Record(Vec<(Option<i32>, Node)>),
}

impl Node {
    /// The node for `schema`; `names` resolves references to named types.
    pub fn of(schema: &Schema, names: &mut HashMap<String, Node>) -> Result<Node> {
        Ok(match schema {
            Schema::Null => Node::Null,
            Schema::Boolean => Node::Boolean,
            Schema::Int
            | Schema::Long
            | Schema::Date
            | Schema::TimeMillis
            | Schema::TimeMicros
            | Schema::TimestampMillis
            | Schema::TimestampMicros
            | Schema::TimestampNanos
            | Schema::LocalTimestampMillis
            | Schema::LocalTimestampMicros
            | Schema::LocalTimestampNanos => Node::Long,
            Schema::Float => Node::Float,
            Schema::Double => Node::Double,
            Schema::Bytes | Schema::BigDecimal | Schema::Uuid(apache_avro::schema::UuidSchema::Bytes) => Node::Bytes,
            Schema::String | Schema::Uuid(apache_avro::schema::UuidSchema::String) => Node::String,
            Schema::Uuid(apache_avro::schema::UuidSchema::Fixed(f)) | Schema::Fixed(f) | Schema::Duration(f) => {
                let node = Node::Fixed(f.size);
                names.insert(f.name.fullname(None), node.clone());
                node
            }
            Schema::Decimal(d) => match &d.inner {
                apache_avro::schema::InnerDecimalSchema::Bytes => Node::Bytes,
                apache_avro::schema::InnerDecimalSchema::Fixed(f) => {
                    let node = Node::Fixed(f.size);
                    names.insert(f.name.fullname(None), node.clone());
                    node
                }
            },
            Schema::Enum(e) => {
                let node = Node::Enum(e.symbols.clone());
                names.insert(e.name.fullname(None), node.clone());
                node
            }
            Schema::Array(a) => Node::Array(Box::new(Node::of(&a.items, names)?)),
            Schema::Map(m) => Node::Map(Box::new(Node::of(&m.types, names)?)),
            Schema::Union(u) => Node::Union(u.variants().iter().map(|s| Node::of(s, names)).collect::<Result<_>>()?),
            Schema::Record(r) => {
                let mut fields = Vec::with_capacity(r.fields.len());
                for f in &r.fields {
                    fields.push((field_id(&f.custom_attributes), Node::of(&f.schema, names)?));
                }
                let node = Node::Record(fields);
                names.insert(r.name.fullname(None), node.clone());
                node
            }
            Schema::Ref { name } => names
                .get(&name.fullname(None))
                .cloned()
                .ok_or_else(|| Error::Format(format!("Avro schema refers to unknown type {}", name.fullname(None))))?,
        })
    }

    /// Skip one value of this node.
    pub fn skip(&self, r: &mut Reader) -> Option<()> {
        match self {
            Node::Null => {}
            Node::Boolean => {
                r.take(1)?;
            }
            Node::Long | Node::Enum(_) => {
                r.long()?;
            }
            Node::Float => {
                r.take(4)?;
            }
            Node::Double => {
                r.take(8)?;
            }
            Node::Bytes | Node::String => {
                r.bytes()?;
            }
            Node::Fixed(n) => {
                r.take(*n)?;
            }
            Node::Array(items) | Node::Map(items) => {
                let is_map = matches!(self, Node::Map(_));
                loop {
                    let n = r.long()?;
                    if n == 0 {
                        break;
                    }
                    if n < 0 {
                        // The block's size in bytes: skipped at once.
                        let size = usize::try_from(r.long()?).ok()?;
                        r.take(size)?;
                        continue;
                    }
                    for _ in 0..n {
                        if is_map {
                            r.bytes()?;
                        }
                        items.skip(r)?;
                    }
                }
            }
            Node::Union(branches) => {
                let i = usize::try_from(r.long()?).ok()?;
                branches.get(i)?.skip(r)?;
            }
            Node::Record(fields) => {
                for (_, f) in fields {
                    f.skip(r)?;
                }
            }
        }
        Some(())
    }

    /// The branch a union value takes (the node itself when not a union);
    /// `None` inside when that branch is null.
    #[inline]
    pub fn branch<'n>(&'n self, r: &mut Reader) -> Option<Option<&'n Node>> {
        match self {
            Node::Union(branches) => {
                let i = usize::try_from(r.long()?).ok()?;
                let b = branches.get(i)?;
                Some(b.branch(r)?.filter(|b| !matches!(b, Node::Null)))
            }
            Node::Null => Some(None),
            other => Some(Some(other)),
        }
    }

    /// The non-null branch of an optional field's node.
    pub fn non_null(&self) -> &Node {
        match self {
            Node::Union(branches) => branches
                .iter()
                .find(|b| !matches!(b, Node::Null))
                .map_or(self, Node::non_null),
            other => other,
        }
    }
}

/// The `field-id` attribute of a record field (a number or a numeric string).
pub fn field_id(attributes: &std::collections::BTreeMap<String, serde_json::Value>) -> Option<i32> {
    let v = attributes.get("field-id")?;
    let id = v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))?;
    i32::try_from(id).ok()
}

/// An Avro container file: its writer schema, metadata and (decompressed) blocks.
pub struct Container<'a> {
    pub schema: Schema,
    pub metadata: HashMap<String, Vec<u8>>,
    /// Each block's record count and its records' bytes.
    pub blocks: Vec<(usize, Cow<'a, [u8]>)>,
}

impl<'a> Container<'a> {
    /// Read the header and every block of `bytes`; `what` names the file for errors.
    pub fn read(bytes: &'a [u8], what: &str) -> Result<Self> {
        let bad = |detail: &str| corrupt(what, detail);
        let mut r = Reader::new(bytes);
        if r.take(4) != Some(b"Obj\x01".as_slice()) {
            return Err(bad("it does not start with the Avro magic bytes"));
        }
        let mut metadata = HashMap::new();
        loop {
            let n = r.block_count().ok_or_else(|| bad("truncated header"))?;
            if n == 0 {
                break;
            }
            for _ in 0..n {
                let key = r.bytes().ok_or_else(|| bad("truncated header"))?;
                let value = r.bytes().ok_or_else(|| bad("truncated header"))?;
                metadata.insert(String::from_utf8_lossy(key).into_owned(), value.to_vec());
            }
        }
        let sync = r.take(16).ok_or_else(|| bad("truncated header"))?;
        let schema_json = metadata
            .get("avro.schema")
            .ok_or_else(|| bad("its header has no avro.schema"))?;
        let schema_text = std::str::from_utf8(schema_json).map_err(|_| bad("its schema is not UTF-8"))?;
        let schema = Schema::parse_str(schema_text).map_err(|e| bad(&format!("its schema cannot be parsed: {e}")))?;
        let codec_name = metadata
            .get("avro.codec")
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .unwrap_or_else(|| "null".to_string());
        let codec = match Codec::from_str(&codec_name) {
            Ok(c) => c,
            Err(_) => {
                return Err(Error::Format(format!(
                    "{what} is compressed with Avro codec {codec_name:?}, which this build cannot read (null, deflate, snappy and zstandard can be read)"
                )));
            }
        };
        let mut blocks = Vec::new();
        while !r.at_end() {
            let count = r.long().and_then(|n| usize::try_from(n).ok());
            let size = r.long().and_then(|n| usize::try_from(n).ok());
            let (Some(count), Some(size)) = (count, size) else {
                return Err(bad("truncated block header"));
            };
            let data = r.take(size).ok_or_else(|| bad("truncated block"))?;
            if r.take(16) != Some(sync) {
                return Err(bad("a block does not end with the file's sync marker"));
            }
            let data = match codec {
                Codec::Null => Cow::Borrowed(data),
                other => {
                    let mut buf = data.to_vec();
                    other
                        .decompress(&mut buf)
                        .map_err(|e| bad(&format!("a {codec_name} block cannot be decompressed: {e}")))?;
                    Cow::Owned(buf)
                }
            };
            blocks.push((count, data));
        }
        Ok(Self {
            schema,
            metadata,
            blocks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_varints() {
        let cases: [(&[u8], i64); 6] = [
            (&[0], 0),
            (&[1], -1),
            (&[2], 1),
            (&[0x7F], -64),
            (&[0x80, 0x01], 64),
            (&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], i64::MIN),
        ];
        for (bytes, v) in cases {
            assert_eq!(Reader::new(bytes).long(), Some(v), "{bytes:?}");
        }
        assert_eq!(Reader::new(&[0x80]).long(), None);
    }

    /// A container header with schema `int` and `codec`, sync marker 7s.
    fn header(codec: &str) -> Vec<u8> {
        let mut h = b"Obj\x01".to_vec();
        h.push(4); // 2 entries
        for (k, v) in [("avro.schema", "\"int\""), ("avro.codec", codec)] {
            h.push((k.len() * 2) as u8);
            h.extend(k.as_bytes());
            h.push((v.len() * 2) as u8);
            h.extend(v.as_bytes());
        }
        h.push(0);
        h.extend([7u8; 16]);
        h
    }

    #[test]
    fn bad_containers_are_clear_errors() {
        let err = |b: &[u8]| Container::read(b, "m.avro").err().unwrap().to_string();
        assert!(err(b"PAR1").contains("m.avro is not a readable Avro file"));
        assert!(err(b"Obj\x01\x02").contains("truncated header"));
        let e = err(&header("lzo"));
        assert!(e.contains("codec \"lzo\""), "{e}");
        // One block of two ints (1, 2), then the sync marker.
        let mut good = header("null");
        good.extend([4, 4, 2, 4]);
        good.extend([7u8; 16]);
        let c = Container::read(&good, "m.avro").unwrap();
        assert_eq!(c.blocks.len(), 1);
        assert_eq!((c.blocks[0].0, c.blocks[0].1.as_ref()), (2, [2u8, 4].as_slice()));
        let mut bad_sync = good.clone();
        *bad_sync.last_mut().unwrap() = 8;
        assert!(err(&bad_sync).contains("sync marker"));
        assert!(err(&good[..good.len() - 3]).contains("readable"));
    }
}
