//! Time travel by timestamp: `"t@2024-05-01T12:00:00Z"` reads the snapshot
//! that was current at that moment.
//!
//! The metadata's `snapshot-log` records when each snapshot became current,
//! and keeps its entries after `expire_snapshots` removed the snapshot. So
//! the answer is the last log entry at or before the time: a live snapshot
//! is read; an expired one is an error — never the older snapshot that the
//! gap would otherwise expose (with S1, S2, S3 and S2 expired, a time
//! between S2 and S3 is S2's, not S1's).
//!
//! | the time is …                                         | result                              |
//! |-------------------------------------------------------|-------------------------------------|
//! | at or after a log entry of a live snapshot (the last such entry) | that snapshot            |
//! | at or after a log entry of an expired snapshot         | error: that snapshot was expired    |
//! | before the first entry, table created with the log     | error: no snapshot then             |
//! | before the first entry of a table older than the log  | the last snapshot committed at or before it |

use chrono::{DateTime, SecondsFormat};

use crate::error::{Error, Result};
use crate::spec::TableMetadata;

/// The snapshot `selector` names in table `name`: a snapshot id, a tag (or
/// branch), or a timestamp (the snapshot current then, see [`snapshot_at`]).
pub fn snapshot_of(md: &TableMetadata, name: &str, selector: &str) -> Result<i64> {
    if let Ok(id) = selector.parse::<i64>() {
        return md.snapshot(id).map(|s| s.snapshot_id).ok_or_else(|| {
            Error::Invalid(format!(
                "table {name} has no snapshot {id}: it never existed or was expired (expire_snapshots); \"{name}$snapshots\" lists the live ones"
            ))
        });
    }
    if let Some(tag) = md.refs.get(selector) {
        return Ok(tag.snapshot_id);
    }
    let ts = crate::plan::files::parse_timestamp_ms(selector).ok_or_else(|| {
        Error::Invalid(format!(
            "cannot read {selector:?} as a snapshot id, a tag of table {name} or a timestamp (e.g. 2024-05-01T12:00:00Z)"
        ))
    })?;
    snapshot_at(md, name, selector, ts)
}

/// The id of the snapshot of table `name` (metadata `md`) that was current
/// at `ts_ms`; `selector` is the time as the user wrote it.
pub fn snapshot_at(md: &TableMetadata, name: &str, selector: &str, ts_ms: i64) -> Result<i64> {
    let log = &md.snapshot_log;
    if let Some(i) = log.iter().rposition(|e| e.timestamp_ms <= ts_ms) {
        let entry = log[i];
        if md.snapshot(entry.snapshot_id).is_some() {
            return Ok(entry.snapshot_id);
        }
        let until = log
            .get(i + 1)
            .map(|next| format!(" until {}", rfc3339(next.timestamp_ms)))
            .unwrap_or_default();
        return Err(Error::Invalid(format!(
            "table {name} has no snapshot as of {selector}: the snapshot that was current then (snapshot {}, current from {}{until}) was expired by expire_snapshots; \"{name}$snapshots\" lists the live ones",
            entry.snapshot_id,
            rfc3339(entry.timestamp_ms),
        )));
    }
    // Before the log starts: a table created with the log had no snapshot
    // then; an older table's history before it is only its snapshots'.
    let legacy = md.created_ms.is_none();
    md.snapshots
        .iter()
        .filter(|s| legacy && s.timestamp_ms <= ts_ms)
        .max_by_key(|s| (s.timestamp_ms, s.sequence_number))
        .map(|s| s.snapshot_id)
        .ok_or_else(|| {
            let oldest = md
                .snapshots
                .iter()
                .map(|s| s.timestamp_ms)
                .min()
                .map(|t| {
                    format!(
                        " (the oldest live snapshot is from {}; older ones were expired or never existed)",
                        rfc3339(t)
                    )
                })
                .unwrap_or_default();
            Error::Invalid(format!("table {name} has no snapshot at or before {selector}{oldest}"))
        })
}

fn rfc3339(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true))
        .unwrap_or_else(|| format!("{ms} ms"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Snapshot;
    use crate::table::Table;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    fn md(times: &[(i64, i64)], live: &[i64], legacy: bool) -> TableMetadata {
        let schema = Schema::new(vec![Field::new("x", DataType::Int32, true)]);
        let mut md = Table::initial_metadata(&schema, &[]).unwrap();
        for &(id, t) in times {
            md.snapshots.push(Snapshot {
                snapshot_id: id,
                parent_snapshot_id: None,
                sequence_number: id,
                timestamp_ms: t,
                operation: "append".into(),
                summary: Default::default(),
                manifests: Some(Default::default()),
                manifests_file: None,
                table_spec_id: None,
                manifest_list: None,
                first_row_id: None,
                added_rows: None,
            });
            md.set_current_snapshot(id, t);
        }
        md.snapshots.retain(|s| live.contains(&s.snapshot_id));
        if legacy {
            md.snapshot_log.clear();
            md.created_ms = None;
        }
        md
    }

    #[test]
    fn a_time_in_an_expired_snapshots_period_is_an_error() {
        let md = md(&[(1, 100), (2, 200), (3, 300)], &[1, 3], false);
        assert_eq!(snapshot_at(&md, "t", "x", 150).unwrap(), 1);
        assert_eq!(snapshot_at(&md, "t", "x", 300).unwrap(), 3);
        assert_eq!(snapshot_at(&md, "t", "x", 10_000).unwrap(), 3);
        let e = snapshot_at(&md, "t", "x", 250).unwrap_err().to_string();
        assert!(e.contains("snapshot 2") && e.contains("was expired"), "{e}");
        let e = snapshot_at(&md, "t", "x", 50).unwrap_err().to_string();
        assert!(e.contains("no snapshot at or before x"), "{e}");
    }

    #[test]
    fn compacting_the_log_keeps_the_gaps() {
        let mut md = md(&[(1, 100), (2, 200), (3, 300), (4, 400)], &[1, 4], false);
        md.compact_snapshot_log();
        assert_eq!(md.snapshot_log.len(), 3);
        assert!(snapshot_at(&md, "t", "x", 350).is_err());
        assert_eq!(snapshot_at(&md, "t", "x", 199).unwrap(), 1);
    }

    #[test]
    fn tables_older_than_the_log_use_snapshot_times() {
        let md = md(&[(1, 100), (3, 300)], &[1, 3], true);
        assert_eq!(snapshot_at(&md, "t", "x", 250).unwrap(), 1);
        assert!(snapshot_at(&md, "t", "x", 50).is_err());
    }
}
