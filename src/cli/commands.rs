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

use super::output::{MaxRows, OutputFormat};
use crate::error::{Error, Result};
use crate::spec::types::Type;
use crate::sql::StatementResult;
use crate::table::show_create::sql_type;
use crate::variant::is_variant_field;

/// The help text of `\?` and `help`.
pub const HELP: &str = "\
Statements end with `;` and may span lines; Ctrl-C clears the statement being
typed or stops the one running; Tab completes keywords, tables and columns.
  \\d, \\dt       list the tables (of every schema of the warehouse)
  \\d NAME       columns and SQL types of table NAME, and its partition spec
  \\i FILE       run the statements of FILE
  \\format F     print results as table, csv or json
  \\maxrows N    print at most N rows of a result (\\maxrows all: every row)
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
    /// `\i FILE`: run the statements of a file.
    Include(String),
    /// `\format table|csv|json`.
    Format(OutputFormat),
    /// `\maxrows N|all`.
    MaxRows(MaxRows),
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
            ("\\d" | "\\dt", "") => Ok(Command::ListTables),
            ("\\i" | "\\include", "") => Err(Error::Invalid("\\i takes the file to run: \\i FILE".into())),
            ("\\i" | "\\include", file) => Ok(Command::Include(unquote(file))),
            ("\\format", f) => f.parse().map(Command::Format),
            ("\\maxrows", n) => n.parse().map(Command::MaxRows),
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

/// A file name as typed after `\i`: quotes around it are dropped.
fn unquote(file: &str) -> String {
    for q in ['\'', '"'] {
        if let Some(inner) = file.strip_prefix(q).and_then(|f| f.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    file.to_string()
}

/// `\d`: the tables of the session's default schema, by name, then those
/// of the warehouse's other schemas (`CREATE SCHEMA`) as `schema.table`.
/// Listings are read afresh: another process may have created or dropped
/// tables since the prompt opened.
pub async fn list_tables(ctx: &SessionContext) -> Result<StatementResult> {
    crate::catalog::namespace::refresh_listings(ctx).await?;
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

/// `\d t`: one row per column (name, SQL type as `SHOW CREATE TABLE`
/// prints it, nullable) and, for a hidden-partitioned table, its current
/// partition spec.
pub async fn describe(ctx: &SessionContext, table: &str) -> Result<Vec<StatementResult>> {
    let reference = TableReference::from(table);
    let schema = ctx.table_provider(reference.clone()).await?.schema();
    let fields = schema.fields();
    let types: Vec<String> = fields
        .iter()
        .map(|f| {
            if is_variant_field(f) {
                return "VARIANT".to_string();
            }
            // Types with no Iceberg counterpart (a CSV table's UInt8, …) print as Arrow names them.
            match Type::from_arrow(f.data_type(), &mut || 0) {
                Ok(t) => sql_type(&t),
                Err(_) => f.data_type().to_string(),
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
        assert_eq!(parse("\\dt"), Some(Ok(Command::ListTables)));
        assert_eq!(
            parse("\\i 'my file.sql'"),
            Some(Ok(Command::Include("my file.sql".into())))
        );
        assert_eq!(parse("\\format csv"), Some(Ok(Command::Format(OutputFormat::Csv))));
        assert_eq!(parse("\\maxrows all"), Some(Ok(Command::MaxRows(MaxRows::All))));
        assert_eq!(parse("\\maxrows 5"), Some(Ok(Command::MaxRows(MaxRows::Limit(5)))));
        assert!(matches!(parse("\\format xml"), Some(Err(e)) if e.contains("unknown output format `xml`")));
        assert!(matches!(parse("\\i"), Some(Err(e)) if e.contains("\\i FILE")));
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
