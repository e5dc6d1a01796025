//! Iceberg v3 row lineage: each row's id and the sequence number of the
//! commit that last changed it.
//!
//! A row's id is stored in its data file (`_row_id`, field id 2147483540)
//! when a rewrite copied the row there, and otherwise inherited: the file's
//! `first_row_id` (assigned by the manifest list) plus the row's position.
//! Its `_last_updated_sequence_number` (field id 2147483539) is likewise the
//! stored value, else the file's data sequence number.
//!
//! | file (first_row_id, data seq) | stored `_row_id`, `_last_updated…` | pos | row id | last updated |
//! |-------------------------------|------------------------------------|-----|--------|--------------|
//! | a.parquet (100, 3)            | NULL, NULL (an INSERT)             | 7   | 107    | 3            |
//! | b.parquet (500, 5)            | 107, 3 (copied by a rewrite)       | 0   | 107    | 3            |
//! | b.parquet (500, 5)            | 108, NULL (changed by an UPDATE)   | 1   | 108    | 5            |
//!
//! A lineage scan (`HiddenPartitionsTable::with_lineage` in `provider/`)
//! reads the raw parts after the table's columns: the two stored columns
//! (NULL in files without them), two constants per file and the row
//! position. [`columns`] combines them into [`ROW_ID`] and [`ROW_SEQ`].
//! A row whose id is unknown (a file from before the table was version 3)
//! gets no sequence number either, so a rewrite writes it as a new row.
//!
//! Rewrites of a version 3 table write the two columns ([`written_fields`]),
//! so rows they copy keep their lineage and rows they change get a NULL
//! sequence number (the rewrite's own).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Int64Type};
use datafusion::functions::core::expr_fn::coalesce;
use datafusion::logical_expr::{Expr, col, lit, when};
use object_store::path::Path;

use crate::error::Result;
use crate::manifest::format::{FIRST_ROW_ID as MANIFEST_FIRST_ROW_ID, PATH, RECORD_COUNT, with_row_ids};
use crate::manifest::{Origin, read_manifest};
use crate::plan::PlannedFile;
use crate::plan::positions::POS;
use crate::spec::types::PARQUET_FIELD_ID;
use crate::spec::{Snapshot, TableMetadata};
use crate::store::TableLocation;

/// Iceberg's reserved field id of `_row_id`.
pub const ROW_ID_FIELD_ID: i32 = 2147483540;
/// Iceberg's reserved field id of `_last_updated_sequence_number`.
pub const ROW_SEQ_FIELD_ID: i32 = 2147483539;

/// A row's id (computed by [`columns`]).
pub const ROW_ID: &str = "__hp_row_id";
/// The sequence number that last changed the row (computed by [`columns`]).
pub const ROW_SEQ: &str = "__hp_row_seq";
/// The stored `_row_id` (NULL where the file has none).
pub const STORED_ROW_ID: &str = "__hp_stored_row_id";
/// The stored `_last_updated_sequence_number`.
pub const STORED_ROW_SEQ: &str = "__hp_stored_row_seq";
/// The file's first row id (a constant per file; NULL when unassigned).
pub const FIRST_ROW_ID: &str = "__hp_first_row_id";
/// The file's data sequence number (a constant per file).
pub const DATA_SEQ: &str = "__hp_data_seq";

/// Whether `md`'s rows have lineage (the table is format version 3).
pub fn tracked(md: &TableMetadata) -> bool {
    md.next_row_id.is_some()
}

/// The stored columns as a lineage scan reads them, with their field ids.
pub fn stored_fields() -> Vec<FieldRef> {
    vec![
        long_with_id(STORED_ROW_ID, ROW_ID_FIELD_ID),
        long_with_id(STORED_ROW_SEQ, ROW_SEQ_FIELD_ID),
    ]
}

/// The per-file constants (partition columns of the Parquet scan).
pub fn constant_fields() -> Vec<FieldRef> {
    vec![
        Arc::new(Field::new(FIRST_ROW_ID, DataType::Int64, true)),
        Arc::new(Field::new(DATA_SEQ, DataType::Int64, true)),
    ]
}

/// The two columns as a rewrite writes them into a data file.
pub fn written_fields() -> Vec<FieldRef> {
    vec![
        long_with_id("_row_id", ROW_ID_FIELD_ID),
        long_with_id("_last_updated_sequence_number", ROW_SEQ_FIELD_ID),
    ]
}

