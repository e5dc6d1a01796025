//! Watching the requests a store serves: counting them (per statement, in
//! `EXPLAIN ANALYZE`), and — in tests — failing chosen ones.
//!
//! [`ObservedStore`] wraps any `ObjectStore` and tells a [`RequestObserver`]
//! about every request before it is sent and after it succeeded:
//!
//! | call                          | counted as            |
//! |-------------------------------|-----------------------|
//! | `get_opts` (also ranges)      | GET, or HEAD for `head` |
//! | `put_opts`, each multipart part and its completion | PUT |
//! | `list`, `list_with_delimiter` | LIST (one per call)   |
//! | `delete_stream`               | DELETE per path       |
//! | `copy_opts`                   | PUT                   |
//!
//! An observer may also hold a `put_opts` back ([`RequestObserver::late`]):
//! the caller gets an error at once and the write lands only when the
//! observer runs it — a *late success*, as when a request times out on the
//! client but the store still applies it.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, Result, UploadPart,
};

/// The kinds of request an object store serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestKind {
    Get,
    Put,
    Head,
    List,
    Delete,
}

impl RequestKind {
    pub const ALL: [RequestKind; 5] = [Self::Get, Self::Put, Self::Head, Self::List, Self::Delete];

    pub fn name(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Put => "PUT",
            Self::Head => "HEAD",
            Self::List => "LIST",
            Self::Delete => "DELETE",
        }
    }
}

/// Told about every request of an [`ObservedStore`].
#[async_trait]
pub trait RequestObserver: Send + Sync + fmt::Debug + 'static {
    /// Before the request is sent; an error fails it without sending it.
    async fn before(&self, kind: RequestKind, path: &Path) -> Result<()>;
    /// After it succeeded; an error is reported although the request took
    /// effect (a lost response).
    fn after(&self, _kind: RequestKind, _path: &Path) -> Result<()> {
        Ok(())
    }
    /// Bytes a GET answered with (its range's length).
    fn read(&self, _path: &Path, _bytes: u64) {}
    /// Whether to fail this PUT now although it will still land: the error
    /// goes to the caller and the write itself to [`Self::held`].
    fn late(&self, _path: &Path) -> Option<object_store::Error> {
        None
    }
    /// The write of a PUT that [`Self::late`] failed: running it applies it.
    fn held(&self, _put: LatePut) {}
}

/// A PUT held back by an observer; awaiting it makes the write land.
pub type LatePut = futures::future::BoxFuture<'static, Result<PutResult>>;

/// Requests served so far, by kind.
#[derive(Debug, Default)]
pub struct RequestCounts {
    counts: [AtomicU64; 5],
}

/// A snapshot of [`RequestCounts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Requests {
    pub get: u64,
    pub put: u64,
    pub head: u64,
    pub list: u64,
    pub delete: u64,
}

impl Requests {
    pub fn total(&self) -> u64 {
        self.get + self.put + self.head + self.list + self.delete
    }

    /// Requests between `earlier` and `self`.
    pub fn since(&self, earlier: &Requests) -> Requests {
        Requests {
            get: self.get.saturating_sub(earlier.get),
            put: self.put.saturating_sub(earlier.put),
            head: self.head.saturating_sub(earlier.head),
            list: self.list.saturating_sub(earlier.list),
            delete: self.delete.saturating_sub(earlier.delete),
        }
    }
}

impl fmt::Display for Requests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GET={} HEAD={} LIST={} PUT={} DELETE={}",
            self.get, self.head, self.list, self.put, self.delete
        )
    }
}

impl RequestCounts {
    pub fn snapshot(&self) -> Requests {
        let n = |k: RequestKind| self.counts[k as usize].load(Ordering::Relaxed);
        Requests {
            get: n(RequestKind::Get),
            put: n(RequestKind::Put),
            head: n(RequestKind::Head),
            list: n(RequestKind::List),
            delete: n(RequestKind::Delete),
        }
    }
}

#[async_trait]
impl RequestObserver for RequestCounts {
    async fn before(&self, kind: RequestKind, _path: &Path) -> Result<()> {
        self.counts[kind as usize].fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// An object store whose requests an observer sees.
#[derive(Debug)]
pub struct ObservedStore {
    inner: Arc<dyn ObjectStore>,
    observer: Arc<dyn RequestObserver>,
}

impl ObservedStore {
    pub fn new(inner: Arc<dyn ObjectStore>, observer: Arc<dyn RequestObserver>) -> Self {
        Self { inner, observer }
    }
}

impl fmt::Display for ObservedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.inner)
    }
}

