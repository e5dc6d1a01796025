//! Reading variant values: a bounds-checked decoder that never panics.
//!
//! The first byte of every value is a header: the low 2 bits are the basic
//! type, the upper 6 bits a type-specific header.
//!
//! | basic type | upper 6 bits                                   | body                          |
//! |------------|------------------------------------------------|-------------------------------|
//! | 0 primitive| type id 0..=20                                  | fixed size or 4-byte length   |
//! | 1 short str| length 0..=63                                   | UTF-8 bytes                   |
//! | 2 object   | offset size-1 (2b), id size-1 (2b), large (1b) | n, field ids, offsets, values |
//! | 3 array    | offset size-1 (2b), large (1b)                 | n, offsets, values            |
//!
//! Example: `{"a":1}` with key `a` = id 0 is `02 01 00 00 02 0c 01`.
//!
//! Every read goes through checked slicing; malformed input yields
//! [`VariantError::Malformed`]. Object fields are looked up by binary search
//! over the key-sorted field list (linear scan for small objects, which also
//! tolerates writers that did not sort).

use super::metadata::{VariantMetadata, read_uint};
use super::{Result, VariantError};

/// Primitive type ids of the spec.
pub mod type_id {
    pub const NULL: u8 = 0;
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const INT8: u8 = 3;
    pub const INT16: u8 = 4;
    pub const INT32: u8 = 5;
    pub const INT64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const DECIMAL4: u8 = 8;
    pub const DECIMAL8: u8 = 9;
    pub const DECIMAL16: u8 = 10;
    pub const DATE: u8 = 11;
    pub const TIMESTAMP: u8 = 12;
    pub const TIMESTAMP_NTZ: u8 = 13;
    pub const FLOAT: u8 = 14;
    pub const BINARY: u8 = 15;
    pub const STRING: u8 = 16;
    pub const TIME_NTZ: u8 = 17;
    pub const TIMESTAMP_NANOS: u8 = 18;
    pub const TIMESTAMP_NTZ_NANOS: u8 = 19;
    pub const UUID: u8 = 20;
}

/// Basic types (low two bits of the header).
pub mod basic_type {
    pub const PRIMITIVE: u8 = 0;
    pub const SHORT_STRING: u8 = 1;
    pub const OBJECT: u8 = 2;
    pub const ARRAY: u8 = 3;
}

/// Largest decimal scale / precision allowed by the spec.
pub const MAX_DECIMAL_PRECISION: u8 = 38;

/// A decoded value. Containers stay lazy: [`VariantObject`] and
/// [`VariantArray`] decode their children on access.
#[derive(Debug, Clone, Copy)]
pub enum VariantValue<'a> {
    Null,
    Boolean(bool),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Double(f64),
    /// Decimal4/8/16: `unscaled × 10^-scale`.
    Decimal {
        unscaled: i128,
        scale: u8,
    },
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since the epoch, UTC.
    Timestamp(i64),
    /// Microseconds since the epoch, no time zone.
    TimestampNtz(i64),
    Float(f32),
    Binary(&'a [u8]),
    String(&'a str),
    /// Microseconds since midnight.
    TimeNtz(i64),
    /// Nanoseconds since the epoch, UTC.
    TimestampNanos(i64),
    /// Nanoseconds since the epoch, no time zone.
    TimestampNtzNanos(i64),
    /// 16 bytes, big-endian.
    Uuid([u8; 16]),
    Object(VariantObject<'a>),
    Array(VariantArray<'a>),
}

/// One variant: metadata plus the value bytes (which may extend past the end
/// of the value; trailing bytes are ignored).
#[derive(Debug, Clone, Copy)]
pub struct Variant<'a> {
    metadata: VariantMetadata<'a>,
    value: &'a [u8],
}

#[inline(always)]
fn fixed<const N: usize>(bytes: &[u8], pos: usize) -> Result<[u8; N]> {
    bytes
        .get(pos..pos.saturating_add(N))
        .and_then(|s| <[u8; N]>::try_from(s).ok())
        .ok_or_else(|| {
            VariantError::malformed(format!(
                "truncated value: need {N} bytes at {pos}, have {}",
                bytes.len()
            ))
        })
}

fn utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|_| VariantError::malformed("string is not valid UTF-8"))
}

