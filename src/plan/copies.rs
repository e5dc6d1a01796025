//! Which rows a copy-on-write rewrite copied unchanged, for tables without
//! row lineage (format version 2).
//!
//! An UPDATE of 1 % of the rows of every file rewrites every file: the
//! snapshot removes 10 M rows and adds 10 M rows, of which 9.9 M are
//! copies. A changelog (`table_changes`) must leave the copies out. A
//! format version 3 table knows them by their lineage (`plan::lineage`);
//! without it they can only be found by comparing all 20 M rows. So our
//! rewrites record the copies in each new file's Parquet footer, as a
//! key-value entry that other readers ignore:
//!
//! | footer key                      | value (JSON)                                               |
//! |---------------------------------|------------------------------------------------------------|
//! | `hidden-partitions.copied-rows` | `{"rows":[0,40,2,57],"from":[["data/a.parquet",[0,12,1,85]]]}` |
//!
//! `rows`: the positions of this file that hold copies; `from`: for each
//! file the rewrite replaced (its path in the table's store), the positions
//! copied from it into this file. Both as runs: pairs of (gap since the end
//! of the previous run, length). Above, rows 0–39 and 42–98 are copies of
//! rows 0–11 and 13–97 of `data/a.parquet`.
//!
//! The changelog of the snapshot that added the file hides both sides of
//! each copy by position and compares only the other rows
//! ([`recorded`]). The footers are used only when they agree with the
//! snapshot: every source a file it removed, every position within its
//! file and not deleted, no source row copied twice, as many copies on
//! each side. Otherwise every row is compared, as for other engines'
//! rewrites.
//!
//! DELETE, UPDATE and MERGE record their copies; optimize does not (its
//! snapshots show no changes).
//!
//! The rows travel to the writer as two columns after the table's (and
//! the lineage's): [`COPIED_FILE`] and [`COPIED_POS`] (NULL for a row the
//! statement changed), made by [`columns`] from a positions scan. The
//! writer folds them into one code per row ([`Sources::fold`]) and
//! gathers each file's entry as it writes ([`FileCopies`]).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, new_null_array};
use datafusion::arrow::compute::{concat, max, min};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Int32Type, Int64Type};
use datafusion::logical_expr::{Expr, col, lit, when};
use parquet::file::metadata::KeyValue;

use crate::error::{Error, Result};
use crate::plan::PlannedFile;
use crate::plan::lineage::CarriedOver;
use crate::plan::positions::{FILE, POS};
use crate::store::TableLocation;

/// The footer key of a file's copies.
pub const FOOTER_KEY: &str = "hidden-partitions.copied-rows";
/// The column naming the file a row was read from (run-end encoded).
pub const COPIED_FILE: &str = "__hp_copied_file";
/// The column holding a copied row's position in that file; NULL for a
/// row the statement changed.
pub const COPIED_POS: &str = "__hp_copied_pos";
/// The writer's one column for both: the source's number, then the position.
pub const COPIED: &str = "__hp_copied";

/// Bits of a [`COPIED`] code that hold the position.
const POS_BITS: u32 = 40;

/// The two columns of a rewrite's rows when `input` (a positions scan of a
/// table without lineage) can say where each row came from; `modified`
/// is true for the rows the statement changes (`None`: it changes none
/// of the rows it writes). Nothing otherwise.
pub fn columns(input: &datafusion::common::DFSchema, modified: Option<&Expr>) -> Vec<Expr> {
    let has = |name: &str| input.index_of_column_by_name(None, name).is_some();
    if !has(FILE) || !has(POS) || has(crate::plan::lineage::ROW_ID) {
        return Vec::new();
    }
    let pos = match modified {
        Some(m) => when(m.clone().is_true(), lit(datafusion::common::ScalarValue::Int64(None)))
            .otherwise(col(POS))
            .expect("a CASE with one branch"),
        None => col(POS),
    };
    vec![col(FILE).alias(COPIED_FILE), pos.alias(COPIED_POS)]
}

/// The writer's [`COPIED`] column.
pub fn written_field() -> FieldRef {
    Arc::new(Field::new(COPIED, DataType::Int64, true))
}

/// Source paths by number, shared by the writer that numbers them and the
/// files being encoded meanwhile.
pub type SourcePaths = Arc<RwLock<Vec<String>>>;

/// The source files of a rewrite's rows, numbered as they first appear.
#[derive(Debug, Default)]
pub struct Sources {
    numbers: HashMap<String, i64>,
    paths: SourcePaths,
}

