//! Finding an Iceberg table's current metadata file, and its paths where
//! the table is now (the JSON itself: `iceberg::metadata`).
//!
//! ```text
//! <table>/metadata/version-hint.text        "3"  (Hadoop tables)  → v3.metadata.json
//! <table>/metadata/v3.metadata.json
//! <table>/metadata/00008-<uuid>.metadata.json   (pyiceberg, Java catalogs: highest number wins)
//! ```
//!
//! Every schema and partition spec of the table's history is kept: each
//! manifest is read with its own spec, and time travel reads a snapshot with
//! the schema it was written with. Paths in the metadata are absolute and
//! name where the table was *written*; [`Rebase`] maps them to where it is.

use object_store::ObjectStoreExt;
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::iceberg::metadata::metadata_version;
use crate::store::TableLocation;

/// Find the current metadata file of the table at `location`: the hint
/// (`metadata/version-hint.text` → `v<N>.metadata.json`), else the highest
/// numbered `*.metadata.json` in `metadata/`.
pub async fn current_metadata_file(location: &TableLocation) -> Result<Path> {
    let dir = location.metadata_dir();
    if let Ok(hint) = location.store.get(&location.version_hint()).await
        && let Ok(bytes) = hint.bytes().await
        && let Ok(n) = String::from_utf8_lossy(&bytes).trim().parse::<u64>()
    {
        let candidate = dir.clone().join(format!("v{n}.metadata.json"));
        if location.store.head(&candidate).await.is_ok() {
            return Ok(candidate);
        }
    }
    use futures::TryStreamExt;
    let listed: Vec<object_store::ObjectMeta> = location
        .store
        .list(Some(&dir))
        .try_collect()
        .await
        .map_err(|e| Error::Invalid(format!("cannot list {}: {e}", location_url(location, &dir))))?;
    listed
        .into_iter()
        .filter_map(|m| {
            let version = metadata_version(m.location.filename()?)?;
            Some((version, m.location))
        })
        .max_by_key(|(v, _)| *v)
        .map(|(_, p)| p)
        .ok_or_else(|| {
            Error::Invalid(format!(
                "no Iceberg table at {}: {} holds no *.metadata.json file",
                location.url(),
                location_url(location, &dir)
            ))
        })
}

/// `file:///tmp/t/metadata`-style text for messages.
pub fn location_url(location: &TableLocation, path: &Path) -> String {
    format!("{}{}", location.store_url.as_str(), path)
}

/// Maps the absolute paths written in the metadata onto the table's real
/// location: `file:///tmp/hp-fixtures/iceberg/v1/data/x.parquet` of a table
/// written at `file:///tmp/hp-fixtures/iceberg/v1` and now read from
/// `/work/tests/data/iceberg/v1` is `data/x.parquet` under the latter.
#[derive(Debug, Clone)]
pub struct Rebase {
    written: String,
}

/// One spelling for `/t`, `file:/t`, `file:///t`, `s3a://b/t`, `s3://b/t/`.
fn normalize(path: &str) -> String {
    let p = path.trim();
    let p = if let Some(rest) = p.strip_prefix("file://") {
        rest.to_string()
    } else if let Some(rest) = p.strip_prefix("file:") {
        rest.to_string()
    } else if let Some(rest) = p.strip_prefix("s3a://").or_else(|| p.strip_prefix("s3n://")) {
        format!("s3://{rest}")
    } else {
        p.to_string()
    };
    p.trim_end_matches('/').to_string()
}

impl Rebase {
    pub fn new(written_location: &str) -> Self {
        Self {
            written: normalize(written_location),
        }
    }

    /// The path relative to the table root, as the file is named (not
    /// decoded). A `.` or `..` segment (also percent-encoded) is refused: it
    /// could lead out of the table's location.
    pub fn relative(&self, path: &str) -> Result<String> {
        let p = normalize(path);
        let rest = match p.strip_prefix(&self.written) {
            Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
            _ => {
                return Err(Error::Invalid(format!(
                    "file {path} is outside the table location {}; reading files outside it is not supported",
                    self.written
                )));
            }
        };
        let dots = |segment: &str| {
            let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
            matches!(decoded.as_ref(), "." | "..")
        };
        if rest.split('/').any(dots) {
            return Err(Error::Invalid(format!(
                "file {path} has a '.' or '..' segment; a table's files are named by plain paths under its location {}",
                self.written
            )));
        }
        Ok(rest.to_string())
    }

    /// The object path of `path` under the table's real root.
    pub fn resolve(&self, location: &TableLocation, path: &str) -> Result<Path> {
        let rel = self.relative(path)?;
        let mut out = location.root.clone();
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            let part = object_store::path::PathPart::parse(part)
                .map_err(|e| Error::Format(format!("invalid path segment {part:?} in {path:?}: {e}")))?;
            out = out.join(part);
        }
        Ok(out)
    }

    /// The stored (URI-encoded, relative) form our manifests use for `path`.
    pub fn stored(&self, path: &str) -> Result<String> {
        Ok(crate::values::uri::encode(&self.relative(path)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebase_accepts_every_spelling_of_the_location() {
        let r = Rebase::new("file:///tmp/t");
        assert_eq!(r.relative("/tmp/t/data/a=1/f.parquet").unwrap(), "data/a=1/f.parquet");
        assert_eq!(r.relative("file:/tmp/t/metadata/m.avro").unwrap(), "metadata/m.avro");
        assert!(
            r.relative("/tmp/other/f.parquet")
                .unwrap_err()
                .to_string()
                .contains("outside")
        );
        assert!(r.relative("/tmp/tt/f.parquet").is_err());
        for sneaky in [
            "/tmp/t/data/../../victim/x.parquet",
            "/tmp/t/./f",
            "/tmp/t/data/%2E%2E/x",
        ] {
            let e = r.relative(sneaky).unwrap_err().to_string();
            assert!(e.contains("'..' segment"), "{sneaky}: {e}");
        }
        let s3 = Rebase::new("s3a://b/t/");
        assert_eq!(s3.relative("s3://b/t/data/f.parquet").unwrap(), "data/f.parquet");
    }
}
