//! `CREATE VIEW`, `DROP VIEW` and `CREATE EXTERNAL TABLE` in a warehouse
//! schema: the definition is stored with the warehouse (see
//! `catalog::definitions`), so the view or external table outlives the
//! process. In any other schema they are DataFusion's, as written.
//!
//! | statement                                   | stores / removes      |
//! |---------------------------------------------|-----------------------|
//! | `CREATE [OR REPLACE] VIEW v AS <query>`     | `v.view`              |
//! | `DROP VIEW [IF EXISTS] v`                   | `v.view`              |
//! | `CREATE EXTERNAL TABLE [IF NOT EXISTS] e …` | `e.external` (a relative `LOCATION` made absolute first) |
//! | `DROP TABLE e` (see `catalog::ddl`)         | `e.external`, never its files |

use datafusion::common::TableReference;
use datafusion::logical_expr::{DdlStatement, LogicalPlan};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use super::execute::{StatementResult, run_datafusion, warehouse_schema};
use super::statement::LineOffsets;
use crate::catalog::WarehouseSchema;
use crate::catalog::definitions::{Definition, DefinitionKind, view_plan, view_reads};
use crate::catalog::warehouse::check_table_name;
use crate::error::{Error, Result};

/// What else is stored as `name` in `ws`, for a CREATE of `kind`.
async fn existing(ws: &WarehouseSchema, name: &str) -> Result<Option<DefinitionKind>> {
    Ok(ws.warehouse().definition(name).await?.map(|d| d.kind))
}

/// Refuse a name that a table (ours, or one registered in the session) has.
async fn refuse_table(ws: &WarehouseSchema, name: &str, creating: DefinitionKind) -> Result<()> {
    if ws.has_other(name) || ws.load_table(name).await?.is_some() {
        return Err(Error::TableExists(format!(
            "table {name} already exists; {} {} needs another name",
            creating.article(),
            creating.noun()
        )));
    }
    Ok(())
}

/// `stored(ws)` when `name` is in a warehouse schema (and not `TEMPORARY`);
/// otherwise the statement `text` is DataFusion's, as written.
async fn in_warehouse(
    ctx: &SessionContext,
    text: &str,
    name: &TableReference,
    temporary: bool,
    stored: impl AsyncFnOnce(&WarehouseSchema) -> Result<StatementResult>,
) -> Result<StatementResult> {
    let schema = if temporary { None } else { warehouse_schema(ctx, name) };
    match schema.as_ref().and_then(|s| s.downcast_ref::<WarehouseSchema>()) {
        Some(ws) => stored(ws).await,
        None => run_datafusion(ctx, text).await,
    }
}

/// `CREATE [OR REPLACE] VIEW`.
pub async fn create_view(ctx: &SessionContext, text: &str) -> Result<StatementResult> {
    let state = ctx.state();
    let LogicalPlan::Ddl(DdlStatement::CreateView(cmd)) = state.create_logical_plan(text).await? else {
        return run_datafusion(ctx, text).await;
    };
    let (target, temporary) = (cmd.name.clone(), cmd.temporary);
    in_warehouse(ctx, text, &target, temporary, async |ws| {
        create_stored_view(&state, ws, cmd, text).await
    })
    .await
}

