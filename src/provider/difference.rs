//! The multiset difference of one snapshot's two changelog sides: each
//! row of the snapshot's side counts +1, each of its parent's −1, and a row
//! whose counts sum to zero is no change (a copy-on-write rewrite carried
//! it over, or `UPDATE t SET v = v` wrote it back as it was).
//!
//! | side (sign) | rows                    | difference                         |
//! |-------------|-------------------------|------------------------------------|
//! | parent (−1) | (1,'a') (2,'b') (3,'c') | (2,'b') −1: a DELETE               |
//! | snapshot (+1) | (1,'a') (2,'x') (3,'c') | (2,'x') +1: an INSERT; (1,'a') and (3,'c') cancel |
//!
//! Why not `GROUP BY` every column: that keeps a group per row and compares
//! every row in full. Here each row's key columns are hashed (by the
//! sides' own projections, `row_hash.rs`, on the cores that read them),
//! and set, as each batch arrives, in a bit filter with a block per sign
//! (16 bits per row of each sign, three bits per hash: one memory access
//! a row), which says whether the other sign had the hash already; a
//! row whose hash no row of the other sign had cannot cancel and passes
//! as it is, in its batch, uncopied. Of the other rows (copied ones, and
//! well under one percent by chance), those whose exact hash rows of both
//! signs have are grouped exactly (DataFusion's group values) and their
//! signs summed; a batch that is mostly such rows is grouped whole. An
//! UPDATE that changes every row of a file so costs a hash per row, not a
//! grouping of both files.
//!
//! The rows leave with the changelog's own columns added (`_change_type`
//! from the sign, `change_type.rs`; the snapshot's ordinal and id), so
//! nothing over the difference computes them row by row.
//!
//! The key columns (the changelog's columns) are hashed and compared by
//! their exact keys (`exact_key`: floats by their bits, nested values by
//! their bytes), so "the same row" means the same stored values; only the
//! candidates' keys are computed here.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int32Array, Int64Array, RecordBatch, UInt32Array,
};
use datafusion::arrow::compute::{filter_record_batch, interleave_record_batch, take};
use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema, SchemaRef, UInt64Type};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{internal_datafusion_err, internal_err};
use datafusion::datasource::TableType;
use datafusion::error::Result;
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, TableProviderFilterPushDown};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::aggregates::group_values::new_group_values;
use datafusion::physical_plan::aggregates::order::GroupOrdering;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{BaselineMetrics, ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties, Partitioning, PlanProperties,
};
use futures::{StreamExt, TryStreamExt};

use super::exact_key::{exact_keys, key_type};
use super::row_hash::row_hashes;

/// The difference as a table: `input` (both sides, each row with its
/// sign) read through [`DifferenceExec`], then the changelog's own columns
/// ([`ChangeColumns`]), if asked for. Filters on the changelog's value columns
/// (the keys) are applied to both sides before (a row and its cancelling
/// twin pass or fail together); filters on other columns are not.
#[derive(Debug)]
pub struct ChangeDifference {
    input: LogicalPlan,
    schema: SchemaRef,
    keys: Vec<String>,
    sign: String,
    hash: Option<String>,
    added: Option<ChangeColumns>,
}

/// The changelog's own columns a difference adds after its input's:
/// `_change_type` (from each row's sign: `INSERT`, `DELETE`), then
/// `_change_ordinal` and `_commit_snapshot_id`, the same for every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeColumns {
    pub ordinal: i32,
    pub snapshot: i64,
}

impl ChangeDifference {
    /// The difference of `input`'s rows by columns `keys`, signed by its
    /// Int64 column `sign`; `hash`, its UInt64 column of each row's hash of
    /// the keys (`__hp_row_hash`), if it has one; `added`: the changelog
    /// columns it adds, if any.
    pub fn new(
        input: LogicalPlan,
        keys: Vec<String>,
        sign: String,
        hash: Option<String>,
        added: Option<ChangeColumns>,
    ) -> Self {
        let schema = with_added(input.schema().as_arrow(), added.is_some());
        Self {
            input,
            schema,
            keys,
            sign,
            hash,
            added,
        }
    }

    pub fn input(&self) -> &LogicalPlan {
        &self.input
    }

    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    pub fn sign(&self) -> &str {
        &self.sign
    }

    pub fn hash(&self) -> Option<&str> {
        self.hash.as_deref()
    }

    pub fn added(&self) -> Option<ChangeColumns> {
        self.added
    }

    /// Whether `filter` may be applied to the sides: it reads only value
    /// columns (the keys: not the sign, not the change type), is not
    /// volatile and has no subquery.
    fn applies_to_sides(&self, filter: &Expr) -> bool {
        let mut ok = !filter.is_volatile();
        let _ = filter.apply(|e| {
            if matches!(e, Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_)) {
                ok = false;
                return Ok(TreeNodeRecursion::Stop);
            }
            if let Expr::Column(c) = e
                && !self.keys.contains(&c.name)
            {
                ok = false;
                return Ok(TreeNodeRecursion::Stop);
            }
            Ok(TreeNodeRecursion::Continue)
        });
        ok
    }
}

