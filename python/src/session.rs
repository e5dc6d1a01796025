//! `hidden_partitions.Session`: a session over one warehouse (or an Iceberg
//! catalog) that runs any statement the CLI runs.
//!
//! Statements run on one Tokio runtime shared by all sessions, with the GIL
//! released; the caller's thread wakes every 100 ms to let Ctrl-C interrupt
//! a long statement (an interrupted commit keeps the table at its old or new
//! snapshot, as a killed CLI does).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use hidden_partitions::{StatementResult, StorageOptions, Warehouse, execute_sql};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use tokio::runtime::Runtime;

use crate::arrow_stream::import_stream;
use crate::errors::{from_datafusion, to_py};
use crate::result::QueryResult;

pub fn runtime() -> PyResult<&'static Runtime> {
    static RUNTIME: OnceLock<std::io::Result<Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .thread_name("hidden-partitions")
                .enable_all()
                .build()
        })
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the hidden-partitions runtime: {e}")))
}

/// Run `work` to completion without the GIL; Ctrl-C (a pending signal)
/// cancels it and raises `KeyboardInterrupt`.
pub fn wait<T: Send>(py: Python<'_>, work: impl Future<Output = T> + Send) -> PyResult<T> {
    let runtime = runtime()?;
    py.detach(|| {
        runtime.block_on(async {
            let mut work = std::pin::pin!(work);
            loop {
                tokio::select! {
                    done = &mut work => return Ok(done),
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {
                        Python::attach(|py| py.check_signals())?;
                    }
                }
            }
        })
    })
}

/// A session on `warehouse` (a directory, created if missing, or a URL),
/// or on the Iceberg catalog at `catalog` with the warehouse's storage.
pub fn open_session(
    py: Python<'_>,
    warehouse: &str,
    storage_options: Option<HashMap<String, String>>,
    catalog: Option<String>,
) -> PyResult<SessionContext> {
    let mut options = StorageOptions::new();
    let mut pairs: Vec<_> = storage_options.unwrap_or_default().into_iter().collect();
    pairs.sort();
    for (key, value) in pairs {
        options = options.with(key, value);
    }
    let warehouse = Warehouse::open(warehouse, options).map_err(to_py)?;
    let ctx = wait(py, async move {
        match catalog {
            None => hidden_partitions::session_with(warehouse).await,
            Some(url) => hidden_partitions::session::session_with_catalog(warehouse, &url).await,
        }
    })?
    .map_err(to_py)?;
    Ok(ctx)
}

/// A session over a warehouse: `Session(warehouse="./warehouse",
/// storage_options={...}, catalog=None)`.
#[pyclass(module = "hidden_partitions", name = "Session", frozen)]
pub struct Session {
    ctx: SessionContext,
}

#[pymethods]
impl Session {
    /// `warehouse` is a directory (created if missing) or a URL such as
    /// `s3://bucket/prefix`; `storage_options` are the CLI's
    /// `--storage-option` pairs; `catalog` an Iceberg catalog URL as for
    /// `--catalog` (`sqlite:PATH`, `postgresql://…`, `http(s)://…`).
    #[new]
    #[pyo3(signature = (warehouse = "./warehouse", storage_options = None, catalog = None))]
    fn new(
        py: Python<'_>,
        warehouse: &str,
        storage_options: Option<HashMap<String, String>>,
        catalog: Option<String>,
    ) -> PyResult<Self> {
        let ctx = open_session(py, warehouse, storage_options, catalog)?;
        Ok(Self { ctx })
    }

    /// Run one or more `;`-separated statements in order; returns the last
    /// one's rows (DDL and DML return their summary row).
    fn sql(&self, py: Python<'_>, text: &str) -> PyResult<QueryResult> {
        let ctx = self.ctx.clone();
        let text = text.to_string();
        let mut results = wait(py, async move { execute_sql(&ctx, &text).await })?.map_err(to_py)?;
        Ok(results.pop().unwrap_or_else(empty).into())
    }

    /// Make Arrow data from Python (anything with `__arrow_c_stream__`: a
    /// pyarrow Table or RecordBatchReader, a polars or pandas DataFrame) a
    /// table of this session named `name`, e.g. for `INSERT INTO t SELECT *
    /// FROM name`. It replaces an earlier registration of the same name; a
    /// warehouse table of that name is an error.
    fn register_arrow(&self, name: &str, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let (schema, batches) = import_stream(data, &format!("register_arrow({name:?})"))?;
        let table = MemTable::try_new(schema, vec![batches]).map_err(from_datafusion)?;
        self.ctx
            .register_table(name, Arc::new(table))
            .map_err(from_datafusion)?;
        Ok(())
    }

    fn __repr__(&self) -> String {
        let state = self.ctx.state();
        let options = state.config_options();
        format!(
            "Session(catalog={:?}, schema={:?})",
            options.catalog.default_catalog, options.catalog.default_schema
        )
    }
}

fn empty() -> StatementResult {
    StatementResult {
        schema: Arc::new(arrow::datatypes::Schema::empty()),
        batches: Vec::new(),
    }
}
