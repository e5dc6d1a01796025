//! Orphans: files this table's writers made that no metadata references —
//! left by a statement that failed or was killed before (or while) it
//! committed.
//!
//! Only names our writers produce are candidates; any other file under the
//! location, whatever its name or age, is never one:
//!
//! | candidate                                   | condition                                               |
//! |---------------------------------------------|---------------------------------------------------------|
//! | `data/<f1>=<v1>/…/<uuid>.parquet`            | the directory names are the partition fields of one of the table's specs, in order |
//! | `metadata/<uuid>-m.parquet`                  | a manifest name                                         |
//! | `metadata/.hp-probe-<uuid>`                  | a conditional-write probe (see `store::connect`)        |
//!
//! A candidate is an orphan when the latest metadata version does not
//! reference it (any snapshot's manifests and their data files). Files
//! younger than a retention threshold may belong to a writer in flight: the
//! maintenance command that deletes orphans only takes older ones.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use object_store::path::Path;

use crate::error::Result;
use crate::spec::TableMetadata;
use crate::store::TableLocation;
use crate::table::purge::referenced_files;

/// A file of ours that nothing references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    pub path: Path,
    pub size: u64,
    pub last_modified: DateTime<Utc>,
}

/// `8-4-4-4-12` lower-case hex, as `uuid` prints a v4 id.
fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

/// Whether `relative` (under the table root) is a name our writers produce.
fn ours(relative: &[&str], partition_layouts: &BTreeSet<Vec<String>>) -> bool {
    match relative {
        ["metadata", name] => {
            name.strip_suffix("-m.parquet").is_some_and(is_uuid) || name.strip_prefix(".hp-probe-").is_some_and(is_uuid)
        }
        ["data", dirs @ .., file] => {
            let names: Option<Vec<String>> = dirs
                .iter()
                .map(|d| d.split_once('=').map(|(n, _)| n.to_string()))
                .collect();
            file.strip_suffix(".parquet").is_some_and(is_uuid) && names.is_some_and(|n| partition_layouts.contains(&n))
        }
        _ => false,
    }
}

/// The directory names of each spec's partition fields (Hive-escaped, as
/// they appear on disk).
fn layouts(md: &TableMetadata) -> BTreeSet<Vec<String>> {
    md.table_specs
        .iter()
        .map(|s| {
            s.partition_spec
                .fields
                .iter()
                .map(|f| crate::values::hive::escape(&f.name))
                .collect()
        })
        .collect()
}

/// Every orphan of the table whose latest metadata is `md`.
pub async fn find_orphans(location: &TableLocation, md: &TableMetadata) -> Result<Vec<Orphan>> {
    let (data, manifests) = referenced_files(location, md).await?;
    let referenced: BTreeSet<Path> = data.into_iter().chain(manifests).collect();
    let layouts = layouts(md);
    let root: Vec<String> = location.root.parts().map(|p| p.as_ref().to_string()).collect();
    let mut out = Vec::new();
    for dir in [location.root.clone().join("data"), location.metadata_dir()] {
        let listed: Vec<_> = location.store.list(Some(&dir)).try_collect().await?;
        for meta in listed {
            let parts: Vec<String> = meta.location.parts().map(|p| p.as_ref().to_string()).collect();
            let Some(relative) = parts.strip_prefix(root.as_slice()) else {
                continue;
            };
            let relative: Vec<&str> = relative.iter().map(String::as_str).collect();
            if ours(&relative, &layouts) && !referenced.contains(&meta.location) {
                out.push(Orphan {
                    path: meta.location,
                    size: meta.size,
                    last_modified: meta.last_modified,
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names_are_candidates() {
        let layouts = BTreeSet::from([vec!["s".to_string()], vec![]]);
        let id = "7f0e3c1a-4b5d-4e6f-8a9b-0c1d2e3f4a5b";
        let yes = [
            vec!["data".to_string(), "s=a".into(), format!("{id}.parquet")],
            vec!["data".to_string(), format!("{id}.parquet")],
            vec!["metadata".to_string(), format!("{id}-m.parquet")],
            vec!["metadata".to_string(), format!(".hp-probe-{id}")],
        ];
        let no = [
            vec!["data".to_string(), "s=a".into(), "notes.parquet".into()],
            vec!["data".to_string(), "t=a".into(), format!("{id}.parquet")],
            vec!["data".to_string(), "s=a".into(), "x=1".into(), format!("{id}.parquet")],
            vec!["data".to_string(), "sub".into(), format!("{id}.parquet")],
            vec!["metadata".to_string(), "v3.metadata.json".into()],
            vec!["metadata".to_string(), format!("{}-m.parquet", id.to_uppercase())],
            vec!["thesis.txt".to_string()],
            vec![format!("{id}.parquet")],
        ];
        for p in yes {
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            assert!(ours(&p, &layouts), "{p:?}");
        }
        for p in no {
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            assert!(!ours(&p, &layouts), "{p:?}");
        }
    }
}

/// `ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '7d')`:
/// delete the orphans older than `retention` (younger ones may belong to a
/// statement still running). Returns how many were deleted.
pub async fn remove_orphans(
    location: &TableLocation,
    md: &TableMetadata,
    retention: std::time::Duration,
) -> Result<u64> {
    let cutoff = Utc::now() - chrono::Duration::from_std(retention).unwrap_or(chrono::Duration::MAX);
    let old: Vec<Path> = find_orphans(location, md)
        .await?
        .into_iter()
        .filter(|o| o.last_modified < cutoff)
        .map(|o| o.path)
        .collect();
    let n = crate::table::purge::delete_all(location, old).await?;
    crate::table::purge::remove_empty_dirs(location);
    Ok(n as u64)
}
