//! A table: its location and the operations that change it.
//!
//! Every change is one commit of a new metadata version (see
//! [`crate::store::commit`]): data and manifest files are written first under
//! fresh names, then the metadata version that references them. A failure
//! before the commit leaves the table exactly as it was.

pub mod change;
pub mod changes;
pub mod clustering;
pub mod creation;
pub mod delete;
pub mod encodings;
pub mod evolve;
pub mod expire;
pub mod foreign;
pub mod iceberg_commit;
pub mod merge;
pub mod optimize;
pub mod orphans;
pub mod overwrite;
pub mod position_deletes;
pub mod properties;
pub mod purge;
pub mod retry;
pub mod rewrite;
pub mod show_create;
pub mod sort_order;
pub mod source;
pub mod tags;
pub mod time_travel;
pub mod update;
pub mod writer;

use std::collections::BTreeMap;

use chrono::Utc;
use datafusion::arrow::datatypes::Schema as ArrowSchema;

use crate::error::{Error, Result};
use crate::manifest::{DataFile, write_manifest};
use crate::spec::partition::FIRST_PARTITION_FIELD_ID;
use crate::spec::{ManifestFile, PartitionField, PartitionSpec, Schema, Snapshot, TableMetadata, TableSpec};
use crate::store::{TableLocation, Versioned};
use crate::transform::Transform;

pub use evolve::{FieldRef, PartitionChange};
pub use writer::PartitionedWriter;

/// A partition field as the user declares it: transform of a named column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionFieldDef {
    pub source: String,
    pub transform: Transform,
    pub name: Option<String>,
}

/// A table at a location.
#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub location: TableLocation,
    /// The `table-uuid` this handle was loaded with: commits through it fail
    /// once another table (or a tombstone) has taken the location's chain.
    uuid: Option<String>,
    /// Set for a table of another format (see [`foreign`]): its versions are
    /// loaded and committed by that format.
    foreign: Option<std::sync::Arc<dyn foreign::ForeignCommits>>,
}

fn new_id() -> i64 {
    (uuid::Uuid::new_v4().as_u64_pair().0 & (i64::MAX as u64)) as i64
}

impl Table {
    pub fn new(name: impl Into<String>, location: TableLocation) -> Self {
        Self {
            name: name.into(),
            location,
            uuid: None,
            foreign: None,
        }
    }

    /// A table of another format, bound to `uuid`, committed through `commits`.
    pub fn foreign(
        name: impl Into<String>,
        location: TableLocation,
        uuid: &str,
        commits: std::sync::Arc<dyn foreign::ForeignCommits>,
    ) -> Self {
        Self {
            name: name.into(),
            location,
            uuid: Some(uuid.to_string()),
            foreign: Some(commits),
        }
    }

    /// Whether another format owns this table's metadata.
    pub fn is_foreign(&self) -> bool {
        self.foreign.is_some()
    }

    /// For a table of another format: give `files` (planned on `version`)
    /// the rows its own delete files delete, with the deletes they have.
    pub async fn apply_format_deletes(
        &self,
        version: u64,
        files: &mut [crate::plan::files::PlannedFile],
    ) -> Result<()> {
        let Some(commits) = &self.foreign else {
            return Ok(());
        };
        let found = commits.deleted_positions(version, files).await?;
        for (file, deleted) in files.iter_mut().zip(found) {
            if let Some(deleted) = deleted {
                file.deletes = Some(match file.deletes.take() {
                    Some(ours) => crate::manifest::deletes::merge(&[ours, deleted]),
                    None => deleted,
                });
            }
        }
        Ok(())
    }

    /// This handle, bound to the table with `uuid` (see [`Table::uuid`]).
    pub fn bound(mut self, uuid: &str) -> Self {
        self.uuid = Some(uuid.to_string());
        // Files written through this handle carry the table's prefix.
        self.location.file_prefix = Some(crate::spec::metadata::file_prefix_of(uuid));
        self
    }

    /// The identity every commit through this handle is checked against.
    pub fn uuid(&self) -> Result<&str> {
        self.uuid.as_deref().ok_or_else(|| {
            crate::error::Error::Invalid(format!("table {} must be loaded before it is changed", self.name))
        })
    }

    /// Build the first metadata version for a schema and partition fields.
    pub fn initial_metadata(schema: &ArrowSchema, partition: &[PartitionFieldDef]) -> Result<TableMetadata> {
        let schema = Schema::from_arrow(schema, 1)?;
        let mut fields = Vec::with_capacity(partition.len());
        for (i, def) in partition.iter().enumerate() {
            let Some(source) = schema.field_by_name(&def.source) else {
                return crate::invalid!(
                    "partition column {:?} is not a column of the table (columns: {})",
                    def.source,
                    schema.column_names()
                );
            };
            fields.push(PartitionField {
                field_id: FIRST_PARTITION_FIELD_ID + i as i32,
                source_id: source.id,
                transform: def.transform,
                name: def
                    .name
                    .clone()
                    .unwrap_or_else(|| PartitionSpec::default_name(&def.transform, &source.name)),
            });
        }
        Self::initial_metadata_of(schema, PartitionSpec { fields }, BTreeMap::new())
    }

