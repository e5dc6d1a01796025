//! The crate's error type.
//!
//! Each layer reports what went wrong in its own terms (the table, the
//! column, the value, what was expected); at the DataFusion boundary every
//! error becomes a [`DataFusionError`] so SQL users see the same message.

use datafusion::error::DataFusionError;

use crate::transform::TransformError;
use crate::values::ValueError;

/// Errors raised by hidden-partitions.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The table metadata or a manifest is not what the format says.
    #[error("invalid table format: {0}")]
    Format(String),
    /// The user asked for something the table cannot do.
    #[error("{0}")]
    Invalid(String),
    /// A table that does not exist.
    #[error("table not found: {0}")]
    TableNotFound(String),
    /// A table that already exists; the message says which and how.
    #[error("{0}")]
    TableExists(String),
    /// The table was dropped while a statement was writing to it.
    #[error("table {0} was dropped while this statement ran; nothing was committed")]
    TableDropped(String),
    /// The table was replaced (a new table under the same name and location)
    /// while a statement was writing to it.
    #[error(
        "table {0} was replaced or dropped while this statement ran (CREATE OR REPLACE, or DROP and CREATE); nothing was committed"
    )]
    TableReplaced(String),
    /// The commit request failed in a way that leaves its outcome unknown
    /// (it may have taken effect). The written files are kept.
    #[error(
        "the commit to {table} could not be confirmed ({detail}); the statement may or may not have taken effect — read the table to see, its files were kept (unreferenced ones are listed by \"<table>$orphans\")"
    )]
    CommitUnknown { table: String, detail: String },
    /// A statement that committed since this one read the table changed
    /// what this one read (see `table::change`).
    #[error("conflict on table {table}: {detail}; nothing was committed")]
    WriteConflict { table: String, detail: String },
    /// Another writer committed the same version first and retries ran out.
    #[error("commit conflict on {table}: {detail}")]
    CommitConflict { table: String, detail: String },
    #[error(transparent)]
    Transform(#[from] TransformError),
    #[error(transparent)]
    Value(#[from] ValueError),
    #[error("object store: {}", describe_error(.0))]
    ObjectStore(#[from] object_store::Error),
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    #[error("arrow: {0}")]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    DataFusion(DataFusionError),
}

impl From<DataFusionError> for Error {
    /// Our own errors come back out of DataFusion unwrapped, so users read
    /// "table t was dropped …", not "External error: …".
    fn from(e: DataFusionError) -> Self {
        match e {
            DataFusionError::External(inner) => match inner.downcast::<Error>() {
                Ok(ours) => *ours,
                Err(other) => Error::DataFusion(DataFusionError::External(other)),
            },
            other => Error::DataFusion(other),
        }
    }
}

impl Error {
    /// Whether files written for the statement may be referenced by a
    /// commit that happened (so they must not be deleted).
    pub fn commit_may_have_happened(&self) -> bool {
        matches!(self, Error::CommitUnknown { .. })
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for DataFusionError {
    fn from(e: Error) -> Self {
        match e {
            Error::DataFusion(e) => e,
            Error::Arrow(e) => DataFusionError::ArrowError(Box::new(e), None),
            Error::Invalid(m) | Error::TableExists(m) => DataFusionError::Plan(m),
            other => DataFusionError::External(Box::new(other)),
        }
    }
}

/// `Err(Error::Invalid(format!(...)))`
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { Err($crate::error::Error::Invalid(format!($($arg)*))) };
}

/// `Err(Error::Format(format!(...)))`
#[macro_export]
macro_rules! format_err {
    ($($arg:tt)*) => { Err($crate::error::Error::Format(format!($($arg)*))) };
}

/// An object store error in a sentence: the operation and path as
/// object_store words them (never a secret), an S3 XML error body cut down
/// to its code and message, and the common causes named.
pub fn describe_error(e: &object_store::Error) -> String {
    let full = e.to_string();
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let start = full.find(&open)? + open.len();
        let end = full[start..].find(&format!("</{name}>"))? + start;
        Some(full[start..end].to_string())
    };
    let text = match (full.find("<?xml"), tag("Code")) {
        (Some(at), Some(code)) => {
            let message = tag("Message").unwrap_or_default();
            format!("{}{code}: {message}", &full[..at])
        }
        _ => full.clone(),
    };
    let denied = ["403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"];
    // The last place object_store looks for AWS credentials is the instance
    // metadata service (a token from `…/latest/api/token`).
    let no_credentials = ["/latest/api/token", "/latest/meta-data/iam", "169.254.169.254"];
    if no_credentials.iter().any(|n| text.contains(n)) {
        format!(
            "no AWS credentials were found: they are looked for in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or --storage-option aws_access_key_id=… and aws_secret_access_key=…), then a web identity token (AWS_WEB_IDENTITY_TOKEN_FILE), then the instance metadata service, which did not give any ({text})"
        )
    } else if text.contains("NoSuchBucket") {
        format!("the bucket does not exist ({text})")
    } else if denied.iter().any(|d| text.contains(d)) {
        format!("access denied, check the credentials ({text})")
    } else {
        text
    }
}
