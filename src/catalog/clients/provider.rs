//! An Iceberg catalog as DataFusion sees it: a `CatalogProvider` whose
//! schemas are the catalog's namespaces, each a `SchemaProvider` of its
//! tables. A table is opened at its current metadata file
//! (`formats::iceberg::open_with_pointer`) and follows it: each statement
//! sees the latest commit, and its own commits move the catalog's pointer.
//! `"t$files"`, `"t@<snapshot>"` and the other metadata tables and time
//! travel work as for any Iceberg table.

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnv;

use super::IcebergCatalog;
use crate::catalog::schema::{derived_of_foreign, latest_opened};
use crate::error::Error;
use crate::store::TableLocation;
use crate::store::cache::ObjectCache;
use crate::store::connect::StorageOptions;
use crate::store::url::parse_location;

/// What opening a table needs besides the catalog.
#[derive(Debug, Clone)]
pub struct Stores {
    pub runtime: Arc<RuntimeEnv>,
    pub options: StorageOptions,
    pub cache: Arc<ObjectCache>,
    /// The warehouse's URL: new tables of a catalog that does not place
    /// them go to `<warehouse>/<namespace>/<table>`, as pyiceberg's do.
    pub warehouse: String,
}

impl Stores {
    /// The table whose root is at `url` (a store registered with the
    /// session for it, or a new one from the options).
    pub fn location(&self, url: &str) -> crate::error::Result<TableLocation> {
        let place = parse_location(url)?;
        let store = match self.runtime.object_store(&place.store_url) {
            Ok(store) => store,
            Err(_) => {
                let store = crate::store::connect::build_store(&place, &self.options)?;
                self.runtime
                    .register_object_store(place.store_url.as_ref(), Arc::clone(&store));
                store
            }
        };
        Ok(TableLocation::new(store, place.store_url, place.root)
            .with_cache(Arc::clone(&self.cache))
            .with_options(self.options.clone()))
    }
}

/// The root of the table whose metadata file is at `metadata`.
pub fn table_root(metadata: &str) -> crate::error::Result<&str> {
    metadata.rsplit_once("/metadata/").map(|(root, _)| root).ok_or_else(|| {
        Error::Invalid(format!(
            "metadata file {metadata} is not in a table's metadata/ directory"
        ))
    })
}

/// The catalog's namespaces as schemas.
#[derive(Debug)]
pub struct CatalogSchemas {
    client: Arc<dyn IcebergCatalog>,
    stores: Stores,
    schemas: RwLock<BTreeMap<String, Arc<NamespaceSchema>>>,
}

impl CatalogSchemas {
    /// The catalog behind `client`, its namespaces listed once.
    pub async fn open(client: Arc<dyn IcebergCatalog>, stores: Stores) -> crate::error::Result<Arc<Self>> {
        let this = Arc::new(Self {
            client,
            stores,
            schemas: RwLock::default(),
        });
        this.refresh().await?;
        Ok(this)
    }

    pub fn client(&self) -> &Arc<dyn IcebergCatalog> {
        &self.client
    }

    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    /// List the namespaces (and each one's tables) again.
    pub async fn refresh(&self) -> crate::error::Result<()> {
        let names = self.client.namespaces().await?;
        let mut schemas = BTreeMap::new();
        for name in names {
            let schema = match self.schemas.read().ok().and_then(|s| s.get(&name).cloned()) {
                Some(existing) => existing,
                None => Arc::new(NamespaceSchema::new(
                    Arc::clone(&self.client),
                    &name,
                    self.stores.clone(),
                )),
            };
            schema.refresh().await?;
            schemas.insert(name, schema);
        }
        if let Ok(mut guard) = self.schemas.write() {
            *guard = schemas;
        }
        Ok(())
    }

    /// Namespace `name`, as last listed.
    pub fn namespace(&self, name: &str) -> Option<Arc<NamespaceSchema>> {
        self.schemas.read().ok()?.get(name).cloned()
    }
}

impl CatalogProvider for CatalogSchemas {
    fn schema_names(&self) -> Vec<String> {
        self.schemas
            .read()
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        self.namespace(name).map(|s| s as Arc<dyn SchemaProvider>)
    }

