//! Deleting what a table owns — and nothing else.
//!
//! A table owns exactly the files its metadata names, plus its metadata
//! versions. Files that merely sit under its location (a user's notes, a
//! file left by a crashed writer, another tool's output) are never touched
//! here, whatever their name or age.
//!
//! | owned                  | known from                                            |
//! |------------------------|-------------------------------------------------------|
//! | data files             | the manifests of every snapshot in the metadata       |
//! | manifests              | the manifest lists of every snapshot                  |
//! | Iceberg files          | each manifest's Avro twin, each snapshot's `manifest-list` |
//! | metadata versions      | `metadata/v<N>.metadata.json` for N up to the last version of the table |
//!
//! Used by `DROP TABLE` (warehouse tables, or `PURGE`) and by
//! `CREATE OR REPLACE TABLE` on the table it replaced. Versions are deleted
//! in ascending order (see `store::commit` for why that matters).

use std::collections::BTreeSet;

use datafusion::arrow::array::AsArray;
use futures::StreamExt;
use object_store::path::Path;

use crate::error::Result;
use crate::manifest::format::PATH;
use crate::manifest::read_manifest;
use crate::spec::TableMetadata;
use crate::store::TableLocation;

/// What a purge deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeReport {
    pub data_files: usize,
    pub manifests: usize,
    pub versions: usize,
}

/// The files referenced by any snapshot of `md`.
#[derive(Debug, Default)]
pub struct Referenced {
    pub data: Vec<Path>,
    pub manifests: Vec<Path>,
    /// Manifest twins and manifest lists (Avro), the table's Iceberg side,
    /// and older snapshots' manifests files (`store::snapshot_manifests`).
    pub iceberg: Vec<Path>,
}

/// The data files, manifests and Iceberg files referenced by any snapshot
/// of `md` (whose older snapshots' manifests are loaded for it).
pub async fn referenced_files(location: &TableLocation, md: &TableMetadata) -> Result<Referenced> {
    let mut md = md.clone();
    location.load_all_manifests(&mut md).await?;
    let md = &md;
    let mut manifests = BTreeSet::new();
    let mut iceberg = BTreeSet::new();
    let mut listed = Vec::new();
    for snapshot in &md.snapshots {
        if let Some(list) = &snapshot.manifest_list {
            iceberg.insert(location.from_iceberg_path(list)?);
        }
        if let Some(file) = &snapshot.manifests_file {
            iceberg.insert(location.resolve(file)?);
        }
        for m in snapshot.manifests()? {
            if manifests.insert(m.path.clone()) {
                if let Some(twin) = &m.iceberg {
                    iceberg.insert(location.resolve(&twin.path)?);
                }
                listed.push(m.clone());
            }
        }
    }
    let columns = [PATH.to_string()];
    let mut data = BTreeSet::new();
    for m in &listed {
        let spec = md.spec(m.spec_id)?;
        let batch = read_manifest(location, m, spec, Some(&columns)).await?;
        let paths = batch.column(0).as_string::<i32>();
        for p in paths.iter().flatten() {
            data.insert(location.resolve(p)?);
        }
    }
    let manifests = manifests
        .iter()
        .map(|p| location.resolve(p))
        .collect::<Result<Vec<_>>>()?;
    Ok(Referenced {
        data: data.into_iter().collect(),
        manifests,
        iceberg: iceberg.into_iter().collect(),
    })
}

/// Delete `paths` (missing ones are fine), many at a time where the store can.
pub async fn delete_all(location: &TableLocation, paths: Vec<Path>) -> Result<usize> {
    let n = paths.len();
    if n == 0 {
        return Ok(0);
    }
    let input = futures::stream::iter(paths.into_iter().map(Ok)).boxed();
    let mut results = location.store.delete_stream(input);
    while let Some(r) = results.next().await {
        match r {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}

/// Delete everything table `md` owns; `last_version` is the table's last
/// metadata version (versions above it belong to whoever ended the table).
/// Directories stay: a table replaced in place has writers in them (a DROP
/// then calls [`remove_empty_dirs`]).
pub async fn purge(location: &TableLocation, md: &TableMetadata, last_version: u64) -> Result<PurgeReport> {
    let referenced = referenced_files(location, md).await?;
    let mut report = PurgeReport {
        data_files: delete_all(location, referenced.data).await?,
        manifests: delete_all(location, referenced.manifests).await?,
        versions: 0,
    };
    delete_all(location, referenced.iceberg).await?;
    let mut versions: Vec<u64> = location
        .list_versions()
        .await?
        .into_iter()
        .filter(|&v| v <= last_version)
        .collect();
    versions.sort_unstable();
    for v in versions {
        match object_store::ObjectStoreExt::delete(location.store.as_ref(), &location.metadata_file(v)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => report.versions += 1,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(report)
}

/// On a local file system, remove the directories a purge left empty under
/// the table's `data/` (and `data/` itself). Object stores have no
/// directories. Never goes above `data/`; best effort.
pub fn remove_empty_dirs(location: &TableLocation) {
    if let Some(dir) = location.local_dir() {
        remove_empty_below(&dir.join("data"));
        let _ = std::fs::remove_dir(dir.join("data"));
    }
}

fn remove_empty_below(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            let path = entry.path();
            remove_empty_below(&path);
            // Fails (and keeps the directory) when anything is left inside.
            let _ = std::fs::remove_dir(&path);
        }
    }
}
