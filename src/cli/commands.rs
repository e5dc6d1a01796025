//! The prompt's own commands (`\d`, `\timing`, `\q`, …), psql style.
//!
//! They exist only at the interactive prompt (and for statements piped into
//! it), never in `-c`/`-f` scripts: a script is SQL, which any other SQL tool
//! can run too. A command is recognised only where a statement could start,
//! so a line such as `help` inside a statement is part of the statement.
//! What `\d` prints goes through the same output formats as query results.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::common::TableReference;
use datafusion::prelude::{SessionContext, col, lit, when};

use crate::error::{Error, Result};
use crate::sql::StatementResult;
use crate::variant::is_variant_field;

/// The help text of `\?` and `help`.
pub const HELP: &str = "\
Statements end with `;` and may span lines; Ctrl-C clears the statement being typed.
  \\d            list the tables of the default schema
  \\d NAME       columns and types of table NAME, and its partition spec
  \\timing on    print the elapsed time after each statement (\\timing off: stop)
  \\? or help    this list
  \\q, quit, exit, Ctrl-D   leave
";

/// A prompt command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    ListTables,
    Describe(String),
    /// `\timing on|off`; `None` toggles.
    Timing(Option<bool>),
    Quit,
}

impl Command {
    /// The command on `line`; `None` when the line is SQL, an error for a
    /// backslash command we do not know.
    pub fn parse(line: &str) -> Option<Result<Self>> {
        let line = line.trim().trim_end_matches(';').trim_end();
        if !line.starts_with('\\') {
            return match line.to_ascii_lowercase().as_str() {
                "help" => Some(Ok(Command::Help)),
                "quit" | "exit" => Some(Ok(Command::Quit)),
                _ => None,
            };
        }
        let (name, arg) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let arg = arg.trim();
        Some(match (name, arg) {
            ("\\?", "") => Ok(Command::Help),
            ("\\q", "") => Ok(Command::Quit),
            ("\\d", "") => Ok(Command::ListTables),
            ("\\d", table) => Ok(Command::Describe(table.to_string())),
            ("\\timing", "") => Ok(Command::Timing(None)),
            ("\\timing", "on") => Ok(Command::Timing(Some(true))),
            ("\\timing", "off") => Ok(Command::Timing(Some(false))),
            ("\\timing", other) => Err(Error::Invalid(format!("\\timing takes `on` or `off`, not `{other}`"))),
            _ => Err(Error::Invalid(format!(
                "unknown command `{line}`; \\? lists the commands"
            ))),
        })
    }
}

/// `\d`: the tables of the session's default schema, by name, then those
/// of the warehouse's other schemas (`CREATE SCHEMA`) as `schema.table`.
pub fn list_tables(ctx: &SessionContext) -> Result<StatementResult> {
    let options = ctx.copied_config().options().catalog.clone();
    let catalog = ctx.catalog(&options.default_catalog);
    let mut names = catalog
        .as_ref()
        .and_then(|c| c.schema(&options.default_schema))
        .map(|s| s.table_names())
        .unwrap_or_default();
    names.sort();
    let mut qualified = Vec::new();
    for schema_name in catalog.as_ref().map(|c| c.schema_names()).unwrap_or_default() {
        let Some(schema) = catalog.as_ref().and_then(|c| c.schema(&schema_name)) else {
            continue;
        };
        let is_namespace = schema
            .downcast_ref::<crate::catalog::WarehouseSchema>()
            .is_some_and(|ws| ws.warehouse().namespace.is_some());
        if is_namespace && schema_name != options.default_schema {
            qualified.extend(schema.table_names().into_iter().map(|t| format!("{schema_name}.{t}")));
        }
    }
    qualified.sort();
    names.extend(qualified);
    single_batch(vec![("table_name", Arc::new(StringArray::from(names)))])
}

