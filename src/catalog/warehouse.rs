//! A warehouse: a directory (or object-store prefix) whose subdirectories are
//! tables.
//!
//! | path under the warehouse   | meaning                                           |
//! |----------------------------|---------------------------------------------------|
//! | `<name>/metadata/…`        | table `<name>` stored in the warehouse            |
//! | `<name>.location`          | table `<name>` stored elsewhere (`LOCATION '…'`); |
//! |                            | the file holds the table's URL                    |
//! | `<ns>.db/.namespace`       | namespace (schema) `<ns>` (see `catalog::namespace`); |
//! | `<ns>.db/<name>/metadata/…`| its tables, laid out as above                     |
//! | `<name>.view`, `<name>.external` | a view / external table (see `catalog::definitions`) |
//! | `<name>.renamed`           | `<name>` was renamed (see `catalog::rename`): the |
//! |                            | directory `<name>/` is no longer table `<name>`   |
//! | `<name>@<id>/metadata/…`   | a table stored in the warehouse under a name whose |
//! |                            | directory a renamed table keeps (linked by `<name>.location`) |

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use super::definitions::{DefinitionKind, definition_name};
use crate::error::{Error, Result};
use crate::invalid;
use crate::store::TableLocation;
use crate::store::cache::ObjectCache;
use crate::store::connect::{StorageOptions, build_store};
use crate::store::observe::{ObservedStore, RequestCounts};
use crate::store::url::{Scheme, StoreLocation, parse_location};

const LINK_SUFFIX: &str = ".location";
/// The marker of a name whose directory now holds a table of another name.
const MOVED_SUFFIX: &str = ".renamed";
/// A namespace's directory is `<name>.db` (as in Hive and Spark warehouses).
pub const NAMESPACE_SUFFIX: &str = ".db";
/// The object that makes `<name>.db/` a namespace.
const NAMESPACE_MARKER: &str = ".namespace";

/// What one LIST of a warehouse root finds.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Tables stored inside or linked (`<name>.location`).
    pub tables: Vec<String>,
    /// Directories `<name>.db` that may be namespaces.
    pub namespaces: Vec<String>,
    /// Stored views and external tables.
    pub definitions: Vec<(String, DefinitionKind)>,
    /// Names renamed away (`<name>.renamed`): their directory is another
    /// table's now.
    pub moved: Vec<String>,
}

/// A warehouse: where its tables live, how to reach the stores, and what
/// the session has already read.
#[derive(Clone)]
pub struct Warehouse {
    /// The warehouse's store, as the session sees it (requests counted).
    pub store: Arc<dyn ObjectStore>,
    pub store_url: ObjectStoreUrl,
    pub root: Path,
    /// Options for building the stores of this warehouse and of `LOCATION`s.
    pub options: StorageOptions,
    /// Immutable objects already read (see `store::cache`).
    pub cache: Arc<ObjectCache>,
    /// Requests served by this warehouse's stores.
    pub requests: Arc<RequestCounts>,
    /// The namespace this is (`<root>` is then `<warehouse>/<ns>.db`); `None`
    /// for the warehouse itself.
    pub namespace: Option<String>,
}

impl std::fmt::Debug for Warehouse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Warehouse({})", self.place().url())
    }
}

/// A name that becomes a directory name: letters, digits, `_`, `-`, `.`,
/// not starting with `.`.
fn check_directory_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.');
    if !ok {
        return invalid!("invalid {what} name {name:?}: use letters, digits, '_', '-' or '.'");
    }
    // A directory name (with the warehouse's suffixes such as `.renamed` or
    // `@<id>`) must fit a path component of 255 bytes.
    if name.len() > MAX_NAME_BYTES {
        return invalid!(
            "invalid {what} name {:?}…: it is {} bytes, and at most {MAX_NAME_BYTES} are allowed",
            name.chars().take(20).collect::<String>(),
            name.len()
        );
    }
    Ok(())
}