impl Sources {
    /// `batch` with its last two columns ([`COPIED_FILE`], [`COPIED_POS`])
    /// replaced by one [`COPIED`] code per row: one map lookup and one
    /// kernel call per run of rows from the same file.
    pub fn fold(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let n = batch.num_columns();
        if n < 2 {
            return Err(Error::Invalid(
                "a rewrite's rows lack the columns of their source".into(),
            ));
        }
        let files = batch.column(n - 2);
        let Some(files) = files.as_run_opt::<Int32Type>() else {
            return Err(Error::Invalid(format!(
                "the {COPIED_FILE} column is {}, not run-end encoded",
                files.data_type()
            )));
        };
        let positions = batch.column(n - 1).as_primitive_opt::<Int64Type>().ok_or_else(|| {
            Error::Invalid(format!(
                "the {COPIED_POS} column is {}, not long",
                batch.column(n - 1).data_type()
            ))
        })?;
        let names = files.values().as_string::<i32>();
        let first = files.run_ends().get_start_physical_index();
        let mut parts: Vec<ArrayRef> = Vec::new();
        let mut start = 0;
        for (i, end) in files.run_ends().sliced_values().enumerate() {
            let end = end as usize;
            if end <= start {
                continue;
            }
            // A source beyond the codes' range is not recorded: its rows
            // are compared instead.
            let number = match names.is_valid(first + i) {
                true => Some(self.number(names.value(first + i))?),
                false => None,
            }
            .filter(|n| *n < 1 << (63 - POS_BITS));
            // So is a run with a position beyond them (none in practice).
            let run = positions.slice(start, end - start);
            let in_range = min(&run).is_none_or(|p| p >= 0) && max(&run).is_none_or(|p| p < 1 << POS_BITS);
            parts.push(match number.filter(|_| in_range) {
                Some(number) => Arc::new(run.unary::<_, Int64Type>(|p| number << POS_BITS | p)),
                None => new_null_array(&DataType::Int64, run.len()),
            });
            start = end;
        }
        let codes = match parts.len() {
            1 => parts.swap_remove(0),
            _ => concat(&parts.iter().map(|a| a.as_ref()).collect::<Vec<_>>())?,
        };
        let mut columns: Vec<ArrayRef> = batch.columns()[..n - 2].to_vec();
        columns.push(codes);
        let mut fields: Vec<FieldRef> = batch.schema().fields()[..n - 2].to_vec();
        fields.push(written_field());
        let schema = datafusion::arrow::datatypes::Schema::new(fields);
        Ok(RecordBatch::try_new(Arc::new(schema), columns)?)
    }

    fn number(&mut self, path: &str) -> Result<i64> {
        if let Some(n) = self.numbers.get(path) {
            return Ok(*n);
        }
        let mut paths = self.paths.write().map_err(|_| lost())?;
        let n = paths.len() as i64;
        paths.push(path.to_string());
        self.numbers.insert(path.to_string(), n);
        Ok(n)
    }

    /// The paths by number (more are added as rows come).
    pub fn paths(&self) -> SourcePaths {
        Arc::clone(&self.paths)
    }
}

fn lost() -> Error {
    Error::Invalid("the source files of a rewrite were lost (a writer panicked)".into())
}

/// Read `paths`.
pub fn read_paths(paths: &SourcePaths) -> Result<std::sync::RwLockReadGuard<'_, Vec<String>>> {
    paths.read().map_err(|_| lost())
}

/// One new file's copies, gathered as its rows are written.
#[derive(Debug, Default)]
pub struct FileCopies {
    /// Positions of this file that hold copies, in order.
    rows: Vec<u64>,
    /// By source number, the positions copied from it.
    from: HashMap<i64, Vec<u64>>,
}

impl FileCopies {
    /// Add the rows written at `at..` in this file, with their [`COPIED`] codes.
    pub fn add(&mut self, at: u64, codes: &Int64Array) {
        for (i, code) in codes.iter().enumerate() {
            if let Some(code) = code {
                self.rows.push(at + i as u64);
                let pos = (code & ((1 << POS_BITS) - 1)) as u64;
                self.from.entry(code >> POS_BITS).or_default().push(pos);
            }
        }
    }

