//! Writing to an Iceberg table of another engine.
//!
//! A table opened with `CREATE EXTERNAL TABLE … STORED AS ICEBERG LOCATION
//! '<dir>'` accepts INSERT, INSERT OVERWRITE, DELETE, UPDATE, MERGE and
//! TRUNCATE. The statements are ours (`table::*`): they see the table in our
//! shape and produce the next `TableMetadata`. Here that result becomes an
//! Iceberg commit:
//!
//! | what the statement produced                | what is written                                        |
//! |--------------------------------------------|--------------------------------------------------------|
//! | new data files, survivors of a rewrite     | Avro manifests only (`<prefix>-<uuid>-m.avro`, ADDED / EXISTING) |
//! | the new snapshot's manifests               | `snap-<id>-<uuid>.avro`: kept manifests listed exactly as before, delete manifests carried over |
//! | the next version                           | `metadata/v<N+1>.metadata.json`, put-if-absent, then `version-hint.text` |
//!
//! The next metadata file is the previous one as JSON with the snapshot
//! added: `snapshots`, `current-snapshot-id`, `refs.main`, `snapshot-log`,
//! `metadata-log`, `last-sequence-number`, `last-updated-ms`. Every other
//! field (properties, sort orders, statistics files, other branches, fields
//! this engine does not know) is kept as it was.
//!
//! A format version 3 table gets row lineage as the spec has it: the new
//! list gives each data manifest without a `first_row_id` the next range,
//! the snapshot records `first-row-id` and `added-rows`, `next-row-id`
//! moves on, and the survivors of a rewritten manifest keep their ids
//! (decoded with the manifest, `manifest.rs`).
//!
//! Refused for writes, with nothing written (reads are unaffected): format
//! versions other than 2 and 3, a table of ours (its metadata is ours too), a
//! partition field with a transform we do not know in a spec we would
//! write, encrypted manifests, row-level changes to a table with delete
//! files of another engine, and statements that would change the schema,
//! the partitioning, the properties, tags or the snapshot history.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use serde_json::{Value as Json, json};

use super::manifest::IcebergManifests;
use super::metadata::location_url;
use super::pointer::{Current, MetadataPointer, NextMetadata};
use super::{Built, build_parts};
use crate::error::{Error, Result};
use crate::formats::table::{ForeignTable, ForeignWrites};
use crate::iceberg::manifest_list::{FieldSummaryBinary, ManifestListEntry, write_manifest_list};
use crate::iceberg::manifest_list_read::ManifestEntryFile;
use crate::iceberg::metadata::IcebergMetadata;
use crate::manifest::source::ManifestSource;
use crate::plan::files::PlannedFile;
use crate::spec::{ManifestFile, Snapshot, TableMetadata, TableSpec};
use crate::store::commit::COMMIT_RETRIES;
use crate::store::{TableLocation, Versioned};
use crate::table::foreign::{Apply, ForeignCommits};

/// Commits to the Iceberg table at one location.
#[derive(Debug)]
pub struct IcebergCommits {
    name: String,
    /// The table's root, without a manifest source.
    base: TableLocation,
    manifests: Arc<WriterManifests>,
    /// Where the current metadata file is recorded (the table's directory,
    /// or a catalog).
    pointer: Arc<dyn MetadataPointer>,
    /// The last metadata file read ([`Self::read`]).
    last_read: Mutex<Option<Arc<Latest>>>,
}

/// The latest metadata file and what was built from it.
struct Latest {
    file: Path,
    version: u64,
    raw: Json,
    built: Built,
}

