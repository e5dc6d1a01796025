//! `ALTER TABLE t EXECUTE optimize [(file_size_threshold => '128MB')] [WHERE …]`:
//! compact small files per partition, and move files of older specs into
//! the current one (so old specs can retire).
//!
//! | file (among those the WHERE condition selects)       | rewritten?                                  |
//! |------------------------------------------------------|---------------------------------------------|
//! | written under an older table spec                    | always (into the current spec)              |
//! | current spec, smaller than the threshold, and another small file shares its partition | yes |
//! | has position deletes (merge-on-read)                 | always (with the small files of its partition), without the deleted rows; its delete files leave the table |
//! | current spec, at least the threshold, or alone       | no                                          |
//!
//! The rewritten rows go through the INSERT writer, so each partition gets
//! one file (more only if it exceeds the write buffer or 128 MiB). Appends
//! that commit meanwhile do not conflict; a DELETE or UPDATE of a file being
//! compacted does (the compaction starts over).

use std::collections::{BTreeMap, HashSet};

use async_trait::async_trait;
use datafusion::execution::SessionState;
use datafusion::logical_expr::Expr;

use crate::error::{Error, Result};
use crate::store::Versioned;
use crate::table::Table;
use crate::table::change::{Change, ConflictScope, Operation};
use crate::table::retry::{Attempt, Chosen, WriteStatement};
use crate::table::rewrite::{as_is, rewrite};
use crate::table::source::{OpenSource, SnapshotSource};
use crate::table::writer::delete_files;

/// Files below this size are compacted by default.
pub const DEFAULT_THRESHOLD: u64 = 128 * 1024 * 1024;

/// The largest `file_size_threshold` accepted: 1 PiB.
pub const MAX_THRESHOLD: u64 = 1 << 50;

/// `ALTER TABLE t EXECUTE optimize`.
#[derive(Debug)]
pub struct Optimize {
    pub table: Table,
    /// Reads a snapshot of the table (see `table::source`).
    pub open: OpenSource,
    pub state: SessionState,
    pub threshold: u64,
    pub filters: Vec<Expr>,
}

#[async_trait]
impl WriteStatement for Optimize {
    fn table(&self) -> &Table {
        &self.table
    }

    async fn choose(&self, provider: &dyn SnapshotSource) -> Result<Chosen> {
        let md = provider.metadata();
        let plan = provider.plan_files(&self.state, &self.filters).await?;
        let current = md.current_spec_id;
        // Small files of the current spec, by partition.
        let mut small: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let mut read = Vec::new();
        for (i, f) in plan.files.iter().enumerate() {
            if f.spec_id != current {
                read.push(i);
            } else if f.size < self.threshold || f.deletes.is_some() {
                small.entry(format!("{:?}", f.partition)).or_default().push(i);
            }
        }
        // A file with deletes is rewritten whatever its size, with the small
        // files of its partition.
        let has_deletes = |g: &Vec<usize>| g.iter().any(|i| plan.files[*i].deletes.is_some());
        read.extend(small.into_values().filter(|g| g.len() > 1 || has_deletes(g)).flatten());
        let keep: HashSet<usize> = read.into_iter().collect();
        let mut chosen = Chosen {
            counts: plan.counts,
            ..Default::default()
        };
        chosen.read = plan
            .files
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, f)| f)
            .collect();
        Ok(chosen)
    }

    async fn attempt(&self, base: Versioned) -> Result<Attempt> {
        let provider = (self.open)(self.table.clone(), base)?;
        let md = provider.metadata();
        let Some(snapshot) = md.current_snapshot() else {
            return Ok(Attempt::nothing(Operation::Optimize));
        };
        let chosen = self.choose(&*provider).await?;
        if chosen.read.is_empty() {
            return Ok(Attempt::nothing(Operation::Optimize));
        }
        let files: HashSet<_> = chosen.read.iter().map(|f| f.path.clone()).collect();
        let rewritten = rewrite(&self.state, &*provider, files, Ok, as_is()).await?;
        let read_rows: u64 = chosen.read.iter().map(|f| f.live_rows()).sum();
        if rewritten.rows != read_rows {
            delete_files(&self.table.location, &rewritten.files).await;
            return Err(Error::Invalid(format!(
                "optimize of table {}: read {read_rows} rows but wrote {}; nothing was committed",
                self.table.name, rewritten.rows
            )));
        }
        let mut change = Change::new(Operation::Optimize, Some(snapshot))?;
        change.scope = ConflictScope::Nothing;
        change
            .rewrite_files(&self.table.location, md, Some(snapshot), &chosen.read, &rewritten.files)
            .await?;
        Ok(Attempt {
            count: chosen.read.len() as u64,
            change,
            written: rewritten.files,
        })
    }
}

/// `'128MB'`, `'1 GiB'`, `'512kB'`, `'1000'` (bytes) → bytes.
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| Error::Invalid(format!("file_size_threshold {text:?} is not a size such as '128MB'")))?;
    let factor: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" | "kib" | "k" => 1024.0,
        "mb" | "mib" | "m" => 1024.0 * 1024.0,
        "gb" | "gib" | "g" => 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(Error::Invalid(format!(
                "file_size_threshold {text:?}: unknown unit {other:?} (use B, kB, MB or GB)"
            )));
        }
    };
    if number <= 0.0 {
        return Err(Error::Invalid(format!("file_size_threshold {text:?} must be positive")));
    }
    let bytes = number * factor;
    // Checked, not saturated: 1 B to 1 PiB (as many bytes as f64 holds exactly).
    if !(1.0..=MAX_THRESHOLD as f64).contains(&bytes) {
        return Err(Error::Invalid(format!(
            "file_size_threshold {text:?} is out of range: the accepted range is 1B to 1048576GB (1 PiB)"
        )));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("128MB").unwrap(), 128 << 20);
        assert_eq!(parse_size("1 GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert!(parse_size("-1MB").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert_eq!(parse_size("1048576GB").unwrap(), 1 << 50);
        for huge in ["1048577GB", "99999999999999999999999999GB", "0.1B"] {
            let e = parse_size(huge).unwrap_err().to_string();
            assert!(
                e.contains("file_size_threshold") && e.contains("1B to 1048576GB"),
                "{huge}: {e}"
            );
        }
    }
}
