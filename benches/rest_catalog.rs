//! The Iceberg REST catalog (`serve`) against direct access, in one run:
//!
//! 1. `loadTable` of a table of 10,000 data files, warm: the median of
//!    `GET /v1/namespaces/public/tables/many` through the server (an HTTP
//!    client in this process) beside the median of loading the table
//!    directly (`WarehouseSchema::load_table`, what the server does).
//!    Target: ≤ 2 ms through the server.
//! 2. 8 clients × 50 one-row appends at once: through the server (sessions
//!    with `--catalog http://…`, on a table of their own: each INSERT writes its files and commits
//!    by `POST`; a 409 makes it reload and try again) beside 8 sessions on
//!    the warehouse itself, in 3 rounds that alternate which goes first
//!    (fresh tables each). Every commit lands; throughput through the
//!    server within 1.5× of direct (the median of the rounds' ratios).
//! 3. pyiceberg's `plan_files` for one day of the 10,000-file table,
//!    through our REST server and through its own `SqlCatalog` (the same
//!    metadata file registered there), best of 7 each, in a child Python
//!    (`HP_ICEBERG_PYTHON`). Target: REST no slower.
//!
//! `cargo bench --features ballista --bench rest_catalog`; under `cargo
//! test` it runs once on small sizes; `HP_BENCH_REST_SIZES=files,clients,appends,loads`
//! sets other sizes; `HP_BENCH_REST_ONLY=direct` (or `server`) runs only
//! that path of part 2, for profiling it alone; `HP_BENCH_REST_LOG=1` has
//! the server print each request and its time on stderr.

use std::time::Instant;

use hidden_partitions::serve::{ServeOptions, bind};
use hidden_partitions::session::session_with_catalog;
use hidden_partitions::{StorageOptions, Warehouse, WarehouseSchema, execute_sql, session_with};

mod support;

/// The allocator of the `hidden-partitions` binary that runs `serve`.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

