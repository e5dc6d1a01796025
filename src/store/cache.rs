//! A per-session cache of immutable objects, bounded in memory.
//!
//! Every object this cache holds is written once and never changed under
//! its path: metadata versions (`v<N>.metadata.json`, put-if-absent, numbers
//! never reused at a location) and manifests (`<uuid>-m.parquet`). So an
//! entry never needs revalidating; what is still current is decided by the
//! version probe (`store::commit`), which is never cached.
//!
//! | entry                         | key                                  | saves                       |
//! |-------------------------------|--------------------------------------|-----------------------------|
//! | parsed metadata version (also one this session committed) | URL of the version file | a GET and JSON parsing |
//! | manifest bytes                | URL of the manifest                  | a GET                       |
//! | a snapshot's manifest list, parsed (`manifests-file`) | `list:` + its URL  | a GET and JSON parsing      |
//! | decoded manifest columns      | URL + the columns read               | Parquet decoding            |
//! | "lists every file once"       | table URL + snapshot id + manifests  | the duplicate-file check    |
//!
//! Least recently used entries are evicted past the byte limit. Parquet
//! footers of data files are cached by DataFusion's own file metadata cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use datafusion::arrow::array::RecordBatch;

use object_store::ObjectMeta;

use super::commit::VersionDoc;

/// A parsed metadata version and the identity of its object.
pub type CachedVersion = Arc<(VersionDoc, ObjectMeta)>;

/// Default limit of a session's cache.
pub const DEFAULT_CACHE_BYTES: usize = 256 * 1024 * 1024;

#[derive(Clone)]
enum Entry {
    Version(CachedVersion),
    Bytes(Bytes),
    Batch(RecordBatch),
    /// A parsed list of manifests and the size of its text.
    Manifests(crate::spec::Manifests, usize),
    Flag,
}

impl Entry {
    fn size(&self) -> usize {
        match self {
            // Metadata JSON: the parsed form is a few times the text; count
            // generously (a table of many snapshots has a large one).
            Self::Version(v) => (v.1.size as usize).saturating_mul(4).max(4096),
            Self::Bytes(b) => b.len(),
            Self::Batch(b) => b.get_array_memory_size(),
            // Parsed, a few times the text (as for a version).
            Self::Manifests(_, text) => text.saturating_mul(4).max(4096),
            Self::Flag => 64,
        }
    }
}

#[derive(Default)]
struct Inner {
    entries: HashMap<String, (Entry, u64)>,
    bytes: usize,
    tick: u64,
    hits: u64,
    misses: u64,
}

/// Immutable objects by URL, least recently used evicted first.
pub struct ObjectCache {
    inner: Mutex<Inner>,
    limit: usize,
}

impl std::fmt::Debug for ObjectCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectCache(limit={})", self.limit)
    }
}

impl Default for ObjectCache {
    fn default() -> Self {
        Self::new(DEFAULT_CACHE_BYTES)
    }
}

impl ObjectCache {
    pub fn new(limit: usize) -> Self {
        Self {
            inner: Mutex::default(),
            limit,
        }
    }

    fn get(&self, key: &str) -> Option<Entry> {
        let mut inner = self.inner.lock().ok()?;
        inner.tick += 1;
        let tick = inner.tick;
        match inner.entries.get_mut(key) {
            Some((entry, used)) => {
                *used = tick;
                let entry = entry.clone();
                inner.hits += 1;
                Some(entry)
            }
            None => {
                inner.misses += 1;
                None
            }
        }
    }

    fn put(&self, key: String, entry: Entry) {
        let size = entry.size();
        if size > self.limit {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else { return };
        inner.tick += 1;
        let tick = inner.tick;
        if let Some((old, _)) = inner.entries.insert(key, (entry, tick)) {
            inner.bytes -= old.size();
        }
        inner.bytes += size;
        while inner.bytes > self.limit {
            let Some(oldest) = inner
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((old, _)) = inner.entries.remove(&oldest) {
                inner.bytes -= old.size();
            }
        }
    }

    pub fn version(&self, key: &str) -> Option<CachedVersion> {
        match self.get(key)? {
            Entry::Version(v) => Some(v),
            _ => None,
        }
    }

    pub fn put_version(&self, key: String, doc: CachedVersion) {
        self.put(key, Entry::Version(doc));
    }

    pub fn bytes(&self, key: &str) -> Option<Bytes> {
        match self.get(key)? {
            Entry::Bytes(b) => Some(b),
            _ => None,
        }
    }

    pub fn put_bytes(&self, key: String, bytes: Bytes) {
        self.put(key, Entry::Bytes(bytes));
    }

    pub fn batch(&self, key: &str) -> Option<RecordBatch> {
        match self.get(key)? {
            Entry::Batch(b) => Some(b),
            _ => None,
        }
    }

    pub fn put_batch(&self, key: String, batch: RecordBatch) {
        self.put(key, Entry::Batch(batch));
    }

    pub fn manifests(&self, key: &str) -> Option<crate::spec::Manifests> {
        match self.get(key)? {
            Entry::Manifests(m, _) => Some(m),
            _ => None,
        }
    }

    pub fn put_manifests(&self, key: String, manifests: crate::spec::Manifests, text: usize) {
        self.put(key, Entry::Manifests(manifests, text));
    }

    /// Whether a fact about an immutable object was recorded under `key`.
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some(Entry::Flag))
    }

    pub fn put_flag(&self, key: String) {
        self.put(key, Entry::Flag);
    }

    /// Bytes held, hits and misses so far.
    pub fn stats(&self) -> (usize, u64, u64) {
        self.inner
            .lock()
            .map(|i| (i.bytes, i.hits, i.misses))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_past_the_limit() {
        let cache = ObjectCache::new(10);
        cache.put_bytes("a".into(), Bytes::from_static(b"12345"));
        cache.put_bytes("b".into(), Bytes::from_static(b"12345"));
        assert!(cache.bytes("a").is_some()); // a is now the most recent
        cache.put_bytes("c".into(), Bytes::from_static(b"12345"));
        assert!(cache.bytes("b").is_none());
        assert!(cache.bytes("a").is_some());
        assert!(cache.bytes("c").is_some());
        cache.put_bytes("huge".into(), Bytes::from(vec![0; 11]));
        assert!(cache.bytes("huge").is_none());
        assert_eq!(cache.stats().0, 10);
    }

    #[test]
    fn a_version_counts_by_the_size_of_its_file() {
        let version = |size: u64| -> CachedVersion {
            let doc = VersionDoc::Dropped(super::super::commit::Tombstone {
                format_version: 2,
                table_uuid: "u".into(),
                dropped_at_ms: 0,
            });
            let meta = ObjectMeta {
                location: "v1.metadata.json".into(),
                last_modified: chrono::Utc::now(),
                size,
                e_tag: None,
                version: None,
            };
            Arc::new((doc, meta))
        };
        let cache = ObjectCache::new(1 << 20);
        cache.put_version("small".into(), version(100));
        assert_eq!(cache.stats().0, 4096);
        // A large metadata file (a table with many snapshots) takes its share
        // of the limit, and pushes older entries out instead of piling up.
        cache.put_version("large".into(), version(200_000));
        assert_eq!(cache.stats().0, 4096 + 800_000);
        cache.put_version("larger".into(), version(250_000));
        assert!(cache.version("small").is_none() && cache.version("large").is_none());
        assert!(cache.version("larger").is_some());
        cache.put_version("huge".into(), version(1 << 20));
        assert!(cache.version("huge").is_none(), "larger than the whole cache");
    }
}
