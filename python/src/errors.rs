//! Python exceptions for the engine's errors: one base class, and subclasses
//! for the two outcomes a writer must handle differently (a conflict that is
//! safe to retry, and a commit whose outcome is unknown).

use datafusion::error::DataFusionError;
use hidden_partitions::Error;
use pyo3::PyErr;
use pyo3::create_exception;
use pyo3::exceptions::PyException;

create_exception!(
    hidden_partitions,
    HiddenPartitionsError,
    PyException,
    "An error from hidden-partitions: a statement, a table or its storage."
);
create_exception!(
    hidden_partitions,
    CommitConflictError,
    HiddenPartitionsError,
    "A commit lost to a concurrent one and nothing was committed; retrying the statement is safe."
);
create_exception!(
    hidden_partitions,
    CommitStateUnknownError,
    HiddenPartitionsError,
    "Whether a commit happened is unknown (the store did not answer); its files were kept."
);

/// Which kind of failure an error is.
enum Kind {
    Conflict,
    Unknown,
    Other,
}

fn kind(e: &Error) -> Kind {
    match e {
        Error::CommitConflict { .. } | Error::WriteConflict { .. } => Kind::Conflict,
        Error::CommitUnknown { .. } => Kind::Unknown,
        Error::DataFusion(inner) => match inner.find_root() {
            DataFusionError::External(boxed) => boxed.downcast_ref::<Error>().map_or(Kind::Other, kind),
            _ => Kind::Other,
        },
        _ => Kind::Other,
    }
}

/// The Python exception for an engine error, with the engine's message.
pub fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    match kind(&e) {
        Kind::Conflict => CommitConflictError::new_err(message),
        Kind::Unknown => CommitStateUnknownError::new_err(message),
        Kind::Other => HiddenPartitionsError::new_err(message),
    }
}

/// [`to_py`] for errors that come out of DataFusion or Arrow directly.
pub fn from_datafusion(e: DataFusionError) -> PyErr {
    to_py(Error::from(e))
}
