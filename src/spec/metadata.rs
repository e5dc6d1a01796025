//! Table metadata: the JSON document committed as `metadata/v<N>.metadata.json`.
//!
//! One version of the table: its table specs, the current spec, and the
//! snapshots. The current snapshot lists the manifests that make up the
//! table inline; an older one keeps its list in a file of its own
//! (`manifests-file`, written once when the snapshot stopped being
//! current), so a version grows by a few hundred bytes per commit instead
//! of by the whole table's manifests. See `docs/FORMAT.md` for an example.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::partition::PartitionSpec;
use super::schema::Schema;
use super::sort_order::SortOrder;
use super::table_spec::TableSpec;
use crate::error::Result;

/// The format version this crate writes: an Iceberg v2 metadata file with
/// our own fields beside Iceberg's (see `iceberg::json`).
pub const FORMAT_VERSION: u32 = 2;

/// The Iceberg format version of tables with a column type only v3 has
/// (VARIANT, nanosecond timestamps): with row lineage (`next-row-id`).
pub const ICEBERG_V3: u32 = 3;

/// Tables written before their metadata was also Iceberg metadata; read,
/// and written in this form until every snapshot has a manifest list.
pub const LEGACY_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableMetadata {
    #[serde(rename = "format-version")]
    pub format_version: u32,
    #[serde(rename = "table-uuid")]
    pub table_uuid: String,
    #[serde(rename = "last-updated-ms")]
    pub last_updated_ms: i64,
    #[serde(rename = "last-sequence-number")]
    pub last_sequence_number: i64,
    #[serde(rename = "last-column-id")]
    pub last_column_id: i32,
    #[serde(rename = "last-partition-id")]
    pub last_partition_id: i32,
    #[serde(rename = "current-spec-id")]
    pub current_spec_id: i32,
    #[serde(rename = "table-specs")]
    pub table_specs: Vec<TableSpec>,
    #[serde(rename = "current-snapshot-id")]
    pub current_snapshot_id: Option<i64>,
    #[serde(default)]
    pub snapshots: Vec<Snapshot>,
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
    /// Named snapshots (tags): `"t@<tag>"` reads the table as of the tag's
    /// snapshot, and snapshot expiry keeps tagged snapshots.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub refs: BTreeMap<String, SnapshotRef>,
    /// Iceberg's sort orders (see `spec::sort_order`); empty for a table
    /// that never had one (the unsorted order 0 is written for it).
    #[serde(rename = "sort-orders", default, skip_serializing_if = "Vec::is_empty")]
    pub sort_orders: Vec<SortOrder>,
    /// The order writers follow; `None` or 0: unsorted.
    #[serde(rename = "default-sort-order-id", default, skip_serializing_if = "Option::is_none")]
    pub default_sort_order_id: Option<i32>,
    /// The start of every data file and manifest name this table's writers
    /// produce (`<prefix>-<uuid>.parquet`, `<prefix>-<uuid>-m.parquet`), so
    /// orphan removal can tell them from look-alikes. Absent in tables
    /// created before it was recorded.
    #[serde(rename = "file-prefix", default, skip_serializing_if = "Option::is_none")]
    pub file_prefix: Option<String>,
    /// When the table was created (ms since the epoch): nothing older is its
    /// file. Absent in tables created before it was recorded.
    #[serde(rename = "created-ms", default, skip_serializing_if = "Option::is_none")]
    pub created_ms: Option<i64>,
    /// Every time the current snapshot changed, in commit order: which
    /// snapshot became current when. Entries stay when their snapshot is
    /// expired, so time travel into that period is an error, not an older
    /// snapshot. Absent (empty) in tables written before it was recorded.
    #[serde(rename = "snapshot-log", default, skip_serializing_if = "Vec::is_empty")]
    pub snapshot_log: Vec<SnapshotLogEntry>,
    /// The table's absolute location as Iceberg readers see it (a path for
    /// local tables, a URL otherwise), set at each commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The previous metadata files (Iceberg's `metadata-log`), oldest first.
    #[serde(rename = "metadata-log", default, skip_serializing_if = "Vec::is_empty")]
    pub metadata_log: Vec<MetadataLogEntry>,
    /// Iceberg v3 row lineage: higher than every row id assigned so far.
    /// Set once the table is an Iceberg v3 table (a column type only v3
    /// has), and from then on it stays v3.
    #[serde(rename = "next-row-id", default, skip_serializing_if = "Option::is_none")]
    pub next_row_id: Option<i64>,
}

