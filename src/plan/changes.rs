//! Which data files one snapshot changed, from its manifests and its
//! parent's: the files a changelog read (`table_changes`) must read.
//!
//! A manifest is never changed in place, so a snapshot's manifests that
//! its parent does not list were written by it, and the parent's that it
//! no longer lists were replaced by it. Only those are read:
//!
//! | the snapshot (parent P)                        | result                                         |
//! |------------------------------------------------|------------------------------------------------|
//! | INSERT: new data manifests, nothing replaced   | `Appended`: the new manifests (rows all new)   |
//! | copy-on-write DELETE / UPDATE / MERGE          | `Rewritten`: files removed from or added to the replaced manifests (survivors a rewritten manifest carries over are not listed) |
//! | merge-on-read (new or replaced delete manifests) | `Rewritten`: also the data files those deletes name; every manifest is planned, restricted to the touched files |
//! | optimize (operation `optimize` / `replace`)    | `Unchanged`: the same rows in other files      |
//!
//! The rows of a `Rewritten` snapshot are the multiset difference of the
//! touched files read as of P and as of the snapshot (carry-over rows a
//! rewrite copied cancel out).

use std::collections::HashSet;

use datafusion::arrow::array::AsArray;
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::manifest::deletes::delete_entries;
use crate::manifest::format::PATH;
use crate::manifest::read_manifest;
use crate::spec::{ManifestFile, Snapshot, TableMetadata};
use crate::store::TableLocation;

/// What one snapshot changed.
#[derive(Debug, Clone)]
pub enum SnapshotFiles {
    /// No row a reader sees changed (optimize).
    Unchanged,
    /// Only new data files, listed by these manifests (all written by the snapshot).
    Appended(Vec<ManifestFile>),
    /// Rows were removed (and maybe added): the data files whose rows may
    /// differ, and the manifests that plan them on each side.
    Rewritten {
        touched: HashSet<Path>,
        before: Vec<ManifestFile>,
        after: Vec<ManifestFile>,
    },
}

/// What `snapshot` (of `md`, manifests loaded) changed since `parent` (its
/// parent snapshot, manifests loaded; `None` for a table's first snapshot).
pub async fn snapshot_files(
    location: &TableLocation,
    md: &TableMetadata,
    parent: Option<&Snapshot>,
    snapshot: &Snapshot,
) -> Result<SnapshotFiles> {
    if matches!(snapshot.operation.as_str(), "optimize" | "replace") {
        return Ok(SnapshotFiles::Unchanged);
    }
    let now = snapshot.manifests()?;
    let then: &[ManifestFile] = match parent {
        Some(p) => p.manifests()?,
        None => &[],
    };
    let (added, removed) = manifest_changes(then, now);
    if added.is_empty() && removed.is_empty() {
        return Ok(SnapshotFiles::Unchanged);
    }
    // An append: only new data manifests, every parent's one kept.
    if removed.is_empty() && added.iter().all(|m| m.content.is_data()) {
        return Ok(SnapshotFiles::Appended(added.into_iter().cloned().collect()));
    }
    let (gone, new) = (
        data_paths(location, md, &of_kind(&removed, true)).await?,
        data_paths(location, md, &of_kind(&added, true)).await?,
    );
    let mut touched: HashSet<String> = gone.symmetric_difference(&new).cloned().collect();
    // Delete files that came or went: the data files they name.
    let key = |e: &crate::manifest::deletes::DeleteEntry| {
        (
            e.path.clone(),
            e.data_file.clone(),
            e.blob.map(|b| (b.offset, b.length)),
        )
    };
    let then_deletes: HashSet<_> = delete_entries(location, md, &of_kind(&removed, false))
        .await?
        .iter()
        .map(key)
        .collect();
    let now_deletes: HashSet<_> = delete_entries(location, md, &of_kind(&added, false))
        .await?
        .iter()
        .map(key)
        .collect();
    let deletes_changed: Vec<_> = then_deletes.symmetric_difference(&now_deletes).collect();
    touched.extend(deletes_changed.iter().map(|(_, data_file, _)| data_file.clone()));
    let touched = touched
        .iter()
        .map(|p| location.resolve(p))
        .collect::<Result<HashSet<Path>>>()?;
    // Where a touched file has deletes on either side, each side is planned
    // whole (a data file whose deletes changed sits in a manifest both
    // share) and restricted to `touched`; otherwise the replaced data
    // manifests are all there is to read.
    let all_deletes: Vec<&ManifestFile> = then.iter().chain(now).filter(|m| !m.content.is_data()).collect();
    let mut with_deletes = !deletes_changed.is_empty();
    if !with_deletes && !all_deletes.is_empty() {
        for entry in delete_entries(location, md, &all_deletes).await? {
            if touched.contains(&location.resolve(&entry.data_file)?) {
                with_deletes = true;
                break;
            }
        }
    }
    let side = |all: &[ManifestFile], replaced: &[&ManifestFile]| -> Vec<ManifestFile> {
        all.iter()
            .filter(|m| with_deletes || (m.content.is_data() && replaced.iter().any(|r| r.path == m.path)))
            .cloned()
            .collect()
    };
    Ok(SnapshotFiles::Rewritten {
        touched,
        before: side(then, &removed),
        after: side(now, &added),
    })
}

