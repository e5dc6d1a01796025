//! `DESCRIBE t` shows the partitioning too.
//!
//! DataFusion describes a table by its Arrow schema alone. For a
//! hidden-partitions table the partition spec is half of its shape, so the
//! rows DataFusion returns are followed by the spec, in the layout Spark
//! uses for Iceberg tables:
//!
//! | column_name    | data_type            | is_nullable |
//! |----------------|----------------------|-------------|
//! | id             | Int64                | YES         |
//! | ts             | Timestamp(µs)        | YES         |
//! |                |                      |             |
//! | # Partitioning |                      |             |
//! | Part 0         | day(ts) AS ts_day    |             |
//! | Part 1         | bucket(16, id) AS id_bucket_16 |   |
//!
//! An unpartitioned table shows `Not partitioned`. Every table spec is in
//! `"t$specs"`.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{DescribeAlias, Statement};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

use crate::error::Result;
use crate::provider::HiddenPartitionsTable;
use crate::table::show_create::partition_field;

/// The table `sql` describes, if it is `DESCRIBE | DESC <name>`.
pub fn describe_target(sql: &str) -> Option<String> {
    let parsed = Parser::parse_sql(&GenericDialect {}, sql).ok()?;
    match parsed.as_slice() {
        [
            Statement::ExplainTable {
                describe_alias: DescribeAlias::Describe | DescribeAlias::Desc,
                hive_format: None,
                table_name,
                ..
            },
        ] => Some(table_name.to_string()),
        _ => None,
    }
}

/// DataFusion's rows for `DESCRIBE name`, followed by the partition spec
/// when `name` is a hidden-partitions table.
pub async fn with_partitioning(
    ctx: &SessionContext,
    name: &str,
    batches: Vec<RecordBatch>,
) -> Result<Vec<RecordBatch>> {
    let Ok(provider) = ctx.table_provider(name).await else {
        return Ok(batches);
    };
    let batches = variants_as_variant(batches, &provider.schema())?;
    let Some(table) = provider.downcast_ref::<HiddenPartitionsTable>() else {
        return Ok(batches);
    };
    let Some(schema) = batches.first().map(|b| b.schema()) else {
        return Ok(batches);
    };
    if schema.fields().len() != 3 || schema.fields().iter().any(|f| f.data_type() != &DataType::Utf8) {
        return Ok(batches);
    }
    let spec = table.metadata().current_spec()?;
    let mut rows: Vec<(String, String)> =
        vec![(String::new(), String::new()), ("# Partitioning".into(), String::new())];
    if spec.partition_spec.fields.is_empty() {
        rows.push(("Not partitioned".into(), String::new()));
    }
    for (i, f) in spec.partition_spec.fields.iter().enumerate() {
        let source = spec
            .schema
            .field_by_id(f.source_id)
            .map(|c| c.name.clone())
            .unwrap_or_default();
        let mut text = partition_field(f, &source);
        if !text.contains(" AS ") {
            text = format!("{text} AS {}", f.name);
        }
        rows.push((format!("Part {i}"), text));
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0.as_str()))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.as_str()))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|_| ""))),
    ];
    let extra = RecordBatch::try_new(schema, columns)?;
    let mut batches = batches;
    batches.push(extra);
    Ok(batches)
}

/// DESCRIBE rows with `VARIANT` as the type of variant columns (DataFusion
/// shows the struct that holds them), as `\d` and SHOW CREATE TABLE say.
fn variants_as_variant(
    batches: Vec<RecordBatch>,
    schema: &datafusion::arrow::datatypes::SchemaRef,
) -> Result<Vec<RecordBatch>> {
    use datafusion::arrow::array::{Array, AsArray};
    let variants: Vec<&str> = schema
        .fields()
        .iter()
        .filter(|f| crate::variant::is_variant_field(f))
        .map(|f| f.name().as_str())
        .collect();
    if variants.is_empty() {
        return Ok(batches);
    }
    batches
        .into_iter()
        .map(|b| {
            if b.num_columns() < 2
                || b.schema()
                    .fields()
                    .iter()
                    .take(2)
                    .any(|f| f.data_type() != &DataType::Utf8)
            {
                return Ok(b);
            }
            let names = b.column(0).as_string::<i32>();
            let types = b.column(1).as_string::<i32>();
            let fixed: StringArray = (0..b.num_rows())
                .map(|row| {
                    let variant = names.is_valid(row) && variants.contains(&names.value(row));
                    if variant {
                        Some("VARIANT")
                    } else {
                        types.is_valid(row).then(|| types.value(row))
                    }
                })
                .collect();
            let mut columns = b.columns().to_vec();
            columns[1] = Arc::new(fixed);
            Ok(RecordBatch::try_new(b.schema(), columns)?)
        })
        .collect()
}
