//! Metadata tables, queried like any table: `SELECT * FROM "events$files"`.
//!
//! | table              | one row per                  | columns                                                            |
//! |--------------------|------------------------------|--------------------------------------------------------------------|
//! | `t$snapshots`      | snapshot                     | snapshot_id, parent_id, sequence_number, committed_at, operation, summary, manifests |
//! | `t$specs`          | partition spec (Iceberg id)  | spec_id, is_current, partition_spec, schema                        |
//! | `t$refs`           | branch (`main`) or tag       | name, type (`BRANCH` / `TAG`), snapshot_id, max_reference_age_in_ms, min_snapshots_to_keep, max_snapshot_age_in_ms (Spark's columns) |
//! | `t$all_manifests`  | manifest of every live snapshot | content, path, length, partition_spec_id, added_snapshot_id, added/existing/deleted data and delete file counts, partition_summaries, reference_snapshot_id (Spark's columns) |
//! | `t$history`        | change of the current snapshot | made_current_at, snapshot_id, parent_id, is_current_ancestor (Spark's columns) |
//! | `t$metadata_log_entries` | earlier metadata file | timestamp, file, latest_snapshot_id, latest_schema_id, latest_sequence_number (Spark's columns; the files an Iceberg reader sees) |
//! | `t$properties`     | table property               | key, value                                                         |
//! | `t$manifests`      | manifest of the current snapshot | path, length, spec_id, added_snapshot_id, file_count, record_count, content (`data` / `deletes`) |
//! | `t$files`          | data file or position delete file | path, spec_id, partition, partition_values, record_count, file_size_in_bytes, null_counts, lower_bounds, upper_bounds, content (`data` / `position_deletes`), referenced_data_file, file_format (`PARQUET` / `PUFFIN`), content_offset, content_size_in_bytes (a deletion vector's blob) |
//! | `t$partitions`     | (spec, partition values)     | spec_id, partition, partition_values, file_count, record_count, total_size_in_bytes (data files only) |
//! | `t$entries`, `t$all_entries` | manifest entry (current / every live snapshot) | status, snapshot_id, sequence_number, file_sequence_number, data_file, readable_metrics (Spark's columns; see `entries`) |
//! | `t$data_files`, `t$delete_files`, `t$all_data_files`, `t$all_delete_files`, `t$all_files` | live file in the Iceberg manifests | content, file_path, file_format, spec_id, partition, record_count, file_size_in_bytes, column_sizes, value_counts, null_value_counts, nan_value_counts, lower_bounds, upper_bounds, key_metadata, split_offsets, equality_ids, sort_order_id, referenced_data_file, content_offset, content_size_in_bytes, readable_metrics (Spark's columns, Iceberg 1.8's data file) |
//! | `t$orphans`        | file of ours nothing references (see `table::orphans`) | path, size, last_modified          |
//!
//! `partition` is the Hive path of the partition (`ts_day=2024-01-01/region=EU`);
//! `partition_values` the values themselves as a JSON object
//! (`{"ts_day":"2024-01-01","region":"EU"}`). The path cannot tell a NULL,
//! an empty string and the string `__HIVE_DEFAULT_PARTITION__` apart (all
//! three are `region=__HIVE_DEFAULT_PARTITION__`); the values can
//! (`null`, `""`, `"__HIVE_DEFAULT_PARTITION__"`), and `t$partitions` groups
//! by them. Bounds and null counts are JSON objects keyed by column name.

mod entries;

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::datasource::MemTable;

use crate::error::Result;
use crate::invalid;
use crate::manifest::format::{
    FILE_SIZE, MAX, MIN, NULL_COUNT, PARTITION, PARTITION_STRINGS, PATH, RECORD_COUNT, REFERENCED_DATA_FILE, STATS,
};
use crate::manifest::read_manifest;
use crate::spec::TableMetadata;
use crate::store::TableLocation;
use crate::values;

