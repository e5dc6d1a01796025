//! The Iceberg side of a commit: what is written just before a version file.
//!
//! Every version is also an Iceberg metadata file (`iceberg::json`), so
//! the commit protocol (`store::commit`) takes [`IcebergFiles`] as its hook:
//! before a version is put, each new snapshot gets its Avro manifest list,
//! and the version records the table's location and the metadata file it
//! follows. The lists are named `<prefix>-<uuid>-snap-<snapshot id>.avro`,
//! fresh for every attempt (a retried commit may get another sequence
//! number or parent); an attempt that loses its race deletes its own.
//!
//! The manifests' Avro twins were written with the manifests themselves;
//! here they only get the sequence number of the snapshot that adds them,
//! which is known only now. A table written before twins existed gets them
//! (and its lists) with its next commit. Last, the snapshot that stops
//! being current gets its own manifests file (`store::snapshot_manifests`).
//!
//! | written here                  | when                                          |
//! |-------------------------------|-----------------------------------------------|
//! | `metadata/<prefix>-<uuid>-snap-<id>.avro` | each snapshot without a manifest list |
//! | `metadata/<prefix>-<uuid>-m.avro` | a manifest without a twin (tables older than twins) |
//! | the snapshot's manifests file | the snapshot that stops being current         |

use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iceberg::manifest::{EntryStatus, ManifestWrite, write_manifest};
use crate::iceberg::manifest_list::{ManifestListEntry, write_manifest_list};
use crate::iceberg::summary::binary_summaries;
use crate::manifest::Origin;
use crate::spec::{IcebergManifest, ManifestFile, MetadataLogEntry, TableMetadata, TableSpec};
use crate::store::TableLocation;
use crate::store::commit::BeforeVersion;
use crate::store::location::fresh_name_of;

/// How many earlier metadata files `metadata-log` keeps unless the table
/// sets `write.metadata.previous-versions-max` (Iceberg's default).
const PREVIOUS_VERSIONS_MAX: usize = 100;

/// The hook that makes every version of ours an Iceberg table's.
#[derive(Debug, Clone, Copy, Default)]
pub struct IcebergFiles;

#[async_trait]
impl BeforeVersion for IcebergFiles {
    /// Prepare `md`, about to be committed on top of `base` (the version
    /// it was built from, if any): location, metadata log, sequence numbers
    /// of new twins, and a manifest list for every snapshot without one.
    /// Returns the files written.
    async fn prepare(
        &self,
        location: &TableLocation,
        md: &mut TableMetadata,
        base: Option<(u64, &TableMetadata)>,
    ) -> Result<Vec<Path>> {
        md.location = Some(location.iceberg_root());
        if let Some((version, previous)) = base {
            md.metadata_log.push(MetadataLogEntry {
                timestamp_ms: previous.last_updated_ms,
                metadata_file: location.iceberg_path(&format!("metadata/v{version}.metadata.json")),
            });
            let max = md
                .properties
                .get("write.metadata.previous-versions-max")
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(PREVIOUS_VERSIONS_MAX);
            let excess = md.metadata_log.len().saturating_sub(max);
            md.metadata_log.drain(..excess);
        }
        // A rollback makes an older snapshot current: its list goes inline.
        let current = md.current_snapshot_id;
        location.load_manifests(md, |s| Some(s.snapshot_id) == current).await?;
        if !crate::iceberg::json::has_iceberg_types(md) {
            return Ok(Vec::new());
        }
        // Becoming an Iceberg v3 table: row ids start at 0 (existing
        // snapshots keep none, as the spec has it for upgraded tables).
        if crate::iceberg::json::needs_v3(md) && md.next_row_id.is_none() {
            md.next_row_id = Some(0);
        }
        let mut written = Vec::new();
        if let Err(e) = write_missing_twins(location, md, &mut written).await {
            location.delete_quietly(written).await;
            return Err(e);
        }
        // Row ids given by the lists of this commit, for manifests that an
        // older snapshot written now shares with a newer one.
        let mut assigned = HashMap::new();
        // Likewise the sequence numbers of new twins (the older snapshot's).
        let mut sequences = HashMap::new();
        for index in 0..md.snapshots.len() {
            if md.snapshots[index].manifest_list.is_some() {
                continue;
            }
            let result = write_list(location, md, index, &mut assigned, &mut sequences).await;
            match result {
                Ok(path) => written.push(path),
                Err(e) => {
                    location.delete_quietly(written).await;
                    return Err(e);
                }
            }
        }
        if let Err(e) = location.write_manifests_files(md, &mut written).await {
            location.delete_quietly(written).await;
            return Err(e);
        }
        Ok(written)
    }
}