    /// The first metadata version of a table with `schema` (field ids as
    /// given), `partition_spec` and `properties`.
    pub fn initial_metadata_of(
        schema: Schema,
        partition_spec: PartitionSpec,
        properties: BTreeMap<String, String>,
    ) -> Result<TableMetadata> {
        let md = TableMetadata::new(schema, partition_spec)?;
        // The same rules as ALTER TABLE … SET TBLPROPERTIES: 'format-version'
        // makes the table that version (never a property), write modes are
        // checked against it.
        properties::set_properties(&md, &properties)
    }

    /// Create the table; fails if one already exists at the location.
    pub async fn create(&self, schema: &ArrowSchema, partition: &[PartitionFieldDef]) -> Result<Versioned> {
        let md = Self::initial_metadata(schema, partition)?;
        self.location.create(&md, &iceberg_commit::IcebergFiles).await
    }

    /// Commit a change through [`TableLocation::commit`], bound to this table.
    pub async fn commit<F>(&self, mut apply: F) -> Result<Versioned>
    where
        F: FnMut(&TableMetadata) -> Result<TableMetadata> + Send,
    {
        if let Some(foreign) = &self.foreign {
            return foreign.commit(&mut apply).await;
        }
        // Name the table in the errors that say it changed under the writer.
        match self
            .location
            .commit(self.uuid()?, &iceberg_commit::IcebergFiles, apply)
            .await
        {
            Err(Error::TableReplaced(_)) => Err(Error::TableReplaced(self.name.clone())),
            Err(Error::TableDropped(_)) => Err(Error::TableDropped(self.name.clone())),
            other => other,
        }
    }

    pub async fn load(&self) -> Result<Versioned> {
        match &self.foreign {
            Some(foreign) => foreign.load().await,
            None => self.location.load().await,
        }
    }

    /// The latest version of *this* table: `TableReplaced` if the location
    /// now holds another one.
    pub async fn load_bound(&self) -> Result<Versioned> {
        let uuid = self.uuid()?;
        match self.load().await {
            Ok(v) if v.metadata.table_uuid == uuid => Ok(v),
            Ok(_) => Err(Error::TableReplaced(self.name.clone())),
            Err(Error::TableNotFound(_)) => Err(Error::TableDropped(self.name.clone())),
            Err(e) => Err(e),
        }
    }

    /// Commit a write statement's [`change::Change`].
    pub async fn commit_change(&self, change: &change::Change) -> Result<Versioned> {
        self.commit(|md| change.apply(md, &self.name)).await
    }

    /// Commit new data files written under `spec` as one append snapshot.
    pub async fn append(&self, spec: &TableSpec, files: Vec<DataFile>) -> Result<Versioned> {
        let snapshot_id = new_id();
        let manifests = if files.is_empty() {
            Vec::new()
        } else {
            write_manifest(&self.location, spec, &files, snapshot_id).await?
        };
        let result = self
            .commit(|md| with_appended(md, snapshot_id, manifests.clone(), &files))
            .await;
        if let Err(e) = &result
            && !e.commit_may_have_happened()
        {
            crate::manifest::delete_manifests(&self.location, &manifests).await;
        }
        result
    }
}

/// A fresh snapshot id.
pub fn new_snapshot_id() -> i64 {
    new_id()
}

/// `md` with one more snapshot: the current manifests plus `manifest`
/// (the manifest of `files`, when there are any).
pub fn with_appended(
    md: &TableMetadata,
    snapshot_id: i64,
    manifest: Vec<ManifestFile>,
    files: &[DataFile],
) -> Result<TableMetadata> {
    let mut next = md.clone();
    let mut manifests = md.current_manifests()?.to_vec();
    manifests.extend(manifest);
    let (total_files, total_rows) = change::data_totals(&manifests);
    let added_rows: u64 = files.iter().map(|f| f.record_count).sum();
    let sequence_number = md.last_sequence_number + 1;
    let now = Utc::now().timestamp_millis();
    let mut summary = BTreeMap::from([
        ("added-data-files".to_string(), files.len().to_string()),
        ("added-records".to_string(), added_rows.to_string()),
        ("total-data-files".to_string(), total_files.to_string()),
        ("total-records".to_string(), total_rows.to_string()),
    ]);
    change::add_delete_counts(&mut summary, &manifests, (0, 0), (0, 0));
    next.snapshots.push(Snapshot {
        snapshot_id,
        parent_snapshot_id: md.current_snapshot_id,
        sequence_number,
        timestamp_ms: now,
        operation: "append".to_string(),
        summary: summary.into(),
        manifests: Some(std::sync::Arc::new(manifests)),
        manifests_file: None,
        table_spec_id: Some(md.current_spec_id),
        manifest_list: None,
        first_row_id: None,
        added_rows: None,
    });
    next.set_current_snapshot(snapshot_id, now);
    next.last_sequence_number = sequence_number;
    next.last_updated_ms = now;
    Ok(next)
}