/// Slice of `len` bytes at `pos` prefixed by a 4-byte length (binary, string).
fn long_bytes(bytes: &[u8]) -> Result<&[u8]> {
    let len = u32::from_le_bytes(fixed::<4>(bytes, 1)?) as usize;
    bytes.get(5..5usize.saturating_add(len)).ok_or_else(|| {
        VariantError::malformed(format!(
            "truncated value: {len} bytes announced, {} present",
            bytes.len()
        ))
    })
}

fn decimal_scale(bytes: &[u8]) -> Result<u8> {
    let scale = fixed::<1>(bytes, 1)?[0];
    if scale > MAX_DECIMAL_PRECISION {
        return Err(VariantError::malformed(format!("decimal scale {scale} exceeds 38")));
    }
    Ok(scale)
}

/// Size in bytes of the value starting at `bytes[0]`, checked against `bytes`.
pub fn value_size(bytes: &[u8]) -> Result<usize> {
    let header = *bytes.first().ok_or_else(|| VariantError::malformed("empty value"))?;
    let size = match header & 0x03 {
        basic_type::PRIMITIVE => match header >> 2 {
            type_id::NULL | type_id::TRUE | type_id::FALSE => 1,
            type_id::INT8 => 2,
            type_id::INT16 => 3,
            type_id::INT32 | type_id::DATE | type_id::FLOAT => 5,
            type_id::INT64
            | type_id::DOUBLE
            | type_id::TIMESTAMP
            | type_id::TIMESTAMP_NTZ
            | type_id::TIME_NTZ
            | type_id::TIMESTAMP_NANOS
            | type_id::TIMESTAMP_NTZ_NANOS => 9,
            type_id::DECIMAL4 => 6,
            type_id::DECIMAL8 => 10,
            type_id::DECIMAL16 => 18,
            type_id::BINARY | type_id::STRING => 5 + long_bytes(bytes)?.len(),
            type_id::UUID => 17,
            other => return Err(VariantError::malformed(format!("unknown primitive type id {other}"))),
        },
        basic_type::SHORT_STRING => 1 + (header >> 2) as usize,
        basic_type::OBJECT => {
            let h = ContainerHeader::object(bytes)?;
            h.data_start + h.data_len
        }
        _ => {
            let h = ContainerHeader::array(bytes)?;
            h.data_start + h.data_len
        }
    };
    if size > bytes.len() {
        return Err(VariantError::malformed(format!(
            "value of {size} bytes truncated to {}",
            bytes.len()
        )));
    }
    Ok(size)
}

impl<'a> Variant<'a> {
    /// Checks the metadata header and that `value` is not empty. Values are
    /// checked lazily as they are read.
    pub fn try_new(metadata: &'a [u8], value: &'a [u8]) -> Result<Self> {
        let metadata = VariantMetadata::try_new(metadata)?;
        Self::with_metadata(metadata, value)
    }

    /// A value sharing an already validated metadata.
    pub fn with_metadata(metadata: VariantMetadata<'a>, value: &'a [u8]) -> Result<Self> {
        if value.is_empty() {
            return Err(VariantError::malformed("empty value"));
        }
        Ok(Self { metadata, value })
    }