/// The metadata table `kind` of a table, as an in-memory table.
pub async fn metadata_table(location: &TableLocation, md: &TableMetadata, kind: &str) -> Result<MemTable> {
    let batch = match kind {
        "snapshots" => {
            let mut md = md.clone();
            location.load_all_manifests(&mut md).await?;
            snapshots(&md)?
        }
        "specs" => specs(md)?,
        "refs" => refs(md)?,
        "history" => history(md)?,
        "all_manifests" => {
            let mut md = md.clone();
            location.load_all_manifests(&mut md).await?;
            all_manifests(&md)?
        }
        "metadata_log_entries" => metadata_log_entries(md)?,
        "properties" => properties(md)?,
        "manifests" => manifests(md)?,
        "files" => files(location, md).await?,
        "partitions" => partitions(location, md).await?,
        "orphans" => orphans(location, md).await?,
        other if let Some(selection) = entries::Selection::of(other) => {
            let mut md = md.clone();
            if selection.all_snapshots {
                location.load_all_manifests(&mut md).await?;
            }
            entries::table(location, &md, selection).await?
        }
        other => {
            return invalid!(
                "unknown metadata table ${other}; expected one of $snapshots, $history, $specs, $refs, $properties, $manifests, $all_manifests, $files, $partitions, $entries, $all_entries, $data_files, $delete_files, $all_data_files, $all_delete_files, $all_files, $metadata_log_entries, $orphans"
            );
        }
    };
    Ok(MemTable::try_new(batch.schema(), vec![vec![batch]])?)
}

fn batch(fields: Vec<Field>, columns: Vec<ArrayRef>) -> Result<RecordBatch> {
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?)
}

/// A moment in milliseconds, UTC, as Spark's metadata tables show it.
fn utc_millis(name: &str) -> Field {
    Field::new(
        name,
        DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
        false,
    )
}

fn snapshots(md: &TableMetadata) -> Result<RecordBatch> {
    let s = &md.snapshots;
    batch(
        vec![
            Field::new("snapshot_id", DataType::Int64, false),
            Field::new("parent_id", DataType::Int64, true),
            Field::new("sequence_number", DataType::Int64, false),
            utc_millis("committed_at"),
            Field::new("operation", DataType::Utf8, false),
            Field::new("summary", DataType::Utf8, false),
            // Null for a foreign table's snapshots other than the one read.
            Field::new("manifests", DataType::Int64, true),
        ],
        vec![
            Arc::new(Int64Array::from_iter_values(s.iter().map(|x| x.snapshot_id))),
            Arc::new(Int64Array::from(
                s.iter().map(|x| x.parent_snapshot_id).collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from_iter_values(s.iter().map(|x| x.sequence_number))),
            Arc::new(
                TimestampMillisecondArray::from_iter_values(s.iter().map(|x| x.timestamp_ms)).with_timezone("UTC"),
            ),
            Arc::new(StringArray::from_iter_values(s.iter().map(|x| x.operation.as_str()))),
            Arc::new(StringArray::from_iter_values(
                s.iter().map(|x| serde_json::to_string(&x.summary).unwrap_or_default()),
            )),
            Arc::new(Int64Array::from(
                s.iter()
                    .map(|x| x.manifests.as_ref().map(|m| m.len() as i64))
                    .collect::<Vec<_>>(),
            )),
        ],
    )
}

/// The current snapshot as the branch `main` (when there is one), then the tags.
fn refs(md: &TableMetadata) -> Result<RecordBatch> {
    let mut rows: Vec<(&str, &str, i64)> = md
        .current_snapshot_id
        .map(|id| ("main", "BRANCH", id))
        .into_iter()
        .collect();
    rows.extend(
        md.refs
            .iter()
            .filter(|(name, _)| name.as_str() != "main")
            .map(|(name, r)| {
                (
                    name.as_str(),
                    if r.kind == "branch" { "BRANCH" } else { "TAG" },
                    r.snapshot_id,
                )
            }),
    );
    let none = || Arc::new(Int64Array::from(vec![None::<i64>; rows.len()])) as ArrayRef;
    batch(
        vec![
            Field::new("name", DataType::Utf8, false),
            Field::new("type", DataType::Utf8, false),
            Field::new("snapshot_id", DataType::Int64, false),
            // Retention is not set per reference here: the table's own applies.
            Field::new("max_reference_age_in_ms", DataType::Int64, true),
            Field::new("min_snapshots_to_keep", DataType::Int32, true),
            Field::new("max_snapshot_age_in_ms", DataType::Int64, true),
        ],
        vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.2))),
            none(),
            Arc::new(Int32Array::from(vec![None::<i32>; rows.len()])),
            none(),
        ],
    )
}

