//! Building variant values: a builder writing the binary encoding.
//!
//! Values are appended depth first. Containers are closed by
//! [`VariantBuilder::finish_object`] / [`VariantBuilder::finish_array`], which
//! insert the header (sizes chosen as small as the content allows) in front of
//! the children already written:
//!
//! | call                                   | value bytes afterwards            |
//! |----------------------------------------|-----------------------------------|
//! | `start = b.offset()`                   | ``                                |
//! | `fields.push((b.add_key("a"), 0)); b.append_int(1)` | `0c 01`              |
//! | `b.finish_object(start, &mut fields)`  | `02 01 00 00 02 0c 01`            |
//!
//! Keys get dictionary ids in order of first use; object fields are sorted by
//! key and a key used twice in one object is an error. The metadata is marked
//! sorted when the dictionary happens to be.

use std::collections::HashMap;

use super::decode::{MAX_DECIMAL_PRECISION, Variant, VariantValue, basic_type, type_id};
use super::metadata::VariantMetadata;
use super::{MAX_DEPTH, Result, VariantError};

/// Builder of one variant (metadata + value); reusable with [`VariantBuilder::reset`].
#[derive(Debug, Default, Clone)]
pub struct VariantBuilder {
    keys: Vec<String>,
    ids: HashMap<String, u32>,
    value: Vec<u8>,
}

/// Bytes needed to store `n` as an unsigned integer (1..=4).
fn int_size(n: usize) -> usize {
    match n {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFF_FFFF => 3,
        _ => 4,
    }
}

fn push_uint(out: &mut Vec<u8>, n: usize, size: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes()[..size]);
}

#[inline]
fn primitive_header(id: u8) -> u8 {
    id << 2
}

/// Number of decimal digits of `|v|` (1 for zero).
pub fn decimal_digits(v: i128) -> u32 {
    let mut u = v.unsigned_abs();
    let mut d = 1;
    while u >= 10 {
        u /= 10;
        d += 1;
    }
    d
}