    /// The footer entry, with the sources' paths by number; none without copies.
    pub fn footer(self, paths: &[String]) -> Result<Option<KeyValue>> {
        if self.rows.is_empty() {
            return Ok(None);
        }
        let mut from = Vec::with_capacity(self.from.len());
        let mut sources: Vec<(i64, Vec<u64>)> = self.from.into_iter().collect();
        sources.sort_by_key(|(n, _)| *n);
        for (number, mut positions) in sources {
            let Some(path) = paths.get(number as usize) else {
                return Err(Error::Invalid(format!(
                    "a rewrite's row names unknown source number {number}"
                )));
            };
            positions.sort_unstable();
            from.push(serde_json::json!([path, runs(&positions)]));
        }
        let value = serde_json::json!({ "rows": runs(&self.rows), "from": from });
        Ok(Some(KeyValue::new(FOOTER_KEY.to_string(), value.to_string())))
    }
}

/// Sorted positions as (gap, length) runs.
fn runs(sorted: &[u64]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut end = 0u64;
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut j = i + 1;
        while j < sorted.len() && sorted[j] == sorted[j - 1] + 1 {
            j += 1;
        }
        out.push(start - end);
        out.push((j - i) as u64);
        end = start + (j - i) as u64;
        i = j;
    }
    out
}

/// The positions of (gap, length) runs; `None` unless well formed.
fn positions(runs: &[u64]) -> Option<Vec<u64>> {
    if runs.len() % 2 != 0 {
        return None;
    }
    let mut out = Vec::new();
    let mut end = 0u64;
    for pair in runs.chunks(2) {
        let start = end.checked_add(pair[0])?;
        end = start.checked_add(pair[1])?;
        if pair[1] == 0 || pair[1] > 1 << POS_BITS {
            return None;
        }
        out.extend(start..end);
    }
    Some(out)
}

/// A file's copies as its footer records them.
#[derive(Debug, PartialEq)]
pub struct Recorded {
    pub rows: Vec<u64>,
    pub from: Vec<(String, Vec<u64>)>,
}

/// Read a footer entry; `None` when it is not one we wrote.
pub fn parse(value: &str) -> Option<Recorded> {
    #[derive(serde::Deserialize)]
    struct Entry {
        rows: Vec<u64>,
        from: Vec<(String, Vec<u64>)>,
    }
    let entry: Entry = serde_json::from_str(value).ok()?;
    let rows = positions(&entry.rows)?;
    let from = entry
        .from
        .into_iter()
        .map(|(path, runs)| Some((path, positions(&runs)?)))
        .collect::<Option<Vec<_>>>()?;
    Some(Recorded { rows, from })
}

/// The copies the footers of `added` (the files a snapshot added) record
/// from `removed` (the files it removed), when they agree with the
/// snapshot (see the module docs); `None` when they do not.
pub async fn recorded(
    location: &TableLocation,
    added: &[PlannedFile],
    removed: &[PlannedFile],
) -> Result<Option<CarriedOver>> {
    use futures::{FutureExt, StreamExt, TryStreamExt};
    if added.is_empty() || removed.is_empty() {
        return Ok(None);
    }
    let reads: Vec<_> = added.iter().map(|f| footer_entry(location, f).boxed()).collect();
    let entries: Vec<Option<String>> = futures::stream::iter(reads).buffered(8).try_collect().await?;
    let sources: HashMap<&str, &PlannedFile> = removed.iter().map(|f| (f.path.as_ref(), f)).collect();
    let mut hidden = CarriedOver::default();
    let mut copied = 0u64;
    for (file, entry) in added.iter().zip(entries) {
        let Some(entry) = entry else { continue };
        let Some(recorded) = parse(&entry) else {
            return Ok(None);
        };
        let from_count: usize = recorded.from.iter().map(|(_, p)| p.len()).sum();
        if from_count != recorded.rows.len() || !live(file, &recorded.rows) {
            return Ok(None);
        }
        for (path, positions) in recorded.from {
            let Some(source) = sources.get(path.as_str()) else {
                return Ok(None);
            };
            hidden.before.entry(source.path.clone()).or_default().extend(positions);
        }
        copied += recorded.rows.len() as u64;
        hidden.after.insert(file.path.clone(), recorded.rows);
    }
    for (path, positions) in hidden.before.iter_mut() {
        positions.sort_unstable();
        let n = positions.len();
        positions.dedup();
        if positions.len() != n || !live(sources[path.as_ref()], positions) {
            return Ok(None);
        }
    }
    if copied == 0 {
        return Ok(None);
    }
    hidden.rows = copied;
    Ok(Some(hidden))
}

/// Whether the sorted `positions` are rows `file` holds and does not delete.
fn live(file: &PlannedFile, positions: &[u64]) -> bool {
    if positions.last().is_some_and(|p| *p >= file.record_count) {
        return false;
    }
    let Some(deleted) = file.deletes.as_deref() else {
        return true;
    };
    positions.iter().all(|p| deleted.binary_search(p).is_err())
}

