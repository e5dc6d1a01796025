//! `SHOW CREATE TABLE t`: a statement that recreates the table.
//!
//! DataFusion answers `SHOW CREATE TABLE` with the provider's table
//! definition. Ours is rendered from the current table spec:
//!
//! | table spec | rendered |
//! |---|---|
//! | column `ts`, type `timestamp` (µs) | `ts TIMESTAMP(6)` |
//! | column `id`, `long`, required | `id BIGINT NOT NULL` |
//! | partition field `day(ts)` named `ts_day` (the default name) | `day(ts)` |
//! | partition field `bucket[16](id)` named `b` | `bucket(16, id) AS b` |
//! | a table registered with `LOCATION` | `LOCATION 's3://…'` |
//! | the default sort order `a ASC NULLS FIRST` | `ORDERED BY (a ASC NULLS FIRST)` |
//! | table properties | `TBLPROPERTIES ('k' = 'v', …)` |
//! | table `t` of schema `s` (a namespace of the warehouse) | `CREATE TABLE s.t …` |
//!
//! Maps are rendered `MAP(K, V)` (see `sql::type_planner`); fixed-size
//! binary, which SQL cannot declare, as `BYTEA`.

use std::collections::BTreeMap;

use crate::spec::sort_order::{NullOrder, SortDirection, SortOrder};
use crate::spec::{NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, TableSpec, Type};
use crate::transform::Transform;

/// `CREATE TABLE [schema.]name (…) [PARTITIONED BY (…)] [ORDERED BY (…)] [LOCATION '…']
/// [TBLPROPERTIES (…)]`; `schema` is the namespace the table is in, if not
/// the warehouse's own.
pub fn create_statement(
    schema: Option<&str>,
    name: &str,
    spec: &TableSpec,
    location: Option<&str>,
    properties: &BTreeMap<String, String>,
    order: Option<&SortOrder>,
) -> String {
    let columns: Vec<String> = spec.schema.fields.iter().map(column).collect();
    let qualified = match schema {
        Some(schema) => format!("{}.{}", ident(schema), ident(name)),
        None => ident(name),
    };
    let mut sql = format!("CREATE TABLE {qualified} (\n  {}\n)", columns.join(",\n  "));
    let fields = partition_fields(&spec.partition_spec, spec);
    if !fields.is_empty() {
        sql.push_str(&format!("\nPARTITIONED BY ({})", fields.join(", ")));
    }
    if let Some(order) = order.filter(|o| !o.is_unsorted()) {
        sql.push_str(&format!("\nORDERED BY ({})", sort_order_sql(order, &spec.schema)));
    }
    if let Some(location) = location {
        sql.push_str(&format!("\nLOCATION '{}'", location.replace('\'', "''")));
    }
    if !properties.is_empty() {
        let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
        let pairs: Vec<String> = properties
            .iter()
            .map(|(k, v)| format!("{} = {}", quote(k), quote(v)))
            .collect();
        sql.push_str(&format!("\nTBLPROPERTIES ({})", pairs.join(", ")));
    }
    sql
}

fn partition_fields(partition: &PartitionSpec, spec: &TableSpec) -> Vec<String> {
    partition
        .fields
        .iter()
        .map(|f| {
            let source = spec
                .schema
                .field_by_id(f.source_id)
                .map(|c| c.name.clone())
                .unwrap_or_else(|| format!("<column {}>", f.source_id));
            partition_field(f, &source)
        })
        .collect()
}

/// A partition field's transform of `source` as SQL writes it:
/// `region`, `bucket(8, id)`, `day(ts)`.
pub fn partition_call(f: &PartitionField, source: &str) -> String {
    transform_call(&f.transform, source)
}

/// `transform` of the column `source` as SQL writes it.
pub fn transform_call(transform: &Transform, source: &str) -> String {
    let column = ident(source);
    match transform {
        Transform::Identity => column,
        Transform::Bucket(n) => format!("bucket({n}, {column})"),
        Transform::Truncate(w) => format!("truncate({w}, {column})"),
        other => format!("{other}({column})"),
    }
}

/// One partition field in SQL, with `AS name` unless the name is the default.
pub fn partition_field(f: &PartitionField, source: &str) -> String {
    let call = partition_call(f, source);
    if f.name == PartitionSpec::default_name(&f.transform, source) {
        call
    } else {
        format!("{call} AS {}", ident(&f.name))
    }
}

