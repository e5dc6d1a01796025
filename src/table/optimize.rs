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
//!
//! `optimize(strategy => 'sort' [, sort_order => 'a DESC, b' | 'zorder(a, b)'])`
//! clusters instead: every file the condition selects is rewritten, its rows
//! sorted by partition and then by the order (the table's default sort
//! order unless `sort_order` names one) or by Z-order over the named
//! columns (see `table::clustering`); the sorted rows are cut into files of
//! `write.target-file-size-bytes`, so the files of a partition hold key
//! ranges that do not overlap and a point query on `a` plans few of them.
//! The sort spills to disk under the session's memory limit.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::compute::SortOptions;
use datafusion::common::{Column, ScalarValue};
use datafusion::datasource::provider_as_source;
use datafusion::execution::SessionState;
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, ScalarUDF};

use crate::error::{Error, Result};
use crate::invalid;
use crate::plan::lineage;
use crate::store::Versioned;
use crate::table::Table;
use crate::table::change::{Change, ConflictScope, Operation};
use crate::table::clustering::{ClusterKey, Clustering, ZColumn};
use crate::table::retry::{Attempt, Chosen, WriteStatement};
use crate::table::rewrite::{as_is, rewrite, rewrite_with_layout};
use crate::table::sort_order::{OrderKey, RowOrder, SortFieldDef, with_sort_order};
use crate::table::source::{OpenSource, SnapshotSource};
use crate::table::writer::FileLayout;
use crate::table::writer::delete_files;
use crate::transform::Transform;

/// Files below this size are compacted by default.
pub const DEFAULT_THRESHOLD: u64 = 128 * 1024 * 1024;

/// The largest `file_size_threshold` accepted: 1 PiB.
pub const MAX_THRESHOLD: u64 = 1 << 50;

/// How optimize lays out the rows it rewrites.
#[derive(Debug, Clone, PartialEq)]
pub enum Strategy {
    /// Compact small files (`binpack`, the default).
    BinPack,
    /// Sort by an order: `None` for the table's default sort order.
    Sort(Option<Vec<SortFieldDef>>),
    /// Z-order over these columns.
    ZOrder(Vec<String>),
}

/// `ALTER TABLE t EXECUTE optimize`.
#[derive(Debug)]
pub struct Optimize {
    pub table: Table,
    /// Reads a snapshot of the table (see `table::source`).
    pub open: OpenSource,
    pub state: SessionState,
    pub threshold: u64,
    pub filters: Vec<Expr>,
    pub strategy: Strategy,
}

#[async_trait]
impl WriteStatement for Optimize {
    fn table(&self) -> &Table {
        &self.table
    }

