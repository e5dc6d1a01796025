//! Reading data files by field id, not by name.
//!
//! A column keeps its field id across renames, and a dropped column's id is
//! never reused, so the id — stored in every data file as `PARQUET:field_id`
//! — is what links a table column to a file column:
//!
//! | table column (id) | file written as | read as                            |
//! |-------------------|-----------------|------------------------------------|
//! | `b` (2)           | `a` (2)         | file column `a`, renamed since     |
//! | `c` (5)           | —               | NULL: added after the file         |
//! | —                 | `d` (4)         | ignored: dropped                   |
//! | `d` (6)           | `d` (4)         | NULL: a new column reusing a name  |
//!
//! DataFusion's Parquet reader looks columns up by the file's names, so this
//! adapter rewrites every table column to the file's name for the same field
//! id (or to a name the file can't have, when the file predates the column),
//! then lets DataFusion's default adapter do the rest (casts for widened
//! types, NULLs for missing columns). Files without field ids match by name.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};

use crate::spec::types::PARQUET_FIELD_ID;

#[derive(Debug)]
pub struct FieldIdAdapterFactory {
    /// The table's current column name → field id.
    ids: HashMap<String, i32>,
    /// For files without field ids: file column name → field id (Iceberg's
    /// `schema.name-mapping.default`, Delta's physical column names).
    names: Option<HashMap<String, i32>>,
    /// Refuse files that carry neither field ids nor mapped names (the
    /// table named here), instead of matching them by name.
    strict: Option<String>,
}

impl FieldIdAdapterFactory {
    pub fn new(schema: &crate::spec::Schema) -> Self {
        Self {
            ids: schema.fields.iter().map(|f| (f.name.clone(), f.id)).collect(),
            names: None,
            strict: None,
        }
    }

    /// Also map these (column name, field id) pairs (columns a scan reads
    /// besides the table's, such as row lineage).
    pub fn with_ids(mut self, ids: impl IntoIterator<Item = (String, i32)>) -> Self {
        self.ids.extend(ids);
        self
    }

    /// Resolve files without field ids through `names` (file column name →
    /// field id); files matching neither ids nor names are an error naming `table`.
    pub fn with_name_mapping(mut self, names: HashMap<String, i32>, table: impl Into<String>) -> Self {
        self.names = Some(names);
        self.strict = Some(table.into());
        self
    }
}

/// Rewrites table columns to the file's names for the same field ids, then
/// applies DataFusion's default adapter (casts, NULLs for missing columns).
#[derive(Debug)]
struct FieldIdAdapter {
    renames: HashMap<String, String>,
    inner: Arc<dyn PhysicalExprAdapter>,
}

impl PhysicalExprAdapter for FieldIdAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        let renamed = expr
            .transform(|e| {
                if let Some(c) = e.downcast_ref::<Column>()
                    && let Some(name) = self.renames.get(c.name())
                {
                    return Ok(Transformed::yes(
                        Arc::new(Column::new(name, c.index())) as Arc<dyn PhysicalExpr>
                    ));
                }
                Ok(Transformed::no(e))
            })?
            .data;
        self.inner.rewrite(renamed)
    }
}

impl PhysicalExprAdapterFactory for FieldIdAdapterFactory {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> Result<Arc<dyn PhysicalExprAdapter>> {
        let physical_by_id: HashMap<i32, &str> = physical_file_schema
            .fields()
            .iter()
            .filter_map(|f| {
                Some((
                    f.metadata().get(PARQUET_FIELD_ID)?.parse::<i32>().ok()?,
                    f.name().as_str(),
                ))
            })
            .collect();
        let mut physical_by_id = physical_by_id;
        if physical_by_id.is_empty()
            && let Some(names) = &self.names
        {
            physical_by_id = physical_file_schema
                .fields()
                .iter()
                .filter_map(|f| Some((*names.get(f.name())?, f.name().as_str())))
                .collect();
        }
        if physical_by_id.is_empty() {
            if let Some(table) = &self.strict {
                return datafusion::common::plan_err!(
                    "a data file of {table} has no Parquet field ids and none of its columns ({}) is in the table's name mapping; refusing to read it as all-NULL columns",
                    physical_file_schema
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            // A file without field ids (not written by us): match by name.
            return DefaultPhysicalExprAdapterFactory.create(logical_file_schema, physical_file_schema);
        }
        let mut renames = HashMap::new();
        let fields: Vec<Field> = logical_file_schema
            .fields()
            .iter()
            .map(|f| {
                let target = match self.ids.get(f.name()) {
                    Some(id) => match physical_by_id.get(id) {
                        Some(name) => name.to_string(),
                        // Not in this file (added later): a name the file can't have.
                        None => format!("__hp_missing_field_{id}"),
                    },
                    None => f.name().clone(),
                };
                if &target != f.name() {
                    renames.insert(f.name().clone(), target.clone());
                }
                f.as_ref().clone().with_name(target)
            })
            .collect();
        let logical = Arc::new(Schema::new_with_metadata(
            fields,
            logical_file_schema.metadata().clone(),
        ));
        let inner = DefaultPhysicalExprAdapterFactory.create(logical, physical_file_schema)?;
        Ok(Arc::new(FieldIdAdapter { renames, inner }))
    }
}

/// `schema.name-mapping.default`: file column name → field id (top level).
pub fn iceberg_name_mapping(properties: &std::collections::BTreeMap<String, String>) -> HashMap<String, i32> {
    let mut out = HashMap::new();
    let Some(json) = properties.get("schema.name-mapping.default") else {
        return out;
    };
    let Ok(serde_json::Value::Array(fields)) = serde_json::from_str::<serde_json::Value>(json) else {
        return out;
    };
    for f in fields {
        let Some(id) = f.get("field-id").and_then(|v| v.as_i64()) else {
            continue;
        };
        for name in f.get("names").and_then(|n| n.as_array()).into_iter().flatten() {
            if let Some(name) = name.as_str() {
                out.insert(name.to_string(), id as i32);
            }
        }
    }
    out
}
