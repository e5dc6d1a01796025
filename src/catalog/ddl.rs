//! CREATE and DROP: where a table may live, and what ending a table deletes.
//!
//! | statement                          | warehouse table (`<wh>/<name>/`)        | table with `LOCATION`                          |
//! |------------------------------------|-----------------------------------------|------------------------------------------------|
//! | `DROP TABLE t`                     | tombstone, then purge what `t` owns      | unregistered; its files stay, still a table    |
//! | `DROP TABLE t PURGE`               | same as plain DROP                       | tombstone, purge what `t` owns, unregister     |
//! | `CREATE OR REPLACE TABLE t …` (same place) | new table in the same version chain, then purge what the old one owned | same |
//! | `CREATE OR REPLACE TABLE t …` (new place)  | new table committed and registered, then the old one ended as by DROP | same |
//! | `CREATE TABLE t LOCATION 'x'` (no columns) | —                               | registers the table already at `x`             |
//!
//! "Purge" deletes only files the table's metadata names (see
//! `table::purge`); anything else under the location stays.
//!
//! A table whose latest metadata version cannot be read (damaged) cannot
//! say which files are its own, so none are deleted: `DROP TABLE t` ends a
//! warehouse table with a tombstone (written without reading the damaged
//! version) and unregisters a `LOCATION` table, keeping every file;
//! `DROP TABLE t PURGE` is refused. `DROP TABLE [IF EXISTS] t` where no
//! table was ever committed but killed `CREATE … AS SELECT`s of `t` left
//! files removes those files (`table::creation`, the same claims as a
//! CREATE's cleanup). Either is reported as a note. A location is
//! refused when it is the warehouse root, inside it or contains it, when it
//! is inside or contains another table's location, when it already holds a
//! live table, and when it holds files but no table (unless the session
//! option `hidden_partitions.allow_non_empty_location` is on).
//!
//! A CREATE commits the new table before it touches anything of an old one
//! ([`WarehouseSchema::commit_create`]), and only then registers it and
//! ends what it replaces ([`WarehouseSchema::finish_create`]): a CREATE
//! that fails leaves the old table as it was. Of two statements creating
//! one name at once, the version chain (or the put-if-absent link) decides:
//! `CREATE OR REPLACE` replaces whatever the other one committed (last
//! writer wins), plain `CREATE` fails saying another statement created the
//! table meanwhile, `IF NOT EXISTS` does nothing.

use super::schema::WarehouseSchema;
use super::warehouse::check_table_name;
use crate::error::{Error, Result};
use crate::spec::TableMetadata;
use crate::store::url::{Overlap, parse_location};
use crate::store::{TableLocation, Versioned};
use crate::table::iceberg_commit::IcebergFiles;
use crate::table::purge::{PurgeReport, delete_all, purge, remove_empty_dirs};

/// What to do when the name is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateMode {
    Create,
    IfNotExists,
    OrReplace,
}

/// Where a table of ours is registered.
#[derive(Debug, Clone)]
pub struct TableEntry {
    pub location: TableLocation,
    /// Linked from the warehouse by a `.location` file: stored at a
    /// `LOCATION` of its own, or (`managed`) in the warehouse after a rename.
    pub linked: bool,
    /// Linked, but stored inside the warehouse (renamed, or created beside
    /// a renamed table's directory): the warehouse owns its files, so a
    /// DROP deletes them as for any warehouse table.
    pub managed: bool,
    /// Not linked, and the name was renamed away (see `catalog::rename`):
    /// `location` is the directory of the table that now has another name,
    /// not a table of this name.
    pub moved: bool,
}

impl TableEntry {
    fn inside(location: TableLocation, moved: bool) -> Self {
        Self {
            location,
            linked: false,
            managed: false,
            moved,
        }
    }

    /// Whether a DROP deletes the table's files (a table the warehouse owns).
    pub fn owned(&self) -> bool {
        !self.linked || self.managed
    }
}

