//! Row-level writes and maintenance, each against a baseline run on the same
//! data in the same process:
//!
//! | case | table | baseline |
//! |---|---|---|
//! | DELETE one day | 10,000 `day(ts)` files | `SELECT count(*)` of that day |
//! | UPDATE 1 % (one day) | 100 days, 1 M rows | `COPY` of the same rows |
//! | UPDATE 1 % (every file) | 100 days, 1 M rows | `COPY` of the whole table |
//! | MERGE 10,000 keys | 10 M rows, `bucket(16, id)`, 10 appends | the same MERGE with `ON t.id + 0 = s.id` (no key pruning) |
//! | optimize | 10,000 small files in 100 days | `COPY` of the same rows into 100 day directories |
//! | MERGE 10,000 keys, merge-on-read | the same table, `write.merge.mode` = `merge-on-read` | the same MERGE copy-on-write (time and bytes written) |
//! | DELETE 100 scattered rows, merge-on-read | 10 M rows, 100 `day(ts)` files | the same DELETE copy-on-write (time and bytes written) |
//! | full scan with 1 % of rows deleted (merge-on-read) | 10 M rows, 100 files | the same scan of the table before the DELETE |
//! | the two cases above on format version 3 (deletion vectors) | the same, `'format-version' = '3'` | the same baselines, also version 3 |
//!
//! Files read / dropped unread come from `EXPLAIN FILES <statement>`.
//! `cargo bench --bench dml`; under `cargo test` every case runs once on
//! tiny data.

use std::time::{Duration, Instant};

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use hidden_partitions::{execute_sql, session};

const DAY_MICROS: i64 = 86_400_000_000;
const START: i64 = 1_704_067_200_000_000; // 2024-01-01

struct Size {
    /// Rows of the merge-on-read tables (100 days, one file each).
    mor_rows: i64,
    /// Files of the DELETE table (one per day).
    delete_days: i64,
    update_rows: i64,
    merge_rows: i64,
    merge_appends: i64,
    merge_keys: i64,
    /// Files of the optimize table: appends × days.
    optimize_appends: i64,
    optimize_days: i64,
}

const FULL: Size = Size {
    mor_rows: 10_000_000,
    delete_days: 10_000,
    update_rows: 1_000_000,
    merge_rows: 10_000_000,
    merge_appends: 10,
    merge_keys: 10_000,
    optimize_appends: 100,
    optimize_days: 100,
};

const TINY: Size = Size {
    mor_rows: 50_000,
    delete_days: 20,
    update_rows: 2_000,
    merge_rows: 20_000,
    merge_appends: 2,
    merge_keys: 100,
    optimize_appends: 3,
    optimize_days: 4,
};

async fn run(ctx: &SessionContext, sql: &str) -> Duration {
    let start = Instant::now();
    execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    start.elapsed()
}

async fn int(ctx: &SessionContext, sql: &str) -> i64 {
    let r = execute_sql(ctx, sql).await.unwrap();
    r.last().unwrap().batches[0]
        .column(0)
        .as_primitive::<Int64Type>()
        .value(0)
}

/// `read/total, dropped/total` summed over the specs of `EXPLAIN FILES sql`.
async fn files(ctx: &SessionContext, sql: &str) -> (u64, u64, u64) {
    let r = execute_sql(ctx, &format!("EXPLAIN FILES {sql}")).await.unwrap();
    let (mut read, mut dropped, mut total) = (0, 0, 0);
    for b in &r.last().unwrap().batches {
        for i in 0..b.num_rows() {
            let cell = |c: usize| {
                let col = b.column(c);
                let s = datafusion::arrow::util::display::array_value_to_string(col, i).unwrap();
                let (n, t) = s.split_once('/').unwrap();
                (n.parse::<u64>().unwrap(), t.parse::<u64>().unwrap())
            };
            let (r, t) = cell(2);
            let (d, _) = cell(3);
            read += r;
            dropped += d;
            total += t;
        }
    }
    (read, dropped, total)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Bytes of every file under `dir`, by path.
fn dir_bytes(dir: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, u64> {
    let mut out = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(dir_bytes(&e.path()));
        } else {
            out.insert(e.path(), e.metadata().unwrap().len());
        }
    }
    out
}