/// Spark's `all_manifests`: every manifest of every live snapshot, with
/// the snapshot it was listed by. A manifest's entries are all ADDED (its
/// files came with the snapshot that wrote it) or, for a manifest carried
/// over into a rewritten one, EXISTING; this engine writes no DELETED entries.
fn all_manifests(md: &TableMetadata) -> Result<RecordBatch> {
    use datafusion::arrow::array::{ListArray, StructArray};
    use datafusion::arrow::buffer::OffsetBuffer;
    use datafusion::arrow::datatypes::Fields;
    let rows: Vec<(i64, &crate::spec::ManifestFile)> = md
        .snapshots
        .iter()
        .filter_map(|s| Some((s.snapshot_id, s.manifests.as_ref()?)))
        .flat_map(|(id, m)| m.iter().map(move |m| (id, m)))
        .collect();
    let count = |data: bool, existing: bool| -> ArrayRef {
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|(_, m)| {
            let is_existing = m.iceberg.as_ref().is_some_and(|i| i.files_snapshot_id.is_some());
            if m.is_deletes() != data && is_existing == existing {
                m.file_count as i32
            } else {
                0
            }
        })))
    };
    let zeros = || Arc::new(Int32Array::from(vec![0; rows.len()])) as ArrayRef;
    let summary_fields = Fields::from(vec![
        Field::new("contains_null", DataType::Boolean, false),
        Field::new("contains_nan", DataType::Boolean, true),
        Field::new("lower_bound", DataType::Utf8, true),
        Field::new("upper_bound", DataType::Utf8, true),
    ]);
    let summaries: Vec<&crate::spec::FieldSummary> = rows.iter().flat_map(|(_, m)| m.partitions.iter()).collect();
    let summary_struct = StructArray::try_new(
        summary_fields.clone(),
        vec![
            Arc::new(BooleanArray::from_iter(summaries.iter().map(|s| Some(s.contains_null)))),
            Arc::new(BooleanArray::from_iter(summaries.iter().map(|s| Some(s.contains_nan)))),
            Arc::new(StringArray::from_iter(
                summaries.iter().map(|s| s.lower_bound.as_deref()),
            )),
            Arc::new(StringArray::from_iter(
                summaries.iter().map(|s| s.upper_bound.as_deref()),
            )),
        ],
        None,
    )?;
    let item = Arc::new(Field::new("item", DataType::Struct(summary_fields), false));
    let summaries = ListArray::try_new(
        Arc::clone(&item),
        OffsetBuffer::from_lengths(rows.iter().map(|(_, m)| m.partitions.len())),
        Arc::new(summary_struct),
        None,
    )?;
    batch(
        vec![
            Field::new("content", DataType::Int32, false),
            Field::new("path", DataType::Utf8, false),
            Field::new("length", DataType::Int64, false),
            Field::new("partition_spec_id", DataType::Int32, false),
            Field::new("added_snapshot_id", DataType::Int64, false),
            Field::new("added_data_files_count", DataType::Int32, false),
            Field::new("existing_data_files_count", DataType::Int32, false),
            Field::new("deleted_data_files_count", DataType::Int32, false),
            Field::new("added_delete_files_count", DataType::Int32, false),
            Field::new("existing_delete_files_count", DataType::Int32, false),
            Field::new("deleted_delete_files_count", DataType::Int32, false),
            Field::new("partition_summaries", DataType::List(item), false),
            Field::new("reference_snapshot_id", DataType::Int64, false),
        ],
        vec![
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|(_, m)| i32::from(m.is_deletes())),
            )),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|(_, m)| m.path.as_str()))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|(_, m)| m.length as i64))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|(_, m)| {
                md.spec(m.spec_id).map_or(m.spec_id, |s| s.partition_spec_id())
            }))),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|(_, m)| m.added_snapshot_id),
            )),
            count(true, false),
            count(true, true),
            zeros(),
            count(false, false),
            count(false, true),
            zeros(),
            Arc::new(summaries),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|(id, _)| *id))),
        ],
    )
}