fn null_long() -> Expr {
    lit(datafusion::common::ScalarValue::Int64(None))
}

fn long_with_id(name: &str, id: i32) -> FieldRef {
    Arc::new(
        Field::new(name, DataType::Int64, true)
            .with_metadata(HashMap::from([(PARQUET_FIELD_ID.to_string(), id.to_string())])),
    )
}

/// [`ROW_ID`] and [`ROW_SEQ`] from a lineage scan's raw columns.
pub fn columns() -> Vec<Expr> {
    let row_id = coalesce(vec![col(STORED_ROW_ID), col(FIRST_ROW_ID) + col(POS)]);
    let seq = when(row_id.clone().is_null(), null_long())
        .otherwise(coalesce(vec![col(STORED_ROW_SEQ), col(DATA_SEQ)]))
        .expect("a CASE with one branch");
    vec![row_id.alias(ROW_ID), seq.alias(ROW_SEQ)]
}

/// The lineage columns of a plan's rows as a rewrite writes them: the id
/// as it is, the sequence number NULL where `modified` is true (the
/// rewrite's commit changed the row). Nothing when `input` (the columns
/// the plan has) has no lineage.
pub fn carried(input: &datafusion::common::DFSchema, modified: Option<&Expr>) -> Vec<Expr> {
    if input.index_of_column_by_name(None, ROW_ID).is_none() {
        return Vec::new();
    }
    let seq = match modified {
        Some(m) => when(m.clone().is_true(), null_long())
            .otherwise(col(ROW_SEQ))
            .expect("a CASE with one branch"),
        None => col(ROW_SEQ),
    };
    vec![col(ROW_ID), seq.alias(ROW_SEQ)]
}

/// Each file's first row id (inherited as the manifest list assigned it)
/// and data sequence number, for the files of `snapshot` in `files`.
pub async fn file_constants(
    location: &TableLocation,
    md: &TableMetadata,
    snapshot: &Snapshot,
    files: &[PlannedFile],
) -> Result<HashMap<Path, (Option<i64>, i64)>> {
    let manifests = snapshot.manifests()?;
    let mut wanted: HashMap<usize, Vec<&PlannedFile>> = HashMap::new();
    for f in files {
        wanted.entry(f.manifest).or_default().push(f);
    }
    let mut out = HashMap::with_capacity(files.len());
    let columns = [
        PATH.to_string(),
        RECORD_COUNT.to_string(),
        MANIFEST_FIRST_ROW_ID.to_string(),
    ];
    for (index, planned) in wanted {
        let Some(manifest) = manifests.get(index) else {
            return crate::format_err!("manifest #{index} is not in snapshot {}", snapshot.snapshot_id);
        };
        let Origin::Kept { sequence_number, .. } = Origin::of(manifest, md) else {
            return crate::format_err!("manifest {} has no data sequence number", manifest.path);
        };
        let first = manifest.iceberg.as_ref().and_then(|t| t.first_row_id);
        let ids: HashMap<String, Option<i64>> = match first {
            // Nothing assigned: every file's rows are without ids.
            None => HashMap::new(),
            Some(first) => {
                let spec = md.spec(manifest.spec_id)?;
                let batch = read_manifest(location, manifest, spec, Some(&columns)).await?;
                let batch = with_row_ids(&batch, Some(first))?;
                let (Some(paths), Some(ids)) = (
                    batch.column_by_name(PATH).map(|c| c.as_string::<i32>().clone()),
                    batch
                        .column_by_name(MANIFEST_FIRST_ROW_ID)
                        .map(|c| c.as_primitive::<Int64Type>().clone()),
                ) else {
                    return crate::format_err!("manifest {} lacks path or row id columns", manifest.path);
                };
                let mut map = HashMap::with_capacity(paths.len());
                for (path, id) in paths.iter().zip(ids.iter()) {
                    if let Some(path) = path {
                        map.insert(location.resolve(path)?.to_string(), id);
                    }
                }
                map
            }
        };
        for f in planned {
            let id = ids.get(f.path.as_ref()).copied().flatten();
            out.insert(f.path.clone(), (id, sequence_number));
        }
    }
    Ok(out)
}

