//! `ALTER TABLE t RENAME TO u`: a new name for a table, without moving a file.
//!
//! Iceberg metadata names every data file, manifest and metadata version by
//! its absolute path, so a table keeps its location when it is renamed, as
//! Iceberg's catalogs do: the new name becomes a link (`u.location`) to the
//! place the table already has. A table of the warehouse keeps its
//! directory (`t/`), which a marker (`t.renamed`) takes away from the old
//! name. The warehouse still owns the table's files: `DROP TABLE u`
//! deletes them as for any warehouse table.
//!
//! ```text
//! before                      after ALTER TABLE t RENAME TO u
//! t/metadata/v3.metadata.json t/metadata/v3.metadata.json   (unchanged)
//!                             t.renamed     {"renamed_to": "u", "location": "file:///wh/t"}
//!                             u.location    file:///wh/t
//! ```
//!
//! A later `CREATE TABLE t` cannot use `t/`: its table goes to
//! `t@<id>/` (a directory no table name can be, so listings skip it),
//! linked by `t.location`.
//!
//! | step | writes                                   | a process killed after it leaves            |
//! |------|------------------------------------------|---------------------------------------------|
//! | 1    | `t.renamed` (what `t` became, and where) | `t` gone, `u` not there yet: the same ALTER again finishes the rename |
//! | 2    | removes `t.location` (a linked `t`)       | the same                                    |
//! | 3    | `u.location`, put-if-absent               | the rename done                             |
//! | 4    | removes `t.renamed` (a linked `t`)        | the rename done                             |
//!
//! Of two statements taking the name `u` at once, step 3 decides; the loser
//! puts `t` back as it was. A table is never reachable under two names, so
//! a DROP of one name can never delete the other's files. A process that
//! had read `t` before another process renamed it keeps reading it under
//! its old name until it lists the warehouse again (as an Iceberg client
//! holding a loaded table does).
//!
//! Views and external tables are definitions (`v.view`, `e.external`):
//! renaming one stores its statement under the new name, restated with it.

use serde::{Deserialize, Serialize};

use super::ddl::TableEntry;
use super::definitions::{Definition, DefinitionKind};
use super::schema::WarehouseSchema;
use super::warehouse::check_table_name;
use crate::error::{Error, Result};

/// What `t.renamed` holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct RenameRecord {
    /// The new name, qualified by its schema when that is another one.
    renamed_to: String,
    /// Where the table lives.
    location: String,
}

/// What a rename statement expects the source to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenameKind {
    /// `ALTER TABLE`: a table (ours or external).
    Table,
    /// `ALTER VIEW`: a view.
    View,
}

impl WarehouseSchema {
    /// Rename `from` (of this schema) to `to` in schema `target` (this one,
    /// or another schema of the same warehouse); `target_label` is how
    /// messages and the rename record name it (`u` or `s.u`). `false` when
    /// there is nothing named `from`.
    pub async fn rename(
        &self,
        from: &str,
        target: &WarehouseSchema,
        to: &str,
        target_label: &str,
        kind: RenameKind,
    ) -> Result<bool> {
        check_table_name(from)?;
        check_table_name(to)?;
        if self.warehouse().warehouse_place() != target.warehouse().warehouse_place() {
            return crate::invalid!(
                "cannot rename {from} to {target_label}: a table can only be renamed within its warehouse"
            );
        }
        if let Some(definition) = self.warehouse().definition(from).await? {
            return self
                .rename_definition(from, definition, target, to, kind)
                .await
                .map(|_| true);
        }
        if self.has_other(from) {
            return crate::invalid!(
                "cannot rename {from}: it is a table of this session only (not stored in the warehouse), which DataFusion cannot rename"
            );
        }
        let entry = self.entry(from).await?;
        if entry.moved {
            return self.finish_rename(from, target, to, target_label).await;
        }
        if !self.entry_live(&entry).await? {
            return Ok(false);
        }
        if kind == RenameKind::View {
            return crate::invalid!("{from} is a table, not a view; ALTER TABLE {from} RENAME TO … renames it");
        }
        target.check_name_free(to, target_label).await?;
        let record = RenameRecord {
            renamed_to: target_label.to_string(),
            location: entry.location.url(),
        };
        self.write_record(from, &record).await?;
        self.note_moved(from, true);
        if entry.linked {
            self.warehouse().unlink(from).await?;
        }
        self.forget_name(from);
        if let Err(e) = target.warehouse().link(to, &record.location).await {
            // Another statement took the name meanwhile: put `from` back.
            self.restore(from, &entry).await?;
            return Err(match e {
                Error::TableExists(_) => Error::TableExists(format!(
                    "cannot rename {from} to {target_label}: another statement created {target_label} meanwhile; {from} is unchanged"
                )),
                e => e,
            });
        }
        target.add_name(to);
        target.note_moved(to, false);
        if entry.linked {
            self.warehouse().unmark_moved(from).await?;
            self.note_moved(from, false);
        }
        Ok(true)
    }