#[async_trait]
impl TableProvider for ChangeDifference {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match self.applies_to_sides(f) {
                true => TableProviderFilterPushDown::Inexact,
                false => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // The sides' columns are unqualified.
        let unqualified = filters
            .iter()
            .filter(|f| self.applies_to_sides(f))
            .map(|f| crate::expr::unqualified(f.clone()))
            .collect::<Result<Vec<_>>>()?;
        let input = super::side_planner::plan_sides(&self.input, unqualified, state).await?;
        let sides = input.schema();
        let index = |name: &str| sides.index_of(name).map_err(Into::into);
        let keys = self.keys.iter().map(|k| index(k)).collect::<Result<Vec<_>>>()?;
        let hash = self.hash.as_deref().map(index).transpose()?;
        let parallel = parallel(&input);
        Ok(Arc::new(DifferenceExec::try_new(
            input,
            keys,
            index(&self.sign)?,
            hash,
            self.added,
            projection.cloned(),
            parallel,
        )?))
    }
}

/// `input`'s fields, then (`added`) the changelog's own columns.
fn with_added(input: &Schema, added: bool) -> SchemaRef {
    let mut fields: Vec<_> = input.fields().iter().cloned().collect();
    if added {
        fields.extend(super::changes::constant_fields());
    }
    Arc::new(Schema::new_with_metadata(fields, input.metadata().clone()))
}

/// Sides of at most this many rows (by their scans' statistics) are
/// compared in one partition: hashing them again to spread them over the
/// cores costs more than it saves, and the scans still read in parallel.
const PARALLEL_ROWS: usize = 1_000_000;

/// Whether `input` is large (or of unknown size) enough to compare in
/// hash partitions.
fn parallel(input: &Arc<dyn ExecutionPlan>) -> bool {
    rows_of(input).is_none_or(|rows| rows > PARALLEL_ROWS)
}

/// Rows of `input` whose signs (its Int64 column `sign`) do not cancel
/// with identical rows (`keys` alike) of the other sign: per distinct row,
/// as many rows as its sum of signs, of that sign; with `added`, then the
/// changelog's own columns ([`ChangeColumns`]); then `projection` (of
/// those columns).
/// `hash`: the input's UInt64 column of each row's hash of its keys
/// (`row_hash::row_hashes`); without it the operator hashes them.
/// `parallel`: input partitions are hashed by the keys, so each partition
/// is one difference of its own; otherwise one partition.
#[derive(Debug)]
pub struct DifferenceExec {
    input: Arc<dyn ExecutionPlan>,
    keys: Vec<usize>,
    sign: usize,
    hash: Option<usize>,
    added: Option<ChangeColumns>,
    /// The schema before `projection`: the input's, then `added`'s.
    full: SchemaRef,
    projection: Option<Vec<usize>>,
    parallel: bool,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl DifferenceExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        keys: Vec<usize>,
        sign: usize,
        hash: Option<usize>,
        added: Option<ChangeColumns>,
        projection: Option<Vec<usize>>,
        parallel: bool,
    ) -> Result<Self> {
        let schema = input.schema();
        if schema.fields().get(sign).map(|f| f.data_type()) != Some(&DataType::Int64) {
            return internal_err!("the changelog difference's sign (column {sign}) must be an Int64 column");
        }
        if let Some(h) = hash
            && schema.fields().get(h).map(|f| f.data_type()) != Some(&DataType::UInt64)
        {
            return internal_err!("the changelog difference's row hash (column {h}) must be a UInt64 column");
        }
        if keys.iter().any(|k| *k >= schema.fields().len()) {
            return internal_err!("the changelog difference's keys {keys:?} are not all columns of its input");
        }
        let full = with_added(&schema, added.is_some());
        let out = match &projection {
            Some(p) => Arc::new(full.project(p)?),
            None => Arc::clone(&full),
        };
        let partitions = match parallel {
            true => input.output_partitioning().partition_count(),
            false => 1,
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(out),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        Ok(Self {
            input,
            keys,
            sign,
            hash,
            added,
            full,
            projection,
            parallel,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    pub fn keys(&self) -> &[usize] {
        &self.keys
    }

    pub fn sign(&self) -> usize {
        self.sign
    }

    pub fn hash(&self) -> Option<usize> {
        self.hash
    }

    pub fn added(&self) -> Option<ChangeColumns> {
        self.added
    }

    pub fn projection(&self) -> Option<&Vec<usize>> {
        self.projection.as_ref()
    }

    pub fn parallel(&self) -> bool {
        self.parallel
    }
}

impl DisplayAs for DifferenceExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let schema = self.input.schema();
        let keys: Vec<&str> = self.keys.iter().map(|k| schema.field(*k).name().as_str()).collect();
        write!(
            f,
            "ChangelogDifferenceExec: keys=[{}], sign={}, parallel={}",
            keys.join(", "),
            schema.field(self.sign).name(),
            self.parallel
        )
    }
}

impl ExecutionPlan for DifferenceExec {
    fn name(&self) -> &str {
        "ChangelogDifferenceExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        if !self.parallel {
            return vec![Distribution::SinglePartition];
        }
        let schema = self.input.schema();
        // Equal keys, equal hash: partitioning by the hash alone keeps them together.
        let by = match self.hash {
            Some(h) => vec![h],
            None => self.keys.clone(),
        };
        let keys: Vec<Arc<dyn PhysicalExpr>> = by
            .iter()
            .map(|k| {
                Arc::new(datafusion::physical_expr::expressions::Column::new(
                    schema.field(*k).name(),
                    *k,
                )) as Arc<dyn PhysicalExpr>
            })
            .collect();
        vec![Distribution::KeyPartitioned(keys)]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![self.parallel]
    }

    fn with_new_children(self: Arc<Self>, mut children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        match (children.pop(), children.is_empty()) {
            (Some(input), true) => Ok(Arc::new(Self::try_new(
                input,
                self.keys.clone(),
                self.sign,
                self.hash,
                self.added,
                self.projection.clone(),
                self.parallel,
            )?)),
            _ => internal_err!("ChangelogDifferenceExec has one child"),
        }
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, Arc::clone(&context))?;
        let reservation =
            MemoryConsumer::new(format!("ChangelogDifference[{partition}]")).register(context.memory_pool());
        let (keys, sign, hash) = (self.keys.clone(), self.sign, self.hash);
        let batch_size = context.session_config().batch_size();
        let finish = Finish {
            sign,
            added: self.added.map(|a| Constants::new(a, batch_size)),
            full: Arc::clone(&self.full),
            projection: self.projection.clone(),
        };
        let metrics = BaselineMetrics::new(&self.metrics, partition);
        let partitions = self.properties.partitioning.partition_count().max(1);
        let expected = rows_of(&self.input).map(|rows| rows.div_ceil(partitions));
        let stream = futures::stream::once(async move {
            let mut arrivals = expected.map(Arrivals::new);
            let (batches, _reservation) = collect(input, reservation, &keys, sign, hash, arrivals.as_mut()).await?;
            let timer = metrics.elapsed_compute().timer();
            let rows: usize = batches.iter().map(|b| b.hashes.len()).sum();
            let candidates = match (arrivals, expected) {
                // Filters sized for the rows that came (twice as many fill
                // them past their chance-match rate).
                (Some(arrivals), Some(expected)) if rows <= 2 * expected.max(1) => arrivals.candidates(&batches),
                _ => candidates(&batches),
            };
            let out = difference(&batches, &keys, batch_size, candidates)?;
            timer.done();
            let rows: usize = out.iter().map(|b| b.num_rows()).sum();
            metrics.record_output(rows);
            metrics.done();
            Ok::<_, datafusion::error::DataFusionError>(futures::stream::iter(
                out.into_iter().map(move |b| finish.batch(b)),
            ))
        })
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.schema(), stream)))
    }
}