/// The rows a snapshot did not change, found without comparing them: on
/// each side of the snapshot, by data file, their positions (sorted). A
/// changelog read leaves them out.
#[derive(Debug, Default)]
pub struct CarriedOver {
    /// Positions in the files as of the parent snapshot.
    pub before: HashMap<Path, Vec<u64>>,
    /// Positions in the files as of the snapshot.
    pub after: HashMap<Path, Vec<u64>>,
    /// How many rows on each side.
    pub rows: u64,
}

/// The rows of `after` (files of `snapshot`, their deletes planned) that
/// are rows of `before` (files of `parent`) unchanged:
///
/// - a file on both sides (its deletes changed) holds the same rows at the
///   same positions: the rows live on both sides;
/// - with `lineage` (a format version 3 table), rows of the snapshot's new
///   files whose last update is older than the snapshot (a rewrite copied
///   them), and the rows of the files it removed with the same ids;
/// - without, the copies the new files' footers record (`plan::copies`).
///
/// | side   | file | row (id, last updated) | snapshot 7's rewrite |
/// |--------|------|------------------------|----------------------|
/// | before | old  | (12, 3)                | copied: left out     |
/// | before | old  | (13, 3)                | changed or deleted   |
/// | after  | new  | (12, 3)                | copied: left out     |
/// | after  | new  | (13, 7)                | changed              |
///
/// A row without an id (a file from before format version 3) is never
/// matched by id. Each snapshot lists the manifests its files were planned
/// from (`PlannedFile::manifest` indexes them); `md` has the snapshots that
/// added those manifests.
pub async fn carried_over(
    location: &TableLocation,
    md: &TableMetadata,
    (snapshot, after): (&Snapshot, &[PlannedFile]),
    (parent, before): (&Snapshot, &[PlannedFile]),
    lineage: bool,
) -> Result<CarriedOver> {
    let mut carried = CarriedOver::default();
    let then: HashMap<&Path, &PlannedFile> = before.iter().map(|f| (&f.path, f)).collect();
    let now: HashMap<&Path, &PlannedFile> = after.iter().map(|f| (&f.path, f)).collect();
    for f in after {
        if let Some(old) = then.get(&f.path) {
            let gone = [f.deletes.as_deref(), old.deletes.as_deref()];
            let live: Vec<u64> = live_positions(f.record_count, &gone).collect();
            carried.rows += live.len() as u64;
            carried.before.insert(f.path.clone(), live.clone());
            carried.after.insert(f.path.clone(), live);
        }
    }
    let added: Vec<PlannedFile> = after.iter().filter(|f| !then.contains_key(&f.path)).cloned().collect();
    let removed: Vec<PlannedFile> = before.iter().filter(|f| !now.contains_key(&f.path)).cloned().collect();
    if !lineage {
        // The copies our rewrites record in their files' footers.
        if let Some(copied) = crate::plan::copies::recorded(location, &added, &removed).await? {
            carried.rows += copied.rows;
            carried.after.extend(copied.after);
            carried.before.extend(copied.before);
        }
        return Ok(carried);
    }
    let mut ids: Vec<i64> = Vec::new();
    let constants = file_constants(location, md, snapshot, &added).await?;
    let below = Some(snapshot.sequence_number);
    for_each_file(location, &added, &constants, below, |file, rows| {
        let mut positions = Vec::new();
        for (pos, id, seq) in rows {
            if let (Some(id), Some(seq)) = (id, seq)
                && seq < snapshot.sequence_number
            {
                positions.push(pos);
                ids.push(id);
            }
        }
        if !positions.is_empty() {
            carried.after.insert(file.clone(), positions);
        }
    })
    .await?;
    carried.rows += ids.len() as u64;
    if ids.is_empty() {
        // Nothing copied: no removed row to find (not even a footer read).
        return Ok(carried);
    }
    let copied = IdSet::new(ids);
    let constants = file_constants(location, md, parent, &removed).await?;
    for_each_file(location, &removed, &constants, None, |file, rows| {
        let positions: Vec<u64> = rows
            .filter(|(_, id, _)| id.is_some_and(|id| copied.contains(id)))
            .map(|(pos, _, _)| pos)
            .collect();
        if !positions.is_empty() {
            carried.before.insert(file.clone(), positions);
        }
    })
    .await?;
    Ok(carried)
}

