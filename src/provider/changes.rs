//! Changelog reads: `table_changes('t', FROM, TO[, 'id, …'])`, the rows
//! that changed in the snapshots after FROM up to TO, as a view over scans
//! of the files each snapshot changed (`plan::changes`).
//!
//! | t's history                                   | `table_changes('t', S1, S3, 'id')` |
//! |-----------------------------------------------|------------------------------------|
//! | S1 INSERT (1,'a'), (2,'b')                    | (not in the range: it is the start) |
//! | S2 UPDATE t SET v = 'c' WHERE id = 2          | (2,'b') UPDATE_BEFORE 0 S2; (2,'c') UPDATE_AFTER 0 S2 |
//! | S3 DELETE FROM t WHERE id = 1                 | (1,'a') DELETE 1 S3                |
//!
//! Per snapshot S with parent P:
//! - only new files (an append): their rows, all `INSERT`, read from S's
//!   new manifests alone; filters prune them as in any scan;
//! - otherwise the touched files as of P and as of S: rows only before are
//!   `DELETE`, rows only after are `INSERT`, as multisets (each row +1
//!   after, −1 before; `difference`), so rows a copy-on-write rewrite
//!   carried over cancel;
//! - with identifier columns, a `DELETE` and an `INSERT` of the same
//!   identifier in one snapshot are an `UPDATE_BEFORE` / `UPDATE_AFTER`;
//! - optimize changes no row and shows none.
//!
//! Every side is read with TO's schema (columns by field id: added columns
//! are NULL in older rows, dropped ones are gone).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::catalog::view::ViewTable;
use datafusion::common::{Column, ScalarValue};
use datafusion::datasource::provider_as_source;
use datafusion::functions_aggregate::min_max::{max_udaf, min_udaf};
use datafusion::logical_expr::expr::WindowFunction;
use datafusion::logical_expr::{
    EmptyRelation, Expr, ExprFunctionExt, LogicalPlan, LogicalPlanBuilder, Union, WindowFunctionDefinition, col, lit,
    when,
};

use super::HiddenPartitionsTable;
use super::difference::{ChangeColumns, ChangeDifference};
use super::row_hash::RowHash;
use crate::error::{Error, Result};
use crate::plan::changes::{SnapshotFiles, snapshot_files};
use crate::spec::ManifestFile;

pub const CHANGE_TYPE: &str = "_change_type";
pub const CHANGE_ORDINAL: &str = "_change_ordinal";
pub const COMMIT_SNAPSHOT_ID: &str = "_commit_snapshot_id";

const SIGN: &str = "__hp_change_sign";
const HASH: &str = "__hp_change_hash";
const LOW: &str = "__hp_change_low";
const HIGH: &str = "__hp_change_high";

/// What a changelog read asks for: the range and the identifier columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangesRequest {
    /// Exclusive start (snapshot id, tag or timestamp); `None`: the first snapshot.
    pub from: Option<String>,
    /// Inclusive end; `None`: the current snapshot.
    pub to: Option<String>,
    /// Identifier columns (an UPDATE is a DELETE and an INSERT of one identifier).
    pub ids: Vec<String>,
}

impl ChangesRequest {
    /// The request a `"t$changes(FROM;TO;ids)"` name carries (the statement
    /// layer writes `table_changes('t', FROM, TO, 'ids')` so); `None` when
    /// `kind` (after the `$`) is not one.
    pub fn from_kind(kind: &str) -> Option<Result<Self>> {
        let args = kind.strip_prefix("changes(")?.strip_suffix(')')?;
        let parts: Vec<&str> = args.split(';').collect();
        let [from, to, ids] = parts.as_slice() else {
            return Some(Err(Error::Invalid(format!(
                "cannot read the changelog arguments {args:?}: expected FROM;TO;identifier columns"
            ))));
        };
        let given = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Some(Ok(Self {
            from: given(from),
            to: given(to),
            ids: ids
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        }))
    }

