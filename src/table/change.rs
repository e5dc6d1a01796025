//! A write operation as one commit: which manifests it replaces, which it
//! adds, and whether statements that committed since it read the table
//! conflict with it.
//!
//! Every write (append, overwrite, delete, update, merge, optimize,
//! truncate) plans against one snapshot — its *base* — writes its new data
//! files and manifests, and then commits a [`Change`]. The commit is a pure
//! function of the latest metadata ([`Change::apply`]), so a lost race just
//! re-applies it on top of the newer version:
//!
//! | since the base, another statement …                         | append | delete / update / merge / overwrite | optimize |
//! |--------------------------------------------------------------|--------|------------------------------------|----------|
//! | appended files its predicate cannot match                    | rebase | rebase                             | rebase   |
//! | appended files its predicate may match (by manifest summary) | rebase | **conflict** (serializable)        | rebase   |
//! | removed or rewrote a manifest this one replaces               | —      | **conflict**                       | **conflict** |
//!
//! A conflict is [`Error::WriteConflict`]: the statement starts over from
//! the new snapshot (see `table::operation`) or, after a few attempts,
//! fails saying which statement it lost to.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use chrono::Utc;
use datafusion::arrow::array::{AsArray, BooleanArray};
use datafusion::arrow::compute::filter_record_batch;
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::expr::summary::manifest_may_match;
use crate::expr::{Predicate, project_inclusive};
use crate::manifest::format::{CONTENT_OFFSET, PATH, RECORD_COUNT, REFERENCED_DATA_FILE};
use crate::manifest::{DataFile, Origin, read_manifest, write_delete_manifest, write_manifest, write_manifest_batch};
use crate::plan::files::PlannedFile;
use crate::spec::{ManifestFile, Snapshot, TableMetadata, TableSpec};
use crate::store::TableLocation;
use crate::store::pending::Pending;

/// What kind of statement made a snapshot (recorded as its `operation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Append,
    Overwrite,
    Delete,
    Update,
    Merge,
    Optimize,
}

impl Operation {
    pub fn name(self) -> &'static str {
        match self {
            Self::Append => "append",
            Self::Overwrite => "overwrite",
            Self::Delete => "delete",
            Self::Update => "update",
            Self::Merge => "merge",
            Self::Optimize => "optimize",
        }
    }

    /// The table property choosing how this operation changes rows
    /// (copy-on-write or merge-on-read), if it has one.
    pub fn mode_key(self) -> Option<&'static str> {
        use crate::table::properties::{DELETE_MODE, MERGE_MODE, UPDATE_MODE};
        match self {
            Self::Delete => Some(DELETE_MODE),
            Self::Update => Some(UPDATE_MODE),
            Self::Merge => Some(MERGE_MODE),
            _ => None,
        }
    }
}

/// Which concurrent appends make a statement's result wrong.
#[derive(Debug, Clone)]
pub enum ConflictScope {
    /// None do (appends, compaction).
    Nothing,
    /// Those whose files may hold rows matching this predicate (bound to
    /// field ids of the current schema).
    Matching(Predicate),
    /// Any does (an overwrite of the whole table).
    Everything,
    /// Those of spec `spec_id` whose manifest summaries may hold one of the
    /// partitions `predicate` (on partition field ids) describes.
    Partitions { spec_id: i32, predicate: Predicate },
}

