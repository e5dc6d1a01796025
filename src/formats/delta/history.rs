//! Every version of a Delta table's log, for `"t$snapshots"`.
//!
//! One LIST of `_delta_log/` finds the commits (`<20-digit version>.json`);
//! each commit's `commitInfo` gives its operation and, with in-commit
//! timestamps, its time. Otherwise a commit's time is its file's
//! modification time, as the Delta protocol defines it. Versions whose
//! commit files were cleaned up after a checkpoint are no longer listed.
//!
//! | `_delta_log/` object         | row of `$snapshots`                                  |
//! |------------------------------|------------------------------------------------------|
//! | `00000000000000000003.json`  | snapshot_id 3, parent 2, operation `WRITE` (`commitInfo.operation`, lower-cased) |
//! | `…checkpoint.parquet`, `_last_checkpoint` | nothing (state, not a version)          |

use std::collections::BTreeMap;

use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStoreExt;

use crate::error::Result;
use crate::spec::Snapshot;
use crate::store::TableLocation;

/// Summary key of a version whose commit changed the table's metadata.
pub const METADATA_CHANGED: &str = "delta-metadata-changed";

/// One commit of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogCommit {
    pub version: u64,
    pub timestamp_ms: i64,
    /// `commitInfo.operation` (e.g. `WRITE`, `DELETE`, `MERGE`), if recorded.
    pub operation: Option<String>,
    /// Whether the commit has a `metaData` action (schema, partitioning or
    /// table properties such as `delta.enableChangeDataFeed` changed).
    pub metadata: bool,
}

/// The commits of the log at `location` up to `last` (inclusive), oldest first.
pub async fn commits(location: &TableLocation, last: u64) -> Result<Vec<LogCommit>> {
    let log = location.root.clone().join("_delta_log");
    let listed: Vec<object_store::ObjectMeta> = location.store.list(Some(&log)).try_collect().await?;
    let mut found: Vec<(u64, object_store::ObjectMeta)> = listed
        .into_iter()
        .filter_map(|meta| {
            let name = meta.location.filename()?;
            let digits = name.strip_suffix(".json")?;
            (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| digits.parse::<u64>().ok())
                .flatten()
                .filter(|v| *v <= last)
                .map(|v| (v, meta))
        })
        .collect();
    found.sort_by_key(|(v, _)| *v);
    let store = &location.store;
    futures::stream::iter(found)
        .map(|(version, meta)| async move {
            let bytes = store.get(&meta.location).await?.bytes().await?;
            let info = commit_info(&bytes);
            Ok::<_, crate::error::Error>(LogCommit {
                version,
                timestamp_ms: info
                    .as_ref()
                    .and_then(|i| i.get("inCommitTimestamp").and_then(|t| t.as_i64()))
                    .unwrap_or_else(|| meta.last_modified.timestamp_millis()),
                operation: info
                    .as_ref()
                    .and_then(|i| i.get("operation").and_then(|o| o.as_str()))
                    .map(str::to_string),
                metadata: has_metadata(&bytes),
            })
        })
        .buffered(16)
        .try_collect()
        .await
}

/// The `commitInfo` action of a commit file (one JSON action per line).
fn commit_info(bytes: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    bytes.split(|b| *b == b'\n').find_map(|line| {
        let action: serde_json::Value = serde_json::from_slice(line).ok()?;
        action.get("commitInfo")?.as_object().cloned()
    })
}

/// Whether a commit file has a `metaData` action.
fn has_metadata(bytes: &[u8]) -> bool {
    bytes.split(|b| *b == b'\n').any(|line| {
        serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|action| action.get("metaData").is_some())
    })
}

/// The snapshots `$snapshots` lists: one per commit, the current one (`current`,
/// with its manifests) as the table has it.
pub fn snapshots(commits: &[LogCommit], current: &Snapshot) -> Vec<Snapshot> {
    commits
        .iter()
        .map(|c| {
            let version = c.version as i64;
            if version == current.snapshot_id {
                let mut current = current.clone();
                if c.metadata {
                    std::sync::Arc::make_mut(&mut current.summary)
                        .insert(METADATA_CHANGED.to_string(), "true".to_string());
                }
                return current;
            }
            let mut summary = BTreeMap::from([("delta-version".to_string(), version.to_string())]);
            if let Some(op) = &c.operation {
                summary.insert("delta-operation".to_string(), op.clone());
            }
            if c.metadata {
                summary.insert(METADATA_CHANGED.to_string(), "true".to_string());
            }
            Snapshot {
                snapshot_id: version,
                parent_snapshot_id: (version > 0).then(|| version - 1),
                sequence_number: version,
                timestamp_ms: c.timestamp_ms,
                operation: "delta".to_string(),
                summary: summary.into(),
                // Only the version read lists its files (as a snapshot of its own).
                manifests: None,
                manifests_file: None,
                table_spec_id: None,
                manifest_list: None,
                first_row_id: None,
                added_rows: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::commit_info;

    #[test]
    fn reads_the_commit_info_line() {
        let commit = b"{\"protocol\":{\"minReaderVersion\":1}}\n{\"commitInfo\":{\"timestamp\":5,\"operation\":\"WRITE\"}}\n{\"add\":{}}\n";
        let info = commit_info(commit).unwrap();
        assert_eq!(info["operation"], "WRITE");
        assert!(commit_info(b"{\"add\":{}}\n").is_none());
        assert!(!super::has_metadata(commit));
        assert!(super::has_metadata(b"{\"metaData\":{\"id\":\"x\"}}\n{\"add\":{}}\n"));
    }
}
