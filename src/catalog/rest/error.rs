//! Errors in the Iceberg REST catalog's error model:
//! `{"error": {"message": …, "type": …, "code": …}}`.
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

use serde_json::json;

use crate::error::Error;

/// An error as the REST catalog answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestError {
    pub code: u16,
    pub kind: &'static str,
    pub message: String,
}

impl RestError {
    pub fn new(code: u16, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            kind,
            message: message.into(),
        }
    }

    pub fn no_such_namespace(namespace: &str) -> Self {
        Self::new(
            404,
            "NoSuchNamespaceException",
            format!("namespace {namespace} does not exist"),
        )
    }

    pub fn no_such_table(namespace: &str, table: &str) -> Self {
        Self::new(
            404,
            "NoSuchTableException",
            format!("table {namespace}.{table} does not exist"),
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequestException", message)
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(406, "UnsupportedOperationException", message)
    }

    pub fn already_exists(message: impl Into<String>) -> Self {
        Self::new(409, "AlreadyExistsException", message)
    }

    pub fn not_authorized() -> Self {
        Self::new(
            401,
            "NotAuthorizedException",
            "this catalog needs a bearer token (Authorization: Bearer <token>)",
        )
    }

    /// The JSON body of the error.
    pub fn body(&self) -> serde_json::Value {
        json!({"error": {"message": self.message, "type": self.kind, "code": self.code}})
    }
}

impl std::fmt::Display for RestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.code, self.kind, self.message)
    }
}

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
