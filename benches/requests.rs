//! Object store requests and time of a one-day query on a table of one file
//! per day, against DataFusion's ListingTable over the very same files, on a
//! local directory and on the S3 test server (when `HP_S3_ENDPOINT` is set;
//! `.ci/run` starts one, or start `.ci/s3_server.py PORT hp-test` yourself).
//!
//! Every session's stores are wrapped in a counting `ObservedStore`, so the
//! requests (GET / HEAD / LIST / PUT / DELETE) of each query are exact.
//! Cold: a new session, first query. Warm: the same query again in that
//! session (best of 5). Also: the time to read the selected data file alone
//! (DataFusion over that one file, warm), the floor for any reader.
//!
//! `cargo bench --bench requests` (10,000 files); under `cargo test` 30 files.

use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::prelude::SessionContext;
use hidden_partitions::slt::S3Server;
use hidden_partitions::store::connect::build_store;
use hidden_partitions::store::observe::{ObservedStore, RequestCounts, Requests};
use hidden_partitions::store::url::parse_location;
use hidden_partitions::{StorageOptions, Warehouse, execute_sql, session_with};
use object_store::ObjectStore;

const DAY_MICROS: i64 = 86_400_000_000;
const START: i64 = 1_577_836_800_000_000; // 2020-01-01
const ROWS_PER_DAY: i64 = 100;

struct Target {
    name: &'static str,
    base: String,
    options: StorageOptions,
}

/// A plain DataFusion session whose store for `url` counts its requests.
fn plain(url: &str, options: &StorageOptions) -> (SessionContext, Arc<RequestCounts>) {
    let place = parse_location(url).unwrap();
    let counts = Arc::new(RequestCounts::default());
    let store: Arc<dyn ObjectStore> = Arc::new(ObservedStore::new(
        build_store(&place, options).unwrap(),
        counts.clone(),
    ));
    let ctx = SessionContext::new();
    let store_url: &ObjectStoreUrl = &place.store_url;
    ctx.register_object_store(store_url.as_ref(), store);
    (ctx, counts)
}

async fn run(ctx: &SessionContext, sql: &str) -> String {
    let r = execute_sql(ctx, sql).await.unwrap();
    pretty_format_batches(&r.last().unwrap().batches).unwrap().to_string()
}

/// One measured step: its time and the requests it made.
struct Step {
    secs: f64,
    requests: Requests,
}

impl Step {
    fn cell(&self) -> String {
        format!("{:.2} ms, {}", self.secs * 1e3, short(&self.requests))
    }
}

async fn step<F: std::future::Future<Output = T>, T>(counts: &RequestCounts, f: F) -> (T, Step) {
    let before = counts.snapshot();
    let start = Instant::now();
    let out = f.await;
    let secs = start.elapsed().as_secs_f64();
    (
        out,
        Step {
            secs,
            requests: counts.snapshot().since(&before),
        },
    )
}

/// First run of `sql`, then the best of 5 warm runs.
async fn measure(ctx: &SessionContext, counts: &RequestCounts, sql: &str) -> (String, Step, Step) {
    let (answer, first) = step(counts, run(ctx, sql)).await;
    let mut warm = Step {
        secs: f64::MAX,
        requests: Requests::default(),
    };
    for _ in 0..5 {
        let (again, s) = step(counts, run(ctx, sql)).await;
        assert_eq!(again, answer);
        if s.secs < warm.secs {
            warm = s;
        }
    }
    (answer, first, warm)
}

fn short(r: &Requests) -> String {
    let mut parts = Vec::new();
    for (n, name) in [(r.get, "GET"), (r.head, "HEAD"), (r.list, "LIST")] {
        if n > 0 {
            parts.push(format!("{n} {name}"));
        }
    }
    if parts.is_empty() {
        "0".into()
    } else {
        format!("{} ({})", r.total(), parts.join(", "))
    }
}