impl std::fmt::Debug for Latest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Latest")
            .field("file", &self.file)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl IcebergCommits {
    /// `written_location`: the table's `location` as its metadata spells it.
    /// Every path we write starts with it, as the table's other paths do
    /// (readers resolve them against it, also when the table was moved).
    /// `pointer` records the current metadata file (the table's directory,
    /// or a catalog).
    pub fn new(name: &str, mut base: TableLocation, written_location: &str, pointer: Arc<dyn MetadataPointer>) -> Self {
        base.iceberg_location = Some(written_location.trim_end_matches('/').to_string());
        Self {
            name: name.to_string(),
            base,
            manifests: Arc::new(WriterManifests::default()),
            pointer,
            last_read: Mutex::new(None),
        }
    }

    /// Make the manifests of a table just opened readable by its writers.
    pub(crate) fn adopt(&self, built: &Built) {
        self.manifests.add(built);
    }

    /// The write side of the table, for its `ForeignTable`.
    pub fn writer(self: &Arc<Self>) -> Arc<dyn ForeignWrites> {
        Arc::new(IcebergWriter(Arc::clone(self)))
    }

    /// The location statements write through: manifests read as this
    /// table's, and written as Iceberg Avro manifests only.
    fn location(&self) -> TableLocation {
        self.base
            .clone()
            .with_manifest_source(Arc::clone(&self.manifests) as Arc<dyn ManifestSource>)
    }

    /// The latest metadata file, as the pointer records it.
    async fn latest_file(&self) -> Result<(Path, u64)> {
        let current = self.pointer.current(&self.base).await?;
        Ok((current.file, current.version))
    }

    async fn latest(&self) -> Result<Arc<Latest>> {
        let (file, version) = self.latest_file().await?;
        self.read(file, version).await
    }

    /// The last metadata file [`Self::read`] parsed.
    fn last_read(&self) -> Option<Arc<Latest>> {
        self.last_read.lock().ok().and_then(|l| l.clone())
    }

    /// The metadata file `file`, parsed and built once: a metadata file is
    /// never changed after it is written, so the last one read serves a
    /// statement's planning and its commit, and the next statement when no
    /// other writer committed in between.
    async fn read(&self, file: Path, version: u64) -> Result<Arc<Latest>> {
        if let Some(last) = self.last_read()
            && last.file == file
        {
            return Ok(last);
        }
        let latest = Arc::new(self.parse(file, version).await?);
        if let Ok(mut last) = self.last_read.lock() {
            *last = Some(Arc::clone(&latest));
        }
        Ok(latest)
    }

    async fn parse(&self, file: Path, version: u64) -> Result<Latest> {
        let url = location_url(&self.base, &file);
        let bytes = self.base.store.get(&file).await?.bytes().await?;
        let raw: Json = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Format(format!("Iceberg metadata file {url} is not valid JSON: {e}")))?;
        let md = IcebergMetadata::from_json(&raw, &url)?;
        let built = build_parts(&self.name, self.base.clone(), Arc::new(md), None).await?;
        self.manifests.add(&built);
        Ok(Latest {
            file,
            version,
            raw,
            built,
        })
    }

    /// What this engine cannot keep correct is refused before anything is written.
    fn check_writable(&self, latest: &Latest) -> Result<()> {
        let url = location_url(&self.base, &latest.file);
        let refuse = |what: String| {
            Err(Error::Invalid(format!(
                "cannot write to Iceberg table {} ({url}): {what}; nothing was written",
                self.name
            )))
        };
        if latest.raw.get("table-specs").is_some() && !self.pointer.catalog_commits() {
            return refuse(
                "it is a hidden-partitions table (its metadata is ours too): write to it as one, e.g. CREATE TABLE … LOCATION".into(),
            );
        }
        if let Some(why) = self.pointer.forks(&latest.file) {
            return refuse(why);
        }
        match latest.built.metadata.format_version {
            2 => {}
            3 if latest.raw.get("next-row-id").and_then(Json::as_i64).is_some() => {}
            1 => {
                return refuse(
                    "it is an Iceberg format version 1 table, and this engine writes version 2 metadata only (upgrade it with another engine: ALTER TABLE … SET TBLPROPERTIES ('format-version' = '2'))".into(),
                );
            }
            3 => {
                return refuse("it is an Iceberg format version 3 table without a next-row-id".into());
            }
            v => return refuse(format!("its format version {v} is unknown")),
        }
        Ok(())
    }

    /// The next metadata document for `next` (our shape) on top
    /// of `latest`, and the files written for it.
    async fn next_file(&self, latest: &Latest, next: &TableMetadata, written: &mut Vec<Path>) -> Result<Json> {
        let shape = latest.built.table.metadata();
        let unsupported = |what: &str| {
            Err(Error::Invalid(format!(
                "{what} of Iceberg table {} (written by another engine) is not supported yet; nothing was written",
                self.name
            )))
        };
        let mut raw = latest.raw.clone();
        let Some(doc) = raw.as_object_mut() else {
            return crate::format_err!("Iceberg metadata {} is not a JSON object", latest.file);
        };
        if next.properties != shape.properties {
            // Iceberg's properties are the table's, key for key.
            doc.insert("properties".into(), serde_json::to_value(&next.properties)?);
        }
        self.evolve(doc, latest, next)?;
        Self::set_tags(doc, shape, next);
        let known: BTreeSet<i64> = shape.snapshots.iter().map(|s| s.snapshot_id).collect();
        let kept: BTreeSet<i64> = next.snapshots.iter().map(|s| s.snapshot_id).collect();
        if !known.is_subset(&kept) {
            return unsupported("removing snapshots");
        }
        let added: Vec<&Snapshot> = next
            .snapshots
            .iter()
            .filter(|s| !known.contains(&s.snapshot_id))
            .collect();
        let md = &latest.built.metadata;
        let previous_file = self.base.iceberg_path(&relative(&self.base, &latest.file));
        log_metadata(doc, md, &previous_file);
        let snapshot = match added.as_slice() {
            [] => {
                doc.insert("last-updated-ms".into(), json!(chrono::Utc::now().timestamp_millis()));
                return Ok(raw);
            }
            [snapshot] => *snapshot,
            more => {
                return crate::format_err!(
                    "a commit to Iceberg table {} made {} snapshots; one was expected",
                    self.name,
                    more.len()
                );
            }
        };
        if next.current_snapshot_id != Some(snapshot.snapshot_id) {
            return crate::format_err!("a commit to Iceberg table {} left its snapshot current", self.name);
        }
        let mut listed = self.list_entries(latest, next, snapshot)?;
        let lineage = match latest.raw.get("next-row-id").and_then(Json::as_i64) {
            Some(first) if latest.built.metadata.format_version >= 3 => {
                let next_row_id = assign_row_ids(&mut listed, first)?;
                doc.insert("next-row-id".into(), json!(next_row_id));
                Some((first, next_row_id - first))
            }
            _ => None,
        };
        let name = format!("snap-{}-{}.avro", snapshot.snapshot_id, uuid::Uuid::new_v4());
        let stored = TableLocation::stored_path(["metadata", name.as_str()]);
        let path = self.base.resolve(&stored)?;
        let bytes = write_manifest_list(
            snapshot.snapshot_id,
            snapshot.parent_snapshot_id,
            snapshot.sequence_number,
            lineage.map(|(first, _)| first),
            &listed,
        )?;
        self.base.store.put(&path, PutPayload::from(bytes)).await?;
        written.push(path);
        add_snapshot(doc, snapshot, &self.base.iceberg_path(&stored), lineage);
        Ok(raw)
    }

    /// Tags (refs other than `main`) as `next` has them; a tag that still
    /// names the same snapshot keeps the rest of its Iceberg fields.
    fn set_tags(doc: &mut serde_json::Map<String, Json>, shape: &TableMetadata, next: &TableMetadata) {
        let tags = |md: &TableMetadata| -> Vec<(String, i64, String)> {
            md.refs
                .iter()
                .filter(|(name, _)| name.as_str() != "main")
                .map(|(name, r)| (name.clone(), r.snapshot_id, r.kind.clone()))
                .collect()
        };
        if tags(next) == tags(shape) {
            return;
        }
        let mut refs = doc.get("refs").and_then(Json::as_object).cloned().unwrap_or_default();
        refs.retain(|name, _| name == "main" || next.refs.contains_key(name));
        for (name, id, kind) in tags(next) {
            let same = refs
                .get(&name)
                .and_then(|r| r.get("snapshot-id"))
                .and_then(Json::as_i64)
                == Some(id);
            if !same {
                refs.insert(name, json!({"snapshot-id": id, "type": kind}));
            }
        }
        doc.insert("refs".into(), Json::Object(refs));
    }

    /// ALTER's schema and partition changes as Iceberg schemas and specs:
    /// a new schema when the columns changed, the existing spec with the
    /// same fields or a new one when the partitioning changed.
    fn evolve(&self, doc: &mut serde_json::Map<String, Json>, latest: &Latest, next: &TableMetadata) -> Result<()> {
        let shape = latest.built.table.metadata();
        if next.table_specs == shape.table_specs && next.current_spec_id == shape.current_spec_id {
            return Ok(());
        }
        let md = &latest.built.metadata;
        let (old, new) = (shape.current_spec()?, next.current_spec()?);
        if new.schema != old.schema {
            let fits = |t: &crate::spec::types::Type| {
                crate::iceberg::json::type_version(t).is_some_and(|v| i64::from(v) <= md.format_version)
            };
            if let Some(f) = new.schema.fields.iter().find(|f| !fits(&f.field_type)) {
                return Err(Error::Invalid(format!(
                    "Iceberg table {}: column {:?} ({}) has no type in the table's Iceberg format version {}; nothing was written",
                    self.name,
                    f.name,
                    f.field_type.to_arrow(),
                    md.format_version
                )));
            }
            let id = md.schemas.keys().max().map_or(0, |m| m + 1);
            let mut schema = json!({
                "type": "struct",
                "schema-id": id,
                "fields": serde_json::to_value(&new.schema.fields)?,
            });
            // Identifier fields stay while their columns do.
            let current = doc
                .get("schemas")
                .and_then(Json::as_array)
                .and_then(|all| all.iter().find(|s| s["schema-id"] == json!(md.current_schema_id)));
            if let Some(ids) = current
                .and_then(|s| s.get("identifier-field-ids"))
                .and_then(Json::as_array)
                && ids
                    .iter()
                    .all(|i| i.as_i64().is_some_and(|i| new.schema.field_by_id(i as i32).is_some()))
            {
                schema["identifier-field-ids"] = Json::Array(ids.clone());
            }
            push(doc, "schemas", schema);
            doc.insert("current-schema-id".into(), json!(id));
            let last = doc.get("last-column-id").and_then(Json::as_i64).unwrap_or(0);
            doc.insert("last-column-id".into(), json!(last.max(next.last_column_id as i64)));
        }
        if new.partition_spec != old.partition_spec {
            let mapping = latest.built.manifests.spec(md.default_spec_id).ok();
            if let Some(m) = mapping
                && let Some(i) = m.kept.iter().position(Option::is_none)
            {
                return Err(Error::Invalid(format!(
                    "Iceberg table {}: its partition spec has field {:?} with transform {:?}, which this engine does not know, so it cannot change the partitioning; nothing was written",
                    self.name, m.iceberg.fields[i].name, m.iceberg.fields[i].transform
                )));
            }
            let wanted = crate::iceberg::metadata::IcebergSpec::of(new).fields;
            let id = match md.specs.iter().find(|s| s.fields == wanted) {
                Some(existing) => existing.spec_id,
                None => {
                    let id = md.specs.iter().map(|s| s.spec_id).max().map_or(0, |m| m + 1);
                    let fields = serde_json::to_value(&new.partition_spec.fields)?;
                    push(doc, "partition-specs", json!({"spec-id": id, "fields": fields}));
                    id
                }
            };
            doc.insert("default-spec-id".into(), json!(id));
            let last = doc.get("last-partition-id").and_then(Json::as_i64).unwrap_or(999);
            doc.insert(
                "last-partition-id".into(),
                json!(last.max(next.last_partition_id as i64)),
            );
        }
        Ok(())
    }

    /// The manifest list of the new snapshot: manifests kept from the
    /// latest snapshot exactly as they were listed, new ones from what we
    /// wrote, and the latest snapshot's delete manifests.
    fn list_entries(
        &self,
        latest: &Latest,
        next: &TableMetadata,
        snapshot: &Snapshot,
    ) -> Result<Vec<ManifestListEntry>> {
        let built = &latest.built;
        let current: Vec<&ManifestFile> = built.table.metadata().current_manifests()?.iter().collect();
        let now: BTreeSet<&str> = snapshot.manifests()?.iter().map(|m| m.path.as_str()).collect();
        // The table keeps its delete files (the statement's reads applied
        // them; those of removed files no longer match anything). They go on
        // applying by sequence number, so the survivors of a manifest we
        // rewrite must keep their own: exact only when every entry has the
        // manifest's (its minimum sequence number is its sequence number).
        let shape = built.table.metadata();
        let inexact = |m: &ManifestFile| {
            built.listed.get(&m.path).filter(|l| {
                let added = shape.snapshot(m.added_snapshot_id).map(|s| s.sequence_number);
                l.min_sequence_number != l.sequence_number || added != Some(l.sequence_number)
            })
        };
        if !built.delete_manifests.is_empty()
            && let Some(mixed) = current
                .iter()
                .filter(|m| !now.contains(m.path.as_str()))
                .find_map(|m| inexact(m))
        {
            return Err(Error::Invalid(format!(
                "Iceberg table {} has delete files written by another engine (merge-on-read), and this statement rewrites manifest {}, whose files' sequence numbers ({} to {}) its rewrite could not keep; rewriting it would change which deletes apply to the files it keeps; nothing was written (compact the table's manifests with the engine that wrote them, or write with that engine)",
                self.name, mixed.path, mixed.min_sequence_number, mixed.sequence_number
            )));
        }
        let mut out = Vec::with_capacity(snapshot.manifests()?.len() + built.delete_manifests.len());
        for m in snapshot.manifests()? {
            match built.listed.get(&m.path) {
                Some(entry) => out.push(kept_entry(entry)?),
                None => out.push(self.new_entry(built, next, snapshot, m)?),
            }
        }
        for entry in &built.delete_manifests {
            out.push(kept_entry(entry)?);
        }
        Ok(out)
    }

    fn new_entry(
        &self,
        built: &Built,
        next: &TableMetadata,
        snapshot: &Snapshot,
        m: &ManifestFile,
    ) -> Result<ManifestListEntry> {
        let mapping = built.manifests.spec(m.spec_id)?;
        if let Some(i) = mapping.kept.iter().position(Option::is_none) {
            let field = &mapping.iceberg.fields[i];
            return Err(Error::Invalid(format!(
                "Iceberg table {}: partition spec {} has field {:?} with transform {:?}, which this engine cannot compute, so it cannot write files under that spec; nothing was written",
                self.name, m.spec_id, field.name, field.transform
            )));
        }
        let mut manifest = m.clone();
        crate::table::iceberg_commit::assign_sequence_number(
            &mut manifest,
            snapshot.snapshot_id,
            snapshot.sequence_number,
        )?;
        let spec: &TableSpec = next.spec(m.spec_id)?;
        crate::table::iceberg_commit::list_entry(&self.base, spec, &manifest)
    }
}

