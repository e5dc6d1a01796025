//! Where an Iceberg table's current metadata file is recorded, and how a
//! commit moves it: the one thing that differs between catalogs.
//!
//! | pointer            | current metadata file                          | a commit                                        |
//! |--------------------|------------------------------------------------|-------------------------------------------------|
//! | [`DirectoryPointer`] | the highest `v<N>.metadata.json` (hint first) | `v<N+1>.metadata.json` put-if-absent, then the hint |
//! | SQL catalog        | `metadata_location` of the table's row          | a new file, then `UPDATE … WHERE metadata_location = <old>` |
//! | REST catalog       | `metadata-location` of the loaded table         | `POST` of the change as requirements and updates |
//!
//! A commit either wins (the new file is current), loses to another
//! commit (`Ok(None)`: the writer reloads and tries again), or cannot say
//! (`CommitUnknown`: the writer keeps its files).

use std::fmt::Debug;

use async_trait::async_trait;
use object_store::ObjectStoreExt;
use object_store::path::Path;
use serde_json::Value as Json;

use super::metadata::{current_metadata_file, location_url};
use crate::error::{Error, Result};
use crate::iceberg::metadata::metadata_version;
use crate::store::TableLocation;

/// The current metadata file of a table and its number (for telling newer
/// versions apart).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Current {
    pub file: Path,
    pub version: u64,
}

/// A commit to make: the metadata document before and after.
#[derive(Debug)]
pub struct NextMetadata<'a> {
    pub before: &'a Json,
    pub after: &'a Json,
    pub bytes: Vec<u8>,
}

/// How a table's metadata is found and moved.
#[async_trait]
pub trait MetadataPointer: Debug + Send + Sync {
    /// The current metadata file.
    async fn current(&self, table: &TableLocation) -> Result<Current>;

    /// Make `next` the version after `latest`; `Ok(None)` when another
    /// commit moved the table first.
    async fn commit(&self, table: &TableLocation, latest: &Current, next: NextMetadata<'_>) -> Result<Option<Current>>;

    /// Whether the catalog applies a commit itself (a REST catalog: it
    /// checks the change and writes the metadata file), so that a table of
    /// ours behind it is written safely through it. A pointer that writes
    /// the file (a directory, a SQL catalog) would fork a table of ours
    /// from its own writers: those are refused.
    fn catalog_commits(&self) -> bool {
        false
    }

    /// Why a commit through this pointer would fork the table whose current
    /// metadata file is `current`, if it would.
    fn forks(&self, _current: &Path) -> Option<String> {
        None
    }
}

/// A table in a directory of its own (Hadoop style): `metadata/v<N>.metadata.json`.
#[derive(Debug, Default)]
pub struct DirectoryPointer;

#[async_trait]
impl MetadataPointer for DirectoryPointer {
    /// From the hint (or the highest number), then `v<N+1>`, `v<N+2>`, …
    /// while they exist (a hint can lag).
    async fn current(&self, table: &TableLocation) -> Result<Current> {
        let mut file = current_metadata_file(table).await?;
        let mut version = file.filename().and_then(metadata_version).ok_or_else(|| {
            Error::Invalid(format!(
                "Iceberg metadata file {} has no version number in its name",
                location_url(table, &file)
            ))
        })?;
        loop {
            let next = table.metadata_file(version + 1);
            match table.store.head(&next).await {
                Ok(_) => {
                    version += 1;
                    file = next;
                }
                Err(object_store::Error::NotFound { .. }) => return Ok(Current { file, version }),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// A table whose metadata files are named as catalogs name them
    /// (`00002-<uuid>.metadata.json`, not `v2.metadata.json`) has its
    /// current file recorded by a catalog, which a new `v<N>` file and hint
    /// would not move: the catalog's writers and ours would each go on from
    /// their own version.
    fn forks(&self, current: &Path) -> Option<String> {
        let name = current.filename()?;
        if name.starts_with('v') && metadata_version(name).is_some() {
            return None;
        }
        Some(format!(
            "its metadata files are named as a catalog names them ({name}), so a catalog (such as pyiceberg's SqlCatalog, a REST catalog or Glue) records which one is current, and a write by directory would fork its history; write to it through its catalog (--catalog sqlite:FILE | postgresql://… | http://…)"
        ))
    }

    async fn commit(&self, table: &TableLocation, latest: &Current, next: NextMetadata<'_>) -> Result<Option<Current>> {
        let conditional = table.conditional_commits().await?;
        let version = latest.version + 1;
        let file = table.metadata_file(version);
        match table.try_put_version(&file, next.bytes, conditional).await? {
            true => {
                table.write_hint(version).await;
                Ok(Some(Current { file, version }))
            }
            false => Ok(None),
        }
    }
}
