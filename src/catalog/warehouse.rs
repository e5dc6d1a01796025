//! A warehouse: a directory (or object-store prefix) whose subdirectories are
//! tables.
//!
//! | path under the warehouse   | meaning                                           |
//! |----------------------------|---------------------------------------------------|
//! | `<name>/metadata/…`        | table `<name>` stored in the warehouse            |
//! | `<name>.location`          | table `<name>` stored elsewhere (`LOCATION '…'`); |
//! |                            | the file holds the table's URL                    |

use std::sync::Arc;

use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use crate::error::{Error, Result};
use crate::invalid;
use crate::store::TableLocation;
use crate::store::url::StoreLocation;

const LINK_SUFFIX: &str = ".location";

#[derive(Clone)]
pub struct Warehouse {
    pub store: Arc<dyn ObjectStore>,
    pub store_url: ObjectStoreUrl,
    pub root: Path,
}

impl std::fmt::Debug for Warehouse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Warehouse({})", self.place().url())
    }
}

/// Table names become directory names: keep them to a safe alphabet, and
/// away from the names of the warehouse's own files (`<name>.location`).
pub fn check_table_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.');
    if !ok {
        return invalid!("invalid table name {name:?}: use letters, digits, '_', '-' or '.'");
    }
    if name.to_ascii_lowercase().ends_with(LINK_SUFFIX) {
        return invalid!("invalid table name {name:?}: names ending in {LINK_SUFFIX:?} are the warehouse's own files");
    }
    Ok(())
}

impl Warehouse {
    /// A warehouse on the local file system; the directory is created if missing.
    pub fn local(dir: impl AsRef<std::path::Path>) -> Result<Self> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Invalid(format!("cannot create warehouse directory {}: {e}", dir.display())))?;
        let abs = std::fs::canonicalize(dir)
            .map_err(|e| Error::Invalid(format!("cannot resolve warehouse directory {}: {e}", dir.display())))?;
        let root = Path::from_absolute_path(&abs)
            .map_err(|e| Error::Invalid(format!("warehouse path {}: {e}", abs.display())))?;
        Ok(Self {
            store: Arc::new(object_store::local::LocalFileSystem::new()),
            store_url: ObjectStoreUrl::local_filesystem(),
            root,
        })
    }

    /// The warehouse root as a store location.
    pub fn place(&self) -> StoreLocation {
        StoreLocation {
            store_url: self.store_url.clone(),
            root: self.root.clone(),
        }
    }

    /// Location of a table stored inside the warehouse.
    pub fn table_location(&self, name: &str) -> TableLocation {
        TableLocation::new(
            Arc::clone(&self.store),
            self.store_url.clone(),
            self.root.clone().join(name),
        )
    }

    fn link_path(&self, name: &str) -> Path {
        self.root.clone().join(format!("{name}{LINK_SUFFIX}"))
    }

    /// Names of all tables (in the warehouse and linked).
    pub async fn list_tables(&self) -> Result<Vec<String>> {
        let listing = self.store.list_with_delimiter(Some(&self.root)).await?;
        let mut names: Vec<String> = listing
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_string))
            .collect();
        names.extend(
            listing
                .objects
                .iter()
                .filter_map(|o| o.location.filename()?.strip_suffix(LINK_SUFFIX).map(str::to_string)),
        );
        names.retain(|n| check_table_name(n).is_ok());
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Every linked table: its name and the URL it lives at.
    pub async fn links(&self) -> Result<Vec<(String, String)>> {
        let listing = self.store.list_with_delimiter(Some(&self.root)).await?;
        let mut out = Vec::new();
        for o in &listing.objects {
            let Some(name) = o.location.filename().and_then(|f| f.strip_suffix(LINK_SUFFIX)) else {
                continue;
            };
            if let Some(url) = self.linked_location(name).await? {
                out.push((name.to_string(), url));
            }
        }
        Ok(out)
    }

    /// Where table `name` lives, if it is linked from elsewhere.
    pub async fn linked_location(&self, name: &str) -> Result<Option<String>> {
        match self.store.get(&self.link_path(name)).await {
            Ok(r) => Ok(Some(String::from_utf8_lossy(&r.bytes().await?).trim().to_string())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Record that table `name` lives at `url`.
    pub async fn link(&self, name: &str, url: &str) -> Result<()> {
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self
            .store
            .put_opts(
                &self.link_path(name),
                PutPayload::from(url.to_string().into_bytes()),
                opts,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(object_store::Error::AlreadyExists { .. }) => Err(Error::TableExists(name.to_string())),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn unlink(&self, name: &str) -> Result<()> {
        match self.store.delete(&self.link_path(name)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}
