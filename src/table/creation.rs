//! Creations in flight, and what killed ones leave behind.
//!
//! `CREATE TABLE … AS SELECT` writes its data files before the table
//! exists. A statement killed then leaves files that no table's metadata
//! names — no `"t$orphans"` can list them — under a location the next
//! CREATE would find "not empty". So every CTAS first writes a *marker*,
//! and the files it writes afterwards are provably its own:
//!
//! | file                                   | holds / means                                          |
//! |----------------------------------------|--------------------------------------------------------|
//! | `metadata/creating-<table-uuid>.json`  | the new table's first metadata, before any data file   |
//! | `metadata/creating-<table-uuid>.claim` | `commit` (the creator commits) or `abandoned` (a later CREATE took its files for leftovers) |
//!
//! A file belongs to a creation when it is a name our writers produce for
//! the marker's table (`table::orphans`) and is no older than the marker.
//! A location holding only creations' files counts as empty for a CREATE
//! ([`first_foreign_file`]), and a CREATE at a location without a live
//! table first removes the files of creations that are not committing
//! ([`remove_abandoned`]). Both sides decide through put-if-absent on the
//! claim, so a creator never commits files a cleaner deleted:
//!
//! 1. the cleaner claims every marker it sees `abandoned` (a creator's
//!    `commit` claim protects it), then lists the candidates;
//! 2. it lists the markers again: one that appeared meanwhile protects the
//!    files that may be its own (each creation writes its marker first);
//! 3. it deletes nothing when a table committed at the location meanwhile;
//! 4. it deletes the files; the marker, then the claim, only once a table
//!    has committed at the location — and a creator checks after winning
//!    its claim that its marker is still there.
//!
//! A creator whose claim fails starts its statement over (without cleaning).
//! A creator killed between its `commit` claim and its commit leaves files
//! that stay protected.
//!
//! A *staged* create of the REST catalog (`stage-create`) hands a client
//! the table's location before the table exists; the client writes its data
//! files, manifests and manifest list there, then commits the create. The
//! server marks such a location (`metadata/staged-<table-uuid>.json`, the
//! staged metadata), and a location so marked counts as empty for a CREATE:
//! whatever is there was written for a create the catalog staged — the one
//! committing now, or one that was abandoned, whose files no table names
//! (they are never read, nor deleted: no writer of ours made them).

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStoreExt, PutPayload};

use crate::error::{Error, Result};
use crate::spec::TableMetadata;
use crate::store::TableLocation;
use crate::table::orphans::find_orphans;
use crate::table::purge::delete_all;

const MARKER: &str = "creating-";
const STAGED: &str = "staged-";
const COMMIT: &str = "commit";
const ABANDONED: &str = "abandoned";

/// A creation of ours in flight at a location.
#[derive(Debug)]
pub struct Creation {
    location: TableLocation,
    uuid: String,
}

/// A marker found under a location.
#[derive(Debug)]
struct Marker {
    uuid: String,
    metadata: TableMetadata,
    written: DateTime<Utc>,
}

impl Creation {
    /// Write the marker of a creation of `metadata` (before any data file).
    pub async fn begin(location: &TableLocation, metadata: &TableMetadata) -> Result<Self> {
        let creation = Self {
            location: location.clone(),
            uuid: metadata.table_uuid.clone(),
        };
        let path = marker_path(location, &creation.uuid);
        location
            .store
            .put(&path, PutPayload::from(crate::iceberg::json::metadata_json(metadata)?))
            .await?;
        Ok(creation)
    }

