//! A warehouse as a catalog of datafusion-python's own `SessionContext`,
//! through `datafusion-ffi` (the interface datafusion-python 55 loads):
//! `ctx.register_catalog_provider("hp", WarehouseCatalog(...))` calls
//! `__datafusion_catalog_provider__`, which hands over our catalog (its
//! schemas are the warehouse's namespaces) as an `FFI_CatalogProvider`.
//! Calls from the other side run our async work on our own runtime.

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::catalog::CatalogProvider;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::{
    AggregateUDF, ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};
use datafusion::prelude::SessionContext;
use datafusion_ffi::catalog_provider::FFI_CatalogProvider;
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::udaf::FFI_AggregateUDF;
use datafusion_ffi::udf::FFI_ScalarUDF;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use crate::errors::HiddenPartitionsError;
use crate::persist::PersistingCatalog;
use crate::session::{open_session, runtime};

const CATALOG: &CStr = c"datafusion_catalog_provider";
const CODEC: &CStr = c"datafusion_logical_extension_codec";

/// The major version of the FFI this package was built with; the
/// datafusion-python it is registered into must have the same.
pub fn ffi_major() -> u64 {
    datafusion_ffi::version()
}

/// A warehouse (or Iceberg catalog) to register into datafusion-python.
#[pyclass(module = "hidden_partitions", name = "WarehouseCatalog", frozen)]
pub struct WarehouseCatalog {
    ctx: SessionContext,
}

#[pymethods]
impl WarehouseCatalog {
    #[new]
    #[pyo3(signature = (warehouse = "./warehouse", storage_options = None, catalog = None))]
    fn new(
        py: Python<'_>,
        warehouse: &str,
        storage_options: Option<HashMap<String, String>>,
        catalog: Option<String>,
    ) -> PyResult<Self> {
        Ok(Self {
            ctx: open_session(py, warehouse, storage_options, catalog)?,
        })
    }

    /// The catalog as an `FFI_CatalogProvider` capsule; `session` is what
    /// datafusion-python passes: an object with
    /// `__datafusion_logical_extension_codec__` (or that capsule itself).
    fn __datafusion_catalog_provider__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = logical_codec(&session)?;
        let name = self.ctx.state().config_options().catalog.default_catalog.clone();
        let provider: Arc<dyn CatalogProvider> = self
            .ctx
            .catalog(&name)
            .ok_or_else(|| HiddenPartitionsError::new_err(format!("the session has no catalog {name}")))?;
        let handle = runtime()?.handle().clone();
        // DataFusion's own CREATE TABLE there stores a warehouse table.
        let provider: Arc<dyn CatalogProvider> =
            Arc::new(PersistingCatalog::new(provider, self.ctx.clone(), handle.clone()));
        let exported = FFI_CatalogProvider::new_with_ffi_codec(provider, Some(handle), codec);
        PyCapsule::new_with_value(py, exported, CATALOG)
    }
}

/// The logical extension codec datafusion-python hands over with a
/// registration (its plans' extensions are encoded with it).
fn logical_codec(session: &Bound<'_, PyAny>) -> PyResult<FFI_LogicalExtensionCodec> {
    let attr = "__datafusion_logical_extension_codec__";
    let capsule = if session.hasattr(attr)? {
        session.call_method0(attr)?
    } else {
        session.clone()
    };
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        PyTypeError::new_err(
            "register: datafusion-python did not pass its logical extension codec (a datafusion-python 55 SessionContext is needed)",
        )
    })?;
    let pointer = capsule.pointer_checked(Some(CODEC)).map_err(|_| {
        PyValueError::new_err(
            "register: the capsule datafusion-python passed is not a datafusion_logical_extension_codec",
        )
    })?;
    // SAFETY: the capsule's name promises an FFI_LogicalExtensionCodec, which
    // stays alive while the capsule does; we keep a clone of our own.
    let codec = unsafe { &*pointer.as_ptr().cast::<FFI_LogicalExtensionCodec>() };
    Ok(codec.clone())
}

const SCALAR_UDF: &CStr = c"datafusion_scalar_udf";
const AGGREGATE_UDF: &CStr = c"datafusion_aggregate_udf";

/// One of our SQL functions (a partition transform or a Variant function)
/// for datafusion-python: `datafusion.udf(f)` / `datafusion.udaf(f)` load it
/// through `__datafusion_scalar_udf__` / `__datafusion_aggregate_udf__`.
#[pyclass(module = "hidden_partitions", name = "Function", frozen)]
pub struct Function {
    kind: FunctionKind,
}

