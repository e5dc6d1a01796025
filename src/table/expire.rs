//! `ALTER TABLE t EXECUTE expire_snapshots(retention_threshold => '7d')`:
//! forget snapshots older than the threshold, then delete the files only
//! they referenced.
//!
//! | snapshot                                  | kept?                |
//! |-------------------------------------------|----------------------|
//! | the current one                           | always               |
//! | named by a tag (`ALTER TABLE … CREATE TAG`) | always             |
//! | committed within the threshold            | yes                  |
//! | older                                     | expired              |
//!
//! The commit removes the expired snapshots from the metadata (time travel
//! to them is then a clear error). Only after it succeeded are files
//! deleted: manifests no remaining snapshot lists, and data files that only
//! such manifests listed — never a file a remaining snapshot can read.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use chrono::Utc;
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::spec::{Snapshot, TableMetadata};
use crate::table::Table;
use crate::table::purge::{delete_all, referenced_files};

/// What `expire_snapshots` did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Expired {
    pub snapshots: u64,
    pub manifests: u64,
    pub data_files: u64,
}

/// The snapshots of `md` that `retention` lets expire at `now_ms`.
fn expiring(md: &TableMetadata, retention: Duration, now_ms: i64) -> BTreeSet<i64> {
    let cutoff = now_ms - retention.as_millis() as i64;
    let tagged: HashSet<i64> = md.refs.values().map(|r| r.snapshot_id).collect();
    md.snapshots
        .iter()
        .filter(|s| Some(s.snapshot_id) != md.current_snapshot_id)
        .filter(|s| !tagged.contains(&s.snapshot_id))
        .filter(|s| s.timestamp_ms < cutoff)
        .map(|s| s.snapshot_id)
        .collect()
}

/// Expire the snapshots of `table` older than `retention`.
pub async fn expire_snapshots(table: &Table, retention: Duration) -> Result<Expired> {
    let now = Utc::now().timestamp_millis();
    if expiring(&table.load_bound().await?.metadata, retention, now).is_empty() {
        return Ok(Expired::default());
    }
    let mut expired_ids = BTreeSet::new();
    let mut before: Option<TableMetadata> = None;
    let committed = table
        .commit(|md| {
            expired_ids = expiring(md, retention, now);
            before = Some(md.clone());
            let mut next = md.clone();
            next.snapshots.retain(|s| !expired_ids.contains(&s.snapshot_id));
            Ok(next)
        })
        .await?;
    let (Some(before), false) = (before, expired_ids.is_empty()) else {
        return Ok(Expired::default());
    };
    // What the remaining snapshots reference stays; of the rest, only what
    // the expired snapshots referenced is ours to delete.
    let location = &table.location;
    let (kept_data, kept_manifests) = referenced_files(location, &committed.metadata).await?;
    let kept_data: HashSet<Path> = kept_data.into_iter().collect();
    let kept_manifests: HashSet<Path> = kept_manifests.into_iter().collect();
    let mut gone = before.clone();
    gone.snapshots = before
        .snapshots
        .iter()
        .filter(|s| expired_ids.contains(&s.snapshot_id))
        .cloned()
        .collect::<Vec<Snapshot>>();
    let (old_data, old_manifests) = referenced_files(location, &gone).await?;
    let data: Vec<Path> = old_data.into_iter().filter(|p| !kept_data.contains(p)).collect();
    let manifests: Vec<Path> = old_manifests
        .into_iter()
        .filter(|p| !kept_manifests.contains(p))
        .collect();
    let result = Expired {
        snapshots: expired_ids.len() as u64,
        data_files: delete_all(location, data).await? as u64,
        manifests: delete_all(location, manifests).await? as u64,
    };
    crate::table::purge::remove_empty_dirs(location);
    Ok(result)
}

/// `'7d'`, `'12h'`, `'30m'`, `'45s'`, `'0s'` → a duration (no negative).
pub fn parse_retention(text: &str) -> Result<Duration> {
    let t = text.trim();
    let bad = || {
        Error::Invalid(format!(
            "retention_threshold {text:?} is not a duration such as '7d', '12h', '30m' or '45s' (and never negative)"
        ))
    };
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    if split == 0 {
        return Err(bad());
    }
    let (number, unit) = t.split_at(split);
    let n: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim().to_ascii_lowercase().as_str() {
        "d" | "day" | "days" => n * 86_400,
        "h" | "hour" | "hours" => n * 3_600,
        "m" | "min" | "minute" | "minutes" => n * 60,
        "s" | "sec" | "second" | "seconds" => n,
        _ => return Err(bad()),
    };
    Ok(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_thresholds() {
        assert_eq!(parse_retention("7d").unwrap(), Duration::from_secs(7 * 86_400));
        assert_eq!(parse_retention("0s").unwrap(), Duration::ZERO);
        assert_eq!(parse_retention(" 12 h").unwrap(), Duration::from_secs(12 * 3600));
        for bad in ["-1d", "7", "d", "7 weeks", "", "1.5d"] {
            assert!(parse_retention(bad).is_err(), "{bad}");
        }
    }
}
