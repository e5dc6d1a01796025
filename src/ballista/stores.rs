//! Reaching a table's store on the node that decoded a plan.
//!
//! A plan names a store by URL (`s3://bucket`, `file:///`). The node uses
//! the store its runtime already has for that URL (in standalone mode: the
//! client's own). Otherwise it builds one from the options the table was
//! opened with, then from the node's own `--storage-option`s (which win,
//! e.g. an endpoint that is only reachable inside the cluster), and
//! credentials from its environment, and registers it for the tasks that
//! follow.
//!
//! Every store a node opens counts what it reads ([`node_reads`]): an
//! executor prints the files and bytes it read when it stops, which shows
//! how a query's files were split over the executors.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use async_trait::async_trait;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use object_store::ObjectStore;
use object_store::path::Path;

use std::collections::HashMap;

use super::wire::LocationNode;
use crate::store::TableLocation;
use crate::store::connect::{StorageOptions, build_store};
use crate::store::observe::{ObservedStore, RequestKind, RequestObserver};
use crate::store::url::{Scheme, StoreLocation};

/// Storage options of this process (a scheduler's or executor's flags).
fn node_options() -> &'static RwLock<StorageOptions> {
    static OPTIONS: OnceLock<RwLock<StorageOptions>> = OnceLock::new();
    OPTIONS.get_or_init(Default::default)
}

/// Set the storage options this node adds to every table's own.
pub fn set_node_storage_options(options: StorageOptions) {
    if let Ok(mut guard) = node_options().write() {
        *guard = options;
    }
}

/// The table's options with the node's on top.
pub fn effective_options(table: &StorageOptions) -> StorageOptions {
    let mut merged = table.clone();
    if let Ok(node) = node_options().read() {
        for (k, v) in node.iter() {
            merged = merged.with(k, v);
        }
    }
    merged
}

/// Whether this process is a scheduler or executor (its runtimes use [`NodeStores`]).
static IS_NODE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Every store this node opened, for all its sessions and tasks.
fn opened() -> &'static DefaultObjectStoreRegistry {
    static OPENED: OnceLock<DefaultObjectStoreRegistry> = OnceLock::new();
    OPENED.get_or_init(observed_registry)
}

/// Stores built from this node's options alone, for a URL asked for before
/// any table named it. A table's own options replace them in [`opened`].
fn node_defaults() -> &'static DefaultObjectStoreRegistry {
    static DEFAULTS: OnceLock<DefaultObjectStoreRegistry> = OnceLock::new();
    DEFAULTS.get_or_init(observed_registry)
}

/// A registry whose local file system is counted in [`node_reads`].
fn observed_registry() -> DefaultObjectStoreRegistry {
    let registry = DefaultObjectStoreRegistry::new();
    if let Ok(url) = url::Url::parse("file://") {
        registry.register_store(&url, observed(Arc::new(object_store::local::LocalFileSystem::new())));
    }
    registry
}

/// What this node read from the tables' stores, for all tasks so far.
#[derive(Debug, Default)]
struct NodeReads {
    files: Mutex<HashSet<Path>>,
    bytes: AtomicU64,
    gets: AtomicU64,
}

fn reads() -> &'static Arc<NodeReads> {
    static READS: OnceLock<Arc<NodeReads>> = OnceLock::new();
    READS.get_or_init(Default::default)
}

#[async_trait]
impl RequestObserver for NodeReads {
    async fn before(&self, _kind: RequestKind, _path: &Path) -> object_store::Result<()> {
        Ok(())
    }

    fn read(&self, path: &Path, bytes: u64) {
        self.gets.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        if let Ok(mut files) = self.files.lock() {
            files.insert(path.clone());
        }
    }
}

fn observed(store: Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore> {
    Arc::new(ObservedStore::new(
        store,
        Arc::clone(reads()) as Arc<dyn RequestObserver>,
    ))
}

/// Files and bytes this node read from the tables' stores so far.
pub fn node_reads() -> ReadSummary {
    let r = reads();
    ReadSummary {
        files: r.files.lock().map(|f| f.len()).unwrap_or_default(),
        bytes: r.bytes.load(Ordering::Relaxed),
        gets: r.gets.load(Ordering::Relaxed),
    }
}

/// What a node read: distinct files, bytes, GET requests. An executor
/// prints it when it stops (`executor read 224 files, 1048576 bytes in 672 GET requests`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadSummary {
    pub files: usize,
    pub bytes: u64,
    pub gets: u64,
}

impl ReadSummary {
    const PREFIX: &'static str = "executor read ";

    /// The line an executor prints when it stops.
    pub fn line(&self) -> String {
        format!("{}{self}", Self::PREFIX)
    }

    /// The summary an executor printed, from its line of output.
    pub fn from_line(line: &str) -> Option<ReadSummary> {
        let rest = line.trim().strip_prefix(Self::PREFIX)?;
        let numbers: Vec<u64> = rest
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .filter_map(|s| s.parse().ok())
            .collect();
        match numbers[..] {
            [files, bytes, gets] => Some(ReadSummary {
                files: files as usize,
                bytes,
                gets,
            }),
            _ => None,
        }
    }
}

impl std::fmt::Display for ReadSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} files, {} bytes in {} GET requests",
            self.files, self.bytes, self.gets
        )
    }
}