    async fn choose(&self, provider: &dyn SnapshotSource) -> Result<Chosen> {
        let md = provider.metadata();
        let plan = provider.plan_files(&self.state, &self.filters).await?;
        if self.strategy != Strategy::BinPack {
            // Clustering rewrites every selected file.
            return Ok(Chosen {
                counts: plan.counts,
                read: plan.files,
                ..Default::default()
            });
        }
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
        let rewritten = match &self.strategy {
            Strategy::BinPack => rewrite(&self.state, &*provider.with_lineage(), files, Ok, as_is()).await?,
            clustered => {
                let (key, sort_order_id) = self.cluster_key(&*provider, &files, clustered).await?;
                let key = Arc::new(key);
                let mut layout = FileLayout::of(md)?;
                // The rows arrive in the layout's order: the writer keeps it.
                layout.order = None;
                layout.sort_order_id = sort_order_id;
                if let Strategy::ZOrder(_) = clustered {
                    layout.curve = Some(Arc::clone(&key));
                }
                let names: Vec<Expr> = md
                    .current_spec()?
                    .schema
                    .fields
                    .iter()
                    .map(|f| Expr::Column(Column::new_unqualified(&f.name)))
                    .collect();
                let shape = move |b: LogicalPlanBuilder| {
                    let udf = Arc::new(ScalarUDF::new_from_shared_impl(Arc::clone(&key) as _));
                    // Rows keep their lineage (format version 3).
                    let mut kept = names.clone();
                    kept.extend(lineage::carried(b.schema(), None));
                    let mut with_key = kept.clone();
                    with_key.push(udf.call(names.clone()).alias(KEY));
                    b.project(with_key)?
                        .sort(vec![Expr::Column(Column::new_unqualified(KEY)).sort(true, true)])?
                        .project(kept)
                };
                rewrite_with_layout(&self.state, &*provider.with_lineage(), files, shape, as_is(), layout).await?
            }
        };
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

/// The key column a clustering rewrite sorts by.
const KEY: &str = "__hp_cluster_key";

impl Optimize {
    /// The cluster key of `strategy` over the current spec's columns, and
    /// the sort order id the rewritten files are in (a table order's).
    async fn cluster_key(
        &self,
        provider: &dyn SnapshotSource,
        files: &HashSet<object_store::path::Path>,
        strategy: &Strategy,
    ) -> Result<(ClusterKey, Option<i32>)> {
        let md = provider.metadata();
        let spec = md.current_spec()?;
        let schema = &spec.schema;
        let partition_keys: Vec<OrderKey> = spec
            .partition_spec
            .bind(schema)?
            .iter()
            .filter(|b| b.field.transform != Transform::Void)
            .map(|b| OrderKey {
                column: b.source_index,
                transform: b.field.transform,
                options: SortOptions::default(),
            })
            .collect();
        let partition = match partition_keys.is_empty() {
            true => None,
            false => Some(RowOrder::new(schema, partition_keys)?),
        };
        match strategy {
            Strategy::BinPack => invalid!("binpack has no cluster key"),
            Strategy::Sort(defs) => {
                let ordered = match defs {
                    Some(defs) => with_sort_order(md, defs)?,
                    None => md.clone(),
                };
                let Some(order) = ordered.sort_order() else {
                    return invalid!(
                        "optimize of table {} with strategy 'sort' needs a sort order: the table has none; set one with ALTER TABLE {} WRITE ORDERED BY (…) or pass sort_order => 'col [ASC|DESC], …'",
                        self.table.name,
                        self.table.name
                    );
                };
                // Recorded on the files only when the table knows the order.
                let id = md
                    .sort_orders
                    .iter()
                    .find(|o| o.fields == order.fields)
                    .map(|o| o.order_id);
                let Some(rows) = RowOrder::of(order, schema)? else {
                    return invalid!("optimize: the sort order is empty");
                };
                Ok((ClusterKey::new(partition, Clustering::Sort(rows)), id))
            }
            Strategy::ZOrder(names) => {
                if names.is_empty() {
                    return invalid!("zorder(…) needs at least one column");
                }
                let mut columns = Vec::new();
                for name in names {
                    let Some(field) = schema.field_by_name(name) else {
                        return invalid!("zorder: {name:?} is not a column of table {}", self.table.name);
                    };
                    if !matches!(field.field_type, crate::spec::Type::Primitive(_)) {
                        return invalid!("zorder: column {name:?} is not of a primitive type");
                    }
                    let Some(column) = schema.index_of_id(field.id) else {
                        return invalid!("zorder: column {name:?} is not in the schema");
                    };
                    columns.push((column, field.name.clone()));
                }
                let ranges = value_ranges(&self.state, provider, files, &columns).await?;
                let z = columns
                    .into_iter()
                    .zip(ranges)
                    .map(|((column, _), (min, max))| ZColumn { column, min, max })
                    .collect();
                Ok((ClusterKey::new(partition, Clustering::ZOrder(z)), None))
            }
        }
    }
}

/// The smallest and largest value of each column among the rows of `files`.
async fn value_ranges(
    state: &SessionState,
    provider: &dyn SnapshotSource,
    files: &HashSet<object_store::path::Path>,
    columns: &[(usize, String)],
) -> Result<Vec<(Option<ScalarValue>, Option<ScalarValue>)>> {
    use datafusion::functions_aggregate::expr_fn::{max, min};
    let restricted = provider.restricted_to(files.clone());
    let mut aggregates = Vec::new();
    for (_, name) in columns {
        let c = Expr::Column(Column::new_unqualified(name));
        aggregates.push(min(c.clone()));
        aggregates.push(max(c));
    }
    let plan = LogicalPlanBuilder::scan(provider.table().name.clone(), provider_as_source(restricted), None)?
        .aggregate(Vec::<Expr>::new(), aggregates)?
        .build()?;
    let physical = state.create_physical_plan(&plan).await?;
    let batches = datafusion::physical_plan::collect(physical, state.task_ctx()).await?;
    let Some(batch) = batches.iter().find(|b| b.num_rows() > 0) else {
        return Ok(vec![(None, None); columns.len()]);
    };
    let value = |i: usize| -> Result<Option<ScalarValue>> {
        let v = ScalarValue::try_from_array(batch.column(i), 0)?;
        Ok((!v.is_null()).then_some(v))
    };
    (0..columns.len())
        .map(|i| Ok((value(2 * i)?, value(2 * i + 1)?)))
        .collect()
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