/// The positions below `count` that none of the sorted `deleted` lists hold.
fn live_positions<'a>(count: u64, deleted: &'a [Option<&'a [u64]>]) -> impl Iterator<Item = u64> + 'a {
    let mut cursors: Vec<std::iter::Peekable<std::slice::Iter<'a, u64>>> =
        deleted.iter().flatten().map(|d| d.iter().peekable()).collect();
    (0..count).filter(move |pos| {
        let mut gone = false;
        for c in cursors.iter_mut() {
            while c.next_if(|d| **d < *pos).is_some() {}
            gone |= c.peek().is_some_and(|d| **d == *pos);
        }
        !gone
    })
}

/// (position, row id, last updated) of one row.
type RowLineage = (u64, Option<i64>, Option<i64>);

/// Calls `f` with each of `files` and its live rows' lineage, in order.
/// With `below`, `f` wants only rows last updated before it: a file whose
/// rows all inherit a later sequence number (its footer's statistics say
/// it stores none) is skipped unread.
async fn for_each_file(
    location: &TableLocation,
    files: &[PlannedFile],
    constants: &HashMap<Path, (Option<i64>, i64)>,
    below: Option<i64>,
    mut f: impl FnMut(&Path, &mut dyn Iterator<Item = RowLineage>),
) -> Result<()> {
    use futures::{FutureExt, StreamExt, TryStreamExt};
    let constant = |file: &PlannedFile| constants.get(&file.path).copied().unwrap_or((None, 0));
    let reads: Vec<_> = files
        .iter()
        .map(|f| {
            let inherited_unwanted = below.is_some_and(|below| constant(f).1 >= below);
            stored_lineage(location, f, inherited_unwanted).boxed()
        })
        .collect();
    let mut stored = futures::stream::iter(reads).buffered(8);
    for file in files {
        let Some(read) = stored.try_next().await? else {
            return crate::format_err!("the lineage of data file {} was not read", file.path);
        };
        let Some((ids, seqs)) = read else {
            continue;
        };
        let (first, data_seq) = constant(file);
        let deleted = [file.deletes.as_deref()];
        let live = live_positions(file.record_count, &deleted);
        match (&ids, &seqs) {
            // Nothing stored: every id inherited.
            (None, None) => f(
                &file.path,
                &mut live.map(|pos| {
                    let id = first.map(|first| first + pos as i64);
                    (pos, id, id.map(|_| data_seq))
                }),
            ),
            _ => f(
                &file.path,
                &mut live.map(|pos| {
                    let at = pos as usize;
                    let stored_id = ids.as_ref().and_then(|a| a.is_valid(at).then(|| a.value(at)));
                    let id = stored_id.or(first.map(|first| first + pos as i64));
                    let seq = id.map(|_| {
                        seqs.as_ref()
                            .and_then(|a| a.is_valid(at).then(|| a.value(at)))
                            .unwrap_or(data_seq)
                    });
                    (pos, id, seq)
                }),
            ),
        }
    }
    Ok(())
}

/// A data file's stored `_row_id` and `_last_updated_sequence_number`
/// columns (`None` where it has none), read alone. With
/// `inherited_unwanted`, `None` (nothing read past the footer) when no row
/// stores a sequence number: every row's is the file's.
async fn stored_lineage(
    location: &TableLocation,
    file: &PlannedFile,
    inherited_unwanted: bool,
) -> Result<
    Option<(
        Option<datafusion::arrow::array::Int64Array>,
        Option<datafusion::arrow::array::Int64Array>,
    )>,
> {
    use futures::TryStreamExt;
    use parquet::arrow::ProjectionMask;
    use parquet::arrow::async_reader::ParquetRecordBatchStreamBuilder;
    let builder = ParquetRecordBatchStreamBuilder::new(file.parquet_reader(&location.store)?).await?;
    let id_of = |f: &Field| f.metadata().get(PARQUET_FIELD_ID).and_then(|v| v.parse::<i32>().ok());
    let wanted: Vec<usize> = builder
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| matches!(id_of(f), Some(ROW_ID_FIELD_ID | ROW_SEQ_FIELD_ID)))
        .map(|(i, _)| i)
        .collect();
    if inherited_unwanted && no_stored_sequence(&builder) {
        return Ok(None);
    }
    if wanted.is_empty() {
        return Ok(Some((None, None)));
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), wanted);
    let batches: Vec<_> = builder
        .with_projection(mask)
        .with_batch_size(64 * 1024)
        .build()?
        .try_collect()
        .await?;
    let Some(first) = batches.first() else {
        return Ok(Some((None, None)));
    };
    let batch = datafusion::arrow::compute::concat_batches(&first.schema(), &batches)?;
    let column = |id: i32| {
        batch
            .schema()
            .fields()
            .iter()
            .position(|f| id_of(f) == Some(id))
            .map(|i| batch.column(i).as_primitive::<Int64Type>().clone())
    };
    Ok(Some((column(ROW_ID_FIELD_ID), column(ROW_SEQ_FIELD_ID))))
}