/// Bytes of the files under `dir` that are not in `before`.
fn written_since(dir: &std::path::Path, before: &std::collections::BTreeMap<std::path::PathBuf, u64>) -> u64 {
    dir_bytes(dir)
        .into_iter()
        .filter(|(p, _)| !before.contains_key(p))
        .map(|(_, n)| n)
        .sum()
}

/// DELETE of 100 scattered rows, merge-on-read against copy-on-write on two
/// identical tables; then a full scan of a table with 1 % of its rows
/// deleted against the same scan before the DELETE. Format version 2 deletes
/// are position delete files, version 3 deletes deletion vectors.
async fn merge_on_read_delete(s: &Size, version: u8) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let days = 100;
    for (t, mode) in [
        ("cow", "copy-on-write"),
        ("mor", "merge-on-read"),
        ("scan", "merge-on-read"),
    ] {
        run(
            &ctx,
            &format!(
                "CREATE TABLE {t} (id BIGINT, ts TIMESTAMP, v DOUBLE, s VARCHAR) PARTITIONED BY (day(ts)) TBLPROPERTIES ('write.delete.mode' = '{mode}', 'format-version' = '{version}')"
            ),
        )
        .await;
        run(
            &ctx,
            &format!(
                "INSERT INTO {t} SELECT value AS id, to_timestamp_micros({START} + (value % {days}) * {DAY_MICROS} + value) AS ts, CAST(value AS DOUBLE) AS v, concat('row-', CAST(value AS VARCHAR)) AS s FROM range({})",
                s.mor_rows
            ),
        )
        .await;
    }
    // About 100 rows, spread over the days.
    let step = s.mor_rows / 100 - 7;
    let scattered = format!("id % {step} = 5");
    let expected = int(&ctx, &format!("SELECT count(*) FROM cow WHERE {scattered}")).await;
    // What finding the rows costs at least: a scan of the condition.
    let mut finds = Vec::new();
    for _ in 0..3 {
        finds.push(run(&ctx, &format!("SELECT count(*) FROM mor WHERE {scattered}")).await);
    }
    let t_find = median(finds);
    let mut timings = Vec::new();
    for t in ["cow", "mor"] {
        let table_dir = dir.path().join(t);
        let before = dir_bytes(&table_dir);
        let start = Instant::now();
        let r = execute_sql(&ctx, &format!("DELETE FROM {t} WHERE {scattered}"))
            .await
            .unwrap();
        let took = start.elapsed();
        let count = r.last().unwrap().batches[0]
            .column(0)
            .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
            .value(0) as i64;
        assert_eq!(count, expected, "{t}: DELETE count");
        let written = written_since(&table_dir, &before);
        let table_bytes: u64 = before.values().sum();
        timings.push((took, written, table_bytes));
        assert_eq!(
            int(&ctx, &format!("SELECT count(*) FROM {t}")).await,
            s.mor_rows - expected
        );
    }
    let ((t_cow, b_cow, _), (t_mor, b_mor, table_bytes)) = (timings[0], timings[1]);
    let deletes = int(
        &ctx,
        "SELECT count(*) FROM \"mor$files\" WHERE content = 'position_deletes'",
    )
    .await;
    let kind = if version >= 3 {
        "deletion vectors"
    } else {
        "delete files"
    };
    println!(
        "| DELETE {expected} scattered rows of {} (100 files), merge-on-read v{version} | {:.1} ms, wrote {b_mor} bytes ({deletes} {kind}) | copy-on-write: {:.1} ms, wrote {b_cow} bytes | {:.3}x time, {:.4}x bytes | table {table_bytes} bytes; `SELECT count(*)` of the rows: {:.1} ms |",
        s.mor_rows,
        ms(t_mor),
        ms(t_cow),
        t_mor.as_secs_f64() / t_cow.as_secs_f64(),
        b_mor as f64 / b_cow as f64,
        ms(t_find)
    );
    // A full scan with 1 % of the rows deleted, against the same scan before.
    let scan = "SELECT sum(v), count(s) FROM scan WHERE s <> ''";
    let rounds = 5;
    let mut plain = Vec::new();
    for _ in 0..rounds {
        plain.push(run(&ctx, scan).await);
    }
    run(&ctx, "DELETE FROM scan WHERE (id / 100) % 100 = 3").await;
    let kept = int(&ctx, "SELECT count(*) FROM scan").await;
    let mut deleted = Vec::new();
    for _ in 0..rounds {
        deleted.push(run(&ctx, scan).await);
    }
    let (plain, deleted) = (median(plain), median(deleted));
    println!(
        "| full scan, {:.2} % of {} rows deleted (merge-on-read v{version}) | {:.1} ms | before the DELETE: {:.1} ms | {:.2}x | median of {rounds} |",
        100.0 * (s.mor_rows - kept) as f64 / s.mor_rows as f64,
        s.mor_rows,
        ms(deleted),
        ms(plain),
        deleted.as_secs_f64() / plain.as_secs_f64()
    );
}