    /// The name [`Self::from_kind`] reads, after `table$`.
    pub fn kind(&self) -> String {
        format!(
            "changes({};{};{})",
            self.from.as_deref().unwrap_or(""),
            self.to.as_deref().unwrap_or(""),
            self.ids.join(",")
        )
    }
}

/// One side of one snapshot's change: a table to read, and for each of the
/// changelog's columns the column of that table it is (`None`: NULL, a
/// column added later).
pub struct ChangeSide {
    pub table: Arc<dyn TableProvider>,
    pub select: Vec<Option<String>>,
    /// +1: the snapshot's side (rows only here are inserted); -1: its parent's.
    pub sign: i64,
}

/// One snapshot of the range and what to read for it.
pub struct SnapshotChange {
    pub ordinal: i32,
    pub snapshot: i64,
    /// Only new rows: one side, every row an INSERT, read as it is.
    pub appended: bool,
    pub sides: Vec<ChangeSide>,
}

/// The changelog's columns are `schema`'s and three of its own: a table
/// column of one of those names, or identifier columns it does not have,
/// are errors naming table `name`.
pub fn check_columns(name: &str, schema: &SchemaRef, ids: &[String]) -> Result<()> {
    let columns: Vec<&String> = schema.fields().iter().map(|f| f.name()).collect();
    for reserved in [CHANGE_TYPE, CHANGE_ORDINAL, COMMIT_SNAPSHOT_ID] {
        if columns.iter().any(|c| *c == reserved) {
            return Err(Error::Invalid(format!(
                "table_changes on table {name}: the table has a column named {reserved}, the name of a changelog column"
            )));
        }
    }
    for id in ids {
        if !columns.contains(&id) {
            return Err(Error::Invalid(format!(
                "table_changes on table {name}: identifier column {id} is not a column of the table (columns: {})",
                columns.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
            )));
        }
    }
    Ok(())
}

/// The changelog view over `changes` (in range order), with `schema`'s
/// columns (TO's) and identifier columns `ids`.
pub fn changelog_view(
    schema: &SchemaRef,
    changes: Vec<SnapshotChange>,
    recorded: Vec<RecordedChanges>,
    ids: &[String],
) -> Result<Arc<dyn TableProvider>> {
    let plan = changelog_plan(schema, changes, recorded, ids)?;
    Ok(Arc::new(ViewTable::new(plan, None)))
}

