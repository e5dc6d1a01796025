//! Loading and committing table metadata versions.
//!
//! A commit writes `metadata/v<N+1>.metadata.json` with put-if-absent, so of
//! two writers racing for the same version exactly one wins. The loser
//! reloads the latest version, re-applies its change on top (appends never
//! conflict: they only add a manifest) and tries again with backoff.
//!
//! The latest version is found from `metadata/version-hint.text` (written
//! after each commit, best effort) by probing `v<hint+1>`, `v<hint+2>`, … until
//! one is missing; without a hint the metadata directory is listed once.

use std::time::Duration;

use futures::TryStreamExt;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use super::location::TableLocation;
use crate::error::{Error, Result};
use crate::spec::TableMetadata;

/// How many times a commit is retried after losing a race.
pub const COMMIT_RETRIES: usize = 20;

/// A loaded version of a table's metadata.
#[derive(Debug, Clone)]
pub struct Versioned {
    pub version: u64,
    pub metadata: TableMetadata,
}

impl TableLocation {
    /// The latest committed version, or `None` when the table does not exist.
    pub async fn latest_version(&self) -> Result<Option<u64>> {
        let hint = match self.store.get(&self.version_hint()).await {
            Ok(r) => {
                let bytes = r.bytes().await?;
                std::str::from_utf8(&bytes)
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok())
            }
            Err(object_store::Error::NotFound { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        let mut version = match hint {
            Some(v) if self.exists(&self.metadata_file(v)).await? => v,
            _ => match self.list_versions().await? {
                Some(v) => v,
                None => return Ok(None),
            },
        };
        while self.exists(&self.metadata_file(version + 1)).await? {
            version += 1;
        }
        Ok(Some(version))
    }

    async fn exists(&self, path: &object_store::path::Path) -> Result<bool> {
        match self.store.head(path).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    async fn list_versions(&self) -> Result<Option<u64>> {
        let dir = self.metadata_dir();
        let listed: Vec<_> = self.store.list(Some(&dir)).try_collect().await?;
        Ok(listed
            .iter()
            .filter_map(|m| m.location.filename())
            .filter_map(|name| {
                name.strip_prefix('v')?
                    .strip_suffix(".metadata.json")?
                    .parse::<u64>()
                    .ok()
            })
            .max())
    }

    pub async fn load_version(&self, version: u64) -> Result<TableMetadata> {
        let bytes = self.store.get(&self.metadata_file(version)).await?.bytes().await?;
        TableMetadata::from_json(&bytes).map_err(|e| Error::Format(format!("{}: {e}", self.metadata_file(version))))
    }

    /// Load the latest version; `TableNotFound` when there is none.
    pub async fn load(&self) -> Result<Versioned> {
        let Some(version) = self.latest_version().await? else {
            return Err(Error::TableNotFound(self.url()));
        };
        Ok(Versioned {
            version,
            metadata: self.load_version(version).await?,
        })
    }

    /// Write version `version` if nobody else has. `Ok(false)` when it already exists.
    pub async fn try_write_version(&self, version: u64, metadata: &TableMetadata) -> Result<bool> {
        let payload = PutPayload::from(metadata.to_json()?);
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self.store.put_opts(&self.metadata_file(version), payload, opts).await {
            Ok(_) => {
                // Best effort: a stale hint only costs extra probes.
                let _ = self
                    .store
                    .put(&self.version_hint(), PutPayload::from(version.to_string().into_bytes()))
                    .await;
                Ok(true)
            }
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Create the table's first version; fails if the table already exists.
    pub async fn create(&self, metadata: &TableMetadata) -> Result<Versioned> {
        if self.latest_version().await?.is_some() || !self.try_write_version(1, metadata).await? {
            return Err(Error::TableExists(self.url()));
        }
        Ok(Versioned {
            version: 1,
            metadata: metadata.clone(),
        })
    }

    /// Commit a change: `apply` builds the next metadata from the latest one.
    /// It is called again on top of a newer version after a lost race, so it
    /// must be a pure function of its input (it may fail to refuse a conflict).
    pub async fn commit<F>(&self, mut apply: F) -> Result<Versioned>
    where
        F: FnMut(&TableMetadata) -> Result<TableMetadata>,
    {
        let mut backoff = Duration::from_millis(5);
        for _ in 0..COMMIT_RETRIES {
            let base = self.load().await?;
            let next = apply(&base.metadata)?;
            let version = base.version + 1;
            if self.try_write_version(version, &next).await? {
                return Ok(Versioned {
                    version,
                    metadata: next,
                });
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(500));
        }
        Err(Error::CommitConflict {
            table: self.url(),
            detail: format!("gave up after {COMMIT_RETRIES} attempts; other writers keep winning"),
        })
    }
}