fn dir_files(dir: &std::path::Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            n += dir_files(&e.path());
        } else if e.path().extension().is_some_and(|x| x == "parquet") {
            n += 1;
        }
    }
    n
}

async fn delete_one_day(s: &Size) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    run(
        &ctx,
        "CREATE TABLE d (id BIGINT, ts TIMESTAMP, v DOUBLE) PARTITIONED BY (day(ts))",
    )
    .await;
    // 100 rows a day; one file per day.
    run(
        &ctx,
        &format!(
            "INSERT INTO d SELECT value AS id, to_timestamp_micros({START} + (value % {days}) * {DAY_MICROS} + value) AS ts, CAST(value AS DOUBLE) AS v FROM range({})",
            s.delete_days * 100,
            days = s.delete_days
        ),
    )
    .await;
    let day = |k: i64| {
        format!(
            "ts >= to_timestamp_micros({}) AND ts < to_timestamp_micros({})",
            START + k * DAY_MICROS,
            START + (k + 1) * DAY_MICROS
        )
    };
    let (read, dropped, total) = files(&ctx, &format!("DELETE FROM d WHERE {}", day(0))).await;
    let mut deletes = Vec::new();
    let mut selects = Vec::new();
    for k in 0..5 {
        selects.push(run(&ctx, &format!("SELECT count(*) FROM d WHERE {}", day(k))).await);
        deletes.push(run(&ctx, &format!("DELETE FROM d WHERE {}", day(k))).await);
    }
    assert_eq!(int(&ctx, "SELECT count(*) FROM d").await, (s.delete_days - 5) * 100);
    let (del, sel) = (median(deletes), median(selects));
    println!(
        "| DELETE one day of {} files | {:.1} ms | SELECT count(*) of the day: {:.1} ms | {:.2}x | read {read}/{total}, dropped unread {dropped}/{total} |",
        s.delete_days,
        ms(del),
        ms(sel),
        del.as_secs_f64() / sel.as_secs_f64()
    );
}

