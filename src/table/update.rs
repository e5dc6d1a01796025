//! `UPDATE t SET c = v, … WHERE …`: copy-on-write on the files that may
//! hold matching rows.
//!
//! Every file planned with the condition is read and written again with
//! `c = CASE WHEN (cond) IS TRUE THEN v ELSE c END` for each assigned column
//! (a row whose condition is NULL keeps its values). Rows are written with
//! the current partition spec, so an update of a partition source column
//! moves the row to its new partition. The count is the rows whose condition
//! was true. A value that cannot be cast to its column's type is an error
//! before anything is written.

use std::collections::HashSet;

use async_trait::async_trait;
use datafusion::arrow::compute::can_cast_types;
use datafusion::common::Column;
use datafusion::execution::SessionState;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, ExprSchemable, cast, when};
use datafusion::prelude::lit;

use crate::error::{Error, Result};
use crate::provider::HiddenPartitionsTable;
use crate::provider::planning::source_predicate;
use crate::store::Versioned;
use crate::table::Table;
use crate::table::change::{Change, ConflictScope, Operation};
use crate::table::retry::{Attempt, Chosen, WriteStatement};
use crate::table::rewrite::{MATCHED, count_last_flag, rewrite};
use crate::table::writer::delete_files;

/// `UPDATE table SET assignments WHERE filters`.
#[derive(Debug)]
pub struct Update {
    pub table: Table,
    pub state: SessionState,
    pub assignments: Vec<(String, Expr)>,
    pub filters: Vec<Expr>,
}

#[async_trait]
impl WriteStatement for Update {
    fn table(&self) -> &Table {
        &self.table
    }

    async fn choose(&self, provider: &HiddenPartitionsTable) -> Result<Chosen> {
        let plan = provider.plan_files(&self.state, &self.filters).await?;
        Ok(Chosen {
            counts: plan.counts,
            read: plan.files,
            dropped: Vec::new(),
        })
    }

    async fn attempt(&self, base: Versioned) -> Result<Attempt> {
        let provider = HiddenPartitionsTable::try_new(self.table.clone(), base)?;
        let md = provider.metadata();
        let schema = provider.arrow_schema();
        for (name, _) in &self.assignments {
            if schema.field_with_name(name).is_err() {
                return Err(Error::Invalid(format!(
                    "UPDATE of table {}: no column {name:?}",
                    self.table.name
                )));
            }
        }
        let Some(snapshot) = md.current_snapshot() else {
            return Ok(Attempt::nothing(Operation::Update));
        };
        let chosen = self.choose(&provider).await?;
        if chosen.read.is_empty() {
            return Ok(Attempt::nothing(Operation::Update));
        }
        let matched = conjunction(self.filters.clone()).unwrap_or(lit(true)).is_true();
        let files: HashSet<_> = chosen.read.iter().map(|f| f.path.clone()).collect();
        let table_name = self.table.name.clone();
        let assignments = self.assignments.clone();
        let rewritten = rewrite(
            &self.state,
            &provider,
            files,
            |scan| {
                let input = scan.schema().clone();
                let mut columns = Vec::with_capacity(schema.fields().len() + 1);
                for field in schema.fields() {
                    let current = Expr::Column(Column::new_unqualified(field.name()));
                    let Some((_, value)) = assignments.iter().find(|(n, _)| n == field.name()) else {
                        columns.push(current);
                        continue;
                    };
                    let from = value.get_type(&input)?;
                    if !can_cast_types(&from, field.data_type()) {
                        return datafusion::common::plan_err!(
                            "UPDATE of table {table_name}: column {} is {} but the new value is {from}",
                            field.name(),
                            field.data_type()
                        );
                    }
                    let value = cast(value.clone(), field.data_type().clone());
                    columns.push(when(matched.clone(), value).otherwise(current)?.alias(field.name()));
                }
                columns.push(matched.clone().alias(MATCHED));
                scan.project(columns)
            },
            count_last_flag(),
        )
        .await?;
        if rewritten.counted == 0 {
            delete_files(&self.table.location, &rewritten.files).await;
            return Ok(Attempt::nothing(Operation::Update));
        }
        let mut change = Change::new(Operation::Update, Some(snapshot))?;
        change.scope = ConflictScope::Matching(source_predicate(&self.filters, &md.current_spec()?.schema));
        change
            .rewrite_files(&self.table.location, md, Some(snapshot), &chosen.read, &rewritten.files)
            .await?;
        Ok(Attempt {
            change,
            written: rewritten.files,
            count: rewritten.counted,
        })
    }
}