/// The commit of one write statement.
#[derive(Debug, Clone)]
pub struct Change {
    pub operation: Operation,
    pub snapshot_id: i64,
    /// The snapshot the statement read (`None`: the table had none).
    pub base: Option<i64>,
    /// The manifests (by path) of the base, as read: by the time of a
    /// retried commit the base is an older snapshot, whose list is not
    /// loaded with the latest version.
    base_manifests: BTreeSet<String>,
    /// Manifests of the base snapshot (by path) that this change replaces.
    pub replaced: BTreeSet<String>,
    /// New manifests: survivors of replaced ones, and new files.
    pub added: Vec<ManifestFile>,
    pub added_files: u64,
    pub removed_files: u64,
    pub added_rows: u64,
    pub removed_rows: u64,
    /// Position delete files (and their positions) added and removed.
    pub added_delete_files: u64,
    pub removed_delete_files: u64,
    pub added_position_deletes: u64,
    pub removed_position_deletes: u64,
    /// The delete files it adds are deletion vectors (Iceberg v3).
    pub deletion_vectors: bool,
    /// Deletion vectors among the delete files it removes.
    pub removed_vectors: u64,
    /// Its delete files were written by another engine (a REST client),
    /// whatever our write modes say: only the format version is checked.
    pub client_deletes: bool,
    /// Data manifests of the base (by path) listing files this change
    /// writes deletes for: replaced since the base means the files may be
    /// gone or rewritten, a conflict.
    referenced: BTreeSet<String>,
    pub scope: ConflictScope,
    /// Keeps the manifests this change writes from orphan removal until it
    /// is committed or dropped (see `store::pending`).
    pub pending: Pending,
    /// Every data file the added manifests list (survivors and new files):
    /// a change never lists one twice.
    listed: HashSet<String>,
}

impl Change {
    /// A change of the table as of `base` (the snapshot read, if any).
    pub fn new(operation: Operation, base: Option<&Snapshot>) -> Result<Self> {
        let mut change = Self::of_empty_table(operation);
        if let Some(s) = base {
            change.base = Some(s.snapshot_id);
            change.base_manifests = s.manifests()?.iter().map(|m| m.path.clone()).collect();
        }
        Ok(change)
    }

    /// A change of a table that had no snapshot.
    pub fn of_empty_table(operation: Operation) -> Self {
        Self {
            operation,
            snapshot_id: crate::table::new_snapshot_id(),
            base: None,
            base_manifests: BTreeSet::new(),
            replaced: BTreeSet::new(),
            added: Vec::new(),
            added_files: 0,
            removed_files: 0,
            added_rows: 0,
            removed_rows: 0,
            added_delete_files: 0,
            removed_delete_files: 0,
            added_position_deletes: 0,
            removed_position_deletes: 0,
            deletion_vectors: false,
            removed_vectors: 0,
            client_deletes: false,
            referenced: BTreeSet::new(),
            scope: ConflictScope::Nothing,
            pending: Pending::start(),
            listed: HashSet::new(),
        }
    }

    /// `md` with this change as its new current snapshot.
    pub fn apply(&self, md: &TableMetadata, table: &str) -> Result<TableMetadata> {
        let current = md.current_snapshot();
        if current.map(|s| s.snapshot_id) != self.base {
            self.check_concurrent(md, table)?;
        }
        self.check_rules(md, table)?;
        let mut manifests: Vec<ManifestFile> = md
            .current_manifests()?
            .iter()
            .cloned()
            .filter(|m| !self.replaced.contains(&m.path))
            .collect();
        manifests.extend(self.added.iter().cloned());
        let mut listed = HashSet::with_capacity(manifests.len());
        if let Some(twice) = manifests.iter().find(|m| !listed.insert(m.path.as_str())) {
            return Err(Error::Invalid(format!(
                "the commit to {table} would list manifest {} twice (its files would be read twice); nothing was committed",
                twice.path
            )));
        }
        let (total_files, total_rows) = data_totals(&manifests);
        let now = Utc::now().timestamp_millis();
        let mut summary = BTreeMap::from([
            ("added-data-files".to_string(), self.added_files.to_string()),
            ("added-records".to_string(), self.added_rows.to_string()),
            ("total-data-files".to_string(), total_files.to_string()),
            ("total-records".to_string(), total_rows.to_string()),
        ]);
        if self.operation != Operation::Append {
            summary.insert("deleted-data-files".to_string(), self.removed_files.to_string());
            summary.insert("deleted-records".to_string(), self.removed_rows.to_string());
        }
        add_delete_counts(
            &mut summary,
            &manifests,
            (self.added_delete_files, self.added_position_deletes),
            (self.removed_delete_files, self.removed_position_deletes),
        );
        if self.deletion_vectors {
            // Iceberg v3's own counts of the vectors among them.
            summary.insert("added-dvs".to_string(), self.added_delete_files.to_string());
            summary.insert("removed-dvs".to_string(), self.removed_vectors.to_string());
        }
        let mut next = md.clone();
        let sequence_number = md.last_sequence_number + 1;
        next.snapshots.push(Snapshot {
            snapshot_id: self.snapshot_id,
            parent_snapshot_id: md.current_snapshot_id,
            sequence_number,
            timestamp_ms: now,
            operation: self.operation.name().to_string(),
            summary: summary.into(),
            manifests: Some(std::sync::Arc::new(manifests)),
            manifests_file: None,
            table_spec_id: Some(md.current_spec_id),
            manifest_list: None,
            first_row_id: None,
            added_rows: None,
        });
        next.set_current_snapshot(self.snapshot_id, now);
        next.last_sequence_number = sequence_number;
        next.last_updated_ms = now;
        Ok(next)
    }

