//! `MERGE INTO t USING s ON … WHEN MATCHED [AND …] THEN UPDATE / DELETE
//! WHEN NOT MATCHED [AND …] THEN INSERT WHEN NOT MATCHED BY SOURCE … `.
//!
//! 1. The source is read once (kept in memory, so a retry after a conflict
//!    sees the same rows).
//! 2. Only target files that can hold matching keys are read: for every
//!    `t.k = <source expression>` in `ON`, the distinct source values become
//!    `k IN (…)` (or a `BETWEEN` range past 10,000 values), and that filter
//!    plans the files — through the partition transforms, so
//!    `bucket(16, id)` and `day(ts)` prune by the source's keys. (With a
//!    `NOT MATCHED BY SOURCE` clause every file is read.)
//! 3. Those files full-outer-join the source on `ON`. Each joined row gets
//!    the number of the first clause that applies to it:
//!
//! | row                    | clauses considered             | no clause applies      |
//! |------------------------|--------------------------------|------------------------|
//! | target and source      | `WHEN MATCHED`                 | target row unchanged   |
//! | target only            | `WHEN NOT MATCHED BY SOURCE`   | target row unchanged   |
//! | source only            | `WHEN NOT MATCHED`             | nothing written        |
//!
//! 4. Copy-on-write (the default): the rows that remain are written as new
//!    files; the files read are removed. Merge-on-read (`write.merge.mode`):
//!    the join is inner (right with `WHEN NOT MATCHED`, full only with `NOT
//!    MATCHED BY SOURCE`), only the rows updated or inserted are written, and
//!    the target rows updated or deleted get position deletes (their file
//!    and position come from a positions scan, `plan::positions`).
//!
//! On a format version 3 table the rows written keep their lineage
//! (`plan::lineage`): a copied row its id and sequence number, an updated
//! row its id; inserted rows get new ids.
//!
//! A target row matched by two source rows is an error (SQL standard), and
//! so nothing is written. The count is the rows updated, deleted or inserted.

use std::collections::{HashMap, HashSet};
use std::ops::Not;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::array::{Array, AsArray, BooleanArray, RecordBatch};
use datafusion::arrow::compute::{filter_record_batch, prep_null_mask_filter};
use datafusion::arrow::datatypes::{SchemaRef, UInt64Type};
use datafusion::common::{Column, DataFusionError, ScalarValue, TableReference};
use datafusion::datasource::{MemTable, provider_as_source};
use datafusion::execution::SessionState;
use datafusion::logical_expr::conditional_expressions::CaseBuilder;
use datafusion::logical_expr::dml::{MergeIntoAction, MergeIntoClause, MergeIntoClauseKind};
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{BinaryExpr, Expr, JoinType, LogicalPlanBuilder, Operator, cast, lit, when};
use datafusion::prelude::SessionContext;

use crate::error::{Error, Result};
use crate::plan::files::{PlannedFile, source_predicate};
use crate::plan::positions::{FILE, POS, Positions};
use crate::plan::{copies, lineage};
use crate::spec::{Snapshot, TableMetadata};
use crate::store::Versioned;
use crate::table::Table;
use crate::table::change::{Change, ConflictScope, Operation};
use crate::table::position_deletes::replacing_rows;
use crate::table::properties::{MERGE_MODE, merge_on_read};
use crate::table::retry::{Attempt, Chosen, WriteStatement};
use crate::table::rewrite::{Post, copy_source, rewrite};
use crate::table::source::{OpenSource, SnapshotSource, lineage_width};
use crate::table::writer::delete_files;

/// Past this many distinct source keys, files are planned with a range.
const MAX_KEY_LIST: usize = 10_000;

const IN_TARGET: &str = "__hp_in_target";
const IN_SOURCE: &str = "__hp_in_source";
/// A target row's number (a copy-on-write MERGE checks it is matched once).
const TARGET_ROW: &str = "__hp_merge_target_row";
const AFFECTED: &str = "__hp_affected";
const KEEP: &str = "__hp_keep";
const BOTH: &str = "__hp_both";

/// A MERGE statement with its source rows read.
#[derive(Debug)]
pub struct Merge {
    pub table: Table,
    /// Reads a snapshot of the table (see `table::source`).
    pub open: OpenSource,
    pub state: SessionState,
    pub source: Arc<MemTable>,
    /// How `ON` and the clauses name the target and the source.
    pub target_alias: TableReference,
    pub source_alias: TableReference,
    pub on: Expr,
    pub clauses: Vec<MergeIntoClause>,
}