impl HiddenPartitionsTable {
    /// The changelog of this table (its latest version) for `request`: a
    /// view whose scans read only the files the snapshots changed.
    pub async fn changes(&self, request: &ChangesRequest) -> Result<Arc<dyn TableProvider>> {
        let name = &self.table.name;
        let md = &self.version.metadata;
        let snapshots =
            crate::table::changes::changed_snapshots(&md, name, request.from.as_deref(), request.to.as_deref())?;
        // TO's columns; the current ones (with evolution since the last
        // snapshot) when TO is the current snapshot.
        let to_spec = match &request.to {
            Some(to) => {
                let id = crate::table::time_travel::snapshot_of(&md, name, to)?;
                md.snapshot(id)
                    .and_then(|s| s.table_spec_id)
                    .unwrap_or(md.current_spec_id)
            }
            None => md.current_spec_id,
        };
        let schema = md.spec(to_spec)?.schema.arrow_schema();
        check_columns(name, &schema, &request.ids)?;
        let select: Vec<Option<String>> = schema.fields().iter().map(|f| Some(f.name().clone())).collect();
        // Each snapshot and its parent, manifests loaded.
        let wanted: std::collections::HashSet<i64> = snapshots
            .iter()
            .flat_map(|id| [Some(*id), md.snapshot(*id).and_then(|s| s.parent_snapshot_id)])
            .flatten()
            .collect();
        // Only those snapshots are copied (not the whole history).
        let mut md = md.with_snapshots(|s| wanted.contains(&s.snapshot_id));
        self.table.location.load_all_manifests(&mut md).await?;
        let mut bare = md.with_snapshots(|_| false);
        bare.current_spec_id = to_spec;
        let reading = |snapshot: i64, manifests: Vec<ManifestFile>| -> Result<HiddenPartitionsTable> {
            let manifests = Arc::new(manifests);
            let mut s = md
                .snapshot(snapshot)
                .cloned()
                .ok_or_else(|| Error::Invalid(format!("table {name} has no snapshot {snapshot}")))?;
            s.manifests = Some(manifests);
            let mut metadata = bare.clone();
            metadata.snapshots.push(s);
            metadata.current_snapshot_id = Some(snapshot);
            // Not `self.clone()`: that would copy the whole history per side.
            let t = HiddenPartitionsTable {
                table: self.table.clone(),
                version: crate::store::Versioned {
                    version: self.version.version,
                    metadata: Arc::new(metadata),
                },
                schema: Arc::clone(&schema),
                as_of: Some(snapshot),
                only: None,
                definition: Default::default(),
                dml: None,
                extras: Default::default(),
                join_keys: Vec::new(),
                hidden: None,
            };
            Ok(t)
        };

        let side = |table: HiddenPartitionsTable, sign: i64| ChangeSide {
            table: Arc::new(table),
            select: select.clone(),
            sign,
        };
        let mut changes = Vec::new();
        for (ordinal, id) in snapshots.iter().enumerate() {
            let snapshot = md.snapshot(*id).expect("in range");
            let parent = snapshot.parent_snapshot_id.and_then(|p| md.snapshot(p));
            let (appended, sides) = match snapshot_files(&self.table.location, &md, parent, snapshot).await? {
                SnapshotFiles::Unchanged => continue,
                SnapshotFiles::Appended(manifests) => {
                    // The scan adds the changelog's own columns (`reads_as_is`).
                    let table = reading(*id, manifests)?.with_change_constants(ordinal as i32, *id);
                    (true, vec![side(table, 1)])
                }
                SnapshotFiles::Rewritten { touched, before, after } => {
                    let touched = Arc::new(touched);
                    let now = reading(*id, after)?.restricted(Arc::clone(&touched));
                    match parent {
                        None => (false, vec![side(now, 1)]),
                        Some(parent) => {
                            let then = reading(parent.snapshot_id, before)?.restricted(touched);
                            let (now, then) = self.without_unchanged(&md, now, then).await?;
                            (false, vec![side(now, 1), side(then, -1)])
                        }
                    }
                }
            };
            changes.push(SnapshotChange {
                ordinal: ordinal as i32,
                snapshot: *id,
                appended,
                sides,
            });
        }
        changelog_view(&schema, changes, Vec::new(), &request.ids)
    }

    /// The two sides of a snapshot that rewrote files, each without the
    /// rows the snapshot did not change (in files it kept, or copied by a
    /// rewrite: format version 3 lineage), left out unread. Not for other
    /// engines' tables: their equality deletes are no positions.
    async fn without_unchanged(
        &self,
        md: &crate::spec::TableMetadata,
        now: HiddenPartitionsTable,
        then: HiddenPartitionsTable,
    ) -> Result<(HiddenPartitionsTable, HiddenPartitionsTable)> {
        if self.table.is_foreign() {
            return Ok((now, then));
        }
        let (now_files, then_files) = (now.plan_with(&[], None).await?, then.plan_with(&[], None).await?);
        // Each side's snapshot lists the manifests it planned from.
        let (Some(now_snapshot), Some(then_snapshot)) = (now.snapshot(), then.snapshot()) else {
            return Err(Error::Invalid(format!(
                "table {}: a changelog side lost its snapshot",
                self.table.name
            )));
        };
        let carried = crate::plan::lineage::carried_over(
            &self.table.location,
            md,
            (now_snapshot, &now_files.files),
            (then_snapshot, &then_files.files),
            crate::plan::lineage::tracked(md),
        )
        .await?;
        Ok((now.hiding(carried.after), then.hiding(carried.before)))
    }