/// Whether the footer shows that no row of the file stores a last updated
/// sequence number: no such column, or one whose statistics count every
/// value NULL. Missing statistics are no proof.
fn no_stored_sequence<T>(builder: &parquet::arrow::arrow_reader::ArrowReaderBuilder<T>) -> bool {
    let Some((i, _)) = builder.schema().fields().iter().enumerate().find(|(_, f)| {
        f.metadata().get(PARQUET_FIELD_ID).and_then(|v| v.parse::<i32>().ok()) == Some(ROW_SEQ_FIELD_ID)
    }) else {
        return true;
    };
    let Some((leaf, _)) = parquet::arrow::parquet_column(
        builder.parquet_schema(),
        builder.schema(),
        builder.schema().field(i).name(),
    ) else {
        return false;
    };
    builder.metadata().row_groups().iter().all(|rg| {
        rg.column(leaf)
            .statistics()
            .and_then(|s| s.null_count_opt())
            .is_some_and(|nulls| nulls == rg.num_rows() as u64)
    })
}

/// A set of row ids: a bitmap over their range when they are dense (row
/// ids are handed out consecutively), a hash set otherwise.
enum IdSet {
    Dense { low: i64, bits: Vec<u64> },
    Sparse(std::collections::HashSet<i64>),
}

impl IdSet {
    fn new(ids: Vec<i64>) -> Self {
        let (Some(low), Some(high)) = (ids.iter().min().copied(), ids.iter().max().copied()) else {
            return Self::Sparse(Default::default());
        };
        let span = (high as i128 - low as i128 + 1) as u128;
        if span > 256 * ids.len() as u128 {
            return Self::Sparse(ids.into_iter().collect());
        }
        let mut bits = vec![0u64; (span as usize).div_ceil(64)];
        for id in ids {
            let at = (id - low) as usize;
            bits[at / 64] |= 1 << (at % 64);
        }
        Self::Dense { low, bits }
    }

    fn contains(&self, id: i64) -> bool {
        match self {
            Self::Dense { low, bits } => {
                let Some(at) = id.checked_sub(*low).filter(|a| *a >= 0) else {
                    return false;
                };
                let at = at as usize;
                bits.get(at / 64).is_some_and(|w| w & (1 << (at % 64)) != 0)
            }
            Self::Sparse(set) => set.contains(&id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_positions_skip_every_list() {
        let a: &[u64] = &[1, 4];
        let b: &[u64] = &[0, 4, 5];
        let live: Vec<u64> = live_positions(7, &[Some(a), None, Some(b)]).collect();
        assert_eq!(live, vec![2, 3, 6]);
        assert_eq!(live_positions(3, &[]).collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn id_sets_dense_and_sparse_hold_what_they_were_given() {
        let dense = IdSet::new(vec![10, 11, 12, 75, 300]);
        assert!(matches!(dense, IdSet::Dense { .. }));
        for (id, held) in [
            (9, false),
            (10, true),
            (12, true),
            (13, false),
            (75, true),
            (300, true),
            (301, false),
        ] {
            assert_eq!(dense.contains(id), held, "{id}");
        }
        let sparse = IdSet::new(vec![i64::MIN, 0, i64::MAX]);
        assert!(matches!(sparse, IdSet::Sparse(_)));
        assert!(sparse.contains(i64::MIN) && sparse.contains(i64::MAX) && !sparse.contains(1));
        assert!(!IdSet::new(Vec::new()).contains(0));
    }
}
