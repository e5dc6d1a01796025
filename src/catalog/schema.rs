//! The warehouse as a DataFusion schema.
//!
//! Tables in the warehouse are loaded on demand, each lookup from the latest
//! committed metadata version, so a statement always sees every commit made
//! before it started — also by other processes. Tables that are not ours
//! (`CREATE EXTERNAL TABLE …`, views, memory tables) are kept in memory beside
//! them, so plain DataFusion statements keep working in the same schema.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::execution::runtime_env::RuntimeEnv;

use super::definitions::{DefinitionKind, SessionLink};
use super::metadata_tables::metadata_table;
use super::read_only::ReadOnly;
use super::warehouse::{Warehouse, check_table_name};
use crate::error::Error;
use crate::provider::HiddenPartitionsTable;
use crate::store::commit::VersionDoc;
use crate::store::url::parse_location;
use crate::store::{TableLocation, Versioned};
use crate::table::Table;

#[derive(Debug)]
pub struct WarehouseSchema {
    warehouse: Warehouse,
    runtime: Arc<RuntimeEnv>,
    names: RwLock<BTreeSet<String>>,
    /// Names renamed away (last listing, lookups and renames since): their
    /// directory holds a table of another name now.
    moved: RwLock<BTreeSet<String>>,
    /// Directories of the last listing that may be namespaces (`<ns>.db`).
    namespace_dirs: RwLock<Vec<String>>,
    /// Views and external tables stored with the warehouse (last listing,
    /// and those created or dropped since).
    definitions: RwLock<HashMap<String, DefinitionKind>>,
    others: RwLock<HashMap<String, Arc<dyn TableProvider>>>,
    /// The session that plans the stored definitions and URL tables.
    session: SessionLink,
}

impl WarehouseSchema {
    pub fn new(warehouse: Warehouse, runtime: Arc<RuntimeEnv>) -> Self {
        Self {
            warehouse,
            runtime,
            names: RwLock::default(),
            moved: RwLock::default(),
            namespace_dirs: RwLock::default(),
            definitions: RwLock::default(),
            others: RwLock::default(),
            session: SessionLink::default(),
        }
    }

    /// Plan stored views, external tables and URL tables in the session
    /// whose state this is (see `SessionContext::state_weak_ref`).
    pub fn attach_session(&self, state: std::sync::Weak<parking_lot::RwLock<SessionState>>) {
        self.session.attach(state);
    }

    /// The attached session, weakly.
    pub fn session_weak(&self) -> Option<std::sync::Weak<parking_lot::RwLock<SessionState>>> {
        self.session.weak()
    }

    /// A copy of the attached session's current state.
    pub fn session_state(&self) -> Option<SessionState> {
        self.session.state()
    }

    /// Whether `name` is a stored view or external table (as last seen).
    pub fn definition_kind(&self, name: &str) -> Option<DefinitionKind> {
        self.definitions.read().ok()?.get(name).copied()
    }

    /// Note that `name` is now stored as `kind` (`None`: no longer).
    pub fn set_definition(&self, name: &str, kind: Option<DefinitionKind>) {
        if let Ok(mut guard) = self.definitions.write() {
            match kind {
                Some(kind) => guard.insert(name.to_string(), kind),
                None => guard.remove(name),
            };
        }
    }

    pub fn warehouse(&self) -> &Warehouse {
        &self.warehouse
    }

    /// Re-read the list of tables from storage.
    pub async fn refresh(&self) -> crate::error::Result<()> {
        let listing = match self.warehouse.list().await {
            Ok(listed) => listed,
            Err(Error::ObjectStore(e)) => {
                return Err(Error::Invalid(format!(
                    "cannot list the warehouse at {}: {}",
                    self.warehouse.place().url(),
                    crate::error::describe_error(&e)
                )));
            }
            Err(e) => return Err(e),
        };
        if let Ok(mut guard) = self.names.write() {
            *guard = listing.tables.into_iter().collect();
        }
        if let Ok(mut guard) = self.moved.write() {
            *guard = listing.moved.into_iter().collect();
        }
        if let Ok(mut guard) = self.namespace_dirs.write() {
            *guard = listing.namespaces;
        }
        if let Ok(mut guard) = self.definitions.write() {
            *guard = listing.definitions.into_iter().collect();
        }
        Ok(())
    }

    pub fn runtime(&self) -> &Arc<RuntimeEnv> {
        &self.runtime
    }

    /// The directories of the last [`refresh`](Self::refresh) that may be namespaces.
    pub fn namespace_dirs(&self) -> Vec<String> {
        self.namespace_dirs.read().map(|n| n.clone()).unwrap_or_default()
    }

