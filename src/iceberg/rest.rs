//! The Iceberg REST catalog protocol's shared words: what our server
//! (`serve/`) says and our client (`catalog::clients::rest`) reads, so the
//! two never disagree on a name.
//!
//! | word                                  | where                      | meaning |
//! |---------------------------------------|----------------------------|---------|
//! | `hidden-partitions.rebases-snapshots` | `GET /v1/config` `defaults` | an append without `assert-ref-snapshot-id` lands after the appends that won before it |
//! | error model                           | the body of every error    | `{"error": {"message": …, "type": …, "code": …}}` |
//!
//! Pure data: no I/O, no tables.

use serde_json::{Value as Json, json};

/// Set in `GET /v1/config` `defaults`: this server rebases a snapshot whose
/// commit has no `assert-ref-snapshot-id` onto the latest one as our own
/// writers do (an append lands after the appends that won before it; an
/// overwrite or delete still conflicts when its files changed), so a client
/// of ours may leave that requirement out of an append.
pub const REBASES_SNAPSHOTS: &str = "hidden-partitions.rebases-snapshots";

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

/// The error model's `type` in a response body (`NoSuchTableException`, …), or "".
pub fn error_kind(body: &Json) -> &str {
    body.get("error")
        .and_then(|e| e.get("type"))
        .and_then(Json::as_str)
        .unwrap_or("")
}

/// The error model's `message` in a response body.
pub fn error_message(body: &Json) -> Option<&str> {
    body.get("error").and_then(|e| e.get("message")).and_then(Json::as_str)
}