/// What the difference's rows become as they leave: with the changelog's
/// own columns, if added, then projected.
struct Finish {
    sign: usize,
    added: Option<Constants>,
    full: SchemaRef,
    projection: Option<Vec<usize>>,
}

/// An added ordinal and snapshot id column of a batch's size, built once
/// per partition, sliced for each batch.
struct Constants {
    added: ChangeColumns,
    ordinal: Int32Array,
    snapshot: Int64Array,
}

impl Constants {
    fn new(added: ChangeColumns, rows: usize) -> Self {
        Self {
            added,
            ordinal: Int32Array::from_value(added.ordinal, rows),
            snapshot: Int64Array::from_value(added.snapshot, rows),
        }
    }

    /// The three added columns of a batch of `signs`.
    fn columns(&self, signs: &Int64Array) -> [ArrayRef; 3] {
        let rows = signs.len();
        let (ordinal, snapshot) = match rows <= self.ordinal.len() {
            true => (self.ordinal.slice(0, rows), self.snapshot.slice(0, rows)),
            false => (
                Int32Array::from_value(self.added.ordinal, rows),
                Int64Array::from_value(self.added.snapshot, rows),
            ),
        };
        [
            super::change_type::change_types(signs),
            Arc::new(ordinal),
            Arc::new(snapshot),
        ]
    }
}

impl Finish {
    fn batch(&self, batch: RecordBatch) -> Result<RecordBatch> {
        let batch = match &self.added {
            Some(added) => {
                let signs = batch
                    .column(self.sign)
                    .as_primitive_opt::<Int64Type>()
                    .ok_or_else(|| internal_datafusion_err!("the changelog sign is not an Int64 column"))?;
                let mut columns = batch.columns().to_vec();
                columns.extend(added.columns(signs));
                RecordBatch::try_new(Arc::clone(&self.full), columns)?
            }
            None => batch,
        };
        match &self.projection {
            Some(p) => Ok(batch.project(p)?),
            None => Ok(batch),
        }
    }
}

/// A batch of the input with each row's sign and hash.
struct Hashed {
    batch: RecordBatch,
    signs: Signs,
    hashes: datafusion::arrow::buffer::ScalarBuffer<u64>,
}

/// A batch's signs: one for all its rows (a side's batch), or per row.
enum Signs {
    All(u8),
    /// [`PLUS`] or [`MINUS`] per row.
    Each(Vec<u8>),
}

const PLUS: u8 = 1;
const MINUS: u8 = 2;

