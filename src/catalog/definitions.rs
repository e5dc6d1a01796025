//! Views and external tables stored with the warehouse, so a new process
//! finds them again (as Spark's and Trino's catalogs do).
//!
//! | path under the warehouse (or `<ns>.db/`) | holds                                   |
//! |------------------------------------------|-----------------------------------------|
//! | `<name>.view`                            | `CREATE VIEW <name> AS <query>` as written |
//! | `<name>.external`                        | `CREATE EXTERNAL TABLE <name> …` as written |
//!
//! A definition is the statement text, planned again at each use:
//!
//! - a view is planned for every statement that reads it, so it sees the
//!   latest commit of every table it reads (a view planned once, as
//!   DataFusion keeps them in memory, would read the versions of the moment
//!   it was created);
//! - an external table is created from its statement at its first use in a
//!   session and kept for the session, as DataFusion keeps it.
//!
//! Dropping either removes only the definition: an external table's files
//! are never touched. A definition that cannot be planned (a table it reads
//! was dropped, its store's options are missing) is still listed; using it
//! says what is wrong.

use std::sync::{Arc, RwLock, Weak};

use datafusion::catalog::TableProvider;
use datafusion::catalog::view::ViewTable;
use datafusion::common::TableReference;
use datafusion::common::config::ConfigOptions;
use datafusion::execution::SessionState;
use datafusion::logical_expr::{CreateView, DdlStatement, LogicalPlan};
use datafusion::optimizer::Analyzer;
use datafusion::optimizer::analyzer::type_coercion::TypeCoercion;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use serde::{Deserialize, Serialize};

use super::schema::WarehouseSchema;
use super::warehouse::{Warehouse, check_table_name};
use crate::error::{Error, Result};

/// What a stored definition defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefinitionKind {
    View,
    External,
}

impl DefinitionKind {
    pub const ALL: [DefinitionKind; 2] = [DefinitionKind::View, DefinitionKind::External];

    /// The suffix of its file under the warehouse root.
    pub fn suffix(self) -> &'static str {
        match self {
            DefinitionKind::View => ".view",
            DefinitionKind::External => ".external",
        }
    }

    /// "view" / "external table", as messages name it.
    pub fn noun(self) -> &'static str {
        match self {
            DefinitionKind::View => "view",
            DefinitionKind::External => "external table",
        }
    }

    /// "a" / "an".
    pub fn article(self) -> &'static str {
        match self {
            DefinitionKind::View => "a",
            DefinitionKind::External => "an",
        }
    }

    /// The statement that removes it.
    pub fn drop_statement(self) -> &'static str {
        match self {
            DefinitionKind::View => "DROP VIEW",
            DefinitionKind::External => "DROP TABLE",
        }
    }
}

/// A stored view or external table: the statement that defines it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub kind: DefinitionKind,
    pub sql: String,
}

impl Warehouse {
    pub(crate) fn definition_path(&self, name: &str, kind: DefinitionKind) -> Path {
        self.root.clone().join(format!("{name}{}", kind.suffix()))
    }

    /// The view or external table stored as `name`, if any (one GET per kind).
    pub async fn definition(&self, name: &str) -> Result<Option<Definition>> {
        let (view, external) = futures::join!(
            self.read_definition(name, DefinitionKind::View),
            self.read_definition(name, DefinitionKind::External)
        );
        Ok(view?.or(external?))
    }

    async fn read_definition(&self, name: &str, kind: DefinitionKind) -> Result<Option<Definition>> {
        let path = self.definition_path(name, kind);
        let bytes = match self.store.get(&path).await {
            Ok(r) => r.bytes().await?,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let definition: Definition = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Format(format!("{path}: not a {} definition: {e}", kind.noun())))?;
        if definition.kind != kind {
            return Err(Error::Format(format!(
                "{path}: holds a {} definition, its name says {}",
                definition.kind.noun(),
                kind.noun()
            )));
        }
        Ok(Some(definition))
    }

    /// Store `definition` as `name`: put-if-absent unless `replace` (so of
    /// two concurrent CREATEs of one name only one succeeds); `false` when
    /// one was there.
    pub async fn put_definition(&self, name: &str, definition: &Definition, replace: bool) -> Result<bool> {
        let path = self.definition_path(name, definition.kind);
        let mut json = serde_json::to_vec_pretty(definition).map_err(|e| Error::Invalid(e.to_string()))?;
        json.push(b'\n');
        let payload = PutPayload::from(json);
        if replace {
            self.store.put(&path, payload).await?;
            return Ok(true);
        }
        crate::store::commit::put_if_absent(self.store.as_ref(), &path, payload, self.options.single_writer()).await
    }