#[tokio::main]
async fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let days: i64 = if full { 10_000 } else { 30 };
    let mut targets = Vec::new();
    let local = tempfile::tempdir().unwrap();
    targets.push(Target {
        name: "local directory",
        base: local.path().to_str().unwrap().to_string(),
        options: StorageOptions::new(),
    });
    match S3Server::from_env() {
        Ok(Some(s3)) => targets.push(Target {
            name: "S3 server (moto)",
            base: s3.prefix("bench-requests"),
            options: s3.options(),
        }),
        Ok(None) => hidden_partitions::slt::skipped_without_s3("the S3 part of the requests benchmark"),
        Err(e) => panic!("{e}"),
    }
    println!("| store | files | reader | setup (per session) | first query | warm query (best of 5) |");
    println!("|---|---|---|---|---|---|");
    for t in &targets {
        let warehouse = format!("{}/wh", t.base);
        let ctx = session_with(Warehouse::open(&warehouse, t.options.clone()).unwrap())
            .await
            .unwrap();
        execute_sql(
            &ctx,
            "CREATE TABLE ev (id BIGINT, ts TIMESTAMP, amount DOUBLE) PARTITIONED BY (day(ts))",
        )
        .await
        .unwrap();
        // One file per day, written in slices so memory stays small.
        let slice = 1_000;
        let mut day = 0;
        while day < days {
            let to = (day + slice).min(days);
            execute_sql(
                &ctx,
                &format!(
                    "INSERT INTO ev SELECT value, to_timestamp_micros({START} + (value / {ROWS_PER_DAY}) * {DAY_MICROS} + (value % {ROWS_PER_DAY}) * 1000000), CAST(value % 97 AS DOUBLE) FROM generate_series({}, {}) AS t(value)",
                    day * ROWS_PER_DAY,
                    to * ROWS_PER_DAY - 1
                ),
            )
            .await
            .unwrap();
            day = to;
        }
        let one = days / 2;
        let lo = START + one * DAY_MICROS;
        let range = format!(
            "ts >= to_timestamp_micros({lo}) AND ts < to_timestamp_micros({})",
            lo + DAY_MICROS
        );
        let query =
            |table: &str, filter: &str| format!("SELECT count(*) AS n, sum(amount) AS s FROM {table} WHERE {filter}");
        // Ours: a fresh session (it lists the warehouse once), then the query.
        let counts_for_open = RequestCounts::default();
        let (opened, setup) = step(&counts_for_open, async {
            let wh = Warehouse::open(&warehouse, t.options.clone()).unwrap();
            let counts = Arc::clone(&wh.requests);
            (session_with(wh).await.unwrap(), counts)
        })
        .await;
        let (ctx, counts) = opened;
        let setup = Step {
            secs: setup.secs,
            requests: counts.snapshot(),
        };
        let (answer, first, warm) = measure(&ctx, &counts, &query("ev", &range)).await;
        row(t.name, days, "hidden-partitions (session start)", &setup, &first, &warm);
        let selected = run(
            &ctx,
            &format!(
                "SELECT path FROM \"ev$files\" WHERE partition = 'ts_day={}'",
                day_string(one)
            ),
        )
        .await;
        let file = selected
            .lines()
            .nth(3)
            .and_then(|l| l.split('|').nth(1))
            .map(|p| p.trim().to_string())
            .unwrap();
        // The baseline: ListingTable over the same files (CREATE EXTERNAL
        // TABLE lists them and reads footers), with the Hive partition
        // column or with the same filter on ts.
        let data = format!("{warehouse}/ev/data/");
        let create = format!(
            "CREATE EXTERNAL TABLE lt (id BIGINT, ts TIMESTAMP, amount DOUBLE, ts_day DATE) STORED AS PARQUET PARTITIONED BY (ts_day) LOCATION '{data}'"
        );
        for (label, filter) in [
            (
                "ListingTable, `WHERE ts_day = …` (CREATE EXTERNAL TABLE)",
                format!("ts_day = DATE '{}'", day_string(one)),
            ),
            ("ListingTable, same filter on ts (CREATE EXTERNAL TABLE)", range.clone()),
        ] {
            let (plain_ctx, plain_counts) = plain(&data, &t.options);
            let (_, setup) = step(&plain_counts, run(&plain_ctx, &create)).await;
            let (b, first, warm) = measure(&plain_ctx, &plain_counts, &query("lt", &filter)).await;
            assert_eq!(b, answer);
            row(t.name, days, label, &setup, &first, &warm);
        }
        // The floor: DataFusion reading just the selected file.
        let file_url = format!("{warehouse}/ev/{file}");
        let (plain_ctx, plain_counts) = plain(&file_url, &t.options);
        let (_, setup) = step(
            &plain_counts,
            run(
                &plain_ctx,
                &format!("CREATE EXTERNAL TABLE one STORED AS PARQUET LOCATION '{file_url}'"),
            ),
        )
        .await;
        let (b, first, warm) = measure(&plain_ctx, &plain_counts, &query("one", "true")).await;
        assert_eq!(b, answer);
        row(
            t.name,
            1,
            "DataFusion over the selected file alone",
            &setup,
            &first,
            &warm,
        );
    }
}

fn row(store: &str, files: i64, reader: &str, setup: &Step, first: &Step, warm: &Step) {
    println!(
        "| {store} | {files} | {reader} | {} | {} | {} |",
        setup.cell(),
        first.cell(),
        warm.cell()
    );
}

fn day_string(day: i64) -> String {
    chrono::DateTime::from_timestamp_micros(START + day * DAY_MICROS)
        .unwrap()
        .format("%Y-%m-%d")
        .to_string()
}