/// A sort order as SQL: `a ASC NULLS FIRST, bucket(16, id) DESC NULLS LAST`.
pub fn sort_order_sql(order: &SortOrder, schema: &Schema) -> String {
    order
        .fields
        .iter()
        .map(|f| {
            let source = schema
                .field_by_id(f.source_id)
                .map(|c| c.name.clone())
                .unwrap_or_else(|| format!("<column {}>", f.source_id));
            let direction = match f.direction {
                SortDirection::Asc => "ASC",
                SortDirection::Desc => "DESC",
            };
            let nulls = match f.null_order {
                NullOrder::First => "NULLS FIRST",
                NullOrder::Last => "NULLS LAST",
            };
            format!("{} {direction} {nulls}", transform_call(&f.transform, &source))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn column(f: &NestedField) -> String {
    let not_null = if f.required { " NOT NULL" } else { "" };
    format!("{} {}{not_null}", ident(&f.name), sql_type(&f.field_type))
}

/// A type as SQL, as `SHOW CREATE TABLE` and the prompt's `\d t` print it.
pub(crate) fn sql_type(t: &Type) -> String {
    use PrimitiveType as P;
    match t {
        Type::Primitive(p) => match p {
            P::Boolean => "BOOLEAN".into(),
            P::Int => "INT".into(),
            P::Long => "BIGINT".into(),
            P::Float => "REAL".into(),
            P::Double => "DOUBLE".into(),
            P::Decimal { precision, scale } => format!("DECIMAL({precision}, {scale})"),
            P::Date => "DATE".into(),
            P::Time => "TIME".into(),
            P::TimeNs => "TIME(9)".into(),
            P::Timestamp => "TIMESTAMP(6)".into(),
            P::TimestampTz => "TIMESTAMP(6) WITH TIME ZONE".into(),
            P::TimestampNs => "TIMESTAMP(9)".into(),
            P::TimestampTzNs => "TIMESTAMP(9) WITH TIME ZONE".into(),
            P::String => "VARCHAR".into(),
            P::Binary | P::Fixed(_) => "BYTEA".into(),
        },
        Type::Variant => "VARIANT".into(),
        Type::List { element, .. } => format!("{}[]", sql_type(element)),
        Type::Struct(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|f| format!("{} {}", ident(&f.name), sql_type(&f.field_type)))
                .collect();
            format!("STRUCT<{}>", inner.join(", "))
        }
        Type::Map { key, value, .. } => format!("MAP({}, {})", sql_type(key), sql_type(value)),
    }
}

/// A name as SQL: bare when it is a lower-case identifier and no keyword, quoted otherwise.
pub fn ident(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && reads_as_column(name);
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// Whether `name` unquoted reads as a column name: no reserved word, and
/// `SELECT name, 1 FROM t` parses with it as a column.
fn reads_as_column(name: &str) -> bool {
    use datafusion::sql::sqlparser::ast::{Expr, SelectItem, SetExpr, Statement};
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::keywords::{
        ALL_KEYWORDS, ALL_KEYWORDS_INDEX, RESERVED_FOR_COLUMN_ALIAS, RESERVED_FOR_TABLE_ALIAS,
    };
    use datafusion::sql::sqlparser::parser::Parser;
    let upper = name.to_ascii_uppercase();
    if let Ok(i) = ALL_KEYWORDS.binary_search(&upper.as_str()) {
        let keyword = ALL_KEYWORDS_INDEX[i];
        if RESERVED_FOR_COLUMN_ALIAS.contains(&keyword) || RESERVED_FOR_TABLE_ALIAS.contains(&keyword) {
            return false;
        }
    }
    let Ok(parsed) = Parser::parse_sql(&GenericDialect {}, &format!("SELECT {name}, 1 FROM t")) else {
        return false;
    };
    let [Statement::Query(q)] = parsed.as_slice() else {
        return false;
    };
    let SetExpr::Select(select) = q.body.as_ref() else {
        return false;
    };
    matches!(select.projection.first(), Some(SelectItem::UnnamedExpr(Expr::Identifier(i))) if i.value == name && select.projection.len() == 2)
}