    /// The metadata.
    pub fn metadata(&self) -> VariantMetadata<'a> {
        self.metadata
    }

    /// The value bytes (possibly followed by unrelated bytes).
    pub fn value_bytes(&self) -> &'a [u8] {
        self.value
    }

    /// The value bytes trimmed to this value's exact size.
    pub fn exact_value_bytes(&self) -> Result<&'a [u8]> {
        let size = value_size(self.value)?;
        Ok(&self.value[..size])
    }

    /// Basic type (low 2 bits of the header).
    #[inline]
    pub fn basic_type(&self) -> u8 {
        self.value[0] & 0x03
    }

    /// True for the variant null (not SQL NULL).
    #[inline]
    pub fn is_null(&self) -> bool {
        self.value[0] == 0
    }

    /// Decodes the top of this value.
    pub fn decode(&self) -> Result<VariantValue<'a>> {
        let b = self.value;
        let header = b[0];
        let v = match header & 0x03 {
            basic_type::PRIMITIVE => match header >> 2 {
                type_id::NULL => VariantValue::Null,
                type_id::TRUE => VariantValue::Boolean(true),
                type_id::FALSE => VariantValue::Boolean(false),
                type_id::INT8 => VariantValue::Int8(i8::from_le_bytes(fixed(b, 1)?)),
                type_id::INT16 => VariantValue::Int16(i16::from_le_bytes(fixed(b, 1)?)),
                type_id::INT32 => VariantValue::Int32(i32::from_le_bytes(fixed(b, 1)?)),
                type_id::INT64 => VariantValue::Int64(i64::from_le_bytes(fixed(b, 1)?)),
                type_id::DOUBLE => VariantValue::Double(f64::from_le_bytes(fixed(b, 1)?)),
                type_id::DECIMAL4 => VariantValue::Decimal {
                    scale: decimal_scale(b)?,
                    unscaled: i32::from_le_bytes(fixed(b, 2)?) as i128,
                },
                type_id::DECIMAL8 => VariantValue::Decimal {
                    scale: decimal_scale(b)?,
                    unscaled: i64::from_le_bytes(fixed(b, 2)?) as i128,
                },
                type_id::DECIMAL16 => VariantValue::Decimal {
                    scale: decimal_scale(b)?,
                    unscaled: i128::from_le_bytes(fixed(b, 2)?),
                },
                type_id::DATE => VariantValue::Date(i32::from_le_bytes(fixed(b, 1)?)),
                type_id::TIMESTAMP => VariantValue::Timestamp(i64::from_le_bytes(fixed(b, 1)?)),
                type_id::TIMESTAMP_NTZ => VariantValue::TimestampNtz(i64::from_le_bytes(fixed(b, 1)?)),
                type_id::FLOAT => VariantValue::Float(f32::from_le_bytes(fixed(b, 1)?)),
                type_id::BINARY => VariantValue::Binary(long_bytes(b)?),
                type_id::STRING => VariantValue::String(utf8(long_bytes(b)?)?),
                type_id::TIME_NTZ => VariantValue::TimeNtz(i64::from_le_bytes(fixed(b, 1)?)),
                type_id::TIMESTAMP_NANOS => VariantValue::TimestampNanos(i64::from_le_bytes(fixed(b, 1)?)),
                type_id::TIMESTAMP_NTZ_NANOS => VariantValue::TimestampNtzNanos(i64::from_le_bytes(fixed(b, 1)?)),
                type_id::UUID => VariantValue::Uuid(fixed(b, 1)?),
                other => return Err(VariantError::malformed(format!("unknown primitive type id {other}"))),
            },
            basic_type::SHORT_STRING => {
                let len = (header >> 2) as usize;
                let s = b.get(1..1 + len).ok_or_else(|| {
                    VariantError::malformed(format!(
                        "truncated short string: {len} bytes announced, {} present",
                        b.len() - 1
                    ))
                })?;
                VariantValue::String(utf8(s)?)
            }
            basic_type::OBJECT => VariantValue::Object(VariantObject::try_new(self.metadata, b)?),
            _ => VariantValue::Array(VariantArray::try_new(self.metadata, b)?),
        };
        Ok(v)
    }

    /// Field `name` when this is an object; `None` when it is not an object or
    /// has no such field.
    #[inline]
    pub fn get_field(&self, name: &str) -> Result<Option<Variant<'a>>> {
        if self.basic_type() != basic_type::OBJECT {
            return Ok(None);
        }
        VariantObject::try_new(self.metadata, self.value)?.get(name)
    }

    /// Element `index` when this is an array; `None` otherwise or when out of range.
    #[inline]
    pub fn get_index(&self, index: usize) -> Result<Option<Variant<'a>>> {
        if self.basic_type() != basic_type::ARRAY {
            return Ok(None);
        }
        let array = VariantArray::try_new(self.metadata, self.value)?;
        if index >= array.len() {
            Ok(None)
        } else {
            array.get(index).map(Some)
        }
    }
}

