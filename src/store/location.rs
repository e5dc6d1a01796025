//! Where a table lives: an object store plus a root path inside it.
//!
//! | what                  | path under the table root                         |
//! |-----------------------|---------------------------------------------------|
//! | metadata version N    | `metadata/v<N>.metadata.json`                     |
//! | latest version hint   | `metadata/version-hint.text`                      |
//! | manifest              | `metadata/<uuid>-m.parquet`                       |
//! | data file             | `data/<hive partition dirs>/<uuid>.parquet`       |
//!
//! Relative paths are stored URI-encoded (see `values::uri`); turning one into
//! an object-store [`Path`] decodes that layer and lets `object_store` apply
//! its own per-segment encoding, so the directory created on a local disk is
//! exactly the Hive-escaped name.

use std::fmt;
use std::sync::Arc;

use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use super::cache::ObjectCache;
use super::connect::StorageOptions;
use super::manifest_source::ManifestSource;
use super::observe::RequestCounts;
use crate::error::{Error, Result};
use crate::values::uri;

#[derive(Clone)]
pub struct TableLocation {
    pub store: Arc<dyn ObjectStore>,
    /// The store's URL as DataFusion knows it (e.g. `file://`).
    pub store_url: ObjectStoreUrl,
    /// The table's root inside the store.
    pub root: Path,
    /// Immutable objects already read (metadata versions, manifests).
    pub cache: Arc<ObjectCache>,
    /// Commit without conditional writes (the user vouches for a single
    /// writer; see `store::connect`).
    pub single_writer: bool,
    /// Requests served by the store so far (when it is counted).
    pub requests: Option<Arc<RequestCounts>>,
    /// Where manifest batches come from when they are not our Parquet
    /// manifests (a table of another format, see `formats`).
    pub manifest_source: Option<Arc<dyn ManifestSource>>,
    /// The storage options the store was built with (carried to Ballista
    /// executors, which build their own store from them).
    pub options: StorageOptions,
    /// The table's file-name prefix (see `TableMetadata::file_prefix`): every
    /// data file and manifest written through this location starts with it.
    pub file_prefix: Option<String>,
    /// The table's location as its Iceberg metadata spells it (e.g.
    /// `file:///tmp/t` for a table pyiceberg created), when it is not the
    /// form this engine writes (see `table::iceberg_commit`).
    pub iceberg_location: Option<String>,
}

impl fmt::Debug for TableLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.url())
    }
}

impl TableLocation {
    /// A location with a cache of its own (see [`TableLocation::with_cache`]).
    pub fn new(store: Arc<dyn ObjectStore>, store_url: ObjectStoreUrl, root: Path) -> Self {
        Self {
            store,
            store_url,
            root,
            cache: Arc::new(ObjectCache::default()),
            single_writer: false,
            requests: None,
            manifest_source: None,
            options: StorageOptions::default(),
            file_prefix: None,
            iceberg_location: None,
        }
    }

    /// Name new files with the table's prefix (see [`TableLocation::fresh_name`]).
    pub fn with_file_prefix(mut self, prefix: Option<String>) -> Self {
        self.file_prefix = prefix;
        self
    }

    /// A name for a new file of the table, without its extension:
    /// `<file prefix>-<uuid>`, or a bare uuid when the table has no prefix.
    pub fn fresh_name(&self) -> String {
        match &self.file_prefix {
            Some(prefix) => format!("{prefix}-{}", uuid::Uuid::new_v4()),
            None => uuid::Uuid::new_v4().to_string(),
        }
    }

    /// The options the store was built with; `single_writer` follows them.
    pub fn with_options(mut self, options: StorageOptions) -> Self {
        self.single_writer = options.single_writer();
        self.options = options;
        self
    }

    /// Read manifests through `source` instead of as our Parquet manifests.
    pub fn with_manifest_source(mut self, source: Arc<dyn ManifestSource>) -> Self {
        self.manifest_source = Some(source);
        self
    }

    /// Report the requests counted by `counts` (the store's observer).
    pub fn with_requests(mut self, counts: Arc<RequestCounts>) -> Self {
        self.requests = Some(counts);
        self
    }

    /// Commit with plain writes when the store has no conditional ones.
    pub fn with_single_writer(mut self, single_writer: bool) -> Self {
        self.single_writer = single_writer;
        self
    }

    /// Share `cache` (a session's) instead.
    pub fn with_cache(mut self, cache: Arc<ObjectCache>) -> Self {
        self.cache = cache;
        self
    }

    /// The cache key of an object of this location's store.
    pub fn cache_key(&self, path: &Path) -> String {
        format!("{}{path}", self.store_url.as_str())
    }

    /// The table's URL, e.g. `file:///tmp/warehouse/t`.
    pub fn url(&self) -> String {
        self.place().url()
    }

