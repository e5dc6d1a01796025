//! Loading and committing table metadata versions.
//!
//! A table's history at a location is one chain of versions,
//! `metadata/v1.metadata.json`, `v2`, … Each is created with put-if-absent,
//! so of two writers racing for the same number exactly one wins; the loser
//! reloads the latest version, re-applies its change and tries again with
//! backoff. Numbers are never reused at a location: a dropped table leaves a
//! *tombstone* as its last version, and a table created there later (or a
//! `CREATE OR REPLACE`) continues the chain with a new `table-uuid`.
//!
//! Every writer is bound to the table it read (its `table-uuid`):
//!
//! | latest version when the writer commits | outcome                                   |
//! |----------------------------------------|-------------------------------------------|
//! | same `table-uuid`                      | change applied on top, committed          |
//! | another `table-uuid` (replaced)        | `TableReplaced`: nothing committed         |
//! | a tombstone (dropped)                  | `TableDropped`: nothing committed          |
//!
//! A purge deletes old versions in ascending order, which could leave a hole
//! under the tombstone that a stalled writer's put-if-absent fills. So after
//! a successful put the writer checks that the version it built on is still
//! the object it read; if not, it deletes what it just wrote and fails.
//!
//! The latest version is found from `metadata/version-hint.text` (written
//! after each commit, best effort) by probing `v<hint+1>`, `v<hint+2>`, …
//! until one is missing; without a hint the metadata directory is listed once.

use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use serde::{Deserialize, Serialize};

use super::cache::CachedVersion;
use super::connect::conditional_writes;
use super::location::TableLocation;
use crate::error::{Error, Result};
use crate::spec::TableMetadata;
use crate::spec::metadata::FORMAT_VERSION;

/// What a table version needs written beside it, just before it is put
/// (for our tables: the Iceberg manifest lists and missing twins, see
/// `table::iceberg_commit`). It may complete `md` (paths of what it wrote);
/// it runs again for each attempt, and the files it returns are deleted
/// when the attempt does not win its version.
#[async_trait::async_trait]
pub trait BeforeVersion: Send + Sync {
    async fn prepare(
        &self,
        location: &TableLocation,
        md: &mut TableMetadata,
        base: Option<(u64, &TableMetadata)>,
    ) -> Result<Vec<object_store::path::Path>>;
}

/// How many times a commit is retried after losing a race.
pub const COMMIT_RETRIES: usize = 20;

/// A loaded version of a table's metadata.
#[derive(Debug, Clone)]
pub struct Versioned {
    pub version: u64,
    pub metadata: Arc<TableMetadata>,
}

/// The last version of a dropped table: it keeps the version number taken,
/// so a writer still running when the table was dropped cannot commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tombstone {
    #[serde(rename = "format-version")]
    pub format_version: u32,
    /// The uuid of the table that was dropped.
    #[serde(rename = "table-uuid")]
    pub table_uuid: String,
    #[serde(rename = "dropped-at-ms")]
    pub dropped_at_ms: i64,
}

/// What a version file holds.
#[derive(Debug, Clone, PartialEq)]
pub enum VersionDoc {
    Table(Arc<TableMetadata>),
    Dropped(Tombstone),
}

impl VersionDoc {
    /// The bytes of a version file, and the version a reader parses from
    /// them (checked: a table a reader would refuse is never written).
    fn encode(&self) -> Result<(Vec<u8>, Self)> {
        match self {
            Self::Table(md) => {
                let (bytes, read) = crate::iceberg::json::to_checked_json(md)?;
                Ok((bytes, Self::Table(Arc::new(read))))
            }
            Self::Dropped(t) => Ok((serde_json::to_vec_pretty(t)?, self.clone())),
        }
    }

    fn from_json(bytes: &[u8]) -> Result<Self> {
        let value: serde_json::Value = serde_json::from_slice(bytes)?;
        if value.get("dropped-at-ms").is_some() {
            return Ok(Self::Dropped(serde_json::from_value(value)?));
        }
        Ok(Self::Table(Arc::new(crate::iceberg::json::parse_metadata(bytes)?)))
    }
}

