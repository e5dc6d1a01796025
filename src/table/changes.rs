//! The snapshots a changelog read covers: `table_changes('t', FROM, TO)`
//! is every snapshot after FROM up to and including TO (Iceberg's
//! convention: the start is exclusive), along TO's line of parents.
//!
//! | history (parents)      | FROM, TO   | snapshots                                   |
//! |------------------------|------------|---------------------------------------------|
//! | S1 ← S2 ← S3           | S1, S3     | S2, S3                                      |
//! | S1 ← S2 ← S3           | NULL, S3   | S1, S2, S3 (from the table's first)         |
//! | S1 ← S2 ← S3           | S3, S3     | none                                        |
//! | S1 ← S2, S1 ← S4 (rolled back) | S2, S4 | error: S2 is not an ancestor of S4   |
//! | S1 ← S2 ← S3, S2 expired | S1, S3   | error: S2 was expired                       |

use crate::error::{Error, Result};
use crate::spec::TableMetadata;
use crate::table::time_travel::snapshot_of;

/// The ids of the snapshots of table `name` after `from` up to and
/// including `to`, oldest first. `from` and `to` are snapshot ids, tags or
/// timestamps; `from` absent reads from the table's first snapshot, `to`
/// absent up to the current one.
pub fn changed_snapshots(md: &TableMetadata, name: &str, from: Option<&str>, to: Option<&str>) -> Result<Vec<i64>> {
    let to = match to {
        Some(selector) => snapshot_of(md, name, selector)?,
        None => match md.current_snapshot_id {
            Some(id) => id,
            None => return Ok(Vec::new()),
        },
    };
    let from = match from {
        Some(selector) => start_of(md, name, selector)?,
        None => None,
    };
    let mut chain = Vec::new();
    let mut at = to;
    loop {
        if Some(at) == from {
            break;
        }
        let Some(snapshot) = md.snapshot(at) else {
            let child = chain.last().copied().unwrap_or(to);
            return Err(Error::Invalid(format!(
                "table_changes on table {name}: snapshot {at} (the parent of snapshot {child}) was expired by expire_snapshots, so the changes of snapshot {child} cannot be read; start the range at snapshot {child} or later"
            )));
        };
        chain.push(at);
        match snapshot.parent_snapshot_id {
            Some(parent) => at = parent,
            None if from.is_some() => {
                let from = from.unwrap_or_default();
                return Err(Error::Invalid(format!(
                    "table_changes on table {name}: snapshot {from} is not an ancestor of snapshot {to} (the history forked: {to} does not descend from {from}); a changelog reads one line of history"
                )));
            }
            None => break,
        }
    }
    chain.reverse();
    Ok(chain)
}

/// The snapshot a range starts after; `None` for a time before the table's
/// first snapshot (the range then starts with it).
fn start_of(md: &TableMetadata, name: &str, selector: &str) -> Result<Option<i64>> {
    let is_time = selector.parse::<i64>().is_err() && !md.refs.contains_key(selector);
    if is_time
        && let Some(ts) = crate::plan::files::parse_timestamp_ms(selector)
        && md.snapshot_log.first().is_none_or(|e| ts < e.timestamp_ms)
        && md.snapshots.iter().all(|s| ts < s.timestamp_ms)
    {
        return Ok(None);
    }
    snapshot_of(md, name, selector).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Snapshot;

    fn md(parents: &[(i64, Option<i64>)]) -> TableMetadata {
        let mut md = crate::table::Table::initial_metadata(
            &datafusion::arrow::datatypes::Schema::new(vec![datafusion::arrow::datatypes::Field::new(
                "a",
                datafusion::arrow::datatypes::DataType::Int64,
                true,
            )]),
            &[],
        )
        .unwrap();
        for (i, (id, parent)) in parents.iter().enumerate() {
            md.snapshots.push(Snapshot {
                snapshot_id: *id,
                parent_snapshot_id: *parent,
                sequence_number: i as i64 + 1,
                timestamp_ms: 1000 * (i as i64 + 1),
                operation: "append".into(),
                summary: Default::default(),
                manifests: Some(Default::default()),
                manifests_file: None,
                table_spec_id: None,
                manifest_list: None,
                first_row_id: None,
                added_rows: None,
            });
            md.current_snapshot_id = Some(*id);
        }
        md
    }

    #[test]
    fn ranges_follow_parents() {
        let m = md(&[(1, None), (2, Some(1)), (3, Some(2))]);
        assert_eq!(changed_snapshots(&m, "t", Some("1"), Some("3")).unwrap(), vec![2, 3]);
        assert_eq!(changed_snapshots(&m, "t", None, None).unwrap(), vec![1, 2, 3]);
        assert_eq!(changed_snapshots(&m, "t", Some("3"), None).unwrap(), Vec::<i64>::new());
        assert_eq!(
            changed_snapshots(&m, "t", Some("2"), Some("2")).unwrap(),
            Vec::<i64>::new()
        );
    }

    #[test]
    fn forks_and_expired_snapshots_name_the_snapshot() {
        let m = md(&[(1, None), (2, Some(1)), (4, Some(1))]);
        let e = changed_snapshots(&m, "t", Some("2"), Some("4"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("snapshot 2 is not an ancestor of snapshot 4"), "{e}");
        let m = md(&[(1, None), (3, Some(2))]);
        let e = changed_snapshots(&m, "t", Some("1"), Some("3"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("snapshot 2 (the parent of snapshot 3) was expired"), "{e}");
        let e = changed_snapshots(&m, "t", Some("9"), None).unwrap_err().to_string();
        assert!(e.contains("no snapshot 9"), "{e}");
    }
}