    /// Resolve a `LOCATION` string (path or URL) to a table location.
    /// The store is the one registered with the session for its URL; a new
    /// one (from the warehouse's storage options) is registered first.
    pub fn resolve_location(&self, location: &str) -> crate::error::Result<TableLocation> {
        let place = parse_location(location)?;
        let store = match self.runtime.object_store(&place.store_url) {
            Ok(store) => store,
            Err(_) => {
                let store = self.warehouse.build_store(&place)?;
                self.runtime
                    .register_object_store(place.store_url.as_ref(), Arc::clone(&store));
                store
            }
        };
        Ok(TableLocation::new(store, place.store_url, place.root)
            .with_cache(Arc::clone(&self.warehouse.cache))
            .with_options(self.warehouse.options.clone())
            .with_requests(Arc::clone(&self.warehouse.requests)))
    }

    /// Where table `name` lives (linked location or inside the warehouse).
    pub async fn location_of(&self, name: &str) -> crate::error::Result<TableLocation> {
        Ok(self.entry(name).await?.location)
    }

    /// Load table `name` at its latest version, if it exists. Metadata that
    /// cannot be read is an error naming the table, the version file, the
    /// problem and the way out.
    pub async fn load_table(&self, name: &str) -> crate::error::Result<Option<HiddenPartitionsTable>> {
        match self.load_table_as_stored(name).await {
            Err(Error::Format(problem)) => Err(Error::Format(format!(
                "table {name}: {problem}; DROP TABLE {name} ends the table (keeping its files)"
            ))),
            Err(Error::ObjectStore(e)) => Err(Error::Invalid(format!(
                "table {name} cannot be read: {}",
                crate::error::describe_error(&e)
            ))),
            other => other,
        }
    }

    /// What [`Self::load_table`] reads, errors as the layers below say them.
    async fn load_table_as_stored(&self, name: &str) -> crate::error::Result<Option<HiddenPartitionsTable>> {
        if check_table_name(name).is_err() {
            return Ok(None);
        }
        if let Some(t) = self.others.read().ok().and_then(|o| o.get(name).cloned())
            && let Some(f) = crate::formats::as_foreign(&t)
        {
            if let Some(writer) = f.writer_table().await? {
                return Ok(Some(writer));
            }
            return Err(Error::Invalid(format!(
                "{name} is {} table, which hidden-partitions reads but does not change",
                crate::formats::a_format(f.format())
            )));
        }
        // A name this session saw as a live warehouse table stays one until
        // its chain ends (a tombstone): then look for a link again. (A link
        // can change without the linked table ending, so links are always
        // looked up.)
        let inside = self.warehouse.table_location(name);
        let mut loaded = None;
        let mut location = inside.clone();
        if inside.last_seen().is_some()
            && !self.is_moved(name)
            && let Some(l) = inside.load_latest().await?
            && l.table().is_some()
        {
            loaded = Some(l);
        }
        if loaded.is_none() {
            let (entry, hint) = self.entry_and_hint(name).await?;
            if entry.moved {
                return Ok(None);
            }
            location = entry.location;
            loaded = match (entry.linked, hint) {
                (false, hint) => location.load_latest_from(hint).await?,
                (true, _) => location.load_latest().await?,
            };
        }
        // At a LOCATION of its own (not in the warehouse, as a renamed table is).
        let linked = location.url() != inside.url() && !self.warehouse.holds(&location.url());
        let Some(loaded) = loaded else {
            return Ok(None);
        };
        let version = loaded.version;
        let VersionDoc::Table(metadata) = loaded.into_doc() else {
            return Ok(None);
        };
        let version = Versioned { version, metadata };
        let table = HiddenPartitionsTable::try_new(Table::new(name, location), version)?;
        Ok(Some(match (&self.warehouse.namespace, linked) {
            (_, true) => table.with_location_clause()?,
            (Some(ns), false) => table.in_schema(ns)?,
            (None, false) => table,
        }))
    }

    /// Register a newly created table of ours.
    pub fn add_name(&self, name: &str) {
        if let Ok(mut guard) = self.names.write() {
            guard.insert(name.to_string());
        }
    }

