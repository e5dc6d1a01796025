//! Changelog reads (`table_changes`) of other engines' tables, Iceberg and
//! Delta: each snapshot (Delta: version) of the range against its parent,
//! both read by time travel, so their deletes of every kind (position,
//! equality, deletion vectors; Delta's removes) are applied as in any read.
//!
//! | t's history (Delta)                       | `table_changes('t', 0, 2)`             |
//! |-------------------------------------------|----------------------------------------|
//! | v0 add (1,'a'), (2,'b')                   | (the start)                            |
//! | v1 remove that file, add (1,'a'), (2,'c') | (2,'b') DELETE 0, (2,'c') INSERT 0     |
//! | v2 OPTIMIZE                               | nothing                                |
//!
//! Columns are matched by field id to TO's schema. An Iceberg append is
//! read from the manifests it wrote. Otherwise the two sides read only the
//! data files that differ between the snapshot and its parent (Delta: the
//! files of its remove and add actions; a file whose deletion vector
//! changed is on both sides), and the multiset difference of their rows
//! drops the rows a rewrite carried over. Where an equality delete could
//! touch any file, each side is the whole snapshot. Delta's change data
//! feed, where the writer recorded one, is read instead
//! (`delta::change_feed`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use object_store::path::Path;

use super::delta::history::METADATA_CHANGED;
use super::table::ForeignTable;
use crate::error::Result;
use crate::provider::changes::{
    ChangeSide, ChangesRequest, RecordedChanges, SnapshotChange, changelog_view, check_columns,
};
use crate::spec::{Snapshot, TableMetadata};

impl ForeignTable {
    /// The changelog of this table for `request`.
    pub async fn changes(&self, request: &ChangesRequest) -> Result<Arc<dyn TableProvider>> {
        let name = self.name();
        let mut md = self.metadata().clone();
        if let Some(history) = self.history().await? {
            md.snapshots = history;
        }
        let snapshots =
            crate::table::changes::changed_snapshots(&md, name, request.from.as_deref(), request.to.as_deref())?;
        // TO's columns; the current ones when TO is the current snapshot.
        let to = match &request.to {
            Some(to) => {
                let id = crate::table::time_travel::snapshot_of(&md, name, to)?;
                Some(self.at(&id.to_string()).await?)
            }
            None => None,
        };
        let to = to.as_ref().unwrap_or(self);
        let schema = to.schema();
        // Without identifier columns given, the table's own (Iceberg's
        // identifier-field-ids), as Spark's changelog view takes them.
        let ids = match request.ids.is_empty() {
            true => to.identifier_columns(),
            false => request.ids.clone(),
        };
        check_columns(name, &schema, &ids)?;
        let to_fields = &to.metadata().current_spec()?.schema.fields;
        let to_id = snapshots.last().copied();
        let mut changes = Vec::new();
        let mut recorded = Vec::new();
        // The snapshot read last: the next one's parent in a linear range.
        let mut last: Option<(i64, ForeignTable)> = None;
        for (start, segment) in segments(&md, &snapshots) {
            if let Some(feed) = self
                .recorded(segment, to_id.map(|id| (id, to)), to_fields, &schema)
                .await?
            {
                recorded.push(RecordedChanges {
                    table: feed,
                    range_start: snapshots[0],
                });
                continue;
            }
            for (i, id) in segment.iter().enumerate() {
                let snapshot = md.snapshot(*id).expect("in range");
                if rewrites_only(snapshot) {
                    continue;
                }
                let now = self.at(&id.to_string()).await?;
                let opened = last.replace((*id, now.clone()));
                let (appended, sides) = match snapshot.parent_snapshot_id {
                    None => (true, vec![side(now, to_fields, 1)?]),
                    Some(parent) => {
                        let then = match opened {
                            Some((read, table)) if read == parent => table,
                            _ => self.at(&parent.to_string()).await?,
                        };
                        match appended(&then, &now)? {
                            Some(added) => (true, vec![side(now.restricted_to(added), to_fields, 1)?]),
                            None => match changed_files(&then, &now).await? {
                                Some((gone, came)) => {
                                    let mut sides = Vec::new();
                                    if !came.is_empty() {
                                        sides.push(side(now.only_files(came), to_fields, 1)?);
                                    }
                                    if !gone.is_empty() {
                                        sides.push(side(then.only_files(gone), to_fields, -1)?);
                                    }
                                    (sides.len() == 1 && sides[0].sign == 1, sides)
                                }
                                None => (false, vec![side(now, to_fields, 1)?, side(then, to_fields, -1)?]),
                            },
                        }
                    }
                };
                if sides.is_empty() {
                    continue;
                }
                changes.push(SnapshotChange {
                    ordinal: (start + i) as i32,
                    snapshot: *id,
                    appended,
                    sides,
                });
            }
        }
        changelog_view(&schema, changes, recorded, &ids)
    }