async fn update_one_percent(s: &Size) {
    let days = 100;
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    run(
        &ctx,
        "CREATE TABLE u (id BIGINT, ts TIMESTAMP, v DOUBLE) PARTITIONED BY (day(ts))",
    )
    .await;
    run(
        &ctx,
        &format!(
            "INSERT INTO u SELECT value AS id, to_timestamp_micros({START} + (value % {days}) * {DAY_MICROS} + value) AS ts, CAST(value AS DOUBLE) AS v FROM range({})",
            s.update_rows
        ),
    )
    .await;
    let out = tempfile::tempdir().unwrap();
    // 1 % in one day: one file rewritten.
    let one_day = format!(
        "ts >= to_timestamp_micros({START}) AND ts < to_timestamp_micros({})",
        START + DAY_MICROS
    );
    let (read, _, total) = files(&ctx, &format!("UPDATE u SET v = v + 1 WHERE {one_day}")).await;
    let t_update = run(&ctx, &format!("UPDATE u SET v = v + 1 WHERE {one_day}")).await;
    let t_copy = run(
        &ctx,
        &format!(
            "COPY (SELECT id, ts, v + 1 AS v FROM u WHERE {one_day}) TO '{}/one_day.parquet' STORED AS PARQUET",
            out.path().display()
        ),
    )
    .await;
    println!(
        "| UPDATE 1 % of {} rows, one day | {:.1} ms | COPY of the same rows: {:.1} ms | {:.2}x | read {read}/{total} |",
        s.update_rows,
        ms(t_update),
        ms(t_copy),
        t_update.as_secs_f64() / t_copy.as_secs_f64()
    );
    // 1 % spread over every file: every file rewritten.
    let spread = "id % 100 = 7";
    let (read, _, total) = files(&ctx, &format!("UPDATE u SET v = v + 1 WHERE {spread}")).await;
    let t_update = run(&ctx, &format!("UPDATE u SET v = v + 1 WHERE {spread}")).await;
    let t_copy = run(
        &ctx,
        &format!(
            "COPY (SELECT id, ts, CASE WHEN {spread} THEN v + 1 ELSE v END AS v, CAST(ts AS DATE) AS d FROM u) TO '{}/all' STORED AS PARQUET PARTITIONED BY (d)",
            out.path().display()
        ),
    )
    .await;
    assert_eq!(int(&ctx, "SELECT count(*) FROM u").await, s.update_rows);
    println!(
        "| UPDATE 1 % of {} rows, spread over every file | {:.1} ms | COPY of the whole table: {:.1} ms | {:.2}x | read {read}/{total} |",
        s.update_rows,
        ms(t_update),
        ms(t_copy),
        t_update.as_secs_f64() / t_copy.as_secs_f64()
    );
}

async fn merge_keys(s: &Size) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    // Two identical tables, so both MERGEs start from the same state.
    let per = s.merge_rows / s.merge_appends;
    for (t, mode) in [
        ("m", "copy-on-write"),
        ("m_off", "copy-on-write"),
        ("m_mor", "merge-on-read"),
    ] {
        run(
            &ctx,
            &format!(
                "CREATE TABLE {t} (id BIGINT, v BIGINT) PARTITIONED BY (bucket(16, id)) TBLPROPERTIES ('write.merge.mode' = '{mode}')"
            ),
        )
        .await;
        for a in 0..s.merge_appends {
            run(
                &ctx,
                &format!(
                    "INSERT INTO {t} SELECT value, 0 FROM range({}, {})",
                    a * per,
                    (a + 1) * per
                ),
            )
            .await;
        }
    }
    // Half the keys update the newest rows, half are new: a CDC upsert.
    let first = s.merge_rows - s.merge_keys / 2;
    run(
        &ctx,
        &format!(
            "CREATE TABLE src (id BIGINT, v BIGINT) AS SELECT value, 1 FROM range({first}, {})",
            first + s.merge_keys
        ),
    )
    .await;
    let merge = |t: &str, on: &str| {
        format!(
            "MERGE INTO {t} t USING src s ON {on} WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)"
        )
    };
    let pruned = merge("m", "t.id = s.id");
    let unpruned = merge("m_off", "t.id + 0 = s.id");
    let mor = merge("m_mor", "t.id = s.id");
    let (r1, _, total) = files(&ctx, &pruned).await;
    let (r2, _, _) = files(&ctx, &unpruned).await;
    // Warms the merge-on-read table as the line above warms the others.
    let (r3, _, _) = files(&ctx, &mor).await;
    assert_eq!(r3, r1, "both MERGEs read the same files");
    let mor_before = dir_bytes(dir.path());
    let t_mor = run(&ctx, &mor).await;
    let b_mor = written_since(dir.path(), &mor_before);
    let cow_before = dir_bytes(dir.path());
    let t_pruned = run(&ctx, &pruned).await;
    let b_cow = written_since(dir.path(), &cow_before);
    let t_unpruned = run(&ctx, &unpruned).await;
    for t in ["m", "m_off", "m_mor"] {
        assert_eq!(
            int(&ctx, &format!("SELECT count(*) FROM {t}")).await,
            s.merge_rows + s.merge_keys / 2
        );
        assert_eq!(int(&ctx, &format!("SELECT sum(v) FROM {t}")).await, s.merge_keys);
    }
    println!(
        "| MERGE {} keys into {} rows, bucket(16, id) | {:.1} ms, read {r1}/{total} | no key pruning: {:.1} ms, read {r2}/{total} | {:.2}x | |",
        s.merge_keys,
        s.merge_rows,
        ms(t_pruned),
        ms(t_unpruned),
        t_pruned.as_secs_f64() / t_unpruned.as_secs_f64()
    );
    println!(
        "| MERGE {} keys into {} rows, merge-on-read | {:.1} ms, wrote {b_mor} bytes | copy-on-write: {:.1} ms, wrote {b_cow} bytes | {:.3}x time, {:.4}x bytes | |",
        s.merge_keys,
        s.merge_rows,
        ms(t_mor),
        ms(t_pruned),
        t_mor.as_secs_f64() / t_pruned.as_secs_f64(),
        b_mor as f64 / b_cow.max(1) as f64
    );
}

