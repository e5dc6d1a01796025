//! The warehouse in the terms of the Iceberg REST catalog: namespaces,
//! table identifiers, `LoadTableResult`s and commits — what `serve/`
//! answers over HTTP. Every operation is the one SQL does (CREATE SCHEMA,
//! CREATE TABLE, DROP, ALTER TABLE … RENAME TO), through the same session.
//!
//! | Iceberg                         | warehouse                                  |
//! |---------------------------------|--------------------------------------------|
//! | namespace `public`              | the warehouse's own schema (tables at its root) |
//! | namespace `ns`                  | schema `ns` (`<warehouse>/ns.db/`)          |
//! | namespace properties            | kept in the namespace's marker (`.namespace`) |
//! | table `ns.t`                    | table `ns.t`; `metadata-location` its latest `v<N>.metadata.json`, which is Iceberg metadata as it is |
//! | drop without purge              | the table ends (a tombstone), every file kept |
//! | drop with purge                 | `DROP TABLE … PURGE`: the files it owns are deleted |
//! | register                        | `CREATE TABLE t LOCATION '…'` of a table of ours stored outside the warehouse |
//!
//! Nested namespaces do not exist here (406). Views and external tables of
//! the warehouse are not served (they are not Iceberg tables of ours).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use datafusion::catalog::SchemaProvider;
use datafusion::prelude::SessionContext;
use serde_json::value::RawValue;
use serde_json::{Value as Json, json};

use super::commit;
use super::error::RestError;
use super::updates::{CommitRequest, after_creation, created_metadata, parse_schema, parse_spec};
use crate::catalog::ddl::{CreateMode, Created};
use crate::catalog::rename::RenameKind;
use crate::catalog::{Warehouse, WarehouseSchema};
use crate::error::Error;
use crate::iceberg::rest::REBASES_SNAPSHOTS;
use crate::spec::{PartitionSpec, TableMetadata};
use crate::store::TableLocation;
use crate::table::Table;

/// The name of the warehouse's own namespace.
pub const PUBLIC: &str = "public";

type Reply<T> = std::result::Result<T, RestError>;

/// Serves a warehouse in Iceberg REST terms.
pub struct RestCatalog {
    ctx: SessionContext,
    catalog: String,
    root: Arc<WarehouseSchema>,
    /// Handed to clients with every table (`LoadTableResult.config`).
    table_config: BTreeMap<String, String>,
    /// Where else than its place in the warehouse a client may put a new
    /// table (the operator's `--allow-location` roots).
    allowed_locations: Vec<crate::store::url::StoreLocation>,
    /// One lock per table (by location): commits through this server take
    /// turns instead of racing each other for the next version (writers
    /// elsewhere still race, and the commit protocol settles that).
    commit_turns: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Each table's latest metadata as JSON text, by location, with the
    /// table's uuid and version it belongs to (a table created again at the
    /// same location has another uuid).
    metadata_texts: std::sync::Mutex<HashMap<String, (String, u64, Arc<RawValue>)>>,
}

/// A `LoadTableResult`. The metadata goes out as the JSON text it was
/// serialized to (kept per table for its latest version), not as a tree
/// built again for every load and commit.
#[derive(Debug, serde::Serialize)]
pub struct LoadTableResult {
    /// None for a staged table (nothing committed yet).
    #[serde(rename = "metadata-location", skip_serializing_if = "Option::is_none")]
    pub metadata_location: Option<String>,
    pub metadata: Arc<RawValue>,
    pub config: BTreeMap<String, String>,
}

/// `md` as the JSON text of its metadata file.
fn metadata_text(md: &TableMetadata) -> crate::error::Result<Arc<RawValue>> {
    let bytes = crate::iceberg::json::metadata_json(md)?;
    let text = String::from_utf8(bytes).map_err(|e| Error::Format(format!("table metadata is not UTF-8: {e}")))?;
    Ok(Arc::from(RawValue::from_string(text)?))
}

