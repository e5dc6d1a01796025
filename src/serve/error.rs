//! How our errors become the REST protocol's error model
//! ([`RestError`], shared with our client in `iceberg::rest`).
//!
//! | our error | code | type |
//! |---|---|---|
//! | no such namespace / table | 404 | `NoSuchNamespaceException` / `NoSuchTableException` |
//! | the name is taken | 409 | `AlreadyExistsException` |
//! | a namespace with tables | 409 | `NamespaceNotEmptyException` |
//! | a requirement that fails, a lost race, a table dropped or replaced meanwhile | 409 | `CommitFailedException` |
//! | a commit whose outcome is unknown | 500 | `CommitStateUnknownException` |
//! | bad input (JSON, names, an update we do not apply) | 400 | `BadRequestException` |
//! | something we do not do (nested namespaces) | 406 | `UnsupportedOperationException` |
//! | missing or wrong token | 401 | `NotAuthorizedException` |
//! | anything else | 500 | `ServiceFailureException` |

use crate::error::Error;
pub use crate::iceberg::rest::RestError;

/// `message` without the name of a file the server found (a client of the
/// catalog learns nothing of what is stored but through the catalog).
fn without_file_names(message: String) -> String {
    match message.find(" (it holds ") {
        Some(start) => match message[start..].find(')') {
            Some(end) => format!("{}{}", &message[..start], &message[start + end + 1..]),
            None => message[..start].to_string(),
        },
        None => message,
    }
}

impl From<Error> for RestError {
    fn from(e: Error) -> Self {
        let message = without_file_names(e.to_string());
        match e {
            Error::TableNotFound(_) => Self::new(404, "NoSuchTableException", message),
            Error::TableExists(_) => Self::already_exists(message),
            Error::CommitConflict { .. }
            | Error::WriteConflict { .. }
            | Error::TableDropped(_)
            | Error::TableReplaced(_) => Self::new(409, "CommitFailedException", message),
            Error::CommitUnknown { .. } => Self::new(500, "CommitStateUnknownException", message),
            Error::Invalid(_) | Error::Json(_) | Error::Transform(_) | Error::Value(_) => Self::bad_request(message),
            Error::DataFusion(datafusion::error::DataFusionError::Plan(_)) => Self::bad_request(message),
            _ => Self::new(500, "ServiceFailureException", message),
        }
    }
}