#[async_trait]
impl WriteStatement for Merge {
    fn table(&self) -> &Table {
        &self.table
    }

    async fn choose(&self, provider: &dyn SnapshotSource) -> Result<Chosen> {
        let filters: Vec<Expr> = self.key_filter().await?.into_iter().collect();
        if provider.metadata().current_snapshot().is_none() {
            return Ok(Chosen::default());
        }
        let plan = provider.plan_files(&self.state, &filters).await?;
        Ok(Chosen {
            counts: plan.counts,
            read: plan.files,
            dropped: Vec::new(),
        })
    }

    async fn attempt(&self, base: Versioned) -> Result<Attempt> {
        let provider = (self.open)(self.table.clone(), base)?;
        let md = provider.metadata();
        let snapshot = md.current_snapshot();
        let key_filter = self.key_filter().await?;
        let plan = self.choose(&*provider).await?;
        let inserts = self.clauses.iter().any(|c| c.kind.is_not_matched_by_target());
        if plan.read.is_empty() && !inserts {
            return Ok(Attempt::nothing(Operation::Merge));
        }
        let files: HashSet<_> = plan.read.iter().map(|f| f.path.clone()).collect();
        let schema = provider.arrow_schema();
        if let Some(snapshot) = snapshot.filter(|_| merge_on_read(md, MERGE_MODE) && !self.table.is_foreign()) {
            return self
                .merge_on_read(&*provider, snapshot, plan.read, files, key_filter)
                .await;
        }
        // Copied rows keep their lineage, updated ones their ids (format
        // version 3); without lineage the new files record the copies.
        let source = copy_source(&*provider);
        let recorded = if source.schema().index_of(FILE).is_ok() { 2 } else { 0 };
        let width = schema.fields().len() + lineage_width(&*source) + recorded;
        let rewritten = rewrite(
            &self.state,
            &*source,
            files,
            |scan| self.shape(scan, &schema, false),
            post(width),
        )
        .await?;
        if rewritten.counted == 0 {
            delete_files(&self.table.location, &rewritten.files).await;
            return Ok(Attempt::nothing(Operation::Merge));
        }
        let mut change = Change::new(Operation::Merge, snapshot)?;
        change.scope = self.scope(md, &key_filter)?;
        change
            .rewrite_files(&self.table.location, md, snapshot, &plan.read, &rewritten.files)
            .await?;
        Ok(Attempt {
            change,
            written: rewritten.files,
            count: rewritten.counted,
        })
    }
}

impl Merge {
    /// What a concurrent statement may not have changed meanwhile.
    fn scope(&self, md: &TableMetadata, key_filter: &Option<Expr>) -> Result<ConflictScope> {
        Ok(match key_filter {
            Some(f) => ConflictScope::Matching(source_predicate(std::slice::from_ref(f), &md.current_spec()?.schema)),
            None => ConflictScope::Everything,
        })
    }

    /// The merge-on-read MERGE: the rows updated or inserted go to new
    /// files; the target rows updated or deleted to position delete files.
    /// Target rows no clause acts on are not read past the join.
    async fn merge_on_read(
        &self,
        provider: &dyn SnapshotSource,
        snapshot: &Snapshot,
        read: Vec<PlannedFile>,
        files: HashSet<object_store::path::Path>,
        key_filter: Option<Expr>,
    ) -> Result<Attempt> {
        let scope = self.scope(provider.metadata(), &key_filter)?;
        let schema = provider.arrow_schema();
        let gathered = Arc::new(Mutex::new(Positions::default()));
        // Updated rows keep their ids (format version 3).
        let source = provider.with_positions().with_lineage();
        let width = schema.fields().len() + lineage_width(&*source);
        let rewritten = rewrite(
            &self.state,
            &*source,
            files,
            |scan| self.shape(scan, &schema, true),
            post_merge_on_read(width, Arc::clone(&gathered)),
        )
        .await?;
        replacing_rows(provider, snapshot, Operation::Merge, scope, &read, &gathered, rewritten).await
    }

