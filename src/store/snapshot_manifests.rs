//! Older snapshots' manifests, each list in a file of its own.
//!
//! A version file lists the current snapshot's manifests inline. When a
//! commit makes another snapshot current, the snapshot it replaces gets
//! its list written once to `metadata/<prefix>-<uuid>-manifests.json`
//! (a fresh name per attempt, like the Avro manifest lists), and from then
//! on every version only names that file. Without this a table's metadata
//! grows with the square of its commits (each snapshot repeating all the
//! manifests of the table), and so does the cost of every commit.
//!
//! ```json
//! {"snapshot-id": 3055729675574597004, "manifests": [{"path": "metadata/0f3a9c1e-…-m.parquet", "length": 4213, "spec-id": 0, …}]}
//! ```
//!
//! Who reads an older snapshot (time travel, `expire_snapshots`, orphan
//! removal, the metadata tables) loads its list first with
//! [`TableLocation::load_manifests`]; [`crate::spec::Snapshot::manifests`]
//! is an error, never an empty list, for a snapshot whose list was not
//! loaded. Only snapshots with an Iceberg manifest list move out of line:
//! a legacy table's stay inline until its next commit gives them one.

use std::borrow::Cow;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use serde::{Deserialize, Serialize};

use super::location::TableLocation;
use crate::error::{Error, Result};
use crate::spec::{ManifestFile, Manifests, Snapshot, TableMetadata};

/// How many lists are read at once.
const CONCURRENT_READS: usize = 16;

/// Written from a borrowed list, read into an owned one.
#[derive(Serialize, Deserialize)]
struct ManifestsFile<'a> {
    #[serde(rename = "snapshot-id")]
    snapshot_id: i64,
    manifests: Cow<'a, [ManifestFile]>,
}

impl TableLocation {
    /// Write the list of every snapshot of `md` that is not current and has
    /// none yet (in practice the one this commit replaces), recording the
    /// file in the snapshot; the paths written are added to `written`.
    pub(crate) async fn write_manifests_files(&self, md: &mut TableMetadata, written: &mut Vec<Path>) -> Result<()> {
        let current = md.current_snapshot_id;
        let prefix = md.file_prefix.clone();
        for snapshot in md.snapshots.iter_mut() {
            if Some(snapshot.snapshot_id) == current
                || snapshot.manifests_file.is_some()
                || snapshot.manifest_list.is_none()
            {
                continue;
            }
            let Some(manifests) = snapshot.manifests.as_deref() else {
                continue;
            };
            let doc = ManifestsFile {
                snapshot_id: snapshot.snapshot_id,
                manifests: Cow::Borrowed(manifests),
            };
            let bytes = bytes::Bytes::from(serde_json::to_vec(&doc)?);
            let name = format!("{}-manifests.json", super::location::fresh_name_of(prefix.as_deref()));
            let stored = TableLocation::stored_path(["metadata", name.as_str()]);
            let path = self.resolve(&stored)?;
            self.store.put(&path, PutPayload::from(bytes.clone())).await?;
            self.cache.put_bytes(self.cache_key(&path), bytes);
            written.push(path);
            snapshot.manifests_file = Some(stored);
        }
        Ok(())
    }

    /// Load the manifests of the snapshots of `md` that `wanted` selects and
    /// whose lists are in files of their own (through the object cache).
    pub async fn load_manifests(&self, md: &mut TableMetadata, wanted: impl Fn(&Snapshot) -> bool) -> Result<()> {
        let todo: Vec<(usize, i64, String)> = md
            .snapshots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.is_loaded() && wanted(s))
            .filter_map(|(i, s)| Some((i, s.snapshot_id, s.manifests_file.clone()?)))
            .collect();
        let loaded: Vec<(usize, Manifests)> = futures::stream::iter(todo)
            .map(|(index, id, file)| async move { Ok::<_, Error>((index, self.read_manifests_file(&file, id).await?)) })
            .buffer_unordered(CONCURRENT_READS)
            .try_collect()
            .await?;
        for (index, manifests) in loaded {
            md.snapshots[index].manifests = Some(manifests);
        }
        Ok(())
    }

    /// Load the manifests of every snapshot of `md`.
    pub async fn load_all_manifests(&self, md: &mut TableMetadata) -> Result<()> {
        self.load_manifests(md, |_| true).await
    }

    /// The manifests of snapshot `id` of `md`, loaded if need be.
    pub async fn snapshot_manifests(&self, md: &TableMetadata, id: i64) -> Result<Manifests> {
        let Some(snapshot) = md.snapshot(id) else {
            return crate::format_err!("snapshot {id} is not in the table's metadata");
        };
        match (&snapshot.manifests, &snapshot.manifests_file) {
            (Some(m), _) => Ok(Arc::clone(m)),
            (None, Some(file)) => self.read_manifests_file(file, id).await,
            (None, None) => snapshot.manifests().map(|m| Arc::new(m.to_vec())),
        }
    }

    async fn read_manifests_file(&self, stored: &str, snapshot_id: i64) -> Result<Manifests> {
        let path = self.resolve(stored)?;
        let key = self.cache_key(&path);
        let parsed_key = format!("list:{key}");
        if let Some(manifests) = self.cache.manifests(&parsed_key) {
            return Ok(manifests);
        }
        let bytes = match self.cache.bytes(&key) {
            Some(b) => b,
            None => {
                let bytes = match self.store.get(&path).await {
                    Ok(r) => r.bytes().await?,
                    Err(object_store::Error::NotFound { .. }) => {
                        return crate::format_err!(
                            "the manifest list of snapshot {snapshot_id}, {path}, is missing from the table at {}",
                            self.url()
                        );
                    }
                    Err(e) => return Err(e.into()),
                };
                bytes
            }
        };
        let doc: ManifestsFile = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Format(format!("{path}: not a manifest list of this table ({e})")))?;
        if doc.snapshot_id != snapshot_id {
            return crate::format_err!(
                "{path} lists the manifests of snapshot {}, not of snapshot {snapshot_id} that names it",
                doc.snapshot_id
            );
        }
        let manifests = Arc::new(doc.manifests.into_owned());
        self.cache
            .put_manifests(parsed_key, Arc::clone(&manifests), bytes.len());
        Ok(manifests)
    }
}
