//! Running a write statement: plan against the latest snapshot, write, commit
//! — and start over from the new snapshot when a concurrent statement
//! conflicts (see `table::change`), a few times before giving up.

use async_trait::async_trait;

use crate::error::{Error, Result};
use crate::manifest::DataFile;
use crate::plan::files::{PlannedFile, SpecFileCount};
use crate::store::Versioned;
use crate::table::Table;
use crate::table::change::Change;
use crate::table::source::SnapshotSource;
use crate::table::writer::delete_files;

/// How many times a statement is attempted before a conflict is reported.
pub const ATTEMPTS: usize = 4;

/// One attempt's result: the change to commit, the data files it wrote (to
/// delete if the commit fails), and the statement's row count.
#[derive(Debug)]
pub struct Attempt {
    pub change: Change,
    pub written: Vec<DataFile>,
    pub count: u64,
}

impl Attempt {
    /// An attempt that changes nothing (e.g. no row matched).
    pub fn nothing(operation: crate::table::change::Operation) -> Self {
        Self {
            change: Change::of_empty_table(operation),
            written: Vec::new(),
            count: 0,
        }
    }
}

/// The data files a statement reads (and rewrites) and those it drops from
/// the table without reading, as planned against one snapshot.
#[derive(Debug, Default)]
pub struct Chosen {
    /// Files per spec before and after pruning (as a scan reports them).
    pub counts: Vec<SpecFileCount>,
    pub read: Vec<PlannedFile>,
    pub dropped: Vec<PlannedFile>,
}

impl Chosen {
    /// Per table spec with files: (spec id, total, read, dropped unread).
    pub fn per_spec(&self, md: &crate::spec::TableMetadata) -> Vec<(i32, usize, usize, usize)> {
        self.counts
            .iter()
            .filter(|c| c.total > 0)
            .map(|c| {
                let of_spec = |f: &PlannedFile| md.spec(f.spec_id).is_ok_and(|s| s.partition_spec_id() == c.spec_id);
                let n = |files: &[PlannedFile]| files.iter().filter(|f| of_spec(f)).count();
                (c.spec_id, c.total, n(&self.read), n(&self.dropped))
            })
            .collect()
    }
}

/// A write statement, re-runnable from any snapshot of its table.
#[async_trait]
pub trait WriteStatement: std::fmt::Debug + Send + Sync {
    /// The table written to (its handle bound to the table's identity).
    fn table(&self) -> &Table;
    /// The files a run against `table` (a snapshot of this statement's
    /// table) would read and drop (`EXPLAIN FILES` shows them).
    async fn choose(&self, table: &dyn SnapshotSource) -> Result<Chosen>;
    /// Plan against `base` and write the new files; nothing is committed.
    async fn attempt(&self, base: Versioned) -> Result<Attempt>;
    /// Whether a conflict may be resolved by starting over (false when the
    /// input can only be read once, as an INSERT's).
    fn retriable(&self) -> bool {
        true
    }
}

/// Run `statement` to its commit; returns its row count.
pub async fn run(statement: &dyn WriteStatement) -> Result<u64> {
    let table = statement.table();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let base = table.load_bound().await?;
        let attempt = statement.attempt(base).await?;
        if attempt.change.is_empty() {
            return Ok(attempt.count);
        }
        match table.commit_change(&attempt.change).await {
            Ok(_) => return Ok(attempt.count),
            Err(e) if e.commit_may_have_happened() => return Err(e),
            Err(e) => {
                delete_files(&table.location, &attempt.written).await;
                attempt.change.discard(&table.location).await;
                match e {
                    Error::WriteConflict { table, detail } if statement.retriable() && attempts < ATTEMPTS => {
                        let _ = (table, detail);
                        continue;
                    }
                    Error::WriteConflict { table, detail } if statement.retriable() => {
                        return Err(Error::WriteConflict {
                            table,
                            detail: format!("{detail} (started over {} times)", ATTEMPTS - 1),
                        });
                    }
                    other => return Err(other),
                }
            }
        }
    }
}
