//! Turning what a user wrote (`--warehouse`, `LOCATION '…'`) into a store
//! URL and a root path inside it.
//!
//! | written                 | store URL   | root                       |
//! |-------------------------|-------------|----------------------------|
//! | `./wh` (cwd `/home/a`)  | `file:///`  | `home/a/wh`                |
//! | `/data/../tmp/t`        | `file:///`  | `tmp/t`                    |
//! | `file:///tmp/t/`        | `file:///`  | `tmp/t`                    |
//!
//! Local paths need not exist. Symbolic links in the part that exists are
//! resolved, so two spellings of one directory compare equal when deciding
//! whether two tables overlap.

use std::path::{Component, PathBuf};

use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;

use crate::error::{Error, Result};

/// A place in an object store: which store, and where inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreLocation {
    pub store_url: ObjectStoreUrl,
    pub root: Path,
}

/// How two locations relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlap {
    Same,
    /// The first is inside the second.
    Inside,
    /// The first contains the second.
    Contains,
    Disjoint,
}

impl StoreLocation {
    /// The location as a URL, e.g. `file:///tmp/wh/t`.
    pub fn url(&self) -> String {
        let base = self
            .store_url
            .as_str()
            .strip_suffix('/')
            .unwrap_or(self.store_url.as_str());
        format!("{base}/{}", self.root)
    }

    pub fn overlap(&self, other: &StoreLocation) -> Overlap {
        if self.store_url != other.store_url {
            return Overlap::Disjoint;
        }
        let a: Vec<_> = self.root.parts().collect();
        let b: Vec<_> = other.root.parts().collect();
        if a == b {
            Overlap::Same
        } else if a.starts_with(&b) {
            Overlap::Inside
        } else if b.starts_with(&a) {
            Overlap::Contains
        } else {
            Overlap::Disjoint
        }
    }
}

/// Parse a local path or `file://` URL.
pub fn parse_location(written: &str) -> Result<StoreLocation> {
    let trimmed = written.trim();
    if trimmed.is_empty() {
        return Err(Error::Invalid("a location must not be empty".into()));
    }
    if let Some(rest) = trimmed.strip_prefix("file://") {
        if !rest.starts_with('/') {
            return Err(Error::Invalid(format!(
                "location {written:?}: a file URL needs an absolute path (file:///dir/…)"
            )));
        }
        return local(rest, written);
    }
    if let Some((scheme, _)) = trimmed.split_once("://") {
        return Err(Error::Invalid(format!(
            "location {written:?}: unknown URL scheme {scheme:?} (expected a local path or file://)"
        )));
    }
    local(trimmed, written)
}

fn local(path: &str, written: &str) -> Result<StoreLocation> {
    let path = std::path::Path::new(path);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| Error::Invalid(format!("location {written:?}: cannot read the current directory: {e}")))?
            .join(path)
    };
    let normalized = resolve_existing(&lexical_normalize(&absolute));
    let root = Path::from_absolute_path(&normalized)
        .map_err(|e| Error::Invalid(format!("location {written:?} is not a usable path: {e}")))?;
    Ok(StoreLocation {
        store_url: ObjectStoreUrl::local_filesystem(),
        root,
    })
}

/// Drop `.` and resolve `..` without touching the file system.
fn lexical_normalize(path: &std::path::Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Canonicalize the longest existing ancestor (symbolic links), keep the rest.
fn resolve_existing(path: &std::path::Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canon) = std::fs::canonicalize(&existing) {
            let mut out = canon;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.file_name().map(|f| f.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_file_urls() {
        let a = parse_location("/no/such/dir/../t").unwrap();
        assert_eq!(a.url(), "file:///no/such/t");
        let b = parse_location("file:///no/such/t/").unwrap();
        assert_eq!(a, b);
        assert!(parse_location("file://relative").is_err());
        assert!(parse_location("").is_err());
    }

    #[test]
    fn overlaps() {
        let wh = parse_location("/w").unwrap();
        let t = parse_location("/w/t").unwrap();
        let other = parse_location("/wx").unwrap();
        assert_eq!(t.overlap(&wh), Overlap::Inside);
        assert_eq!(wh.overlap(&t), Overlap::Contains);
        assert_eq!(wh.overlap(&wh), Overlap::Same);
        assert_eq!(other.overlap(&wh), Overlap::Disjoint);
    }
}
