//! The delete files of a snapshot another engine wrote for a table of ours
//! (DuckDB's merge-on-read DELETE and UPDATE, Spark's, Trino's), checked and
//! turned into delete files of ours, so our scans, statements and optimize
//! apply them as they apply our own.
//!
//! | the client's delete file | kept when | as |
//! |---|---|---|
//! | Parquet position deletes (v2 table) | every row names one data file of the table, live in the snapshot, and its positions lie in that file | a position delete file of that data file |
//! | deletion vector (v3 table) | it names a live data file, which keeps no other vector, and its blob decodes to `record_count` positions within the file | that file's vector |
//! | equality deletes | its key columns are top-level columns of the table's schema | positions of the rows it deletes in the live data files it applies to (`equality_as_positions`), written as our position delete files or vectors |
//!
//! A delete file is trusted for nothing it does not prove: the data file a
//! Parquet delete file names is read from the file itself (its `file_path`
//! column), not taken from the manifest, because our scans apply every
//! position of a delete file to the one data file it is listed for.
//!
//! ```text
//! parent: data [a.parquet (10 rows)]      client: deletes [d.parquet: (a.parquet, 2), (a.parquet, 4)]
//! change: delete manifest [d.parquet -> a.parquet, 2 positions]
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::common::ScalarValue;

use super::deletes::read_equality_file;
use super::manifest::IcebergManifests;
use crate::error::{Error, Result};
use crate::formats::deletes::{EqualityDeletes, equality_positions};
use crate::iceberg::manifest_entries::{Content, Entry};
use crate::iceberg::manifest_list_read::ManifestEntryFile;
use crate::manifest::deletes::{DeleteEntry, delete_entries, named_data_files, positions};
use crate::manifest::format::data_files;
use crate::manifest::{DataFile, read_manifest};
use crate::plan::files::PlannedFile;
use crate::spec::{BlobRange, ManifestFile, Snapshot, TableMetadata};
use crate::store::TableLocation;
use crate::table::position_deletes::RowDeletes;

/// A data file of the parent snapshot, as a delete file needs it.
struct Target {
    file: DataFile,
    /// Its manifest's index in the parent snapshot.
    manifest: usize,
}

/// What the client's delete manifests hold, checked.
#[derive(Default)]
pub(super) struct ClientDeletes<'a> {
    /// Position delete files and vectors, each with the index (in the parent
    /// snapshot) of the manifest listing the data file it deletes from.
    pub positions: Vec<(DataFile, usize)>,
    /// Equality delete files, with the manifest listing each.
    pub equality: Vec<(Entry, &'a ManifestEntryFile)>,
}

