//! Every data file is listed once in a snapshot. A file listed twice (in
//! one manifest, in two, or in a manifest the snapshot lists twice) would be
//! read twice — `count(*)` doubling its rows — and a rewrite would make the
//! copies permanent, so such a snapshot is refused by every reader and
//! writer, and no writer produces one.
//!
//! Planning checks the files it selected (a duplicate the filters prune
//! cannot change the answer); a manifest being written checks its own rows.
//! One hash-map probe per selected file (its cost: BENCHMARKS.md). A plan
//! that selected every file of a snapshot proves the whole snapshot, and
//! snapshots never change, so the session remembers that
//! ([`verified_key`]) and later plans of it skip the check.

use std::hash::BuildHasher;

use datafusion::common::HashMap;
use datafusion::common::hash_map::Entry;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use object_store::path::Path;

use super::format::{CONTENT_OFFSET, PATH};
use crate::error::{Error, Result};
use crate::spec::Snapshot;

/// `files` (path, index of its manifest in `snapshot`'s list) name every
/// data file once. `root`: the table's root, for the message.
pub fn check_listed_once<'a>(
    files: impl ExactSizeIterator<Item = (&'a Path, usize)> + Clone,
    snapshot: &Snapshot,
    root: &Path,
) -> Result<()> {
    // The fast pass: 64-bit fingerprints, sorted, compared with their
    // neighbours (sequential memory instead of a million random probes).
    // Equal paths have equal fingerprints, so no duplicate is missed; only
    // when two fingerprints are equal does the exact pass below run.
    // hashbrown's default hasher (foldhash), taken from an empty map.
    let hasher = HashMap::<&str, ()>::new();
    let state = hasher.hasher();
    let mut prints: Vec<u64> = files.clone().map(|(p, _)| state.hash_one(p.as_ref())).collect();
    prints.sort_unstable();
    if prints.windows(2).all(|w| w[0] != w[1]) {
        return Ok(());
    }
    listed_once_exactly(files, snapshot, root)
}

/// The exact check: the first path listed twice, named with its manifests.
fn listed_once_exactly<'a>(
    files: impl ExactSizeIterator<Item = (&'a Path, usize)>,
    snapshot: &Snapshot,
    root: &Path,
) -> Result<()> {
    // hashbrown's default (foldhash), not SipHash: the check is on the
    // planning path of every query (its cost: BENCHMARKS.md).
    let mut seen: HashMap<&Path, usize> = HashMap::with_capacity(files.len());
    for (path, manifest) in files {
        match seen.entry(path) {
            Entry::Vacant(v) => {
                v.insert(manifest);
            }
            Entry::Occupied(o) => {
                let listed = snapshot.manifests.as_deref().map(Vec::as_slice).unwrap_or_default();
                let name = |i: usize| listed.get(i).map_or("?", |m| m.path.as_str());
                let (first, second) = (name(*o.get()), name(manifest));
                let place = if first == second {
                    format!("manifest {first}, listed twice")
                } else {
                    format!("manifests {first} and {second}")
                };
                let relative = path
                    .prefix_match(root)
                    .map(|parts| parts.map(|p| p.as_ref().to_string()).collect::<Vec<_>>().join("/"))
                    .unwrap_or_else(|| path.to_string());
                return Err(Error::Format(format!(
                    "snapshot {} lists data file {relative} twice ({place}): its rows would be read twice; the table's metadata is inconsistent, so it is neither read nor changed",
                    snapshot.snapshot_id
                )));
            }
        }
    }
    Ok(())
}

/// The cache key under which a snapshot of the table at `table_url` is
/// recorded as listing every file once. The manifest count and the first
/// manifest's path make a reused snapshot id at a replaced table a miss.
pub fn verified_key(table_url: &str, snapshot: &Snapshot) -> String {
    let listed = snapshot.manifests.as_deref().map(Vec::as_slice).unwrap_or_default();
    format!(
        "listed-once:{table_url}#{}:{}:{}",
        snapshot.snapshot_id,
        listed.len(),
        listed.first().map_or("", |m| m.path.as_str())
    )
}

/// A manifest batch about to be written names every data file once (and
/// every deletion vector once: the blobs of one Puffin file share its path).
pub fn check_batch_lists_once(batch: &RecordBatch) -> Result<()> {
    let Some(paths) = batch.column_by_name(PATH).map(|c| c.as_string::<i32>()) else {
        return Ok(());
    };
    let offsets = batch
        .column_by_name(CONTENT_OFFSET)
        .map(|c| c.as_primitive::<datafusion::arrow::datatypes::Int64Type>());
    let mut seen = std::collections::HashSet::with_capacity(paths.len());
    for row in 0..paths.len() {
        if paths.is_null(row) {
            continue;
        }
        let offset = offsets.filter(|o| o.is_valid(row)).map(|o| o.value(row));
        let path = paths.value(row);
        if !seen.insert((path, offset)) {
            return Err(Error::Invalid(format!(
                "a new manifest would list data file {path} twice; nothing was written"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        Snapshot {
            snapshot_id: 7,
            parent_snapshot_id: None,
            sequence_number: 1,
            timestamp_ms: 0,
            operation: "append".into(),
            summary: Default::default(),
            manifests: Some(Default::default()),
            manifests_file: None,
            table_spec_id: None,
            manifest_list: None,
            first_row_id: None,
            added_rows: None,
        }
    }

    #[test]
    fn a_file_listed_twice_is_named() {
        let root = Path::from("wh/t");
        let paths: Vec<(Path, usize)> = (0..1000)
            .map(|i| (Path::from(format!("wh/t/data/p={}/{i}.parquet", i % 7)), i / 100))
            .collect();
        check_listed_once(paths.iter().map(|(p, m)| (p, *m)), &snapshot(), &root).unwrap();
        let mut twice = paths.clone();
        twice.push((Path::from("wh/t/data/p=3/500.parquet"), 3));
        let e = check_listed_once(twice.iter().map(|(p, m)| (p, *m)), &snapshot(), &root)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lists data file data/p=3/500.parquet twice"), "{e}");
    }
}