/// The text of version `version`'s metadata file, as written: the file is
/// read back (cheaper than serializing `md` again, and byte for byte what
/// other readers get); `md` is serialized only when the file cannot be read.
async fn written_text(
    location: &TableLocation,
    version: u64,
    md: &TableMetadata,
) -> crate::error::Result<Arc<RawValue>> {
    let read = async {
        use object_store::ObjectStoreExt;
        let got = location.store.get(&location.metadata_file(version)).await.ok()?;
        let bytes = got.bytes().await.ok()?;
        let text = String::from_utf8(Vec::from(bytes)).ok()?;
        // What the file holds is the version `md` was loaded from or committed as.
        Some(RawValue::from_string(text).ok()?)
    };
    match read.await {
        Some(text) => Ok(Arc::from(text)),
        None => metadata_text(md),
    }
}

impl RestCatalog {
    /// What a table's metadata and version say about it, for a `LoadTableResult`.
    async fn table_result(&self, location: &TableLocation, version: u64, md: &TableMetadata) -> Reply<LoadTableResult> {
        if crate::iceberg::json::iceberg_format_version(md).is_none() {
            return Err(RestError::bad_request(format!(
                "table at {} is not an Iceberg table (it is in this engine's legacy form, e.g. a nanosecond TIME column); it cannot be served",
                location.url()
            )));
        }
        let key = location.url();
        let known = {
            let texts = self.metadata_texts.lock().unwrap_or_else(|e| e.into_inner());
            texts
                .get(&key)
                .filter(|(uuid, v, _)| *uuid == md.table_uuid && *v == version)
                .map(|(_, _, text)| Arc::clone(text))
        };
        let metadata = match known {
            Some(text) => text,
            None => {
                let text = written_text(location, version, md).await?;
                let mut texts = self.metadata_texts.lock().unwrap_or_else(|e| e.into_inner());
                if texts
                    .get(&key)
                    .is_none_or(|(uuid, v, _)| *uuid != md.table_uuid || *v < version)
                {
                    texts.insert(key, (md.table_uuid.clone(), version, Arc::clone(&text)));
                }
                text
            }
        };
        let root = md.location.clone().unwrap_or_else(|| location.iceberg_root());
        Ok(LoadTableResult {
            metadata_location: Some(format!("{root}/metadata/v{version}.metadata.json")),
            metadata,
            config: self.table_config.clone(),
        })
    }
}

/// One namespace level, as a string; nested namespaces are refused.
fn single(namespace: &[String]) -> Reply<&str> {
    match namespace {
        [one] if !one.is_empty() => Ok(one),
        [] | [_] => Err(RestError::bad_request("a namespace needs a name")),
        more => Err(RestError::unsupported(format!(
            "namespace {} is nested; this catalog's namespaces have one level",
            more.join(".")
        ))),
    }
}

fn object<'a>(body: &'a Json, key: &str) -> Option<&'a serde_json::Map<String, Json>> {
    body.get(key).and_then(Json::as_object)
}

fn string_map(body: &Json, key: &str) -> Reply<BTreeMap<String, String>> {
    let Some(map) = object(body, key) else {
        return match body.get(key) {
            None | Some(Json::Null) => Ok(BTreeMap::new()),
            Some(other) => Err(RestError::bad_request(format!(
                "{key:?} must be an object of strings, not {other}"
            ))),
        };
    };
    map.iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.clone(), s.to_string())),
            None => Err(RestError::bad_request(format!(
                "{key:?}: the value of {k:?} must be a string"
            ))),
        })
        .collect()
}

/// `{"namespace": ["a"], "name": "t"}` as (namespace, name).
fn identifier(doc: Option<&Json>) -> Reply<(Vec<String>, String)> {
    let doc = doc.ok_or_else(|| RestError::bad_request("a table identifier is missing"))?;
    let namespace = doc
        .get("namespace")
        .and_then(Json::as_array)
        .map(|levels| levels.iter().filter_map(|l| l.as_str().map(str::to_string)).collect())
        .ok_or_else(|| RestError::bad_request(format!("identifier without a namespace: {doc}")))?;
    let name = doc
        .get("name")
        .and_then(Json::as_str)
        .ok_or_else(|| RestError::bad_request(format!("identifier without a name: {doc}")))?;
    Ok((namespace, name.to_string()))
}