/// One earlier metadata file of the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetadataLogEntry {
    #[serde(rename = "timestamp-ms")]
    pub timestamp_ms: i64,
    #[serde(rename = "metadata-file")]
    pub metadata_file: String,
}

/// One change of the current snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotLogEntry {
    #[serde(rename = "timestamp-ms")]
    pub timestamp_ms: i64,
    #[serde(rename = "snapshot-id")]
    pub snapshot_id: i64,
}

/// The file-name prefix of a table with id `table_uuid`: the uuid's first
/// group (8 lower-case hex digits), so that every handle bound to the table
/// names files alike without reading its metadata.
pub fn file_prefix_of(table_uuid: &str) -> String {
    let head = table_uuid.split('-').next().unwrap_or_default();
    if head.len() == 8 && head.bytes().all(|b| b.is_ascii_hexdigit()) {
        head.to_ascii_lowercase()
    } else {
        // Not a v4 uuid as we write them (a foreign table's): hex of its hash.
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        table_uuid.hash(&mut h);
        format!("{:08x}", h.finish() as u32)
    }
}

/// A named reference to a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotRef {
    #[serde(rename = "snapshot-id")]
    pub snapshot_id: i64,
    /// Always `tag` (branches are not supported).
    #[serde(rename = "type")]
    pub kind: String,
}

/// The table's state after one commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    #[serde(rename = "snapshot-id")]
    pub snapshot_id: i64,
    #[serde(rename = "parent-snapshot-id")]
    pub parent_snapshot_id: Option<i64>,
    #[serde(rename = "sequence-number")]
    pub sequence_number: i64,
    #[serde(rename = "timestamp-ms")]
    pub timestamp_ms: i64,
    pub operation: String,
    /// Shared between copies of the metadata (a commit copies every
    /// snapshot; a summary is a dozen strings): changed with `Arc::make_mut`.
    #[serde(default, with = "shared_map")]
    pub summary: Arc<BTreeMap<String, String>>,
    /// All manifests of the table at this snapshot; `None` while they are
    /// in `manifests-file` and not loaded (see [`Snapshot::manifests`]).
    /// Shared like `summary`: a snapshot's list is copied into every read
    /// of it (hundreds of entries), and changed only by commits.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "shared_list")]
    pub manifests: Option<Manifests>,
    /// The file that lists this snapshot's manifests (relative to the table
    /// location, as stored), once it is not the current snapshot.
    #[serde(rename = "manifests-file", default, skip_serializing_if = "Option::is_none")]
    pub manifests_file: Option<String>,
    /// The table spec that was current when the snapshot was committed: time
    /// travel reads the snapshot with its schema. Absent in tables written
    /// before it was recorded (then the current spec is used).
    #[serde(rename = "table-spec-id", default, skip_serializing_if = "Option::is_none")]
    pub table_spec_id: Option<i32>,
    /// The snapshot's Iceberg manifest list (Avro, absolute path), written
    /// with the commit. Absent in snapshots of legacy tables.
    #[serde(rename = "manifest-list", default, skip_serializing_if = "Option::is_none")]
    pub manifest_list: Option<String>,
    /// Iceberg v3 row lineage: the first row id this snapshot assigned and
    /// how many it assigned (set with its manifest list in v3 tables).
    #[serde(rename = "first-row-id", default, skip_serializing_if = "Option::is_none")]
    pub first_row_id: Option<i64>,
    #[serde(rename = "added-rows", default, skip_serializing_if = "Option::is_none")]
    pub added_rows: Option<i64>,
}

/// A snapshot's manifests, shared between copies of the metadata.
pub type Manifests = Arc<Vec<ManifestFile>>;

/// (De)serializes a shared manifest list as the list itself.
mod shared_list {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{ManifestFile, Manifests};