async fn run(ctx: &datafusion::prelude::SessionContext, sql: &str) {
    execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (files, clients, appends, loads) = match std::env::var("HP_BENCH_REST_SIZES") {
        // files,clients,appends,loads: for profiling one part at other sizes.
        Ok(s) => {
            let n: Vec<usize> = s
                .split(',')
                .map(|v| v.trim().parse().expect("HP_BENCH_REST_SIZES"))
                .collect();
            (n[0], n[1], n[2], n[3])
        }
        Err(_) if full => (10_000, 8, 50, 200),
        Err(_) => (50, 2, 3, 5),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let wh = dir.path().join("wh");
        let warehouse = || Warehouse::open(wh.to_str().unwrap(), StorageOptions::new()).unwrap();
        let ctx = session_with(warehouse()).await.unwrap();
        run(
            &ctx,
            &format!(
                "CREATE TABLE many (id BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts));
                 INSERT INTO many SELECT value AS id, to_timestamp_micros((946684800 + value * 86400) * 1000000) AS ts
                 FROM generate_series(1, {files}) AS s(value)"
            ),
        )
        .await;
        let options = ServeOptions {
            port: 0,
            log_requests: std::env::var("HP_BENCH_REST_LOG").is_ok(),
            ..Default::default()
        };
        let (address, server) = bind(warehouse(), options).await.unwrap();
        tokio::spawn(server);
        let url = format!("http://{address}");

        // 1. loadTable, warm.
        let http = reqwest::Client::new();
        let load_url = format!("{url}/v1/namespaces/public/tables/many");
        let mut through = Vec::new();
        for i in 0..loads + 5 {
            let start = Instant::now();
            let response = http.get(&load_url).send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200);
            let body = response.bytes().await.unwrap();
            std::hint::black_box(body);
            if i >= 5 {
                through.push(start.elapsed().as_secs_f64());
            }
        }
        let ws = ctx.catalog("datafusion").and_then(|c| c.schema("public")).unwrap();
        let ws = ws.downcast_ref::<WarehouseSchema>().unwrap();
        let mut direct = Vec::new();
        for i in 0..loads + 5 {
            let start = Instant::now();
            std::hint::black_box(ws.load_table("many").await.unwrap());
            if i >= 5 {
                direct.push(start.elapsed().as_secs_f64());
            }
        }
        let (through, direct) = (median(through), median(direct));
        println!("| loadTable of a {files}-file table, warm (median of {loads}) | through the server | direct |");
        println!("|---|---|---|");
        println!("| | {:.3} ms | {:.3} ms |", through * 1e3, direct * 1e3);
        if full {
            println!(
                "target ≤ 2 ms through the server: {}",
                if through <= 0.002 { "met" } else { "NOT met" }
            );
        }

        // 2. Concurrent appends, in rounds that alternate which way goes
        // first (this VM's speed drifts by 2× within minutes); each way of
        // each round gets a table of its own, starting empty.
        let rounds = if full { 3 } else { 1 };
        let append_all = |table: String, through_server: bool| {
            let url = url.clone();
            let wh = wh.clone();
            async move {
                let start = Instant::now();
                let mut tasks = Vec::new();
                for c in 0..clients {
                    let (url, wh, table) = (url.clone(), wh.clone(), table.clone());
                    tasks.push(tokio::spawn(async move {
                        let client_dir = tempfile::tempdir().unwrap();
                        let session = match through_server {
                            true => session_with_catalog(
                                Warehouse::open(client_dir.path().to_str().unwrap(), StorageOptions::new()).unwrap(),
                                &url,
                            )
                            .await
                            .unwrap(),
                            false => {
                                session_with(Warehouse::open(wh.to_str().unwrap(), StorageOptions::new()).unwrap())
                                    .await
                                    .unwrap()
                            }
                        };
                        let mut retries = 0;
                        for i in 0..appends {
                            let sql = format!("INSERT INTO public.{table} VALUES ({}, '{table}')", c * 100_000 + i);
                            loop {
                                match execute_sql(&session, &sql).await {
                                    Ok(_) => break,
                                    Err(e) if e.to_string().contains("conflict") => retries += 1,
                                    Err(e) => panic!("{sql}: {e}"),
                                }
                            }
                        }
                        retries
                    }));
                }
                let mut retries = 0;
                for t in tasks {
                    retries += t.await.unwrap();
                }
                (start.elapsed().as_secs_f64(), retries)
            }
        };
        let commits = (clients * appends) as f64;
        let n = clients * appends;
        if let Ok(only) = std::env::var("HP_BENCH_REST_ONLY") {
            let through_server = match only.as_str() {
                "direct" => false,
                "server" => true,
                other => panic!("HP_BENCH_REST_ONLY={other:?}: expected direct or server"),
            };
            run(&ctx, "CREATE TABLE appends_only (id BIGINT, who VARCHAR)").await;
            let (s, retries) = append_all("appends_only".to_string(), through_server).await;
            let every_row_once = support::answer(
                &ctx,
                &format!("SELECT count(*) = {n} AND count(DISTINCT id) = {n} AS ok FROM appends_only"),
            )
            .await;
            assert!(every_row_once.contains("true"), "every commit lands once ({only} only)");
            println!("{only} only: {:.1} commits/s, {retries} statements retried", commits / s);
            return;
        }
        println!();
        println!("| {clients} clients × {appends} appends | direct commits/s | through the server commits/s | statements retried (direct / server) | server time / direct time |");
        println!("|---|---|---|---|---|");
        let mut ratios = Vec::new();
        for round in 0..rounds {
            let (direct, server) = (format!("appends_direct_{round}"), format!("appends_server_{round}"));
            run(
                &ctx,
                &format!("CREATE TABLE {direct} (id BIGINT, who VARCHAR); CREATE TABLE {server} (id BIGINT, who VARCHAR)"),
            )
            .await;
            let ((direct_s, direct_retries), (server_s, server_retries)) = if round % 2 == 0 {
                let d = append_all(direct.clone(), false).await;
                (d, append_all(server.clone(), true).await)
            } else {
                let s = append_all(server.clone(), true).await;
                (append_all(direct.clone(), false).await, s)
            };
            let both = format!("(SELECT * FROM {direct} UNION ALL SELECT * FROM {server})");
            let every_row_once = support::answer(
                &ctx,
                &format!(
                    "SELECT bool_and(n = {n} AND ids = {n}) AND count(*) = 2 AS ok FROM
                     (SELECT who, count(*) AS n, count(DISTINCT id) AS ids FROM {both} GROUP BY who)"
                ),
            )
            .await;
            assert!(every_row_once.contains("true"), "every commit lands once (round {round})");
            let ratio = server_s / direct_s;
            ratios.push(ratio);
            println!(
                "| round {} ({} first) | {:.1} | {:.1} | {direct_retries} / {server_retries} | {ratio:.2} |",
                round + 1,
                if round % 2 == 0 { "direct" } else { "server" },
                commits / direct_s,
                commits / server_s
            );
        }
        println!("every row of every round is there once");
        println!(
            "server time / direct time, median of {rounds} rounds = {:.2} (target ≤ 1.5)",
            median(ratios)
        );

        // 3. pyiceberg's plan_files: REST against its SqlCatalog.
        let Ok(python) = std::env::var("HP_ICEBERG_PYTHON") else {
            println!("pyiceberg plan_files: not run (set HP_ICEBERG_PYTHON)");
            return;
        };
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/rest_plan_files.py");
        let metadata = {
            let table_dir = wh.join("many/metadata");
            let latest = std::fs::read_dir(&table_dir)
                .unwrap()
                .filter_map(|e| {
                    let name = e.unwrap().file_name().to_string_lossy().to_string();
                    name.strip_prefix('v')?
                        .strip_suffix(".metadata.json")?
                        .parse::<u64>()
                        .ok()
                })
                .max()
                .unwrap();
            table_dir.join(format!("v{latest}.metadata.json"))
        };
        let day = (chrono::NaiveDate::from_ymd_opt(2000, 1, 1).unwrap() + chrono::Days::new(files as u64 / 2)).to_string();
        let o = std::process::Command::new(python)
            .arg(script)
            .args([
                &url,
                metadata.to_str().unwrap(),
                dir.path().join("sql.db").to_str().unwrap(),
                &day,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        println!();
        println!("| pyiceberg plan_files, one day of {files} files (best of 7) | seconds | files |");
        println!("|---|---|---|");
        println!("| through our REST server | {:.4} | {} |", v["rest"], v["rest_files"]);
        println!("| through its SqlCatalog | {:.4} | {} |", v["sql"], v["sql_files"]);
        println!(
            "REST / SqlCatalog = {:.2} (target ≤ 1)",
            v["rest"].as_f64().unwrap() / v["sql"].as_f64().unwrap()
        );
    });
}