/// The snapshots the current one descends from, itself included.
fn current_ancestors(md: &TableMetadata) -> std::collections::HashSet<i64> {
    let mut out = std::collections::HashSet::new();
    let mut next = md.current_snapshot_id;
    while let Some(id) = next {
        if !out.insert(id) {
            break;
        }
        next = md.snapshot(id).and_then(|s| s.parent_snapshot_id);
    }
    out
}

/// Spark's `history`: each time the current snapshot changed. A snapshot
/// expired since keeps its row, with no parent.
fn history(md: &TableMetadata) -> Result<RecordBatch> {
    let log = &md.snapshot_log;
    let ancestors = current_ancestors(md);
    batch(
        vec![
            utc_millis("made_current_at"),
            Field::new("snapshot_id", DataType::Int64, false),
            Field::new("parent_id", DataType::Int64, true),
            Field::new("is_current_ancestor", DataType::Boolean, false),
        ],
        vec![
            Arc::new(
                TimestampMillisecondArray::from_iter_values(log.iter().map(|e| e.timestamp_ms)).with_timezone("UTC"),
            ),
            Arc::new(Int64Array::from_iter_values(log.iter().map(|e| e.snapshot_id))),
            Arc::new(Int64Array::from(
                log.iter()
                    .map(|e| md.snapshot(e.snapshot_id).and_then(|s| s.parent_snapshot_id))
                    .collect::<Vec<_>>(),
            )),
            Arc::new(BooleanArray::from(
                log.iter()
                    .map(|e| ancestors.contains(&e.snapshot_id))
                    .collect::<Vec<_>>(),
            )),
        ],
    )
}

/// Spark's `metadata_log_entries`: the earlier metadata files (Iceberg's
/// `metadata-log`), each with the snapshot that was current when it was
/// written (from the snapshot log), that snapshot's schema and sequence number.
fn metadata_log_entries(md: &TableMetadata) -> Result<RecordBatch> {
    let log = &md.metadata_log;
    let current_at = |ts: i64| {
        md.snapshot_log
            .iter()
            .rev()
            .find(|e| e.timestamp_ms <= ts)
            .map(|e| e.snapshot_id)
    };
    let latest: Vec<Option<i64>> = log.iter().map(|e| current_at(e.timestamp_ms)).collect();
    let snapshot = |id: &Option<i64>| id.and_then(|id| md.snapshot(id));
    batch(
        vec![
            utc_millis("timestamp"),
            Field::new("file", DataType::Utf8, false),
            Field::new("latest_snapshot_id", DataType::Int64, true),
            Field::new("latest_schema_id", DataType::Int32, true),
            Field::new("latest_sequence_number", DataType::Int64, true),
        ],
        vec![
            Arc::new(
                TimestampMillisecondArray::from_iter_values(log.iter().map(|e| e.timestamp_ms)).with_timezone("UTC"),
            ),
            Arc::new(StringArray::from_iter_values(
                log.iter().map(|e| e.metadata_file.as_str()),
            )),
            Arc::new(Int64Array::from(latest.clone())),
            Arc::new(Int32Array::from(
                latest
                    .iter()
                    .map(|id| {
                        snapshot(id)
                            .and_then(|s| s.table_spec_id)
                            .and_then(|spec| md.spec(spec).ok())
                            .map(|spec| spec.schema_id())
                    })
                    .collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from(
                latest
                    .iter()
                    .map(|id| snapshot(id).map(|s| s.sequence_number))
                    .collect::<Vec<_>>(),
            )),
        ],
    )
}

fn properties(md: &TableMetadata) -> Result<RecordBatch> {
    let p = &md.properties;
    batch(
        vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Utf8, false),
        ],
        vec![
            Arc::new(StringArray::from_iter_values(p.keys())),
            Arc::new(StringArray::from_iter_values(p.values())),
        ],
    )
}

