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
//! to them, by id or by a time when they were current, is then a clear
//! error; see `table::time_travel`). Only after it succeeded are files
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
fn expiring(md: &TableMetadata, retention: Duration, now_ms: i64) -> Result<BTreeSet<i64>> {
    let cutoff = cutoff_ms(now_ms, retention)?;
    let tagged: HashSet<i64> = md.refs.values().map(|r| r.snapshot_id).collect();
    Ok(md
        .snapshots
        .iter()
        .filter(|s| Some(s.snapshot_id) != md.current_snapshot_id)
        .filter(|s| !tagged.contains(&s.snapshot_id))
        .filter(|s| s.timestamp_ms < cutoff)
        .map(|s| s.snapshot_id)
        .collect())
}

/// Expire the snapshots of `table` older than `retention`.
pub async fn expire_snapshots(table: &Table, retention: Duration) -> Result<Expired> {
    let now = Utc::now().timestamp_millis();
    if expiring(&table.load_bound().await?.metadata, retention, now)?.is_empty() {
        return Ok(Expired::default());
    }
    let mut expired_ids = BTreeSet::new();
    let mut before: Option<TableMetadata> = None;
    let committed = table
        .commit(|md| {
            expired_ids = expiring(md, retention, now)?;
            before = Some(md.clone());
            let mut next = md.clone();
            next.snapshots.retain(|s| !expired_ids.contains(&s.snapshot_id));
            // The log keeps when the expired snapshots were current, so time
            // travel into those periods is an error, not an older snapshot.
            next.compact_snapshot_log();
            Ok(next)
        })
        .await?;
    let (Some(before), false) = (before, expired_ids.is_empty()) else {
        return Ok(Expired::default());
    };
    // What the remaining snapshots reference stays; of the rest, only what
    // the expired snapshots referenced is ours to delete.
    let location = &table.location;
    let kept = referenced_files(location, &committed.metadata).await?;
    let kept_data: HashSet<Path> = kept.data.into_iter().collect();
    let kept_manifests: HashSet<Path> = kept.manifests.into_iter().chain(kept.iceberg).collect();
    let mut gone = before.clone();
    gone.snapshots = before
        .snapshots
        .iter()
        .filter(|s| expired_ids.contains(&s.snapshot_id))
        .cloned()
        .collect::<Vec<Snapshot>>();
    let old = referenced_files(location, &gone).await?;
    let data: Vec<Path> = old.data.into_iter().filter(|p| !kept_data.contains(p)).collect();
    let unkept =
        |paths: Vec<Path>| -> Vec<Path> { paths.into_iter().filter(|p| !kept_manifests.contains(p)).collect() };
    let (manifests, iceberg) = (unkept(old.manifests), unkept(old.iceberg));
    let result = Expired {
        snapshots: expired_ids.len() as u64,
        data_files: delete_all(location, data).await? as u64,
        manifests: delete_all(location, manifests).await? as u64,
    };
    // The expired snapshots' manifest lists and the twins of their manifests.
    delete_all(location, iceberg).await?;
    crate::table::purge::remove_empty_dirs(location);
    Ok(result)
}

/// The longest retention threshold accepted: 100 years, far beyond any
/// file's age, and small enough that `now - threshold` never overflows.
pub const MAX_RETENTION: Duration = Duration::from_secs(36_500 * 86_400);

/// `'7d'`, `'12h'`, `'30m'`, `'45s'`, `'0s'` → a duration from 0s to
/// [`MAX_RETENTION`] (checked arithmetic: no value wraps).
pub fn parse_retention(text: &str) -> Result<Duration> {
    let t = text.trim();
    let bad = || {
        Error::Invalid(format!(
            "retention_threshold {text:?} is not a duration such as '7d', '12h', '30m' or '45s' (and never negative)"
        ))
    };
    let out_of_range = || {
        Error::Invalid(format!(
            "retention_threshold {text:?} is out of range: the accepted range is 0s to 36500d (100 years)"
        ))
    };
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    if split == 0 {
        return Err(bad());
    }
    let (number, unit) = t.split_at(split);
    // All digits: parsing fails only when the number exceeds u64.
    let n: u64 = number.parse().map_err(|_| out_of_range())?;
    let unit_seconds: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "d" | "day" | "days" => 86_400,
        "h" | "hour" | "hours" => 3_600,
        "m" | "min" | "minute" | "minutes" => 60,
        "s" | "sec" | "second" | "seconds" => 1,
        _ => return Err(bad()),
    };
    let seconds = n.checked_mul(unit_seconds).ok_or_else(out_of_range)?;
    let retention = Duration::from_secs(seconds);
    if retention > MAX_RETENTION {
        return Err(out_of_range());
    }
    Ok(retention)
}

/// `now_ms - retention` in milliseconds, or an error (never a wrapped value).
pub fn cutoff_ms(now_ms: i64, retention: Duration) -> Result<i64> {
    i64::try_from(retention.as_millis())
        .ok()
        .and_then(|r| now_ms.checked_sub(r))
        .ok_or_else(|| {
            Error::Invalid(format!(
                "retention_threshold of {}s is out of range: the accepted range is 0s to 36500d (100 years)",
                retention.as_secs()
            ))
        })
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
        assert_eq!(parse_retention("36500d").unwrap(), MAX_RETENTION);
        // Values that used to wrap (to a negative cutoff, or to ~17 hours).
        for huge in [
            "36501d",
            "200000000000d",
            "213503982334602d",
            "100000000d",
            "99999999999999999999999s",
        ] {
            let e = parse_retention(huge).unwrap_err().to_string();
            assert!(
                e.contains("retention_threshold") && e.contains("0s to 36500d"),
                "{huge}: {e}"
            );
        }
        assert!(cutoff_ms(i64::MIN + 10, MAX_RETENTION).is_err());
        assert_eq!(cutoff_ms(10_000, Duration::from_secs(4)).unwrap(), 6_000);
    }
}
