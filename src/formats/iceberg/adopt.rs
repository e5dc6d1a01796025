//! A snapshot another engine wrote for a table of ours (an Iceberg REST
//! `add-snapshot`: pyiceberg, DuckDB, Spark), turned into a [`Change`] of
//! ours, so the table stays ours: pruned from our manifests, changed by our
//! statements, written on the Iceberg side by our own commit.
//!
//! The client wrote data files, Avro manifests and a manifest list, and
//! names the list. What the snapshot holds is read from it:
//!
//! | listed manifest                         | becomes                                             |
//! |-----------------------------------------|-----------------------------------------------------|
//! | the Iceberg twin of one of our manifests | that manifest, kept as it is                       |
//! | one the client wrote                     | its live entries: files of the parent snapshot (survivors of a rewrite) or new files |
//! | the twin of one of our delete manifests  | that manifest, kept (one the list leaves out leaves the table) |
//! | a manifest of delete files the client wrote | its position delete files and deletion vectors, checked (`adopt_deletes`); equality deletes refused |
//!
//! A manifest of the parent snapshot that lost files is replaced by one
//! listing its files the client still lists (our own survivors, with their
//! sequence numbers and row ids); one whose files the client lists again
//! elsewhere (a rewritten manifest) stays as it is; the new files go into
//! one manifest per table spec. So the snapshot lists exactly the
//! files the client's snapshot lists, each once, in manifests of ours (and
//! their twins): the client's manifests and list are not referenced by the
//! table afterwards (they stay where the client wrote them).
//!
//! An append written on an older snapshot (another client committed
//! meanwhile) is read against that snapshot and then put on top of the
//! current one, as our own appends are; it must not drop a file. Any other
//! operation must be written on the current snapshot (else a 409).
//!
//! ```text
//! parent: [M1 (a, b), M2 (c)]        client's list: [twin(M1), C1 (c: EXISTING, d: ADDED)]
//! change: keep M1, replace M2 by M2' (c, our entry), add M3 (d)
//! ```

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use datafusion::arrow::array::AsArray;
use object_store::ObjectStoreExt;
use serde_json::Value as Json;

use super::manifest::IcebergManifests;
use super::metadata::Rebase;
use crate::error::{Error, Result};
use crate::iceberg::convert::SpecMapping;
use crate::iceberg::manifest_list_read::read_manifest_list;
use crate::iceberg::metadata::IcebergSpec;
use crate::manifest::format::{PATH, data_files};
use crate::manifest::{DataFile, read_manifest};
use crate::plan::files::PlannedFile;
use crate::spec::{ManifestFile, Snapshot, TableMetadata};
use crate::store::TableLocation;
use crate::table::change::{Change, Operation};

/// The fields of an Iceberg snapshot that a commit of ours takes over.
#[derive(Debug, Clone)]
pub struct ForeignSnapshot {
    pub snapshot_id: i64,
    pub parent_snapshot_id: Option<i64>,
    pub sequence_number: Option<i64>,
    pub timestamp_ms: i64,
    pub manifest_list: String,
    pub operation: String,
    pub summary: BTreeMap<String, String>,
    pub schema_id: Option<i32>,
}

impl ForeignSnapshot {
    /// From the `snapshot` object of an `add-snapshot` update.
    pub fn parse(doc: &Json) -> Result<Self> {
        let bad = |what: &str| Error::Invalid(format!("add-snapshot: the snapshot has no valid {what}"));
        let int = |key: &str| doc.get(key).and_then(Json::as_i64);
        let summary: BTreeMap<String, String> = doc
            .get("summary")
            .and_then(Json::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Self {
            snapshot_id: int("snapshot-id").ok_or_else(|| bad("snapshot-id"))?,
            parent_snapshot_id: int("parent-snapshot-id"),
            sequence_number: int("sequence-number"),
            timestamp_ms: int("timestamp-ms").ok_or_else(|| bad("timestamp-ms"))?,
            manifest_list: doc
                .get("manifest-list")
                .and_then(Json::as_str)
                .ok_or_else(|| bad("manifest-list"))?
                .to_string(),
            operation: summary
                .get("operation")
                .cloned()
                .ok_or_else(|| bad("summary.operation"))?,
            summary,
            schema_id: int("schema-id").map(|i| i as i32),
        })
    }