    /// The names of our tables as last listed (dropped ones may be among
    /// them until their tombstone is read).
    pub fn table_names_listed(&self) -> Vec<String> {
        self.names
            .read()
            .map(|n| n.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Forget a dropped table's name.
    pub fn forget_name(&self, name: &str) {
        if let Ok(mut guard) = self.names.write() {
            guard.remove(name);
        }
    }

    /// Note whether `name` was renamed away (its directory is another
    /// table's), as a lookup or a rename found.
    pub fn note_moved(&self, name: &str, moved: bool) {
        if let Ok(mut guard) = self.moved.write() {
            match moved {
                true => guard.insert(name.to_string()),
                false => guard.remove(name),
            };
        }
    }

    fn is_moved(&self, name: &str) -> bool {
        self.moved.read().map(|m| m.contains(name)).unwrap_or(false)
    }

    /// What `information_schema.columns` and `.views` read for each listed
    /// name (see `catalog::information_schema`): a table of ours whose
    /// metadata cannot be read is left out instead of failing the whole
    /// listing; reading the table itself says what is wrong.
    pub async fn table_for_listing(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        match SchemaProvider::table(self, name).await {
            Err(_) if self.is_listed(name) => Ok(None),
            found => found,
        }
    }

    /// Whether the last listing (or a statement since) found `name` as a
    /// table, view or external table of this warehouse.
    fn is_listed(&self, name: &str) -> bool {
        self.names.read().map(|n| n.contains(name)).unwrap_or(false) || self.definition_kind(name).is_some()
    }

    /// A stored view or external table `name`, planned in the session.
    async fn stored_definition(&self, name: &str) -> crate::error::Result<Option<Arc<dyn TableProvider>>> {
        if check_table_name(name).is_err() || self.is_planning(name) {
            return Ok(None);
        }
        let Some(definition) = self.warehouse.definition(name).await? else {
            self.set_definition(name, None);
            return Ok(None);
        };
        self.set_definition(name, Some(definition.kind));
        let provider = self.definition_provider(name, &definition).await?;
        if definition.kind == DefinitionKind::External
            && let Ok(mut others) = self.others.write()
        {
            others.insert(name.to_string(), Arc::clone(&provider));
        }
        Ok(Some(provider))
    }

    /// `SELECT * FROM 'data.csv'` (DataFusion's URL tables): a name that is
    /// a file's path or URL, read as a listing table.
    async fn url_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if !super::url_tables::looks_like_file(name) {
            return Ok(None);
        }
        let Some(state) = self.session_state() else {
            return Ok(None);
        };
        super::stores::register_stores(self, &format!("'{}'", name.replace('\'', "''")));
        Ok(Some(super::url_tables::url_table(&state, name).await?))
    }

    pub fn has_other(&self, name: &str) -> bool {
        self.others.read().map(|o| o.contains_key(name)).unwrap_or(false)
    }
}

#[async_trait]
impl SchemaProvider for WarehouseSchema {
    fn table_names(&self) -> Vec<String> {
        let mut names: BTreeSet<String> = self.names.read().map(|n| n.clone()).unwrap_or_default();
        if let Ok(others) = self.others.read() {
            names.extend(others.keys().cloned());
        }
        if let Ok(definitions) = self.definitions.read() {
            names.extend(definitions.keys().cloned());
        }
        names.into_iter().collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(t) = latest_opened(&self.others, name).await? {
            return Ok(Some(t));
        }
        // "t$files" / "t@<snapshot>" of an Iceberg or Delta table registered here.
        if let Some(i) = name.find(['@', '$'])
            && let Some(base) = self.others.read().ok().and_then(|o| o.get(&name[..i]).cloned())
            && let Some(found) = derived_of_foreign(&base, name, i).await?
        {
            return Ok(Some(found));
        }
        // "t@<snapshot>", "t$files", "t$changes(…)" of a table of ours, or of
        // a foreign one registered in an earlier session (definition stored).
        if let Some(i) = name.find(['@', '$']) {
            let (table, suffix) = (&name[..i], &name[i + 1..]);
            let Some(t) = self.load_table(table).await? else {
                if !self.has_other(table)
                    && let Some(base) = self.stored_definition(table).await?
                {
                    return derived_of_foreign(&base, name, i).await;
                }
                return Ok(None);
            };
            if name[i..].starts_with('@') {
                return Ok(Some(Arc::new(t.at(suffix).await?)));
            }
            if let Some(request) = crate::provider::changes::ChangesRequest::from_kind(suffix) {
                return Ok(Some(t.changes(&request?).await?));
            }
            let mem = metadata_table(&t.table().location, t.metadata(), suffix).await?;
            return Ok(Some(Arc::new(ReadOnly::new(Arc::new(mem), name, table))));
        }
        if let Some(t) = self.load_table(name).await? {
            return Ok(Some(Arc::new(t)));
        }
        if let Some(t) = self.stored_definition(name).await? {
            return Ok(Some(t));
        }
        self.url_table(name).await
    }