    pub fn serialize<S: Serializer>(list: &Option<Manifests>, s: S) -> Result<S::Ok, S::Error> {
        list.as_deref().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Manifests>, D::Error> {
        Option::<Vec<ManifestFile>>::deserialize(d).map(|l| l.map(Arc::new))
    }
}

/// (De)serializes an `Arc`-shared map as the map itself.
mod shared_map {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(map: &Arc<BTreeMap<String, String>>, s: S) -> Result<S::Ok, S::Error> {
        map.as_ref().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<BTreeMap<String, String>>, D::Error> {
        BTreeMap::deserialize(d).map(Arc::new)
    }
}

/// A manifest as listed in a snapshot, with a summary for pruning whole manifests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Path relative to the table location, as stored (URI-encoded form).
    pub path: String,
    pub length: u64,
    /// The table spec all files in this manifest were written with.
    #[serde(rename = "spec-id")]
    pub spec_id: i32,
    #[serde(rename = "added-snapshot-id")]
    pub added_snapshot_id: i64,
    #[serde(rename = "file-count")]
    pub file_count: u64,
    #[serde(rename = "record-count")]
    pub record_count: u64,
    /// One summary per partition field of the spec, in spec order.
    #[serde(default)]
    pub partitions: Vec<FieldSummary>,
    /// The manifest's Iceberg twin (Avro), listing the same files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iceberg: Option<IcebergManifest>,
    /// What its files are: data (omitted) or position deletes (`1`, Iceberg's content id).
    #[serde(default, skip_serializing_if = "ManifestContent::is_data")]
    pub content: ManifestContent,
}

/// What the files of a manifest hold (Iceberg's manifest `content`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "i32", try_from = "i32")]
pub enum ManifestContent {
    /// Data files (`0`).
    #[default]
    Data,
    /// Position delete files (`1`): rows of data files that are gone.
    Deletes,
}

impl ManifestContent {
    pub fn is_data(&self) -> bool {
        *self == Self::Data
    }

    /// Iceberg's id of the content kind.
    pub fn id(self) -> i32 {
        match self {
            Self::Data => 0,
            Self::Deletes => 1,
        }
    }
}

impl From<ManifestContent> for i32 {
    fn from(c: ManifestContent) -> i32 {
        c.id()
    }
}

impl TryFrom<i32> for ManifestContent {
    type Error = String;
    fn try_from(v: i32) -> std::result::Result<Self, String> {
        match v {
            0 => Ok(Self::Data),
            1 => Ok(Self::Deletes),
            other => Err(format!(
                "manifest content {other} is not supported (0: data, 1: position deletes)"
            )),
        }
    }
}

/// The Avro manifest an Iceberg reader reads in place of a manifest of ours.
///
/// Its entries are either ADDED (written with the files; snapshot id and
/// sequence number inherited from the manifest list, so a retried commit
/// needs no rewrite) or EXISTING (survivors of a replaced manifest; both
/// written explicitly, `files-*` here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IcebergManifest {
    /// Relative to the table location, as stored (URI-encoded form).
    pub path: String,
    pub length: u64,
    /// The sequence number of the snapshot that added the manifest; `None`
    /// until the commit assigns it.
    #[serde(rename = "sequence-number", default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<i64>,
    /// For EXISTING entries: the snapshot that added the files and their
    /// data sequence number. `None` for ADDED entries.
    #[serde(rename = "files-snapshot-id", default, skip_serializing_if = "Option::is_none")]
    pub files_snapshot_id: Option<i64>,
    #[serde(rename = "files-sequence-number", default, skip_serializing_if = "Option::is_none")]
    pub files_sequence_number: Option<i64>,
    /// Iceberg v3: the row id of the first row of its first file without a
    /// row id of its own, assigned by the first manifest list that lists it.
    #[serde(rename = "first-row-id", default, skip_serializing_if = "Option::is_none")]
    pub first_row_id: Option<i64>,
}

impl Snapshot {
    /// The manifests of this snapshot; an error when they are kept in their
    /// own file and were not loaded (`TableLocation::load_manifests`).
    pub fn manifests(&self) -> Result<&[ManifestFile]> {
        match &self.manifests {
            Some(m) => Ok(m),
            None => Err(self.not_loaded()),
        }
    }

    /// [`Self::manifests`], to change them.
    pub fn manifests_mut(&mut self) -> Result<&mut Vec<ManifestFile>> {
        let id = self.snapshot_id;
        let file = self.manifests_file.clone();
        self.manifests
            .as_mut()
            .map(Arc::make_mut)
            .ok_or_else(|| not_loaded(id, file.as_deref()))
    }

    /// Whether its manifests are in memory.
    pub fn is_loaded(&self) -> bool {
        self.manifests.is_some()
    }

    fn not_loaded(&self) -> crate::error::Error {
        not_loaded(self.snapshot_id, self.manifests_file.as_deref())
    }
}

fn not_loaded(id: i64, file: Option<&str>) -> crate::error::Error {
    crate::error::Error::Format(match file {
        Some(file) => format!("the manifests of snapshot {id} (in {file}) were not loaded"),
        None => format!(
            "snapshot {id} has no manifests in this metadata (a snapshot of a foreign table other than the one read)"
        ),
    })
}

impl ManifestFile {
    /// Whether it lists position delete files.
    pub fn is_deletes(&self) -> bool {
        self.content == ManifestContent::Deletes
    }