    /// `k IN (distinct source values)` for every `t.k = <source expr>` of `ON`.
    async fn key_filter(&self) -> Result<Option<Expr>> {
        let by_source = self
            .clauses
            .iter()
            .any(|c| c.kind == MergeIntoClauseKind::NotMatchedBySource);
        if by_source {
            return Ok(None);
        }
        let ctx = SessionContext::new_with_state(self.state.clone());
        let mut filters = Vec::new();
        for conjunct in split_conjunction(&self.on) {
            let Expr::BinaryExpr(BinaryExpr {
                left,
                op: Operator::Eq,
                right,
            }) = conjunct
            else {
                continue;
            };
            let (target, source) = match (self.target_column(left), self.target_column(right)) {
                (Some(c), None) if self.only_source(right) => (c, right),
                (None, Some(c)) if self.only_source(left) => (c, left),
                _ => continue,
            };
            let keys = LogicalPlanBuilder::scan(
                self.source_alias.clone(),
                provider_as_source(Arc::clone(&self.source) as _),
                None,
            )?
            .project(vec![source.as_ref().clone().alias("k")])?
            .distinct()?
            .build()?;
            let batches = ctx.execute_logical_plan(keys).await?.collect().await?;
            let mut values = Vec::new();
            for b in &batches {
                for i in 0..b.num_rows() {
                    let v = ScalarValue::try_from_array(b.column(0), i)?;
                    if !v.is_null() {
                        values.push(v);
                    }
                }
            }
            let column = Expr::Column(Column::new_unqualified(target));
            if values.is_empty() {
                // No source key can match: no target file is needed.
                filters.push(lit(false));
            } else {
                // The range lets file statistics prune (DataFusion's pruning
                // gives up on long IN lists); the list lets the transforms
                // prune (bucket, identity, truncate).
                let min = values
                    .iter()
                    .min_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
                let max = values
                    .iter()
                    .max_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
                // No range over floats: NaN keys match NaN rows but have no order.
                let floats = values[0].data_type().is_floating();
                if let (Some(min), Some(max), false) = (min, max, floats) {
                    filters.push(column.clone().between(lit(min.clone()), lit(max.clone())));
                }
                if values.len() <= MAX_KEY_LIST {
                    filters.push(column.in_list(values.into_iter().map(lit).collect(), false));
                }
            }
        }
        Ok(datafusion::logical_expr::utils::conjunction(filters))
    }