/// One row per partition spec, by Iceberg's id; table specs that share it
/// (schema changes keep the partition spec) are one, as the newest has it.
fn specs(md: &TableMetadata) -> Result<RecordBatch> {
    let mut ids: Vec<i32> = md.table_specs.iter().map(|s| s.partition_spec_id()).collect();
    ids.sort();
    ids.dedup();
    let t: Vec<&crate::spec::TableSpec> = ids.iter().filter_map(|id| md.spec_of_partition_spec(*id)).collect();
    let current = md.current_spec()?.partition_spec_id();
    let describe = |spec: &crate::spec::TableSpec| {
        spec.partition_spec
            .fields
            .iter()
            .map(|f| {
                let source = spec
                    .schema
                    .field_by_id(f.source_id)
                    .map(|c| c.name.as_str())
                    .unwrap_or("?");
                let call = crate::table::show_create::partition_call(f, source);
                format!(
                    "{call} AS {} [{}]",
                    crate::table::show_create::ident(&f.name),
                    f.field_id
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    batch(
        vec![
            Field::new("spec_id", DataType::Int32, false),
            Field::new("is_current", DataType::Boolean, false),
            Field::new("partition_spec", DataType::Utf8, false),
            Field::new("schema", DataType::Utf8, false),
        ],
        vec![
            Arc::new(Int32Array::from_iter_values(t.iter().map(|s| s.partition_spec_id()))),
            Arc::new(BooleanArray::from(
                t.iter().map(|s| s.partition_spec_id() == current).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from_iter_values(t.iter().map(|s| describe(s)))),
            Arc::new(StringArray::from_iter_values(
                t.iter().map(|s| serde_json::to_string(&s.schema).unwrap_or_default()),
            )),
        ],
    )
}

fn manifests(md: &TableMetadata) -> Result<RecordBatch> {
    let m = md.current_manifests()?;
    batch(
        vec![
            Field::new("path", DataType::Utf8, false),
            Field::new("length", DataType::Int64, false),
            Field::new("spec_id", DataType::Int32, false),
            Field::new("added_snapshot_id", DataType::Int64, false),
            Field::new("file_count", DataType::Int64, false),
            Field::new("record_count", DataType::Int64, false),
            Field::new("content", DataType::Utf8, false),
        ],
        vec![
            Arc::new(StringArray::from_iter_values(m.iter().map(|x| x.path.as_str()))),
            Arc::new(Int64Array::from_iter_values(m.iter().map(|x| x.length as i64))),
            Arc::new(Int32Array::from_iter_values(
                m.iter()
                    .map(|x| md.spec(x.spec_id).map_or(x.spec_id, |s| s.partition_spec_id())),
            )),
            Arc::new(Int64Array::from_iter_values(m.iter().map(|x| x.added_snapshot_id))),
            Arc::new(Int64Array::from_iter_values(m.iter().map(|x| x.file_count as i64))),
            Arc::new(Int64Array::from_iter_values(m.iter().map(|x| x.record_count as i64))),
            Arc::new(StringArray::from_iter_values(
                m.iter().map(|x| if x.is_deletes() { "deletes" } else { "data" }),
            )),
        ],
    )
}

/// One row per data file of the current snapshot.
struct FileRow {
    path: String,
    spec_id: i32,
    partition: String,
    values: String,
    records: i64,
    size: i64,
    null_counts: String,
    lower: String,
    upper: String,
    deletes: bool,
    /// For a position delete file: the data file it names.
    referenced: Option<String>,
    /// For a deletion vector: its blob in the Puffin file `path`.
    blob: Option<crate::spec::BlobRange>,
}

async fn file_rows(location: &TableLocation, md: &TableMetadata) -> Result<Vec<FileRow>> {
    let mut rows = Vec::new();
    let Some(snapshot) = md.current_snapshot() else {
        return Ok(rows);
    };
    for m in snapshot.manifests()? {
        let spec = md.spec(m.spec_id)?;
        let b = read_manifest(location, m, spec, None).await?;
        let (Some(paths), Some(records), Some(sizes)) = (
            b.column_by_name(PATH),
            b.column_by_name(RECORD_COUNT),
            b.column_by_name(FILE_SIZE),
        ) else {
            return crate::format_err!("manifest {} lacks path/size/record count", m.path);
        };
        let (paths, records, sizes) = (
            paths.as_string::<i32>(),
            records.as_primitive::<Int64Type>(),
            sizes.as_primitive::<Int64Type>(),
        );
        let strings = b.column_by_name(PARTITION_STRINGS).map(|c| c.as_struct().clone());
        let typed = b.column_by_name(PARTITION).map(|c| c.as_struct().clone());
        let stats = b.column_by_name(STATS).map(|c| c.as_struct().clone());
        let referenced = b
            .column_by_name(REFERENCED_DATA_FILE)
            .map(|c| c.as_string::<i32>().clone());
        let blobs = crate::manifest::format::blob_ranges(&b);
        for i in 0..b.num_rows() {
            let mut dirs = Vec::new();
            if let Some(s) = &strings {
                for (c, name) in s.columns().iter().zip(s.column_names()) {
                    let v = c.as_string::<i32>();
                    dirs.push(values::hive::partition_dir(name, (!v.is_null(i)).then(|| v.value(i))));
                }
            }
            let partition = dirs.join("/");
            let mut pairs = Vec::new();
            if let Some(typed) = &typed {
                for (c, name) in typed.columns().iter().zip(typed.column_names()) {
                    let value = partition_value_json(&ScalarValue::try_from_array(c, i)?);
                    pairs.push(format!("{}:{value}", serde_json::to_string(name)?));
                }
            }
            let partition_values = format!("{{{}}}", pairs.join(","));
            let mut nulls = BTreeMap::new();
            let mut lower = BTreeMap::new();
            let mut upper = BTreeMap::new();
            if let Some(stats) = stats.as_ref().filter(|_| !m.is_deletes()) {
                for (col, name) in stats.columns().iter().zip(stats.column_names()) {
                    let Some(column) = name.parse::<i32>().ok().and_then(|id| spec.schema.field_by_id(id)) else {
                        continue;
                    };
                    let s = col.as_struct();
                    if let Some(n) = s.column_by_name(NULL_COUNT) {
                        nulls.insert(column.name.clone(), n.as_primitive::<Int64Type>().value(i));
                    }
                    for (child, out) in [(MIN, &mut lower), (MAX, &mut upper)] {
                        if let Some(a) = s.column_by_name(child)
                            && !a.is_null(i)
                        {
                            let v = ScalarValue::try_from_array(a, i)?;
                            let text = values::serialize(&v).ok().flatten().unwrap_or_else(|| v.to_string());
                            out.insert(column.name.clone(), text);
                        }
                    }
                }
            }
            rows.push(FileRow {
                path: paths.value(i).to_string(),
                spec_id: spec.partition_spec_id(),
                partition,
                values: partition_values,
                records: records.value(i),
                size: sizes.value(i),
                null_counts: serde_json::to_string(&nulls)?,
                lower: serde_json::to_string(&lower)?,
                upper: serde_json::to_string(&upper)?,
                deletes: m.is_deletes(),
                referenced: referenced
                    .as_ref()
                    .filter(|r| r.is_valid(i))
                    .map(|r| r.value(i).to_string()),
                blob: blobs[i],
            });
        }
    }
    Ok(rows)
}

/// A partition value as JSON: strings as they are (`""` stays `""`), other
/// types in their partition-path spelling, NULL as `null`.
fn partition_value_json(v: &ScalarValue) -> String {
    let text = match v {
        _ if v.is_null() => None,
        ScalarValue::Utf8(s) | ScalarValue::LargeUtf8(s) | ScalarValue::Utf8View(s) => s.clone(),
        other => Some(
            values::serialize(other)
                .ok()
                .flatten()
                .unwrap_or_else(|| other.to_string()),
        ),
    };
    serde_json::to_string(&text).unwrap_or_else(|_| "null".to_string())
}

async fn orphans(location: &TableLocation, md: &TableMetadata) -> Result<RecordBatch> {
    let found = crate::table::orphans::find_orphans(location, md).await?;
    let root = format!("{}/", location.root);
    batch(
        vec![
            Field::new("path", DataType::Utf8, false),
            Field::new("size", DataType::Int64, false),
            Field::new(
                "last_modified",
                DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                false,
            ),
        ],
        vec![
            Arc::new(StringArray::from_iter_values(found.iter().map(|o| {
                let p = o.path.as_ref();
                p.strip_prefix(&root).unwrap_or(p).to_string()
            }))),
            Arc::new(Int64Array::from_iter_values(found.iter().map(|o| o.size as i64))),
            Arc::new(
                TimestampMillisecondArray::from_iter_values(found.iter().map(|o| o.last_modified.timestamp_millis()))
                    .with_timezone("UTC"),
            ),
        ],
    )
}

async fn files(location: &TableLocation, md: &TableMetadata) -> Result<RecordBatch> {
    let r = file_rows(location, md).await?;
    batch(
        vec![
            Field::new("path", DataType::Utf8, false),
            Field::new("spec_id", DataType::Int32, false),
            Field::new("partition", DataType::Utf8, false),
            Field::new("partition_values", DataType::Utf8, false),
            Field::new("record_count", DataType::Int64, false),
            Field::new("file_size_in_bytes", DataType::Int64, false),
            Field::new("null_counts", DataType::Utf8, false),
            Field::new("lower_bounds", DataType::Utf8, false),
            Field::new("upper_bounds", DataType::Utf8, false),
            Field::new("content", DataType::Utf8, false),
            Field::new("referenced_data_file", DataType::Utf8, true),
            Field::new("file_format", DataType::Utf8, false),
            Field::new("content_offset", DataType::Int64, true),
            Field::new("content_size_in_bytes", DataType::Int64, true),
        ],
        vec![
            Arc::new(StringArray::from_iter_values(r.iter().map(|x| x.path.as_str()))),
            Arc::new(Int32Array::from_iter_values(r.iter().map(|x| x.spec_id))),
            Arc::new(StringArray::from_iter_values(r.iter().map(|x| x.partition.as_str()))),
            Arc::new(StringArray::from_iter_values(r.iter().map(|x| x.values.as_str()))),
            Arc::new(Int64Array::from_iter_values(r.iter().map(|x| x.records))),
            Arc::new(Int64Array::from_iter_values(r.iter().map(|x| x.size))),
            Arc::new(StringArray::from_iter_values(r.iter().map(|x| x.null_counts.as_str()))),
            Arc::new(StringArray::from_iter_values(r.iter().map(|x| x.lower.as_str()))),
            Arc::new(StringArray::from_iter_values(r.iter().map(|x| x.upper.as_str()))),
            Arc::new(StringArray::from_iter_values(
                r.iter().map(|x| if x.deletes { "position_deletes" } else { "data" }),
            )),
            Arc::new(StringArray::from_iter(r.iter().map(|x| x.referenced.as_deref()))),
            Arc::new(StringArray::from_iter_values(
                r.iter().map(|x| if x.blob.is_some() { "PUFFIN" } else { "PARQUET" }),
            )),
            Arc::new(Int64Array::from_iter(r.iter().map(|x| x.blob.map(|b| b.offset)))),
            Arc::new(Int64Array::from_iter(r.iter().map(|x| x.blob.map(|b| b.length)))),
        ],
    )
}

async fn partitions(location: &TableLocation, md: &TableMetadata) -> Result<RecordBatch> {
    // Keyed by the values, not the path: NULL, '' and '__HIVE_DEFAULT_PARTITION__' differ.
    let mut groups: BTreeMap<(i32, String), (String, i64, i64, i64)> = BTreeMap::new();
    for f in file_rows(location, md).await?.into_iter().filter(|f| !f.deletes) {
        let e = groups
            .entry((f.spec_id, f.values))
            .or_insert_with(|| (f.partition, 0, 0, 0));
        e.1 += 1;
        e.2 += f.records;
        e.3 += f.size;
    }
    batch(
        vec![
            Field::new("spec_id", DataType::Int32, false),
            Field::new("partition", DataType::Utf8, false),
            Field::new("partition_values", DataType::Utf8, false),
            Field::new("file_count", DataType::Int64, false),
            Field::new("record_count", DataType::Int64, false),
            Field::new("total_size_in_bytes", DataType::Int64, false),
        ],
        vec![
            Arc::new(Int32Array::from_iter_values(groups.keys().map(|k| k.0))),
            Arc::new(StringArray::from_iter_values(groups.values().map(|v| v.0.as_str()))),
            Arc::new(StringArray::from_iter_values(groups.keys().map(|k| k.1.as_str()))),
            Arc::new(Int64Array::from_iter_values(groups.values().map(|v| v.1))),
            Arc::new(Int64Array::from_iter_values(groups.values().map(|v| v.2))),
            Arc::new(Int64Array::from_iter_values(groups.values().map(|v| v.3))),
        ],
    )
}
