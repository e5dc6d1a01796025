//! `hidden_partitions._native`: the engine as a Python extension module.
//!
//! The Python package (`python/hidden_partitions/`) wraps these classes; data
//! crosses the boundary only through the Arrow C stream interface
//! ([`arrow_stream`]), so results reach pyarrow, polars and pandas without a
//! copy per row.

mod arrow_stream;
mod errors;
mod ffi;
mod persist;
mod result;
mod session;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<session::Session>()?;
    m.add_class::<result::QueryResult>()?;
    m.add_class::<ffi::WarehouseCatalog>()?;
    m.add_class::<ffi::Function>()?;
    m.add_function(wrap_pyfunction!(ffi::functions, m)?)?;
    m.add("FFI_MAJOR_VERSION", ffi::ffi_major())?;
    m.add("HiddenPartitionsError", py.get_type::<errors::HiddenPartitionsError>())?;
    m.add("CommitConflictError", py.get_type::<errors::CommitConflictError>())?;
    m.add(
        "CommitStateUnknownError",
        py.get_type::<errors::CommitStateUnknownError>(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
