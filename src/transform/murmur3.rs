//! Murmur3 x86 32-bit hash, seed 0, as required by the Iceberg spec (Appendix B).
//!
//! Bucket values are persisted in directory names and manifests and must match
//! every other Iceberg engine bit for bit, so this is a from-scratch port of the
//! reference algorithm (the same one Guava's `murmur3_32_fixed` implements)
//! rather than a dependency whose output could drift.

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline]
fn mix_k1(k1: u32) -> u32 {
    k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline]
fn mix_h1(h1: u32, k1: u32) -> u32 {
    (h1 ^ k1).rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64)
}

#[inline]
fn fmix(mut h1: u32, len: u32) -> u32 {
    h1 ^= len;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^ (h1 >> 16)
}

/// Murmur3 x86 32-bit hash of `bytes` with seed 0, as a signed int (Java's view).
pub fn hash32(bytes: &[u8]) -> i32 {
    let mut h1: u32 = 0;
    let mut blocks = bytes.chunks_exact(4);
    for block in &mut blocks {
        let k1 = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        h1 = mix_h1(h1, mix_k1(k1));
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k1: u32 = 0;
        for (i, b) in tail.iter().enumerate() {
            k1 ^= u32::from(*b) << (8 * i);
        }
        h1 ^= mix_k1(k1);
    }
    // Iceberg hashes values far below 4 GiB; the spec (like Guava) mixes the
    // length in as a 32-bit int, so truncation is the reference behavior.
    fmix(h1, bytes.len() as u32) as i32
}

/// `hash32(&v.to_le_bytes())` without the byte round trip: the hot path for
/// int, long, date, time and timestamp buckets.
#[inline]
pub fn hash_i64(v: i64) -> i32 {
    let v = v as u64;
    let h1 = mix_h1(0, mix_k1(v as u32));
    let h1 = mix_h1(h1, mix_k1((v >> 32) as u32));
    fmix(h1, 8) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_vectors() {
        assert_eq!(hash32(&34i64.to_le_bytes()), 2017239379);
        assert_eq!(hash32(b"iceberg"), 1210000089);
        assert_eq!(hash32(&[0, 1, 2, 3]), -188683207);
        let uuid = [
            0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7,
        ];
        assert_eq!(hash32(&uuid), 1488055340);
        // decimal 14.20: unscaled 1420 = 0x058C
        assert_eq!(hash32(&[0x05, 0x8C]), -500754589);
    }

    #[test]
    fn known_murmur3_values() {
        // Reference values for Murmur3_x86_32 with seed 0.
        assert_eq!(hash32(b""), 0);
        assert_eq!(hash32(&[0]), 0x514e_28b7_u32 as i32);
        assert_eq!(hash32(b"hello"), 0x248b_fa47_u32 as i32);
        assert_eq!(
            hash32(b"The quick brown fox jumps over the lazy dog"),
            0x2e4f_f723_u32 as i32
        );
    }

    #[test]
    fn hash_i64_matches_bytes() {
        for v in [0i64, 1, -1, 34, i64::MIN, i64::MAX, 1_510_871_468_000_000, -653_330_422] {
            assert_eq!(hash_i64(v), hash32(&v.to_le_bytes()), "value {v}");
        }
        assert_eq!(hash_i64(34), 2017239379);
    }

    #[test]
    fn every_tail_length_contributes() {
        // Prefixes of 0..=20 bytes cover tails of 0-3 bytes; all must hash apart.
        let data: Vec<u8> = (0u8..=20).collect();
        let mut seen = std::collections::HashSet::new();
        for n in 0..data.len() {
            seen.insert(hash32(&data[..n]));
        }
        assert_eq!(seen.len(), data.len());
    }
}