/// A manifest listed again as the latest manifest list had it.
fn kept_entry(e: &ManifestEntryFile) -> Result<ManifestListEntry> {
    if e.key_metadata.is_some() {
        return Err(Error::Invalid(format!(
            "manifest {} is encrypted (key_metadata), which this engine does not write; nothing was written",
            e.path
        )));
    }
    let count = |i: usize| e.counts[i].unwrap_or(0);
    let int = |i: usize| {
        i32::try_from(count(i)).map_err(|_| Error::Format(format!("manifest {}: a file count exceeds int", e.path)))
    };
    Ok(ManifestListEntry {
        manifest_path: e.path.clone(),
        manifest_length: e.length,
        partition_spec_id: e.spec_id,
        content: e.content,
        sequence_number: e.sequence_number,
        min_sequence_number: e.min_sequence_number,
        added_snapshot_id: e.added_snapshot_id,
        added_files_count: int(0)?,
        existing_files_count: int(1)?,
        deleted_files_count: int(2)?,
        added_rows_count: count(3),
        existing_rows_count: count(4),
        deleted_rows_count: count(5),
        partitions: e.partitions.as_ref().map(|p| {
            p.iter()
                .map(|s| FieldSummaryBinary {
                    contains_null: s.contains_null,
                    contains_nan: s.contains_nan,
                    lower: s.lower.clone(),
                    upper: s.upper.clone(),
                })
                .collect()
        }),
        first_row_id: e.first_row_id,
    })
}

