//! `UPDATE t SET c = v, … WHERE …` on the files that may hold matching rows.
//!
//! | `write.update.mode`        | the files planned with the condition                                   |
//! |----------------------------|-------------------------------------------------------------------------|
//! | `copy-on-write` (default)  | read and written again with `c = CASE WHEN (cond) IS TRUE THEN v ELSE c END` |
//! | `merge-on-read`            | the matching rows are written with their new values to new files, and a position delete file per data file names the old ones (a file whose rows all change leaves whole) |
//!
//! A row whose condition is NULL keeps its values. Rows are written with
//! the current partition spec, so an update of a partition source column
//! moves the row to its new partition. The count is the rows whose condition
//! was true. A value that cannot be cast to its column's type is an error
//! before anything is written.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::can_cast_types;
use datafusion::arrow::datatypes::Schema as ArrowSchema;
use datafusion::common::{Column, DFSchema};
use datafusion::execution::SessionState;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, ExprSchemable, cast, col, when};
use datafusion::prelude::lit;

use crate::error::{Error, Result};
use crate::plan::files::{PlannedFile, source_predicate};
use crate::plan::positions::{FILE, POS, Positions};
use crate::plan::{copies, lineage};
use crate::spec::Snapshot;
use crate::store::Versioned;
use crate::table::Table;
use crate::table::change::{Change, ConflictScope, Operation};
use crate::table::position_deletes::replacing_rows;
use crate::table::properties::{UPDATE_MODE, merge_on_read};
use crate::table::retry::{Attempt, Chosen, WriteStatement};
use crate::table::rewrite::{MATCHED, Post, copy_source, count_last_flag, rewrite};
use crate::table::source::{OpenSource, SnapshotSource};
use crate::table::writer::delete_files;

impl Update {
    /// The columns of `table` after the assignments, read from `input`: each
    /// assigned column its value (cast to the column's type), only where
    /// `matched` when given; the others as they are.
    fn new_values(
        &self,
        table: &ArrowSchema,
        input: &DFSchema,
        matched: Option<&Expr>,
    ) -> datafusion::error::Result<Vec<Expr>> {
        let mut columns = Vec::with_capacity(table.fields().len());
        for field in table.fields() {
            let current = Expr::Column(Column::new_unqualified(field.name()));
            let Some((_, value)) = self.assignments.iter().find(|(n, _)| n == field.name()) else {
                columns.push(current);
                continue;
            };
            let from = value.get_type(input)?;
            if !can_cast_types(&from, field.data_type()) {
                return datafusion::common::plan_err!(
                    "UPDATE of table {}: column {} is {} but the new value is {from}",
                    self.table.name,
                    field.name(),
                    field.data_type()
                );
            }
            let value = cast(value.clone(), field.data_type().clone());
            columns.push(match matched {
                Some(m) => when(m.clone(), value).otherwise(current)?.alias(field.name()),
                None => value.alias(field.name()),
            });
        }
        Ok(columns)
    }

    /// The merge-on-read UPDATE: the matching rows of `read` (files of
    /// `snapshot`) with their new values go to new files; their old
    /// positions to position delete files.
    async fn merge_on_read(
        &self,
        provider: &dyn SnapshotSource,
        snapshot: &Snapshot,
        read: Vec<PlannedFile>,
        files: HashSet<object_store::path::Path>,
        matched: Expr,
    ) -> Result<Attempt> {
        let md = provider.metadata();
        let scope = ConflictScope::Matching(source_predicate(&self.filters, &md.current_spec()?.schema));
        let schema = provider.arrow_schema();
        // The new rows keep their ids (format version 3): the table's
        // columns, then the lineage, then the positions.
        let source = provider.with_positions().with_lineage();
        let width = schema.fields().len() + crate::table::source::lineage_width(&*source);
        let gathered = Arc::new(Mutex::new(Positions::default()));
        let into = Arc::clone(&gathered);
        let post: Post = Box::new(move |batch: RecordBatch| {
            Positions::add_to(&into, &batch, width, width + 1)?;
            let rows = batch.num_rows() as u64;
            Ok((batch.project(&(0..width).collect::<Vec<_>>())?, rows))
        });
        let rewritten = rewrite(
            &self.state,
            &*source,
            files,
            |scan| {
                let mut columns = self.new_values(&schema, scan.schema(), None)?;
                columns.extend(lineage::carried(scan.schema(), Some(&lit(true))));
                columns.extend([col(FILE), col(POS)]);
                scan.filter(matched.clone())?.project(columns)
            },
            post,
        )
        .await?;
        replacing_rows(
            provider,
            snapshot,
            Operation::Update,
            scope,
            &read,
            &gathered,
            rewritten,
        )
        .await
    }
}

/// `UPDATE table SET assignments WHERE filters`.
#[derive(Debug)]
pub struct Update {
    pub table: Table,
    /// Reads a snapshot of the table (see `table::source`).
    pub open: OpenSource,
    pub state: SessionState,
    pub assignments: Vec<(String, Expr)>,
    pub filters: Vec<Expr>,
}

#[async_trait]
impl WriteStatement for Update {
    fn table(&self) -> &Table {
        &self.table
    }

    async fn choose(&self, provider: &dyn SnapshotSource) -> Result<Chosen> {
        let plan = provider.plan_files(&self.state, &self.filters).await?;
        Ok(Chosen {
            counts: plan.counts,
            read: plan.files,
            dropped: Vec::new(),
        })
    }

    async fn attempt(&self, base: Versioned) -> Result<Attempt> {
        let provider = (self.open)(self.table.clone(), base)?;
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
        let chosen = self.choose(&*provider).await?;
        if chosen.read.is_empty() {
            return Ok(Attempt::nothing(Operation::Update));
        }
        let matched = conjunction(self.filters.clone()).unwrap_or(lit(true)).is_true();
        let files: HashSet<_> = chosen.read.iter().map(|f| f.path.clone()).collect();
        if merge_on_read(md, UPDATE_MODE) && !self.table.is_foreign() {
            return self
                .merge_on_read(&*provider, snapshot, chosen.read, files, matched)
                .await;
        }
        let rewritten = rewrite(
            &self.state,
            &*copy_source(&*provider),
            files,
            |scan| {
                // Copied rows keep their lineage, updated ones keep their
                // ids; without lineage the new files record the copies.
                let mut columns = self.new_values(&schema, scan.schema(), Some(&matched))?;
                columns.extend(lineage::carried(scan.schema(), Some(&matched)));
                columns.extend(copies::columns(scan.schema(), Some(&matched)));
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