/// Parsed header of an object or array.
#[derive(Debug, Clone, Copy)]
struct ContainerHeader {
    len: usize,
    id_size: usize,
    offset_size: usize,
    ids_start: usize,
    offsets_start: usize,
    data_start: usize,
    data_len: usize,
}

impl ContainerHeader {
    #[inline(always)]
    fn object(bytes: &[u8]) -> Result<Self> {
        let vh = bytes[0] >> 2;
        let offset_size = (vh & 0x03) as usize + 1;
        let id_size = ((vh >> 2) & 0x03) as usize + 1;
        let large = vh & 0x10 != 0;
        Self::parse(bytes, large, id_size, offset_size, "object")
    }

    fn array(bytes: &[u8]) -> Result<Self> {
        let vh = bytes[0] >> 2;
        let offset_size = (vh & 0x03) as usize + 1;
        let large = vh & 0x04 != 0;
        Self::parse(bytes, large, 0, offset_size, "array")
    }

    #[inline(always)]
    fn parse(bytes: &[u8], large: bool, id_size: usize, offset_size: usize, what: &str) -> Result<Self> {
        let n_size = if large { 4 } else { 1 };
        let len = read_uint(bytes, 1, n_size)?;
        let ids_start = 1 + n_size;
        let too_big = || {
            VariantError::malformed(format!(
                "{what} of {len} elements does not fit in {} bytes",
                bytes.len()
            ))
        };
        let offsets_start = len
            .checked_mul(id_size)
            .and_then(|n| n.checked_add(ids_start))
            .ok_or_else(too_big)?;
        let data_start = len
            .checked_add(1)
            .and_then(|n| n.checked_mul(offset_size))
            .and_then(|n| n.checked_add(offsets_start))
            .filter(|&n| n <= bytes.len())
            .ok_or_else(too_big)?;
        let data_len = read_uint(bytes, offsets_start + len * offset_size, offset_size)?;
        if data_start + data_len > bytes.len() {
            return Err(VariantError::malformed(format!(
                "{what} data of {data_len} bytes at {data_start} past the end ({} bytes)",
                bytes.len()
            )));
        }
        Ok(Self {
            len,
            id_size,
            offset_size,
            ids_start,
            offsets_start,
            data_start,
            data_len,
        })
    }
}

/// Byte equality without a `memcmp` call for short keys.
#[inline(always)]
fn eq_short(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && (a.len() > 16 && a == b || a.len() <= 16 && a.iter().zip(b).all(|(x, y)| x == y))
}

/// A lazily decoded object: fields sorted by key.
#[derive(Debug, Clone, Copy)]
pub struct VariantObject<'a> {
    metadata: VariantMetadata<'a>,
    bytes: &'a [u8],
    h: ContainerHeader,
}

impl<'a> VariantObject<'a> {
    fn try_new(metadata: VariantMetadata<'a>, bytes: &'a [u8]) -> Result<Self> {
        Ok(Self {
            metadata,
            bytes,
            h: ContainerHeader::object(bytes)?,
        })
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.h.len
    }

    /// True when there are no fields.
    pub fn is_empty(&self) -> bool {
        self.h.len == 0
    }

    /// Dictionary id of field `i`.
    #[inline]
    pub fn field_id(&self, i: usize) -> Result<usize> {
        read_uint(self.bytes, self.h.ids_start + i * self.h.id_size, self.h.id_size)
    }