/// `path` relative to the table root, in stored form.
fn relative(base: &TableLocation, path: &Path) -> String {
    path.prefix_match(&base.root)
        .map(|parts| {
            TableLocation::stored_path(
                parts
                    .map(|p| p.as_ref().to_string())
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str),
            )
        })
        .unwrap_or_else(|| path.to_string())
}

/// How many earlier metadata files `metadata-log` keeps by default.
const PREVIOUS_VERSIONS_MAX: usize = 100;

/// Add `snapshot` to the metadata document as its current snapshot.
/// Iceberg v3 row lineage of a new manifest list: every data manifest
/// without a `first_row_id` (new ones, and kept ones of snapshots from
/// before the table was v3) gets the next range, as long as its added and
/// existing rows. Returns the table's next `next-row-id`.
fn assign_row_ids(listed: &mut [ManifestListEntry], first: i64) -> Result<i64> {
    crate::iceberg::manifest_list::assign_row_id_ranges(
        first,
        listed.iter_mut().filter(|e| e.content == 0).map(|e| {
            let rows = e.added_rows_count.max(0).saturating_add(e.existing_rows_count.max(0));
            (&mut e.first_row_id, rows)
        }),
    )
}

fn add_snapshot(
    doc: &mut serde_json::Map<String, Json>,
    snapshot: &Snapshot,
    manifest_list: &str,
    lineage: Option<(i64, i64)>,
) {
    let mut summary = serde_json::Map::new();
    summary.insert(
        "operation".into(),
        Json::from(crate::iceberg::json::iceberg_operation(snapshot)),
    );
    for (k, v) in snapshot.summary.iter() {
        summary.insert(k.clone(), Json::from(v.clone()));
    }
    let mut entry = serde_json::Map::new();
    entry.insert("snapshot-id".into(), json!(snapshot.snapshot_id));
    if let Some(parent) = snapshot.parent_snapshot_id {
        entry.insert("parent-snapshot-id".into(), json!(parent));
    }
    entry.insert("sequence-number".into(), json!(snapshot.sequence_number));
    entry.insert("timestamp-ms".into(), json!(snapshot.timestamp_ms));
    entry.insert("manifest-list".into(), json!(manifest_list));
    if let Some((first, added)) = lineage {
        entry.insert("first-row-id".into(), json!(first));
        entry.insert("added-rows".into(), json!(added));
    }
    entry.insert("summary".into(), Json::Object(summary));
    let schema_id = doc.get("current-schema-id").cloned().unwrap_or(json!(0));
    entry.insert("schema-id".into(), schema_id);
    push(doc, "snapshots", Json::Object(entry));
    doc.insert("current-snapshot-id".into(), json!(snapshot.snapshot_id));
    let refs = doc.entry("refs").or_insert_with(|| json!({}));
    if let Some(refs) = refs.as_object_mut() {
        let main = refs.entry("main").or_insert_with(|| json!({"type": "branch"}));
        if let Some(main) = main.as_object_mut() {
            main.insert("snapshot-id".into(), json!(snapshot.snapshot_id));
            main.entry("type").or_insert_with(|| json!("branch"));
        }
    }
    push(
        doc,
        "snapshot-log",
        json!({"timestamp-ms": snapshot.timestamp_ms, "snapshot-id": snapshot.snapshot_id}),
    );
    doc.insert("last-sequence-number".into(), json!(snapshot.sequence_number));
    doc.insert("last-updated-ms".into(), json!(snapshot.timestamp_ms));
}