    /// The rules the statement was planned under must still hold on the
    /// version it commits onto: a property or schema change that committed
    /// meanwhile may have made its delete files wrong for the table. A
    /// conflict, so the statement starts over under the new rules.
    fn check_rules(&self, md: &TableMetadata, table: &str) -> Result<()> {
        if self.added_delete_files == 0 {
            return Ok(());
        }
        if crate::iceberg::json::needs_v3(md) != self.deletion_vectors {
            let problem = if self.deletion_vectors {
                "it wrote deletion vectors for an Iceberg format version 3 table, which the table is no longer"
            } else {
                "the table became Iceberg format version 3 meanwhile, which takes deletion vectors, not position delete files"
            };
            return Err(conflict(table, problem));
        }
        if let Some(key) = self.operation.mode_key()
            && !self.client_deletes
            && !crate::table::properties::merge_on_read(md, key)
        {
            return Err(conflict(
                table,
                &format!("its table property {key} is no longer 'merge-on-read'"),
            ));
        }
        Ok(())
    }

    /// The statements committed since the base must leave this change valid.
    fn check_concurrent(&self, md: &TableMetadata, table: &str) -> Result<()> {
        let base = &self.base_manifests;
        if self.base.is_some() && md.snapshot(self.base.unwrap_or_default()).is_none() {
            return Err(conflict(
                table,
                "the snapshot it read is no longer in the table's history",
            ));
        }
        let current: Vec<&ManifestFile> = md.current_manifests()?.iter().collect();
        let now: BTreeSet<&str> = current.iter().map(|m| m.path.as_str()).collect();
        if let Some(gone) = self.replaced.iter().find(|p| !now.contains(p.as_str())) {
            return Err(conflict(
                table,
                &format!("another statement removed or rewrote files it read (manifest {gone})"),
            ));
        }
        if let Some(gone) = self.referenced.iter().find(|p| !now.contains(p.as_str())) {
            return Err(conflict(
                table,
                &format!("another statement removed or rewrote files it deletes rows of (manifest {gone})"),
            ));
        }
        let appended = current.iter().filter(|m| !base.contains(&m.path));
        // Rows deleted meanwhile from files this change rewrites or drops would
        // come back: a conflict, whatever the scope.
        if self.removed_files > 0 && appended.clone().any(|m| m.is_deletes()) {
            return Err(conflict(
                table,
                "another statement deleted rows (merge-on-read) while it rewrote files",
            ));
        }
        // A data file has at most one deletion vector, holding all its
        // deletes: one written meanwhile may be for a file this change
        // writes one for.
        if self.deletion_vectors && appended.clone().any(|m| m.is_deletes()) {
            return Err(conflict(
                table,
                "another statement wrote deletion vectors while it wrote its own",
            ));
        }
        match &self.scope {
            ConflictScope::Nothing => Ok(()),
            ConflictScope::Everything => match appended.clone().next() {
                Some(_) => Err(conflict(table, "another statement added rows while it ran")),
                None => Ok(()),
            },
            ConflictScope::Partitions { spec_id, predicate } => {
                for m in appended.filter(|m| m.spec_id == *spec_id) {
                    let spec = md.spec(m.spec_id)?;
                    let bound = spec.partition_spec.bind(&spec.schema)?;
                    if manifest_may_match(predicate, &bound, &m.partitions) {
                        return Err(conflict(
                            table,
                            "another statement added rows to partitions it overwrites",
                        ));
                    }
                }
                Ok(())
            }
            ConflictScope::Matching(predicate) => {
                for m in appended {
                    let spec = md.spec(m.spec_id)?;
                    let bound = spec.partition_spec.bind(&spec.schema)?;
                    let projected = project_inclusive(predicate, &bound);
                    if manifest_may_match(&projected, &bound, &m.partitions) {
                        return Err(conflict(table, "another statement added rows its condition may match"));
                    }
                }
                Ok(())
            }
        }
    }
}