/// What committing a planned CREATE did.
#[derive(Debug)]
pub enum Created {
    /// The new table committed; `replaced` is the table it took the place of
    /// in the same version chain (to purge).
    New { replaced: Option<Versioned> },
    /// `IF NOT EXISTS`, and another statement created the table meanwhile:
    /// nothing was committed.
    Existed,
}

/// What a `DROP TABLE` found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dropped {
    /// No table of that name, nor anything of one.
    Nothing,
    /// A table, ended as the table above says.
    Table,
    /// A table whose latest metadata cannot be read (`problem`): ended by a
    /// tombstone (or unregistered, when `linked`), its files kept at `url`.
    Damaged { problem: String, url: String, linked: bool },
    /// No table, but the files of killed `CREATE … AS SELECT`s of it: this
    /// many were removed.
    Leftovers(usize),
}

impl Dropped {
    /// Whether there was something of that name to drop.
    pub fn found(&self) -> bool {
        !matches!(self, Self::Nothing)
    }

    /// What the user is told beyond "dropped", if anything.
    pub fn note(&self, name: &str) -> Option<String> {
        match self {
            Self::Nothing | Self::Table => None,
            Self::Damaged {
                problem,
                url,
                linked: false,
            } => Some(format!(
                "table {name} could not be read ({problem}); it was dropped, and its files were kept under {url} because they cannot be proven to be its own"
            )),
            Self::Damaged {
                problem,
                url,
                linked: true,
            } => Some(format!(
                "table {name} could not be read ({problem}); it was unregistered, and its files were kept at {url}"
            )),
            Self::Leftovers(n) => Some(format!(
                "no table {name} was ever committed; removed {n} files left by a killed CREATE TABLE {name} … AS SELECT"
            )),
        }
    }
}

/// A validated CREATE, before anything is written.
#[derive(Debug)]
pub struct CreatePlan {
    pub name: String,
    pub location: TableLocation,
    mode: CreateMode,
    linked: bool,
    /// A table of the same name somewhere else, to end first (DROP semantics).
    drop_first: Option<TableEntry>,
    /// A non-table provider of the same name (e.g. a memory table) to replace.
    replace_other: bool,
    /// Replace the live table at `location` in its version chain.
    replace_in_place: bool,
    /// A link left by a table that is gone.
    stale_link: bool,
}

impl CreatePlan {
    /// Whether the new table replaces a live one in its version chain.
    pub fn in_place(&self) -> bool {
        self.replace_in_place
    }
}

impl WarehouseSchema {
    /// Where table `name` is registered, and — for a table in the warehouse —
    /// its version hint, read in the same round trip as the link lookup.
    pub async fn entry_and_hint(&self, name: &str) -> Result<(TableEntry, Option<u64>)> {
        let inside = self.warehouse().table_location(name);
        let read_hint = async {
            match inside.last_seen() {
                Some(_) => Ok(None),
                None => inside.read_hint().await,
            }
        };
        let (link, hint, moved) = futures::join!(
            self.warehouse().linked_location(name),
            read_hint,
            self.warehouse().moved(name)
        );
        match link? {
            Some(url) => Ok((self.linked_entry(name, &url)?, None)),
            None => {
                let moved = moved?.is_some();
                self.note_moved(name, moved);
                Ok((TableEntry::inside(inside, moved), hint?))
            }
        }
    }

    fn linked_entry(&self, name: &str, url: &str) -> Result<TableEntry> {
        Ok(TableEntry {
            location: self.resolve_link(name, url)?,
            linked: true,
            managed: self.warehouse().holds(url),
            moved: false,
        })
    }

    /// The location table `name`'s link names; an error naming the table
    /// and its `LOCATION` when the store cannot be set up.
    fn resolve_link(&self, name: &str, url: &str) -> Result<TableLocation> {
        self.resolve_location(url)
            .map_err(|e| Error::Invalid(format!("table {name} (LOCATION '{url}') cannot be read: {e}")))
    }

