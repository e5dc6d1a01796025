//! Changelog reads (`table_changes`) against a baseline run on the same data
//! in the same process:
//!
//! | case | table | ours | baseline |
//! |---|---|---|---|
//! | one append among 1,000 snapshots | 10,000 files (10 per append, `identity(p)`) | `table_changes` of the 500th append | reading its 10 added files directly (`read_parquet` of their paths) |
//! | one UPDATE of 1 % (one day) | 10 M rows, 100 `day(ts)` files, copy-on-write | `table_changes` of the UPDATE | the UPDATE's condition scan (`SELECT *` of the parent with its condition) |
//! | one UPDATE of 1 % (every file) | the same | `table_changes` of the UPDATE | the same, condition `id % 100 = 0` |
//! | the two UPDATEs on format version 3 tables | the same, with row lineage | the same | the same |
//! | one MERGE of 1 % (every file) | the version 2 every-file table after its UPDATE | `table_changes` of a MERGE matching `id % 100 = 1` by key | that condition's scan |
//!
//! Medians of 5 runs, alternating. `cargo bench --bench changes`; under
//! `cargo test` every case runs once on tiny data.

use std::time::{Duration, Instant};

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use hidden_partitions::{execute_sql, session};

/// The allocator of the `hidden-partitions` binary, where changelogs are
/// read (`table_changes` in SQL).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DAY_MICROS: i64 = 86_400_000_000;
const START: i64 = 1_704_067_200_000_000; // 2024-01-01

struct Size {
    appends: i64,
    rows_per_file: i64,
    update_rows: i64,
    runs: usize,
    /// Runs of the cases that take milliseconds.
    quick_runs: usize,
}

const FULL: Size = Size {
    appends: 1_000,
    rows_per_file: 2_000,
    update_rows: 10_000_000,
    runs: 5,
    quick_runs: 200,
};

const TINY: Size = Size {
    appends: 5,
    rows_per_file: 10,
    update_rows: 10_000,
    runs: 1,
    quick_runs: 1,
};

async fn batches(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    let mut r = execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.pop().map(|r| r.batches).unwrap_or_default()
}

async fn rows(ctx: &SessionContext, sql: &str) -> (Duration, usize) {
    let start = Instant::now();
    let n = batches(ctx, sql).await.iter().map(RecordBatch::num_rows).sum();
    (start.elapsed(), n)
}

async fn ints(ctx: &SessionContext, sql: &str) -> Vec<i64> {
    batches(ctx, sql)
        .await
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn report(case: &str, ours: Duration, baseline: Duration, what: &str) {
    println!(
        "| {case} | {:.1} ms | {:.1} ms | {:.2}x | {what} |",
        ms(ours),
        ms(baseline),
        ours.as_secs_f64() / baseline.as_secs_f64()
    );
}

async fn append_among_many(s: &Size) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    batches(
        &ctx,
        "CREATE TABLE t (id BIGINT, p INT, v DOUBLE, s VARCHAR) PARTITIONED BY (p)",
    )
    .await;
    let per_append = 10 * s.rows_per_file;
    for a in 0..s.appends {
        batches(
            &ctx,
            &format!(
                "INSERT INTO t SELECT {a} * {per_append} + value AS id, CAST(value % 10 AS INT) AS p, CAST(value AS DOUBLE) AS v, concat('row-', CAST(value AS VARCHAR)) AS s FROM range({per_append})"
            ),
        )
        .await;
    }
    let snapshots = ints(&ctx, "SELECT snapshot_id FROM \"t$snapshots\" ORDER BY sequence_number").await;
    let k = snapshots.len() / 2;
    let (parent, snapshot) = (snapshots[k - 1], snapshots[k]);
    let files: Vec<String> = batches(
        &ctx,
        &format!("SELECT data_file['file_path'] FROM \"t$entries\" WHERE snapshot_id = {snapshot} AND status = 1"),
    )
    .await
    .iter()
    .flat_map(|b| {
        let c = b.column(0).as_string::<i32>();
        (0..c.len()).map(|i| c.value(i).to_string()).collect::<Vec<_>>()
    })
    .collect();
    assert_eq!(files.len(), 10, "{files:?}");
    let total = ints(&ctx, "SELECT count(*) FROM \"t$files\"").await[0];
    let changes = format!("SELECT * FROM table_changes('t', {parent}, {snapshot})");
    let direct = SessionContext::new();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    // A read of 10 small files takes about 2 ms, where the machine's noise
    // is of the order of the target's 20 %: many alternating runs, so the
    // medians are stable (1 s in all).
    for _ in 0..s.runs.max(s.quick_runs) {
        let (t, n) = rows(&ctx, &changes).await;
        assert_eq!(n as i64, per_append);
        ours.push(t);
        let start = Instant::now();
        let df = direct
            .read_parquet(files.clone(), ParquetReadOptions::default())
            .await
            .unwrap();
        let n: usize = df.collect().await.unwrap().iter().map(RecordBatch::num_rows).sum();
        assert_eq!(n as i64, per_append);
        theirs.push(start.elapsed());
    }
    // What any query of the table pays before reading: loading its latest
    // version (1,000 snapshots) and planning; and the same rows read by a
    // query of the snapshot whose filter selects them (planned from all
    // 1,000 manifests, pruned to the 10 files by statistics).
    let mut loads = Vec::new();
    let mut filtered = Vec::new();
    let (lo, hi) = (k as i64 * per_append, (k as i64 + 1) * per_append);
    let same_rows = format!("SELECT * FROM \"t@{snapshot}\" WHERE id >= {lo} AND id < {hi}");
    for _ in 0..s.runs {
        loads.push(rows(&ctx, "EXPLAIN SELECT * FROM t WHERE id < 0").await.0);
        let (t, n) = rows(&ctx, &same_rows).await;
        assert_eq!(n as i64, per_append);
        filtered.push(t);
    }
    report(
        "one append among 1,000 snapshots",
        median(ours),
        median(theirs),
        &format!(
            "{} snapshots, {total} files; 10 files read; loading and planning any query of t: {:.1} ms; the same rows by a filtered query of the snapshot: {:.1} ms",
            snapshots.len(),
            ms(median(loads)),
            ms(median(filtered))
        ),
    );
}