    fn register_schema(&self, name: &str, _schema: Arc<dyn SchemaProvider>) -> Result<Option<Arc<dyn SchemaProvider>>> {
        Err(DataFusionError::Plan(format!(
            "schema {name}: the schemas of {} are its namespaces; CREATE SCHEMA {name} creates one there",
            self.client.describe()
        )))
    }
}

/// One namespace of a catalog.
#[derive(Debug)]
pub struct NamespaceSchema {
    client: Arc<dyn IcebergCatalog>,
    namespace: String,
    stores: Stores,
    names: RwLock<Vec<String>>,
    /// Tables opened in this session (each follows its pointer).
    opened: RwLock<HashMap<String, Arc<dyn TableProvider>>>,
}

impl NamespaceSchema {
    fn new(client: Arc<dyn IcebergCatalog>, namespace: &str, stores: Stores) -> Self {
        Self {
            client,
            namespace: namespace.to_string(),
            stores,
            names: RwLock::default(),
            opened: RwLock::default(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn client(&self) -> &Arc<dyn IcebergCatalog> {
        &self.client
    }

    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    /// List the tables again.
    pub async fn refresh(&self) -> crate::error::Result<()> {
        let names = self.client.tables(&self.namespace).await?;
        if let Ok(mut guard) = self.names.write() {
            *guard = names;
        }
        Ok(())
    }

    /// Note a table created or dropped by this session.
    pub fn note(&self, name: &str, exists: bool) {
        if let Ok(mut names) = self.names.write() {
            names.retain(|n| n != name);
            if exists {
                names.push(name.to_string());
                names.sort();
            }
        }
        if !exists && let Ok(mut opened) = self.opened.write() {
            opened.remove(name);
        }
    }

    /// Open table `name` at its current metadata file.
    async fn open(&self, name: &str) -> crate::error::Result<Option<Arc<dyn TableProvider>>> {
        let Some((metadata, pointer)) = self.client.table(&self.namespace, name).await? else {
            return Ok(None);
        };
        let location = self.stores.location(table_root(&metadata)?)?;
        let table = crate::formats::iceberg::open_with_pointer(name, location, pointer)
            .await
            .map_err(|e| {
                Error::Invalid(format!(
                    "table {}.{name} ({metadata}) cannot be read: {e}",
                    self.namespace
                ))
            })?;
        Ok(Some(Arc::new(table)))
    }
}

#[async_trait]
impl SchemaProvider for NamespaceSchema {
    fn table_names(&self) -> Vec<String> {
        self.names.read().map(|n| n.clone()).unwrap_or_default()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        // "t$files" / "t@<snapshot>": of table t.
        if let Some(i) = name.find(['@', '$'])
            && let Some(base) = Box::pin(self.table(&name[..i])).await?
            && let Some(found) = derived_of_foreign(&base, name, i).await?
        {
            return Ok(Some(found));
        }
        if let Some(t) = latest_opened(&self.opened, name).await? {
            return Ok(Some(t));
        }
        let Some(t) = self.open(name).await? else {
            return Ok(None);
        };
        if let Ok(mut opened) = self.opened.write() {
            opened.insert(name.to_string(), Arc::clone(&t));
        }
        Ok(Some(t))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.names.read().map(|n| n.iter().any(|t| t == name)).unwrap_or(false)
    }

    fn register_table(&self, name: String, _table: Arc<dyn TableProvider>) -> Result<Option<Arc<dyn TableProvider>>> {
        Err(DataFusionError::Plan(format!(
            "table {}.{name} would live in this session only; tables of {} are created with CREATE TABLE",
            self.namespace,
            self.client.describe()
        )))
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        Err(DataFusionError::Plan(format!(
            "DROP TABLE {}.{name}: drop tables of {} with DROP TABLE (handled by hidden-partitions)",
            self.namespace,
            self.client.describe()
        )))
    }
}

/// `Arc<dyn SchemaProvider>` → the namespace schema it is, if it is one.
pub fn as_namespace(schema: &Arc<dyn SchemaProvider>) -> Option<Arc<NamespaceSchema>> {
    (Arc::clone(schema) as Arc<dyn Any + Send + Sync>)
        .downcast::<NamespaceSchema>()
        .ok()
}