    /// Key bytes of field `i`.
    #[inline(always)]
    fn key_bytes(&self, i: usize) -> Result<&'a [u8]> {
        self.metadata.key_bytes(self.field_id(i)?)
    }

    /// Key of field `i`.
    pub fn key(&self, i: usize) -> Result<&'a str> {
        self.metadata.key(self.field_id(i)?)
    }

    /// Value of field `i`.
    #[inline]
    pub fn value(&self, i: usize) -> Result<Variant<'a>> {
        if i >= self.h.len {
            return Err(VariantError::malformed(format!("field {i} out of range")));
        }
        let off = read_uint(
            self.bytes,
            self.h.offsets_start + i * self.h.offset_size,
            self.h.offset_size,
        )?;
        if off >= self.h.data_len {
            return Err(VariantError::malformed(format!(
                "field offset {off} outside object data of {} bytes",
                self.h.data_len
            )));
        }
        let start = self.h.data_start + off;
        Variant::with_metadata(self.metadata, &self.bytes[start..self.h.data_start + self.h.data_len])
    }

    /// Key and value of field `i`.
    pub fn field(&self, i: usize) -> Result<(&'a str, Variant<'a>)> {
        Ok((self.key(i)?, self.value(i)?))
    }

    /// The field called `name`, if any.
    #[inline]
    pub fn get(&self, name: &str) -> Result<Option<Variant<'a>>> {
        let name = name.as_bytes();
        let n = self.h.len;
        if n <= 8 {
            for i in 0..n {
                if eq_short(self.key_bytes(i)?, name) {
                    return self.value(i).map(Some);
                }
            }
            return Ok(None);
        }
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key_bytes(mid)?.cmp(name) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.value(mid).map(Some),
            }
        }
        Ok(None)
    }
}

/// A lazily decoded array.
#[derive(Debug, Clone, Copy)]
pub struct VariantArray<'a> {
    metadata: VariantMetadata<'a>,
    bytes: &'a [u8],
    h: ContainerHeader,
}

