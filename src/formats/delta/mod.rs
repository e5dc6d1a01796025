//! Reading Delta Lake tables through our planner.
//!
//! ```sql
//! CREATE EXTERNAL TABLE clicks STORED AS DELTA LOCATION '/data/clicks';
//! SELECT * FROM "clicks@3";   -- version 3
//! ```
//!
//! 1. `log.rs` — `delta_kernel` replays `_delta_log` (commits, checkpoints,
//!    protocol checks, deletion vectors) and hands over the live files as
//!    Arrow columns, statistics and partition values typed;
//! 2. `convert.rs` — one table spec (identity per partition column, plus
//!    `generated.rs`' transforms for generated partition columns), manifest
//!    columns built a column at a time with `stats.rs`' rules for bounds,
//!    batches grouped by partition.
//!
//! Partition columns are not stored in Delta data files: the scan adds them
//! from each file's partition values. Under column mapping (`name` or `id`
//! mode) file columns are matched by the column-mapping id (the Parquet
//! field id) or the physical name.

pub mod change_feed;
pub mod convert;
pub mod generated;
pub mod history;
pub mod log;
pub mod stats;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::physical_expr_adapter::{DefaultPhysicalExprAdapterFactory, PhysicalExprAdapterFactory};

use self::convert::{DeltaManifests, convert};
use super::deletes::FileDeletes;
use super::table::{FileColumns, ForeignReader, ForeignTable};
use crate::error::{Error, Result};
use crate::plan::files::PlannedFile;
use crate::provider::field_ids::FieldIdAdapterFactory;
use crate::spec::{Snapshot, TableMetadata};
use crate::store::TableLocation;

/// Open the Delta table whose root is `location` (latest version).
pub async fn open(name: &str, location: TableLocation) -> Result<ForeignTable> {
    open_version(name, location, None).await
}

/// The table's root as a URL ending in `/`, as kernel wants it.
fn root_url(location: &TableLocation) -> String {
    let base = location.store_url.as_str().trim_end_matches('/');
    format!("{base}/{}/", location.root)
}

async fn open_version(name: &str, location: TableLocation, version: Option<u64>) -> Result<ForeignTable> {
    let root = root_url(&location);
    let store = Arc::clone(&location.store);
    let log = tokio::task::spawn_blocking(move || log::replay(store, &root, version))
        .await
        .map_err(|e| Error::Invalid(format!("reading the Delta log of {name} failed: {e}")))??;
    let converted = convert(&log, name)?;
    let adapter: Arc<dyn PhysicalExprAdapterFactory> = if converted.physical_names.is_empty() {
        Arc::new(DefaultPhysicalExprAdapterFactory)
    } else {
        Arc::new(
            FieldIdAdapterFactory::new(&converted.spec.schema)
                .with_name_mapping(converted.physical_names.clone(), format!("Delta table {name}")),
        )
    };
    let version = log.version as i64;
    let metadata = TableMetadata {
        format_version: crate::spec::metadata::FORMAT_VERSION,
        // Read-only here: never written, never cleaned by us.
        file_prefix: None,
        created_ms: None,
        snapshot_log: Vec::new(),
        location: None,
        metadata_log: Vec::new(),
        next_row_id: None,
        sort_orders: Vec::new(),
        default_sort_order_id: None,
        table_uuid: log.table_id.clone(),
        last_updated_ms: log.timestamp_ms,
        last_sequence_number: version,
        last_column_id: converted.spec.schema.highest_field_id(),
        last_partition_id: converted.spec.partition_spec.highest_field_id(),
        current_spec_id: 0,
        table_specs: vec![converted.spec.clone()],
        current_snapshot_id: Some(version),
        snapshots: vec![Snapshot {
            snapshot_id: version,
            parent_snapshot_id: (version > 0).then(|| version - 1),
            sequence_number: version,
            timestamp_ms: log.timestamp_ms,
            operation: "delta".to_string(),
            summary: BTreeMap::from([("delta-version".to_string(), version.to_string())]).into(),
            manifests: Some(std::sync::Arc::new(converted.manifests.clone())),
            manifests_file: None,
            table_spec_id: None,
            manifest_list: None,
            first_row_id: None,
            added_rows: None,
        }],
        properties: BTreeMap::new(),
        refs: BTreeMap::new(),
    };
    let reader = Arc::new(DeltaReader {
        base: location.clone(),
        deleted: converted.deleted.clone(),
        counts_exact: converted.counts_exact,
        columns: FileColumns {
            adapter,
            constants: converted.constants.clone(),
        },
    });
    let location = location.with_manifest_source(DeltaManifests::new(converted.batches));
    ForeignTable::try_new(name, location, metadata, reader)
}

#[derive(Debug)]
struct DeltaReader {
    base: TableLocation,
    /// Deleted row indexes by stored path.
    deleted: HashMap<String, Vec<u64>>,
    counts_exact: bool,
    columns: FileColumns,
}

#[async_trait]
impl ForeignReader for DeltaReader {
    fn format(&self) -> &'static str {
        "Delta"
    }

    fn file_columns(&self) -> &FileColumns {
        &self.columns
    }

    fn counts_exact(&self) -> bool {
        self.counts_exact
    }

    async fn deletes(&self, location: &TableLocation, files: &[PlannedFile]) -> Result<Vec<FileDeletes>> {
        if self.deleted.is_empty() {
            return Ok(vec![FileDeletes::default(); files.len()]);
        }
        let by_path: HashMap<object_store::path::Path, &Vec<u64>> = self
            .deleted
            .iter()
            .filter_map(|(p, d)| Some((location.resolve(p).ok()?, d)))
            .collect();
        Ok(files
            .iter()
            .map(|f| FileDeletes {
                positions: by_path.get(&f.path).map(|d| d.to_vec()).unwrap_or_default(),
                equality: Vec::new(),
            })
            .collect())
    }

    async fn history(&self, metadata: &TableMetadata) -> Result<Option<Vec<Snapshot>>> {
        let Some(current) = metadata.snapshots.last() else {
            return Ok(None);
        };
        let commits = history::commits(&self.base, current.snapshot_id as u64).await?;
        Ok(Some(history::snapshots(&commits, current)))
    }

    async fn recorded_changes(
        &self,
        name: &str,
        first: i64,
        last: i64,
        columns: &SchemaRef,
        select: &[Option<String>],
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        let (store, root) = (Arc::clone(&self.base.store), root_url(&self.base));
        change_feed::open(name, store, &root, (first as u64, last as u64), columns, select).await
    }

    async fn at(&self, name: &str, selector: &str) -> Result<ForeignTable> {
        let Ok(version) = selector.parse::<u64>() else {
            return Err(Error::Invalid(format!(
                "cannot read {selector:?} as a version of Delta table {name} (time travel on Delta tables takes a version number, e.g. \"{name}@3\")"
            )));
        };
        open_version(name, self.base.clone(), Some(version)).await
    }
}
