//! Reading Apache Iceberg tables (format v1 and v2) through our planner.
//!
//! ```sql
//! CREATE EXTERNAL TABLE events STORED AS ICEBERG LOCATION '/data/events';
//! SELECT count(*) FROM events WHERE ts >= TIMESTAMP '2024-01-02 00:00:00';  -- pruned by day(ts)
//! SELECT * FROM "events@4758466641439356228";                              -- time travel
//! ```
//!
//! The steps, one file each (the format's encoding and decoding are
//! `crate::iceberg`'s; this module does the reading, the I/O and the rest):
//!
//! 1. `metadata.rs` — the current `*.metadata.json` (hint or highest number), parsed by `iceberg::metadata` (all schemas, specs, snapshots, refs);
//! 2. `iceberg::manifest_list_read` — the snapshot's manifests with their partition summaries;
//! 3. `iceberg::convert` — every Iceberg spec as one of our table specs (with the read schema), summaries in our form;
//! 4. `manifest.rs` — each data manifest (Avro) as one of our manifest batches, decoded when planning asks;
//! 5. `deletes.rs` — delete manifests, the scope rules, position and equality delete files.
//!
//! Data files are read by Parquet field id; files written without ids
//! (e.g. added with `add_files`) through the table's
//! `schema.name-mapping.default`.

pub mod adopt;
mod adopt_deletes;
pub mod commit;
pub mod deletes;
pub mod manifest;
pub mod metadata;
#[cfg(test)]
mod oracle;
pub mod pointer;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use object_store::ObjectStoreExt;
use object_store::path::Path;
use tokio::sync::OnceCell;

use self::deletes::DeleteIndex;
use self::manifest::IcebergManifests;
use self::metadata::{Rebase, current_metadata_file, location_url};
use super::deletes::FileDeletes;
use super::table::{FileColumns, ForeignReader, ForeignTable};
use crate::error::{Error, Result};
use crate::iceberg::convert::SpecMapping;
use crate::iceberg::manifest_list_read::{ManifestEntryFile, read_manifest_list};
use crate::iceberg::metadata::IcebergMetadata;
use crate::plan::files::PlannedFile;
use crate::provider::field_ids::FieldIdAdapterFactory;
use crate::spec::{ManifestFile, Schema, Snapshot, SnapshotRef, TableMetadata};
use crate::store::TableLocation;

/// Open the Iceberg table at `location`: its directory (the latest metadata
/// file is found) or one `*.metadata.json` file. `location.root` is the
/// path given; the table's root is derived from it.
pub async fn open(name: &str, location: TableLocation) -> Result<ForeignTable> {
    let opened_by_directory = !location.root.as_ref().ends_with(".metadata.json");
    let (table, file) = if location.root.as_ref().ends_with(".metadata.json") {
        let file = location.root.clone();
        let parts: Vec<_> = file.parts().collect();
        let keep = match parts.iter().rev().nth(1).map(|p| p.as_ref()) {
            Some("metadata") => parts.len().saturating_sub(2),
            _ => parts.len().saturating_sub(1),
        };
        let root = Path::from_iter(parts.into_iter().take(keep));
        let mut table = location.clone();
        table.root = root;
        (table, file)
    } else {
        let file = current_metadata_file(&location).await?;
        (location, file)
    };
    let built = read_metadata_file(name, &table, &file).await?;
    if !opened_by_directory {
        return Ok(built.table);
    }
    // Opened by its directory: the table follows the latest metadata file
    // and accepts writes (see `commit`).
    let Some(version) = file.filename().and_then(crate::iceberg::metadata::metadata_version) else {
        return Ok(built.table);
    };
    Ok(writable(
        name,
        table,
        built,
        Arc::new(pointer::DirectoryPointer),
        version,
    ))
}

/// Open the Iceberg table rooted at `table` whose current metadata file
/// `pointer` records (a catalog's): it follows the pointer and its commits
/// move it.
pub async fn open_with_pointer(
    name: &str,
    table: TableLocation,
    pointer: Arc<dyn pointer::MetadataPointer>,
) -> Result<ForeignTable> {
    let current = pointer.current(&table).await?;
    let built = read_metadata_file(name, &table, &current.file).await?;
    Ok(writable(name, table, built, pointer, current.version))
}

