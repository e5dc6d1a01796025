//! The metadata half of a variant: a dictionary of object keys.
//!
//! Objects in the value refer to keys by index into this dictionary, so one
//! metadata can serve a whole tree (or, in Parquet, many rows).
//!
//! | bytes                    | meaning                                   |
//! |--------------------------|-------------------------------------------|
//! | `11`                     | header: version 1, sorted, offset size 1  |
//! | `02`                     | dictionary size: 2 keys                   |
//! | `00 01 03`               | 3 offsets into the string bytes           |
//! | `61 62 63`               | `"a"` (0..1), `"bc"` (1..3)               |
//!
//! [`VariantMetadata::try_new`] checks the header and that the offset table
//! fits; each key access checks its own offsets, so nothing reads out of bounds.

use super::{Result, VariantError};

/// Metadata of an empty dictionary (version 1, sorted): enough for any value
/// without objects.
pub const EMPTY_METADATA: [u8; 3] = [0x11, 0x00, 0x00];

/// Reads an unsigned little-endian integer of `size` (1..=4) bytes at `pos`.
#[inline(always)]
pub(crate) fn read_uint(bytes: &[u8], pos: usize, size: usize) -> Result<usize> {
    let v = match size {
        1 => bytes.get(pos).map(|&b| b as usize),
        2 => bytes
            .get(pos..pos.wrapping_add(2))
            .map(|s| u16::from_le_bytes([s[0], s[1]]) as usize),
        3 => bytes
            .get(pos..pos.wrapping_add(3))
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], 0]) as usize),
        4 => bytes
            .get(pos..pos.wrapping_add(4))
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize),
        _ => None,
    };
    match v {
        Some(v) => Ok(v),
        None => Err(truncated(bytes, pos, size)),
    }
}

#[cold]
#[inline(never)]
fn truncated(bytes: &[u8], pos: usize, size: usize) -> VariantError {
    VariantError::malformed(format!("truncated: need {size} bytes at {pos}, have {}", bytes.len()))
}

/// A validated view of variant metadata bytes.
#[derive(Debug, Clone, Copy)]
pub struct VariantMetadata<'a> {
    bytes: &'a [u8],
    offset_size: usize,
    dict_size: usize,
    sorted: bool,
    offsets_start: usize,
    strings_start: usize,
}

impl<'a> VariantMetadata<'a> {
    /// Checks the header (version 1), the dictionary size and that the offset
    /// table and the string bytes it announces fit in `bytes`.
    pub fn try_new(bytes: &'a [u8]) -> Result<Self> {
        let header = *bytes.first().ok_or_else(|| VariantError::malformed("empty metadata"))?;
        let version = header & 0x0F;
        if version != 1 {
            return Err(VariantError::malformed(format!(
                "unsupported metadata version {version}"
            )));
        }
        let sorted = header & 0x10 != 0;
        let offset_size = ((header >> 6) & 0x03) as usize + 1;
        let dict_size = read_uint(bytes, 1, offset_size)?;
        let offsets_start = 1 + offset_size;
        let strings_start = dict_size
            .checked_add(1)
            .and_then(|n| n.checked_mul(offset_size))
            .and_then(|n| n.checked_add(offsets_start))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| {
                VariantError::malformed(format!(
                    "metadata dictionary of {dict_size} keys does not fit in {} bytes",
                    bytes.len()
                ))
            })?;
        let last = read_uint(bytes, offsets_start + dict_size * offset_size, offset_size)?;
        if strings_start.checked_add(last).is_none_or(|end| end > bytes.len()) {
            return Err(VariantError::malformed(format!(
                "metadata strings end at {} past the end ({} bytes)",
                strings_start.saturating_add(last),
                bytes.len()
            )));
        }
        Ok(Self {
            bytes,
            offset_size,
            dict_size,
            sorted,
            offsets_start,
            strings_start,
        })
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of keys in the dictionary.
    pub fn len(&self) -> usize {
        self.dict_size
    }

    /// True when the dictionary has no keys.
    pub fn is_empty(&self) -> bool {
        self.dict_size == 0
    }

    /// Whether the writer declared the keys sorted and unique.
    pub fn is_sorted(&self) -> bool {
        self.sorted
    }

    /// The UTF-8 bytes of key `id`, unchecked for UTF-8 (cheap, for comparisons).
    #[inline(always)]
    pub fn key_bytes(&self, id: usize) -> Result<&'a [u8]> {
        if id >= self.dict_size {
            return Err(VariantError::malformed(format!(
                "field id {id} out of range (dictionary has {} keys)",
                self.dict_size
            )));
        }
        let pos = self.offsets_start + id * self.offset_size;
        let start = read_uint(self.bytes, pos, self.offset_size)?;
        let end = read_uint(self.bytes, pos + self.offset_size, self.offset_size)?;
        self.bytes
            .get(self.strings_start + start..self.strings_start + end)
            .filter(|_| start <= end)
            .ok_or_else(|| VariantError::malformed(format!("key {id} has invalid offsets {start}..{end}")))
    }

    /// Key `id` as a string.
    pub fn key(&self, id: usize) -> Result<&'a str> {
        std::str::from_utf8(self.key_bytes(id)?)
            .map_err(|_| VariantError::malformed(format!("key {id} is not valid UTF-8")))
    }

    /// All keys in dictionary order.
    pub fn keys(&self) -> impl Iterator<Item = Result<&'a str>> + '_ {
        (0..self.dict_size).map(|i| self.key(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_keys() {
        let m = [0x11, 0x02, 0x00, 0x01, 0x03, b'a', b'b', b'c'];
        let md = VariantMetadata::try_new(&m).unwrap();
        assert_eq!(md.len(), 2);
        assert!(md.is_sorted());
        assert_eq!(md.key(0).unwrap(), "a");
        assert_eq!(md.key(1).unwrap(), "bc");
        assert!(md.key(2).is_err());
    }

    #[test]
    fn rejects_bad_headers() {
        assert!(VariantMetadata::try_new(&[]).is_err());
        let err = VariantMetadata::try_new(&[0x02, 0x00, 0x00]).unwrap_err();
        assert!(err.to_string().contains("version 2"), "{err}");
        assert!(VariantMetadata::try_new(&[0x01, 0x05, 0x00]).is_err());
        // last offset past the end
        assert!(VariantMetadata::try_new(&[0x01, 0x01, 0x00, 0x09, b'a']).is_err());
        // decreasing offsets are caught on access
        let m = [0x01, 0x02, 0x00, 0x02, 0x01, b'a', b'b'];
        let md = VariantMetadata::try_new(&m).unwrap();
        assert!(md.key(1).is_err());
        assert!(VariantMetadata::try_new(&EMPTY_METADATA).unwrap().is_empty());
    }
}