    /// The stored paths of the manifest and of its Iceberg twin.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.iceberg.as_ref().map(|t| t.path.as_str()))
    }
}

impl IcebergManifest {
    /// Whether its entries are ADDED (inheriting snapshot and sequence number).
    pub fn added(&self) -> bool {
        self.files_snapshot_id.is_none()
    }
}

/// Bounds of one partition field over a manifest's files (summary bounds,
/// `values::serialize_bound`: an empty string or binary is `""`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldSummary {
    #[serde(rename = "contains-null")]
    pub contains_null: bool,
    #[serde(rename = "contains-nan", default)]
    pub contains_nan: bool,
    #[serde(rename = "lower-bound")]
    pub lower_bound: Option<String>,
    #[serde(rename = "upper-bound")]
    pub upper_bound: Option<String>,
    /// Bounds are given whenever a value other than null or NaN is present,
    /// an empty one too. Summaries written without this flag left the bounds
    /// out when an empty string or binary was among the values, so a missing
    /// bound there does not prove the values are all null.
    #[serde(rename = "empty-bounds", default, skip_serializing_if = "std::ops::Not::not")]
    pub empty_bounds: bool,
}

impl FieldSummary {
    /// Whether the bounds may have been left out although a value other
    /// than null or NaN is present (see `empty_bounds`).
    pub fn bounds_may_be_missing(&self) -> bool {
        !self.empty_bounds && self.lower_bound.is_none() && self.contains_null
    }
}

impl TableMetadata {
    /// The first metadata version of a table with `schema` (field ids as
    /// given) and `partition_spec`: no snapshot, no property, a new uuid.
    pub fn new(schema: Schema, partition_spec: PartitionSpec) -> Result<TableMetadata> {
        partition_spec.validate(&schema)?;
        let last_partition_id = partition_spec.highest_field_id();
        let table_uuid = uuid::Uuid::new_v4().to_string();
        let now = chrono::Utc::now().timestamp_millis();
        Ok(TableMetadata {
            format_version: FORMAT_VERSION,
            file_prefix: Some(file_prefix_of(&table_uuid)),
            created_ms: Some(now),
            snapshot_log: Vec::new(),
            location: None,
            metadata_log: Vec::new(),
            next_row_id: None,
            table_uuid,
            last_updated_ms: now,
            last_sequence_number: 0,
            last_column_id: schema.highest_field_id(),
            last_partition_id,
            current_spec_id: 0,
            table_specs: vec![TableSpec::new(0, schema, partition_spec)],
            current_snapshot_id: None,
            snapshots: Vec::new(),
            properties: BTreeMap::new(),
            refs: BTreeMap::new(),
            sort_orders: Vec::new(),
            default_sort_order_id: None,
        })
    }

    /// The order writers follow, `None` when the table is unsorted.
    pub fn sort_order(&self) -> Option<&SortOrder> {
        let id = self.default_sort_order_id?;
        self.sort_orders.iter().find(|o| o.order_id == id && !o.is_unsorted())
    }

    pub fn spec(&self, spec_id: i32) -> Result<&TableSpec> {
        self.table_specs
            .iter()
            .find(|s| s.spec_id == spec_id)
            .ok_or_else(|| crate::error::Error::Format(format!("table spec {spec_id} is not in the table metadata")))
    }

    pub fn current_spec(&self) -> Result<&TableSpec> {
        self.spec(self.current_spec_id)
    }

    /// Make (`schema`, `partition_spec`) the current table spec: an
    /// existing one with both, or a new one whose Iceberg ids are those of
    /// an equal schema and partition spec the table already has (fresh ones
    /// otherwise), as Iceberg keeps a spec's id across schema changes.
    /// Returns the table spec's id.
    pub fn use_table_spec(&mut self, schema: Schema, partition_spec: PartitionSpec) -> i32 {
        let spec_id = self.add_table_spec(schema, partition_spec);
        self.current_spec_id = spec_id;
        spec_id
    }