/// The object store registry of a scheduler's or executor's runtimes: the
/// stores opened while decoding any plan are seen by every task (Ballista
/// gives tasks runtimes of their own).
#[derive(Debug, Default)]
pub struct NodeStores;

impl ObjectStoreRegistry for NodeStores {
    fn register_store(&self, url: &url::Url, store: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
        opened().register_store(url, store)
    }

    fn get_store(&self, url: &url::Url) -> Result<Arc<dyn ObjectStore>> {
        if let Ok(store) = opened().get_store(url) {
            return Ok(store);
        }
        if let Ok(store) = node_defaults().get_store(url) {
            return Ok(store);
        }
        // A store no plan named yet: from this node's options and environment.
        let store_url = ObjectStoreUrl::parse(&url[..url::Position::BeforePath])?;
        let place = StoreLocation {
            scheme: Scheme::of(&store_url),
            store_url: store_url.clone(),
            root: Default::default(),
        };
        if place.scheme == Scheme::Memory {
            return opened().get_store(url);
        }
        let store = build_store(&place, &effective_options(&StorageOptions::new()))
            .map_err(|e| DataFusionError::Plan(format!("this Ballista node cannot reach the table's store: {e}")))?;
        let store = observed(store);
        node_defaults().register_store(store_url.as_ref(), Arc::clone(&store));
        Ok(store)
    }
}

/// The runtime of a cluster node: spill files under `work_dir`, stores from
/// [`NodeStores`]. One per process, shared by every task: Ballista asks for
/// a runtime per task, and a new one would start with empty caches, so each
/// task would fetch the footers of its Parquet files again (data files are
/// never changed under their path, and the cache checks size and time).
pub fn node_runtime(work_dir: Option<&str>) -> Result<Arc<RuntimeEnv>> {
    static RUNTIMES: Mutex<Vec<(Option<String>, Arc<RuntimeEnv>)>> = Mutex::new(Vec::new());
    IS_NODE.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut runtimes = RUNTIMES
        .lock()
        .map_err(|_| DataFusionError::Internal("node runtimes poisoned".into()))?;
    if let Some((_, runtime)) = runtimes.iter().find(|(dir, _)| dir.as_deref() == work_dir) {
        return Ok(Arc::clone(runtime));
    }
    let mut builder = RuntimeEnvBuilder::new().with_object_store_registry(Arc::new(NodeStores));
    if let Some(dir) = work_dir {
        builder = builder.with_temp_file_path(dir);
    }
    let runtime = builder.build_arc()?;
    runtimes.push((work_dir.map(str::to_string), Arc::clone(&runtime)));
    Ok(runtime)
}

/// The store for `url`, registered with the task's runtime if it was not yet.
pub fn store_for(ctx: &TaskContext, url: &str, table_options: &StorageOptions) -> Result<Arc<dyn ObjectStore>> {
    let store_url = ObjectStoreUrl::parse(url)?;
    let runtime = ctx.runtime_env();
    if let Ok(store) = opened().get_store(store_url.as_ref()) {
        return Ok(store);
    }
    // In the client's process (standalone), its own stores.
    if !IS_NODE.load(std::sync::atomic::Ordering::Relaxed)
        && let Ok(store) = runtime.object_store(&store_url)
    {
        return Ok(store);
    }
    let place = StoreLocation {
        scheme: Scheme::of(&store_url),
        store_url: store_url.clone(),
        root: Default::default(),
    };
    if place.scheme == Scheme::Memory {
        return Err(DataFusionError::Plan(format!(
            "table store {url} is in the memory of another process: a Ballista cluster needs the table on a shared store (a directory every node sees, s3://, gs://, az://)"
        )));
    }
    let store = build_store(&place, &effective_options(table_options))
        .map_err(|e| DataFusionError::Plan(format!("this Ballista node cannot reach the table's store: {e}")))?;
    let store = observed(store);
    runtime.register_object_store(store_url.as_ref(), Arc::clone(&store));
    opened().register_store(store_url.as_ref(), Arc::clone(&store));
    Ok(store)
}

/// Options as they travel (a plain map) and back.
pub fn options_to_wire(options: &StorageOptions) -> HashMap<String, String> {
    options.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

pub fn options_from_wire(options: &HashMap<String, String>) -> StorageOptions {
    options.iter().fold(StorageOptions::new(), |o, (k, v)| o.with(k, v))
}

/// A table location as it travels.
pub fn location_to_wire(location: &TableLocation) -> LocationNode {
    LocationNode {
        store_url: location.store_url.as_str().to_string(),
        root: location.root.to_string(),
        options: options_to_wire(&location.options),
    }
}

/// A table location on this node, from what travelled.
pub fn location_from_wire(ctx: &TaskContext, node: Option<&LocationNode>) -> Result<TableLocation> {
    let node = node.ok_or_else(|| DataFusionError::Internal("a table arrived without its location".into()))?;
    let options = options_from_wire(&node.options);
    let store = store_for(ctx, &node.store_url, &options)?;
    Ok(TableLocation::new(
        store,
        ObjectStoreUrl::parse(&node.store_url)?,
        object_store::path::Path::from(node.root.as_str()),
    )
    .with_options(options))
}