/// The table built from its metadata file `file`.
async fn read_metadata_file(name: &str, table: &TableLocation, file: &Path) -> Result<Built> {
    let url = location_url(table, file);
    let bytes = match table.store.get(file).await {
        Ok(r) => r.bytes().await?,
        Err(object_store::Error::NotFound { .. }) => {
            return Err(Error::Invalid(format!("Iceberg metadata file {url} does not exist")));
        }
        Err(e) => return Err(e.into()),
    };
    let md = IcebergMetadata::parse(&bytes, &url)?;
    build_parts(name, table.clone(), Arc::new(md), None).await
}

/// `built` accepting writes, committed through `pointer`.
fn writable(
    name: &str,
    table: TableLocation,
    built: Built,
    pointer: Arc<dyn pointer::MetadataPointer>,
    version: u64,
) -> ForeignTable {
    let commits = Arc::new(commit::IcebergCommits::new(
        name,
        table,
        &built.metadata.location,
        pointer,
    ));
    commits.adopt(&built);
    built.table.writable(commits.writer(), version)
}

/// A table built from one metadata file, and what a commit on top of it needs.
pub(crate) struct Built {
    pub table: ForeignTable,
    pub manifests: Arc<IcebergManifests>,
    /// The data manifests of the snapshot read, as its manifest list has them.
    pub listed: HashMap<String, ManifestEntryFile>,
    pub delete_manifests: Vec<ManifestEntryFile>,
    pub metadata: Arc<IcebergMetadata>,
}

async fn build(
    name: &str,
    base: TableLocation,
    md: Arc<IcebergMetadata>,
    snapshot: Option<i64>,
) -> Result<ForeignTable> {
    Ok(build_parts(name, base, md, snapshot).await?.table)
}

/// The table as of `snapshot` (the current one when `None`; time travel
/// reads a snapshot with the schema it was written with).
pub(crate) async fn build_parts(
    name: &str,
    base: TableLocation,
    md: Arc<IcebergMetadata>,
    snapshot: Option<i64>,
) -> Result<Built> {
    let chosen = match snapshot {
        Some(id) => Some(
            md.snapshot(id)
                .ok_or_else(|| Error::Invalid(format!("Iceberg table {name} has no snapshot {id}")))?,
        ),
        None => match md.current_snapshot_id {
            Some(id) => Some(md.snapshot(id).ok_or_else(|| {
                Error::Format(format!(
                    "Iceberg table {name}: current snapshot {id} is not among its snapshots"
                ))
            })?),
            None => None,
        },
    };
    let (_, schema) = if snapshot.is_some() {
        md.schema_for(chosen)
    } else {
        md.schema_for(None)
    };
    let schema = schema.clone();
    let rebase = Rebase::new(&md.location);
    let specs: HashMap<i32, SpecMapping> = md
        .specs
        .iter()
        .map(|s| (s.spec_id, SpecMapping::new(s, &schema)))
        .collect();
    let mut listed_data = HashMap::new();
    let mut data_manifests = Vec::new();
    let mut delete_manifests = Vec::new();
    if let Some(snap) = chosen {
        let path = rebase.resolve(&base, &snap.manifest_list)?;
        let bytes = match base.store.get(&path).await {
            Ok(r) => r.bytes().await?,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(Error::Invalid(format!(
                    "Iceberg table {name}: the manifest list {} of snapshot {} does not exist",
                    snap.manifest_list, snap.snapshot_id
                )));
            }
            Err(e) => return Err(e.into()),
        };
        for m in read_manifest_list(&bytes, &snap.manifest_list)? {
            let Some(mapping) = specs.get(&m.spec_id) else {
                return Err(Error::Format(format!(
                    "Iceberg table {name}: manifest {} uses partition spec {}, which the metadata does not have",
                    m.path, m.spec_id
                )));
            };
            if m.content != 0 {
                delete_manifests.push(m);
                continue;
            }
            let stored = rebase.stored(&m.path)?;
            data_manifests.push(ManifestFile {
                path: stored.clone(),
                length: m.length.max(0) as u64,
                spec_id: m.spec_id,
                added_snapshot_id: m.added_snapshot_id,
                file_count: m.files.unwrap_or(0).max(0) as u64,
                record_count: m.rows.unwrap_or(0).max(0) as u64,
                partitions: mapping.summaries(m.partitions.as_deref()),
                iceberg: None,
                content: crate::spec::ManifestContent::Data,
            });
            listed_data.insert(stored, m);
        }
    }
    let metadata = our_metadata(&md, &schema, &specs, chosen.map(|s| s.snapshot_id), data_manifests)?;
    let listed = listed_data.clone();
    let manifests = Arc::new(IcebergManifests::new(rebase, listed_data, specs));
    let names = crate::provider::field_ids::iceberg_name_mapping(&md.properties);
    let adapter = FieldIdAdapterFactory::new(&schema).with_name_mapping(names, format!("Iceberg table {name}"));
    let reader = Arc::new(IcebergReader {
        base: base.clone(),
        metadata: Arc::clone(&md),
        manifests: Arc::clone(&manifests),
        delete_manifests: delete_manifests.clone(),
        deletes: OnceCell::new(),
        schema,
        columns: FileColumns {
            adapter: Arc::new(adapter),
            constants: Vec::new(),
        },
    });
    let location = base.with_manifest_source(Arc::clone(&manifests) as _);
    Ok(Built {
        table: ForeignTable::try_new(name, location, metadata, reader)?,
        manifests,
        listed,
        delete_manifests,
        metadata: md,
    })
}