    /// Remove the definition of `name` of `kind`; `false` when there was none.
    pub async fn remove_definition(&self, name: &str, kind: DefinitionKind) -> Result<bool> {
        let path = self.definition_path(name, kind);
        match self.store.head(&path).await {
            Ok(_) => {}
            Err(object_store::Error::NotFound { .. }) => return Ok(false),
            Err(e) => return Err(e.into()),
        }
        match self.store.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(true),
            Err(e) => Err(e.into()),
        }
    }
}

/// The name of a definition file (`v.view` → `(v, View)`).
pub fn definition_name(file: &str) -> Option<(&str, DefinitionKind)> {
    DefinitionKind::ALL
        .into_iter()
        .find_map(|kind| file.strip_suffix(kind.suffix()).map(|name| (name, kind)))
}

/// The session a schema plans its definitions with (the context's own
/// state, held weakly: the context owns the schema).
#[derive(Debug, Default)]
pub struct SessionLink(RwLock<Option<Weak<parking_lot::RwLock<SessionState>>>>);

impl SessionLink {
    pub fn attach(&self, state: Weak<parking_lot::RwLock<SessionState>>) {
        if let Ok(mut guard) = self.0.write() {
            *guard = Some(state);
        }
    }

    pub fn weak(&self) -> Option<Weak<parking_lot::RwLock<SessionState>>> {
        self.0.read().ok()?.clone()
    }

    /// A copy of the session's current state.
    pub fn state(&self) -> Option<SessionState> {
        let state = self.weak()?.upgrade()?;
        let state = state.read().clone();
        Some(state)
    }
}

/// The logical plan of a view: `CREATE VIEW … AS <query>` planned in
/// `state`.
pub async fn plan_view(state: &SessionState, sql: &str) -> Result<(LogicalPlan, Option<String>)> {
    let LogicalPlan::Ddl(DdlStatement::CreateView(cmd)) = state.create_logical_plan(sql).await? else {
        return Err(Error::Invalid(format!("not a CREATE VIEW statement: {sql}")));
    };
    let definition = cmd.definition.clone();
    Ok((view_plan(cmd)?, definition))
}

/// A planned `CREATE VIEW`'s query as a view reads it: type coercion
/// applied and column names unique, as DataFusion does for its views.
pub fn view_plan(cmd: CreateView) -> Result<LogicalPlan> {
    let input = Analyzer::with_rules(vec![Arc::new(TypeCoercion::new())]).execute_and_check(
        Arc::unwrap_or_clone(cmd.input),
        &ConfigOptions::default(),
        |_, _| {},
    )?;
    let mut seen = std::collections::HashSet::new();
    for field in input.schema().fields() {
        if !seen.insert(field.name().as_str()) {
            return Err(Error::Invalid(format!(
                "view {}: two of its columns are named {:?}; give them different names with AS",
                cmd.name,
                field.name()
            )));
        }
    }
    Ok(input)
}

/// The tables and views the query of `CREATE VIEW` statement `sql` names
/// (CTE names excluded), resolved against the session's defaults.
fn view_references(state: &SessionState, sql: &str) -> Result<Vec<TableReference>> {
    use datafusion::sql::parser::Statement as DFStatement;
    use datafusion::sql::sqlparser::ast::Statement as SqlStatement;
    let options = state.config_options();
    let statement = state.sql_to_statement(sql, &options.sql_parser.dialect)?;
    let DFStatement::Statement(statement) = statement else {
        return Err(Error::Invalid(format!("not a CREATE VIEW statement: {sql}")));
    };
    let SqlStatement::CreateView(create) = *statement else {
        return Err(Error::Invalid(format!("not a CREATE VIEW statement: {sql}")));
    };
    let query = DFStatement::Statement(Box::new(SqlStatement::Query(create.query)));
    let (references, _) =
        datafusion::sql::resolve::resolve_table_references(&query, options.sql_parser.enable_ident_normalization)?;
    let catalog = &options.catalog;
    Ok(references
        .into_iter()
        .map(|r| {
            let r = r.resolve(&catalog.default_catalog, &catalog.default_schema);
            TableReference::full(r.catalog, r.schema, r.table)
        })
        .collect())
}

/// Whether the view defined by `sql` would read `target` (a full
/// reference), directly or through the stored views it reads.
pub async fn view_reads(state: &SessionState, sql: &str, target: &TableReference) -> Result<bool> {
    let mut pending = vec![sql.to_string()];
    let mut seen = std::collections::HashSet::new();
    while let Some(sql) = pending.pop() {
        for reference in view_references(state, &sql)? {
            if reference == *target {
                return Ok(true);
            }
            if !seen.insert(reference.clone()) {
                continue;
            }
            let (Some(catalog), Some(schema)) = (reference.catalog(), reference.schema()) else {
                continue;
            };
            let Some(schema) = state.catalog_list().catalog(catalog).and_then(|c| c.schema(schema)) else {
                continue;
            };
            let Some(ws) = schema.downcast_ref::<WarehouseSchema>() else {
                continue;
            };
            if check_table_name(reference.table()).is_ok()
                && let Some(definition) = ws.warehouse().definition(reference.table()).await?
                && definition.kind == DefinitionKind::View
            {
                pending.push(definition.sql);
            }
        }
    }
    Ok(false)
}