#[async_trait]
impl ObjectStore for ObservedStore {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        self.observer.before(RequestKind::Put, location).await?;
        if let Some(error) = self.observer.late(location) {
            let (inner, location) = (Arc::clone(&self.inner), location.clone());
            self.observer
                .held(Box::pin(async move { inner.put_opts(&location, payload, opts).await }));
            return Err(error);
        }
        let r = self.inner.put_opts(location, payload, opts).await?;
        self.observer.after(RequestKind::Put, location)?;
        Ok(r)
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.observer.before(RequestKind::Put, location).await?;
        let inner = self.inner.put_multipart_opts(location, opts).await?;
        self.observer.after(RequestKind::Put, location)?;
        Ok(Box::new(ObservedUpload {
            inner,
            observer: Arc::clone(&self.observer),
            location: location.clone(),
        }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let kind = if options.head {
            RequestKind::Head
        } else {
            RequestKind::Get
        };
        self.observer.before(kind, location).await?;
        let r = self.inner.get_opts(location, options).await?;
        self.observer.after(kind, location)?;
        if kind == RequestKind::Get {
            self.observer.read(location, r.range.end - r.range.start);
        }
        Ok(r)
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        for _ in ranges {
            self.observer.before(RequestKind::Get, location).await?;
        }
        let r = self.inner.get_ranges(location, ranges).await?;
        self.observer.after(RequestKind::Get, location)?;
        self.observer.read(location, r.iter().map(|b| b.len() as u64).sum());
        Ok(r)
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        let observer = Arc::clone(&self.observer);
        let checked = locations
            .and_then(move |p| {
                let observer = Arc::clone(&observer);
                async move {
                    observer.before(RequestKind::Delete, &p).await?;
                    Ok(p)
                }
            })
            .boxed();
        self.inner.delete_stream(checked)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let observer = Arc::clone(&self.observer);
        let at = prefix.cloned().unwrap_or_default();
        let inner = self.inner.list(prefix);
        futures::stream::once(async move { observer.before(RequestKind::List, &at).await.map(|()| inner) })
            .try_flatten()
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let at = prefix.cloned().unwrap_or_default();
        self.observer.before(RequestKind::List, &at).await?;
        let r = self.inner.list_with_delimiter(prefix).await?;
        self.observer.after(RequestKind::List, &at)?;
        Ok(r)
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.observer.before(RequestKind::Put, to).await?;
        self.inner.copy_opts(from, to, options).await?;
        self.observer.after(RequestKind::Put, to)
    }
}

#[derive(Debug)]
struct ObservedUpload {
    inner: Box<dyn MultipartUpload>,
    observer: Arc<dyn RequestObserver>,
    location: Path,
}

#[async_trait]
impl MultipartUpload for ObservedUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let observer = Arc::clone(&self.observer);
        let location = self.location.clone();
        let part = self.inner.put_part(data);
        Box::pin(async move {
            observer.before(RequestKind::Put, &location).await?;
            part.await?;
            observer.after(RequestKind::Put, &location)
        })
    }

    async fn complete(&mut self) -> Result<PutResult> {
        self.observer.before(RequestKind::Put, &self.location).await?;
        let r = self.inner.complete().await?;
        self.observer.after(RequestKind::Put, &self.location)?;
        Ok(r)
    }

    async fn abort(&mut self) -> Result<()> {
        self.inner.abort().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;
    use object_store::memory::InMemory;

    #[tokio::test]
    async fn counts_each_kind() {
        let counts = Arc::new(RequestCounts::default());
        let store = ObservedStore::new(Arc::new(InMemory::new()), counts.clone());
        let p = Path::from("a/b");
        store.put(&p, "x".into()).await.unwrap();
        store.get(&p).await.unwrap();
        store.head(&p).await.unwrap();
        let _: Vec<_> = store.list(None).try_collect().await.unwrap();
        store.delete(&p).await.unwrap();
        let n = counts.snapshot();
        assert_eq!((n.put, n.get, n.head, n.list, n.delete), (1, 1, 1, 1, 1));
        assert_eq!(n.to_string(), "GET=1 HEAD=1 LIST=1 PUT=1 DELETE=1");
    }

    /// Holds every PUT back.
    #[derive(Default)]
    struct Late(std::sync::Mutex<Vec<LatePut>>);

    impl fmt::Debug for Late {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Late")
        }
    }

    #[async_trait]
    impl RequestObserver for Late {
        async fn before(&self, _kind: RequestKind, _path: &Path) -> Result<()> {
            Ok(())
        }
        fn late(&self, _path: &Path) -> Option<object_store::Error> {
            Some(object_store::Error::Generic {
                store: "test",
                source: "timed out".into(),
            })
        }
        fn held(&self, put: LatePut) {
            self.0.lock().unwrap().push(put);
        }
    }

    #[tokio::test]
    async fn a_late_put_fails_now_and_lands_later() {
        let inner: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let late = Arc::new(Late::default());
        let store = ObservedStore::new(Arc::clone(&inner), late.clone());
        let p = Path::from("a/b");
        assert!(store.put(&p, "x".into()).await.is_err());
        assert!(inner.head(&p).await.is_err(), "landed before it was run");
        let held: Vec<_> = std::mem::take(&mut *late.0.lock().unwrap());
        for put in held {
            put.await.unwrap();
        }
        assert_eq!(inner.get(&p).await.unwrap().bytes().await.unwrap().as_ref(), b"x");
    }
}