    /// The changes of `segment` (snapshots with one schema) as the format's
    /// writers recorded them (Delta's change data feed), read as TO's
    /// columns (`to_fields`, by field id), if they did for all of them.
    /// `to` is TO's snapshot id and table.
    async fn recorded(
        &self,
        segment: &[i64],
        to: Option<(i64, &ForeignTable)>,
        to_fields: &[crate::spec::NestedField],
        schema: &SchemaRef,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        let (Some(first), Some(last)) = (segment.first(), segment.last()) else {
            return Ok(None);
        };
        let read;
        let at_last = match to {
            Some((id, table)) if id == *last => table,
            _ => {
                read = self.at(&last.to_string()).await?;
                &read
            }
        };
        let fields = &at_last.metadata().current_spec()?.schema;
        let select: Vec<Option<String>> = to_fields
            .iter()
            .map(|f| fields.field_by_id(f.id).map(|f| f.name.clone()))
            .collect();
        self.recorded_changes(*first, *last, schema, &select).await
    }
}

/// Table `table` (a snapshot of the range, or its parent) read as the
/// columns `to` (by field id).
fn side(table: ForeignTable, to: &[crate::spec::NestedField], sign: i64) -> Result<ChangeSide> {
    let fields = &table.metadata().current_spec()?.schema;
    let select = to
        .iter()
        .map(|f| fields.field_by_id(f.id).map(|f| f.name.clone()))
        .collect();
    Ok(ChangeSide {
        table: Arc::new(table),
        select,
        sign,
    })
}

/// The data manifests snapshot `now` wrote, when it only appended data
/// files to its parent `then` (both Iceberg: manifests are files): its
/// changes are those files' rows, read without the rest of the table.
fn appended(then: &ForeignTable, now: &ForeignTable) -> Result<Option<Vec<crate::spec::ManifestFile>>> {
    let (Some((then_data, then_deletes)), Some((now_data, now_deletes))) =
        (then.snapshot_manifests()?, now.snapshot_manifests()?)
    else {
        return Ok(None);
    };
    let paths = |ms: &[crate::spec::ManifestFile]| {
        ms.iter()
            .map(|m| m.path.clone())
            .collect::<std::collections::BTreeSet<_>>()
    };
    if paths(&then_deletes) != paths(&now_deletes) {
        return Ok(None);
    }
    Ok(crate::plan::changes::appended(&then_data, &now_data))
}

/// The data files snapshot `now` removed from its parent `then` and the
/// ones it added (Delta: its remove and add actions), a file whose deletes
/// changed (a new deletion vector) counting as both; `None` when a delete
/// is by equality (it may touch any file). Only those files' rows can
/// differ, so the two sides read them and no other.
async fn changed_files(then: &ForeignTable, now: &ForeignTable) -> Result<Option<(HashSet<Path>, HashSet<Path>)>> {
    let (Some(before), Some(after)) = (then.files_and_deletes().await?, now.files_and_deletes().await?) else {
        return Ok(None);
    };
    let differ = |a: &HashMap<Path, Vec<u64>>, b: &HashMap<Path, Vec<u64>>| -> HashSet<Path> {
        a.iter()
            .filter(|(path, deleted)| b.get(*path) != Some(*deleted))
            .map(|(path, _)| path.clone())
            .collect()
    };
    Ok(Some((differ(&before, &after), differ(&after, &before))))
}

/// The range cut where a snapshot changed the table's metadata (Delta: a
/// `metaData` action: schema, partitioning or properties), each part with
/// its first index in `snapshots`: within a part, one schema holds.
fn segments<'a>(md: &TableMetadata, snapshots: &'a [i64]) -> Vec<(usize, &'a [i64])> {
    let mut cuts: Vec<usize> = (1..snapshots.len())
        .filter(|i| {
            md.snapshot(snapshots[*i])
                .is_some_and(|s| s.summary.contains_key(METADATA_CHANGED))
        })
        .collect();
    cuts.insert(0, 0);
    cuts.push(snapshots.len());
    cuts.windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| (w[0], &snapshots[w[0]..w[1]]))
        .collect()
}

/// A compaction: the same rows in other files (Iceberg `replace`, Delta
/// OPTIMIZE), so no change.
fn rewrites_only(snapshot: &Snapshot) -> bool {
    let delta = snapshot.summary.get("delta-operation").map(String::as_str);
    matches!(snapshot.operation.as_str(), "replace" | "optimize") || delta == Some("OPTIMIZE")
}