/// The manifests a snapshot listing `now` wrote, when its parent listed
/// `then` and the snapshot only added data manifests (an append: every row
/// of those manifests' files is new, and no delete came or went).
pub fn appended(then: &[ManifestFile], now: &[ManifestFile]) -> Option<Vec<ManifestFile>> {
    let (added, removed) = manifest_changes(then, now);
    (removed.is_empty() && !added.is_empty() && added.iter().all(|m| m.content.is_data()))
        .then(|| added.into_iter().cloned().collect())
}

/// The manifests `now` lists and `then` does not (added), and those `then`
/// lists and `now` does not (removed). A list names each manifest once.
/// An append lists its parent's manifests as one run, after or before its
/// own: that is checked first, by comparing paths in order (a table of
/// 1,000 manifests otherwise hashes 2,000 paths per snapshot).
fn manifest_changes<'a>(
    then: &'a [ManifestFile],
    now: &'a [ManifestFile],
) -> (Vec<&'a ManifestFile>, Vec<&'a ManifestFile>) {
    if let Some(extra) = now.len().checked_sub(then.len()) {
        for start in [extra, 0] {
            let run = &now[start..start + then.len()];
            if run.iter().zip(then).all(|(a, b)| a.path == b.path) {
                let added = now[..start].iter().chain(&now[start + then.len()..]).collect();
                return (added, Vec::new());
            }
        }
    }
    let listed = |ms: &'a [ManifestFile]| -> datafusion::common::HashSet<&'a str> {
        ms.iter().map(|m| m.path.as_str()).collect()
    };
    let (then_paths, now_paths) = (listed(then), listed(now));
    let added = now.iter().filter(|m| !then_paths.contains(m.path.as_str())).collect();
    let removed = then.iter().filter(|m| !now_paths.contains(m.path.as_str())).collect();
    (added, removed)
}

/// The data manifests (`data`) or the delete manifests of `manifests`.
fn of_kind<'a>(manifests: &[&'a ManifestFile], data: bool) -> Vec<&'a ManifestFile> {
    manifests
        .iter()
        .filter(|m| m.content.is_data() == data)
        .copied()
        .collect()
}

/// The data files (stored paths) that data manifests `manifests` list.
async fn data_paths(
    location: &TableLocation,
    md: &TableMetadata,
    manifests: &[&ManifestFile],
) -> Result<HashSet<String>> {
    let columns = [PATH.to_string()];
    let reads = manifests.iter().map(|m| {
        let columns = &columns;
        async move {
            let batch = read_manifest(location, m, md.spec(m.spec_id)?, Some(columns)).await?;
            let paths = batch
                .column_by_name(PATH)
                .ok_or_else(|| Error::Format(format!("manifest {} has no column {PATH}", m.path)))?;
            Ok::<_, Error>(
                paths
                    .as_string::<i32>()
                    .iter()
                    .flatten()
                    .map(str::to_string)
                    .collect::<Vec<_>>(),
            )
        }
    });
    Ok(futures::future::try_join_all(reads)
        .await?
        .into_iter()
        .flatten()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::metadata::ManifestContent;

    fn list(paths: &[&str]) -> Vec<ManifestFile> {
        paths
            .iter()
            .map(|p| ManifestFile {
                path: p.to_string(),
                length: 1,
                spec_id: 0,
                added_snapshot_id: 1,
                file_count: 1,
                record_count: 1,
                partitions: Vec::new(),
                iceberg: None,
                content: ManifestContent::default(),
            })
            .collect()
    }

    fn changes(then: &[&str], now: &[&str]) -> (Vec<String>, Vec<String>) {
        let (then, now) = (list(then), list(now));
        let (added, removed) = manifest_changes(&then, &now);
        let paths = |ms: Vec<&ManifestFile>| ms.into_iter().map(|m| m.path.clone()).collect();
        (paths(added), paths(removed))
    }

    #[test]
    fn manifests_added_and_removed_are_found_wherever_they_are_listed() {
        let none: Vec<String> = Vec::new();
        // appends, the new manifests first or last
        assert_eq!(changes(&["a", "b"], &["n", "a", "b"]), (vec!["n".into()], none.clone()));
        assert_eq!(
            changes(&["a", "b"], &["a", "b", "n", "m"]),
            (vec!["n".into(), "m".into()], none.clone())
        );
        assert_eq!(changes(&[], &["n"]), (vec!["n".into()], none.clone()));
        // nothing changed
        assert_eq!(changes(&["a", "b"], &["a", "b"]), (none.clone(), none.clone()));
        // a rewrite: one replaced, in the middle
        assert_eq!(
            changes(&["a", "b", "c"], &["a", "x", "c"]),
            (vec!["x".into()], vec!["b".into()])
        );
        // the parent's manifests reordered, one added: not one run
        assert_eq!(changes(&["a", "b"], &["b", "n", "a"]), (vec!["n".into()], none.clone()));
        // one removed, none added
        assert_eq!(changes(&["a", "b", "c"], &["a", "c"]), (none.clone(), vec!["b".into()]));
        assert_eq!(changes(&["a", "b"], &[]), (none, vec!["a".into(), "b".into()]));
    }
}
