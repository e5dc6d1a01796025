//! Puffin files: blobs with a JSON footer that says what each one is
//! (Iceberg's container for deletion vectors and statistics).
//!
//! | part            | bytes                                                    |
//! |-----------------|----------------------------------------------------------|
//! | magic           | `PFA1`                                                   |
//! | blobs           | one after another, each at the `offset` its footer entry names |
//! | footer          | magic, the footer JSON, its length (4, little-endian), flags (4; bit 0 = compressed JSON, which we do not write or read), magic |
//!
//! ```json
//! {"blobs":[{"type":"deletion-vector-v1","fields":[2147483645],"snapshot-id":-1,"sequence-number":-1,
//!   "offset":4,"length":50,"properties":{"cardinality":"5","referenced-data-file":"s3://b/t/data/f.parquet"}}],
//!  "properties":{"created-by":"hidden-partitions 0.1.0"}}
//! ```
//!
//! Readers of deletion vectors go straight to a blob with the offset and
//! length the delete manifest records; the footer is for everyone else.
//! Blobs are written uncompressed (a deletion vector must be).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

const MAGIC: &[u8; 4] = b"PFA1";

/// One blob as the footer describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobMetadata {
    #[serde(rename = "type")]
    pub kind: String,
    /// The field ids the blob is computed from.
    pub fields: Vec<i32>,
    #[serde(rename = "snapshot-id")]
    pub snapshot_id: i64,
    #[serde(rename = "sequence-number")]
    pub sequence_number: i64,
    pub offset: u64,
    pub length: u64,
    #[serde(rename = "compression-codec", default, skip_serializing_if = "Option::is_none")]
    pub compression_codec: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
}

/// A Puffin file's footer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Footer {
    pub blobs: Vec<BlobMetadata>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
}

/// A blob to write: its description (offset and length are filled in) and bytes.
#[derive(Debug, Clone)]
pub struct Blob {
    pub kind: String,
    pub fields: Vec<i32>,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    pub properties: BTreeMap<String, String>,
    pub data: Vec<u8>,
}

/// A whole Puffin file of `blobs`, and its footer (where each blob landed).
pub fn write(blobs: Vec<Blob>, properties: BTreeMap<String, String>) -> Result<(Vec<u8>, Footer)> {
    let mut out = MAGIC.to_vec();
    let mut described = Vec::with_capacity(blobs.len());
    for blob in blobs {
        described.push(BlobMetadata {
            kind: blob.kind,
            fields: blob.fields,
            snapshot_id: blob.snapshot_id,
            sequence_number: blob.sequence_number,
            offset: out.len() as u64,
            length: blob.data.len() as u64,
            compression_codec: None,
            properties: blob.properties,
        });
        out.extend_from_slice(&blob.data);
    }
    let footer = Footer {
        blobs: described,
        properties,
    };
    let json = serde_json::to_vec(&footer)?;
    let size = u32::try_from(json.len())
        .map_err(|_| Error::Invalid(format!("a Puffin footer of {} bytes is too large", json.len())))?;
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&json);
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(MAGIC);
    Ok((out, footer))
}

/// The footer of the Puffin file `bytes` (the whole file); `what` names it.
pub fn read_footer(bytes: &[u8], what: &str) -> Result<Footer> {
    let bad = |problem: String| Error::Format(format!("Puffin file {what}: {problem}"));
    if bytes.len() < 20 || &bytes[..4] != MAGIC || &bytes[bytes.len() - 4..] != MAGIC {
        return Err(bad("no PFA1 magic at its start and end".into()));
    }
    let tail = bytes.len() - 12;
    let size = u32::from_le_bytes(bytes[tail..tail + 4].try_into().expect("4 bytes")) as usize;
    let flags = &bytes[tail + 4..tail + 8];
    if flags[0] & 1 != 0 {
        return Err(bad("its footer is compressed, which is not supported".into()));
    }
    let start = tail
        .checked_sub(size)
        .filter(|s| *s >= 8 && &bytes[s - 4..*s] == MAGIC)
        .ok_or_else(|| bad(format!("a footer of {size} bytes does not fit the file")))?;
    let footer: Footer =
        serde_json::from_slice(&bytes[start..tail]).map_err(|e| bad(format!("unreadable footer: {e}")))?;
    for blob in &footer.blobs {
        let end = blob.offset.checked_add(blob.length);
        if blob.offset < 4 || end.is_none_or(|end| end > (start - 4) as u64) {
            return Err(bad(format!(
                "blob {} at {} ({} bytes) lies outside the blob area",
                blob.kind, blob.offset, blob.length
            )));
        }
    }
    Ok(footer)
}

/// The bytes of `blob` in the file `bytes`.
pub fn blob<'a>(bytes: &'a [u8], blob: &BlobMetadata) -> &'a [u8] {
    &bytes[blob.offset as usize..(blob.offset + blob.length) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn golden(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/data/iceberg_spec/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn metric_blobs() -> Vec<Blob> {
        let blob = |kind: &str, field: i32, data: &[u8]| Blob {
            kind: kind.into(),
            fields: vec![field],
            snapshot_id: 2,
            sequence_number: 1,
            properties: BTreeMap::new(),
            data: data.to_vec(),
        };
        vec![
            blob("some-blob", 1, b"abcdefghi"),
            blob(
                "some-other-blob",
                2,
                "some blob \0 binary data \u{1F92F} that is not very very very very very very long, is it?".as_bytes(),
            ),
        ]
    }

    /// Byte for byte the files of Iceberg's own Puffin tests.
    #[test]
    fn golden_files_of_the_iceberg_repository() {
        let (empty, _) = write(Vec::new(), BTreeMap::new()).unwrap();
        assert_eq!(empty, golden("empty-puffin-uncompressed.bin"));
        let created = BTreeMap::from([("created-by".to_string(), "Test 1234".to_string())]);
        let (bytes, footer) = write(metric_blobs(), created).unwrap();
        let expected = golden("sample-metric-data-uncompressed.bin");
        assert_eq!(bytes, expected);
        let read = read_footer(&expected, "sample").unwrap();
        assert_eq!(read, footer);
        assert_eq!(blob(&expected, &read.blobs[0]), b"abcdefghi");
        assert_eq!(read.blobs[1].offset, 13);
        assert_eq!(read.blobs[1].length, 83);
    }

    #[test]
    fn damaged_files_are_clear_errors() {
        let good = golden("sample-metric-data-uncompressed.bin");
        let err = read_footer(&good[1..], "f").unwrap_err().to_string();
        assert!(err.contains("Puffin file f: no PFA1 magic"), "{err}");
        let mut compressed = good.clone();
        let n = compressed.len();
        compressed[n - 8] = 1;
        assert!(
            read_footer(&compressed, "c")
                .unwrap_err()
                .to_string()
                .contains("compressed")
        );
        let mut long = good.clone();
        long[n - 12..n - 8].copy_from_slice(&10_000u32.to_le_bytes());
        assert!(
            read_footer(&long, "l")
                .unwrap_err()
                .to_string()
                .contains("does not fit")
        );
    }
}
