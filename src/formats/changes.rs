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
//! Columns are matched by field id to TO's schema. Unlike our own tables'
//! (`provider::changes`), each side is a whole snapshot: the multiset
//! difference finds the changed rows among all of them.

use std::sync::Arc;

use datafusion::catalog::TableProvider;

use super::table::ForeignTable;
use crate::error::Result;
use crate::provider::changes::{ChangeSide, ChangesRequest, SnapshotChange, changelog_view, check_columns};
use crate::spec::Snapshot;

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
        let mut changes = Vec::new();
        for (ordinal, id) in snapshots.iter().enumerate() {
            let snapshot = md.snapshot(*id).expect("in range");
            if rewrites_only(snapshot) {
                continue;
            }
            let mut sides = vec![self.side(*id, to_fields, 1).await?];
            if let Some(parent) = snapshot.parent_snapshot_id {
                sides.push(self.side(parent, to_fields, -1).await?);
            }
            changes.push(SnapshotChange {
                ordinal: ordinal as i32,
                snapshot: *id,
                appended: sides.len() == 1,
                sides,
            });
        }
        changelog_view(&schema, changes, &ids)
    }

    /// Snapshot `id` read as the columns `to` (by field id).
    async fn side(&self, id: i64, to: &[crate::spec::NestedField], sign: i64) -> Result<ChangeSide> {
        let table = self.at(&id.to_string()).await?;
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
}

/// A compaction: the same rows in other files (Iceberg `replace`, Delta
/// OPTIMIZE), so no change.
fn rewrites_only(snapshot: &Snapshot) -> bool {
    let delta = snapshot.summary.get("delta-operation").map(String::as_str);
    matches!(snapshot.operation.as_str(), "replace" | "optimize") || delta == Some("OPTIMIZE")
}