/// The table in our shape; only the snapshot read lists its manifests.
fn our_metadata(
    md: &IcebergMetadata,
    schema: &Schema,
    specs: &HashMap<i32, SpecMapping>,
    snapshot: Option<i64>,
    manifests: Vec<ManifestFile>,
) -> Result<TableMetadata> {
    let mut table_specs: Vec<_> = specs.values().map(|m| m.spec.clone()).collect();
    table_specs.sort_by_key(|s| s.spec_id);
    let current_spec_id = if specs.contains_key(&md.default_spec_id) {
        md.default_spec_id
    } else {
        table_specs.first().map(|s| s.spec_id).unwrap_or(0)
    };
    if table_specs.is_empty() {
        table_specs.push(crate::spec::TableSpec::new(
            current_spec_id,
            schema.clone(),
            Default::default(),
        ));
    }
    let mut manifests = Some(manifests);
    let snapshots = md
        .snapshots
        .iter()
        .map(|s| {
            let mut summary = s.summary.clone();
            let operation = summary.remove("operation").unwrap_or_default();
            Snapshot {
                snapshot_id: s.snapshot_id,
                parent_snapshot_id: s.parent_snapshot_id,
                sequence_number: s.sequence_number,
                timestamp_ms: s.timestamp_ms,
                operation,
                summary: summary.into(),
                manifests: if Some(s.snapshot_id) == snapshot {
                    manifests.take().map(Arc::new)
                } else {
                    None
                },
                manifests_file: None,
                table_spec_id: None,
                manifest_list: None,
                first_row_id: None,
                added_rows: None,
            }
        })
        .collect();
    let refs: BTreeMap<String, SnapshotRef> = md
        .refs
        .iter()
        .map(|(name, (id, kind))| {
            (
                name.clone(),
                SnapshotRef {
                    snapshot_id: *id,
                    kind: kind.clone(),
                },
            )
        })
        .collect();
    let mut converted = TableMetadata {
        format_version: crate::spec::metadata::FORMAT_VERSION,
        // Read-only here: never written, never cleaned by us.
        file_prefix: None,
        created_ms: None,
        snapshot_log: Vec::new(),
        location: None,
        metadata_log: Vec::new(),
        next_row_id: None,
        sort_orders: md.sort_orders.clone(),
        default_sort_order_id: md.default_sort_order_id,
        table_uuid: md.table_uuid.clone(),
        last_updated_ms: md.last_updated_ms,
        last_sequence_number: md.snapshots.iter().map(|s| s.sequence_number).max().unwrap_or(0),
        last_column_id: schema.highest_field_id(),
        last_partition_id: table_specs
            .iter()
            .map(|s| s.partition_spec.highest_field_id())
            .max()
            .unwrap_or(999),
        current_spec_id,
        table_specs,
        current_snapshot_id: snapshot,
        snapshots,
        properties: md.properties.clone(),
        refs,
    };
    // An order over columns this schema lacks is not followed.
    let followable = match (converted.sort_order(), converted.current_spec()) {
        (Some(order), Ok(spec)) => order.check(&spec.schema).is_ok(),
        _ => true,
    };
    if !followable {
        converted.default_sort_order_id = None;
    }
    Ok(converted)
}