    fn register_table(&self, name: String, table: Arc<dyn TableProvider>) -> Result<Option<Arc<dyn TableProvider>>> {
        if self.names.read().map(|n| n.contains(&name)).unwrap_or(false) {
            return Err(DataFusionError::Plan(format!(
                "table {name} already exists in the warehouse"
            )));
        }
        let mut others = self
            .others
            .write()
            .map_err(|_| DataFusionError::Internal("lock poisoned".into()))?;
        Ok(others.insert(name, table))
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(t) = self.others.write().ok().and_then(|mut o| o.remove(name)) {
            return Ok(Some(t));
        }
        // DataFusion's own DROP TABLE (when SQL bypasses the statement layer)
        // lands here, synchronously: drop on a helper thread so the async
        // object store calls get their own executor. Plain DROP semantics.
        let name_owned = name.to_string();
        let this = self;
        let result = std::thread::scope(|s| {
            s.spawn(|| {
                futures::executor::block_on(async {
                    let table = this.load_table(&name_owned).await?;
                    if let Some(t) = table {
                        this.drop_table(&name_owned, false).await?;
                        return Ok::<_, Error>(Some(Arc::new(t) as Arc<dyn TableProvider>));
                    }
                    Ok(None)
                })
            })
            .join()
        });
        match result {
            Ok(r) => Ok(r?),
            Err(_) => Err(DataFusionError::Execution(format!("dropping table {name} failed"))),
        }
    }

    /// What `information_schema.tables` (and so `SHOW TABLES`) asks for each
    /// name: a table whose metadata cannot be read is still listed as a
    /// table, so one damaged table does not hide every other one; reading
    /// it reports what is wrong.
    async fn table_type(&self, name: &str) -> Result<Option<datafusion::logical_expr::TableType>> {
        use datafusion::logical_expr::TableType;
        if self.definition_kind(name) == Some(DefinitionKind::View) && !self.has_other(name) {
            // Listed without planning the view (SHOW TABLES stays one LIST).
            return Ok(Some(TableType::View));
        }
        match self.table(name).await {
            Ok(t) => Ok(t.map(|t| t.table_type())),
            Err(_) if self.is_listed(name) => Ok(Some(TableType::Base)),
            Err(e) => Err(e),
        }
    }

    fn table_exist(&self, name: &str) -> bool {
        self.has_other(name) || self.is_listed(name)
    }
}

/// Table `name` of `opened` (foreign tables opened by a schema), moved on
/// to its newer version when it follows one (an Iceberg table opened by its
/// directory or through a catalog): each statement sees the latest.
pub(crate) async fn latest_opened(
    opened: &RwLock<HashMap<String, Arc<dyn TableProvider>>>,
    name: &str,
) -> Result<Option<Arc<dyn TableProvider>>> {
    let Some(t) = opened.read().ok().and_then(|o| o.get(name).cloned()) else {
        return Ok(None);
    };
    if let Some(f) = crate::formats::as_foreign(&t)
        && let Some(newer) = f.newer().await?
    {
        let newer: Arc<dyn TableProvider> = Arc::new(newer);
        if let Ok(mut opened) = opened.write() {
            opened.insert(name.to_string(), Arc::clone(&newer));
        }
        return Ok(Some(newer));
    }
    Ok(Some(t))
}

/// A metadata table (`"t$files"`) or time travel (`"t@123"`) of a foreign
/// table registered as `base`; `None` when `base` is not one.
async fn foreign_lookup(
    base: &Arc<dyn TableProvider>,
    name: &str,
) -> crate::error::Result<Option<Arc<dyn TableProvider>>> {
    let Some(table) = crate::formats::as_foreign(base) else {
        return Ok(None);
    };
    if let Some((_, selector)) = name.split_once('@') {
        return Ok(Some(Arc::new(table.at(selector).await?)));
    }
    if let Some((_, kind)) = name.split_once('$') {
        if let Some(request) = crate::provider::changes::ChangesRequest::from_kind(kind) {
            return Ok(Some(table.changes(&request?).await?));
        }
        let (location, metadata) = table.metadata_for(kind).await?;
        let mem = crate::catalog::metadata_tables::metadata_table(location, &metadata, kind).await?;
        return Ok(Some(Arc::new(mem)));
    }
    Ok(None)
}

/// `name` = `"t$files"` / `"t@<snapshot>"` (`name[at..]` the suffix) of
/// foreign table `base`; metadata tables are read-only.
pub(crate) async fn derived_of_foreign(
    base: &Arc<dyn TableProvider>,
    name: &str,
    at: usize,
) -> Result<Option<Arc<dyn TableProvider>>> {
    let Some(found) = foreign_lookup(base, name).await? else {
        return Ok(None);
    };
    if name[at..].starts_with('$') {
        return Ok(Some(Arc::new(ReadOnly::new(found, name, &name[..at]))));
    }
    Ok(Some(found))
}