    /// Claim the files for the commit; refused when a later CREATE took
    /// them for leftovers (and may have deleted some).
    pub async fn claim(&self) -> Result<()> {
        if put_if_absent(&self.location, &claim_path(&self.location, &self.uuid), COMMIT).await? {
            // A cleaner deletes the marker before its claim: a claim won
            // after that finds the marker gone.
            match self.location.store.head(&marker_path(&self.location, &self.uuid)).await {
                Ok(_) => return Ok(()),
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(Error::WriteConflict {
            table: self.location.url(),
            detail: "another CREATE at this location took this statement's files for the leftovers of a killed statement and removed them".into(),
        })
    }

    /// Remove the marker and its claim (after the commit, or once the
    /// creation's files are deleted). Best effort.
    pub async fn finish(&self) {
        let _ = delete_all(&self.location, vec![marker_path(&self.location, &self.uuid)]).await;
        let _ = delete_all(&self.location, vec![claim_path(&self.location, &self.uuid)]).await;
    }
}

/// Mark `location` as that of a create the REST catalog staged for
/// `metadata` (see the module docs).
pub async fn mark_staged(location: &TableLocation, metadata: &TableMetadata) -> Result<()> {
    let path = location
        .metadata_dir()
        .join(format!("{STAGED}{}.json", metadata.table_uuid));
    location
        .store
        .put(&path, PutPayload::from(crate::iceberg::json::metadata_json(metadata)?))
        .await?;
    Ok(())
}

/// Remove `location`'s staged-create markers once a table committed there
/// (best effort: a marker left behind only makes the location count as
/// empty for a later CREATE, as a dropped table's does anyway).
pub async fn clear_staged(location: &TableLocation) {
    let Ok(listed) = location
        .store
        .list(Some(&location.metadata_dir()))
        .try_collect::<Vec<ObjectMeta>>()
        .await
    else {
        return;
    };
    for m in listed.iter().filter(|m| is_staged_marker(location, &m.location)) {
        let _ = location.store.delete(&m.location).await;
    }
}

/// Whether `path` is a staged create's marker of `location`.
fn is_staged_marker(location: &TableLocation, path: &Path) -> bool {
    let metadata_dir = location.metadata_dir();
    path.prefix_matches(&metadata_dir)
        && path.parts().count() == metadata_dir.parts().count() + 1
        && path
            .filename()
            .and_then(|n| n.strip_prefix(STAGED)?.strip_suffix(".json"))
            .is_some_and(|uuid| uuid::Uuid::try_parse(uuid).is_ok())
}

fn marker_path(location: &TableLocation, uuid: &str) -> Path {
    location.metadata_dir().join(format!("{MARKER}{uuid}.json"))
}

fn claim_path(location: &TableLocation, uuid: &str) -> Path {
    location.metadata_dir().join(format!("{MARKER}{uuid}.claim"))
}

/// `creating-<uuid>.json` or `.claim` → the uuid, if `name` is one.
fn marker_uuid(name: &str) -> Option<(&str, bool)> {
    let rest = name.strip_prefix(MARKER)?;
    let (uuid, is_marker) = match (rest.strip_suffix(".json"), rest.strip_suffix(".claim")) {
        (Some(u), _) => (u, true),
        (_, Some(u)) => (u, false),
        _ => return None,
    };
    uuid::Uuid::try_parse(uuid).ok()?;
    Some((uuid, is_marker))
}

/// Write `text` at `path` unless something is there; `false` when it was.
async fn put_if_absent(location: &TableLocation, path: &Path, text: &str) -> Result<bool> {
    let payload = PutPayload::from(text.as_bytes().to_vec());
    crate::store::commit::put_if_absent(location.store.as_ref(), path, payload, location.single_writer).await
}

/// The markers under `location` (one LIST, one GET each).
async fn markers(location: &TableLocation) -> Result<Vec<Marker>> {
    let listed: Vec<ObjectMeta> = location
        .store
        .list(Some(&location.metadata_dir()))
        .try_collect()
        .await?;
    let mut out = Vec::new();
    for meta in listed {
        let Some((uuid, true)) = meta.location.filename().and_then(marker_uuid) else {
            continue;
        };
        let bytes = match location.store.get(&meta.location).await {
            Ok(r) => r.bytes().await?,
            // Finished meanwhile.
            Err(object_store::Error::NotFound { .. }) => continue,
            Err(e) => return Err(e.into()),
        };
        let Ok(metadata) = crate::iceberg::json::parse_metadata(&bytes) else {
            continue;
        };
        if metadata.table_uuid != uuid {
            continue;
        }
        out.push(Marker {
            uuid: uuid.to_string(),
            metadata,
            written: meta.last_modified,
        });
    }
    Ok(out)
}

/// The files of `marker`'s creation now under the location.
async fn files_of(location: &TableLocation, marker: &Marker) -> Result<BTreeSet<Path>> {
    Ok(find_orphans(location, &marker.metadata)
        .await?
        .into_iter()
        .filter(|o| o.last_modified >= marker.written)
        .filter(|o| !o.path.filename().is_some_and(|f| f.starts_with(".hp-probe-")))
        .map(|o| o.path)
        .collect())
}

/// The first file under `location` that is neither a creation's marker or
/// claim nor a file of a creation; `None` when only creations wrote here.
pub async fn first_foreign_file(location: &TableLocation) -> Result<Option<Path>> {
    let listed: Vec<ObjectMeta> = location.store.list(Some(&location.root)).try_collect().await?;
    if listed.is_empty() || listed.iter().any(|m| is_staged_marker(location, &m.location)) {
        return Ok(None);
    }
    let mut explained = BTreeSet::new();
    for marker in markers(location).await? {
        explained.extend(files_of(location, &marker).await?);
    }
    let metadata_dir = location.metadata_dir();
    let unexplained = listed.into_iter().map(|m| m.location).filter(|p| {
        let bookkeeping = p.prefix_matches(&metadata_dir)
            && p.filename().and_then(marker_uuid).is_some()
            && p.parts().count() == metadata_dir.parts().count() + 1;
        !bookkeeping && !explained.contains(p)
    });
    for path in unexplained {
        // Listed before a failed creation deleted it (then its marker)?
        match location.store.head(&path).await {
            Ok(_) => return Ok(Some(path)),
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

/// Delete the files of creations at `location` that are not committing
/// (killed, or losing to this statement). Returns how many were deleted.
/// Call only when no live table is at `location`.
pub async fn remove_abandoned(location: &TableLocation) -> Result<usize> {
    let mut claimed = Vec::new();
    let mut protected = BTreeSet::new();
    for marker in markers(location).await? {
        let claim = claim_path(location, &marker.uuid);
        if put_if_absent(location, &claim, ABANDONED).await? || claim_says(location, &claim).await? == ABANDONED {
            if !exists(location, &marker_path(location, &marker.uuid)).await? {
                // That creation finished meanwhile (its files are gone or
                // committed): the claim is no one's.
                delete_all(location, vec![claim]).await?;
                continue;
            }
            claimed.push(marker);
        } else {
            protected.insert(marker.uuid);
        }
    }
    if claimed.is_empty() {
        return Ok(0);
    }
    let mut doomed = BTreeSet::new();
    for marker in &claimed {
        doomed.extend(files_of(location, marker).await?);
    }
    let claimed_ids: BTreeSet<&str> = claimed.iter().map(|m| m.uuid.as_str()).collect();
    for marker in markers(location).await? {
        if protected.contains(&marker.uuid) || !claimed_ids.contains(marker.uuid.as_str()) {
            for p in files_of(location, &marker).await? {
                doomed.remove(&p);
            }
        }
    }
    if location.load_latest().await?.is_some_and(|l| l.table().is_some()) {
        // A table committed here meanwhile: its files are not leftovers.
        return Ok(0);
    }
    // The markers stay (a creator still writing explains its newer files
    // by its marker) until a table has committed here: [`forget_abandoned`].
    // Directories stay too: other creations may be writing into them.
    let deleted = delete_all(location, doomed.into_iter().collect()).await?;
    // Staging files of puts the killed creations never finished.
    let mut staged = 0;
    for marker in &claimed {
        for path in crate::table::orphans::local_staging_files(location, &marker.metadata, marker.written) {
            if std::fs::remove_file(&path).is_ok() {
                staged += 1;
            }
        }
    }
    Ok(deleted + staged)
}

/// Once a table has committed at `location`: delete the markers (then the
/// claims) of creations claimed `abandoned`; they can never commit, and a
/// creator still running finds its marker gone and deletes its own files.
pub async fn forget_abandoned(location: &TableLocation) -> Result<()> {
    for marker in markers(location).await? {
        let claim = claim_path(location, &marker.uuid);
        if claim_says(location, &claim).await? == ABANDONED {
            delete_all(location, vec![marker_path(location, &marker.uuid)]).await?;
            delete_all(location, vec![claim]).await?;
        }
    }
    Ok(())
}

async fn exists(location: &TableLocation, path: &Path) -> Result<bool> {
    match location.store.head(path).await {
        Ok(_) => Ok(true),
        Err(object_store::Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// What a claim file says (empty when it vanished).
async fn claim_says(location: &TableLocation, claim: &Path) -> Result<String> {
    match location.store.get(claim).await {
        Ok(r) => Ok(String::from_utf8_lossy(&r.bytes().await?).to_string()),
        Err(object_store::Error::NotFound { .. }) => Ok(String::new()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_names() {
        let id = "7f0e3c1a-4b5d-4e6f-8a9b-0c1d2e3f4a5b";
        assert_eq!(marker_uuid(&format!("creating-{id}.json")), Some((id, true)));
        assert_eq!(marker_uuid(&format!("creating-{id}.claim")), Some((id, false)));
        assert_eq!(marker_uuid("creating-notes.json"), None);
        assert_eq!(marker_uuid(&format!("{id}.json")), None);
    }
}