/// The metadata file this one follows joins `metadata-log` (trimmed to
/// `write.metadata.previous-versions-max`).
fn log_metadata(doc: &mut serde_json::Map<String, Json>, md: &IcebergMetadata, previous_file: &str) {
    push(
        doc,
        "metadata-log",
        json!({"timestamp-ms": md.last_updated_ms, "metadata-file": previous_file}),
    );
    let max = md
        .properties
        .get("write.metadata.previous-versions-max")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(PREVIOUS_VERSIONS_MAX);
    if let Some(Json::Array(log)) = doc.get_mut("metadata-log") {
        let excess = log.len().saturating_sub(max);
        log.drain(..excess);
    }
}

fn push(doc: &mut serde_json::Map<String, Json>, key: &str, value: Json) {
    match doc.get_mut(key) {
        Some(Json::Array(items)) => items.push(value),
        _ => {
            doc.insert(key.to_string(), Json::Array(vec![value]));
        }
    }
}

/// The table in our shape, with Iceberg's high-water marks: sequence
/// numbers and column and partition field ids are never reused, even
/// those of expired snapshots and dropped columns.
fn shape(latest: &Latest) -> TableMetadata {
    let mut md = latest.built.table.metadata().clone();
    let raw = |key: &str| latest.raw.get(key).and_then(Json::as_i64);
    md.last_sequence_number = md.last_sequence_number.max(raw("last-sequence-number").unwrap_or(0));
    md.last_column_id = md.last_column_id.max(raw("last-column-id").unwrap_or(0) as i32);
    md.last_partition_id = md.last_partition_id.max(raw("last-partition-id").unwrap_or(0) as i32);
    md
}

