//! A snapshot's manifest list (Avro): one record per manifest.
//!
//! | id  | field               | used for                                            |
//! |-----|---------------------|-----------------------------------------------------|
//! | 500 | manifest_path       | where the manifest is (absolute, rebased)           |
//! | 502 | partition_spec_id   | the spec its entries are pruned with                |
//! | 517 | content             | 0 data, 1 deletes (v2; absent in v1 = data)         |
//! | 515 | sequence_number     | inherited by ADDED entries that carry none          |
//! | 504–506, 512–513 | file and row counts | `files=S/T` when a manifest is skipped whole |
//! | 507 | partitions          | per partition field: contains_null/nan, bounds → summary pruning |

use super::avro_records::{AvroFile, RecordIds};
use crate::error::Result;

/// One partition field's summary over a manifest (bounds in single-value binary).
#[derive(Debug, Clone, PartialEq)]
pub struct RawFieldSummary {
    pub contains_null: bool,
    /// `None` when the writer did not record it.
    pub contains_nan: Option<bool>,
    pub lower: Option<Vec<u8>>,
    pub upper: Option<Vec<u8>>,
}

/// A manifest as the manifest list describes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ManifestEntryFile {
    pub path: String,
    pub length: i64,
    pub spec_id: i32,
    /// 0 data, 1 deletes.
    pub content: i32,
    pub sequence_number: i64,
    pub added_snapshot_id: i64,
    pub files: Option<i64>,
    pub rows: Option<i64>,
    pub partitions: Option<Vec<RawFieldSummary>>,
    /// The rest of the record, kept so that a commit of ours can list the
    /// manifest again exactly as it was listed.
    pub min_sequence_number: i64,
    /// Added, existing, deleted files; then the same for rows.
    pub counts: [Option<i64>; 6],
    pub key_metadata: Option<Vec<u8>>,
    /// Iceberg v3: the first row id its files without one inherit from.
    pub first_row_id: Option<i64>,
}

/// Decode a manifest list; `what` names it for errors.
pub fn read_manifest_list(bytes: &[u8], what: &str) -> Result<Vec<ManifestEntryFile>> {
    let file = AvroFile::decode(bytes, what)?;
    let ids = RecordIds::of(&file.schema, what)?;
    let summary_ids = match ids.schema(507) {
        Some(apache_avro::Schema::Array(a)) => RecordIds::of(&a.items, what)?,
        _ => RecordIds::default(),
    };
    let mut out = Vec::with_capacity(file.records.len());
    for r in &file.records {
        let Some(path) = ids.string(r, 500) else {
            return crate::format_err!("{what}: a manifest record has no manifest_path (field 500)");
        };
        let sum = |a: i32, b: i32| match (ids.long(r, a), ids.long(r, b)) {
            (Some(x), Some(y)) => Some(x + y),
            _ => None,
        };
        let partitions = match ids.get(r, 507) {
            Some(apache_avro::types::Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|s| RawFieldSummary {
                        contains_null: summary_ids.boolean(s, 509).unwrap_or(true),
                        contains_nan: summary_ids.boolean(s, 518),
                        lower: summary_ids.bytes(s, 510).map(<[u8]>::to_vec),
                        upper: summary_ids.bytes(s, 511).map(<[u8]>::to_vec),
                    })
                    .collect(),
            ),
            _ => None,
        };
        out.push(ManifestEntryFile {
            path: path.to_string(),
            length: ids.long(r, 501).unwrap_or(0),
            spec_id: ids.int(r, 502).unwrap_or(0),
            content: ids.int(r, 517).unwrap_or(0),
            sequence_number: ids.long(r, 515).unwrap_or(0),
            added_snapshot_id: ids.long(r, 503).unwrap_or(0),
            files: sum(504, 505),
            rows: sum(512, 513),
            partitions,
            min_sequence_number: ids.long(r, 516).unwrap_or(0),
            counts: [504, 505, 506, 512, 513, 514].map(|id| ids.long(r, id)),
            key_metadata: ids.bytes(r, 519).map(<[u8]>::to_vec),
            first_row_id: ids.long(r, 520),
        });
    }
    Ok(out)
}