const UPDATE_TABLES: [&str; 4] = ["one_day", "every_file", "one_day_v3", "every_file_v3"];

async fn update_one_percent(s: &Size, wanted: impl Fn(&str) -> bool) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let days = 100;
    // Format version 2, and 3 (row lineage: the rewrite keeps the ids of
    // the rows it copies, and the changelog leaves those rows out unread).
    let tables = [
        ("one_day", "", "one day"),
        ("every_file", "", "every file"),
        (
            "one_day_v3",
            "TBLPROPERTIES ('format-version' = '3')",
            "one day, format version 3",
        ),
        (
            "every_file_v3",
            "TBLPROPERTIES ('format-version' = '3')",
            "every file, format version 3",
        ),
    ];
    let tables: Vec<_> = tables.into_iter().filter(|(t, _, _)| wanted(t)).collect();
    for &(t, properties, _) in &tables {
        batches(
            &ctx,
            &format!(
                "CREATE TABLE {t} (id BIGINT, ts TIMESTAMP, v DOUBLE, s VARCHAR) PARTITIONED BY (day(ts)) {properties}"
            ),
        )
        .await;
        batches(
            &ctx,
            &format!(
                "INSERT INTO {t} SELECT value AS id, to_timestamp_micros({START} + (value % {days}) * {DAY_MICROS} + value) AS ts, CAST(value AS DOUBLE) AS v, concat('row-', CAST(value AS VARCHAR)) AS s FROM range({})",
                s.update_rows
            ),
        )
        .await;
    }
    let one_day = format!("ts < to_timestamp_micros({})", START + DAY_MICROS);
    for &(t, _, label) in &tables {
        let condition = if t.starts_with("one_day") {
            one_day.as_str()
        } else {
            "id % 100 = 0"
        };
        let update = format!("UPDATE {t} SET v = v + 1 WHERE {condition}");
        measure(&ctx, s, t, &update, condition, &format!("one UPDATE of 1 % ({label})")).await;
        if t == "every_file" {
            // The same through MERGE: 1 % of the rows, matched by key
            // from a source table, every file rewritten.
            let merged = "id % 100 = 1";
            batches(
                &ctx,
                &format!("CREATE TABLE src AS SELECT id, v FROM {t} WHERE {merged}"),
            )
            .await;
            let merge =
                format!("MERGE INTO {t} USING src ON {t}.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v + 1");
            measure(&ctx, s, t, &merge, merged, "one MERGE of 1 % (every file)").await;
        }
    }
}

/// Run `statement` (which changes the rows of `t` that `condition`
/// selects), then time `table_changes` of it against the condition's scan
/// of the snapshot before it.
async fn measure(ctx: &SessionContext, s: &Size, t: &str, statement: &str, condition: &str, case: &str) {
    let parent = ints(
        ctx,
        &format!("SELECT snapshot_id FROM \"{t}$snapshots\" ORDER BY sequence_number DESC"),
    )
    .await[0];
    let (_, touched) = rows(ctx, &format!("SELECT * FROM {t} WHERE {condition}")).await;
    batches(ctx, statement).await;
    let changes = format!("SELECT * FROM table_changes('{t}', {parent}, NULL)");
    let scan = format!("SELECT * FROM \"{t}@{parent}\" WHERE {condition}");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    // Planning alone (EXPLAIN plans the physical plan too).
    let (mut our_plans, mut their_plans) = (Vec::new(), Vec::new());
    for _ in 0..s.runs {
        let (o, n) = rows(ctx, &changes).await;
        assert_eq!(n, 2 * touched, "{t}: a DELETE and an INSERT per changed row");
        ours.push(o);
        theirs.push(rows(ctx, &scan).await.0);
        our_plans.push(rows(ctx, &format!("EXPLAIN {changes}")).await.0);
        their_plans.push(rows(ctx, &format!("EXPLAIN {scan}")).await.0);
    }
    report(
        case,
        median(ours),
        median(theirs),
        &format!(
            "{} rows, {touched} changed; planning (EXPLAIN): {:.1} ms / {:.1} ms",
            s.update_rows,
            ms(median(our_plans)),
            ms(median(their_plans))
        ),
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let mut s = if full { FULL } else { TINY };
    // More runs (to profile one case): HP_BENCH_RUNS.
    if let Some(runs) = std::env::var("HP_BENCH_RUNS").ok().and_then(|r| r.parse().ok()) {
        s.runs = runs;
    }
    let s = &s;
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    println!("| case | table_changes | baseline (same run) | ratio | data |");
    println!("|---|---|---|---|---|");
    if wanted("append_among_many") {
        append_among_many(s).await;
    }
    // Also one table of it (`every_file_v3`).
    let tables: Vec<&String> = only.iter().filter(|o| UPDATE_TABLES.contains(&o.as_str())).collect();
    if wanted("update_one_percent") || !tables.is_empty() {
        update_one_percent(s, |t| tables.is_empty() || tables.iter().any(|o| o.as_str() == t)).await;
    }
}
