//! The result of a statement: its schema and batches, kept as Arrow. Python
//! reads it through `__arrow_c_stream__` (no copy per row); the `to_*`
//! helpers hand it to pyarrow, pandas or polars.

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use hidden_partitions::StatementResult;
use hidden_partitions::cli::{OutputFormat, write_result};
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::arrow_stream::{export_schema, export_stream};

/// Rows shown by `repr()`.
const REPR_ROWS: usize = 20;

/// The rows a statement returned (for DDL and DML, its summary row).
#[pyclass(module = "hidden_partitions", name = "QueryResult", frozen)]
pub struct QueryResult {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl From<StatementResult> for QueryResult {
    fn from(r: StatementResult) -> Self {
        Self {
            schema: r.schema,
            batches: r.batches,
        }
    }
}

fn import<'py>(py: Python<'py>, module: &str, helper: &str) -> PyResult<Bound<'py, PyModule>> {
    py.import(module).map_err(|e| {
        PyImportError::new_err(format!(
            "{helper} needs the {module} package (pip install {module}): {e}"
        ))
    })
}

#[pymethods]
impl QueryResult {
    /// The Arrow C stream of all rows (the Arrow PyCapsule interface).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // Rows are produced in their own schema; consumers cast if they asked
        // for another (the interface allows it).
        let _ = requested_schema;
        export_stream(py, self.schema.clone(), self.batches.clone())
    }

    /// The Arrow C schema of the rows.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        export_schema(py, &self.schema)
    }

    /// Number of rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    fn __len__(&self) -> usize {
        self.num_rows()
    }

    /// Column names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema.fields().iter().map(|f| f.name().clone()).collect()
    }

    /// The rows as a `pyarrow.Table` (buffers shared, not copied).
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        import(slf.py(), "pyarrow", "to_arrow()")?.call_method1("table", (slf,))
    }

    /// The rows as a `pandas.DataFrame` (through pyarrow).
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::to_arrow(slf)?.call_method0("to_pandas")
    }

    /// The rows as a list of dicts, one per row (through pyarrow).
    fn to_pylist<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::to_arrow(slf)?.call_method0("to_pylist")
    }

    /// The rows as a `polars.DataFrame`.
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let table = Self::to_arrow(slf)?;
        import(slf.py(), "polars", "to_polars()")?.call_method1("from_arrow", (table,))
    }

    /// The first rows as the CLI prints them.
    fn __repr__(&self) -> String {
        let rows = self.num_rows();
        let mut shown = Vec::new();
        let mut left = REPR_ROWS;
        for batch in &self.batches {
            if left == 0 {
                break;
            }
            let take = left.min(batch.num_rows());
            shown.push(batch.slice(0, take));
            left -= take;
        }
        let head = StatementResult {
            schema: self.schema.clone(),
            batches: shown,
        };
        let mut out = Vec::new();
        if let Err(e) = write_result(&mut out, &head, OutputFormat::Table) {
            return format!("<QueryResult: {rows} rows, not printable: {e}>");
        }
        let mut text = String::from_utf8_lossy(&out).into_owned();
        if rows > REPR_ROWS {
            text.push_str(&format!("… {rows} rows in all\n"));
        }
        text
    }
}
