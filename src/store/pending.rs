//! Writes of this process that have not committed yet, so that orphan
//! removal never deletes their files.
//!
//! A statement writes its data files and manifests before it commits the
//! metadata version that references them; until then those files look like
//! orphans. Every writer holds a [`Pending`] from before its first file until
//! its files are committed or dropped: the data files it returns carry it
//! (see `DataFile::pending`), and so does its change (`table::change::Change`).
//! `remove_orphan_files` keeps every file younger than the oldest pending
//! write's start. Other processes cannot be seen from here; the retention
//! floor covers them (see `table::orphans`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chrono::Utc;

/// Start times (ms since the epoch) of this process's pending writes, by id.
fn registry() -> &'static Mutex<BTreeMap<u64, i64>> {
    static REGISTRY: Mutex<BTreeMap<u64, i64>> = Mutex::new(BTreeMap::new());
    &REGISTRY
}

struct Registration(u64);

impl Drop for Registration {
    fn drop(&mut self) {
        registry().lock().unwrap_or_else(|e| e.into_inner()).remove(&self.0);
    }
}

/// One pending write: registered while any clone is alive.
#[derive(Clone)]
pub struct Pending(Arc<Registration>);

impl Pending {
    /// A write starting now.
    pub fn start() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        registry()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, Utc::now().timestamp_millis());
        Self(Arc::new(Registration(id)))
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pending({})", self.0.0)
    }
}

/// Pending writes are bookkeeping, not part of what a file or change is.
impl PartialEq for Pending {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// When the oldest write of this process that has not committed started.
pub fn oldest_start_ms() -> Option<i64> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .min()
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_pending_while_any_clone_lives() {
        let before = Utc::now().timestamp_millis();
        let p = Pending::start();
        let copy = p.clone();
        drop(p);
        assert!(oldest_start_ms().is_some_and(|t| t <= Utc::now().timestamp_millis()));
        assert!(oldest_start_ms().is_some_and(|t| t >= before - 60_000));
        drop(copy);
    }
}