tokio::task_local! {
    /// The definitions this task is planning: planning `CREATE EXTERNAL
    /// TABLE e` looks `e` up, which must not plan `e` again.
    static PLANNING: Vec<String>;
}

impl WarehouseSchema {
    /// Whether this task is planning the definition `name` of this schema.
    pub(crate) fn is_planning(&self, name: &str) -> bool {
        PLANNING
            .try_with(|p| {
                DefinitionKind::ALL
                    .iter()
                    .any(|&k| p.contains(&self.warehouse().definition_path(name, k).to_string()))
            })
            .unwrap_or(false)
    }

    /// Remove the stored view `name`; `false` when there is none.
    pub async fn drop_stored_view(&self, name: &str) -> Result<bool> {
        if check_table_name(name).is_err() || !self.warehouse().remove_definition(name, DefinitionKind::View).await? {
            return Ok(false);
        }
        self.set_definition(name, None);
        Ok(true)
    }

    /// The provider for a stored definition, planned in the session.
    pub(crate) async fn definition_provider(
        &self,
        name: &str,
        definition: &Definition,
    ) -> Result<Arc<dyn TableProvider>> {
        let what = format!("{} {name}", definition.kind.noun());
        let Some(state) = self.session_state() else {
            return Err(Error::Invalid(format!(
                "{what} is stored in the warehouse, but this schema is not registered with a session that can plan it"
            )));
        };
        let key = self.warehouse().definition_path(name, definition.kind).to_string();
        let mut planning = PLANNING.try_with(|p| p.clone()).unwrap_or_default();
        planning.push(key);
        let planned = PLANNING
            .scope(planning, async {
                match definition.kind {
                    DefinitionKind::View => plan_view(&state, &definition.sql)
                        .await
                        .map(|(plan, sql)| Arc::new(ViewTable::new(plan, sql)) as Arc<dyn TableProvider>),
                    DefinitionKind::External => self.create_external(&state, &definition.sql).await,
                }
            })
            .await;
        planned.map_err(|e| {
            Error::Invalid(format!(
                "{what} (stored in the warehouse) cannot be used: {e}; {} {name} removes it",
                definition.kind.drop_statement()
            ))
        })
    }

    /// The table of a `CREATE EXTERNAL TABLE` statement, made by the
    /// session's factory for its format (stores for its URLs registered first).
    async fn create_external(&self, state: &SessionState, sql: &str) -> Result<Arc<dyn TableProvider>> {
        super::stores::register_stores(self, sql);
        let LogicalPlan::Ddl(DdlStatement::CreateExternalTable(cmd)) = state.create_logical_plan(sql).await? else {
            return Err(Error::Invalid(format!("not a CREATE EXTERNAL TABLE statement: {sql}")));
        };
        let file_type = cmd.file_type.to_uppercase();
        let Some(factory) = state.table_factories().get(file_type.as_str()) else {
            return Err(Error::Invalid(format!(
                "no table factory for STORED AS {file_type} in this session"
            )));
        };
        Ok(factory.create(state, &cmd).await?)
    }
}

/// A definition's statement (`CREATE [OR REPLACE] VIEW v AS …`, `CREATE
/// EXTERNAL TABLE e …`) with its name replaced by `name`.
pub fn restate_name(sql: &str, name: &str) -> Result<String> {
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::keywords::Keyword;
    use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize()
        .map_err(|e| Error::Invalid(format!("stored definition does not parse: {e}")))?;
    let keyword = |t: &Token| match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    let significant: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i], Token::Whitespace(_)))
        .collect();
    let Some(mut k) = significant
        .iter()
        .position(|&i| matches!(keyword(&tokens[i]), Some(Keyword::VIEW | Keyword::TABLE)))
    else {
        return Err(Error::Invalid(format!("stored definition has no name: {sql}")));
    };
    k += 1;
    for kw in [Keyword::IF, Keyword::NOT, Keyword::EXISTS] {
        if significant.get(k).is_some_and(|&i| keyword(&tokens[i]) == Some(kw)) {
            k += 1;
        }
    }
    let start = significant[k.min(significant.len() - 1)];
    let mut end = start + 1;
    while matches!(tokens.get(end), Some(Token::Period)) && matches!(tokens.get(end + 1), Some(Token::Word(_))) {
        end += 2;
    }
    let simple = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let written = match simple {
        true => name.to_string(),
        false => format!("\"{}\"", name.replace('"', "\"\"")),
    };
    let mut out = String::with_capacity(sql.len() + name.len());
    for (i, t) in tokens.iter().enumerate() {
        if i == start {
            out.push_str(&written);
        } else if (start..end).contains(&i) {
            continue;
        } else {
            out.push_str(&t.to_string());
        }
    }
    Ok(out)
}