enum FunctionKind {
    Scalar(Arc<ScalarUDF>),
    Aggregate(Arc<AggregateUDF>),
}

#[pymethods]
impl Function {
    /// The function's SQL name.
    #[getter]
    fn name(&self) -> &str {
        match &self.kind {
            FunctionKind::Scalar(f) => f.name(),
            FunctionKind::Aggregate(f) => f.name(),
        }
    }

    /// True for an aggregate function (register it with `datafusion.udaf`).
    #[getter]
    fn is_aggregate(&self) -> bool {
        matches!(self.kind, FunctionKind::Aggregate(_))
    }

    fn __datafusion_scalar_udf__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        match &self.kind {
            FunctionKind::Scalar(f) => {
                let wrapped = Arc::new(ScalarUDF::new_from_impl(LiteralsAsScalars(Arc::clone(f))));
                PyCapsule::new_with_value(py, FFI_ScalarUDF::from(wrapped), SCALAR_UDF)
            }
            FunctionKind::Aggregate(f) => Err(PyTypeError::new_err(format!(
                "{} is an aggregate function: register it with datafusion.udaf",
                f.name()
            ))),
        }
    }

    fn __datafusion_aggregate_udf__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        match &self.kind {
            FunctionKind::Aggregate(f) => {
                PyCapsule::new_with_value(py, FFI_AggregateUDF::from(Arc::clone(f)), AGGREGATE_UDF)
            }
            FunctionKind::Scalar(f) => Err(PyTypeError::new_err(format!(
                "{} is a scalar function: register it with datafusion.udf",
                f.name()
            ))),
        }
    }

    fn __repr__(&self) -> String {
        let kind = if self.is_aggregate() { "aggregate" } else { "scalar" };
        format!("hidden_partitions.Function({}, {kind})", self.name())
    }
}

/// Every SQL function this engine adds to a session: the partition
/// transforms (`day`, `bucket`, …) and the Variant functions.
#[pyfunction]
pub fn functions() -> Vec<Function> {
    let scalar = hidden_partitions::functions::transform_functions()
        .into_iter()
        .chain(hidden_partitions::variant::scalar_functions())
        .map(|f| Function {
            kind: FunctionKind::Scalar(f),
        });
    let aggregate = hidden_partitions::variant::aggregate_functions()
        .into_iter()
        .map(|f| Function {
            kind: FunctionKind::Aggregate(f),
        });
    scalar.chain(aggregate).collect()
}

/// A function as datafusion-python calls it through the FFI, which hands
/// every argument over as an array, literals included. Our functions want
/// their literal arguments (`bucket`'s N, `variant_get`'s path and type) as
/// scalars, so an argument with one value on every row is passed as that
/// scalar again: for any function that is the same input.
#[derive(Debug, PartialEq, Eq, Hash)]
struct LiteralsAsScalars(Arc<ScalarUDF>);

impl ScalarUDFImpl for LiteralsAsScalars {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn aliases(&self) -> &[String] {
        self.0.aliases()
    }
    fn signature(&self) -> &Signature {
        self.0.signature()
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.0.return_type(arg_types)
    }
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        self.0.return_field_from_args(args)
    }
    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.0.coerce_types(arg_types)
    }
    fn short_circuits(&self) -> bool {
        self.0.short_circuits()
    }
    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        for arg in &mut args.args {
            if let ColumnarValue::Array(array) = arg {
                if let Some(value) = one_value(array) {
                    *arg = ColumnarValue::Scalar(value);
                }
            }
        }
        // The FFI answers with an array of the batch's rows.
        Ok(ColumnarValue::Array(self.0.invoke_with_args(args)?.into_array(rows)?))
    }
}

/// The value on every row of `array`, when there is just one (null
/// included); `None` when rows differ or cannot be compared.
fn one_value(array: &ArrayRef) -> Option<ScalarValue> {
    if array.is_empty() {
        return None;
    }
    let first = ScalarValue::try_from_array(array, 0).ok()?;
    if array.len() == 1 {
        return Some(first);
    }
    // Cheap rejection before comparing every row.
    if ScalarValue::try_from_array(array, array.len() - 1).ok()? != first {
        return None;
    }
    if first.is_null() {
        return (array.null_count() == array.len()).then_some(first);
    }
    if array.null_count() > 0 {
        return None;
    }
    let same = first.to_array_of_size(array.len()).ok()?;
    let equal = datafusion::arrow::compute::kernels::cmp::not_distinct(array, &same).ok()?;
    (equal.true_count() == array.len()).then_some(first)
}
