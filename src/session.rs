//! Putting the pieces into a DataFusion session.
//!
//! ```no_run
//! # async fn demo() -> hidden_partitions::Result<()> {
//! let ctx = hidden_partitions::session("./warehouse").await?;
//! hidden_partitions::execute_sql(&ctx, "CREATE TABLE t (id BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts))").await?;
//! # Ok(()) }
//! ```
//!
//! Embedding into an existing context instead: build the user's own
//! `SessionContext`, then call [`SessionContextExt::register_warehouse`];
//! nothing else of the user's configuration is replaced.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::catalog::{Warehouse, WarehouseSchema};
use crate::config::HiddenPartitionsOptions;
use crate::error::{Error, Result};
use crate::sql::{StatementResult, execute_sql};

/// A new session whose default schema is the warehouse at `dir`.
pub async fn session(dir: impl AsRef<std::path::Path>) -> Result<SessionContext> {
    session_with(Warehouse::local(dir)?).await
}

/// A new session whose default schema is `warehouse` (e.g.
/// `Warehouse::open("s3://bucket/wh", options)`).
pub async fn session_with(warehouse: Warehouse) -> Result<SessionContext> {
    let mut config = SessionConfig::new()
        .with_information_schema(true)
        .with_option_extension(HiddenPartitionsOptions::default());
    // `12345678901234567.89` is an exact decimal, as in Spark, Trino and DuckDB.
    config.options_mut().sql_parser.parse_float_as_decimal = true;
    // MIN/MAX bounds pushed into scans are merged wrongly across partitions
    // by DataFusion 55 (see `optimizer::aggregate_filter_guard`).
    config.options_mut().optimizer.enable_aggregate_dynamic_filter_pushdown = false;
    let state = with_hidden_partitions(SessionStateBuilder::new().with_config(config).with_default_features()).build();
    let ctx = SessionContext::new_with_state(with_join_key_pruning(state));
    ctx.register_warehouse(warehouse).await?;
    Ok(ctx)
}

/// `state` whose query planner first prunes our tables by join keys
/// (`optimizer::join_keys`), then plans as before.
pub fn with_join_key_pruning(state: datafusion::execution::SessionState) -> datafusion::execution::SessionState {
    use crate::optimizer::join_keys::{Installed, JoinKeyPruningPlanner, installed};
    if installed(&state) {
        return state;
    }
    let inner = Arc::clone(state.query_planner());
    let mut state = SessionStateBuilder::new_from_existing(state)
        .with_query_planner(Arc::new(JoinKeyPruningPlanner::new(inner)))
        .build();
    state.config_mut().set_extension(Arc::new(Installed));
    state
}

/// A new session on the Iceberg catalog at `url` (`sqlite:PATH`,
/// `postgresql://…`, or a REST catalog's `http(s)://…`; see
/// `catalog::clients`): its namespaces are the default catalog's schemas,
/// so its tables are `namespace.table`. `warehouse` gives the storage
/// options (and the stores) the tables are read with.
pub async fn session_with_catalog(warehouse: Warehouse, url: &str) -> Result<SessionContext> {
    use crate::catalog::clients::provider::{CatalogSchemas, Stores};
    let (options, cache) = (warehouse.options.clone(), Arc::clone(&warehouse.cache));
    let root = warehouse.place().url();
    let ctx = session_with(warehouse).await?;
    let stores = Stores {
        runtime: ctx.runtime_env(),
        options,
        cache,
        warehouse: root,
    };
    let client = crate::catalog::clients::connect(url).await?;
    let schemas = CatalogSchemas::open(client, stores).await?;
    let default = ctx.state().config_options().catalog.default_catalog.clone();
    ctx.register_catalog(default, schemas);
    Ok(ctx)
}

/// Append the partition pruning rule to `ctx`'s physical optimizer (once),
/// and add the `hidden_partitions.*` options, keeping every other setting
/// of the session.
pub fn install_physical_rule(ctx: &SessionContext) {
    let state = ctx.state_ref();
    let mut guard = state.write();
    let extensions = &mut guard.config_mut().options_mut().extensions;
    if extensions.get::<HiddenPartitionsOptions>().is_none() {
        extensions.insert(HiddenPartitionsOptions::default());
    }
    if !guard
        .analyzer()
        .rules
        .iter()
        .any(|r| r.name() == crate::optimizer::DML_CHECK_NAME)
    {
        guard.add_analyzer_rule(Arc::new(crate::optimizer::DmlCheck));
    }
    if !guard
        .analyzer()
        .rules
        .iter()
        .any(|r| r.name() == crate::optimizer::VARIANT_ORDER_NAME)
    {
        guard.add_analyzer_rule(Arc::new(crate::optimizer::VariantOrder));
    }
    if !guard
        .analyzer()
        .rules
        .iter()
        .any(|r| r.name() == crate::catalog::information_schema::LISTING_RULE_NAME)
    {
        // `information_schema.columns` without the tables that cannot be read.
        let catalogs = Arc::clone(guard.catalog_list());
        guard.add_analyzer_rule(Arc::new(crate::catalog::information_schema::ListingSkipsDamaged::new(
            catalogs,
        )));
    }
    let has_pruning = guard
        .physical_optimizers()
        .iter()
        .any(|r| r.name() == crate::optimizer::RULE_NAME);
    if has_pruning {
        return;
    }
    let mut rebuilt = SessionStateBuilder::new_from_existing(guard.clone())
        .with_physical_optimizer_rule(Arc::new(crate::optimizer::PartitionPruningRule))
        .with_physical_optimizer_rule(Arc::new(crate::optimizer::AggregateFilterGuard))
        .build();
    crate::formats::register_factories(&mut rebuilt);
    *guard = rebuilt;
}