#[async_trait]
impl ForeignCommits for IcebergCommits {
    async fn load(&self) -> Result<Versioned> {
        let latest = self.latest().await?;
        self.check_writable(&latest)?;
        Ok(Versioned {
            version: latest.version,
            metadata: shape(&latest).into(),
        })
    }

    async fn load_at(&self, version: u64) -> Result<Versioned> {
        match self.last_read() {
            Some(last) if last.version == version => {
                self.check_writable(&last)?;
                Ok(Versioned {
                    version,
                    metadata: shape(&last).into(),
                })
            }
            _ => self.load().await,
        }
    }

    async fn deleted_positions(&self, version: u64, files: &[PlannedFile]) -> Result<Vec<Option<Arc<[u64]>>>> {
        let Some(latest) = self.last_read().filter(|l| l.version == version) else {
            return Err(Error::CommitConflict {
                table: self.name.clone(),
                detail: format!("the table moved past version {version} while the statement was planned"),
            });
        };
        if latest.built.delete_manifests.is_empty() {
            return Ok(vec![None; files.len()]);
        }
        latest.built.table.deleted_positions(files).await
    }

    async fn commit(&self, apply: &mut Apply<'_>) -> Result<Versioned> {
        let mut backoff = Duration::from_millis(5);
        // The first attempt goes on top of the version read last (the one
        // the statement planned on, as a rule): the pointer's commit is
        // conditional, so a stale one only costs a retry on the latest.
        let mut cached = self.last_read();
        for _ in 0..COMMIT_RETRIES {
            let latest = match cached.take() {
                Some(last) => last,
                None => self.latest().await?,
            };
            self.check_writable(&latest)?;
            let next = apply(&shape(&latest))?;
            let mut written = Vec::new();
            let after = match self.next_file(&latest, &next, &mut written).await {
                Ok(after) => after,
                Err(e) => {
                    self.base.delete_quietly(written).await;
                    return Err(e);
                }
            };
            // A catalog that applies the commit writes the file itself.
            let bytes = if self.pointer.catalog_commits() {
                Vec::new()
            } else {
                serde_json::to_vec_pretty(&after)?
            };
            let current = Current {
                file: latest.file.clone(),
                version: latest.version,
            };
            let next_metadata = NextMetadata {
                before: &latest.raw,
                after: &after,
                bytes,
            };
            match self.pointer.commit(&self.base, &current, next_metadata).await {
                Ok(Some(committed)) if committed.version == latest.version + 1 => {
                    return Ok(Versioned {
                        version: committed.version,
                        metadata: next.into(),
                    });
                }
                // The catalog put the change on top of commits that won
                // meanwhile (an append through our REST server): the
                // version it wrote is what the table now is.
                Ok(Some(committed)) => {
                    let version = committed.version;
                    return match self.read(committed.file, version).await {
                        Ok(landed) => Ok(Versioned {
                            version,
                            metadata: shape(&landed).into(),
                        }),
                        Err(e) => Err(Error::CommitUnknown {
                            table: self.base.url(),
                            detail: format!(
                                "the catalog answered that the commit landed as version {version}, but reading that version back failed: {e}"
                            ),
                        }),
                    };
                }
                Ok(None) => {
                    self.base.delete_quietly(written).await;
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                }
                // The version may still land and reference what was written.
                Err(e @ Error::CommitUnknown { .. }) => return Err(e),
                Err(e) => {
                    self.base.delete_quietly(written).await;
                    return Err(e);
                }
            }
        }
        Err(Error::CommitConflict {
            table: self.base.url(),
            detail: format!("gave up after {COMMIT_RETRIES} attempts; other writers keep winning"),
        })
    }
}