impl<'a> VariantArray<'a> {
    fn try_new(metadata: VariantMetadata<'a>, bytes: &'a [u8]) -> Result<Self> {
        Ok(Self {
            metadata,
            bytes,
            h: ContainerHeader::array(bytes)?,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.h.len
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.h.len == 0
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Result<Variant<'a>> {
        if i >= self.h.len {
            return Err(VariantError::malformed(format!("element {i} out of range")));
        }
        let pos = self.h.offsets_start + i * self.h.offset_size;
        let start = read_uint(self.bytes, pos, self.h.offset_size)?;
        let end = read_uint(self.bytes, pos + self.h.offset_size, self.h.offset_size)?;
        if start >= end || end > self.h.data_len {
            return Err(VariantError::malformed(format!(
                "array element {i} has invalid offsets {start}..{end}"
            )));
        }
        Variant::with_metadata(
            self.metadata,
            &self.bytes[self.h.data_start + start..self.h.data_start + end],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::metadata::EMPTY_METADATA;
    use super::*;

    fn v(value: &[u8]) -> Result<VariantValue<'_>> {
        Variant::try_new(&EMPTY_METADATA, value)?.decode()
    }

    #[test]
    fn decodes_every_primitive() {
        assert!(matches!(v(&[0x00]).unwrap(), VariantValue::Null));
        assert!(matches!(v(&[0x04]).unwrap(), VariantValue::Boolean(true)));
        assert!(matches!(v(&[0x08]).unwrap(), VariantValue::Boolean(false)));
        assert!(matches!(v(&[0x0c, 0xff]).unwrap(), VariantValue::Int8(-1)));
        assert!(matches!(v(&[0x10, 0x00, 0x01]).unwrap(), VariantValue::Int16(256)));
        assert!(matches!(v(&[0x14, 1, 0, 0, 0]).unwrap(), VariantValue::Int32(1)));
        assert!(matches!(
            v(&[0x18, 2, 0, 0, 0, 0, 0, 0, 0]).unwrap(),
            VariantValue::Int64(2)
        ));
        let mut d = vec![0x1c];
        d.extend(1.5f64.to_le_bytes());
        assert!(matches!(v(&d).unwrap(), VariantValue::Double(x) if x == 1.5));
        assert!(matches!(
            v(&[0x20, 2, 0x96, 0, 0, 0]).unwrap(),
            VariantValue::Decimal {
                unscaled: 150,
                scale: 2
            }
        ));
        assert!(matches!(
            v(&[0x24, 1, 5, 0, 0, 0, 0, 0, 0, 0]).unwrap(),
            VariantValue::Decimal { unscaled: 5, scale: 1 }
        ));
        let mut d16 = vec![0x28, 0];
        d16.extend((-7i128).to_le_bytes());
        assert!(matches!(
            v(&d16).unwrap(),
            VariantValue::Decimal { unscaled: -7, scale: 0 }
        ));
        assert!(matches!(v(&[0x2c, 1, 0, 0, 0]).unwrap(), VariantValue::Date(1)));
        assert!(matches!(
            v(&[0x30, 1, 0, 0, 0, 0, 0, 0, 0]).unwrap(),
            VariantValue::Timestamp(1)
        ));
        assert!(matches!(
            v(&[0x34, 1, 0, 0, 0, 0, 0, 0, 0]).unwrap(),
            VariantValue::TimestampNtz(1)
        ));
        let mut f = vec![0x38];
        f.extend(2.5f32.to_le_bytes());
        assert!(matches!(v(&f).unwrap(), VariantValue::Float(x) if x == 2.5));
        assert!(matches!(
            v(&[0x3c, 2, 0, 0, 0, 9, 8]).unwrap(),
            VariantValue::Binary(&[9, 8])
        ));
        assert!(matches!(
            v(&[0x40, 2, 0, 0, 0, b'h', b'i']).unwrap(),
            VariantValue::String("hi")
        ));
        assert!(matches!(
            v(&[0x44, 1, 0, 0, 0, 0, 0, 0, 0]).unwrap(),
            VariantValue::TimeNtz(1)
        ));
        assert!(matches!(
            v(&[0x48, 1, 0, 0, 0, 0, 0, 0, 0]).unwrap(),
            VariantValue::TimestampNanos(1)
        ));
        assert!(matches!(
            v(&[0x4c, 1, 0, 0, 0, 0, 0, 0, 0]).unwrap(),
            VariantValue::TimestampNtzNanos(1)
        ));
        let mut u = vec![0x50];
        u.extend([7u8; 16]);
        assert!(matches!(v(&u).unwrap(), VariantValue::Uuid([7, ..])));
        assert!(matches!(v(&[0x09, b'o', b'k']).unwrap(), VariantValue::String("ok")));
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            &[][..],
            &[0x0c],
            &[0x54],
            &[0x40, 9, 0, 0, 0, b'a'],
            &[0x0d, b'a'],
            &[0x20, 39, 0, 0, 0, 0],
            &[0x03, 0x05, 0x00],
            &[0x03, 0x01, 0x00, 0x07, 0x00],
            &[0x02, 0x01, 0x00, 0x00, 0x02, 0x0c],
        ] {
            let r = Variant::try_new(&EMPTY_METADATA, bad).and_then(|v| v.decode());
            assert!(r.is_err(), "{bad:?} decoded as {r:?}");
        }
        let meta = [0x11, 0x01, 0x00, 0x01, b'a'];
        // object pointing at field id 3 of a one-key dictionary
        let obj = [0x02, 0x01, 0x03, 0x00, 0x02, 0x0c, 0x01];
        let var = Variant::try_new(&meta, &obj).unwrap();
        assert!(var.get_field("a").is_err());
    }

    #[test]
    fn navigates_objects_and_arrays() {
        let meta = [0x11, 0x01, 0x00, 0x01, b'a'];
        let obj = [0x02, 0x01, 0x00, 0x00, 0x02, 0x0c, 0x01];
        let var = Variant::try_new(&meta, &obj).unwrap();
        let a = var.get_field("a").unwrap().unwrap();
        assert!(matches!(a.decode().unwrap(), VariantValue::Int8(1)));
        assert_eq!(a.exact_value_bytes().unwrap(), &[0x0c, 0x01]);
        assert!(var.get_field("b").unwrap().is_none());
        assert!(var.get_index(0).unwrap().is_none());
        let arr = [0x03, 0x02, 0x00, 0x01, 0x02, 0x04, 0x08];
        let var = Variant::try_new(&meta, &arr).unwrap();
        assert!(matches!(
            var.get_index(1).unwrap().unwrap().decode().unwrap(),
            VariantValue::Boolean(false)
        ));
        assert!(var.get_index(2).unwrap().is_none());
        assert_eq!(value_size(&arr).unwrap(), 7);
    }
}