    fn restricted(mut self, files: Arc<std::collections::HashSet<object_store::path::Path>>) -> Self {
        self.only = Some(files);
        self
    }

    fn hiding(mut self, rows: std::collections::HashMap<object_store::path::Path, Vec<u64>>) -> Self {
        if !rows.is_empty() {
            self.hidden = Some(Arc::new(rows.into_iter().map(|(p, v)| (p, Arc::from(v))).collect()));
        }
        self
    }
}

/// `side`'s table read as the changelog's columns (`schema`'s: cast where
/// the side's type is older and narrower, NULL where it lacks the
/// column), then `extra`; `hashed`: then each row's hash of those columns
/// (by their exact keys, `row_hash`).
fn side_plan(
    side: &ChangeSide,
    schema: &SchemaRef,
    alias: &str,
    extra: Vec<Expr>,
    hashed: bool,
) -> Result<LogicalPlan> {
    let have = side.table.schema();
    let scan = LogicalPlanBuilder::scan(alias, provider_as_source(Arc::clone(&side.table)), None)?;
    let mut values = Vec::with_capacity(schema.fields().len());
    for (field, from) in schema.fields().iter().zip(&side.select) {
        values.push(match from {
            Some(name) => {
                let column = Expr::Column(Column::new(Some(alias), name));
                match have.field_with_name(name) {
                    Ok(f) if f.data_type() == field.data_type() => column,
                    _ => Expr::Cast(datafusion::logical_expr::Cast::new(
                        Box::new(column),
                        field.data_type().clone(),
                    )),
                }
            }
            None => lit(ScalarValue::try_from(field.data_type())?),
        });
    }
    let mut exprs: Vec<Expr> = values
        .iter()
        .zip(schema.fields())
        .map(|(v, f)| v.clone().alias(f.name()))
        .collect();
    exprs.extend(extra);
    // Hashed here, in each side's partitions, not in the difference: in
    // the same projection, from the values it computes.
    if hashed {
        exprs.push(RowHash::udf().call(values).alias(HASH));
    }
    Ok(scan.project(exprs)?.build()?)
}

fn union(mut inputs: Vec<LogicalPlan>) -> Result<Option<LogicalPlan>> {
    Ok(match inputs.len() {
        0 => None,
        1 => inputs.pop(),
        _ => Some(LogicalPlan::Union(Union::try_new(
            inputs.into_iter().map(Arc::new).collect(),
        )?)),
    })
}

fn tail(ordinal: i32, snapshot: i64) -> [Expr; 2] {
    [
        lit(ordinal).alias(CHANGE_ORDINAL),
        lit(snapshot).alias(COMMIT_SNAPSHOT_ID),
    ]
}

/// The changelog: recorded changes and appended snapshots' rows as they
/// are, the others' through the multiset difference of their sides.
fn changelog_plan(
    schema: &SchemaRef,
    changes: Vec<SnapshotChange>,
    recorded: Vec<RecordedChanges>,
    ids: &[String],
) -> Result<LogicalPlan> {
    let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut parts = Vec::new();
    for (i, r) in recorded.into_iter().enumerate() {
        parts.push(recorded_plan(schema, r, i, ids)?);
    }
    for change in changes {
        let (ordinal, snapshot) = (change.ordinal, change.snapshot);
        let mut sides = Vec::new();
        for (i, side) in change.sides.iter().enumerate() {
            let alias = format!("changes_{ordinal}_{i}");
            if change.appended && reads_as_is(side, schema) {
                let scan = LogicalPlanBuilder::scan(alias, provider_as_source(Arc::clone(&side.table)), None)?;
                parts.push(scan.build()?);
                continue;
            }
            if change.appended {
                let mut extra = vec![lit("INSERT").alias(CHANGE_TYPE)];
                extra.extend(tail(ordinal, snapshot));
                parts.push(side_plan(side, schema, &alias, extra, false)?);
                continue;
            }
            let extra = vec![lit(side.sign).alias(SIGN)];
            sides.push(side_plan(side, schema, &alias, extra, true)?);
        }
        // One difference per snapshot.
        if let Some(sides) = union(sides)? {
            parts.push(difference(sides, ids, ordinal, snapshot, &columns)?);
        }
    }
    match union(parts)? {
        Some(plan) => Ok(plan),
        None => empty(schema, &columns),
    }
}