/// A name as a quoted SQL identifier: REST names are exact strings, which
/// SQL keeps only when quoted (`MyNs` is `myns` unquoted, `a.b` two parts).
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn same_place(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim_end_matches('/');
        s.strip_prefix("file://").unwrap_or(s).to_string()
    };
    norm(a) == norm(b)
}

impl RestCatalog {
    /// Serve `warehouse`; `table_config` goes to clients with each table
    /// (say, `s3.endpoint`; see `serve::table_config`).
    pub async fn open(
        warehouse: Warehouse,
        table_config: BTreeMap<String, String>,
        allowed_locations: &[String],
    ) -> crate::error::Result<Self> {
        let allowed_locations = allowed_locations
            .iter()
            .map(|root| crate::store::url::parse_location(root))
            .collect::<crate::error::Result<Vec<_>>>()?;
        let ctx = crate::session::session_with(warehouse).await?;
        let (catalog, schema) = {
            let state = ctx.state();
            let options = &state.config_options().catalog;
            (options.default_catalog.clone(), options.default_schema.clone())
        };
        let root = ctx
            .catalog(&catalog)
            .and_then(|c| c.schema(&schema))
            .and_then(|s| s.downcast_arc_warehouse())
            .ok_or_else(|| Error::Invalid("the session has no warehouse schema".into()))?;
        Ok(Self {
            ctx,
            catalog,
            root,
            table_config,
            allowed_locations,
            commit_turns: Default::default(),
            metadata_texts: Default::default(),
        })
    }

    /// `GET /v1/config`.
    pub fn config(&self, endpoints: &[&str]) -> Json {
        json!({"defaults": {REBASES_SNAPSHOTS: "true"}, "overrides": {}, "endpoints": endpoints})
    }

    /// The schema of `namespace` (registered with the session when another
    /// process created it since).
    async fn schema(&self, namespace: &[String]) -> Reply<Arc<WarehouseSchema>> {
        let name = single(namespace)?;
        if name == PUBLIC {
            return Ok(Arc::clone(&self.root));
        }
        let missing = || RestError::no_such_namespace(name);
        if crate::catalog::warehouse::check_namespace_name(name).is_err() {
            return Err(missing());
        }
        let catalog = self.ctx.catalog(&self.catalog).ok_or_else(missing)?;
        if catalog.schema(name).is_none() {
            if !self.root.warehouse().namespace_exists(name).await? {
                return Err(missing());
            }
            crate::catalog::namespace::create_schema(&self.ctx, &quoted(name), true).await?;
        }
        let schema = catalog.schema(name).ok_or_else(missing)?;
        // Dropped by another process since.
        if !self.root.warehouse().namespace_exists(name).await? {
            let _ = catalog.deregister_schema(name, true);
            return Err(missing());
        }
        schema.downcast_arc_warehouse().ok_or_else(missing)
    }

    /// `GET /v1/namespaces[?parent=…]`: `public` and every schema.
    pub async fn list_namespaces(&self, parent: &[String]) -> Reply<Json> {
        if !parent.is_empty() {
            self.schema(parent).await?;
            return Ok(json!({"namespaces": []}));
        }
        let listing = self.root.warehouse().list().await?;
        let mut names = vec![PUBLIC.to_string()];
        for name in listing.namespaces {
            if self.root.warehouse().namespace_exists(&name).await? {
                names.push(name);
            }
        }
        let namespaces: Vec<Json> = names.into_iter().map(|n| json!([n])).collect();
        Ok(json!({"namespaces": namespaces}))
    }