/// The client's delete files, checked.
///
/// `listed` are the delete manifests the client wrote; `kept` the parent's
/// delete manifests its list keeps; `leaving` the data files (stored paths)
/// the snapshot removes; `new_files` those it adds.
#[allow(clippy::too_many_arguments)]
pub(super) async fn client_deletes<'a>(
    location: &TableLocation,
    md: &TableMetadata,
    manifests: &IcebergManifests,
    listed: &'a [ManifestEntryFile],
    parent: &[&ManifestFile],
    kept: &HashSet<&str>,
    leaving: &HashSet<&str>,
    new_files: &HashSet<&str>,
) -> Result<ClientDeletes<'a>> {
    let mut out = ClientDeletes::default();
    let mut entries: Vec<(Entry, &str)> = Vec::new();
    for m in listed {
        for e in manifests.entries(location, m).await.map_err(|e| client(e, &m.path))? {
            if e.content == Content::EqualityDeletes {
                out.equality.push((e, m));
            } else {
                entries.push((e, m.path.as_str()));
            }
        }
    }
    if entries.is_empty() {
        return Ok(out);
    }
    let targets = parent_data_files(location, md, parent).await?;
    // Delete files of the parent that stay: listed again, they are not new.
    let kept_manifests: Vec<&ManifestFile> = parent
        .iter()
        .filter(|m| m.is_deletes() && kept.contains(m.path.as_str()))
        .copied()
        .collect();
    let staying: Vec<DeleteEntry> = delete_entries(location, md, &kept_manifests).await?;
    let staying_paths: HashSet<(&str, Option<i64>)> = staying
        .iter()
        .map(|d| (d.path.as_str(), d.blob.map(|b| b.offset)))
        .collect();
    let mut vectors: HashSet<String> = staying
        .iter()
        .filter(|d| d.blob.is_some())
        .map(|d| d.data_file.clone())
        .collect();
    let v3 = crate::iceberg::json::needs_v3(md);
    let rebase = manifests.rebase();
    for (entry, manifest) in entries {
        let at = |what: String| {
            Error::Invalid(format!(
                "add-snapshot: delete file {} (manifest {manifest}): {what}",
                entry.file_path
            ))
        };
        let stored = rebase.stored(&entry.file_path)?;
        let blob = match (entry.content_offset, entry.content_size) {
            (Some(offset), Some(length)) => Some(BlobRange { offset, length }),
            (None, None) => None,
            _ => {
                return Err(at(
                    "a deletion vector needs both content_offset and content_size_in_bytes".into(),
                ));
            }
        };
        if staying_paths.contains(&(stored.as_str(), blob.map(|b| b.offset))) {
            continue;
        }
        match (v3, blob.is_some()) {
            (true, false) => {
                return Err(at(
                    "the table is Iceberg format version 3, whose position deletes are deletion vectors, not position delete files".into(),
                ));
            }
            (false, true) => {
                return Err(at(
                    "deletion vectors need Iceberg format version 3; the table is version 2".into(),
                ));
            }
            _ => {}
        }
        // The data file it deletes from, as the file itself says.
        let named = match (&blob, &entry.referenced_data_file) {
            (Some(_), Some(r)) => rebase.stored(r)?,
            (Some(_), None) => {
                return Err(at(
                    "a deletion vector must name its data file (referenced_data_file)".into()
                ));
            }
            (None, referenced) => {
                let paths = named_data_files(location, &stored)
                    .await
                    .map_err(|e| client(e, manifest))?;
                let [only] = paths.as_slice() else {
                    return Err(at(format!(
                        "it deletes rows of {} data files; this catalog keeps position delete files of one data file each",
                        paths.len()
                    )));
                };
                let only = rebase.stored(only)?;
                if let Some(r) = referenced
                    && rebase.stored(r)? != only
                {
                    return Err(at(format!("its manifest entry names data file {r}, its rows another")));
                }
                only
            }
        };
        if new_files.contains(named.as_str()) {
            return Err(at(format!(
                "it deletes rows of {named}, which the same snapshot adds (write the file without those rows)"
            )));
        }
        let Some(target) = targets.get(&named).filter(|_| !leaving.contains(named.as_str())) else {
            return Err(at(format!("data file {named} is not a live file of the table")));
        };
        if blob.is_some() && !vectors.insert(named.clone()) {
            return Err(at(format!(
                "data file {named} already has a deletion vector (a data file has at most one; the new one must replace it)"
            )));
        }
        // Positions within the file, as many as the entry says.
        let check = DeleteEntry {
            path: stored.clone(),
            data_file: named.clone(),
            record_count: entry.record_count.max(0) as u64,
            blob,
        };
        let found = positions(location, &check, target.file.record_count)
            .await
            .map_err(|e| client(e, manifest))?;
        if blob.is_none() && found.len() as u64 != check.record_count {
            return Err(at(format!(
                "it holds {} distinct positions, its manifest entry says {}",
                found.len(),
                check.record_count
            )));
        }
        out.positions.push((
            DataFile {
                path: stored,
                file_size: entry.file_size.max(0) as u64,
                record_count: check.record_count,
                spec_id: target.file.spec_id,
                partition: target.file.partition.clone(),
                partition_strings: target.file.partition_strings.clone(),
                column_stats: Vec::new(),
                pending: None,
                first_row_id: None,
                sort_order_id: None,
                referenced_data_file: Some(named),
                blob,
            },
            target.manifest,
        ));
    }
    Ok(out)
}

/// Every data file of the parent snapshot, by stored path.
async fn parent_data_files(
    location: &TableLocation,
    md: &TableMetadata,
    parent: &[&ManifestFile],
) -> Result<HashMap<String, Target>> {
    let mut out = HashMap::new();
    for (index, m) in parent.iter().enumerate() {
        if m.is_deletes() {
            continue;
        }
        let spec = md.spec(m.spec_id)?;
        let batch = read_manifest(location, m, spec, None).await?;
        for file in data_files(spec, &batch)? {
            out.insert(file.path.clone(), Target { file, manifest: index });
        }
    }
    Ok(out)
}