impl VariantBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder whose dictionary starts as a copy of `metadata`, so value bytes
    /// written against that metadata can be copied verbatim
    /// ([`VariantBuilder::append_raw`]).
    pub fn with_metadata(metadata: &VariantMetadata<'_>) -> Result<Self> {
        let mut b = Self::new();
        b.reset_with_metadata(metadata)?;
        Ok(b)
    }

    /// Clears keys and value, keeping allocations.
    pub fn reset(&mut self) {
        self.keys.clear();
        self.ids.clear();
        self.value.clear();
    }

    /// Like [`VariantBuilder::reset`], then seeds the dictionary with `metadata`'s keys (same ids).
    pub fn reset_with_metadata(&mut self, metadata: &VariantMetadata<'_>) -> Result<()> {
        self.reset();
        for (id, key) in metadata.keys().enumerate() {
            let key = key?;
            self.keys.push(key.to_string());
            self.ids.entry(key.to_string()).or_insert(id as u32);
        }
        Ok(())
    }

    /// Current end of the value buffer: the start of the next value.
    pub fn offset(&self) -> usize {
        self.value.len()
    }

    /// Dictionary id of `key`, adding it when new.
    pub fn add_key(&mut self, key: &str) -> u32 {
        if let Some(&id) = self.ids.get(key) {
            return id;
        }
        let id = self.keys.len() as u32;
        self.keys.push(key.to_string());
        self.ids.insert(key.to_string(), id);
        id
    }

    /// The value bytes written so far.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// Writes the metadata for the current dictionary into `out` (cleared first).
    pub fn write_metadata(&self, out: &mut Vec<u8>) {
        out.clear();
        let total: usize = self.keys.iter().map(|k| k.len()).sum();
        let size = int_size(total.max(self.keys.len()));
        let sorted = self.keys.windows(2).all(|w| w[0] < w[1]);
        out.push(0x01 | if sorted { 0x10 } else { 0 } | (((size - 1) as u8) << 6));
        push_uint(out, self.keys.len(), size);
        let mut off = 0;
        push_uint(out, 0, size);
        for k in &self.keys {
            off += k.len();
            push_uint(out, off, size);
        }
        for k in &self.keys {
            out.extend_from_slice(k.as_bytes());
        }
    }

    /// Metadata and value as owned vectors.
    pub fn finish(&self) -> (Vec<u8>, Vec<u8>) {
        let mut m = Vec::new();
        self.write_metadata(&mut m);
        (m, self.value.clone())
    }

    pub fn append_null(&mut self) {
        self.value.push(primitive_header(type_id::NULL));
    }

    pub fn append_bool(&mut self, v: bool) {
        self.value
            .push(primitive_header(if v { type_id::TRUE } else { type_id::FALSE }));
    }

    /// An integer in the smallest of int8/16/32/64 that holds it.
    pub fn append_int(&mut self, v: i64) {
        if let Ok(x) = i8::try_from(v) {
            self.value.push(primitive_header(type_id::INT8));
            self.value.extend_from_slice(&x.to_le_bytes());
        } else if let Ok(x) = i16::try_from(v) {
            self.value.push(primitive_header(type_id::INT16));
            self.value.extend_from_slice(&x.to_le_bytes());
        } else if let Ok(x) = i32::try_from(v) {
            self.value.push(primitive_header(type_id::INT32));
            self.value.extend_from_slice(&x.to_le_bytes());
        } else {
            self.value.push(primitive_header(type_id::INT64));
            self.value.extend_from_slice(&v.to_le_bytes());
        }
    }

    pub fn append_double(&mut self, v: f64) {
        self.value.push(primitive_header(type_id::DOUBLE));
        self.value.extend_from_slice(&v.to_le_bytes());
    }

    pub fn append_float(&mut self, v: f32) {
        self.value.push(primitive_header(type_id::FLOAT));
        self.value.extend_from_slice(&v.to_le_bytes());
    }

    /// A decimal in the smallest of decimal4/8/16 that holds its precision and
    /// scale (as Spark chooses). Errors when scale or precision exceed 38.
    pub fn append_decimal(&mut self, unscaled: i128, scale: u8) -> Result<()> {
        let precision = decimal_digits(unscaled);
        if scale > MAX_DECIMAL_PRECISION || precision > MAX_DECIMAL_PRECISION as u32 {
            return Err(VariantError::Unsupported(format!(
                "decimal with {precision} digits and scale {scale} exceeds precision 38"
            )));
        }
        if scale <= 9 && precision <= 9 {
            self.value
                .extend_from_slice(&[primitive_header(type_id::DECIMAL4), scale]);
            self.value.extend_from_slice(&(unscaled as i32).to_le_bytes());
        } else if scale <= 18 && precision <= 18 {
            self.value
                .extend_from_slice(&[primitive_header(type_id::DECIMAL8), scale]);
            self.value.extend_from_slice(&(unscaled as i64).to_le_bytes());
        } else {
            self.value
                .extend_from_slice(&[primitive_header(type_id::DECIMAL16), scale]);
            self.value.extend_from_slice(&unscaled.to_le_bytes());
        }
        Ok(())
    }

    /// Days since 1970-01-01.
    pub fn append_date(&mut self, days: i32) {
        self.value.push(primitive_header(type_id::DATE));
        self.value.extend_from_slice(&days.to_le_bytes());
    }

    /// Microseconds since the epoch; `utc` selects TIMESTAMP over TIMESTAMP_NTZ.
    pub fn append_timestamp_micros(&mut self, micros: i64, utc: bool) {
        let id = if utc {
            type_id::TIMESTAMP
        } else {
            type_id::TIMESTAMP_NTZ
        };
        self.value.push(primitive_header(id));
        self.value.extend_from_slice(&micros.to_le_bytes());
    }

    /// Nanoseconds since the epoch; `utc` selects the time-zone-aware type.
    pub fn append_timestamp_nanos(&mut self, nanos: i64, utc: bool) {
        let id = if utc {
            type_id::TIMESTAMP_NANOS
        } else {
            type_id::TIMESTAMP_NTZ_NANOS
        };
        self.value.push(primitive_header(id));
        self.value.extend_from_slice(&nanos.to_le_bytes());
    }

    /// Microseconds since midnight.
    pub fn append_time_micros(&mut self, micros: i64) {
        self.value.push(primitive_header(type_id::TIME_NTZ));
        self.value.extend_from_slice(&micros.to_le_bytes());
    }

    /// A string; up to 63 bytes use the short-string encoding.
    pub fn append_string(&mut self, s: &str) {
        if s.len() <= 63 {
            self.value.push(((s.len() as u8) << 2) | basic_type::SHORT_STRING);
        } else {
            self.value.push(primitive_header(type_id::STRING));
            self.value.extend_from_slice(&(s.len() as u32).to_le_bytes());
        }
        self.value.extend_from_slice(s.as_bytes());
    }

    pub fn append_binary(&mut self, b: &[u8]) {
        self.value.push(primitive_header(type_id::BINARY));
        self.value.extend_from_slice(&(b.len() as u32).to_le_bytes());
        self.value.extend_from_slice(b);
    }

    /// A UUID as 16 big-endian bytes.
    pub fn append_uuid(&mut self, bytes: [u8; 16]) {
        self.value.push(primitive_header(type_id::UUID));
        self.value.extend_from_slice(&bytes);
    }

    /// Copies value bytes verbatim. They must refer to this builder's
    /// dictionary ids (see [`VariantBuilder::with_metadata`]).
    pub fn append_raw(&mut self, value: &[u8]) {
        self.value.extend_from_slice(value);
    }

    /// Re-encodes `v` (which may use another dictionary) into this builder.
    pub fn append_variant(&mut self, v: &Variant<'_>) -> Result<()> {
        self.append_variant_at(v, 0)
    }

    fn append_variant_at(&mut self, v: &Variant<'_>, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(VariantError::TooDeep(MAX_DEPTH));
        }
        match v.decode()? {
            VariantValue::Object(o) => {
                let start = self.offset();
                let mut fields = Vec::with_capacity(o.len());
                for i in 0..o.len() {
                    let (k, child) = o.field(i)?;
                    fields.push((self.add_key(k), self.offset() - start));
                    self.append_variant_at(&child, depth + 1)?;
                }
                self.finish_object(start, &mut fields)
            }
            VariantValue::Array(a) => {
                let start = self.offset();
                let mut offsets = Vec::with_capacity(a.len());
                for i in 0..a.len() {
                    offsets.push(self.offset() - start);
                    self.append_variant_at(&a.get(i)?, depth + 1)?;
                }
                self.finish_array(start, &offsets)
            }
            _ => {
                self.append_raw(v.exact_value_bytes()?);
                Ok(())
            }
        }
    }

    /// Closes an object whose field values were written from `start` on.
    /// `fields` holds `(key id, offset of the value relative to start)`; it is
    /// sorted here. Errors on a duplicate key.
    pub fn finish_object(&mut self, start: usize, fields: &mut [(u32, usize)]) -> Result<()> {
        let data_len = self.data_len_from(start)?;
        if let Some(bad) = fields
            .iter()
            .find(|f| f.0 as usize >= self.keys.len() || f.1 >= data_len.max(1))
        {
            return Err(VariantError::Unsupported(format!(
                "object field {bad:?} does not match the builder state"
            )));
        }
        let keys = &self.keys;
        fields.sort_unstable_by(|a, b| keys[a.0 as usize].cmp(&keys[b.0 as usize]));
        if let Some(w) = fields
            .windows(2)
            .find(|w| keys[w[0].0 as usize] == keys[w[1].0 as usize])
        {
            return Err(VariantError::DuplicateKey(keys[w[0].0 as usize].clone()));
        }
        let n = fields.len();
        let max_id = fields.iter().map(|f| f.0 as usize).max().unwrap_or(0);
        let id_size = int_size(max_id);
        let off_size = int_size(data_len);
        let large = n > 0xFF;
        let mut header = Vec::with_capacity(1 + 4 + n * id_size + (n + 1) * off_size);
        let vh = (off_size - 1) as u8 | (((id_size - 1) as u8) << 2) | if large { 0x10 } else { 0 };
        header.push((vh << 2) | basic_type::OBJECT);
        push_uint(&mut header, n, if large { 4 } else { 1 });
        for f in fields.iter() {
            push_uint(&mut header, f.0 as usize, id_size);
        }
        for f in fields.iter() {
            push_uint(&mut header, f.1, off_size);
        }
        push_uint(&mut header, data_len, off_size);
        self.value.splice(start..start, header);
        Ok(())
    }

    /// Closes an array whose elements were written from `start` on, at the
    /// given offsets relative to `start`.
    pub fn finish_array(&mut self, start: usize, offsets: &[usize]) -> Result<()> {
        let data_len = self.data_len_from(start)?;
        if offsets.windows(2).any(|w| w[0] >= w[1]) || offsets.last().is_some_and(|&o| o >= data_len) {
            return Err(VariantError::Unsupported(
                "array offsets do not match the builder state".into(),
            ));
        }
        let n = offsets.len();
        let off_size = int_size(data_len);
        let large = n > 0xFF;
        let mut header = Vec::with_capacity(1 + 4 + (n + 1) * off_size);
        let vh = (off_size - 1) as u8 | if large { 0x04 } else { 0 };
        header.push((vh << 2) | basic_type::ARRAY);
        push_uint(&mut header, n, if large { 4 } else { 1 });
        for &o in offsets {
            push_uint(&mut header, o, off_size);
        }
        push_uint(&mut header, data_len, off_size);
        self.value.splice(start..start, header);
        Ok(())
    }

    fn data_len_from(&self, start: usize) -> Result<usize> {
        self.value
            .len()
            .checked_sub(start)
            .ok_or_else(|| VariantError::Unsupported(format!("container start {start} past the end of the value")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_object() {
        let mut b = VariantBuilder::new();
        let start = b.offset();
        let mut fields = vec![];
        fields.push((b.add_key("b"), b.offset() - start));
        b.append_bool(true);
        fields.push((b.add_key("a"), b.offset() - start));
        b.append_int(1);
        b.finish_object(start, &mut fields).unwrap();
        let (m, v) = b.finish();
        assert_eq!(m, vec![0x01, 0x02, 0x00, 0x01, 0x02, b'b', b'a']);
        assert_eq!(v, vec![0x02, 0x02, 0x01, 0x00, 0x01, 0x00, 0x03, 0x04, 0x0c, 0x01]);
        let var = Variant::try_new(&m, &v).unwrap();
        assert!(matches!(
            var.get_field("a").unwrap().unwrap().decode().unwrap(),
            VariantValue::Int8(1)
        ));
    }

    #[test]
    fn rejects_duplicate_keys() {
        let mut b = VariantBuilder::new();
        let mut fields = vec![(b.add_key("k"), 0)];
        b.append_null();
        fields.push((b.add_key("k"), 1));
        b.append_null();
        assert_eq!(
            b.finish_object(0, &mut fields),
            Err(VariantError::DuplicateKey("k".into()))
        );
    }

    #[test]
    fn picks_smallest_widths() {
        let mut b = VariantBuilder::new();
        for (v, header, len) in [(1i64, 0x0c, 2), (300, 0x10, 3), (70000, 0x14, 5), (1 << 40, 0x18, 9)] {
            b.reset();
            b.append_int(v);
            assert_eq!((b.value()[0], b.value().len()), (header, len));
        }
        for (u, s, header) in [
            (150i128, 2u8, 0x20),
            (1_234_567_890, 0, 0x24),
            (1, 10, 0x24),
            (10i128.pow(20), 0, 0x28),
        ] {
            b.reset();
            b.append_decimal(u, s).unwrap();
            assert_eq!(b.value()[0], header);
        }
        assert!(b.append_decimal(1, 39).is_err());
    }
}