impl Change {
    /// Take `files` out of the snapshot: each manifest that lists some of
    /// them is replaced by one listing the others (no manifest when none
    /// are left).
    pub async fn remove_files(
        &mut self,
        location: &TableLocation,
        md: &TableMetadata,
        snapshot: &Snapshot,
        files: &[PlannedFile],
    ) -> Result<()> {
        let mut by_manifest: BTreeMap<usize, HashSet<&Path>> = BTreeMap::new();
        for f in files {
            by_manifest.entry(f.manifest).or_default().insert(&f.path);
            self.removed_files += 1;
            self.removed_rows += f.live_rows();
        }
        let removed: HashSet<&Path> = files.iter().map(|f| &f.path).collect();
        self.remove_deletes_of(location, md, snapshot, &removed).await?;
        for (index, paths) in by_manifest {
            let Some(manifest) = snapshot.manifests()?.get(index) else {
                return crate::format_err!("manifest #{index} is not in snapshot {}", snapshot.snapshot_id);
            };
            let spec = md.spec(manifest.spec_id)?;
            let batch = read_manifest(location, manifest, spec, None).await?;
            // Survivors keep their Iceberg v3 row ids.
            let first_row_id = manifest.iceberg.as_ref().and_then(|t| t.first_row_id);
            let batch = crate::manifest::format::with_row_ids(&batch, first_row_id)?;
            let stored = batch
                .column_by_name(PATH)
                .map(|c| c.as_string::<i32>().clone())
                .ok_or_else(|| Error::Format(format!("manifest {} has no path column", manifest.path)))?;
            let keep = not_in(location, &stored, &paths)?;
            let survivors = filter_record_batch(&batch, &keep)?;
            if let Some(paths) = survivors.column_by_name(PATH) {
                self.list(location, paths.as_string::<i32>().iter().flatten())?;
            }
            self.replace(location, md, manifest, &survivors).await?;
        }
        Ok(())
    }

    /// Replace `manifest` (of the base) by one listing `survivors`, its
    /// entries that stay (none: no manifest).
    async fn replace(
        &mut self,
        location: &TableLocation,
        md: &TableMetadata,
        manifest: &ManifestFile,
        survivors: &datafusion::arrow::array::RecordBatch,
    ) -> Result<()> {
        self.replaced.insert(manifest.path.clone());
        if survivors.num_rows() > 0 {
            let spec = md.spec(manifest.spec_id)?;
            let origin = Origin::of(manifest, md);
            let rewritten =
                write_manifest_batch(location, spec, survivors, self.snapshot_id, origin, manifest.content).await?;
            self.added.extend(rewritten);
        }
        Ok(())
    }