    /// Where table `name` is registered, if anywhere (live or not).
    pub async fn entry(&self, name: &str) -> Result<TableEntry> {
        let (link, moved) = futures::join!(self.warehouse().linked_location(name), self.warehouse().moved(name));
        match link? {
            Some(url) => self.linked_entry(name, &url),
            None => {
                let moved = moved?.is_some();
                self.note_moved(name, moved);
                Ok(TableEntry::inside(self.warehouse().table_location(name), moved))
            }
        }
    }

    /// Whether a live table (not a tombstone) has `entry`'s name.
    pub async fn entry_live(&self, entry: &TableEntry) -> Result<bool> {
        if entry.moved {
            return Ok(false);
        }
        is_live(&entry.location).await
    }

    /// Check a CREATE TABLE against everything already there; `None` when
    /// `IF NOT EXISTS` found the table.
    pub async fn plan_create(
        &self,
        name: &str,
        location: Option<&str>,
        mode: CreateMode,
        allow_non_empty: bool,
    ) -> Result<Option<CreatePlan>> {
        check_table_name(name)?;
        // A table another statement commits while this one looks is seen
        // by looking again (then as a table that exists).
        for _ in 0..3 {
            if let Some(plan) = self.plan_create_once(name, location, mode, allow_non_empty).await? {
                return Ok(plan);
            }
        }
        Err(created_meanwhile(name))
    }

    /// One look; `None` when a table appeared at the name's place meanwhile.
    async fn plan_create_once(
        &self,
        name: &str,
        location: Option<&str>,
        mode: CreateMode,
        allow_non_empty: bool,
    ) -> Result<Option<Option<CreatePlan>>> {
        let existing = self.entry(name).await?;
        let live = self.entry_live(&existing).await?;
        if let Some(definition) = self.warehouse().definition(name).await? {
            if mode == CreateMode::IfNotExists {
                return Ok(Some(None));
            }
            return Err(Error::TableExists(format!(
                "{name} is {} {}; {} {name} first",
                if definition.kind == super::definitions::DefinitionKind::View {
                    "a"
                } else {
                    "an"
                },
                definition.kind.noun(),
                definition.kind.drop_statement()
            )));
        }
        let other = self.has_other(name);
        if live || other {
            match mode {
                CreateMode::IfNotExists => return Ok(Some(None)),
                CreateMode::Create => return Err(Error::TableExists(format!("table {name} already exists"))),
                CreateMode::OrReplace => {}
            }
        }
        let (target, linked) = match location {
            Some(written) => (self.check_location(name, written).await?, true),
            // The warehouse's place for the name: its directory, unless a
            // renamed table keeps that (then a new one beside it, linked).
            None if existing.managed => (existing.location.clone(), true),
            None if existing.moved => (self.warehouse().relocated_table_location(name), true),
            None => (self.warehouse().table_location(name), false),
        };
        let own_place = existing.location.place().overlap(&target.place()) == Overlap::Same;
        let same_place = live && own_place;
        if !same_place && !check_contents(&target, location, allow_non_empty, own_place).await? {
            return Ok(None);
        }
        Ok(Some(Some(CreatePlan {
            name: name.to_string(),
            location: target,
            mode,
            linked,
            drop_first: (live && !same_place).then_some(existing.clone()),
            replace_other: other,
            replace_in_place: same_place,
            stale_link: existing.linked && !live,
        })))
    }

    /// A `LOCATION` for table `name`: parsed, and clear of the warehouse and
    /// of every other linked table.
    async fn check_location(&self, name: &str, written: &str) -> Result<TableLocation> {
        if let Some(ns) = &self.warehouse().namespace {
            return crate::invalid!(
                "LOCATION {written:?}: tables of schema {ns} are stored in the warehouse; leave out LOCATION (tables with LOCATION are in the warehouse's own schema)"
            );
        }
        let place = parse_location(written)?;
        let warehouse = self.warehouse().place();
        match place.overlap(&warehouse) {
            Overlap::Disjoint => {}
            Overlap::Inside => {
                return Err(Error::Invalid(format!(
                    "LOCATION {written:?} is inside the warehouse {}; leave out LOCATION to store table {name} in the warehouse",
                    warehouse.url()
                )));
            }
            Overlap::Same | Overlap::Contains => {
                return Err(Error::Invalid(format!(
                    "LOCATION {written:?} is or contains the warehouse {}; a table needs a directory of its own",
                    warehouse.url()
                )));
            }
        }
        for (other, url) in self.warehouse().links().await? {
            if other == name {
                continue;
            }
            let Ok(theirs) = parse_location(&url) else { continue };
            let relation = match place.overlap(&theirs) {
                Overlap::Disjoint => continue,
                Overlap::Same => "is the location of",
                Overlap::Inside => "is inside the location of",
                Overlap::Contains => "contains the location of",
            };
            return Err(Error::Invalid(format!(
                "LOCATION {written:?} {relation} table {other} ({url}); a table needs a directory of its own"
            )));
        }
        self.resolve_location(&place.url())
    }