impl Hashed {
    fn new(batch: RecordBatch, keys: &[usize], sign: usize, hash: Option<usize>) -> Result<Self> {
        let column = batch.column(sign);
        if column.null_count() > 0 {
            return internal_err!("a changelog side has a row without a sign");
        }
        let values = column
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| internal_datafusion_err!("the changelog sign is not an Int64 column"))?
            .values();
        let signs = if values.iter().all(|s| *s == 1) {
            Signs::All(PLUS)
        } else if values.iter().all(|s| *s == -1) {
            Signs::All(MINUS)
        } else {
            // One pass without a branch per row; a bad sign is found after it.
            let signs: Vec<u8> = values
                .iter()
                .map(|s| u8::from(*s == 1) * PLUS + u8::from(*s == -1) * MINUS)
                .collect();
            if let Some(at) = signs.iter().position(|s| *s == 0) {
                return internal_err!("a changelog side's sign is {}, not 1 or -1", values[at]);
            }
            Signs::Each(signs)
        };
        let hashes = match hash {
            Some(h) => {
                let column = batch.column(h);
                if column.null_count() > 0 {
                    return internal_err!("a changelog side has a row without a hash");
                }
                column
                    .as_primitive_opt::<UInt64Type>()
                    .ok_or_else(|| internal_datafusion_err!("the changelog row hash is not a UInt64 column"))?
                    .values()
                    .clone()
            }
            None => {
                let columns: Vec<ArrayRef> = keys.iter().map(|k| Arc::clone(batch.column(*k))).collect();
                row_hashes(&columns, batch.num_rows())?.into()
            }
        };
        Ok(Self { batch, signs, hashes })
    }

    /// Row `row`'s sign.
    fn sign(&self, row: usize) -> u8 {
        match &self.signs {
            Signs::All(sign) => *sign,
            Signs::Each(signs) => signs[row],
        }
    }
}

/// Every batch of `input`, hashed as it arrives (while the scans still
/// read), accounted in `reservation` (an error when the session's memory
/// limit is reached).
async fn collect(
    mut input: SendableRecordBatchStream,
    reservation: MemoryReservation,
    keys: &[usize],
    sign: usize,
    hash: Option<usize>,
    mut arrivals: Option<&mut Arrivals>,
) -> Result<(Vec<Hashed>, MemoryReservation)> {
    let mut batches = Vec::new();
    while let Some(batch) = input.next().await {
        let batch = batch?;
        if batch.num_rows() > 0 {
            reservation.try_grow(batch.get_array_memory_size() + batch.num_rows() * 9)?;
            let hashed = Hashed::new(batch, keys, sign, hash)?;
            if let Some(arrivals) = arrivals.as_deref_mut() {
                arrivals.add(&hashed);
            }
            batches.push(hashed);
        }
    }
    Ok((batches, reservation))
}

/// The input's rows by its statistics, if known.
fn rows_of(input: &Arc<dyn ExecutionPlan>) -> Option<usize> {
    let stats = datafusion::physical_plan::statistics::StatisticsContext::new()
        .compute(input.as_ref(), &datafusion::physical_plan::StatisticsArgs::new());
    stats.ok().and_then(|s| s.num_rows.get_value().copied())
}

/// Each sign's hashes, set in a filter as the batches arrive (while the
/// sides are still being read), and the hashes that may cancel: a row
/// whose hash the other sign already has. Of two equal rows of opposite
/// signs the later one finds the earlier, so every hash of rows that
/// cancel is among them; once all rows came, only the rows with such a
/// hash are candidates, found with a filter of those hashes alone (usually
/// small: most rows of an UPDATE meet no equal row).
struct Arrivals {
    seen: SignedBits,
    shared: Vec<u64>,
}

impl Arrivals {
    /// For about `rows` rows of both signs (each sign's half of the filter
    /// sized for half of them: a sign with more has more chance matches,
    /// never fewer true ones).
    fn new(rows: usize) -> Self {
        Self {
            seen: SignedBits::new(rows.div_ceil(2)),
            shared: Vec::new(),
        }
    }

    fn add(&mut self, batch: &Hashed) {
        match &batch.signs {
            Signs::All(sign) => {
                for hash in batch.hashes.iter() {
                    if self.seen.add(*hash, *sign) {
                        self.shared.push(*hash);
                    }
                }
            }
            Signs::Each(signs) => {
                for (hash, sign) in batch.hashes.iter().zip(signs) {
                    if self.seen.add(*hash, *sign) {
                        self.shared.push(*hash);
                    }
                }
            }
        }
    }

    /// The rows of `batches` (all of them added) that may cancel: those
    /// whose hash is among the shared ones (by a filter of those), then,
    /// when that is few rows, only those whose exact hash rows of both
    /// signs have (most shared hashes are the filter's chance matches,
    /// with one row of one sign).
    fn candidates(self, batches: &[Hashed]) -> Vec<(usize, Vec<u32>)> {
        if self.shared.is_empty() {
            return Vec::new();
        }
        let mut shared = HashBits::new(self.shared.len());
        self.shared.iter().for_each(|h| shared.insert(*h));
        let passing: Vec<(usize, Vec<u32>)> = batches
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let rows = b.hashes.iter().enumerate().filter(|(_, h)| shared.may_contain(**h));
                (i, rows.map(|(r, _)| r as u32).collect::<Vec<u32>>())
            })
            .filter(|(_, rows)| !rows.is_empty())
            .collect();
        let count: usize = passing.iter().map(|(_, r)| r.len()).sum();
        let rows: usize = batches.iter().map(|b| b.hashes.len()).sum();
        let passing = match count * FEW <= rows {
            true => of_both_signs(batches, passing, count),
            false => passing,
        };
        candidate_rows(batches, passing)
    }
}

