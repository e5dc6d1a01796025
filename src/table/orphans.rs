//! Orphans: files this table's writers made that no metadata references —
//! left by a statement that failed or was killed before (or while) it
//! committed.
//!
//! Only names our writers produce are candidates, and only files no older
//! than the table; any other file under the location, whatever its name or
//! age, is never one. `<p>` is the table's `file-prefix` (recorded in its
//! metadata since it was created), so a look-alike with another table's
//! prefix, or none, is not ours:
//!
//! | candidate                                   | condition                                               |
//! |---------------------------------------------|---------------------------------------------------------|
//! | `data/<f1>=<v1>/…/<p>-<uuid>.parquet`, `…/<p>-<uuid>-deletes.parquet` (position deletes) | the directory names are the partition fields of one of the table's specs, in order |
//! | `data/<p>-<uuid>-deletes.puffin`             | deletion vectors (format version 3)                     |
//! | `metadata/<p>-<uuid>-m.parquet`              | a manifest name                                         |
//! | `metadata/<p>-<uuid>-m.avro`, `metadata/<p>-<uuid>-snap-<id>.avro` | a manifest twin, a manifest list (the Iceberg side) |
//! | `metadata/<p>-<uuid>-manifests.json`        | an older snapshot's manifests (`store::snapshot_manifests`) |
//! | `metadata/.hp-probe-<uuid>`                  | a conditional-write probe (see `store::connect`)        |
//!
//! Tables created before the prefix was recorded list the names of that
//! time (`<uuid>.parquet`, `<uuid>-m.parquet`) as well, but a look-alike
//! cannot be told from them, so `remove_orphan_files` refuses to delete
//! anything there.
//!
//! A candidate is an orphan when the latest metadata version does not
//! reference it (any snapshot's manifests and their data files). Deleting
//! one that a writer still in flight will commit breaks the table, so
//! `remove_orphan_files`:
//! - reads the latest version *after* listing (a commit that landed
//!   meanwhile is seen);
//! - never deletes a file younger than the oldest write of this process
//!   that has not committed (`store::pending`);
//! - refuses a threshold under 24 hours (writers of other processes cannot
//!   be seen) unless the session says none runs:
//!   `SET hidden_partitions.no_concurrent_writers = true`.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::spec::TableMetadata;
use crate::spec::metadata::file_prefix_of;
use crate::store::TableLocation;
use crate::table::Table;
use crate::table::purge::referenced_files;

/// The shortest retention threshold allowed while other writers may run.
pub const SAFE_RETENTION: Duration = Duration::from_secs(24 * 3600);

/// Margin for the clocks of stores and processes: files this much older
/// than the oldest pending write's start are still kept.
const CLOCK_MARGIN_MS: i64 = 60_000;

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

/// The file names a table's writers produced.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Naming {
    /// `<prefix>-<uuid>` only (the table recorded its prefix at creation).
    Prefixed(String),
    /// A table from before prefixes: bare `<uuid>` names, and `<prefix>-<uuid>`
    /// from writers since.
    Legacy(String),
}

impl Naming {
    fn of(md: &TableMetadata) -> Self {
        match &md.file_prefix {
            Some(p) => Self::Prefixed(p.clone()),
            None => Self::Legacy(file_prefix_of(&md.table_uuid)),
        }
    }

    /// Whether `stem` (a file name without its extension) is one of ours.
    fn matches(&self, stem: &str) -> bool {
        let prefixed = |p: &str| {
            stem.strip_prefix(p)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(is_uuid)
        };
        match self {
            Self::Prefixed(p) => prefixed(p),
            Self::Legacy(p) => prefixed(p) || is_uuid(stem),
        }
    }
}

/// `<p>-<uuid>-snap-<snapshot id>.avro` → `<p>-<uuid>`.
fn manifest_list_stem(name: &str) -> Option<&str> {
    let (stem, id) = name.strip_suffix(".avro")?.rsplit_once("-snap-")?;
    let digits = id.strip_prefix('-').unwrap_or(id);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(stem)
}