/// The longest table or schema name, in bytes.
pub const MAX_NAME_BYTES: usize = 200;

/// Table names become directory names: keep them to a safe alphabet, and
/// away from the names of the warehouse's own files (`<name>.location`).
pub fn check_table_name(name: &str) -> Result<()> {
    check_directory_name("table", name)?;
    for suffix in [LINK_SUFFIX, MOVED_SUFFIX] {
        if name.to_ascii_lowercase().ends_with(suffix) {
            return invalid!("invalid table name {name:?}: names ending in {suffix:?} are the warehouse's own files");
        }
    }
    for kind in super::definitions::DefinitionKind::ALL {
        if name.to_ascii_lowercase().ends_with(kind.suffix()) {
            return invalid!(
                "invalid table name {name:?}: names ending in {:?} are the warehouse's own files",
                kind.suffix()
            );
        }
    }
    if name.to_ascii_lowercase().ends_with(NAMESPACE_SUFFIX) {
        return invalid!(
            "invalid table name {name:?}: names ending in {NAMESPACE_SUFFIX:?} are the directories of the warehouse's schemas"
        );
    }
    Ok(())
}

/// Namespace names become directory names `<name>.db`: the alphabet of table names.
pub fn check_namespace_name(name: &str) -> Result<()> {
    check_directory_name("schema", name)?;
    if name.eq_ignore_ascii_case("information_schema") {
        return invalid!("invalid schema name {name:?}: it is DataFusion's own schema");
    }
    Ok(())
}

impl Warehouse {
    /// A warehouse on the local file system; the directory is created if missing.
    pub fn local(dir: impl AsRef<std::path::Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let Some(written) = dir.to_str() else {
            return invalid!("warehouse directory {} is not valid UTF-8", dir.display());
        };
        Self::open(written, StorageOptions::default())
    }

    /// A warehouse at a local path or URL (`s3://bucket/prefix`, `gs://…`,
    /// `az://…`, `memory:///…`, `file:///…`); see `store::connect` for the
    /// options. A local directory is created if missing.
    pub fn open(location: &str, options: StorageOptions) -> Result<Self> {
        Self::open_with(location, options, true)
    }