/// A table written before twins existed gets one for each manifest
/// (EXISTING entries), once: its next commit makes it an Iceberg table.
async fn write_missing_twins(location: &TableLocation, md: &mut TableMetadata, written: &mut Vec<Path>) -> Result<()> {
    let mut twins: HashMap<String, IcebergManifest> = HashMap::new();
    let missing: Vec<ManifestFile> = md
        .snapshots
        .iter()
        .flat_map(|s| s.manifests.iter().flat_map(|m| m.iter()))
        .filter(|m| m.iceberg.is_none())
        .cloned()
        .collect();
    let root = location.iceberg_root();
    for manifest in missing {
        if twins.contains_key(&manifest.path) {
            continue;
        }
        let spec = md.spec(manifest.spec_id)?;
        let batch = crate::manifest::read_manifest(location, &manifest, spec, None).await?;
        let files = crate::manifest::format::data_files(spec, &batch)?;
        let (snapshot_id, sequence_number) = match Origin::of(&manifest, md) {
            Origin::Kept {
                snapshot_id,
                sequence_number,
            } => (snapshot_id, sequence_number),
            Origin::New => (manifest.added_snapshot_id, 0),
        };
        let bytes = write_manifest(
            &ManifestWrite {
                spec,
                table_location: &root,
                status: EntryStatus::Existing,
                snapshot_id: Some(snapshot_id),
                sequence_number: Some(sequence_number),
                v3: false,
                content: manifest.content,
            },
            &files,
        )?
        .bytes;
        let stored = TableLocation::stored_path(["metadata", format!("{}-m.avro", fresh_name(md)).as_str()]);
        let path = location.resolve(&stored)?;
        let length = bytes.len() as u64;
        location.store.put(&path, PutPayload::from(bytes)).await?;
        written.push(path);
        twins.insert(
            manifest.path.clone(),
            IcebergManifest {
                path: stored,
                length,
                sequence_number: Some(sequence_number),
                files_snapshot_id: Some(snapshot_id),
                files_sequence_number: Some(sequence_number),
                first_row_id: None,
            },
        );
    }
    let lacking = md
        .snapshots
        .iter_mut()
        .filter_map(|s| s.manifests.as_mut())
        .filter(|m| m.iter().any(|m| m.iceberg.is_none()));
    for manifest in lacking.flat_map(|m| Arc::make_mut(m).iter_mut()) {
        if manifest.iceberg.is_none() {
            manifest.iceberg = twins.get(&manifest.path).cloned();
        }
    }
    Ok(())
}

async fn write_list(
    location: &TableLocation,
    md: &mut TableMetadata,
    index: usize,
    assigned: &mut HashMap<String, i64>,
    sequences: &mut HashMap<String, i64>,
) -> Result<Path> {
    let snapshot = &mut md.snapshots[index];
    let id = (snapshot.snapshot_id, snapshot.sequence_number);
    for manifest in snapshot.manifests_mut()? {
        if let Some(twin) = manifest.iceberg.as_mut()
            && twin.sequence_number.is_none()
        {
            twin.sequence_number = sequences.get(&manifest.path).copied();
        }
        assign_sequence_number(manifest, id.0, id.1)?;
        if let Some(seq) = manifest.iceberg.as_ref().and_then(|t| t.sequence_number) {
            sequences.insert(manifest.path.clone(), seq);
        }
    }
    assign_row_ids(md, index, assigned)?;
    let snapshot = &md.snapshots[index];
    let entries = snapshot
        .manifests()?
        .iter()
        .map(|m| list_entry(location, md.spec(m.spec_id)?, m))
        .collect::<Result<Vec<_>>>()?;
    let bytes = write_manifest_list(
        snapshot.snapshot_id,
        snapshot.parent_snapshot_id,
        snapshot.sequence_number,
        snapshot.first_row_id,
        &entries,
    )?;
    let name = format!("{}-snap-{}.avro", fresh_name(md), snapshot.snapshot_id);
    let stored = TableLocation::stored_path(["metadata", name.as_str()]);
    let path = location.resolve(&stored)?;
    location.store.put(&path, PutPayload::from(bytes)).await?;
    md.snapshots[index].manifest_list = Some(location.iceberg_path(&stored));
    Ok(path)
}