/// `\d t`: one row per column (name, type, nullable; a variant's type is
/// `VARIANT`) and, for a hidden-partitioned table, its current partition spec.
pub async fn describe(ctx: &SessionContext, table: &str) -> Result<Vec<StatementResult>> {
    let reference = TableReference::from(table);
    let schema = ctx.table_provider(reference.clone()).await?.schema();
    let fields = schema.fields();
    let types: Vec<String> = fields
        .iter()
        .map(|f| {
            if is_variant_field(f) {
                "VARIANT".to_string()
            } else {
                f.data_type().to_string()
            }
        })
        .collect();
    let columns = single_batch(vec![
        (
            "column_name",
            Arc::new(StringArray::from_iter_values(fields.iter().map(|f| f.name()))),
        ),
        ("data_type", Arc::new(StringArray::from(types))),
        (
            "is_nullable",
            Arc::new(StringArray::from_iter_values(
                fields.iter().map(|f| if f.is_nullable() { "YES" } else { "NO" }),
            )),
        ),
    ])?;
    let specs = metadata_table(&reference, "specs");
    // Tables other than ours (views, CSV, …) have no partition spec to show.
    let Ok(specs) = ctx.table(specs).await else {
        return Ok(vec![columns]);
    };
    let spec = col("partition_spec");
    let current = specs.filter(col("is_current"))?.select(vec![
        when(spec.clone().eq(lit("")), lit("unpartitioned"))
            .otherwise(spec)?
            .alias("partition_spec"),
    ])?;
    let schema = Arc::new(current.schema().as_arrow().clone());
    let batches = current.collect().await?;
    Ok(vec![columns, StatementResult { schema, batches }])
}

/// `t$name` next to `t`, keeping `t`'s schema and catalog.
fn metadata_table(table: &TableReference, name: &str) -> TableReference {
    let t = format!("{}${name}", table.table());
    match table {
        TableReference::Bare { .. } => TableReference::bare(t),
        TableReference::Partial { schema, .. } => TableReference::partial(schema.as_ref(), t),
        TableReference::Full { catalog, schema, .. } => TableReference::full(catalog.as_ref(), schema.as_ref(), t),
    }
}

fn single_batch(columns: Vec<(&str, ArrayRef)>) -> Result<StatementResult> {
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(
            columns
                .iter()
                .map(|(name, c)| Field::new(*name, c.data_type().clone(), false))
                .collect::<Vec<_>>(),
        )),
        columns.into_iter().map(|(_, c)| c).collect(),
    )?;
    Ok(StatementResult {
        schema: batch.schema(),
        batches: vec![batch],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_leaves_sql_alone() {
        let parse = |s: &str| Command::parse(s).map(|r| r.map_err(|e| e.to_string()));
        assert_eq!(parse("\\?"), Some(Ok(Command::Help)));
        assert_eq!(parse(" help "), Some(Ok(Command::Help)));
        assert_eq!(parse("QUIT;"), Some(Ok(Command::Quit)));
        assert_eq!(parse("exit"), Some(Ok(Command::Quit)));
        assert_eq!(parse("\\q"), Some(Ok(Command::Quit)));
        assert_eq!(parse("\\d"), Some(Ok(Command::ListTables)));
        assert_eq!(parse("\\d  \"My T\" "), Some(Ok(Command::Describe("\"My T\"".into()))));
        assert_eq!(parse("\\timing"), Some(Ok(Command::Timing(None))));
        assert_eq!(parse("\\timing on"), Some(Ok(Command::Timing(Some(true)))));
        assert_eq!(parse("\\timing off"), Some(Ok(Command::Timing(Some(false)))));
        assert!(matches!(parse("\\timing maybe"), Some(Err(e)) if e.contains("on` or `off")));
        assert!(matches!(parse("\\x"), Some(Err(e)) if e.contains("unknown command `\\x`")));
        assert_eq!(parse("select 1;"), None);
        assert_eq!(parse("helpful"), None);
    }

    #[test]
    fn metadata_table_keeps_the_qualifier() {
        assert_eq!(
            metadata_table(&TableReference::from("t"), "specs").to_string(),
            "t$specs"
        );
        assert_eq!(
            metadata_table(&TableReference::from("s.\"My T\""), "specs"),
            TableReference::partial("s", "My T$specs")
        );
    }
}