    /// Commit a planned CREATE's first metadata (which may already hold a
    /// snapshot of data files written under the location). Nothing of an old
    /// table is touched yet; on an error other than `CommitUnknown` nothing
    /// was committed (the caller's files are its own to delete).
    pub async fn commit_create(&self, plan: &CreatePlan, metadata: &TableMetadata) -> Result<Created> {
        if plan.replace_in_place || plan.mode == CreateMode::OrReplace {
            // Also replaces a table another statement created here meanwhile.
            let (_, replaced) = plan.location.replace(metadata, &IcebergFiles).await?;
            return Ok(Created::New { replaced });
        }
        match plan.location.create(metadata, &IcebergFiles).await {
            Ok(_) => Ok(Created::New { replaced: None }),
            Err(Error::TableExists(_)) if plan.mode == CreateMode::IfNotExists => Ok(Created::Existed),
            Err(Error::TableExists(_)) => Err(created_meanwhile(&plan.name)),
            Err(e) => Err(e),
        }
    }

    /// After [`Self::commit_create`]: register the new table under its name,
    /// then end what it replaced. The new table stays whatever fails here
    /// (unless another statement registered the name first: then it is
    /// ended again and the error says so).
    pub async fn finish_create(&self, plan: CreatePlan, replaced: Option<Versioned>) -> Result<Option<PurgeReport>> {
        if !plan.replace_in_place {
            self.register_new(&plan).await?;
        }
        if plan.replace_other {
            use datafusion::catalog::SchemaProvider;
            self.deregister_table(&plan.name)?;
        }
        self.add_name(&plan.name);
        let ended = |e: Error| {
            Error::Invalid(format!(
                "table {} was created, but ending the table it replaces failed: {e}",
                plan.name
            ))
        };
        if let Some(old) = &plan.drop_first {
            self.end_table(&plan.name, old, old.owned()).await.map_err(ended)?;
        }
        match replaced {
            Some(old) => Ok(Some(
                purge(&plan.location, &old.metadata, old.version).await.map_err(ended)?,
            )),
            None => Ok(None),
        }
    }

