//! A write statement (DELETE, UPDATE, MERGE, TRUNCATE, INSERT OVERWRITE,
//! maintenance) as an execution plan: running it runs the statement to its
//! commit, and it yields one row, `count`, as DataFusion expects of DML.
//!
//! ```text
//! HiddenPartitionsWrite: table=events, operation=delete
//! ```
//!
//! Planning (`EXPLAIN`) does nothing: the work happens in `execute`.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::error::Result;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties};

use crate::table::retry::{WriteStatement, run};

pub struct WriteExec {
    operation: &'static str,
    statement: Arc<dyn WriteStatement>,
    properties: Arc<PlanProperties>,
}

impl fmt::Debug for WriteExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WriteExec({}, {})", self.statement.table().name, self.operation)
    }
}

fn count_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("count", DataType::UInt64, false)]))
}

impl WriteExec {
    pub fn new(operation: &'static str, statement: Arc<dyn WriteStatement>) -> Self {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(count_schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        Self {
            operation,
            statement,
            properties: Arc::new(properties),
        }
    }

    /// The table the statement writes.
    pub fn table_name(&self) -> &str {
        &self.statement.table().name
    }

    pub fn operation(&self) -> &str {
        self.operation
    }

    pub fn statement(&self) -> &Arc<dyn WriteStatement> {
        &self.statement
    }
}

impl DisplayAs for WriteExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "HiddenPartitionsWrite: table={}, operation={}",
            self.statement.table().name,
            self.operation
        )
    }
}

impl ExecutionPlan for WriteExec {
    fn name(&self) -> &str {
        "HiddenPartitionsWriteExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            datafusion::common::internal_err!("HiddenPartitionsWriteExec has no children")
        }
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(
            &Arc<dyn datafusion::physical_expr::PhysicalExpr>,
        ) -> Result<datafusion::common::tree_node::TreeNodeRecursion>,
    ) -> Result<datafusion::common::tree_node::TreeNodeRecursion> {
        Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return datafusion::common::internal_err!("HiddenPartitionsWriteExec has one partition");
        }
        let statement = Arc::clone(&self.statement);
        let schema = count_schema();
        let out = Arc::clone(&schema);
        let stream = futures::stream::once(async move {
            let count = run(statement.as_ref()).await?;
            Ok(RecordBatch::try_new(
                out,
                vec![Arc::new(UInt64Array::from(vec![count]))],
            )?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}