    /// The target column `e` names, if it is one.
    fn target_column(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Column(c) if c.relation.as_ref() == Some(&self.target_alias) => Some(c.name.clone()),
            _ => None,
        }
    }

    /// Whether `e` reads only source columns.
    fn only_source(&self, e: &Expr) -> bool {
        let refs = e.column_refs();
        !refs.is_empty() && refs.iter().all(|c| c.relation.as_ref() == Some(&self.source_alias))
    }

    /// The target files (`scan`) joined to the source, each row reduced to
    /// the table's columns plus the bookkeeping flags. Copy-on-write joins
    /// full outer (every target row is written again) and numbers the
    /// target rows; merge-on-read (`positions`: `scan` is a positions scan)
    /// keeps target rows only where a clause may act on them and names
    /// them by file and position.
    fn shape(
        &self,
        scan: LogicalPlanBuilder,
        schema: &SchemaRef,
        positions: bool,
    ) -> datafusion::error::Result<LogicalPlanBuilder> {
        let t = |name: &str| Expr::Column(Column::new(Some(self.target_alias.clone()), name));
        let unq = |name: &str| Expr::Column(Column::new_unqualified(name));
        let lineage = scan.schema().index_of_column_by_name(None, lineage::ROW_ID).is_some();
        // Copy-on-write without lineage: the rows no clause acts on are
        // recorded as copies (`plan::copies`).
        let copies = !positions && !lineage && scan.schema().index_of_column_by_name(None, FILE).is_some();
        let mut target = scan.alias(self.target_alias.clone())?;
        let mut target_columns: Vec<Expr> = schema.fields().iter().map(|f| t(f.name())).collect();
        if lineage {
            target_columns.extend([t(lineage::ROW_ID), t(lineage::ROW_SEQ)]);
        }
        if positions {
            target_columns.extend([t(FILE), t(POS)]);
        } else {
            target = target.window(vec![
                datafusion::functions_window::expr_fn::row_number().alias(TARGET_ROW),
            ])?;
            if copies {
                target_columns.extend([t(FILE), t(POS)]);
            }
            target_columns.push(unq(TARGET_ROW));
        }
        target_columns.push(lit(true).alias(IN_TARGET));
        let target = target.project(target_columns)?;
        let source = LogicalPlanBuilder::scan(
            self.source_alias.clone(),
            provider_as_source(Arc::clone(&self.source) as _),
            None,
        )?;
        let source_schema = source.schema().clone();
        let mut source_columns: Vec<Expr> = source_schema.columns().into_iter().map(Expr::Column).collect();
        source_columns.push(lit(true).alias(IN_SOURCE));
        let source = source.project(source_columns)?;
        let by_source = self
            .clauses
            .iter()
            .any(|c| c.kind == MergeIntoClauseKind::NotMatchedBySource);
        let inserts = self.clauses.iter().any(|c| c.kind.is_not_matched_by_target());
        let join = match (positions, by_source, inserts) {
            (false, _, _) | (true, true, _) => JoinType::Full,
            (true, false, true) => JoinType::Right,
            (true, false, false) => JoinType::Inner,
        };
        let joined = target.join_on(source.build()?, join, vec![self.on.clone()])?;
        let in_target = unq(IN_TARGET).is_not_null();
        let in_source = unq(IN_SOURCE).is_not_null();
        let matched = in_target.clone().and(in_source.clone());
        let target_only = in_target.clone().and(in_source.clone().not());
        let source_only = in_target.not().and(in_source);
        // The number of the first clause that applies (0: none).
        let mut action: Option<CaseBuilder> = None;
        for (i, clause) in self.clauses.iter().enumerate() {
            let side = match clause.kind {
                MergeIntoClauseKind::Matched => matched.clone(),
                MergeIntoClauseKind::NotMatchedBySource => target_only.clone(),
                _ => source_only.clone(),
            };
            let applies = match &clause.predicate {
                Some(p) => side.and(p.clone().is_true()),
                None => side,
            };
            let n = lit(i as i64 + 1);
            action = Some(match action {
                None => when(applies, n),
                Some(mut w) => w.when(applies, n),
            });
        }
        let action = match action {
            Some(mut a) => a.otherwise(lit(0i64))?,
            None => lit(0i64),
        };
        let number = |i: usize| lit(i as i64 + 1);
        let mut out = Vec::with_capacity(schema.fields().len() + 4);
        for field in schema.fields() {
            let mut value: Option<CaseBuilder> = None;
            for (i, clause) in self.clauses.iter().enumerate() {
                let new = match &clause.action {
                    MergeIntoAction::Update(assignments) => assignments
                        .iter()
                        .find(|(c, _)| c == field.name())
                        .map(|(_, v)| v.clone()),
                    MergeIntoAction::Insert { columns, values } => {
                        let position = if columns.is_empty() {
                            schema.index_of(field.name()).ok()
                        } else {
                            columns.iter().position(|c| c == field.name())
                        };
                        Some(match position.and_then(|p| values.get(p)) {
                            Some(v) => v.clone(),
                            None => lit(ScalarValue::Null),
                        })
                    }
                    MergeIntoAction::Delete => None,
                };
                if let Some(new) = new {
                    let branch = action.clone().eq(number(i));
                    let new = cast(new, field.data_type().clone());
                    value = Some(match value {
                        None => when(branch, new),
                        Some(mut w) => w.when(branch, new),
                    });
                }
            }
            out.push(match value {
                Some(mut v) => v.otherwise(t(field.name()))?.alias(field.name()),
                None => t(field.name()).alias(field.name()),
            });
        }
        if lineage {
            // A target row keeps its id; an updated one gets this commit's
            // sequence number (NULL: inherited); an inserted one has neither.
            let updates: Vec<Expr> = self
                .clauses
                .iter()
                .enumerate()
                .filter(|(_, c)| matches!(c.action, MergeIntoAction::Update(_)))
                .map(|(i, _)| number(i))
                .collect();
            let seq = if updates.is_empty() {
                t(lineage::ROW_SEQ)
            } else {
                when(action.clone().in_list(updates, false), lit(ScalarValue::Int64(None)))
                    .otherwise(t(lineage::ROW_SEQ))?
            };
            out.extend([t(lineage::ROW_ID).alias(lineage::ROW_ID), seq.alias(lineage::ROW_SEQ)]);
        }
        if copies {
            let pos = when(action.clone().eq(lit(0i64)), t(POS)).otherwise(lit(ScalarValue::Int64(None)))?;
            out.extend([t(FILE).alias(copies::COPIED_FILE), pos.alias(copies::COPIED_POS)]);
        }
        let deletes: Vec<Expr> = self
            .clauses
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c.action, MergeIntoAction::Delete))
            .map(|(i, _)| number(i))
            .collect();
        let deleted = if deletes.is_empty() {
            lit(false)
        } else {
            action.clone().in_list(deletes, false)
        };
        // A source-only row that no clause acts on is not written.
        let dropped = unq(IN_TARGET).is_null().and(action.clone().eq(lit(0i64)));
        out.push(action.not_eq(lit(0i64)).alias(AFFECTED));
        out.push(deleted.or(dropped).not().alias(KEEP));
        if positions {
            out.extend([unq(FILE), unq(POS)]);
        } else {
            out.push(unq(TARGET_ROW));
        }
        out.push(matched.alias(BOTH));
        joined.project(out)
    }
}