    /// [`Self::open`], creating a missing local directory only when
    /// `create` (a REST catalog places its tables itself: its clients need
    /// no directory of their own).
    pub fn open_with(location: &str, options: StorageOptions, create: bool) -> Result<Self> {
        let place = parse_location(location)?;
        options.validate()?;
        if place.scheme == Scheme::Local && create {
            let dir = std::path::PathBuf::from(format!("/{}", place.root));
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::Invalid(format!("cannot create warehouse directory {}: {e}", dir.display())))?;
        }
        let store = build_store(&place, &options)?;
        Ok(Self::with_store(store, place, options))
    }

    /// A warehouse on a store built by the caller (e.g. wrapped for tests).
    pub fn with_store(store: Arc<dyn ObjectStore>, place: StoreLocation, options: StorageOptions) -> Self {
        let requests = Arc::new(RequestCounts::default());
        Self {
            store: Arc::new(ObservedStore::new(store, requests.clone())),
            store_url: place.store_url,
            root: place.root,
            options,
            cache: Arc::new(ObjectCache::default()),
            requests,
            namespace: None,
        }
    }

    /// Namespace `name` of this warehouse, on the same store and session caches.
    pub fn namespace(&self, name: &str) -> Warehouse {
        Warehouse {
            root: self.root.clone().join(format!("{name}{NAMESPACE_SUFFIX}")),
            namespace: Some(name.to_string()),
            ..self.clone()
        }
    }

    fn namespace_marker(&self, name: &str) -> Path {
        self.namespace(name).root.join(NAMESPACE_MARKER)
    }

    /// Whether namespace `name` exists (its marker is there).
    pub async fn namespace_exists(&self, name: &str) -> Result<bool> {
        match self.store.head(&self.namespace_marker(name)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Write namespace `name`'s marker (put-if-absent); `false` when it was
    /// already there.
    pub async fn create_namespace(&self, name: &str) -> Result<bool> {
        let path = self.namespace_marker(name);
        let payload = PutPayload::from(format!("{{\"namespace\": {:?}}}\n", name).into_bytes());
        crate::store::commit::put_if_absent(self.store.as_ref(), &path, payload, self.options.single_writer()).await
    }

    /// The marker of namespace `name`, or of the warehouse's own namespace
    /// (`None`: `<warehouse>/.namespace`).
    fn properties_marker(&self, name: Option<&str>) -> Path {
        match name {
            Some(name) => self.namespace_marker(name),
            None => self.root.clone().join(NAMESPACE_MARKER),
        }
    }

    /// The properties of namespace `name` (`None`: the warehouse's own),
    /// kept in its marker; empty when it has none.
    pub async fn namespace_properties(&self, name: Option<&str>) -> Result<BTreeMap<String, String>> {
        let path = self.properties_marker(name);
        let bytes = match self.store.get(&path).await {
            Ok(r) => r.bytes().await?,
            Err(object_store::Error::NotFound { .. }) => return Ok(BTreeMap::new()),
            Err(e) => return Err(e.into()),
        };
        let doc: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Format(format!("{path}: not a namespace marker: {e}")))?;
        Ok(doc
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Store the properties of namespace `name` (`None`: the warehouse's
    /// own) in its marker (the last writer's set wins).
    pub async fn set_namespace_properties(
        &self,
        name: Option<&str>,
        properties: &BTreeMap<String, String>,
    ) -> Result<()> {
        let doc = serde_json::json!({"namespace": name.unwrap_or("public"), "properties": properties});
        let mut bytes = serde_json::to_vec_pretty(&doc)?;
        bytes.push(b'\n');
        self.store
            .put(&self.properties_marker(name), PutPayload::from(bytes))
            .await?;
        Ok(())
    }

    /// Remove namespace `name`'s marker (its tables must be gone already),
    /// and its directory when that is empty and local.
    pub async fn drop_namespace(&self, name: &str) -> Result<()> {
        match self.store.delete(&self.namespace_marker(name)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        if self.place().scheme == Scheme::Local {
            let _ = std::fs::remove_dir(format!("/{}", self.namespace(name).root));
        }
        Ok(())
    }

    /// A store for another location of this warehouse's session (e.g. a
    /// `LOCATION` in another bucket), counted like the warehouse's own.
    pub fn build_store(&self, place: &StoreLocation) -> Result<Arc<dyn ObjectStore>> {
        let store = build_store(place, &self.options)?;
        Ok(Arc::new(ObservedStore::new(store, self.requests.clone())))
    }

    /// The warehouse root as a store location.
    pub fn place(&self) -> StoreLocation {
        StoreLocation {
            scheme: crate::store::url::Scheme::of(&self.store_url),
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
        .with_cache(Arc::clone(&self.cache))
        .with_options(self.options.clone())
        .with_requests(Arc::clone(&self.requests))
    }

    fn link_path(&self, name: &str) -> Path {
        self.root.clone().join(format!("{name}{LINK_SUFFIX}"))
    }

    /// Names of all tables (in the warehouse and linked).
    pub async fn list_tables(&self) -> Result<Vec<String>> {
        Ok(self.list().await?.tables)
    }

    /// One LIST of the root: the names of all tables, of the stored views
    /// and external tables, and of the directories that may be namespaces
    /// (`<name>.db`, markers unchecked).
    pub async fn list(&self) -> Result<Listing> {
        let listing = self.store.list_with_delimiter(Some(&self.root)).await?;
        let dirs: Vec<String> = listing
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_string))
            .collect();
        let mut namespaces: Vec<String> = dirs
            .iter()
            .filter_map(|d| d.strip_suffix(NAMESPACE_SUFFIX))
            .filter(|n| check_namespace_name(n).is_ok())
            .map(str::to_string)
            .collect();
        namespaces.sort();
        let moved: Vec<String> = listing
            .objects
            .iter()
            .filter_map(|o| o.location.filename()?.strip_suffix(MOVED_SUFFIX).map(str::to_string))
            .collect();
        // A renamed table's directory is not a table of its old name.
        let mut names: Vec<String> = dirs.into_iter().filter(|d| !moved.contains(d)).collect();
        names.extend(
            listing
                .objects
                .iter()
                .filter_map(|o| o.location.filename()?.strip_suffix(LINK_SUFFIX).map(str::to_string)),
        );
        names.retain(|n| check_table_name(n).is_ok());
        names.sort();
        names.dedup();
        let mut definitions: Vec<(String, DefinitionKind)> = listing
            .objects
            .iter()
            .filter_map(|o| {
                let (name, kind) = definition_name(o.location.filename()?)?;
                Some((name.to_string(), kind))
            })
            .filter(|(n, _)| check_table_name(n).is_ok())
            .collect();
        definitions.sort();
        Ok(Listing {
            tables: names,
            namespaces,
            definitions,
            moved,
        })
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

    /// Record that table `name` lives at `url` (put-if-absent, so of two
    /// concurrent CREATEs of one name only one links).
    pub async fn link(&self, name: &str, url: &str) -> Result<()> {
        let path = self.link_path(name);
        let payload = PutPayload::from(url.to_string().into_bytes());
        if crate::store::commit::put_if_absent(self.store.as_ref(), &path, payload, self.options.single_writer())
            .await?
        {
            Ok(())
        } else {
            Err(Error::TableExists(format!("table {name} already exists")))
        }
    }

    fn moved_path(&self, name: &str) -> Path {
        self.root.clone().join(format!("{name}{MOVED_SUFFIX}"))
    }

    /// The rename recorded for `name` (see `catalog::rename`), if any.
    pub async fn moved(&self, name: &str) -> Result<Option<String>> {
        match self.store.get(&self.moved_path(name)).await {
            Ok(r) => Ok(Some(String::from_utf8_lossy(&r.bytes().await?).trim().to_string())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Record that `name` was renamed; `record` says to what (and where
    /// the table lives), for finishing an interrupted rename.
    pub async fn mark_moved(&self, name: &str, record: &str) -> Result<()> {
        let payload = PutPayload::from(format!("{record}\n").into_bytes());
        self.store.put(&self.moved_path(name), payload).await?;
        Ok(())
    }

    /// Remove the rename record of `name` (it is no longer needed: the
    /// directory `<name>/` holds no other table).
    pub async fn unmark_moved(&self, name: &str) -> Result<()> {
        match self.store.delete(&self.moved_path(name)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The warehouse's own root (for a namespace: the warehouse it is in).
    pub fn warehouse_place(&self) -> StoreLocation {
        let mut place = self.place();
        if self.namespace.is_some() {
            let parts: Vec<_> = place.root.parts().collect();
            place.root = Path::from_iter(parts[..parts.len().saturating_sub(1)].iter().cloned());
        }
        place
    }

    /// Whether the table at `url` is stored inside this warehouse (so the
    /// warehouse owns its files: a table renamed, or placed beside a
    /// renamed one), rather than at a `LOCATION` of its own.
    pub fn holds(&self, url: &str) -> bool {
        parse_location(url).is_ok_and(|place| {
            matches!(
                place.overlap(&self.warehouse_place()),
                crate::store::url::Overlap::Inside
            )
        })
    }

    /// A new place in the warehouse for table `name`, when its directory
    /// `<name>/` holds a renamed table: `<name>@<id>/`, a directory no
    /// table name can be (so listings skip it).
    pub fn relocated_table_location(&self, name: &str) -> TableLocation {
        let id = uuid::Uuid::new_v4().simple().to_string();
        self.table_location(&format!("{name}@{}", &id[..12]))
    }

    pub async fn unlink(&self, name: &str) -> Result<()> {
        match self.store.delete(&self.link_path(name)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}