#[derive(Debug)]
struct IcebergReader {
    base: TableLocation,
    metadata: Arc<IcebergMetadata>,
    manifests: Arc<IcebergManifests>,
    delete_manifests: Vec<ManifestEntryFile>,
    deletes: OnceCell<DeleteIndex>,
    schema: Schema,
    columns: FileColumns,
}

#[async_trait]
impl ForeignReader for IcebergReader {
    fn format(&self) -> &'static str {
        "Iceberg"
    }

    fn file_columns(&self) -> &FileColumns {
        &self.columns
    }

    fn identifier_columns(&self) -> Vec<String> {
        let ids = self.metadata.identifier_field_ids.get(&self.metadata.current_schema_id);
        ids.into_iter()
            .flatten()
            .filter_map(|id| self.schema.field_by_id(*id).map(|f| f.name.clone()))
            .collect()
    }

    fn manifests_are_files(&self) -> bool {
        true
    }

    fn delete_manifests(&self) -> Result<Vec<ManifestFile>> {
        let rebase = self.manifests.rebase();
        self.delete_manifests
            .iter()
            .map(|m| {
                Ok(ManifestFile {
                    path: rebase.stored(&m.path)?,
                    length: m.length.max(0) as u64,
                    spec_id: m.spec_id,
                    added_snapshot_id: m.added_snapshot_id,
                    file_count: m.files.unwrap_or(0).max(0) as u64,
                    record_count: m.rows.unwrap_or(0).max(0) as u64,
                    partitions: Vec::new(),
                    iceberg: None,
                    content: crate::spec::ManifestContent::Deletes,
                })
            })
            .collect()
    }

    async fn deletes(&self, location: &TableLocation, files: &[PlannedFile]) -> Result<Vec<FileDeletes>> {
        if self.delete_manifests.is_empty() {
            return Ok(vec![FileDeletes::default(); files.len()]);
        }
        let index = self
            .deletes
            .get_or_try_init(|| DeleteIndex::load(&self.manifests, location, &self.delete_manifests))
            .await?;
        if index.is_empty() {
            return Ok(vec![FileDeletes::default(); files.len()]);
        }
        let infos = self.manifests.file_infos(location)?;
        let selected: Vec<_> = files.iter().map(|f| infos.get(&f.path)).collect();
        index.deletes_for(location, &self.schema, &selected).await
    }

    async fn at(&self, name: &str, selector: &str) -> Result<ForeignTable> {
        let md = &self.metadata;
        let id = if let Ok(id) = selector.parse::<i64>() {
            id
        } else if let Some((id, _)) = md.refs.get(selector) {
            *id
        } else {
            let ts = crate::formats::parse_timestamp_ms(selector).ok_or_else(|| {
                Error::Invalid(format!(
                    "cannot read {selector:?} as a snapshot id, a branch or tag of Iceberg table {name}, or a timestamp (e.g. 2024-05-01T12:00:00Z)"
                ))
            })?;
            md.snapshots
                .iter()
                .filter(|s| s.timestamp_ms <= ts)
                .max_by_key(|s| (s.timestamp_ms, s.sequence_number))
                .map(|s| s.snapshot_id)
                .ok_or_else(|| {
                    Error::Invalid(format!("Iceberg table {name} has no snapshot at or before {selector}"))
                })?
        };
        build(name, self.base.clone(), Arc::clone(md), Some(id)).await
    }
}