/// Candidates at most one in this many rows are checked by their exact
/// hashes before they are grouped (more are mostly true: a rewrite's
/// copied rows).
const FEW: usize = 8;

/// The rows of `passing` (per batch, its rows; `count` in all) whose
/// exact hash rows of both signs among them have.
fn of_both_signs(batches: &[Hashed], passing: Vec<(usize, Vec<u32>)>, count: usize) -> Vec<(usize, Vec<u32>)> {
    let mut signs: std::collections::HashMap<u64, u8> = std::collections::HashMap::with_capacity(count);
    for (b, rows) in &passing {
        let batch = &batches[*b];
        for r in rows {
            *signs.entry(batch.hashes[*r as usize]).or_default() |= batch.sign(*r as usize);
        }
    }
    passing
        .into_iter()
        .map(|(b, rows)| {
            let hashes = &batches[b].hashes;
            let rows = rows.into_iter().filter(|r| signs[&hashes[*r as usize]] == PLUS | MINUS);
            (b, rows.collect::<Vec<u32>>())
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

/// Both signs' hashes in one blocked Bloom filter: each 64-bit word holds
/// a 32-bit block per sign (the low half [`PLUS`], the high half
/// [`MINUS`]), so setting a row's hash and asking whether the other sign
/// has it is one memory access. The hash's top bits pick the word, three
/// 5-bit slices of its low bits the three bits in the block.
struct SignedBits {
    words: Vec<u64>,
    /// log2 of the number of words.
    width: u32,
}

impl SignedBits {
    /// 16 bits of each sign's block per row, for `rows` rows of each sign
    /// (rounded up to a power of two), at most 2^28 bits.
    fn new(rows: usize) -> Self {
        let words = ((rows.max(2) * 16).next_power_of_two().min(1 << 28) / 32).max(1);
        Self {
            words: vec![0; words],
            width: words.trailing_zeros(),
        }
    }

    /// Sets `hash` for `sign`; whether the other sign had it already.
    fn add(&mut self, hash: u64, sign: u8) -> bool {
        let word = hash.checked_shr(64 - self.width).unwrap_or(0) as usize;
        let bits = (1u64 << (hash & 31)) | (1u64 << ((hash >> 5) & 31)) | (1u64 << ((hash >> 10) & 31));
        let (own, other) = match sign {
            PLUS => (bits, bits << 32),
            _ => (bits << 32, bits),
        };
        let word = &mut self.words[word];
        let had = *word & other == other;
        *word |= own;
        had
    }
}

/// A set of hashes (those that met the other sign) as a blocked Bloom
/// filter: the hash's top bits pick a 64-bit word, three 6-bit slices of
/// its low bits set three bits in it (one memory access per row). A clear
/// bit means the hash is not in the set.
struct HashBits {
    words: Vec<u64>,
    /// log2 of the number of words.
    width: u32,
}

impl HashBits {
    /// Words for a filter of `rows` hashes: 16 bits per row (rounded up to
    /// a power of two), at most 2^28 bits. A chance match: 0.1–0.5 % of
    /// rows.
    fn new(rows: usize) -> Self {
        let bits = (rows.max(4) * 16).next_power_of_two().min(1 << 28);
        let words = bits / 64;
        Self {
            words: vec![0; words],
            width: words.trailing_zeros(),
        }
    }

    /// `hash`'s word and its three bits.
    fn at(&self, hash: u64) -> (usize, u64) {
        let word = hash.checked_shr(64 - self.width).unwrap_or(0) as usize;
        let bits = (1u64 << (hash & 63)) | (1u64 << ((hash >> 6) & 63)) | (1u64 << ((hash >> 12) & 63));
        (word, bits)
    }

    fn insert(&mut self, hash: u64) {
        let (word, bits) = self.at(hash);
        self.words[word] |= bits;
    }

    fn may_contain(&self, hash: u64) -> bool {
        let (word, bits) = self.at(hash);
        self.words[word] & bits == bits
    }
}

/// No row yet (of a sign, in a group).
const NONE: u64 = u64::MAX;

/// The rows of `batches` that may cancel, found after all came (the
/// input's size was unknown, or far above its statistics).
fn candidates(batches: &[Hashed]) -> Vec<(usize, Vec<u32>)> {
    let rows: usize = batches.iter().map(|b| b.hashes.len()).sum();
    let mut arrivals = Arrivals::new(rows);
    batches.iter().for_each(|b| arrivals.add(b));
    arrivals.candidates(batches)
}

/// Per batch, its rows of `may_cancel`: all of them when that is most
/// (a rewrite's copied rows: grouped without gathering them first).
fn candidate_rows(batches: &[Hashed], may_cancel: Vec<(usize, Vec<u32>)>) -> Vec<(usize, Vec<u32>)> {
    may_cancel
        .into_iter()
        .map(|(i, rows)| {
            let all = batches[i].hashes.len();
            match rows.len() * 2 > all {
                true => (i, (0..all as u32).collect()),
                false => (i, rows),
            }
        })
        .collect()
}

/// The difference of `batches` (see [`DifferenceExec`]), whose rows that
/// may cancel are `candidates` (per batch, its rows).
fn difference(
    batches: &[Hashed],
    keys: &[usize],
    batch_size: usize,
    candidates: Vec<(usize, Vec<u32>)>,
) -> Result<Vec<RecordBatch>> {
    let Some(first) = batches.first() else {
        return Ok(Vec::new());
    };
    if candidates.is_empty() {
        return Ok(batches.iter().map(|b| b.batch.clone()).collect());
    }
    // The candidates grouped by their keys, exactly (DataFusion's grouping).
    let schema = first.batch.schema();
    let key_schema = Arc::new(Schema::new(
        keys.iter()
            .map(|k| {
                let f = schema.field(*k);
                Field::new(f.name(), key_type(f.data_type()), f.is_nullable())
            })
            .collect::<Vec<_>>(),
    ));
    let mut values = new_group_values(key_schema, &GroupOrdering::None)?;
    let mut ids = Vec::new();
    let mut net: Vec<i64> = Vec::new();
    // (input batch, row) of a row of each sign, per group; NONE: none yet.
    let (mut plus, mut minus): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
    // Each candidate's group, in `candidates`' order.
    let mut group_of: Vec<Vec<u32>> = Vec::with_capacity(candidates.len());
    for (b, shared) in &candidates {
        let batch = &batches[*b];
        let columns = if shared.len() == batch.hashes.len() {
            keys.iter()
                .map(|k| Arc::clone(batch.batch.column(*k)))
                .collect::<Vec<_>>()
        } else {
            let indices = UInt32Array::from(shared.clone());
            keys.iter()
                .map(|k| take(batch.batch.column(*k), &indices, None))
                .collect::<std::result::Result<Vec<_>, _>>()?
        };
        values.intern(&exact_keys(&columns)?, &mut ids)?;
        let groups = values.len();
        net.resize(groups, 0);
        plus.resize(groups, NONE);
        minus.resize(groups, NONE);
        for (&r, &g) in shared.iter().zip(&ids) {
            let at = ((*b as u64) << 32) | u64::from(r);
            if batch.sign(r as usize) == PLUS {
                net[g] += 1;
                if plus[g] == NONE {
                    plus[g] = at;
                }
            } else {
                net[g] -= 1;
                if minus[g] == NONE {
                    minus[g] = at;
                }
            }
        }
        group_of.push(ids.iter().map(|g| *g as u32).collect());
    }
    // Rows of groups with both signs leave their batches (most batches
    // keep every row and pass as they are); each such group's sum of
    // signs comes back as that many rows of its sign.
    let mixed = |g: usize| plus[g] != NONE && minus[g] != NONE;
    let mut leaving: Vec<Vec<u32>> = vec![Vec::new(); batches.len()];
    for ((b, shared), of) in candidates.iter().zip(&group_of) {
        leaving[*b].extend(
            shared
                .iter()
                .zip(of)
                .filter(|(_, g)| mixed(**g as usize))
                .map(|(r, _)| *r),
        );
    }
    let mut out = Vec::with_capacity(batches.len());
    for (b, leave) in batches.iter().zip(&leaving) {
        if leave.is_empty() {
            out.push(b.batch.clone());
        } else if leave.len() < b.hashes.len() {
            let mut keep = vec![true; b.hashes.len()];
            for r in leave {
                keep[*r as usize] = false;
            }
            out.push(filter_record_batch(&b.batch, &BooleanArray::from(keep))?);
        }
    }
    let mut picks = Vec::new();
    for g in (0..net.len()).filter(|g| mixed(*g)) {
        let at = match net[g] {
            0 => continue,
            n if n > 0 => plus[g],
            _ => minus[g],
        };
        let row = ((at >> 32) as usize, (at & u64::from(u32::MAX)) as usize);
        picks.extend(std::iter::repeat_n(row, net[g].unsigned_abs() as usize));
    }
    let all: Vec<&RecordBatch> = batches.iter().map(|b| &b.batch).collect();
    for chunk in picks.chunks(batch_size.max(1)) {
        out.push(interleave_record_batch(&all, chunk)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    fn batch(ids: &[i64], vs: &[Option<&str>], signs: &[i64]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("v", DataType::Utf8, true),
            Field::new("sign", DataType::Int64, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(ids.to_vec())),
                Arc::new(StringArray::from(vs.to_vec())),
                Arc::new(Int64Array::from(signs.to_vec())),
            ],
        )
        .unwrap()
    }

    fn sorted(out: Vec<RecordBatch>) -> Vec<(i64, Option<String>, i64)> {
        let mut all = Vec::new();
        for b in out {
            let ids = b.column(0).as_primitive::<Int64Type>();
            let vs = b.column(1).as_string::<i32>();
            let signs = b.column(2).as_primitive::<Int64Type>();
            for i in 0..b.num_rows() {
                all.push((
                    ids.value(i),
                    vs.is_valid(i).then(|| vs.value(i).to_string()),
                    signs.value(i),
                ));
            }
        }
        all.sort();
        all
    }

    #[test]
    fn equal_rows_of_both_signs_cancel_and_the_rest_is_counted() {
        let before = batch(
            &[1, 2, 3, 4, 4, 5],
            &[Some("a"), Some("b"), None, Some("d"), Some("d"), Some("e")],
            &[-1; 6],
        );
        // 1 and the NULL row carried over; 2 changed; one of the two 4s
        // deleted; 5 deleted; 6 inserted twice.
        let after = batch(
            &[1, 2, 3, 4, 6, 6],
            &[Some("a"), Some("x"), None, Some("d"), Some("f"), Some("f")],
            &[1; 6],
        );
        let hashed = [before, after].map(|b| Hashed::new(b, &[0, 1], 2, None).unwrap());
        let out = difference(&hashed, &[0, 1], 2, candidates(&hashed)).unwrap();
        assert_eq!(
            sorted(out),
            vec![
                (2, Some("b".into()), -1),
                (2, Some("x".into()), 1),
                (4, Some("d".into()), -1),
                (5, Some("e".into()), -1),
                (6, Some("f".into()), 1),
                (6, Some("f".into()), 1),
            ]
        );
    }

    /// Many rows from a small domain (so most rows meet equal ones of both
    /// signs, and the bit filters fill up) against counting by hand.
    #[test]
    fn many_rows_match_a_counted_difference() {
        let mut state = 7u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut counts = std::collections::BTreeMap::<(i64, Option<String>), i64>::new();
        let mut batches = Vec::new();
        for b in 0..12 {
            let n = 1 + (next() % 700) as usize;
            let ids: Vec<i64> = (0..n).map(|_| (next() % 300) as i64).collect();
            let vs: Vec<Option<String>> = (0..n)
                .map(|_| (next() % 5 != 0).then(|| format!("v{}", next() % 3)))
                .collect();
            let signs: Vec<i64> = (0..n).map(|_| if (next() + b) % 2 == 0 { 1 } else { -1 }).collect();
            for i in 0..n {
                *counts.entry((ids[i], vs[i].clone())).or_default() += signs[i];
            }
            let vs: Vec<Option<&str>> = vs.iter().map(|v| v.as_deref()).collect();
            batches.push(Hashed::new(batch(&ids, &vs, &signs), &[0, 1], 2, None).unwrap());
        }
        let mut want = Vec::new();
        for ((id, v), n) in counts {
            for _ in 0..n.unsigned_abs() {
                want.push((id, v.clone(), n.signum()));
            }
        }
        want.sort();
        assert_eq!(
            sorted(difference(&batches, &[0, 1], 100, candidates(&batches)).unwrap()),
            want
        );
        // Found as the batches arrive, with filters sized for the rows
        // (and far too small: more chance matches, the same answer).
        let rows: usize = batches.iter().map(|b| b.hashes.len()).sum();
        for expected in [rows, 10] {
            let mut arrivals = Arrivals::new(expected);
            batches.iter().for_each(|b| arrivals.add(b));
            let found = arrivals.candidates(&batches);
            assert_eq!(sorted(difference(&batches, &[0, 1], 100, found).unwrap()), want);
        }
    }

    /// In hash partitions (as for large sides), each partition's difference
    /// is that of its rows, and together they are the whole difference.
    #[tokio::test]
    async fn hash_partitions_give_the_same_difference() {
        use datafusion::physical_plan::repartition::RepartitionExec;
        let before = batch(&[1, 2, 3, 4], &[Some("a"), Some("b"), Some("c"), Some("d")], &[-1; 4]);
        let after = batch(&[1, 2, 3, 5], &[Some("a"), Some("x"), Some("c"), Some("e")], &[1; 4]);
        let schema = before.schema();
        let source = datafusion::datasource::memory::MemorySourceConfig::try_new_exec(
            &[vec![before], vec![after]],
            Arc::clone(&schema),
            None,
        )
        .unwrap();
        let keys: Vec<Arc<dyn PhysicalExpr>> = ["id", "v"]
            .iter()
            .map(|c| {
                Arc::new(datafusion::physical_expr::expressions::Column::new_with_schema(c, &schema).unwrap())
                    as Arc<dyn PhysicalExpr>
            })
            .collect();
        let hashed = Arc::new(RepartitionExec::try_new(source, Partitioning::Hash(keys, 3)).unwrap());
        let exec =
            Arc::new(DifferenceExec::try_new(hashed, vec![0, 1], 2, None, None, Some(vec![0, 2]), true).unwrap());
        assert_eq!(exec.properties().partitioning.partition_count(), 3);
        let out = datafusion::physical_plan::collect(exec, Arc::new(TaskContext::default()))
            .await
            .unwrap();
        let mut got: Vec<(i64, i64)> = out
            .iter()
            .flat_map(|b| {
                let ids = b.column(0).as_primitive::<Int64Type>();
                let signs = b.column(1).as_primitive::<Int64Type>();
                (0..b.num_rows())
                    .map(|i| (ids.value(i), signs.value(i)))
                    .collect::<Vec<_>>()
            })
            .collect();
        got.sort();
        assert_eq!(got, vec![(2, -1), (2, 1), (4, -1), (5, 1)]);
    }

    #[tokio::test]
    async fn emitted_rows_carry_the_changelog_columns_in_batches_of_any_size() {
        // Batches above the session's batch size (3) take new constants.
        let before = batch(&[1, 2, 3, 4, 5], &[Some("a"); 5], &[-1; 5]);
        let after = batch(&[1, 2], &[Some("a"), Some("x")], &[1; 2]);
        let schema = before.schema();
        let source = datafusion::datasource::memory::MemorySourceConfig::try_new_exec(
            &[vec![before, after]],
            Arc::clone(&schema),
            None,
        )
        .unwrap();
        let added = ChangeColumns {
            ordinal: 4,
            snapshot: 77,
        };
        // id, v, _change_type, _change_ordinal, _commit_snapshot_id.
        let exec = Arc::new(
            DifferenceExec::try_new(
                source,
                vec![0, 1],
                2,
                None,
                Some(added),
                Some(vec![0, 1, 3, 4, 5]),
                false,
            )
            .unwrap(),
        );
        let config = datafusion::prelude::SessionConfig::new().with_batch_size(3);
        let ctx = Arc::new(TaskContext::default().with_session_config(config));
        let out = datafusion::physical_plan::collect(exec, ctx).await.unwrap();
        let mut got = Vec::new();
        for b in &out {
            assert_eq!(b.schema().field(2).name(), "_change_type");
            let ids = b.column(0).as_primitive::<Int64Type>();
            let types = b.column(2).as_string::<i32>();
            let ordinals = b.column(3).as_primitive::<datafusion::arrow::datatypes::Int32Type>();
            let snapshots = b.column(4).as_primitive::<Int64Type>();
            for i in 0..b.num_rows() {
                got.push((
                    ids.value(i),
                    types.value(i).to_string(),
                    ordinals.value(i),
                    snapshots.value(i),
                ));
            }
        }
        got.sort();
        let want: Vec<(i64, String, i32, i64)> = [
            (2, "DELETE"),
            (2, "INSERT"),
            (3, "DELETE"),
            (4, "DELETE"),
            (5, "DELETE"),
        ]
        .into_iter()
        .map(|(id, t)| (id, t.to_string(), 4, 77))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_bit_filter_has_every_hash_it_was_given_and_few_others() {
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..300_000));
        let hashes = row_hashes(&[ids], 300_000).unwrap();
        let (given, others) = hashes.split_at(200_000);
        // Filters of 100,000 and of 200,000 rows (16 bits a row, rounded
        // up: 1.6 M bits to 2^21, 3.2 M to 2^22), and of 130,000 (2.08 M
        // bits in 2^21: nearly the fullest a filter gets).
        for (held, limit) in [(100_000, 400), (200_000, 400), (130_000, 600)] {
            let mut filter = HashBits::new(held);
            given[..held].iter().for_each(|h| filter.insert(*h));
            assert!(given[..held].iter().all(|h| filter.may_contain(*h)));
            let chance = others.iter().filter(|h| filter.may_contain(**h)).count();
            assert!(chance < limit, "{held} held: {chance} chance matches in 100,000");
        }
        // The smallest filter is one word.
        let mut tiny = HashBits::new(0);
        tiny.insert(u64::MAX);
        assert!(tiny.may_contain(u64::MAX) && tiny.words.len() == 1);
    }

    /// Rows that cancel, in batches arriving in any order: every one of
    /// them is a candidate; rows without an equal row of the other sign
    /// (nearly) never are.
    #[test]
    fn arriving_rows_find_every_row_that_cancels() {
        let ids = |r: std::ops::Range<i64>| r.collect::<Vec<_>>();
        let side = |r: std::ops::Range<i64>, v: &str, sign: i64| {
            let n = r.clone().count();
            Hashed::new(batch(&ids(r), &vec![Some(v); n], &vec![sign; n]), &[0, 1], 2, None).unwrap()
        };
        // 0..1000 carried over (equal on both sides), 1000..50000 changed.
        let batches = [
            side(0..1000, "same", 1),
            side(1000..50_000, "new", 1),
            side(0..1000, "same", -1),
            side(1000..50_000, "old", -1),
        ];
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
            let mut arrivals = Arrivals::new(100_000);
            order.iter().for_each(|i| arrivals.add(&batches[*i]));
            let found = arrivals.candidates(&batches);
            let of = |b: usize| found.iter().find(|(i, _)| *i == b).map_or(0, |(_, rows)| rows.len());
            assert_eq!((of(0), of(2)), (1000, 1000), "order {order:?}");
            // The filter's chance matches have one sign per hash: none is left.
            assert_eq!(of(1) + of(3), 0, "order {order:?}: chance candidates");
            let out = difference(&batches, &[0, 1], 8192, found).unwrap();
            assert_eq!(out.iter().map(|b| b.num_rows()).sum::<usize>(), 98_000);
        }
    }

    #[test]
    fn the_signed_filter_finds_the_other_signs_hashes_and_few_others() {
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..300_000));
        let hashes = row_hashes(&[ids], 300_000).unwrap();
        let (given, others) = hashes.split_at(200_000);
        let mut bits = SignedBits::new(200_000);
        // A sign never finds its own hashes, only the other sign's.
        assert!(given.iter().all(|h| !bits.add(*h, MINUS)));
        assert!(given.iter().all(|h| bits.add(*h, PLUS)));
        let chance = others.iter().filter(|h| bits.add(**h, PLUS)).count();
        assert!(chance < 1_000, "{chance} chance matches in 100,000");
        let mut tiny = SignedBits::new(0);
        assert!(!tiny.add(7, PLUS) && tiny.add(7, MINUS) && tiny.words.len() == 1);
    }

    #[test]
    fn a_sign_other_than_one_is_an_error() {
        let bad = batch(&[1], &[Some("a")], &[2]);
        let err = Hashed::new(bad, &[0, 1], 2, None).err().unwrap().to_string();
        assert!(err.contains("sign is 2"), "{err}");
    }
}