/// `flags` with NULL as false (a filter mask).
fn nulls_false(flags: &BooleanArray) -> BooleanArray {
    match flags.nulls() {
        Some(_) => prep_null_mask_filter(flags),
        None => flags.clone(),
    }
}

/// Merge-on-read: check every target row is matched at most once, count
/// the rows acted on, gather the positions of the target rows acted on,
/// and keep the rows acted on that stay (updated or inserted).
fn post_merge_on_read(width: usize, gathered: Arc<Mutex<Positions>>) -> Post {
    // Matched target rows seen, by data file path.
    let mut seen: HashMap<String, HashSet<i64>> = HashMap::new();
    Box::new(move |batch: RecordBatch| {
        let affected = batch.column(width).as_boolean();
        let keep = batch.column(width + 1).as_boolean();
        let (file, pos) = (width + 2, width + 3);
        let both = nulls_false(batch.column(width + 4).as_boolean());
        let matched = filter_record_batch(&batch.project(&[file, pos])?, &both)?;
        if matched.num_rows() > 0 {
            let mut found = Positions::default();
            found.add(&matched, 0, 1)?;
            for (path, positions) in found.into_map() {
                let seen = seen.entry(path).or_default();
                if positions.iter().any(|p| !seen.insert(*p as i64)) {
                    return Err(DataFusionError::External(Box::new(Error::Invalid(
                        "MERGE: a target row is matched by more than one source row (the SQL standard forbids it); nothing was written".into(),
                    ))));
                }
            }
        }
        let acted = nulls_false(affected);
        // The position, not the run-end encoded file column, says whether a
        // joined row has a target row: a join's nulls in a run-end encoded
        // column sit in its values, which `is_not_null` does not look at.
        let in_target = datafusion::arrow::compute::is_not_null(batch.column(pos))?;
        let changed = datafusion::arrow::compute::and(&acted, &in_target)?;
        let old = filter_record_batch(&batch.project(&[file, pos])?, &changed)?;
        if old.num_rows() > 0 {
            Positions::add_to(&gathered, &old, 0, 1)?;
        }
        let stays = nulls_false(keep);
        let write = datafusion::arrow::compute::and(&acted, &stays)?;
        let columns: Vec<usize> = (0..width).collect();
        let rows = filter_record_batch(&batch.project(&columns)?, &write)?;
        Ok((rows, acted.true_count() as u64))
    })
}

/// Check every target row is matched at most once, count the rows acted
/// on, keep the rows to write, and drop the bookkeeping columns.
fn post(width: usize) -> Post {
    let mut seen: HashSet<u64> = HashSet::new();
    Box::new(move |batch: RecordBatch| {
        let affected = batch.column(width).as_boolean();
        let keep = batch.column(width + 1).as_boolean();
        let row_id = batch.column(width + 2).as_primitive::<UInt64Type>();
        let both = batch.column(width + 3).as_boolean();
        for i in 0..batch.num_rows() {
            if both.is_valid(i) && both.value(i) && row_id.is_valid(i) && !seen.insert(row_id.value(i)) {
                return Err(DataFusionError::External(Box::new(Error::Invalid(
                    "MERGE: a target row is matched by more than one source row (the SQL standard forbids it); nothing was written".into(),
                ))));
            }
        }
        let count = affected.true_count() as u64;
        let keep = BooleanArray::from(
            (0..keep.len())
                .map(|i| Some(keep.is_valid(i) && keep.value(i)))
                .collect::<Vec<_>>(),
        );
        let columns: Vec<usize> = (0..width).collect();
        let rows = filter_record_batch(&batch.project(&columns)?, &keep)?;
        Ok((rows, count))
    })
}