    /// Take the deletes of `files` out of the snapshot (their deletion
    /// vectors are being replaced by ones that hold them).
    pub async fn remove_deletes_of_files(
        &mut self,
        location: &TableLocation,
        md: &TableMetadata,
        snapshot: &Snapshot,
        files: &[&PlannedFile],
    ) -> Result<()> {
        let paths: HashSet<&Path> = files.iter().map(|f| &f.path).collect();
        self.remove_deletes_of(location, md, snapshot, &paths).await
    }

    /// Take the delete files that name one of `removed` (data files leaving
    /// the table) out of the snapshot's delete manifests: a delete file must
    /// never outlive its data file.
    async fn remove_deletes_of(
        &mut self,
        location: &TableLocation,
        md: &TableMetadata,
        snapshot: &Snapshot,
        removed: &HashSet<&Path>,
    ) -> Result<()> {
        if removed.is_empty() {
            return Ok(());
        }
        let candidates: Vec<&ManifestFile> = snapshot
            .manifests()?
            .iter()
            .filter(|m| m.is_deletes() && !self.replaced.contains(&m.path))
            .collect();
        for manifest in candidates {
            let spec = md.spec(manifest.spec_id)?;
            let batch = read_manifest(location, manifest, spec, None).await?;
            let named = batch
                .column_by_name(REFERENCED_DATA_FILE)
                .map(|c| c.as_string::<i32>().clone())
                .ok_or_else(|| Error::Format(format!("delete manifest {} names no data files", manifest.path)))?;
            let keep = not_in(location, &named, removed)?;
            if keep.true_count() == batch.num_rows() {
                continue;
            }
            let survivors = filter_record_batch(&batch, &keep)?;
            let gone = filter_record_batch(&batch, &datafusion::arrow::compute::not(&keep)?)?;
            self.removed_delete_files += gone.num_rows() as u64;
            self.removed_vectors += gone
                .column_by_name(CONTENT_OFFSET)
                .map_or(0, |c| (c.len() - c.null_count()) as u64);
            self.removed_position_deletes += record_count_of(&gone);
            self.replace(location, md, manifest, &survivors).await?;
        }
        Ok(())
    }

    /// Add position delete files `files` (each naming a data file of
    /// `snapshot`, the base; each under its data file's spec), one delete
    /// manifest per spec. The data files' manifests must still be there at
    /// commit time.
    pub async fn add_deletes(
        &mut self,
        location: &TableLocation,
        md: &TableMetadata,
        snapshot: &Snapshot,
        files: &[(DataFile, usize)],
    ) -> Result<()> {
        let mut by_spec: BTreeMap<i32, Vec<DataFile>> = BTreeMap::new();
        for (file, manifest) in files {
            let Some(m) = snapshot.manifests()?.get(*manifest) else {
                return crate::format_err!("manifest #{manifest} is not in snapshot {}", snapshot.snapshot_id);
            };
            self.referenced.insert(m.path.clone());
            self.added_delete_files += 1;
            self.added_position_deletes += file.record_count;
            by_spec.entry(file.spec_id).or_default().push(file.clone());
        }
        for (spec_id, files) in by_spec {
            let manifests = write_delete_manifest(location, md.spec(spec_id)?, &files, self.snapshot_id).await?;
            self.added.extend(manifests);
        }
        Ok(())
    }