/// The manifest-list record of `manifest` (of `spec`), from its twin.
pub(crate) fn list_entry(
    location: &TableLocation,
    spec: &TableSpec,
    manifest: &ManifestFile,
) -> Result<ManifestListEntry> {
    let twin = twin_of(manifest)?;
    let sequence_number = twin.sequence_number.unwrap_or(0);
    let files_sequence = twin.files_sequence_number.unwrap_or(sequence_number);
    let (added_files, existing_files, added_rows, existing_rows) = if twin.added() {
        (manifest.file_count, 0, manifest.record_count, 0)
    } else {
        (0, manifest.file_count, 0, manifest.record_count)
    };
    Ok(ManifestListEntry {
        manifest_path: location.iceberg_path(&twin.path),
        manifest_length: twin.length as i64,
        partition_spec_id: spec.partition_spec_id(),
        content: manifest.content.id(),
        sequence_number,
        min_sequence_number: files_sequence.min(sequence_number),
        added_snapshot_id: manifest.added_snapshot_id,
        added_files_count: count_i32(added_files)?,
        existing_files_count: count_i32(existing_files)?,
        deleted_files_count: 0,
        added_rows_count: added_rows as i64,
        existing_rows_count: existing_rows as i64,
        deleted_rows_count: 0,
        partitions: binary_summaries(spec, &manifest.partitions)?,
        first_row_id: twin.first_row_id,
    })
}

/// A fresh `<prefix>-<uuid>` name of the table's (the location this
/// commit runs on may not know the prefix).
fn fresh_name(md: &TableMetadata) -> String {
    fresh_name_of(md.file_prefix.as_deref())
}

fn twin_of(manifest: &ManifestFile) -> Result<&IcebergManifest> {
    manifest.iceberg.as_ref().ok_or_else(|| {
        Error::Format(format!(
            "manifest {} has no Iceberg twin; the table cannot be written as Iceberg metadata",
            manifest.path
        ))
    })
}

/// Iceberg v3 row lineage for snapshot `index`, whose list is about to be
/// written: it starts at the table's `next-row-id`, and each manifest it
/// lists without a `first_row_id` gets the next range, as long as its rows
/// (files that have their own row ids, survivors of a rewrite, are counted
/// too: a range may have gaps, never overlaps). A manifest already given
/// one by another snapshot of this commit (`assigned`, by manifest path)
/// keeps it; a manifest kept from a committed snapshot carries its own.
/// Nothing for v2 tables.
fn assign_row_ids(md: &mut TableMetadata, index: usize, assigned: &mut HashMap<String, i64>) -> Result<()> {
    let Some(first) = md.next_row_id else {
        return Ok(());
    };
    let snapshot = &mut md.snapshots[index];
    let manifests = snapshot.manifests_mut()?;
    let mut slots = Vec::with_capacity(manifests.len());
    // Row ids number data rows: delete manifests get no range.
    for manifest in manifests.iter_mut().filter(|m| !m.is_deletes()) {
        let rows = i64::try_from(manifest.record_count).unwrap_or(i64::MAX);
        let Some(twin) = manifest.iceberg.as_mut() else {
            return crate::format_err!("manifest {} has no Iceberg twin", manifest.path);
        };
        if twin.first_row_id.is_none() {
            twin.first_row_id = assigned.get(&manifest.path).copied();
        }
        slots.push((&mut twin.first_row_id, rows));
    }
    let next = crate::iceberg::manifest_list::assign_row_id_ranges(first, slots)?;
    for m in snapshot.manifests()? {
        if let Some(id) = m.iceberg.as_ref().and_then(|t| t.first_row_id) {
            assigned.insert(m.path.clone(), id);
        }
    }
    snapshot.first_row_id = Some(first);
    snapshot.added_rows = Some(next - first);
    md.next_row_id = Some(next);
    Ok(())
}

/// A new twin's sequence number is its snapshot's.
pub(crate) fn assign_sequence_number(
    manifest: &mut ManifestFile,
    snapshot_id: i64,
    sequence_number: i64,
) -> Result<()> {
    let Some(twin) = manifest.iceberg.as_mut() else {
        return Ok(());
    };
    if twin.sequence_number.is_none() {
        if manifest.added_snapshot_id != snapshot_id {
            return crate::format_err!(
                "manifest {} was added by snapshot {} but has no sequence number in snapshot {snapshot_id}",
                manifest.path,
                manifest.added_snapshot_id
            );
        }
        twin.sequence_number = Some(sequence_number);
    }
    Ok(())
}

fn count_i32(n: u64) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::Format(format!("{n} files in one manifest exceed Iceberg's int count")))
}