    /// `POST /v1/namespaces`.
    pub async fn create_namespace(&self, body: &Json) -> Reply<Json> {
        let levels: Vec<String> = body
            .get("namespace")
            .and_then(Json::as_array)
            .map(|l| l.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
            .ok_or_else(|| RestError::bad_request("a namespace to create needs \"namespace\": [name]"))?;
        let name = single(&levels)?;
        let properties = string_map(body, "properties")?;
        if name == PUBLIC {
            return Err(RestError::already_exists(format!("namespace {PUBLIC} already exists")));
        }
        crate::catalog::warehouse::check_namespace_name(name)?;
        if self.schema(&levels).await.is_ok() {
            return Err(RestError::already_exists(format!("namespace {name} already exists")));
        }
        crate::catalog::namespace::create_schema(&self.ctx, &quoted(name), false)
            .await
            .map_err(|e| match e {
                Error::Invalid(m) if m.contains("already exists") => RestError::already_exists(m),
                other => other.into(),
            })?;
        if !properties.is_empty() {
            self.root
                .warehouse()
                .set_namespace_properties(Some(name), &properties)
                .await?;
        }
        Ok(json!({"namespace": [name], "properties": properties}))
    }

    fn namespace_key<'a>(&self, namespace: &'a [String]) -> Reply<Option<&'a str>> {
        let name = single(namespace)?;
        Ok((name != PUBLIC).then_some(name))
    }

    /// `GET /v1/namespaces/{ns}`.
    pub async fn load_namespace(&self, namespace: &[String]) -> Reply<Json> {
        self.schema(namespace).await?;
        let properties = self
            .root
            .warehouse()
            .namespace_properties(self.namespace_key(namespace)?)
            .await?;
        Ok(json!({"namespace": namespace, "properties": properties}))
    }

    /// `DELETE /v1/namespaces/{ns}`: refused while it holds tables.
    pub async fn drop_namespace(&self, namespace: &[String]) -> Reply<()> {
        let schema = self.schema(namespace).await?;
        let name = single(namespace)?;
        if name == PUBLIC {
            return Err(RestError::bad_request(format!(
                "namespace {PUBLIC} is the warehouse itself; it cannot be dropped"
            )));
        }
        schema.refresh().await?;
        let mut tables = Vec::new();
        for table in schema.table_names() {
            if !matches!(schema.table_type(&table).await, Ok(None)) {
                tables.push(table);
            }
        }
        if !tables.is_empty() {
            return Err(RestError::new(
                409,
                "NamespaceNotEmptyException",
                format!("namespace {name} is not empty (it holds {})", tables.join(", ")),
            ));
        }
        crate::catalog::namespace::drop_schema(&self.ctx, &quoted(name), false, false).await?;
        Ok(())
    }

    /// `POST /v1/namespaces/{ns}/properties`.
    pub async fn update_namespace_properties(&self, namespace: &[String], body: &Json) -> Reply<Json> {
        self.schema(namespace).await?;
        let key = self.namespace_key(namespace)?;
        let updates = string_map(body, "updates")?;
        let removals: Vec<String> = match body.get("removals") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(items)) => items.iter().filter_map(|i| i.as_str().map(str::to_string)).collect(),
            Some(other) => {
                return Err(RestError::bad_request(format!(
                    "\"removals\" must be a list, not {other}"
                )));
            }
        };
        if let Some(both) = removals.iter().find(|k| updates.contains_key(*k)) {
            return Err(RestError::new(
                422,
                "UnprocessableEntityException",
                format!("property {both:?} is both updated and removed"),
            ));
        }
        let warehouse = self.root.warehouse();
        let mut properties = warehouse.namespace_properties(key).await?;
        let mut removed = Vec::new();
        let mut missing = Vec::new();
        for k in &removals {
            match properties.remove(k) {
                Some(_) => removed.push(k.clone()),
                None => missing.push(k.clone()),
            }
        }
        let updated: Vec<String> = updates.keys().cloned().collect();
        properties.extend(updates);
        warehouse.set_namespace_properties(key, &properties).await?;
        Ok(json!({"updated": updated, "removed": removed, "missing": missing}))
    }

    /// `GET /v1/namespaces/{ns}/tables`: the tables of ours (not views or
    /// external tables).
    pub async fn list_tables(&self, namespace: &[String]) -> Reply<Json> {
        let schema = self.schema(namespace).await?;
        schema.refresh().await?;
        let mut identifiers = Vec::new();
        for name in schema.table_names_listed() {
            match schema.load_table(&name).await {
                Ok(None) => {}
                // A table that cannot be read is still a table (loading it says why).
                Ok(Some(_)) | Err(_) => identifiers.push(json!({"namespace": namespace, "name": name})),
            }
        }
        Ok(json!({"identifiers": identifiers}))
    }

    async fn load(
        &self,
        namespace: &[String],
        name: &str,
    ) -> Reply<(Arc<WarehouseSchema>, crate::provider::HiddenPartitionsTable)> {
        let schema = self.schema(namespace).await?;
        if crate::catalog::warehouse::check_table_name(name).is_err() {
            return Err(RestError::no_such_table(&namespace.join("."), name));
        }
        match schema.load_table(name).await? {
            Some(t) => Ok((schema, t)),
            None => Err(RestError::no_such_table(&namespace.join("."), name)),
        }
    }

    /// `GET /v1/namespaces/{ns}/tables/{t}`.
    pub async fn load_table(&self, namespace: &[String], name: &str) -> Reply<LoadTableResult> {
        let (_, table) = self.load(namespace, name).await?;
        self.table_result(&table.table().location, table.version(), table.metadata())
            .await
    }

    /// Whether table `name` exists (`HEAD`).
    pub async fn table_exists(&self, namespace: &[String], name: &str) -> Reply<()> {
        self.load(namespace, name).await.map(|_| ())
    }

    /// The `LOCATION` clause a requested location means: none when it is
    /// the table's place in the warehouse, the location when it lies under
    /// a root the operator allows (`--allow-location`); anything else is
    /// refused without being looked at (a client never learns what is
    /// there, nor makes the server write outside its warehouse).
    fn location_clause(&self, schema: &WarehouseSchema, name: &str, requested: Option<&str>) -> Reply<Option<String>> {
        let Some(requested) = requested else { return Ok(None) };
        let own = schema.warehouse().table_location(name).iceberg_root();
        if same_place(requested, &own) {
            return Ok(None);
        }
        let allowed: Vec<String> = self.allowed_locations.iter().map(|r| r.url()).collect();
        let refused = || {
            RestError::new(
                403,
                "ForbiddenException",
                format!(
                    "location {requested:?}: a new table {name} is placed at {own}{}; leave \"location\" out",
                    match allowed.is_empty() {
                        true => String::new(),
                        false => format!(" or under {}", allowed.join(", ")),
                    }
                ),
            )
        };
        let absolute = requested.contains("://") || requested.starts_with('/');
        let place = match absolute {
            true => crate::store::url::parse_location(requested).map_err(|_| refused())?,
            false => return Err(refused()),
        };
        let inside =
            |root: &crate::store::url::StoreLocation| place.overlap(root) == crate::store::url::Overlap::Inside;
        match self.allowed_locations.iter().any(inside) {
            true => Ok(Some(requested.to_string())),
            false => Err(refused()),
        }
    }

    /// `POST /v1/namespaces/{ns}/tables` (also staged: nothing is written
    /// but the table's directories, which some clients write into before
    /// they commit).
    pub async fn create_table(&self, namespace: &[String], body: &Json) -> Reply<LoadTableResult> {
        let schema = self.schema(namespace).await?;
        let name = body
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| RestError::bad_request("a table to create needs a \"name\""))?;
        let columns = parse_schema(
            body.get("schema")
                .ok_or_else(|| RestError::bad_request("a table to create needs a \"schema\""))?,
        )?;
        let mut last = crate::spec::partition::FIRST_PARTITION_FIELD_ID - 1;
        let partition_spec = match body.get("partition-spec") {
            None | Some(Json::Null) => PartitionSpec::default(),
            Some(doc) => parse_spec(doc, &columns, &[], &mut last)?,
        };
        let order = match body.get("write-order") {
            None | Some(Json::Null) => None,
            Some(doc) => Some(
                serde_json::from_value::<crate::spec::sort_order::SortOrder>(doc.clone())
                    .map_err(|e| RestError::bad_request(format!("write-order: not a sort order ({e}): {doc}")))?,
            ),
        };
        let properties = string_map(body, "properties")?;
        let location = self.location_clause(&schema, name, body.get("location").and_then(Json::as_str))?;
        let mut md = Table::initial_metadata_of(columns, partition_spec, properties)?;
        if let Some(order) = order.filter(|o| !o.is_unsorted()) {
            let id = crate::spec::sort_order::add_order(&mut md.sort_orders, order.fields);
            md.default_sort_order_id = Some(id);
            if let Err(e) = crate::spec::validate::check(&md) {
                return Err(RestError::bad_request(format!("write-order: {e}")));
            }
        }
        let Some(plan) = schema
            .plan_create(name, location.as_deref(), CreateMode::Create, false)
            .await?
        else {
            return Err(RestError::already_exists(format!("table {name} already exists")));
        };
        if body.get("stage-create").and_then(Json::as_bool) == Some(true) {
            md.location = Some(plan.location.iceberg_root());
            if let Some(dir) = plan.location.local_dir() {
                for sub in ["data", "metadata"] {
                    std::fs::create_dir_all(dir.join(sub)).map_err(|e| {
                        RestError::new(
                            500,
                            "ServiceFailureException",
                            format!("cannot create the table's directories: {e}"),
                        )
                    })?;
                }
            }
            // The client writes its files there before it commits the create.
            crate::table::creation::mark_staged(&plan.location, &md).await?;
            return Ok(LoadTableResult {
                metadata_location: None,
                metadata: metadata_text(&md)?,
                config: self.table_config.clone(),
            });
        }
        self.commit_creation(&schema, plan, md, &CommitRequest::default())
            .await?;
        self.load_table(namespace, name).await
    }

    /// Commit a new table (and the snapshots `rest` adds to it).
    async fn commit_creation(
        &self,
        schema: &WarehouseSchema,
        plan: crate::catalog::ddl::CreatePlan,
        mut md: TableMetadata,
        rest: &CommitRequest,
    ) -> Reply<()> {
        md.location = Some(plan.location.iceberg_root());
        let location = plan.location.clone().with_file_prefix(md.file_prefix.clone());
        let (prepared, md) = commit::prepare(&location, &md, rest, &plan.name).await?;
        match schema.commit_create(&plan, &md).await {
            Ok(Created::New { replaced }) => {
                crate::table::creation::clear_staged(&location).await;
                schema.finish_create(plan, replaced).await?;
                Ok(())
            }
            Ok(Created::Existed) => {
                commit::discard(&location, &prepared).await;
                Err(RestError::already_exists(format!("table {} already exists", plan.name)))
            }
            Err(e) => {
                if !e.commit_may_have_happened() {
                    commit::discard(&location, &prepared).await;
                }
                Err(e.into())
            }
        }
    }

    /// `POST /v1/namespaces/{ns}/tables/{t}`: a commit, or the creation of
    /// a staged table (`assert-create`).
    pub async fn commit_table(&self, namespace: &[String], name: &str, body: &Json) -> Reply<LoadTableResult> {
        let request = CommitRequest::parse(body)?;
        if request.creates() {
            let schema = self.schema(namespace).await?;
            if !request
                .requirements
                .iter()
                .all(|r| *r == super::updates::Requirement::AssertCreate)
            {
                return Err(RestError::bad_request(
                    "a commit that creates a table (assert-create) takes no other requirement",
                ));
            }
            let requested = request.updates.iter().find_map(|u| match u {
                super::updates::Update::SetLocation { location } => Some(location.as_str()),
                _ => None,
            });
            let location = self.location_clause(&schema, name, requested)?;
            let Some(plan) = schema
                .plan_create(name, location.as_deref(), CreateMode::Create, false)
                .await?
            else {
                return Err(RestError::already_exists(format!("table {name} already exists")));
            };
            let md = created_metadata(&request.updates, &plan.location.iceberg_root())?;
            let rest = CommitRequest {
                requirements: Vec::new(),
                updates: after_creation(&request.updates),
            };
            self.commit_creation(&schema, plan, md, &rest).await?;
            return self.load_table(namespace, name).await;
        }
        let (_, table) = self.load(namespace, name).await?;
        let handle = table.table().clone();
        let turn = {
            let mut turns = self.commit_turns.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(turns.entry(handle.location.url()).or_default())
        };
        match commit::commit(&handle, table.metadata(), &request, &turn).await? {
            Some(committed) => {
                self.table_result(&handle.location, committed.version, &committed.metadata)
                    .await
            }
            None => {
                self.table_result(&handle.location, table.version(), table.metadata())
                    .await
            }
        }
    }

    /// `POST /v1/transactions/commit`: one table's changes; several tables
    /// cannot be committed atomically here (406).
    pub async fn commit_transaction(&self, body: &Json) -> Reply<()> {
        let changes = body
            .get("table-changes")
            .and_then(Json::as_array)
            .ok_or_else(|| RestError::bad_request("a transaction needs \"table-changes\""))?;
        match changes.as_slice() {
            [] => Ok(()),
            [one] => {
                let (namespace, name) = identifier(one.get("identifier"))?;
                self.commit_table(&namespace, &name, one).await.map(|_| ())
            }
            _ => Err(RestError::unsupported(
                "this catalog commits one table at a time (a commit point per table); a transaction over several tables cannot be atomic here, so it is refused — commit each table on its own",
            )),
        }
    }

    /// `DELETE /v1/namespaces/{ns}/tables/{t}[?purgeRequested=true]`.
    pub async fn drop_table(&self, namespace: &[String], name: &str, purge: bool) -> Reply<()> {
        let (schema, _) = self.load(namespace, name).await?;
        let found = match purge {
            true => schema.drop_table(name, true).await?.found(),
            false => schema.drop_keeping_files(name).await?,
        };
        match found {
            true => Ok(()),
            false => Err(RestError::no_such_table(&namespace.join("."), name)),
        }
    }

    /// `POST /v1/tables/rename`.
    pub async fn rename_table(&self, body: &Json) -> Reply<()> {
        let (from_ns, from) = identifier(body.get("source"))?;
        let (to_ns, to) = identifier(body.get("destination"))?;
        let source = self.schema(&from_ns).await?;
        let target = self.schema(&to_ns).await?;
        let label = match Arc::ptr_eq(&source, &target) {
            true => to.clone(),
            false => format!("{}.{to}", single(&to_ns)?),
        };
        if source.load_table(&from).await?.is_none() {
            return Err(RestError::no_such_table(&from_ns.join("."), &from));
        }
        match source.rename(&from, &target, &to, &label, RenameKind::Table).await? {
            true => Ok(()),
            false => Err(RestError::no_such_table(&from_ns.join("."), &from)),
        }
    }

    /// `POST /v1/namespaces/{ns}/register`: a table of ours stored outside
    /// the warehouse, by its metadata file.
    pub async fn register_table(&self, namespace: &[String], body: &Json) -> Reply<LoadTableResult> {
        let schema = self.schema(namespace).await?;
        let name = body
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| RestError::bad_request("register needs a \"name\""))?;
        let metadata = body
            .get("metadata-location")
            .and_then(Json::as_str)
            .ok_or_else(|| RestError::bad_request("register needs a \"metadata-location\""))?;
        if body.get("overwrite").and_then(Json::as_bool) == Some(true) {
            return Err(RestError::unsupported("register with overwrite is not supported"));
        }
        let Some((root, _)) = metadata.rsplit_once("/metadata/") else {
            return Err(RestError::bad_request(format!(
                "metadata-location {metadata} is not a table's metadata/<file>"
            )));
        };
        schema
            .register_existing(name, root, CreateMode::Create)
            .await
            .map_err(|e| match e {
                Error::Invalid(m) if m.contains("no table at LOCATION") => RestError::bad_request(format!(
                    "{m}; a table written by another engine is read with CREATE EXTERNAL TABLE … STORED AS ICEBERG"
                )),
                other => other.into(),
            })?;
        self.load_table(namespace, name).await
    }
}

/// `Arc<dyn SchemaProvider>` → `Arc<WarehouseSchema>`.
trait DowncastWarehouse {
    fn downcast_arc_warehouse(self) -> Option<Arc<WarehouseSchema>>;
}

impl DowncastWarehouse for Arc<dyn SchemaProvider> {
    fn downcast_arc_warehouse(self) -> Option<Arc<WarehouseSchema>> {
        (self as Arc<dyn std::any::Any + Send + Sync>)
            .downcast::<WarehouseSchema>()
            .ok()
    }
}