async fn optimize_small_files(s: &Size) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    run(
        &ctx,
        "CREATE TABLE o (id BIGINT, ts TIMESTAMP, v DOUBLE) PARTITIONED BY (day(ts))",
    )
    .await;
    let days = s.optimize_days;
    let per = days * 100;
    for a in 0..s.optimize_appends {
        run(
            &ctx,
            &format!(
                "INSERT INTO o SELECT value AS id, to_timestamp_micros({START} + (value % {days}) * {DAY_MICROS} + value) AS ts, CAST(value AS DOUBLE) AS v FROM range({}, {})",
                a * per,
                (a + 1) * per
            ),
        )
        .await;
    }
    let before = int(&ctx, "SELECT count(*) FROM \"o$files\"").await;
    let out = tempfile::tempdir().unwrap();
    let t_copy = run(
        &ctx,
        &format!(
            "COPY (SELECT id, ts, v, CAST(ts AS DATE) AS d FROM o) TO '{}/o' STORED AS PARQUET PARTITIONED BY (d)",
            out.path().display()
        ),
    )
    .await;
    let t_opt = run(&ctx, "ALTER TABLE o EXECUTE optimize").await;
    let after = int(&ctx, "SELECT count(*) FROM \"o$files\"").await;
    assert_eq!(int(&ctx, "SELECT count(*) FROM o").await, s.optimize_appends * per);
    println!(
        "| optimize {before} small files ({} rows) | {:.1} ms, {before} → {after} files | COPY of the same rows: {:.1} ms, {} files | {:.2}x | |",
        s.optimize_appends * per,
        ms(t_opt),
        ms(t_copy),
        dir_files(out.path()),
        t_opt.as_secs_f64() / t_copy.as_secs_f64()
    );
}

/// `cargo bench --bench dml [-- CASE …]`: the cases whose function name
/// contains one of the arguments (all without arguments).
#[tokio::main]
async fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let s = if full { &FULL } else { &TINY };
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    println!("| case | hidden-partitions | baseline (same run) | ratio | files |");
    println!("|---|---|---|---|---|");
    if wanted("delete_one_day") {
        delete_one_day(s).await;
    }
    if wanted("update_one_percent") {
        update_one_percent(s).await;
    }
    if wanted("merge_keys") {
        merge_keys(s).await;
    }
    if wanted("optimize_small_files") {
        optimize_small_files(s).await;
    }
    if wanted("merge_on_read_delete") {
        merge_on_read_delete(s, 2).await;
    }
    if wanted("deletion_vectors") {
        merge_on_read_delete(s, 3).await;
    }
}
