//! Turning what a user wrote (`--warehouse`, `LOCATION '…'`) into a store
//! URL and a root path inside it.
//!
//! | written                                   | store URL                                   | root        |
//! |-------------------------------------------|---------------------------------------------|-------------|
//! | `./wh` (cwd `/home/a`)                    | `file:///`                                  | `home/a/wh` |
//! | `/data/../tmp/t`                          | `file:///`                                  | `tmp/t`     |
//! | `file:///tmp/t/`                          | `file:///`                                  | `tmp/t`     |
//! | `memory:///wh`                            | `memory:///`                                | `wh`        |
//! | `s3://bucket/wh/`                         | `s3://bucket`                               | `wh`        |
//! | `gs://bucket/wh`                          | `gs://bucket`                               | `wh`        |
//! | `az://container/wh`                       | `az://container`                            | `wh`        |
//! | `abfss://c@acct.dfs.core.windows.net/wh`  | `abfss://c@acct.dfs.core.windows.net`       | `wh`        |
//!
//! Anything of the form `scheme://…` is a URL, never a local path: an
//! unknown scheme, a URL without a bucket, and a path with `.`/`..`, empty
//! segments, a query or a fragment are errors. Local paths need not exist;
//! symbolic links in the part that exists are resolved, so two spellings of
//! one directory compare equal when deciding whether two tables overlap.

use std::path::{Component, PathBuf};

use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;

use crate::error::{Error, Result};

/// The kinds of store a location can be on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Local,
    Memory,
    S3,
    Gcs,
    Azure,
}

impl Scheme {
    /// The kind of store behind a store URL.
    pub fn of(store_url: &ObjectStoreUrl) -> Self {
        match store_url.as_str().split_once("://").map(|(s, _)| s) {
            Some("memory") => Self::Memory,
            Some("s3" | "s3a") => Self::S3,
            Some("gs") => Self::Gcs,
            Some("az" | "azure" | "abfs" | "abfss" | "adl") => Self::Azure,
            _ => Self::Local,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Self::Local => "local file system",
            Self::Memory => "in-memory",
            Self::S3 => "S3",
            Self::Gcs => "Google Cloud Storage",
            Self::Azure => "Azure",
        }
    }
}

