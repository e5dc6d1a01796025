//! Existing Apache Iceberg and Delta Lake tables, read through our planner.
//!
//! A foreign format is an *input* to `manifest/`, never a second pruning
//! path: each reader turns its table into our `TableMetadata` (table specs
//! with field ids and transforms, a snapshot whose manifests carry
//! partition summaries) and each of its file lists into the manifest batch
//! layout of `manifest::format` (served by a `ManifestSource` on the table's
//! location). Planning, `Exact` pushdown, run-time pruning and `files=S/T`
//! are then the same code as for our own tables.
//!
//! ```text
//! Iceberg metadata.json ─► manifest list (Avro) ─► manifests (Avro) ─┐
//!                                                                    ├─► TableMetadata + manifest batches ─► planning
//! Delta _delta_log (JSON + checkpoints, via delta_kernel) ───────────┘
//! ```
//!
//! ```sql
//! CREATE EXTERNAL TABLE sales STORED AS ICEBERG LOCATION 's3://lake/sales';
//! CREATE EXTERNAL TABLE clicks STORED AS DELTA LOCATION '/data/clicks';
//! ```

pub mod changes;
pub mod deletes;
pub mod delta;
pub mod equality_exec;
pub mod iceberg;
pub mod manifest_batch;
pub mod table;

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::error::Result;
use datafusion::logical_expr::CreateExternalTable;

pub use table::{ForeignTable, as_foreign};

use crate::store::TableLocation;
use crate::store::connect::{StorageOptions, build_store};
use crate::store::url::parse_location;

/// The table formats `CREATE EXTERNAL TABLE … STORED AS` accepts from us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Iceberg,
    Delta,
}

impl Format {
    /// The `STORED AS` name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Iceberg => "ICEBERG",
            Format::Delta => "DELTA",
        }
    }
}

/// Open a foreign table at a local path or URL (`s3://…` with the standard
/// environment variables or `options`).
pub async fn open(format: Format, name: &str, location: &str, options: &StorageOptions) -> crate::Result<ForeignTable> {
    let place = parse_location(location)?;
    let store = build_store(&place, options)?;
    let location = TableLocation::new(store, place.store_url, place.root);
    open_at(format, name, location).await
}

/// Open a foreign table at a location whose store is already built.
pub async fn open_at(format: Format, name: &str, location: TableLocation) -> crate::Result<ForeignTable> {
    match format {
        Format::Iceberg => iceberg::open(name, location).await,
        Format::Delta => delta::open(name, location).await,
    }
}

/// `CREATE EXTERNAL TABLE t STORED AS ICEBERG | DELTA LOCATION '…'`.
#[derive(Debug)]
pub struct ForeignTableFactory {
    format: Format,
}

impl ForeignTableFactory {
    pub fn new(format: Format) -> Self {
        Self { format }
    }
}

#[async_trait]
impl TableProviderFactory for ForeignTableFactory {
    async fn create(&self, state: &dyn Session, cmd: &CreateExternalTable) -> Result<Arc<dyn TableProvider>> {
        let name = cmd.name.table().to_string();
        let Some(written) = cmd.locations.first() else {
            return Err(crate::Error::Invalid(format!(
                "CREATE EXTERNAL TABLE {name} STORED AS {} needs a LOCATION",
                self.format.name()
            ))
            .into());
        };
        if !cmd.schema.fields().is_empty() {
            return Err(crate::Error::Invalid(format!(
                "CREATE EXTERNAL TABLE {name} STORED AS {}: leave out the column list; the columns come from the table's own metadata",
                self.format.name()
            ))
            .into());
        }
        let place = parse_location(written)?;
        let store = match state.runtime_env().object_store(&place.store_url) {
            Ok(store) => store,
            Err(_) => {
                let mut options = StorageOptions::new();
                for (k, v) in &cmd.options {
                    options = options.with(k.strip_prefix("format.").unwrap_or(k), v);
                }
                let store = build_store(&place, &options)?;
                state
                    .runtime_env()
                    .register_object_store(place.store_url.as_ref(), Arc::clone(&store));
                store
            }
        };
        let location = TableLocation::new(store, place.store_url, place.root);
        Ok(Arc::new(open_at(self.format, &name, location).await?))
    }
}

/// Register the `ICEBERG` and `DELTA` factories with a session state.
pub fn register_factories(state: &mut datafusion::execution::SessionState) {
    for format in [Format::Iceberg, Format::Delta] {
        state
            .table_factories_mut()
            .insert(format.name().to_string(), Arc::new(ForeignTableFactory::new(format)));
    }
}

/// "an Iceberg", "a Delta" (for messages).
pub fn a_format(format: &str) -> String {
    let vowel = format.starts_with(['A', 'E', 'I', 'O', 'U']);
    format!("{} {format}", if vowel { "an" } else { "a" })
}

pub use crate::plan::files::parse_timestamp_ms;