async fn create_stored_view(
    state: &datafusion::execution::SessionState,
    ws: &WarehouseSchema,
    cmd: datafusion::logical_expr::CreateView,
    text: &str,
) -> Result<StatementResult> {
    let name = cmd.name.table().to_string();
    check_table_name(&name)?;
    let resolve = |r: &TableReference| -> TableReference {
        let options = &state.config_options().catalog;
        let r = r.clone().resolve(&options.default_catalog, &options.default_schema);
        TableReference::full(r.catalog, r.schema, r.table)
    };
    if view_reads(state, text, &resolve(&cmd.name)).await? {
        return Err(Error::Invalid(format!(
            "view {name} would read itself (directly or through another view); a view reads other tables and views"
        )));
    }
    let or_replace = cmd.or_replace;
    view_plan(cmd)?;
    let stored = existing(ws, &name).await?;
    if stored.is_none() {
        refuse_table(ws, &name, DefinitionKind::View).await?;
    }
    let replace = match stored {
        Some(DefinitionKind::External) => {
            return Err(Error::TableExists(format!(
                "{name} is an external table; a view needs another name"
            )));
        }
        Some(DefinitionKind::View) if !or_replace => {
            return Err(Error::TableExists(format!(
                "view {name} already exists; CREATE OR REPLACE VIEW {name} replaces it"
            )));
        }
        Some(DefinitionKind::View) => true,
        None => false,
    };
    let definition = Definition {
        kind: DefinitionKind::View,
        sql: text.to_string(),
    };
    if !ws.warehouse().put_definition(&name, &definition, replace).await? {
        return Err(Error::TableExists(format!(
            "view {name} was created by another statement meanwhile"
        )));
    }
    ws.set_definition(&name, Some(DefinitionKind::View));
    Ok(StatementResult::empty())
}

/// `DROP VIEW [IF EXISTS] v`.
pub async fn drop_view(ctx: &SessionContext, text: &str) -> Result<StatementResult> {
    let LogicalPlan::Ddl(DdlStatement::DropView(cmd)) = ctx.state().create_logical_plan(text).await? else {
        return run_datafusion(ctx, text).await;
    };
    let name = cmd.name.table();
    // A view DataFusion keeps in the session is DataFusion's to drop.
    let in_session = warehouse_schema(ctx, &cmd.name).is_some_and(|s| {
        s.downcast_ref::<WarehouseSchema>()
            .is_some_and(|ws| ws.has_other(name) && ws.definition_kind(name).is_none())
    });
    in_warehouse(ctx, text, &cmd.name, in_session, async |ws| {
        drop_stored_view(ws, name, cmd.if_exists).await
    })
    .await
}

async fn drop_stored_view(ws: &WarehouseSchema, name: &str, if_exists: bool) -> Result<StatementResult> {
    if ws.drop_stored_view(name).await? {
        return Ok(StatementResult::empty());
    }
    if existing(ws, name).await? == Some(DefinitionKind::External) || ws.load_table(name).await?.is_some() {
        return Err(Error::Invalid(format!(
            "{name} is a table, not a view; DROP TABLE {name} drops it"
        )));
    }
    if if_exists {
        return Ok(StatementResult::empty());
    }
    Err(Error::Invalid(format!("view {name} not found")))
}

/// `CREATE [OR REPLACE] EXTERNAL TABLE`: created by DataFusion's factory
/// for its format, then stored.
pub async fn create_external(ctx: &SessionContext, text: &str) -> Result<StatementResult> {
    let state = ctx.state();
    let default = super::execute::default_warehouse(ctx);
    if let Some(ws) = default.as_ref().and_then(|s| s.downcast_ref::<WarehouseSchema>()) {
        crate::catalog::stores::register_stores(ws, text);
    }
    let plan = state.create_logical_plan(text).await?;
    let LogicalPlan::Ddl(DdlStatement::CreateExternalTable(cmd)) = &plan else {
        return run_datafusion(ctx, text).await;
    };
    let (target, temporary) = (cmd.name.clone(), cmd.temporary);
    in_warehouse(ctx, text, &target, temporary, async |ws| {
        create_stored_external(ctx, ws, plan, text).await
    })
    .await
}

