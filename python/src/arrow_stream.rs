//! Arrow data across the Python boundary, by the Arrow PyCapsule interface:
//! results leave as an `arrow_array_stream` capsule (pyarrow, polars and
//! pandas import it without copying buffers) and Python data comes in from
//! any object with `__arrow_c_stream__`.

use std::ffi::CStr;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::ffi::FFI_ArrowSchema;
use arrow::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow::record_batch::{RecordBatch, RecordBatchIterator};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

const STREAM: &CStr = c"arrow_array_stream";
const SCHEMA: &CStr = c"arrow_schema";

/// A capsule holding a stream over `batches`. The consumer moves the stream
/// out; a capsule that was never consumed releases it when collected.
pub fn export_stream<'py>(
    py: Python<'py>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(Box::new(reader)), STREAM)
}

/// A capsule holding the C schema of `schema`.
pub fn export_schema<'py>(py: Python<'py>, schema: &SchemaRef) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref())
        .map_err(|e| PyValueError::new_err(format!("cannot export the result schema to Arrow C: {e}")))?;
    PyCapsule::new_with_value(py, ffi, SCHEMA)
}

/// All batches of an object that speaks the Arrow C stream interface
/// (pyarrow tables and readers, polars and pandas frames). `what` names the
/// argument in errors.
pub fn import_stream(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    if !obj.hasattr("__arrow_c_stream__")? {
        let type_name = obj.get_type().name()?;
        return Err(PyTypeError::new_err(format!(
            "{what}: a {type_name} is not Arrow data; expected an object with __arrow_c_stream__ \
             (a pyarrow Table or RecordBatchReader, a polars or pandas DataFrame)"
        )));
    }
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule
        .cast::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err(format!("{what}: __arrow_c_stream__ did not return a PyCapsule")))?;
    let pointer = capsule.pointer_checked(Some(STREAM)).map_err(|_| {
        PyTypeError::new_err(format!(
            "{what}: __arrow_c_stream__ returned a capsule that is not an arrow_array_stream"
        ))
    })?;
    // SAFETY: the capsule's name promises an FFI_ArrowArrayStream; `from_raw`
    // moves it out and marks the original released, as the interface asks.
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(pointer.as_ptr().cast()) };
    let reader = ArrowArrayStreamReader::try_new(stream)
        .map_err(|e| PyValueError::new_err(format!("{what}: cannot read its Arrow stream: {e}")))?;
    let schema: SchemaRef = Arc::clone(&arrow::record_batch::RecordBatchReader::schema(&reader));
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(format!("{what}: reading its Arrow stream failed: {e}")))?;
    Ok((schema, batches))
}