/// The latest version as read: number, content, and the object's identity
/// (to check after a commit that nobody rewrote it). The content is shared
/// with the session's cache: loading a cached version copies nothing.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub version: u64,
    read: CachedVersion,
}

impl Loaded {
    pub fn doc(&self) -> &VersionDoc {
        &self.read.0
    }

    fn meta(&self) -> &ObjectMeta {
        &self.read.1
    }

    pub fn table(&self) -> Option<&TableMetadata> {
        match self.doc() {
            VersionDoc::Table(md) => Some(md),
            VersionDoc::Dropped(_) => None,
        }
    }

    /// The content, owned (a copy when the cache shares it).
    pub fn into_doc(self) -> VersionDoc {
        Arc::try_unwrap(self.read).map_or_else(|shared| shared.0.clone(), |(doc, _)| doc)
    }
}

impl TableLocation {
    /// The latest version number, or `None` when nothing was ever committed here.
    pub async fn latest_version(&self) -> Result<Option<u64>> {
        let hint = self.read_hint().await?;
        self.latest_version_from(hint).await
    }

    /// The version `version-hint.text` names (one GET), if any.
    pub async fn read_hint(&self) -> Result<Option<u64>> {
        match self.store.get(&self.version_hint()).await {
            Ok(r) => {
                let bytes = r.bytes().await?;
                Ok(std::str::from_utf8(&bytes)
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok()))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The latest version, probing forward from a hint already read: the
    /// hinted version and the next one are checked at once (one round trip
    /// when the hint is current); without a usable hint, one LIST.
    pub async fn latest_version_from(&self, hint: Option<u64>) -> Result<Option<u64>> {
        let mut version = match hint {
            Some(h) => {
                let (this_path, next_path) = (self.metadata_file(h), self.metadata_file(h + 1));
                let (this, next) = futures::join!(self.exists(&this_path), self.exists(&next_path));
                match (this?, next?) {
                    (true, false) => return Ok(Some(h)),
                    (true, true) => h + 1,
                    (false, _) => match self.list_versions().await?.into_iter().max() {
                        Some(v) => v,
                        None => return Ok(None),
                    },
                }
            }
            None => match self.list_versions().await?.into_iter().max() {
                Some(v) => v,
                None => return Ok(None),
            },
        };
        while self.exists(&self.metadata_file(version + 1)).await? {
            version += 1;
        }
        // A stale hint (its writer failed, or a commit landed late): repair
        // it for Iceberg readers, which follow it without probing.
        if hint != Some(version) {
            self.write_hint(version).await;
        }
        Ok(Some(version))
    }

    /// Point `version-hint.text` at `version`, best effort (a few tries):
    /// our readers probe past a stale hint, Iceberg readers do not.
    pub(crate) async fn write_hint(&self, version: u64) {
        for _ in 0..3 {
            let bytes = PutPayload::from(version.to_string().into_bytes());
            if self.store.put(&self.version_hint(), bytes).await.is_ok() {
                return;
            }
        }
    }

    async fn exists(&self, path: &object_store::path::Path) -> Result<bool> {
        match self.store.head(path).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The version numbers present in `metadata/` (one LIST).
    pub async fn list_versions(&self) -> Result<Vec<u64>> {
        let dir = self.metadata_dir();
        let listed: Vec<_> = self.store.list(Some(&dir)).try_collect().await?;
        Ok(listed
            .iter()
            .filter_map(|m| m.location.filename())
            .filter_map(parse_version_file)
            .collect())
    }

    async fn read_version(&self, version: u64) -> Result<Loaded> {
        let path = self.metadata_file(version);
        let key = self.cache_key(&path);
        if let Some(read) = self.cache.version(&key) {
            return Ok(Loaded { version, read });
        }
        let got = self.store.get(&path).await?;
        let meta = got.meta.clone();
        let bytes = got.bytes().await?;
        let doc = VersionDoc::from_json(&bytes).map_err(|e| Error::Format(format!("{path}: {e}")))?;
        let read = Arc::new((doc, meta));
        self.cache.put_version(key, Arc::clone(&read));
        Ok(Loaded { version, read })
    }

    /// The table metadata of `version`; an error if it is a tombstone.
    pub async fn load_version(&self, version: u64) -> Result<TableMetadata> {
        match self.read_version(version).await?.into_doc() {
            VersionDoc::Table(md) => Ok(Arc::unwrap_or_clone(md)),
            VersionDoc::Dropped(_) => Err(Error::TableNotFound(self.url())),
        }
    }

    /// The latest version, whatever it holds; `None` when there is none.
    pub async fn load_latest(&self) -> Result<Option<Loaded>> {
        let hint = match self.last_seen() {
            Some(_) => None,
            None => self.read_hint().await?,
        };
        self.load_latest_from(hint).await
    }

    /// The latest version this session saw here, if any (kept in the cache).
    pub fn last_seen(&self) -> Option<u64> {
        let bytes = self.cache.bytes(&self.last_seen_key())?;
        std::str::from_utf8(&bytes).ok()?.parse().ok()
    }

    fn last_seen_key(&self) -> String {
        format!("latest:{}", self.url())
    }

    fn remember(&self, version: u64) {
        self.cache
            .put_bytes(self.last_seen_key(), bytes::Bytes::from(version.to_string()));
    }

    /// [`Self::load_latest`] with the hint already read. When this session
    /// has seen version k here, one round trip decides: `v<k>` still there
    /// and `v<k+1>` absent means k is still the latest (versions are purged
    /// in ascending order, so a purge that took `v<k+1>` took `v<k>` first).
    pub async fn load_latest_from(&self, hint: Option<u64>) -> Result<Option<Loaded>> {
        let hint = match self.last_seen() {
            Some(k) => Some(k),
            None => hint,
        };
        let Some(version) = self.latest_version_from(hint).await? else {
            return Ok(None);
        };
        self.remember(version);
        match self.read_version(version).await {
            Ok(l) => Ok(Some(l)),
            // Purged between the probe and the read: look again.
            Err(Error::ObjectStore(object_store::Error::NotFound { .. })) => {
                let Some(version) = self.latest_version().await? else {
                    return Ok(None);
                };
                Ok(Some(self.read_version(version).await?))
            }
            Err(e) => Err(e),
        }
    }

    /// Load the latest version of a live table; `TableNotFound` when there
    /// is none or the table was dropped.
    pub async fn load(&self) -> Result<Versioned> {
        let Some(loaded) = self.load_latest().await? else {
            return Err(Error::TableNotFound(self.url()));
        };
        let version = loaded.version;
        match loaded.into_doc() {
            VersionDoc::Table(metadata) => Ok(Versioned { version, metadata }),
            VersionDoc::Dropped(_) => Err(Error::TableNotFound(self.url())),
        }
    }

    /// Write `version` if nobody else has; `Ok(false)` when someone else did.
    ///
    /// A request can take effect although its response is lost (then a
    /// retry sees "already exists", or an error comes back), and one that
    /// timed out can still land later. So the version is read back: exactly
    /// our bytes mean it is ours. The read-back can only prove success: when
    /// the put failed with anything but a definite "already exists" and the
    /// version does not hold our bytes (yet), the outcome is unknown
    /// (`CommitUnknown`) and the writer must keep its files. When ours,
    /// returns the version as a reader parses it.
    async fn try_write_version(&self, version: u64, doc: &VersionDoc, conditional: bool) -> Result<Option<VersionDoc>> {
        let (bytes, read) = doc.encode()?;
        let won = self
            .try_put_version(&self.metadata_file(version), bytes, conditional)
            .await?;
        Ok(won.then_some(read))
    }

    /// [`Self::try_write_version`] for the bytes of any metadata file.
    pub(crate) async fn try_put_version(
        &self,
        path: &object_store::path::Path,
        bytes: Vec<u8>,
        conditional: bool,
    ) -> Result<bool> {
        let path = path.clone();
        let mode = if conditional {
            PutMode::Create
        } else {
            // Single-writer mode: nobody else writes, a check suffices.
            if self.exists(&path).await? {
                return Ok(false);
            }
            PutMode::Overwrite
        };
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        match self.store.put_opts(&path, PutPayload::from(bytes.clone()), opts).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) => match self.read_back(&path, &bytes).await {
                Ok(ReadBack::Ours) => Ok(true),
                Ok(_) => Ok(false),
                Err(e) => Err(self.unknown(&e)),
            },
            Err(e) => match self.read_back(&path, &bytes).await {
                Ok(ReadBack::Ours) => Ok(true),
                // Another writer's version: ours can never land there.
                Ok(ReadBack::Theirs) => Ok(false),
                // Not there yet: the put may still land (a late success).
                Ok(ReadBack::Absent) | Err(_) => Err(self.unknown(&e)),
            },
        }
    }

    /// What `path` holds compared with the `bytes` a writer put there.
    async fn read_back(&self, path: &object_store::path::Path, bytes: &[u8]) -> Result<ReadBack> {
        let found = match self.store.get(path).await {
            Ok(r) => r.bytes().await?,
            Err(object_store::Error::NotFound { .. }) => return Ok(ReadBack::Absent),
            Err(e) => return Err(e.into()),
        };
        Ok(if found.as_ref() == bytes {
            ReadBack::Ours
        } else {
            ReadBack::Theirs
        })
    }

    pub(crate) fn unknown(&self, cause: &dyn std::fmt::Display) -> Error {
        Error::CommitUnknown {
            table: self.url(),
            detail: cause.to_string(),
        }
    }

    /// After winning `version` with `doc`: check the base (see
    /// [`Self::verify_base`]), then keep `doc` in the cache as the version
    /// a reader would load (its object identity from a HEAD run alongside
    /// the check), point the hint at it and remember it.
    async fn settle(&self, base: Option<(u64, &ObjectMeta)>, version: u64, doc: VersionDoc) -> Result<()> {
        let path = self.metadata_file(version);
        let (verified, head) = futures::join!(self.verify_base(base, version), self.store.head(&path));
        verified?;
        // Without its identity the version is not cached: its next reader reads it.
        if let Ok(meta) = head {
            self.cache.put_version(self.cache_key(&path), Arc::new((doc, meta)));
        }
        self.committed(version).await;
        Ok(())
    }

    /// After winning `version`, check that the version built on is still the
    /// object that was read. If it was purged (and so `version` filled a
    /// hole under a newer tombstone), take back what was written.
    async fn verify_base(&self, base: Option<(u64, &ObjectMeta)>, version: u64) -> Result<()> {
        let Some((base_version, base_meta)) = base else {
            return Ok(());
        };
        let intact = match self.store.head(&self.metadata_file(base_version)).await {
            Ok(meta) => same_object(&meta, base_meta),
            Err(object_store::Error::NotFound { .. }) => false,
            Err(e) => return Err(self.unknown(&e)),
        };
        if intact {
            return Ok(());
        }
        // Only once the version is gone may the writer delete its files.
        match self.store.delete(&self.metadata_file(version)).await {
            Ok(()) => Err(Error::TableReplaced(self.url())),
            Err(e) => Err(self.unknown(&e)),
        }
    }

    /// The core of every commit: `build` makes the next version from the
    /// latest one (or from nothing); it is called again after a lost race.
    /// A table version gets `before`'s files first (a tombstone needs none).
    pub async fn commit_doc<F>(&self, before: Option<&dyn BeforeVersion>, mut build: F) -> Result<(u64, VersionDoc)>
    where
        F: FnMut(Option<&Loaded>) -> Result<VersionDoc>,
    {
        let conditional = self.conditional_commits().await?;
        let mut backoff = Duration::from_millis(5);
        for _ in 0..COMMIT_RETRIES {
            let base = self.load_latest().await?;
            let mut next = build(base.as_ref())?;
            let version = base.as_ref().map_or(1, |b| b.version + 1);
            let written = match &mut next {
                VersionDoc::Table(md) => {
                    let Some(before) = before else {
                        return Err(Error::Invalid(format!(
                            "a table version at {} must be committed with the files it needs beside it",
                            self.url()
                        )));
                    };
                    let previous = base.as_ref().and_then(|b| b.table().map(|t| (b.version, t)));
                    before.prepare(self, Arc::make_mut(md), previous).await?
                }
                VersionDoc::Dropped(_) => Vec::new(),
            };
            let won = match self.try_write_version(version, &next, conditional).await {
                Ok(won) => won,
                // Unknown: the version may still land and reference them.
                Err(e @ Error::CommitUnknown { .. }) => return Err(e),
                Err(e) => {
                    self.delete_quietly(written).await;
                    return Err(e);
                }
            };
            if let Some(read) = won {
                self.settle(base.as_ref().map(|b| (b.version, b.meta())), version, read)
                    .await?;
                return Ok((version, next));
            }
            self.delete_quietly(written).await;
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(500));
        }
        Err(self.gave_up())
    }

