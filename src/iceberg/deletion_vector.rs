//! Deletion vectors (Iceberg v3): the deleted row positions of one data
//! file as a `deletion-vector-v1` blob inside a Puffin file.
//!
//! | bytes            | what                                                          |
//! |------------------|---------------------------------------------------------------|
//! | 4, big-endian    | length of the next two parts (magic and bitmap)               |
//! | `D1 D3 39 64`    | magic                                                         |
//! | n                | the positions as a 64-bit Roaring bitmap, portable format: an 8-byte little-endian count of 32-bit bitmaps, then each one's 4-byte little-endian key (the positions' high 32 bits) and its portable 32-bit serialization |
//! | 4, big-endian    | CRC-32 of magic and bitmap                                    |
//!
//! For example positions 1, 3, 5, 7, 9 are 50 bytes: length 38, the magic,
//! count 1, key 0, one array container of five values, the checksum.
//!
//! Bitmaps are written run-length encoded where that is smaller, as the
//! Java implementation writes them, so the bytes are the same as Iceberg's
//! own (tested against its golden files). A position is a row's index in
//! its data file: at most `i64::MAX`, so a key of 2^31 or more is refused.

use roaring::RoaringTreemap;

use crate::error::{Error, Result};

/// The blob type in a Puffin footer.
pub const BLOB_TYPE: &str = "deletion-vector-v1";

const MAGIC: [u8; 4] = [0xD1, 0xD3, 0x39, 0x64];

/// The highest key a row position can have (positions are at most `i64::MAX`).
const MAX_KEY: u64 = i32::MAX as u64;

/// The blob of `positions` (every position at most `i64::MAX`).
pub fn encode(positions: &RoaringTreemap) -> Result<Vec<u8>> {
    if let Some(max) = positions.max()
        && max > i64::MAX as u64
    {
        return Err(Error::Invalid(format!(
            "row position {max} is beyond a deletion vector's range (0 to {})",
            i64::MAX
        )));
    }
    let mut bitmap = positions.clone();
    bitmap.optimize();
    let size = 4 + bitmap.serialized_size();
    let length = u32::try_from(size).map_err(|_| {
        Error::Invalid(format!(
            "a deletion vector of {size} bytes exceeds the format's 4-byte length"
        ))
    })?;
    let mut out = Vec::with_capacity(size + 8);
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(&MAGIC);
    bitmap
        .serialize_into(&mut out)
        .map_err(|e| Error::Invalid(format!("serializing a deletion vector failed: {e}")))?;
    let crc = crc32fast::hash(&out[4..]);
    out.extend_from_slice(&crc.to_be_bytes());
    Ok(out)
}

/// The positions of a blob; `what` names it in errors (file and offset).
pub fn decode(blob: &[u8], what: &str) -> Result<RoaringTreemap> {
    let bad = |problem: String| Error::Format(format!("deletion vector {what}: {problem}"));
    if blob.len() < 12 {
        return Err(bad(format!("{} bytes, fewer than the 12 of an empty one", blob.len())));
    }
    let length = u32::from_be_bytes(blob[..4].try_into().expect("4 bytes")) as usize;
    if length + 8 != blob.len() {
        return Err(bad(format!(
            "its length field says {length} bytes of magic and bitmap, the blob has {}",
            blob.len().saturating_sub(8)
        )));
    }
    let body = &blob[4..4 + length];
    if body[..4] != MAGIC {
        return Err(bad(format!(
            "magic {:02X?} is not a deletion vector's {MAGIC:02X?}",
            &body[..4]
        )));
    }
    let expected = u32::from_be_bytes(blob[4 + length..].try_into().expect("4 bytes"));
    let actual = crc32fast::hash(body);
    if actual != expected {
        return Err(bad(format!(
            "CRC 0x{actual:08x} does not match the stored 0x{expected:08x}"
        )));
    }
    let bitmap = RoaringTreemap::deserialize_from(&body[4..]).map_err(|e| bad(format!("bad Roaring bitmap: {e}")))?;
    if let Some(max) = bitmap.max()
        && (max >> 32) > MAX_KEY
    {
        return Err(bad(format!("position {max} is beyond a row position's range")));
    }
    Ok(bitmap)
}