/// A local store's staging file (`<name>#<n>`, renamed to `<name>` when
/// its put completes; left behind by a process killed mid-put) → `<name>`.
fn staged_name(name: &str) -> &str {
    match name.rsplit_once('#') {
        Some((stem, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => stem,
        _ => name,
    }
}

/// Whether `relative` (under the table root) is a name our writers produce
/// (or the staging file of one).
fn ours(relative: &[&str], partition_layouts: &BTreeSet<Vec<String>>, naming: &Naming) -> bool {
    let mut relative: Vec<&str> = relative.to_vec();
    if let Some(last) = relative.last_mut() {
        *last = staged_name(last);
    }
    match relative.as_slice() {
        ["metadata", name] => {
            name.strip_suffix("-m.parquet").is_some_and(|s| naming.matches(s))
                || name.strip_suffix("-m.avro").is_some_and(|s| naming.matches(s))
                || name.strip_suffix("-manifests.json").is_some_and(|s| naming.matches(s))
                || manifest_list_stem(name).is_some_and(|s| naming.matches(s))
                || name.strip_prefix(".hp-probe-").is_some_and(is_uuid)
        }
        // Deletion vectors: one Puffin file per statement, beside no partition.
        ["data", file] if file.ends_with("-deletes.puffin") => {
            file.strip_suffix("-deletes.puffin").is_some_and(|s| naming.matches(s))
        }
        ["data", dirs @ .., file] => {
            let names: Option<Vec<String>> = dirs
                .iter()
                .map(|d| d.split_once('=').map(|(n, _)| n.to_string()))
                .collect();
            // Data files, and position delete files (`-deletes`) beside them.
            let stem = file.strip_suffix(".parquet");
            let stem = stem.map(|s| s.strip_suffix("-deletes").unwrap_or(s));
            stem.is_some_and(|s| naming.matches(s)) && names.is_some_and(|n| partition_layouts.contains(&n))
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
    let candidates = candidates(location, md).await?;
    unreferenced(location, md, candidates).await
}

/// The files under the location named as the writers of `md`'s table name
/// them and no older than the table.
async fn candidates(location: &TableLocation, md: &TableMetadata) -> Result<Vec<Orphan>> {
    let layouts = layouts(md);
    let naming = Naming::of(md);
    let created = md.created_ms.and_then(DateTime::from_timestamp_millis);
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
            let older_than_table = created.is_some_and(|c| meta.last_modified < c);
            if ours(&relative, &layouts, &naming) && !older_than_table {
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

/// How long a staging file must have been left alone to be a dead put's:
/// a live put writes its bytes at once and renames the file right after.
pub const STAGING_IDLE: std::time::Duration = std::time::Duration::from_secs(5);

/// A local table's staging files of puts that never finished (a process
/// killed mid-put leaves `<name>#<n>`; the store's listing hides them),
/// named as `md`'s writers name files, modified at `since` or later and
/// not for [`STAGING_IDLE`] (a put still running keeps its file).
pub fn local_staging_files(
    location: &TableLocation,
    md: &TableMetadata,
    since: DateTime<Utc>,
) -> Vec<std::path::PathBuf> {
    let Some(root) = location.local_dir() else {
        return Vec::new();
    };
    let (layouts, naming) = (layouts(md), Naming::of(md));
    let mut out = Vec::new();
    let mut stack = vec![root.join("data"), root.join("metadata")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(path);
                continue;
            }
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if staged_name(name) == name {
                continue;
            }
            let Ok(relative) = path.strip_prefix(&root) else {
                continue;
            };
            let parts: Vec<&str> = relative.iter().filter_map(|p| p.to_str()).collect();
            let dead = meta
                .modified()
                .is_ok_and(|m| DateTime::<Utc>::from(m) >= since && m.elapsed().is_ok_and(|idle| idle >= STAGING_IDLE));
            if dead && ours(&parts, &layouts, &naming) {
                out.push(path);
            }
        }
    }
    out
}

/// The candidates no snapshot of `md` references.
async fn unreferenced(location: &TableLocation, md: &TableMetadata, candidates: Vec<Orphan>) -> Result<Vec<Orphan>> {
    let files = referenced_files(location, md).await?;
    let referenced: BTreeSet<Path> = files
        .data
        .into_iter()
        .chain(files.manifests)
        .chain(files.iceberg)
        .collect();
    Ok(candidates
        .into_iter()
        .filter(|o| !referenced.contains(&o.path))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names_are_candidates() {
        let layouts = BTreeSet::from([vec!["s".to_string()], vec![]]);
        let id = "7f0e3c1a-4b5d-4e6f-8a9b-0c1d2e3f4a5b";
        let legacy = Naming::Legacy("0badcafe".to_string());
        let yes = [
            vec!["data".to_string(), "s=a".into(), format!("{id}.parquet")],
            vec!["data".to_string(), "s=a".into(), format!("{id}-deletes.parquet")],
            vec!["data".to_string(), "s=a".into(), format!("{id}.parquet#1")],
            vec!["data".to_string(), format!("{id}.parquet")],
            vec!["data".to_string(), format!("{id}-deletes.puffin")],
            vec!["metadata".to_string(), format!("{id}-m.parquet")],
            vec!["metadata".to_string(), format!("{id}-m.avro")],
            vec!["metadata".to_string(), format!("{id}-snap-12.avro")],
            vec!["metadata".to_string(), format!("{id}-snap--12.avro")],
            vec!["metadata".to_string(), format!(".hp-probe-{id}")],
        ];
        let no = [
            vec!["data".to_string(), "s=a".into(), "notes.parquet".into()],
            vec!["data".to_string(), "s=a".into(), "notes.parquet#1".into()],
            vec!["data".to_string(), "s=a".into(), format!("{id}.parquet#x")],
            vec!["data".to_string(), "t=a".into(), format!("{id}.parquet")],
            vec!["data".to_string(), "s=a".into(), "x=1".into(), format!("{id}.parquet")],
            vec!["data".to_string(), "sub".into(), format!("{id}.parquet")],
            vec!["data".to_string(), "s=a".into(), format!("{id}-deletes.puffin")],
            vec!["data".to_string(), "stats.puffin".into()],
            vec!["metadata".to_string(), "v3.metadata.json".into()],
            vec!["metadata".to_string(), format!("{}-m.parquet", id.to_uppercase())],
            vec!["thesis.txt".to_string()],
            vec![format!("{id}.parquet")],
        ];
        for p in yes {
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            assert!(ours(&p, &layouts, &legacy), "{p:?}");
        }
        for p in no {
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            assert!(!ours(&p, &layouts, &legacy), "{p:?}");
        }
        // With a recorded prefix only names carrying it are ours.
        let prefixed = Naming::Prefixed("0badcafe".to_string());
        let mine = [
            vec!["data".to_string(), "s=a".into(), format!("0badcafe-{id}.parquet")],
            vec!["metadata".to_string(), format!("0badcafe-{id}-m.parquet")],
            vec!["metadata".to_string(), format!("0badcafe-{id}-m.avro")],
            vec!["metadata".to_string(), format!("0badcafe-{id}-snap-5.avro")],
            vec!["metadata".to_string(), format!(".hp-probe-{id}")],
        ];
        let look_alikes = [
            vec!["data".to_string(), "s=a".into(), format!("{id}.parquet")],
            vec!["data".to_string(), "s=a".into(), format!("deadbeef-{id}.parquet")],
            vec!["metadata".to_string(), format!("{id}-m.parquet")],
            vec!["metadata".to_string(), format!("0badcafe-{id}.parquet")],
            vec!["metadata".to_string(), format!("0badcafe{id}-m.parquet")],
            vec!["metadata".to_string(), format!("{id}-snap-5.avro")],
            vec!["metadata".to_string(), format!("0badcafe-{id}-snap-x.avro")],
            vec!["metadata".to_string(), format!("0badcafe-{id}-snap-.avro")],
            vec!["data".to_string(), "t=a".into(), format!("0badcafe-{id}.parquet")],
        ];
        for p in mine {
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            assert!(ours(&p, &layouts, &prefixed), "{p:?}");
        }
        for p in look_alikes {
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            assert!(!ours(&p, &layouts, &prefixed), "{p:?}");
        }
    }
}

/// `ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '7d')`:
/// delete the orphans of `table` (as of `md`, its version when the statement
/// started) older than `retention` and than every write of this process
/// still pending. `no_concurrent_writers`: the user vouches that no other
/// statement writes to the table, so a threshold under 24 hours is allowed.
/// Returns how many files were deleted.
pub async fn remove_orphans(
    table: &Table,
    md: &TableMetadata,
    retention: Duration,
    no_concurrent_writers: bool,
) -> Result<u64> {
    let name = &table.name;
    if retention < SAFE_RETENTION && !no_concurrent_writers {
        return Err(Error::Invalid(format!(
            "remove_orphan_files on {name}: retention_threshold of {}s is under 24 hours; files that young may belong \
             to a statement (of this or another process) that has not committed yet, and deleting them would corrupt \
             the table when it does. Use at least '24h', or, if you know that no other statement writes to {name}, \
             SET hidden_partitions.no_concurrent_writers = true",
            retention.as_secs()
        )));
    }
    if md.file_prefix.is_none() {
        return Err(Error::Invalid(format!(
            "remove_orphan_files on {name}: the table was created before hidden-partitions recorded a file-name prefix \
             in table metadata, so its files cannot be told from look-alikes that other programs left there; nothing \
             was deleted (\"{name}$orphans\" lists the candidates, to review and delete by hand)"
        )));
    }
    let out_of_range = || {
        Error::Invalid(format!(
            "retention_threshold of {}s is out of range: the accepted range is 0s to 36500d (100 years)",
            retention.as_secs()
        ))
    };
    let mut cutoff_ms = crate::table::expire::cutoff_ms(Utc::now().timestamp_millis(), retention)?;
    // Files of this process's writes that have not committed are younger
    // than their write's start.
    if let Some(start) = crate::store::pending::oldest_start_ms() {
        cutoff_ms = cutoff_ms.min(start.saturating_sub(CLOCK_MARGIN_MS));
    }
    let cutoff = DateTime::from_timestamp_millis(cutoff_ms).ok_or_else(out_of_range)?;
    let old: Vec<Orphan> = candidates(&table.location, md)
        .await?
        .into_iter()
        .filter(|o| o.last_modified < cutoff)
        .collect();
    if old.is_empty() {
        return Ok(0);
    }
    // References as of now, after the listing: a statement that committed
    // files while we listed them keeps them.
    let latest = table.load_bound().await?;
    let old: Vec<Path> = unreferenced(&table.location, &latest.metadata, old)
        .await?
        .into_iter()
        .map(|o| o.path)
        .collect();
    let n = crate::table::purge::delete_all(&table.location, old).await?;
    crate::table::purge::remove_empty_dirs(&table.location);
    Ok(n as u64)
}