    /// Which store and where in it, for comparing locations.
    pub fn place(&self) -> super::url::StoreLocation {
        super::url::StoreLocation {
            scheme: super::url::Scheme::of(&self.store_url),
            store_url: self.store_url.clone(),
            root: self.root.clone(),
        }
    }

    /// The table's directory when it is on the local file system.
    pub fn local_dir(&self) -> Option<std::path::PathBuf> {
        if self.store_url.as_str() != "file:///" {
            return None;
        }
        Some(std::path::PathBuf::from(format!("/{}", self.root)))
    }

    pub fn metadata_dir(&self) -> Path {
        self.root.clone().join("metadata")
    }

    pub fn metadata_file(&self, version: u64) -> Path {
        self.metadata_dir().join(format!("v{version}.metadata.json"))
    }

    pub fn version_hint(&self) -> Path {
        self.metadata_dir().join("version-hint.text")
    }

    /// Resolve a stored relative path (URI-encoded, `/`-separated) to an object path.
    pub fn resolve(&self, stored: &str) -> Result<Path> {
        let decoded = uri::decode(stored)?;
        // One string, parsed once (`Path::join` per segment copies the path
        // each time: planning resolves every file of every manifest read).
        let mut raw = String::with_capacity(self.root.as_ref().len() + decoded.len() + 1);
        raw.push_str(self.root.as_ref());
        // Segments are Hive-escaped (no '/', no controls): taken verbatim,
        // each checked by the parse.
        for part in decoded.split('/').filter(|p| !p.is_empty()) {
            if !raw.is_empty() {
                raw.push('/');
            }
            raw.push_str(part);
        }
        Path::parse(&raw).map_err(|e| crate::error::Error::Format(format!("invalid path segment in {stored:?}: {e}")))
    }

    /// The stored (relative, URI-encoded) form of `path`, an object under the
    /// table root (the inverse of [`Self::resolve`]).
    pub fn stored(&self, path: &Path) -> Result<String> {
        let Some(parts) = path.prefix_match(&self.root) else {
            return Err(crate::error::Error::Invalid(format!(
                "{path} is not under the table location {}",
                self.url()
            )));
        };
        let parts: Vec<_> = parts.collect();
        Ok(Self::stored_path(parts.iter().map(|p| p.as_ref())))
    }

    /// The stored (URI-encoded) form of a relative path made of raw segments.
    pub fn stored_path<'a>(segments: impl IntoIterator<Item = &'a str>) -> String {
        let joined: Vec<&str> = segments.into_iter().collect();
        uri::encode(&joined.join("/"))
    }
}

/// Iceberg paths: absolute, as Iceberg metadata names files.
impl TableLocation {
    /// The table's root as Iceberg paths start: a plain absolute path for
    /// local tables, the URL otherwise (no trailing `/`).
    pub fn iceberg_root(&self) -> String {
        if let Some(location) = &self.iceberg_location {
            return location.trim_end_matches('/').to_string();
        }
        let url = self.url();
        let url = url.trim_end_matches('/');
        match url.strip_prefix("file://") {
            Some(path) => path.to_string(),
            None => url.to_string(),
        }
    }

    /// The absolute Iceberg path of a stored (relative, URI-encoded) path.
    pub fn iceberg_path(&self, stored: &str) -> String {
        let relative = crate::values::uri::decode(stored).unwrap_or_else(|_| stored.to_string());
        format!("{}/{relative}", self.iceberg_root())
    }

    /// The object path of an absolute Iceberg path under this table.
    pub fn from_iceberg_path(&self, path: &str) -> Result<Path> {
        let root = self.iceberg_root();
        let relative = match path.strip_prefix(&root).and_then(|rest| rest.strip_prefix('/')) {
            Some(relative) => relative.to_string(),
            // Written at another location (the table was moved): our Iceberg
            // files all sit in `metadata/`.
            None => match path.rsplit_once("/metadata/") {
                Some((_, name)) if !name.contains('/') => format!("metadata/{name}"),
                _ => {
                    return Err(Error::Format(format!(
                        "Iceberg file {path} is not under the table location {root}"
                    )));
                }
            },
        };
        self.resolve(&crate::values::uri::encode(&relative))
    }

    /// Delete files this commit attempt wrote (best effort: they are ours
    /// and nothing references them).
    pub async fn delete_quietly(&self, paths: Vec<Path>) {
        for path in paths {
            let _ = self.store.delete(&path).await;
        }
    }
}

/// A fresh `<prefix>-<uuid>` name for a table whose file prefix is `prefix`
/// (the location a commit runs on may not know the prefix).
pub fn fresh_name_of(prefix: Option<&str>) -> String {
    let uuid = uuid::Uuid::new_v4();
    match prefix {
        Some(prefix) => format!("{prefix}-{uuid}"),
        None => uuid.to_string(),
    }
}