/// Whether `side`'s table has exactly the changelog's columns (`schema`'s,
/// then its own three), in order, typed alike: an append of ours, whose
/// scan adds the three (`HiddenPartitionsTable::with_change_constants`).
fn reads_as_is(side: &ChangeSide, schema: &SchemaRef) -> bool {
    let have = side.table.schema();
    let own = constant_fields();
    let want = schema.fields().iter().chain(&own);
    have.fields().len() == schema.fields().len() + 3
        && side
            .select
            .iter()
            .zip(schema.fields())
            .all(|(s, f)| s.as_deref() == Some(f.name().as_str()))
        && have
            .fields()
            .iter()
            .zip(want)
            .all(|(h, w)| h.name() == w.name() && h.data_type() == w.data_type())
}

/// The changelog's own columns, as a scan adds them to an append's rows.
pub(crate) fn constant_fields() -> [FieldRef; 3] {
    [
        Arc::new(Field::new(CHANGE_TYPE, DataType::Utf8, false)),
        Arc::new(Field::new(CHANGE_ORDINAL, DataType::Int32, false)),
        Arc::new(Field::new(COMMIT_SNAPSHOT_ID, DataType::Int64, false)),
    ]
}

/// Their values for an append's rows.
pub(crate) fn constant_values(change: super::table_provider::ChangeConstants) -> [ScalarValue; 3] {
    [
        ScalarValue::Utf8(Some("INSERT".to_string())),
        ScalarValue::Int32(Some(change.ordinal)),
        ScalarValue::Int64(Some(change.snapshot)),
    ]
}

/// Rows of one snapshot's sides whose signs do not cancel
/// (`difference::ChangeDifference`, keyed by the changelog's `columns`,
/// each row's hash of them in the sides' column [`HASH`]), with those
/// columns and the changelog's own (added by the difference), typed by
/// their sign and (with `ids`) by their identifier's other rows.
fn difference(
    sides: LogicalPlan,
    ids: &[String],
    ordinal: i32,
    snapshot: i64,
    columns: &[String],
) -> Result<LogicalPlan> {
    let table = Arc::new(ChangeDifference::new(
        sides,
        columns.to_vec(),
        SIGN.to_string(),
        Some(HASH.to_string()),
        Some(ChangeColumns { ordinal, snapshot }),
    ));
    let mut plan = LogicalPlanBuilder::scan(format!("changes_{ordinal}"), provider_as_source(table), None)?;
    let sign = || Expr::Column(Column::from_name(SIGN));
    let plain = Expr::Column(Column::from_name(CHANGE_TYPE));
    let change_type = if ids.is_empty() {
        plain
    } else {
        let (paired, typed) = paired(plan, sign(), id_columns(ids), plain)?;
        plan = paired;
        typed
    };
    let mut exprs: Vec<Expr> = columns.iter().map(|c| Expr::Column(Column::from_name(c))).collect();
    exprs.push(change_type.alias(CHANGE_TYPE));
    exprs.extend([CHANGE_ORDINAL, COMMIT_SNAPSHOT_ID].map(|c| Expr::Column(Column::from_name(c))));
    Ok(plan.project(exprs)?.build()?)
}

fn id_columns(ids: &[String]) -> Vec<Expr> {
    ids.iter().map(|c| Expr::Column(Column::from_name(c))).collect()
}