/// Deleted positions in ascending order, as the scan's row selection takes them.
pub fn positions(bitmap: &RoaringTreemap) -> Vec<i64> {
    bitmap.iter().map(|p| p as i64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn golden(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/data/iceberg_spec/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// `a..b` as Iceberg's tests build ranges (end exclusive).
    fn with_ranges(values: &[u64], ranges: &[(u64, u64)]) -> RoaringTreemap {
        let mut bitmap: RoaringTreemap = values.iter().copied().collect();
        for (a, b) in ranges {
            bitmap.insert_range(a..b);
        }
        bitmap
    }

    fn position(bitmap: u64, container: u64, value: u64) -> u64 {
        (bitmap << 32) + (container << 16) + value
    }

    /// Byte for byte the vectors of Iceberg's own tests (core's
    /// `deletes/*-position-index.bin`), both ways.
    #[test]
    fn golden_vectors_of_the_iceberg_repository() {
        let cases = [
            ("empty-position-index.bin", RoaringTreemap::new()),
            (
                "small-alternating-values-position-index.bin",
                [1u64, 3, 5, 7, 9].into_iter().collect(),
            ),
            (
                "small-and-large-values-position-index.bin",
                [100u64, 101, i32::MAX as u64 + 100, i32::MAX as u64 + 101]
                    .into_iter()
                    .collect(),
            ),
            (
                "all-container-types-position-index.bin",
                with_ranges(
                    &[
                        position(0, 0, 5),
                        position(0, 0, 7),
                        position(1, 0, 10),
                        position(1, 0, 20),
                    ],
                    &[
                        (position(0, 1, 1), position(0, 1, 1000)),
                        (position(0, 2, 1), position(0, 2, 65535)),
                        (position(1, 1, 10), position(1, 1, 500)),
                        (position(1, 2, 1), position(1, 2, 65535)),
                    ],
                ),
            ),
        ];
        for (file, bitmap) in cases {
            let bytes = golden(file);
            assert_eq!(encode(&bitmap).unwrap(), bytes, "{file}");
            assert_eq!(decode(&bytes, file).unwrap(), bitmap, "{file}");
        }
        let five = golden("small-alternating-values-position-index.bin");
        assert_eq!(five.len(), 50);
        assert_eq!(positions(&decode(&five, "x").unwrap()), vec![1, 3, 5, 7, 9]);
    }

    /// The portable 64-bit examples of the Roaring format that Iceberg
    /// reads, and the one it refuses (keys past a row position's range).
    #[test]
    fn roaring_format_examples() {
        for file in ["64map32bitvals.bin", "64mapempty.bin", "64mapspreadvals.bin"] {
            let bitmap = RoaringTreemap::deserialize_from(&golden(file)[..]).unwrap();
            let blob = encode(&bitmap).unwrap();
            assert_eq!(decode(&blob, file).unwrap(), bitmap, "{file}");
        }
        // Iceberg refuses this one for its keys (2^31 and more); framed as
        // a blob, so do we.
        let bitmap = golden("64maphighvals.bin");
        let mut blob = ((bitmap.len() + 4) as u32).to_be_bytes().to_vec();
        blob.extend_from_slice(&MAGIC);
        blob.extend_from_slice(&bitmap);
        let crc = crc32fast::hash(&blob[4..]);
        blob.extend_from_slice(&crc.to_be_bytes());
        let err = decode(&blob, "high").unwrap_err().to_string();
        assert!(err.contains("deletion vector high: bad Roaring bitmap"), "{err}");
        // A position past i64::MAX is never written.
        let past: RoaringTreemap = [1u64 << 63].into_iter().collect();
        let err = encode(&past).unwrap_err().to_string();
        assert!(err.contains("beyond a deletion vector's range"), "{err}");
        let mut blob = encode(&[1u64].into_iter().collect()).unwrap();
        // Key 1 → key 2^31 (byte 16 is the key's last byte): refused on read.
        blob[16 + 3] = 0x80;
        let n = blob.len();
        let crc = crc32fast::hash(&blob[4..n - 4]);
        blob[n - 4..].copy_from_slice(&crc.to_be_bytes());
        let err = decode(&blob, "k").unwrap_err().to_string();
        assert!(err.contains("beyond a row position's range"), "{err}");
    }

    #[test]
    fn damaged_blobs_are_clear_errors() {
        let good = golden("small-alternating-values-position-index.bin");
        let mut crc = good.clone();
        *crc.last_mut().unwrap() ^= 1;
        let err = decode(&crc, "dv.puffin@4").unwrap_err().to_string();
        assert!(err.contains("deletion vector dv.puffin@4: CRC 0x"), "{err}");
        let mut magic = good.clone();
        magic[4] = 0;
        assert!(decode(&magic, "m").unwrap_err().to_string().contains("magic"));
        assert!(
            decode(&good[..20], "s")
                .unwrap_err()
                .to_string()
                .contains("length field")
        );
        assert!(decode(&good[..3], "t").unwrap_err().to_string().contains("fewer than"));
        let mut body = good.clone();
        body[9] ^= 0xFF;
        let fixed = crc32fast::hash(&body[4..body.len() - 4]);
        let n = body.len();
        body[n - 4..].copy_from_slice(&fixed.to_be_bytes());
        assert!(decode(&body, "b").is_err());
    }
}