    /// Whether commits here are put-if-absent; an error when the store
    /// cannot do that and the table is not single-writer.
    pub(crate) async fn conditional_commits(&self) -> Result<bool> {
        let conditional =
            conditional_writes(&self.place(), self.store.as_ref(), &self.metadata_dir(), &self.cache).await?;
        if !conditional && !self.single_writer {
            return Err(Error::Invalid(format!(
                "the store of {} does not support conditional writes (put-if-absent), which commits need so that concurrent writers cannot overwrite each other's versions; use a store that does, or, if only one process ever writes to this table, set the storage option single_writer=true",
                self.url()
            )));
        }
        Ok(conditional)
    }

    /// After winning `version`: the hint and this session's memory of it.
    async fn committed(&self, version: u64) {
        self.write_hint(version).await;
        self.remember(version);
    }

    fn gave_up(&self) -> Error {
        Error::CommitConflict {
            table: self.url(),
            detail: format!("gave up after {COMMIT_RETRIES} attempts; other writers keep winning"),
        }
    }

    /// Commit a tombstone over a latest version that cannot be read (a
    /// damaged table: `DROP TABLE` is its way out). The only commit that
    /// does not build on what it read; it still takes the next number with
    /// put-if-absent and checks its base afterwards. Returns the
    /// tombstone's version; `None` when the latest version can be read
    /// (now) or there is none: then the caller looks again.
    pub async fn drop_unreadable(&self) -> Result<Option<u64>> {
        let conditional = self.conditional_commits().await?;
        let mut backoff = Duration::from_millis(5);
        for _ in 0..COMMIT_RETRIES {
            let Some(version) = self.latest_version().await? else {
                return Ok(None);
            };
            let got = match self.store.get(&self.metadata_file(version)).await {
                Ok(got) => got,
                Err(object_store::Error::NotFound { .. }) => continue,
                Err(e) => return Err(e.into()),
            };
            let meta = got.meta.clone();
            let bytes = got.bytes().await?;
            if VersionDoc::from_json(&bytes).is_ok() {
                return Ok(None);
            }
            // The dropped table's uuid, when even that much can be read.
            let table_uuid = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| v.get("table-uuid")?.as_str().map(str::to_string))
                .unwrap_or_default();
            let tombstone = VersionDoc::Dropped(Tombstone {
                format_version: FORMAT_VERSION,
                table_uuid,
                dropped_at_ms: chrono::Utc::now().timestamp_millis(),
            });
            if let Some(read) = self.try_write_version(version + 1, &tombstone, conditional).await? {
                self.settle(Some((version, &meta)), version + 1, read).await?;
                return Ok(Some(version + 1));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(500));
        }
        Err(self.gave_up())
    }

    /// Create a table; fails if a live table is already here (a dropped
    /// one's chain is continued).
    pub async fn create(&self, metadata: &TableMetadata, before: &dyn BeforeVersion) -> Result<Versioned> {
        let (version, _) = self
            .commit_doc(Some(before), |base| match base.and_then(Loaded::table) {
                Some(_) => Err(Error::TableExists(format!("a table already exists at {}", self.url()))),
                None => Ok(VersionDoc::Table(Arc::new(metadata.clone()))),
            })
            .await?;
        Ok(Versioned {
            version,
            metadata: Arc::new(metadata.clone()),
        })
    }

    /// Commit a change to the table whose uuid is `table_uuid`: `apply`
    /// builds the next metadata from the latest one. It is called again on
    /// top of a newer version after a lost race, so it must be a pure
    /// function of its input (it may fail to refuse a conflict).
    pub async fn commit<F>(&self, table_uuid: &str, before: &dyn BeforeVersion, mut apply: F) -> Result<Versioned>
    where
        F: FnMut(&TableMetadata) -> Result<TableMetadata>,
    {
        let (version, doc) = self
            .commit_doc(Some(before), |base| match base.map(Loaded::doc) {
                Some(VersionDoc::Table(md)) if md.table_uuid == table_uuid => {
                    apply(md).map(|md| VersionDoc::Table(Arc::new(md)))
                }
                Some(VersionDoc::Table(_)) => Err(Error::TableReplaced(self.url())),
                _ => Err(Error::TableDropped(self.url())),
            })
            .await?;
        match doc {
            VersionDoc::Table(metadata) => Ok(Versioned { version, metadata }),
            VersionDoc::Dropped(_) => Err(Error::TableDropped(self.url())),
        }
    }

    /// Commit `metadata` (a new table) in place of whatever table is here.
    /// Returns the new version and the table it replaced, if any.
    pub async fn replace(
        &self,
        metadata: &TableMetadata,
        before: &dyn BeforeVersion,
    ) -> Result<(Versioned, Option<Versioned>)> {
        let mut replaced = None;
        let (version, _) = self
            .commit_doc(Some(before), |base| {
                replaced = base.and_then(|b| {
                    b.table().map(|md| Versioned {
                        version: b.version,
                        metadata: Arc::new(md.clone()),
                    })
                });
                Ok(VersionDoc::Table(Arc::new(metadata.clone())))
            })
            .await?;
        let new = Versioned {
            version,
            metadata: Arc::new(metadata.clone()),
        };
        Ok((new, replaced))
    }

    /// Commit a tombstone over the live table here. Returns the tombstone's
    /// version and the table it ended, or `None` when there was no live table.
    pub async fn drop_table(&self) -> Result<Option<(u64, Versioned)>> {
        let mut dropped = None;
        let result = self
            .commit_doc(None, |base| {
                let Some((version, md)) = base.and_then(|b| b.table().map(|md| (b.version, md))) else {
                    return Err(Error::TableNotFound(self.url()));
                };
                dropped = Some(Versioned {
                    version,
                    metadata: Arc::new(md.clone()),
                });
                Ok(VersionDoc::Dropped(Tombstone {
                    format_version: FORMAT_VERSION,
                    table_uuid: md.table_uuid.clone(),
                    dropped_at_ms: chrono::Utc::now().timestamp_millis(),
                }))
            })
            .await;
        match result {
            Ok((version, _)) => Ok(dropped.map(|d| (version, d))),
            Err(Error::TableNotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// A version read back after a put.
enum ReadBack {
    Ours,
    Theirs,
    Absent,
}

/// `v<N>.metadata.json` → N.
pub fn parse_version_file(name: &str) -> Option<u64> {
    let digits = name.strip_prefix('v')?.strip_suffix(".metadata.json")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn same_object(a: &ObjectMeta, b: &ObjectMeta) -> bool {
    match (&a.e_tag, &b.e_tag) {
        (Some(x), Some(y)) => x == y,
        _ => a.size == b.size && a.last_modified == b.last_modified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_file_names() {
        assert_eq!(parse_version_file("v12.metadata.json"), Some(12));
        assert_eq!(parse_version_file("v.metadata.json"), None);
        assert_eq!(parse_version_file("v+1.metadata.json"), None);
        assert_eq!(parse_version_file("x1.metadata.json"), None);
    }
}

/// Write `payload` at `path` unless something is there already (then
/// `false`). With `single_writer` a HEAD stands in for the condition.
pub async fn put_if_absent(
    store: &dyn object_store::ObjectStore,
    path: &object_store::path::Path,
    payload: object_store::PutPayload,
    single_writer: bool,
) -> crate::error::Result<bool> {
    use object_store::ObjectStoreExt as _;
    if single_writer {
        match store.head(path).await {
            Ok(_) => return Ok(false),
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        store.put(path, payload).await?;
        return Ok(true);
    }
    let opts = object_store::PutOptions {
        mode: object_store::PutMode::Create,
        ..Default::default()
    };
    match store.put_opts(path, payload, opts).await {
        Ok(_) => Ok(true),
        Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