async fn create_stored_external(
    ctx: &SessionContext,
    ws: &WarehouseSchema,
    plan: LogicalPlan,
    text: &str,
) -> Result<StatementResult> {
    let LogicalPlan::Ddl(DdlStatement::CreateExternalTable(cmd)) = &plan else {
        return run_datafusion(ctx, text).await;
    };
    let name = cmd.name.table().to_string();
    check_table_name(&name)?;
    let stored = existing(ws, &name).await?;
    if stored.is_none() {
        refuse_table(ws, &name, DefinitionKind::External).await?;
    }
    let replace = match stored {
        Some(DefinitionKind::View) => {
            return Err(Error::TableExists(format!(
                "{name} is a view; an external table needs another name"
            )));
        }
        Some(DefinitionKind::External) if cmd.if_not_exists => return Ok(StatementResult::empty()),
        Some(DefinitionKind::External) if !cmd.or_replace => {
            return Err(Error::TableExists(format!(
                "table {name} already exists; DROP TABLE {name} unregisters it (keeping its files)"
            )));
        }
        Some(DefinitionKind::External) => true,
        None => false,
    };
    let if_not_exists = cmd.if_not_exists;
    let sql = absolute_locations(text)?;
    // Created (and so checked) before it is stored; an old one being
    // replaced leaves the session first.
    if replace {
        use datafusion::catalog::SchemaProvider;
        ws.deregister_table(&name)?;
    }
    let mut plan = plan;
    if let LogicalPlan::Ddl(DdlStatement::CreateExternalTable(cmd)) = &mut plan {
        cmd.or_replace = false;
        cmd.if_not_exists = false;
    }
    ctx.execute_logical_plan(plan).await?.collect().await?;
    let definition = Definition {
        kind: DefinitionKind::External,
        sql,
    };
    match ws.warehouse().put_definition(&name, &definition, replace).await {
        Ok(true) => {}
        stored => {
            use datafusion::catalog::SchemaProvider;
            ws.deregister_table(&name)?;
            stored?;
            // Another statement stored it first: with IF NOT EXISTS, theirs
            // is the table (the next lookup loads it).
            if if_not_exists {
                ws.set_definition(&name, Some(DefinitionKind::External));
                return Ok(StatementResult::empty());
            }
            return Err(Error::TableExists(format!(
                "table {name} was created by another statement meanwhile"
            )));
        }
    }
    ws.set_definition(&name, Some(DefinitionKind::External));
    Ok(StatementResult::empty())
}

/// `text` with each relative local `LOCATION` made absolute (against the
/// current directory), so the stored definition means the same files in a
/// process started elsewhere.
fn absolute_locations(text: &str) -> Result<String> {
    let tokens = Tokenizer::new(&GenericDialect {}, text)
        .tokenize_with_location()
        .map_err(|e| Error::Invalid(format!("SQL syntax error: {e}")))?;
    let offsets = LineOffsets::new(text);
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    let mut after_location = false;
    for t in tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))) {
        match &t.token {
            Token::SingleQuotedString(path) if after_location => {
                let (a, b) = (offsets.byte(t.span.start), offsets.byte(t.span.end));
                out.push_str(&text[pos..a]);
                out.push('\'');
                out.push_str(&absolute(path)?.replace('\'', "''"));
                out.push('\'');
                pos = b;
            }
            _ => {}
        }
        after_location =
            matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.keyword == Keyword::LOCATION);
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

fn absolute(path: &str) -> Result<String> {
    if path.contains("://") || path.starts_with('/') {
        return Ok(path.to_string());
    }
    let cwd = std::env::current_dir().map_err(|e| Error::Invalid(format!("the current directory: {e}")))?;
    let joined = cwd.join(path);
    let mut written = joined.to_string_lossy().into_owned();
    if path.ends_with('/') && !written.ends_with('/') {
        written.push('/');
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    #[test]
    fn relative_locations_become_absolute() {
        let cwd = std::env::current_dir().unwrap();
        let sql =
            "CREATE EXTERNAL TABLE e STORED AS CSV LOCATION 'data/it''s.csv' OPTIONS ('format.has_header' 'true')";
        let expected = format!(
            "CREATE EXTERNAL TABLE e STORED AS CSV LOCATION '{}' OPTIONS ('format.has_header' 'true')",
            cwd.join("data/it's.csv").display().to_string().replace('\'', "''")
        );
        assert_eq!(super::absolute_locations(sql).unwrap(), expected);
        let absolute = "CREATE EXTERNAL TABLE e STORED AS DELTA LOCATION 's3://b/t'";
        assert_eq!(super::absolute_locations(absolute).unwrap(), absolute);
    }
}