    async fn write_record(&self, from: &str, record: &RenameRecord) -> Result<()> {
        let json = serde_json::to_string(record).map_err(|e| Error::Invalid(e.to_string()))?;
        self.warehouse().mark_moved(from, &json).await
    }

    /// Undo steps 1 and 2 after the new name was lost to another statement.
    async fn restore(&self, from: &str, entry: &TableEntry) -> Result<()> {
        if entry.linked {
            self.warehouse().link(from, &entry.location.url()).await?;
        }
        self.warehouse().unmark_moved(from).await?;
        self.note_moved(from, false);
        self.add_name(from);
        Ok(())
    }

    /// `from` was renamed away: finish a rename to `to` that was
    /// interrupted before its new name was written; otherwise there is no
    /// table `from`.
    async fn finish_rename(&self, from: &str, target: &WarehouseSchema, to: &str, label: &str) -> Result<bool> {
        let Some(text) = self.warehouse().moved(from).await? else {
            return Ok(false);
        };
        let Ok(record) = serde_json::from_str::<RenameRecord>(&text) else {
            return Ok(false);
        };
        if record.renamed_to != label || target.warehouse().linked_location(to).await?.is_some() {
            return Ok(false);
        }
        target.check_name_free(to, label).await?;
        target.warehouse().link(to, &record.location).await?;
        target.add_name(to);
        if !self.warehouse().holds(&record.location) || self.warehouse().table_location(from).url() != record.location {
            // `from`'s directory is not the table's: the marker is not needed.
            self.warehouse().unmark_moved(from).await?;
            self.note_moved(from, false);
        }
        Ok(true)
    }

    /// Refuse a new name that is taken: a live table, a definition, a
    /// session table.
    async fn check_name_free(&self, to: &str, label: &str) -> Result<()> {
        let taken = || {
            Err(Error::TableExists(format!(
                "cannot rename to {label}: {label} already exists"
            )))
        };
        if self.has_other(to) || self.warehouse().definition(to).await?.is_some() {
            return taken();
        }
        let entry = self.entry(to).await?;
        if self.entry_live(&entry).await? {
            return taken();
        }
        if entry.linked {
            // A link left by a table that is gone.
            self.warehouse().unlink(to).await?;
        }
        Ok(())
    }

    /// Rename a stored view or external table: its statement restated with
    /// the new name, stored under it, then the old one removed.
    async fn rename_definition(
        &self,
        from: &str,
        definition: Definition,
        target: &WarehouseSchema,
        to: &str,
        kind: RenameKind,
    ) -> Result<()> {
        match (kind, definition.kind) {
            (RenameKind::Table, DefinitionKind::View) => {
                return crate::invalid!("{from} is a view; ALTER VIEW {from} RENAME TO … renames it");
            }
            (RenameKind::View, DefinitionKind::External) => {
                return crate::invalid!(
                    "{from} is an external table, not a view; ALTER TABLE {from} RENAME TO … renames it"
                );
            }
            _ => {}
        }
        if !std::ptr::eq(self, target) && self.warehouse().root != target.warehouse().root {
            return crate::invalid!(
                "cannot move {} {from} to another schema: create it there and drop it here",
                definition.kind.noun()
            );
        }
        target.check_name_free(to, to).await?;
        let restated = Definition {
            kind: definition.kind,
            sql: super::definitions::restate_name(&definition.sql, to)?,
        };
        if !target.warehouse().put_definition(to, &restated, false).await? {
            return Err(Error::TableExists(format!(
                "cannot rename to {to}: {to} already exists"
            )));
        }
        self.warehouse().remove_definition(from, definition.kind).await?;
        self.set_definition(from, None);
        target.set_definition(to, Some(definition.kind));
        if self.has_other(from) {
            use datafusion::catalog::SchemaProvider;
            self.deregister_table(from)?;
        }
        Ok(())
    }
}