/// Add this crate's pieces that a `SessionStateBuilder` can carry: the
/// physical optimizer rule, the analyzer rules (DML conditions as written;
/// decimal literals beside floats are floats), the `VARIANT` type planner and the `ICEBERG` /
/// `DELTA` table factories. The warehouse and
/// the SQL functions are registered on the built context with
/// [`SessionContextExt::register_warehouse`].
pub fn with_hidden_partitions(builder: SessionStateBuilder) -> SessionStateBuilder {
    let mut builder = builder;
    let analyzer = builder
        .analyzer()
        .get_or_insert_with(datafusion::optimizer::Analyzer::new);
    if !analyzer
        .rules
        .iter()
        .any(|r| r.name() == crate::optimizer::FLOAT_LITERALS_NAME)
    {
        // Before type coercion, which would cast the float to a decimal.
        let at = analyzer
            .rules
            .iter()
            .position(|r| r.name() == "type_coercion")
            .unwrap_or(0);
        analyzer
            .rules
            .insert(at, Arc::new(crate::optimizer::DecimalLiteralsBesideFloats));
    }
    let mut builder = builder
        .with_physical_optimizer_rule(Arc::new(crate::optimizer::PartitionPruningRule))
        .with_physical_optimizer_rule(Arc::new(crate::optimizer::AggregateFilterGuard))
        .with_analyzer_rule(Arc::new(crate::optimizer::DmlCheck))
        .with_type_planner(Arc::new(crate::sql::type_planner::SqlTypePlanner));
    // `CREATE EXTERNAL TABLE … STORED AS ICEBERG | DELTA`.
    for format in [crate::formats::Format::Iceberg, crate::formats::Format::Delta] {
        builder = builder.with_table_factory(
            format.name().to_string(),
            Arc::new(crate::formats::ForeignTableFactory::new(format)),
        );
    }
    builder
}

#[async_trait]
pub trait SessionContextExt {
    /// Make `warehouse` the default schema of the default catalog.
    async fn register_warehouse(&self, warehouse: Warehouse) -> Result<Arc<WarehouseSchema>>;
    /// Register `warehouse` as `catalog.schema`.
    async fn register_warehouse_as(
        &self,
        warehouse: Warehouse,
        catalog: &str,
        schema: &str,
    ) -> Result<Arc<WarehouseSchema>>;
    /// Run a script through the hidden-partitions statement layer.
    async fn execute_sql(&self, sql: &str) -> Result<Vec<StatementResult>>;
}

#[async_trait]
impl SessionContextExt for SessionContext {
    async fn register_warehouse(&self, warehouse: Warehouse) -> Result<Arc<WarehouseSchema>> {
        let (catalog, schema) = {
            let state = self.state();
            let opts = &state.config_options().catalog;
            (opts.default_catalog.clone(), opts.default_schema.clone())
        };
        self.register_warehouse_as(warehouse, &catalog, &schema).await
    }

    async fn register_warehouse_as(
        &self,
        warehouse: Warehouse,
        catalog: &str,
        schema: &str,
    ) -> Result<Arc<WarehouseSchema>> {
        // The session reads the warehouse's store (and counts its requests)
        // for our tables, CREATE EXTERNAL TABLE and COPY alike.
        self.runtime_env()
            .register_object_store(warehouse.store_url.as_ref(), Arc::clone(&warehouse.store));
        let ws = Arc::new(WarehouseSchema::new(warehouse, self.runtime_env()));
        ws.attach_session(self.state_weak_ref());
        // One LIST of the warehouse root: the table names, and the check
        // that the store can be reached at all.
        ws.refresh().await?;
        let Some(cat) = self.catalog(catalog) else {
            return Err(Error::Invalid(format!("catalog {catalog} does not exist")));
        };
        // Keep tables the user already registered in the schema being replaced.
        if let Some(old) = cat.schema(schema) {
            for name in old.table_names() {
                if let Some(t) = old.table(&name).await? {
                    use datafusion::catalog::SchemaProvider;
                    ws.register_table(name, t)?;
                }
            }
        }
        cat.register_schema(schema, Arc::clone(&ws) as _)?;
        ws.register_namespaces(cat.as_ref()).await?;
        crate::functions::register_functions(self);
        install_physical_rule(self);
        Ok(ws)
    }

    async fn execute_sql(&self, sql: &str) -> Result<Vec<StatementResult>> {
        execute_sql(self, sql).await
    }
}
