//! Equality deletes applied above the scan, per file.
//!
//! Which equality deletes apply depends on the data file (its sequence
//! number and partition), so the scan tags every row with its file
//! (a constant column `__hp_file`, like a partition value) and reads the
//! key columns even when the query does not select them:
//!
//! ```text
//! EqualityDeleteExec: files=2, delete_sets=3        drops rows whose keys match, then __hp_file and extra keys
//!   HiddenPartitionsScan: table=t, files=2/4, …     (id, name, __hp_file)
//! ```
//!
//! Keys are compared in Arrow's row format, where NULL equals NULL — as
//! Iceberg's equality deletes require. No LIMIT is pushed below this node
//! (deleted rows would use it up).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch};
use datafusion::arrow::compute::{cast, filter_record_batch};
use datafusion::arrow::datatypes::{DataType, Int32Type, SchemaRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties};
use futures::StreamExt;

use super::deletes::EqualityDeletes;

/// One delete set, encoded for lookups against the scan's key columns.
#[derive(Debug)]
struct KeySet {
    /// Indices of the key columns in the input.
    columns: Vec<usize>,
    keys: EqualityKeys,
}

/// The rows of an equality delete file in Arrow's row format (where NULL
/// equals NULL, as Iceberg's equality deletes require), for lookups of a
/// data file's key columns of the same types.
#[derive(Debug)]
pub struct EqualityKeys {
    converter: RowConverter,
    rows: HashSet<Box<[u8]>>,
}

impl EqualityKeys {
    /// The rows of `d`, cast to `types` (those of the data's key columns).
    pub fn new(d: &EqualityDeletes, types: &[DataType]) -> crate::error::Result<Self> {
        let arrays: Vec<ArrayRef> = types
            .iter()
            .enumerate()
            .map(|(i, t)| cast(d.rows.column(i), t))
            .collect::<std::result::Result<_, _>>()?;
        let converter = RowConverter::new(types.iter().map(|t| SortField::new(t.clone())).collect())?;
        let rows = converter.convert_columns(&arrays)?;
        let rows = rows.iter().map(|r| r.as_ref().to_vec().into_boxed_slice()).collect();
        Ok(Self { converter, rows })
    }

    /// Mark in `deleted` the rows whose `keys` (one array per key column,
    /// of the types given to `new`) equal a deleted row.
    pub fn mark(&self, keys: &[ArrayRef], deleted: &mut [bool]) -> crate::error::Result<()> {
        let rows = self.converter.convert_columns(keys)?;
        for (i, gone) in deleted.iter_mut().enumerate() {
            if !*gone && self.rows.contains(rows.row(i).as_ref()) {
                *gone = true;
            }
        }
        Ok(())
    }
}

pub struct EqualityDeleteExec {
    input: Arc<dyn ExecutionPlan>,
    /// Index of the `__hp_file` column in the input.
    file_column: usize,
    /// Per file number, the delete sets that apply.
    sets: Arc<HashMap<i32, Vec<Arc<KeySet>>>>,
    /// How many leading input columns are the output.
    keep: usize,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    set_count: usize,
}

impl fmt::Debug for EqualityDeleteExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EqualityDeleteExec(files={})", self.sets.len())
    }
}

impl EqualityDeleteExec {
    /// `per_file[i]` are the delete sets of file number `i`; the input's
    /// first `keep` columns are the output.
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        file_column: usize,
        per_file: &[Vec<Arc<EqualityDeletes>>],
        keep: usize,
    ) -> crate::error::Result<Self> {
        let in_schema = input.schema();
        let mut encoded: HashMap<*const EqualityDeletes, Arc<KeySet>> = HashMap::new();
        let mut sets: HashMap<i32, Vec<Arc<KeySet>>> = HashMap::new();
        for (file, deletes) in per_file.iter().enumerate() {
            for d in deletes {
                let key = Arc::as_ptr(d);
                let set = match encoded.get(&key) {
                    Some(s) => Arc::clone(s),
                    None => {
                        let s = Arc::new(encode(d, &in_schema)?);
                        encoded.insert(key, Arc::clone(&s));
                        s
                    }
                };
                sets.entry(file as i32).or_default().push(set);
            }
        }
        let schema = Arc::new(in_schema.project(&(0..keep).collect::<Vec<_>>())?);
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            input.output_partitioning().clone(),
            input.pipeline_behavior(),
            input.boundedness(),
        ));
        Ok(Self {
            input,
            file_column,
            set_count: encoded.len(),
            sets: Arc::new(sets),
            keep,
            schema,
            properties,
        })
    }
}

/// Encode a delete set's rows in the row format of the input's key columns.
fn encode(d: &EqualityDeletes, input: &SchemaRef) -> crate::error::Result<KeySet> {
    let mut columns = Vec::new();
    let mut types = Vec::new();
    for name in &d.columns {
        let Ok(idx) = input.index_of(name) else {
            return crate::format_err!("equality delete file {}: the scan lacks key column {name}", d.file);
        };
        types.push(input.field(idx).data_type().clone());
        columns.push(idx);
    }
    Ok(KeySet {
        columns,
        keys: EqualityKeys::new(d, &types)?,
    })
}

fn apply(
    batch: &RecordBatch,
    file_column: usize,
    sets: &HashMap<i32, Vec<Arc<KeySet>>>,
    keep: usize,
) -> Result<RecordBatch> {
    let files = batch.column(file_column).as_primitive::<Int32Type>();
    let mut deleted = vec![false; batch.num_rows()];
    let mut seen: Vec<i32> = files.iter().flatten().collect();
    seen.sort_unstable();
    seen.dedup();
    for file in seen {
        let Some(file_sets) = sets.get(&file) else { continue };
        // Rows of other files are not this file's to delete: mark them
        // first, unmark what stays marked only for that reason after.
        let others: Vec<bool> = (0..batch.num_rows())
            .map(|i| !(files.is_valid(i) && files.value(i) == file))
            .collect();
        let mut marked: Vec<bool> = others.clone();
        for set in file_sets {
            let keys: Vec<ArrayRef> = set.columns.iter().map(|c| Arc::clone(batch.column(*c))).collect();
            set.keys.mark(&keys, &mut marked)?;
        }
        for (i, gone) in deleted.iter_mut().enumerate() {
            *gone |= marked[i] && !others[i];
        }
    }
    let mask: BooleanArray = deleted.iter().map(|d| Some(!d)).collect();
    let filtered = filter_record_batch(batch, &mask)?;
    Ok(filtered.project(&(0..keep).collect::<Vec<_>>())?)
}

impl DisplayAs for EqualityDeleteExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "EqualityDeleteExec: files={}, delete_sets={}",
            self.sets.len(),
            self.set_count
        )
    }
}

impl ExecutionPlan for EqualityDeleteExec {
    fn name(&self) -> &str {
        "EqualityDeleteExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(input) = children.into_iter().next() else {
            return Err(DataFusionError::Internal("EqualityDeleteExec needs one child".into()));
        };
        Ok(Arc::new(Self {
            input,
            file_column: self.file_column,
            sets: Arc::clone(&self.sets),
            keep: self.keep,
            schema: Arc::clone(&self.schema),
            properties: Arc::clone(&self.properties),
            set_count: self.set_count,
        }))
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let (file_column, sets, keep) = (self.file_column, Arc::clone(&self.sets), self.keep);
        let stream = input.map(move |batch| apply(&batch?, file_column, &sets, keep));
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            stream,
        )))
    }
}