    /// Our operation for the snapshot's Iceberg operation.
    fn operation(&self) -> Result<Operation> {
        Ok(match self.operation.as_str() {
            "append" => Operation::Append,
            "overwrite" => Operation::Overwrite,
            "delete" => Operation::Delete,
            "replace" => Operation::Optimize,
            other => {
                return Err(Error::Invalid(format!(
                    "add-snapshot: unknown operation {other:?} (expected append, overwrite, delete or replace)"
                )));
            }
        })
    }
}

/// Turn `snapshot` (written by another engine on top of the current
/// snapshot of `md`, a table of ours at `location`) into a change. The
/// manifests it writes are deleted again if building it fails.
pub async fn adopt(
    location: &TableLocation,
    md: &TableMetadata,
    snapshot: &ForeignSnapshot,
    table: &str,
) -> Result<Change> {
    if md.snapshot(snapshot.snapshot_id).is_some() {
        return Err(Error::CommitConflict {
            table: table.to_string(),
            detail: format!("snapshot {} is already in the table", snapshot.snapshot_id),
        });
    }
    // An append written on an older snapshot of the table is put on top of
    // the current one (as our own appends are, by `Change::apply`); any
    // other operation must be written on the current snapshot.
    let rebased = snapshot.parent_snapshot_id != md.current_snapshot_id;
    let known_parent = snapshot.parent_snapshot_id.is_none_or(|p| md.snapshot(p).is_some());
    if rebased && !(snapshot.operation == "append" && known_parent) {
        return Err(Error::CommitConflict {
            table: table.to_string(),
            detail: format!(
                "snapshot {} was written on top of snapshot {}, but the table is at {}",
                snapshot.snapshot_id,
                snapshot
                    .parent_snapshot_id
                    .map_or("none".to_string(), |p| p.to_string()),
                md.current_snapshot_id.map_or("none".to_string(), |p| p.to_string()),
            ),
        });
    }
    // A rebased append gets the next sequence number when it commits.
    if let Some(seq) = snapshot.sequence_number
        && !rebased
        && seq != md.last_sequence_number + 1
    {
        return Err(Error::CommitConflict {
            table: table.to_string(),
            detail: format!(
                "snapshot {} has sequence number {seq}, but the next one is {}",
                snapshot.snapshot_id,
                md.last_sequence_number + 1
            ),
        });
    }
    let written = md
        .location
        .clone()
        .ok_or_else(|| Error::Invalid(format!("table {table} has no Iceberg location")))?;
    let rebase = Rebase::new(&written);
    let list_path = rebase.resolve(location, &snapshot.manifest_list)?;
    let bytes = match location.store.get(&list_path).await {
        Ok(r) => r.bytes().await?,
        Err(object_store::Error::NotFound { .. }) => {
            return Err(Error::Invalid(format!(
                "add-snapshot: manifest list {} does not exist",
                snapshot.manifest_list
            )));
        }
        Err(e) => return Err(e.into()),
    };
    // What the client wrote is the client's mistake when it cannot be read.
    let listed = read_manifest_list(&bytes, &snapshot.manifest_list).map_err(|e| client_file(e, "manifest list"))?;

    // The parent's manifests by the stored path of their twin; any other
    // manifest the list names is read file by file (below).
    let parent: Option<Cow<'_, Snapshot>> = match snapshot.parent_snapshot_id.and_then(|id| md.snapshot(id)) {
        Some(p) if p.manifests.is_some() => Some(Cow::Borrowed(p)),
        Some(p) => {
            let mut loaded = p.clone();
            loaded.manifests = Some(location.snapshot_manifests(md, p.snapshot_id).await?);
            Some(Cow::Owned(loaded))
        }
        None => None,
    };
    let parent_manifests: Vec<&ManifestFile> = match &parent {
        Some(p) => p.manifests()?.iter().collect(),
        None => Vec::new(),
    };
    let twins: HashMap<&str, &ManifestFile> = parent_manifests
        .iter()
        .filter_map(|m| Some((m.iceberg.as_ref()?.path.as_str(), *m)))
        .collect();
    let mut kept: HashSet<&str> = HashSet::new();
    let mut theirs = HashMap::new();
    let mut their_deletes = Vec::new();
    // An older version of one of our delete manifests (a client that
    // committed several snapshots at once lists the one it read, which our
    // commit of its first snapshot rewrote): the parent's delete manifests
    // all stay.
    let mut all_deletes_stay = false;
    for entry in &listed {
        let stored = rebase.stored(&entry.path)?;
        match twins.get(stored.as_str()) {
            Some(ours) => {
                kept.insert(ours.path.as_str());
            }
            None if entry.content != 0 && written_by_us(md, &stored) => all_deletes_stay = true,
            None if entry.content != 0 => their_deletes.push(entry.clone()),
            None => {
                theirs.insert(stored, entry.clone());
            }
        }
    }

    // The client's live entries, as data files of our specs: its manifests
    // name Iceberg's partition spec ids, each that of one or more of our
    // table specs (the current one where it is among them).
    let specs: HashMap<i32, SpecMapping> = md
        .table_specs
        .iter()
        .filter_map(|s| md.spec_of_partition_spec(s.partition_spec_id()))
        .map(|s| (s.partition_spec_id(), SpecMapping::new(&IcebergSpec::of(s), &s.schema)))
        .collect();
    let stored_paths: Vec<String> = theirs.keys().cloned().collect();
    let manifests = IcebergManifests::new(rebase, theirs, specs);
    let mut listed_files: Vec<DataFile> = Vec::new();
    for stored in &stored_paths {
        let batch = manifests
            .batch(location, stored, None)
            .await
            .map_err(|e| client_file(e, "manifest"))?;
        if batch.num_rows() == 0 {
            continue;
        }
        let spec_id = batch.column_by_name(crate::manifest::format::SPEC_ID).and_then(|c| {
            c.as_primitive_opt::<datafusion::arrow::datatypes::Int32Type>()
                .map(|a| a.value(0))
        });
        let Some(spec) = spec_id.and_then(|id| md.spec_of_partition_spec(id)) else {
            return Err(Error::Invalid(format!(
                "add-snapshot: manifest {stored} is of a partition spec the table does not have"
            )));
        };
        // Of our table spec, not of Iceberg's partition spec id.
        listed_files.extend(data_files(spec, &batch)?.into_iter().map(|mut f| {
            f.spec_id = spec.spec_id;
            f
        }));
    }

    // Files of the parent's manifests that the list drops.
    let mut dropped: HashMap<String, (usize, u64)> = HashMap::new();
    // Delete manifests of ours the client no longer lists leave the table.
    let dropped_deletes: Vec<&ManifestFile> = parent_manifests
        .iter()
        .filter(|m| m.is_deletes() && !kept.contains(m.path.as_str()) && !all_deletes_stay)
        .copied()
        .collect();
    for (index, m) in parent_manifests.iter().enumerate() {
        if kept.contains(m.path.as_str()) || m.is_deletes() {
            continue;
        }
        let spec = md.spec(m.spec_id)?;
        let batch = read_manifest(location, m, spec, Some(&[PATH.to_string(), "record_count".to_string()])).await?;
        let paths = batch
            .column_by_name(PATH)
            .map(|c| c.as_string::<i32>().clone())
            .ok_or_else(|| Error::Format(format!("manifest {} has no path column", m.path)))?;
        let counts = batch
            .column_by_name("record_count")
            .and_then(|c| c.as_primitive_opt::<datafusion::arrow::datatypes::Int64Type>().cloned());
        for (row, p) in paths.iter().enumerate() {
            if let Some(p) = p {
                let rows = counts.as_ref().map_or(0, |c| c.value(row).max(0) as u64);
                dropped.insert(p.to_string(), (index, rows));
            }
        }
    }
    let mut still: HashSet<String> = HashSet::new();
    let mut added: BTreeMap<i32, Vec<DataFile>> = BTreeMap::new();
    for mut f in listed_files {
        if dropped.contains_key(&f.path) {
            if !still.insert(f.path.clone()) {
                return Err(Error::Invalid(format!(
                    "add-snapshot: data file {} is listed twice",
                    f.path
                )));
            }
            continue;
        }
        // Row lineage is assigned by our commit.
        f.first_row_id = None;
        added.entry(f.spec_id).or_default().push(f);
    }
    let removed: Vec<PlannedFile> = dropped
        .iter()
        .filter(|(p, _)| !still.contains(*p))
        .map(|(p, (manifest, rows))| {
            Ok(PlannedFile {
                path: location.resolve(p)?,
                size: 0,
                record_count: *rows,
                spec_id: 0,
                partition: Vec::new(),
                manifest: *manifest,
                deletes: None,
            })
        })
        .collect::<Result<_>>()?;
    // The client's delete files, checked against the files that stay.
    let leaving: HashSet<&str> = dropped
        .keys()
        .filter(|p| !still.contains(*p))
        .map(String::as_str)
        .collect();
    let new_files: HashSet<&str> = added.values().flatten().map(|f| f.path.as_str()).collect();
    let deletes = super::adopt_deletes::client_deletes(
        location,
        md,
        &manifests,
        &their_deletes,
        &parent_manifests,
        &kept,
        &leaving,
        &new_files,
    )
    .await?;
    // Only adding files lets an append move onto another snapshot.
    let has_deletes = !deletes.positions.is_empty() || !deletes.equality.is_empty();
    if rebased && (!removed.is_empty() || !dropped_deletes.is_empty() || has_deletes) {
        return Err(Error::CommitConflict {
            table: table.to_string(),
            detail: format!(
                "snapshot {} is an append written on an older snapshot, but it drops files of that snapshot",
                snapshot.snapshot_id
            ),
        });
    }
    // A parent manifest the client rewrote without dropping a file stays
    // as it is; one that lost files is rewritten with the rest.
    let mut change = Change::new(snapshot.operation()?, parent.as_deref())?;
    change.snapshot_id = snapshot.snapshot_id;
    for m in dropped_deletes {
        change.replaced.insert(m.path.clone());
        change.removed_delete_files += m.file_count;
        change.removed_position_deletes += m.record_count;
    }
    let built = async {
        if let Some(parent) = &parent {
            change.remove_files(location, md, parent, &removed).await?;
        }
        for (spec_id, files) in &added {
            change.add_files(location, md.spec(*spec_id)?, files).await?;
        }
        let Some(parent) = parent.as_deref().filter(|_| has_deletes) else {
            return Ok(());
        };
        change.client_deletes = true;
        change.deletion_vectors = deletes.positions.iter().any(|(d, _)| d.blob.is_some());
        change.add_deletes(location, md, parent, &deletes.positions).await?;
        // Equality deletes become positions of the files they apply to.
        let Some(rows) =
            super::adopt_deletes::equality_as_positions(location, md, &manifests, &deletes.equality, parent, &leaving)
                .await?
        else {
            return Ok(());
        };
        let vectors: HashSet<object_store::path::Path> = deletes
            .positions
            .iter()
            .filter(|(d, _)| d.blob.is_some())
            .filter_map(|(d, _)| d.referenced_data_file.as_deref())
            .map(|p| location.resolve(p))
            .collect::<Result<_>>()?;
        if let Some((file, _)) = rows.marked.iter().find(|(f, _)| vectors.contains(&f.path))
        {
            return Err(Error::Invalid(format!(
                "add-snapshot: data file {} gets a deletion vector and rows deleted by equality in one snapshot; a data file has one vector (write them into it)",
                file.path
            )));
        }
        rows.apply(&mut change, location, md, parent, Vec::new()).await?;
        Ok::<_, Error>(())
    }
    .await;
    if let Err(e) = built {
        change.discard(location).await;
        return Err(e);
    }
    Ok(change)
}

/// An error reading a file the client wrote (its manifest list or a
/// manifest): a bad request, naming the file, not a failure of ours.
fn client_file(e: Error, what: &str) -> Error {
    match e {
        Error::Format(m) | Error::Invalid(m) => Error::Invalid(format!("add-snapshot: the client's {what}: {m}")),
        Error::ObjectStore(object_store::Error::NotFound { path, .. }) => Error::Invalid(format!(
            "add-snapshot: the client's {what} names {path}, which does not exist"
        )),
        Error::Json(e) => Error::Invalid(format!("add-snapshot: the client's {what}: {e}")),
        other => other,
    }
}

/// Whether the manifest at `stored` (a path under the table's root) is one
/// our writers made: `metadata/<the table's file prefix>-<uuid>-m.avro`.
fn written_by_us(md: &TableMetadata, stored: &str) -> bool {
    let Some(prefix) = md.file_prefix.as_deref() else {
        return false;
    };
    stored
        .strip_prefix("metadata/")
        .and_then(|name| name.strip_prefix(prefix))
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|rest| rest.strip_suffix("-m.avro"))
        .is_some_and(|uuid| uuid::Uuid::try_parse(uuid).is_ok())
}