    /// Add new data files (all written under `spec`) in one manifest (more
    /// past `manifest::io::MAX_MANIFEST_ENTRIES` files).
    pub async fn add_files(&mut self, location: &TableLocation, spec: &TableSpec, files: &[DataFile]) -> Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        self.list(location, files.iter().map(|f| f.path.as_str()))?;
        self.added_files += files.len() as u64;
        self.added_rows += files.iter().map(|f| f.record_count).sum::<u64>();
        self.added
            .extend(write_manifest(location, spec, files, self.snapshot_id).await?);
        Ok(())
    }

    /// Record data files the change's manifests will list; one already
    /// listed is an error (the snapshot would read it twice).
    fn list<'a>(&mut self, location: &TableLocation, paths: impl Iterator<Item = &'a str>) -> Result<()> {
        for path in paths {
            if !self.listed.insert(path.to_string()) {
                return Err(Error::Invalid(format!(
                    "the change to the table at {} would list data file {path} twice (its rows would be read twice); nothing was committed",
                    location.url()
                )));
            }
        }
        Ok(())
    }

    /// Whether committing would change nothing.
    pub fn is_empty(&self) -> bool {
        self.replaced.is_empty() && self.added.is_empty()
    }

    /// The copy-on-write step of DELETE, UPDATE, MERGE and optimize: take
    /// `removed` (files of `snapshot`) out of the table and put `written`
    /// (files of the current spec) in. On failure the data files and
    /// manifests written for this change are deleted and the error returned.
    pub async fn rewrite_files(
        &mut self,
        location: &TableLocation,
        md: &TableMetadata,
        snapshot: Option<&Snapshot>,
        removed: &[PlannedFile],
        written: &[DataFile],
    ) -> Result<()> {
        let built = async {
            if let Some(snapshot) = snapshot {
                self.remove_files(location, md, snapshot, removed).await?;
            }
            self.add_files(location, md.current_spec()?, written).await
        }
        .await;
        if let Err(e) = built {
            crate::table::writer::delete_files(location, written).await;
            self.discard(location).await;
            return Err(e);
        }
        Ok(())
    }

    /// Delete the manifests this change wrote (it was not committed).
    pub async fn discard(&self, location: &TableLocation) {
        let paths = self
            .added
            .iter()
            .flat_map(ManifestFile::files)
            .filter_map(|p| location.resolve(p).ok())
            .collect();
        let _ = crate::table::purge::delete_all(location, paths).await;
    }
}

/// Per row of `stored` (paths as a manifest stores them), whether the file
/// is not one of `paths`.
fn not_in(
    location: &TableLocation,
    stored: &datafusion::arrow::array::StringArray,
    paths: &HashSet<&Path>,
) -> Result<BooleanArray> {
    stored
        .iter()
        .map(|p| match p {
            Some(p) => location.resolve(p).map(|r| Some(!paths.contains(&r))),
            None => Ok(Some(true)),
        })
        .collect()
}

/// Data files and their rows over `manifests` (delete manifests left out).
pub fn data_totals(manifests: &[ManifestFile]) -> (u64, u64) {
    manifests
        .iter()
        .filter(|m| !m.is_deletes())
        .fold((0, 0), |(f, r), m| (f + m.file_count, r + m.record_count))
}

/// Iceberg's delete counts in a snapshot summary, once the table has (or
/// the snapshot removes) delete files. `added` and `removed` are (delete
/// files, positions).
pub fn add_delete_counts(
    summary: &mut BTreeMap<String, String>,
    manifests: &[ManifestFile],
    added: (u64, u64),
    removed: (u64, u64),
) {
    let deletes = manifests.iter().filter(|m| m.is_deletes());
    let (total_files, total_positions) = deletes.fold((0, 0), |(f, r), m| (f + m.file_count, r + m.record_count));
    if total_files == 0 && removed.0 == 0 {
        return;
    }
    for (key, value) in [
        ("added-delete-files", added.0),
        ("added-position-delete-files", added.0),
        ("added-position-deletes", added.1),
        ("removed-delete-files", removed.0),
        ("removed-position-delete-files", removed.0),
        ("removed-position-deletes", removed.1),
        ("total-delete-files", total_files),
        ("total-position-deletes", total_positions),
        ("total-equality-deletes", 0),
    ] {
        summary.insert(key.to_string(), value.to_string());
    }
}

