//! `DELETE FROM t WHERE …` (and `TRUNCATE t`, a DELETE without condition).
//!
//! Files are planned like a scan with the condition, then split:
//!
//! | file (after partition and statistics pruning)                | what happens                          |
//! |--------------------------------------------------------------|----------------------------------------|
//! | its partition values decide the condition true for every row | dropped from the table, never read (with its delete files) |
//! | may hold matching rows                                       | rewritten without them (copy-on-write), or, with `write.delete.mode` = `merge-on-read`, given a position delete file listing them (`table::position_deletes`); a file left with no rows is dropped |
//! | cannot hold matching rows (pruned)                           | untouched                              |
//!
//! A row whose condition is NULL stays, as in SQL. The count is the rows
//! removed. A concurrent statement that added rows the condition may match
//! makes this one start over (serializable).

use std::collections::HashSet;

use async_trait::async_trait;
use datafusion::execution::SessionState;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, col};
use datafusion::prelude::lit;

use crate::error::Result;
use crate::expr::all_rows_match;
use crate::plan::copies;
use crate::plan::files::PlannedFile;
use crate::plan::files::source_predicate;
use crate::spec::Snapshot;
use crate::store::Versioned;
use crate::table::Table;
use crate::table::change::{Change, ConflictScope, Operation};
use crate::table::position_deletes::{RowDeletes, matching_positions};
use crate::table::properties::{DELETE_MODE, merge_on_read};
use crate::table::retry::{Attempt, Chosen, WriteStatement};
use crate::table::rewrite::{Rewritten, as_is, copy_source, rewrite};
use crate::table::source::{OpenSource, SnapshotSource};
use crate::table::writer::delete_files;

impl Delete {
    /// The merge-on-read DELETE: files whose partition decides the condition
    /// leave the table; the others that hold matching rows get a position
    /// delete file.
    async fn merge_on_read(
        &self,
        provider: &dyn SnapshotSource,
        snapshot: &Snapshot,
        predicate: crate::expr::Predicate,
        whole: Vec<PlannedFile>,
        partial: Vec<PlannedFile>,
    ) -> Result<Attempt> {
        let condition = conjunction(self.filters.clone()).unwrap_or(lit(true));
        let found = matching_positions(&self.state, provider, &partial, &condition).await?;
        let deletes = RowDeletes::new(whole, &partial, found);
        if deletes.is_empty() {
            return Ok(Attempt::nothing(Operation::Delete));
        }
        let mut change = Change::new(Operation::Delete, Some(snapshot))?;
        change.scope = ConflictScope::Matching(predicate);
        let written = deletes
            .apply(
                &mut change,
                &self.table.location,
                provider.metadata(),
                snapshot,
                Vec::new(),
            )
            .await?;
        Ok(Attempt {
            change,
            written,
            count: deletes.rows(),
        })
    }
}

/// `DELETE FROM table WHERE filters` (all rows without filters).
#[derive(Debug)]
pub struct Delete {
    pub table: Table,
    /// Reads a snapshot of the table (see `table::source`).
    pub open: OpenSource,
    pub state: SessionState,
    pub filters: Vec<Expr>,
}

#[async_trait]
impl WriteStatement for Delete {
    fn table(&self) -> &Table {
        &self.table
    }

    async fn choose(&self, provider: &dyn SnapshotSource) -> Result<Chosen> {
        let md = provider.metadata();
        let plan = provider.plan_files(&self.state, &self.filters).await?;
        let predicate = source_predicate(&self.filters, &md.current_spec()?.schema);
        let mut chosen = Chosen {
            counts: plan.counts,
            ..Default::default()
        };
        for f in plan.files {
            let spec = md.spec(f.spec_id)?;
            let bound = spec.partition_spec.bind(&spec.schema)?;
            if all_rows_match(&predicate, &bound, &f.partition) {
                chosen.dropped.push(f);
            } else {
                chosen.read.push(f);
            }
        }
        Ok(chosen)
    }

    async fn attempt(&self, base: Versioned) -> Result<Attempt> {
        let provider = (self.open)(self.table.clone(), base)?;
        let md = provider.metadata();
        let Some(snapshot) = md.current_snapshot() else {
            return Ok(Attempt::nothing(Operation::Delete));
        };
        let predicate = source_predicate(&self.filters, &md.current_spec()?.schema);
        let Chosen {
            read: partial,
            dropped: whole,
            ..
        } = self.choose(&*provider).await?;
        if merge_on_read(md, DELETE_MODE) && !self.table.is_foreign() {
            return self
                .merge_on_read(&*provider, snapshot, predicate, whole, partial)
                .await;
        }
        let rewritten = if partial.is_empty() {
            Rewritten::default()
        } else {
            let keep = conjunction(self.filters.clone()).unwrap_or(lit(true)).is_not_true();
            let files: HashSet<_> = partial.iter().map(|f| f.path.clone()).collect();
            // Rows copied keep their lineage (format version 3), or are
            // recorded as copies by the new files.
            rewrite(
                &self.state,
                &*copy_source(&*provider),
                files,
                |scan| {
                    let kept = scan.filter(keep)?;
                    let read = kept.schema().clone();
                    let recorded = copies::columns(&read, None);
                    if recorded.is_empty() {
                        return Ok(kept);
                    }
                    let mut columns: Vec<Expr> =
                        provider.arrow_schema().fields().iter().map(|f| col(f.name())).collect();
                    columns.extend(recorded);
                    kept.project(columns)
                },
                as_is(),
            )
            .await?
        };
        let mut change = Change::new(Operation::Delete, Some(snapshot))?;
        change.scope = ConflictScope::Matching(predicate);
        let removed: Vec<_> = whole.into_iter().chain(partial).collect();
        let removed_rows: u64 = removed.iter().map(|f| f.live_rows()).sum();
        if removed_rows == rewritten.rows {
            // Nothing matched: leave the table as it is.
            delete_files(&self.table.location, &rewritten.files).await;
            return Ok(Attempt::nothing(Operation::Delete));
        }
        change
            .rewrite_files(&self.table.location, md, Some(snapshot), &removed, &rewritten.files)
            .await?;
        Ok(Attempt {
            change,
            written: rewritten.files,
            count: removed_rows - rewritten.rows,
        })
    }
}