    /// Point the name at the new table: drop a link to an old or gone
    /// table, link a new `LOCATION`.
    async fn register_new(&self, plan: &CreatePlan) -> Result<()> {
        if plan.stale_link || plan.drop_first.as_ref().is_some_and(|d| d.linked) {
            self.warehouse().unlink(&plan.name).await?;
        }
        if !plan.linked {
            return Ok(());
        }
        let Err(e) = self.warehouse().link(&plan.name, &plan.location.url()).await else {
            return Ok(());
        };
        // Not registered: end the new table again, so nothing is left behind.
        let ended = match plan.location.drop_table().await {
            Ok(Some((_, new))) => purge(&plan.location, &new.metadata, new.version)
                .await
                .map(|_| remove_empty_dirs(&plan.location)),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        match (e, ended) {
            (Error::TableExists(_), Ok(())) => Err(created_meanwhile(&plan.name)),
            (e, Ok(())) => Err(e),
            (e, Err(cleanup)) => Err(Error::Invalid(format!(
                "table {} was created at {} but could not be registered ({e}), and ending it failed ({cleanup}); register it with CREATE TABLE {} LOCATION '{}'",
                plan.name,
                plan.location.url(),
                plan.name,
                plan.location.url()
            ))),
        }
    }

    /// `CREATE TABLE t LOCATION 'x'` without columns: register the table at `x`.
    pub async fn register_existing(&self, name: &str, written: &str, mode: CreateMode) -> Result<()> {
        check_table_name(name)?;
        let existing = self.entry(name).await?;
        if self.entry_live(&existing).await? || self.has_other(name) {
            match mode {
                CreateMode::IfNotExists => return Ok(()),
                _ => return Err(Error::TableExists(format!("table {name} already exists"))),
            }
        }
        let location = self.check_location(name, written).await?;
        if !is_live(&location).await? {
            return Err(Error::Invalid(format!(
                "no table at LOCATION {written:?} to register as {name}; give a column list to create one"
            )));
        }
        if existing.linked {
            self.warehouse().unlink(name).await?;
        }
        self.warehouse().link(name, &location.url()).await?;
        self.add_name(name);
        Ok(())
    }

    /// `DROP TABLE name [PURGE]`: what it found and did.
    pub async fn drop_table(&self, name: &str, purge_files: bool) -> Result<Dropped> {
        if check_table_name(name).is_ok()
            && let Some(definition) = self.warehouse().definition(name).await?
        {
            use super::definitions::DefinitionKind;
            if definition.kind == DefinitionKind::View {
                return crate::invalid!("{name} is a view; DROP VIEW {name} drops it");
            }
            if purge_files {
                use datafusion::catalog::SchemaProvider;
                let what = match self
                    .table(name)
                    .await
                    .ok()
                    .flatten()
                    .as_ref()
                    .and_then(crate::formats::as_foreign)
                {
                    Some(f) => format!("{} table", crate::formats::a_format(f.format())),
                    None => "an external table".to_string(),
                };
                return crate::invalid!(
                    "{name} is {what}, whose files hidden-partitions never deletes; use DROP TABLE {name} to unregister it"
                );
            }
            self.warehouse()
                .remove_definition(name, DefinitionKind::External)
                .await?;
            self.set_definition(name, None);
            if self.has_other(name) {
                use datafusion::catalog::SchemaProvider;
                self.deregister_table(name)?;
            }
            return Ok(Dropped::Table);
        }
        if self.has_other(name) {
            use datafusion::catalog::SchemaProvider;
            if purge_files && let Some(t) = self.table(name).await? {
                if let Some(f) = crate::formats::as_foreign(&t) {
                    return crate::invalid!(
                        "DROP TABLE {name} PURGE: {name} is {} table, which hidden-partitions reads but never deletes; use DROP TABLE {name} to unregister it",
                        crate::formats::a_format(f.format())
                    );
                }
            }
            self.deregister_table(name)?;
            return Ok(Dropped::Table);
        }
        if check_table_name(name).is_err() {
            return Ok(Dropped::Nothing);
        }
        let entry = self.entry(name).await?;
        if entry.moved {
            // The directory is the renamed table's: nothing of this name.
            return Ok(Dropped::Nothing);
        }
        let live = match is_live(&entry.location).await {
            Ok(live) => live,
            Err(Error::Format(problem)) => return self.drop_damaged(name, entry, purge_files, problem).await,
            Err(e) => return Err(e),
        };
        let mut dropped = Dropped::Nothing;
        if live {
            self.end_table(name, &entry, purge_files || entry.owned()).await?;
            dropped = Dropped::Table;
        } else if !entry.linked {
            // Files of killed creations of this name (none committed).
            let removed = crate::table::creation::remove_abandoned(&entry.location).await?;
            if removed > 0 {
                dropped = Dropped::Leftovers(removed);
            }
        }
        if entry.linked {
            self.warehouse().unlink(name).await?;
        }
        self.forget_name(name);
        Ok(dropped)
    }

    /// End table `name` keeping every file (an Iceberg REST drop without
    /// purge): a table the warehouse owns gets a tombstone, a link is
    /// removed. `false` when there is no such table.
    pub async fn drop_keeping_files(&self, name: &str) -> Result<bool> {
        check_table_name(name)?;
        let entry = self.entry(name).await?;
        if !self.entry_live(&entry).await? {
            return Ok(false);
        }
        if entry.owned() {
            entry.location.drop_table().await?;
        }
        if entry.linked {
            self.warehouse().unlink(name).await?;
        }
        self.forget_name(name);
        Ok(true)
    }

    /// DROP of a table whose latest metadata cannot be read: nothing tells
    /// which files are its own, so none is deleted (see the module docs).
    async fn drop_damaged(&self, name: &str, entry: TableEntry, purge_files: bool, problem: String) -> Result<Dropped> {
        let url = entry.location.url();
        if purge_files {
            let plain = if entry.linked {
                format!("unregisters it and leaves its files at {url}")
            } else {
                format!("ends it and keeps its files under {url}")
            };
            return crate::invalid!(
                "DROP TABLE {name} PURGE: table {name} could not be read ({problem}), so which files are its own cannot be known; nothing was deleted. DROP TABLE {name} (without PURGE) {plain}"
            );
        }
        if entry.linked {
            self.warehouse().unlink(name).await?;
        } else if entry.location.drop_unreadable().await?.is_none() {
            // Readable now (another statement dropped or replaced it
            // meanwhile): an ordinary DROP decides.
            return Box::pin(self.drop_table(name, false)).await;
        }
        self.forget_name(name);
        Ok(Dropped::Damaged {
            problem,
            url,
            linked: entry.linked,
        })
    }

    /// End a table: with `purge`, commit a tombstone and delete what it owns.
    async fn end_table(&self, name: &str, entry: &TableEntry, purge_files: bool) -> Result<()> {
        if !purge_files {
            return Ok(());
        }
        let Some((_, dropped)) = entry.location.drop_table().await? else {
            return Ok(());
        };
        purge(&entry.location, &dropped.metadata, dropped.version)
            .await
            .map_err(|e| Error::Invalid(format!("table {name} was dropped, but deleting its files failed: {e}")))?;
        let _ = delete_all(&entry.location, vec![entry.location.version_hint()]).await;
        remove_empty_dirs(&entry.location);
        Ok(())
    }
}

/// A lost race: another statement created the table between this one's
/// check and its commit.
fn created_meanwhile(name: &str) -> Error {
    Error::TableExists(format!(
        "table {name} already exists: another statement created it while this one ran; nothing was committed"
    ))
}

/// Whether a live table (not a tombstone) is at `location`.
async fn is_live(location: &TableLocation) -> Result<bool> {
    Ok(location.load_latest().await?.is_some_and(|l| l.table().is_some()))
}

/// A new table's place must not hold a live table, nor files that are not
/// a table's (unless allowed). `false` when a table appeared meanwhile at
/// the name's own place (`own`): the caller looks again.
async fn check_contents(
    location: &TableLocation,
    written: Option<&str>,
    allow_non_empty: bool,
    own: bool,
) -> Result<bool> {
    let shown = written.map_or_else(|| location.url(), str::to_string);
    match location.load_latest().await? {
        Some(l) if l.table().is_some() && own => return Ok(false),
        Some(l) if l.table().is_some() => {
            return Err(Error::Invalid(format!(
                "LOCATION {shown:?} already holds a table; register it with CREATE TABLE <name> LOCATION '{shown}' (no column list), or choose another location"
            )));
        }
        // A dropped table's tombstone: the new table continues its chain.
        Some(_) => return Ok(true),
        None => {}
    }
    if allow_non_empty {
        return Ok(true);
    }
    // Files of our own creations (killed, or in flight) do not count.
    if let Some(first) = crate::table::creation::first_foreign_file(location).await? {
        if own && is_live(location).await? {
            return Ok(false);
        }
        return Err(Error::Invalid(format!(
            "location {shown:?} is not empty (it holds {first}); choose an empty directory, or SET hidden_partitions.allow_non_empty_location = true to share it (files that are not the table's are never read or deleted)"
        )));
    }
    Ok(true)
}