/// A place in an object store: which store, and where inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreLocation {
    pub scheme: Scheme,
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
    /// The location as a URL, e.g. `file:///tmp/wh/t` or `s3://bucket/wh/t`.
    pub fn url(&self) -> String {
        let base = self.store_url.as_str();
        let base = base.strip_suffix('/').unwrap_or(base);
        if self.root.as_ref().is_empty() {
            return format!("{base}/");
        }
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

/// Parse a local path or a URL.
pub fn parse_location(written: &str) -> Result<StoreLocation> {
    let trimmed = written.trim();
    if trimmed.is_empty() {
        return Err(Error::Invalid("a location must not be empty".into()));
    }
    let Some((scheme, _)) = trimmed.split_once("://") else {
        // `s3:/x` or `gs:bucket` is a mistyped URL, never a directory name.
        if let Some((prefix, _)) = trimmed.split_once(':')
            && prefix.len() > 1
            && prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
            && !prefix.contains('/')
        {
            return Err(Error::Invalid(format!(
                "location {written:?} looks like a URL ({prefix}:) but lacks \"//\": write {prefix}://…, or ./{trimmed} for a local path"
            )));
        }
        return local(trimmed, written);
    };
    let bad = |why: &str| Error::Invalid(format!("location {written:?}: {why}"));
    // Checked on the text: URL parsing would quietly resolve `..` and `.`.
    let after_scheme = &trimmed[scheme.len() + 3..];
    let raw_path = after_scheme.find('/').map_or("", |i| &after_scheme[i..]);
    let raw_path = raw_path.split(['?', '#']).next().unwrap_or_default();
    let segments: Vec<&str> = raw_path.split('/').skip(1).collect();
    if segments
        .iter()
        .any(|s| matches!(*s, "." | ".." | "%2e" | "%2E" | "%2e%2e" | "%2E%2E"))
    {
        return Err(bad("'.' and '..' are not allowed in a location URL"));
    }
    if segments.len() > 1 && segments[..segments.len() - 1].iter().any(|s| s.is_empty()) {
        return Err(bad("empty path segments (//) are not allowed"));
    }
    let url = url::Url::parse(trimmed).map_err(|e| bad(&format!("not a valid URL ({e})")))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("a location URL has no query (?…) or fragment (#…)"));
    }
    let kind = match scheme.to_ascii_lowercase().as_str() {
        "file" => {
            if url.host_str().is_some_and(|h| !h.is_empty() && h != "localhost") {
                return Err(bad("a file URL names no host: file:///absolute/path"));
            }
            let path = url
                .to_file_path()
                .map_err(|_| bad("a file URL needs an absolute path: file:///dir/…"))?;
            return local(&path.to_string_lossy(), written);
        }
        "memory" => Scheme::Memory,
        "s3" | "s3a" => Scheme::S3,
        "gs" => Scheme::Gcs,
        "az" | "azure" | "abfs" | "abfss" | "adl" => Scheme::Azure,
        other => {
            return Err(bad(&format!(
                "unknown URL scheme {other:?}; expected a local path, file://, memory://, s3://, gs://, az:// or abfss://"
            )));
        }
    };
    // memory:///path, or memory://path for short.
    let (store_url, raw_path) = if kind == Scheme::Memory {
        let host = url.host_str().unwrap_or_default();
        ("memory:///".to_string(), format!("{host}/{}", url.path()))
    } else {
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(bad(&format!(
                "{scheme}:// needs a bucket or container: {scheme}://bucket/prefix"
            )));
        };
        let user = match url.username() {
            "" => String::new(),
            u => format!("{u}@"),
        };
        let port = url.port().map_or(String::new(), |p| format!(":{p}"));
        (format!("{scheme}://{user}{host}{port}"), url.path().to_string())
    };
    let store_url = ObjectStoreUrl::parse(&store_url).map_err(|e| bad(&e.to_string()))?;
    let mut root = Path::default();
    for segment in raw_path.split('/').filter(|s| !s.is_empty()) {
        let decoded = percent_encoding::percent_decode_str(segment)
            .decode_utf8()
            .map_err(|_| bad("the path is not valid UTF-8"))?;
        let part = object_store::path::PathPart::parse(&decoded)
            .map_err(|e| bad(&format!("invalid path segment {decoded:?}: {e}")))?;
        root = root.join(part);
    }
    Ok(StoreLocation {
        scheme: kind,
        store_url,
        root,
    })
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
        scheme: Scheme::Local,
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
    fn urls() {
        let s3 = parse_location("s3://bucket/wh/").unwrap();
        assert_eq!(
            (s3.scheme, s3.store_url.as_str(), s3.root.as_ref()),
            (Scheme::S3, "s3://bucket/", "wh")
        );
        assert_eq!(s3.url(), "s3://bucket/wh");
        let root = parse_location("s3://bucket").unwrap();
        assert_eq!(root.url(), "s3://bucket/");
        assert_eq!(s3.overlap(&root), Overlap::Inside);
        let az = parse_location("abfss://c@acct.dfs.core.windows.net/x/y").unwrap();
        assert_eq!(az.store_url.as_str(), "abfss://c@acct.dfs.core.windows.net/");
        assert_eq!(az.root.as_ref(), "x/y");
        let mem = parse_location("memory:///wh").unwrap();
        assert_eq!((mem.scheme, mem.url()), (Scheme::Memory, "memory:///wh".to_string()));
        for bad in [
            "s3:///nobucket",
            "ftp://host/x",
            "s3://b/x/../y",
            "s3://b/x?versionId=1",
            "s3://b/x#frag",
            "s3://b/x//y",
            "file://host/x",
            "s3:/x",
            "s3:bucket/x",
        ] {
            assert!(parse_location(bad).is_err(), "{bad}");
        }
        let err = parse_location("foo://x").unwrap_err().to_string();
        assert!(err.contains("unknown URL scheme \"foo\""), "{err}");
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
        assert_eq!(parse_location("s3://w/t").unwrap().overlap(&t), Overlap::Disjoint);
    }
}