    /// The id of the table spec of (`schema`, `partition_spec`): an existing
    /// one, or a new one (not current) with the Iceberg ids `use_table_spec`
    /// gives.
    pub fn add_table_spec(&mut self, schema: Schema, partition_spec: PartitionSpec) -> i32 {
        if let Some(existing) = self
            .table_specs
            .iter()
            .find(|s| s.schema == schema && s.partition_spec == partition_spec)
        {
            return existing.spec_id;
        }
        let fresh = |ids: &mut dyn Iterator<Item = i32>| ids.max().map_or(0, |m| m + 1);
        let schema_id = match self.table_specs.iter().find(|s| s.schema == schema) {
            Some(s) => s.schema_id(),
            None => fresh(&mut self.table_specs.iter().map(TableSpec::schema_id)),
        };
        let iceberg_spec_id = match self.table_specs.iter().find(|s| s.partition_spec == partition_spec) {
            Some(s) => s.partition_spec_id(),
            None => fresh(&mut self.table_specs.iter().map(TableSpec::partition_spec_id)),
        };
        let spec_id = fresh(&mut self.table_specs.iter().map(|s| s.spec_id));
        self.table_specs.push(TableSpec {
            spec_id,
            schema,
            partition_spec,
            iceberg_schema_id: Some(schema_id),
            iceberg_spec_id: Some(iceberg_spec_id),
        });
        spec_id
    }

    /// The table spec whose schema has Iceberg id `schema_id`: the current
    /// one if it does, else the newest that does.
    pub fn spec_of_schema(&self, schema_id: i32) -> Option<&TableSpec> {
        self.iceberg_match(|s| s.schema_id() == schema_id)
    }

    /// The table spec whose partition spec has Iceberg id `spec_id`: the
    /// current one if it does, else the newest that does.
    pub fn spec_of_partition_spec(&self, spec_id: i32) -> Option<&TableSpec> {
        self.iceberg_match(|s| s.partition_spec_id() == spec_id)
    }

    fn iceberg_match(&self, matches: impl Fn(&TableSpec) -> bool) -> Option<&TableSpec> {
        match self.current_spec() {
            Ok(current) if matches(current) => Some(current),
            _ => self.table_specs.iter().rev().find(|s| matches(s)),
        }
    }

    /// A copy holding the snapshots `keep` selects and no logs: what a
    /// reader of a few snapshots needs, without copying a long history.
    pub fn with_snapshots(&self, keep: impl Fn(&Snapshot) -> bool) -> TableMetadata {
        TableMetadata {
            format_version: self.format_version,
            table_uuid: self.table_uuid.clone(),
            last_updated_ms: self.last_updated_ms,
            last_sequence_number: self.last_sequence_number,
            last_column_id: self.last_column_id,
            last_partition_id: self.last_partition_id,
            current_spec_id: self.current_spec_id,
            table_specs: self.table_specs.clone(),
            current_snapshot_id: self.current_snapshot_id,
            snapshots: self.snapshots.iter().filter(|s| keep(s)).cloned().collect(),
            properties: self.properties.clone(),
            refs: self.refs.clone(),
            file_prefix: self.file_prefix.clone(),
            created_ms: self.created_ms,
            snapshot_log: Vec::new(),
            location: self.location.clone(),
            metadata_log: Vec::new(),
            next_row_id: self.next_row_id,
            sort_orders: self.sort_orders.clone(),
            default_sort_order_id: self.default_sort_order_id,
        }
    }

    pub fn current_snapshot(&self) -> Option<&Snapshot> {
        let id = self.current_snapshot_id?;
        self.snapshots.iter().find(|s| s.snapshot_id == id)
    }

    pub fn snapshot(&self, id: i64) -> Option<&Snapshot> {
        self.snapshots.iter().find(|s| s.snapshot_id == id)
    }

    /// The manifests of the current snapshot (none without one). The
    /// current snapshot's are always in memory: they are written inline.
    pub fn current_manifests(&self) -> Result<&[ManifestFile]> {
        match self.current_snapshot() {
            Some(s) => s.manifests(),
            None => Ok(&[]),
        }
    }

    /// Make snapshot `id` the current one as of `timestamp_ms`, and log it.
    pub fn set_current_snapshot(&mut self, id: i64, timestamp_ms: i64) {
        self.current_snapshot_id = Some(id);
        self.snapshot_log.push(SnapshotLogEntry {
            timestamp_ms,
            snapshot_id: id,
        });
    }

    /// Collapse each run of log entries whose snapshots are gone into its
    /// first entry (after `expire_snapshots`): the periods of live snapshots
    /// stay exact, and the log grows with live snapshots only.
    pub fn compact_snapshot_log(&mut self) {
        let live: std::collections::HashSet<i64> = self.snapshots.iter().map(|s| s.snapshot_id).collect();
        let mut previous_gone = false;
        self.snapshot_log.retain(|e| {
            let gone = !live.contains(&e.snapshot_id);
            let keep = !(gone && previous_gone);
            previous_gone = gone;
            keep
        });
    }
}