/// The sum of a manifest batch's record counts.
fn record_count_of(batch: &datafusion::arrow::array::RecordBatch) -> u64 {
    use datafusion::arrow::datatypes::Int64Type;
    batch
        .column_by_name(RECORD_COUNT)
        .map(|c| c.as_primitive::<Int64Type>().values().iter().map(|v| *v as u64).sum())
        .unwrap_or(0)
}

fn conflict(table: &str, detail: &str) -> Error {
    Error::WriteConflict {
        table: table.to_string(),
        detail: detail.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::execution::object_store::ObjectStoreUrl;

    use super::*;

    #[test]
    fn a_change_never_lists_a_file_or_a_manifest_twice() {
        let location = TableLocation::new(
            Arc::new(object_store::memory::InMemory::new()),
            ObjectStoreUrl::parse("memory://").unwrap(),
            Path::from("t"),
        );
        let mut change = Change::of_empty_table(Operation::Delete);
        change
            .list(&location, ["data/a.parquet", "data/b.parquet"].into_iter())
            .unwrap();
        let e = change
            .list(&location, ["data/a.parquet"].into_iter())
            .unwrap_err()
            .to_string();
        assert!(e.contains("would list data file data/a.parquet twice"), "{e}");

        let schema = Schema::new(vec![Field::new("x", DataType::Int32, true)]);
        let md = crate::table::Table::initial_metadata(&schema, &[]).unwrap();
        let manifest = ManifestFile {
            path: "metadata/x-m.parquet".into(),
            length: 1,
            spec_id: 0,
            added_snapshot_id: 1,
            file_count: 1,
            record_count: 1,
            partitions: vec![],
            iceberg: None,
            content: crate::spec::ManifestContent::Data,
        };
        let mut change = Change::of_empty_table(Operation::Append);
        change.added = vec![manifest.clone(), manifest];
        let e = change.apply(&md, "t").unwrap_err().to_string();
        assert!(e.contains("would list manifest metadata/x-m.parquet twice"), "{e}");
    }

    /// A merge-on-read DELETE planned on a v2 table whose position deletes would land on a
    /// table that became v3 (or copy-on-write) meanwhile is a conflict: it starts over
    /// under the new rules instead of committing delete files the table does not take.
    #[test]
    fn position_deletes_are_checked_against_the_version_they_commit_onto() {
        let schema = Schema::new(vec![Field::new("x", DataType::Int32, true)]);
        let v2 = crate::table::Table::initial_metadata(&schema, &[]).unwrap();
        let v2 = crate::table::properties::set_properties(
            &v2,
            &BTreeMap::from([("write.delete.mode".to_string(), "merge-on-read".to_string())]),
        )
        .unwrap();
        let mut change = Change::of_empty_table(Operation::Delete);
        change.added_delete_files = 1;
        assert!(change.apply(&v2, "t").is_ok());

        let mut v3 = v2.clone();
        v3.next_row_id = Some(0);
        let e = change.apply(&v3, "t").unwrap_err();
        assert!(matches!(e, Error::WriteConflict { .. }), "{e}");
        assert!(e.to_string().contains("format version 3"), "{e}");

        let copy_on_write = crate::table::properties::set_properties(
            &v2,
            &BTreeMap::from([("write.delete.mode".to_string(), "copy-on-write".to_string())]),
        )
        .unwrap();
        let e = change.apply(&copy_on_write, "t").unwrap_err();
        assert!(matches!(e, Error::WriteConflict { .. }), "{e}");
        assert!(e.to_string().contains("no longer 'merge-on-read'"), "{e}");

        // A change without delete files is not bound by those rules.
        let mut append = Change::of_empty_table(Operation::Append);
        append.added_files = 0;
        assert!(append.apply(&v3, "t").is_ok());
    }
}