/// The value of `file`'s footer entry, if it has one.
async fn footer_entry(location: &TableLocation, file: &PlannedFile) -> Result<Option<String>> {
    let metadata = file.parquet_reader(&location.store)?.get_metadata(None).await?;
    Ok(metadata
        .file_metadata()
        .key_value_metadata()
        .and_then(|kvs| kvs.iter().find(|kv| kv.key == FOOTER_KEY))
        .and_then(|kv| kv.value.clone()))
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Int32Array, RunArray, StringArray};
    use datafusion::arrow::datatypes::Schema;
    use object_store::path::Path;

    use super::*;

    fn planned(path: &str, record_count: u64, deletes: Option<Vec<u64>>) -> PlannedFile {
        PlannedFile {
            path: Path::from(path),
            size: 0,
            record_count,
            spec_id: 0,
            partition: Vec::new(),
            manifest: 0,
            deletes: deletes.map(Arc::from),
        }
    }

    #[test]
    fn runs_round_trip_and_bad_runs_are_refused() {
        let p = vec![0, 1, 2, 5, 6, 9];
        assert_eq!(runs(&p), vec![0, 3, 2, 2, 2, 1]);
        assert_eq!(positions(&runs(&p)).unwrap(), p);
        assert!(runs(&[]).is_empty());
        assert_eq!(positions(&[1, 0]), None, "an empty run");
        assert_eq!(positions(&[1]), None, "half a pair");
    }

    #[test]
    fn folded_rows_give_each_new_file_its_entry() {
        let ends = Int32Array::from(vec![2, 5]);
        let names = StringArray::from(vec!["data/a.parquet", "data/b.parquet"]);
        let files: ArrayRef = Arc::new(RunArray::<Int32Type>::try_new(&ends, &names).unwrap());
        let pos: ArrayRef = Arc::new(Int64Array::from(vec![Some(7), None, Some(3), Some(4), Some(9)]));
        let v: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5]));
        let schema = Schema::new(vec![
            Field::new("v", DataType::Int64, false),
            Field::new(COPIED_FILE, files.data_type().clone(), false),
            Field::new(COPIED_POS, DataType::Int64, true),
        ]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![v, files, pos]).unwrap();
        let mut sources = Sources::default();
        // A slice starting inside the first run.
        let folded = sources.fold(&batch.slice(1, 4)).unwrap();
        assert_eq!(folded.num_columns(), 2);
        assert_eq!(folded.schema().field(1).name(), COPIED);
        let mut copies = FileCopies::default();
        copies.add(10, folded.column(1).as_primitive());
        let entry = copies.footer(&read_paths(&sources.paths()).unwrap()).unwrap().unwrap();
        assert_eq!(entry.key, FOOTER_KEY);
        let recorded = parse(entry.value.as_deref().unwrap()).unwrap();
        assert_eq!(
            recorded,
            Recorded {
                rows: vec![11, 12, 13],
                from: vec![("data/b.parquet".into(), vec![3, 4, 9])],
            }
        );
        assert!(
            FileCopies::default().footer(&[]).unwrap().is_none(),
            "no copies, no entry"
        );
    }

    #[test]
    fn a_run_with_a_position_beyond_the_codes_is_not_recorded() {
        let ends = Int32Array::from(vec![2, 3]);
        let names = StringArray::from(vec!["a", "b"]);
        let files: ArrayRef = Arc::new(RunArray::<Int32Type>::try_new(&ends, &names).unwrap());
        let pos: ArrayRef = Arc::new(Int64Array::from(vec![1, 1 << POS_BITS, 5]));
        let schema = Schema::new(vec![
            Field::new(COPIED_FILE, files.data_type().clone(), false),
            Field::new(COPIED_POS, DataType::Int64, true),
        ]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![files, pos]).unwrap();
        let folded = Sources::default().fold(&batch).unwrap();
        let codes = folded.column(0).as_primitive::<Int64Type>();
        // File "a" (number 0) is compared instead; "b" is number 1.
        assert_eq!(
            codes.iter().collect::<Vec<_>>(),
            vec![None, None, Some(1 << POS_BITS | 5)]
        );
    }

    #[test]
    fn copies_are_live_rows_of_their_files() {
        let f = planned("a", 10, Some(vec![3]));
        assert!(live(&f, &[0, 2, 9]));
        assert!(!live(&f, &[2, 3]), "a deleted row");
        assert!(!live(&f, &[10]), "beyond the file");
    }
}