/// The write side of an Iceberg table opened by its directory.
#[derive(Debug)]
struct IcebergWriter(Arc<IcebergCommits>);

#[async_trait]
impl ForeignWrites for IcebergWriter {
    fn commits(&self) -> Arc<dyn ForeignCommits> {
        Arc::clone(&self.0) as Arc<dyn ForeignCommits>
    }

    fn location(&self) -> TableLocation {
        self.0.location()
    }

    async fn newer_than(&self, version: u64) -> Result<Option<ForeignTable>> {
        let (file, latest) = self.0.latest_file().await?;
        if latest == version {
            return Ok(None);
        }
        let table = self.0.read(file, latest).await?.built.table.clone();
        Ok(Some(table.writable(self.0.writer(), latest)))
    }
}

/// The manifests of every version this table's writers read, by path.
#[derive(Debug, Default)]
struct WriterManifests {
    by_path: Mutex<HashMap<String, Arc<IcebergManifests>>>,
    /// The table's latest version read is format version 3.
    v3: std::sync::atomic::AtomicBool,
}

impl WriterManifests {
    fn add(&self, built: &Built) {
        self.v3
            .store(built.metadata.format_version >= 3, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut map) = self.by_path.lock() {
            for path in built.listed.keys() {
                map.insert(path.clone(), Arc::clone(&built.manifests));
            }
        }
    }
}

#[async_trait]
impl ManifestSource for WriterManifests {
    async fn read(
        &self,
        location: &TableLocation,
        manifest: &ManifestFile,
        spec: &TableSpec,
        columns: Option<&[String]>,
    ) -> Result<RecordBatch> {
        let source = self.by_path.lock().ok().and_then(|m| m.get(&manifest.path).cloned());
        let Some(source) = source else {
            return crate::format_err!(
                "manifest {} is not listed by any version of the Iceberg table read so far",
                manifest.path
            );
        };
        source.read(location, manifest, spec, columns).await
    }

    fn writes_iceberg_manifests(&self) -> bool {
        true
    }

    fn writes_iceberg_v3(&self) -> bool {
        self.v3.load(std::sync::atomic::Ordering::Relaxed)
    }
}