/// Identifier pairing: rows of an identifier (rows alike in `partition`)
/// whose `sign`s are both negative and positive are its UPDATE_BEFORE
/// (negative) and UPDATE_AFTER (positive); other rows are typed `plain`.
fn paired(
    plan: LogicalPlanBuilder,
    sign: Expr,
    partition: Vec<Expr>,
    plain: Expr,
) -> Result<(LogicalPlanBuilder, Expr)> {
    let over = |f: Arc<datafusion::logical_expr::AggregateUDF>, alias: &str| -> Result<Expr> {
        Ok(Expr::from(WindowFunction::new(
            WindowFunctionDefinition::AggregateUDF(f),
            vec![sign.clone()],
        ))
        .partition_by(partition.clone())
        .build()?
        .alias(alias))
    };
    let plan = plan.window(vec![over(min_udaf(), LOW)?, over(max_udaf(), HIGH)?])?;
    let both = col(LOW).lt(lit(0i64)).and(col(HIGH).gt(lit(0i64)));
    let typed = when(both.clone().and(sign.clone().gt(lit(0i64))), lit("UPDATE_AFTER"))
        .when(both, lit("UPDATE_BEFORE"))
        .otherwise(plain)?;
    Ok((plan, typed))
}

/// Changes the format's writers recorded (Delta's change data feed):
/// `table`'s rows are the changelog's columns, `_change_type` and
/// `_commit_snapshot_id`; snapshots are consecutive numbers (versions), so
/// a row's ordinal is its snapshot minus `range_start`, the range's first.
pub struct RecordedChanges {
    pub table: Arc<dyn TableProvider>,
    pub range_start: i64,
}

/// Recorded rows as they are; with `ids`, a recorded `DELETE` and `INSERT`
/// of one identifier in one snapshot are paired as an update.
fn recorded_plan(schema: &SchemaRef, recorded: RecordedChanges, part: usize, ids: &[String]) -> Result<LogicalPlan> {
    let alias = format!("changes_recorded_{part}");
    let mut plan = LogicalPlanBuilder::scan(alias, provider_as_source(recorded.table), None)?;
    let change_type = if ids.is_empty() {
        col(CHANGE_TYPE)
    } else {
        let sign = when(col(CHANGE_TYPE).eq(lit("INSERT")), lit(1i64))
            .when(col(CHANGE_TYPE).eq(lit("DELETE")), lit(-1i64))
            .otherwise(lit(0i64))?;
        let mut partition = id_columns(ids);
        partition.push(col(COMMIT_SNAPSHOT_ID));
        let (windowed, typed) = paired(plan, sign, partition, col(CHANGE_TYPE))?;
        plan = windowed;
        typed
    };
    let mut exprs: Vec<Expr> = schema
        .fields()
        .iter()
        .map(|f| Expr::Column(Column::from_name(f.name())))
        .collect();
    exprs.push(change_type.alias(CHANGE_TYPE));
    let ordinal = col(COMMIT_SNAPSHOT_ID) - lit(recorded.range_start);
    exprs.push(
        Expr::Cast(datafusion::logical_expr::Cast::new(Box::new(ordinal), DataType::Int32)).alias(CHANGE_ORDINAL),
    );
    exprs.push(col(COMMIT_SNAPSHOT_ID));
    Ok(plan.project(exprs)?.build()?)
}

/// No snapshot in the range: no rows, the changelog's columns.
fn empty(schema: &SchemaRef, columns: &[String]) -> Result<LogicalPlan> {
    let one = LogicalPlan::EmptyRelation(EmptyRelation {
        produce_one_row: false,
        schema: Arc::new(datafusion::common::DFSchema::empty()),
    });
    let mut exprs = Vec::new();
    for (c, f) in columns.iter().zip(schema.fields()) {
        exprs.push(lit(ScalarValue::try_from(f.data_type())?).alias(c));
    }
    exprs.push(lit(ScalarValue::Utf8(None)).alias(CHANGE_TYPE));
    exprs.push(lit(ScalarValue::Int32(None)).alias(CHANGE_ORDINAL));
    exprs.push(lit(ScalarValue::Int64(None)).alias(COMMIT_SNAPSHOT_ID));
    Ok(LogicalPlanBuilder::from(one).project(exprs)?.build()?)
}