/// A file the client wrote that cannot be read is the client's mistake.
fn client(e: Error, manifest: &str) -> Error {
    match e {
        Error::Format(m) | Error::Invalid(m) => Error::Invalid(format!("add-snapshot: manifest {manifest}: {m}")),
        other => other,
    }
}

/// The client's equality delete files as positions of the parent's live
/// data files, so the table keeps position deletes (or vectors) only and
/// every reader applies them. Exact by the spec's rule: an equality delete
/// applies to data files of a lower sequence number, in its partition (or
/// everywhere, from an unpartitioned spec); at commit time that is every
/// live file of the parent in scope, never a file the snapshot adds. Rows
/// match when every key column is equal, NULL matching NULL.
pub(super) async fn equality_as_positions(
    location: &TableLocation,
    md: &TableMetadata,
    manifests: &IcebergManifests,
    entries: &[(Entry, &ManifestEntryFile)],
    parent: &Snapshot,
    leaving: &HashSet<&str>,
) -> Result<Option<RowDeletes>> {
    if entries.is_empty() {
        return Ok(None);
    }
    let schema = &md.current_spec()?.schema;
    let rebase = manifests.rebase();
    // Each file's rows, with the scope they apply to.
    let mut deletes = Vec::with_capacity(entries.len());
    for (entry, listed) in entries {
        let manifest = &listed.path;
        let at = |what: String| {
            Error::Invalid(format!(
                "add-snapshot: equality delete file {} (manifest {manifest}): {what}",
                entry.file_path
            ))
        };
        let path = rebase.resolve(location, &entry.file_path)?;
        let rows = read_equality_file(location, &path, entry, schema)
            .await
            .map_err(|e| client(e, manifest))?;
        if rows.rows.num_rows() as i64 != entry.record_count {
            return Err(at(format!(
                "it holds {} rows, its manifest entry says {}",
                rows.rows.num_rows(),
                entry.record_count
            )));
        }
        let Some(spec) = md.spec_of_partition_spec(listed.spec_id) else {
            return Err(at(format!(
                "its manifest is of partition spec {}, which the table does not have",
                listed.spec_id
            )));
        };
        let unpartitioned = spec.partition_spec.fields.is_empty();
        if !unpartitioned && entry.partition.len() != spec.partition_spec.fields.len() {
            return Err(at("its partition does not match its partition spec's fields".into()));
        }
        deletes.push(Scoped {
            rows: Arc::new(rows),
            spec: listed.spec_id,
            partition: entry.partition.clone(),
            unpartitioned,
        });
    }
    let plan = crate::plan::files::plan_files(location, md, Some(parent), &[], None).await?;
    let leaving: HashSet<object_store::path::Path> =
        leaving.iter().map(|p| location.resolve(p)).collect::<Result<_>>()?;
    let files: Vec<PlannedFile> = plan.files.into_iter().filter(|f| !leaving.contains(&f.path)).collect();
    let mut found = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let iceberg_spec = md.spec(file.spec_id)?.partition_spec_id();
        let applying: Vec<Arc<EqualityDeletes>> = deletes
            .iter()
            .filter(|d| d.unpartitioned || (d.spec == iceberg_spec && d.partition == file.partition))
            .map(|d| Arc::clone(&d.rows))
            .collect();
        let matched = equality_positions(location, &file.path, file.record_count, schema, &applying).await?;
        let already: HashSet<u64> = file.deletes.iter().flat_map(|d| d.iter().copied()).collect();
        let positions: Vec<u64> = matched.into_iter().filter(|p| !already.contains(p)).collect();
        if !positions.is_empty() {
            found.push((index, positions));
        }
    }
    Ok(Some(RowDeletes::new(Vec::new(), &files, found)))
}

/// One equality delete file's rows and the data files they apply to.
struct Scoped {
    rows: Arc<EqualityDeletes>,
    /// Iceberg's partition spec id of its manifest, and its partition.
    spec: i32,
    partition: Vec<ScalarValue>,
    unpartitioned: bool,
}
