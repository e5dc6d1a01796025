//! End-to-end behaviour through the public Rust API.

use std::sync::Arc;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use hidden_partitions::{SessionContextExt, Warehouse, execute_sql, session};

async fn text(ctx: &SessionContext, sql: &str) -> String {
    let results = execute_sql(ctx, sql).await.unwrap();
    pretty_format_batches(&results.last().unwrap().batches)
        .unwrap()
        .to_string()
}

async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let results = execute_sql(ctx, sql).await.unwrap();
    results[0].batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

#[tokio::test]
async fn tables_are_found_again_by_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    {
        let ctx = session(dir.path()).await.unwrap();
        execute_sql(
            &ctx,
            "CREATE TABLE ev (id BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts));
             INSERT INTO ev VALUES (1, TIMESTAMP '2024-01-01 00:00:00'), (2, TIMESTAMP '2024-01-02 00:00:00')",
        )
        .await
        .unwrap();
    }
    let ctx = session(dir.path()).await.unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM ev").await, 2);
    let tables = text(&ctx, "SHOW TABLES").await;
    assert!(tables.contains("| ev "), "{tables}");
}

#[tokio::test]
async fn explain_shows_selected_over_total_files() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE events (id BIGINT, ts TIMESTAMP, region VARCHAR) PARTITIONED BY (day(ts), region);
         INSERT INTO events VALUES (1, TIMESTAMP '2024-01-01 10:00:00', 'EU'), (2, TIMESTAMP '2024-01-02 10:00:00', 'US'),
                                   (3, TIMESTAMP '2024-01-03 10:00:00', 'EU')",
    )
    .await
    .unwrap();
    let plan = text(
        &ctx,
        "EXPLAIN SELECT * FROM events WHERE ts >= TIMESTAMP '2024-01-02 00:00:00' AND region = 'EU'",
    )
    .await;
    assert!(plan.contains("HiddenPartitionsScan: table=events, files=1/3"), "{plan}");
}

#[tokio::test]
async fn installs_into_a_users_own_session_without_replacing_its_settings() {
    let dir = tempfile::tempdir().unwrap();
    let config = SessionConfig::new().with_target_partitions(3).with_batch_size(1234);
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    let ctx = SessionContext::new_with_state(state);
    ctx.sql("CREATE TABLE mine AS VALUES (1), (2)")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();

    ctx.register_warehouse(Warehouse::local(dir.path()).unwrap())
        .await
        .unwrap();
    ctx.execute_sql("CREATE TABLE hp (id BIGINT) PARTITIONED BY (bucket(4, id)); INSERT INTO hp SELECT * FROM mine")
        .await
        .unwrap();

    assert_eq!(ctx.state().config().target_partitions(), 3);
    assert_eq!(ctx.state().config().batch_size(), 1234);
    assert_eq!(count(&ctx, "SELECT count(*) FROM mine").await, 2);
    assert_eq!(count(&ctx, "SELECT count(*) FROM hp").await, 2);
    // Plain ctx.sql sees the warehouse tables too.
    let batches = ctx
        .sql("SELECT sum(id) FROM hp")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(batches[0].column(0).as_primitive::<Int64Type>().value(0), 3);
}

#[tokio::test]
async fn warehouse_under_its_own_catalog_and_schema_name() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = SessionContext::new();
    ctx.register_catalog("lake", Arc::new(datafusion::catalog::MemoryCatalogProvider::new()));
    ctx.register_warehouse_as(Warehouse::local(dir.path()).unwrap(), "lake", "events")
        .await
        .unwrap();
    ctx.execute_sql(
        "CREATE TABLE lake.events.clicks (id BIGINT, s VARCHAR) PARTITIONED BY (s);
         INSERT INTO lake.events.clicks VALUES (1, 'a'), (2, 'b')",
    )
    .await
    .unwrap();
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM lake.events.clicks WHERE s = 'b'").await,
        1
    );
    assert!(dir.path().join("clicks").join("metadata").exists());
}

/// Several writers append to the same partitions at once: put-if-absent on
/// the metadata version makes exactly one win each round; losers rebase and
/// retry, and every committed row is there exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_into_the_same_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE c (writer BIGINT, n BIGINT, p VARCHAR) PARTITIONED BY (p, bucket(2, n))",
    )
    .await
    .unwrap();
    let writers = 8;
    let mut handles = Vec::new();
    for w in 0..writers {
        let path = dir.path().to_path_buf();
        handles.push(tokio::spawn(async move {
            // Each writer has its own session, like another process would.
            let ctx = session(&path).await.unwrap();
            for round in 0..3 {
                let sql = format!(
                    "INSERT INTO c SELECT {w}, value, CASE WHEN value % 2 = 0 THEN 'even' ELSE 'odd' END FROM generate_series({}, {}) AS t(value)",
                    round * 10,
                    round * 10 + 9
                );
                execute_sql(&ctx, &sql).await.unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let ctx = session(dir.path()).await.unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM c").await, writers * 30);
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM (SELECT DISTINCT writer, n FROM c)").await,
        writers * 30
    );
    let per_writer = execute_sql(&ctx, "SELECT writer, count(*) FROM c GROUP BY writer ORDER BY writer")
        .await
        .unwrap();
    let counts: Vec<i64> = per_writer[0]
        .batches
        .iter()
        .flat_map(|b| b.column(1).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    assert_eq!(counts, vec![30; writers as usize]);
    // 1 create + one version per committed insert.
    let versions = std::fs::read_dir(dir.path().join("c").join("metadata"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".metadata.json")
        })
        .count();
    assert_eq!(versions as i64, 1 + writers * 3);
}

#[tokio::test]
async fn failed_insert_leaves_the_table_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE f (id BIGINT NOT NULL, s VARCHAR) PARTITIONED BY (s); INSERT INTO f VALUES (1, 'a')",
    )
    .await
    .unwrap();
    // A NUL byte can't be a partition directory: the insert fails before committing.
    let err = execute_sql(&ctx, "INSERT INTO f VALUES (2, 'b'), (3, concat('x', chr(0), 'y'))")
        .await
        .unwrap_err();
    assert!(err.to_string().to_lowercase().contains("nul"), "{err}");
    assert_eq!(count(&ctx, "SELECT count(*) FROM f").await, 1);
    let data_files = walk(&dir.path().join("f").join("data"));
    assert_eq!(data_files, 1, "files of the failed insert were cleaned up");
}

fn walk(p: &std::path::Path) -> usize {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.map(|e| e.unwrap().path())
                .map(|p| if p.is_dir() { walk(&p) } else { 1 })
                .sum()
        })
        .unwrap_or(0)
}

#[tokio::test]
async fn time_travel_by_snapshot_id_and_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(&ctx, "CREATE TABLE tt (id BIGINT, s VARCHAR) PARTITIONED BY (s)")
        .await
        .unwrap();
    let mut stamps = Vec::new();
    for i in 1..=3 {
        execute_sql(&ctx, &format!("INSERT INTO tt VALUES ({i}, 'p{i}')"))
            .await
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        stamps.push(chrono::Utc::now());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let snaps = execute_sql(
        &ctx,
        "SELECT snapshot_id FROM \"tt$snapshots\" ORDER BY sequence_number",
    )
    .await
    .unwrap();
    let ids: Vec<i64> = snaps[0]
        .batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    assert_eq!(ids.len(), 3);
    for (n, id) in ids.iter().enumerate() {
        assert_eq!(
            count(&ctx, &format!("SELECT count(*) FROM \"tt@{id}\"")).await,
            n as i64 + 1
        );
    }
    for (n, t) in stamps.iter().enumerate() {
        let sql = format!(
            "SELECT count(*) FROM \"tt@{}\"",
            t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        );
        assert_eq!(count(&ctx, &sql).await, n as i64 + 1, "{sql}");
    }
    // Pruning works on the old snapshot too.
    let files = text(
        &ctx,
        &format!("EXPLAIN FILES SELECT * FROM \"tt@{}\" WHERE s = 'p1'", ids[1]),
    )
    .await;
    assert!(files.contains("1/2"), "{files}");
    // Read-only.
    let err = execute_sql(&ctx, &format!("INSERT INTO \"tt@{}\" VALUES (9, 'x')", ids[0]))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("read by time travel cannot be written"),
        "{err}"
    );
}

/// One insert per day makes one manifest per day: a one-day query reads one
/// manifest, the others are skipped whole by their partition summaries.
#[tokio::test]
async fn manifests_are_skipped_by_their_partition_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE d (id BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts))",
    )
    .await
    .unwrap();
    for day in 1..=5 {
        execute_sql(&ctx, &format!("INSERT INTO d VALUES ({day}, TIMESTAMP '2024-01-0{day} 10:00:00'), ({day}, TIMESTAMP '2024-01-0{day} 11:00:00')"))
            .await
            .unwrap();
    }
    let plan = text(
        &ctx,
        "EXPLAIN ANALYZE SELECT * FROM d WHERE ts >= TIMESTAMP '2024-01-04 00:00:00'",
    )
    .await;
    assert!(plan.contains("spec0_manifest_files_skipped_by_summary=3"), "{plan}");
    assert!(plan.contains("files=2/5"), "{plan}");
    assert_eq!(
        count(
            &ctx,
            "SELECT count(*) FROM d WHERE ts >= TIMESTAMP '2024-01-04 00:00:00'"
        )
        .await,
        4
    );
}

/// A join's dynamic filter rules out whole manifests at run time by their
/// partition summaries, then single files by their partition values (with
/// join-key pruning off, which would rule them out at planning time).
#[tokio::test]
async fn dynamic_filters_skip_whole_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "SET datafusion.execution.target_partitions = 1;
         SET hidden_partitions.join_prune_max_keys = 0;
         CREATE TABLE f (customer BIGINT, v BIGINT) PARTITIONED BY (customer);
         INSERT INTO f SELECT value, value + 0 AS v FROM generate_series(1, 10) AS t(value);
         INSERT INTO f SELECT value, value + 0 AS v FROM generate_series(11, 20) AS t(value);
         INSERT INTO f SELECT value, value + 0 AS v FROM generate_series(21, 30) AS t(value);
         CREATE TABLE k (customer BIGINT); INSERT INTO k VALUES (12), (15)",
    )
    .await
    .unwrap();
    let sql = "SELECT sum(f.v) FROM f JOIN k ON f.customer = k.customer";
    let plan = text(&ctx, &format!("EXPLAIN ANALYZE {sql}")).await;
    assert!(
        plan.contains("files_pruned_at_runtime_by_manifest_summary=20"),
        "{plan}"
    );
    assert!(plan.contains("files_opened=2"), "{plan}");
    assert_eq!(count(&ctx, sql).await, 27);
}

#[tokio::test]
async fn explain_analyze_shows_the_keys_of_a_join() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "SET datafusion.optimizer.enable_dynamic_filter_pushdown = false;
         CREATE TABLE f (customer BIGINT, v BIGINT) PARTITIONED BY (customer);
         INSERT INTO f SELECT value % 30, value FROM generate_series(1, 300) AS t(value);
         CREATE TABLE k (customer BIGINT); INSERT INTO k VALUES (12), (15), (NULL)",
    )
    .await
    .unwrap();
    let sql = "SELECT sum(f.v) FROM f JOIN k ON f.customer = k.customer";
    let plan = text(&ctx, &format!("EXPLAIN ANALYZE {sql}")).await;
    assert!(
        plan.contains("table=f, files=2/30, join_keys=[customer IN 2 keys from a join]")
            && plan.contains("files_opened=2"),
        "{plan}"
    );
    assert!(plan.contains("join_keys=2"), "the scan's metric: {plan}");
    // Past the limit: the keys' range prunes (customers 12 to 15).
    execute_sql(&ctx, "SET hidden_partitions.join_prune_max_keys = 1")
        .await
        .unwrap();
    let plan = text(&ctx, &format!("EXPLAIN ANALYZE {sql}")).await;
    assert!(
        plan.contains("files=4/30")
            && plan.contains("join_keys=[customer BETWEEN 12 AND 15 from a join (more than 1 keys)]"),
        "{plan}"
    );
    // customers 12 and 15: v = 12, 42, …, 282 and 15, 45, …, 285
    assert_eq!(count(&ctx, sql).await, 1470 + 1500);
}

#[tokio::test]
async fn insert_under_a_small_memory_limit_keeps_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "SET datafusion.runtime.memory_limit = '16M';
         CREATE TABLE m (id BIGINT, ts TIMESTAMP, pad VARCHAR) PARTITIONED BY (day(ts));
         INSERT INTO m SELECT value, to_timestamp_micros((value % 500) * 86400000000), repeat('x', 40)
         FROM range(300000) AS t(value)",
    )
    .await
    .unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM m").await, 300_000);
    assert_eq!(count(&ctx, "SELECT count(DISTINCT id) FROM m").await, 300_000);
    // The budget forced partitions out more than once: more files than partitions.
    let files = count(&ctx, "SELECT count(*) FROM \"m$files\"").await;
    assert!(files > 500, "{files} files");
}

#[tokio::test]
async fn write_buffer_size_bounds_buffered_rows() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "SET hidden_partitions.write_buffer_size = 1000000;
         CREATE TABLE b (id BIGINT, p INT) PARTITIONED BY (p);
         INSERT INTO b SELECT value, CAST(value % 4 AS INT) FROM range(400000) AS t(value)",
    )
    .await
    .unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM b").await, 400_000);
    let files = count(&ctx, "SELECT count(*) FROM \"b$files\"").await;
    assert!(
        files > 4,
        "{files} files: the 1 MB buffer should have written partitions out early"
    );
}

/// Concurrent UPDATEs of the same rows, a DELETE, and appends into another
/// partition: every UPDATE either commits (possibly after rebasing on a fresh
/// snapshot) or fails with a conflict error and changes nothing, so each
/// surviving row's counter equals the number of UPDATEs that succeeded; the
/// appends into the other partition never conflict, and no row is lost or
/// duplicated.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_updates_deletes_and_appends() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE TABLE acct (id BIGINT, p VARCHAR, counter BIGINT) PARTITIONED BY (p)",
    )
    .await
    .unwrap();
    execute_sql(
        &ctx,
        "INSERT INTO acct SELECT value, 'a', 0 FROM generate_series(1, 50) AS t(value)",
    )
    .await
    .unwrap();

    let mut updaters = Vec::new();
    for _ in 0..3 {
        let path = dir.path().to_path_buf();
        updaters.push(tokio::spawn(async move {
            let ctx = session(&path).await.unwrap();
            let mut ok = 0i64;
            for _ in 0..4 {
                match execute_sql(&ctx, "UPDATE acct SET counter = counter + 1 WHERE p = 'a'").await {
                    Ok(_) => ok += 1,
                    Err(e) => assert!(e.to_string().contains("conflict"), "{e}"),
                }
            }
            ok
        }));
    }
    let deleter = {
        let path = dir.path().to_path_buf();
        tokio::spawn(async move {
            let ctx = session(&path).await.unwrap();
            loop {
                match execute_sql(&ctx, "DELETE FROM acct WHERE p = 'a' AND id % 10 = 0").await {
                    Ok(_) => break,
                    Err(e) => assert!(e.to_string().contains("conflict"), "{e}"),
                }
            }
        })
    };
    let mut appenders = Vec::new();
    for w in 0..2i64 {
        let path = dir.path().to_path_buf();
        appenders.push(tokio::spawn(async move {
            let ctx = session(&path).await.unwrap();
            for round in 0..4i64 {
                let start = 1000 + w * 100 + round * 10;
                let sql = format!(
                    "INSERT INTO acct SELECT value, 'b', 0 FROM generate_series({start}, {}) AS t(value)",
                    start + 9
                );
                // Appends into 'b' cannot match `p = 'a'`: they never conflict.
                execute_sql(&ctx, &sql).await.unwrap();
            }
        }));
    }
    let mut updates = 0;
    for h in updaters {
        updates += h.await.unwrap();
    }
    deleter.await.unwrap();
    for h in appenders {
        h.await.unwrap();
    }
    assert!(updates > 0, "no UPDATE committed");

    let ctx = session(dir.path()).await.unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM acct WHERE p = 'a'").await, 45);
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM acct WHERE p = 'a' AND id % 10 = 0").await,
        0
    );
    assert_eq!(
        count(
            &ctx,
            &format!("SELECT count(*) FROM acct WHERE p = 'a' AND counter = {updates}")
        )
        .await,
        45,
        "every surviving row was updated exactly {updates} times"
    );
    assert_eq!(count(&ctx, "SELECT count(*) FROM acct WHERE p = 'b'").await, 80);
    assert_eq!(count(&ctx, "SELECT count(DISTINCT id) FROM acct").await, 125);
    // One snapshot per committed statement: create's empty one is not a snapshot.
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM \"acct$snapshots\"").await,
        1 + updates + 1 + 8
    );
}

/// Time travel to a snapshot that expire_snapshots removed is a clear error;
/// the current snapshot and tagged ones stay readable.
#[tokio::test]
async fn time_travel_to_an_expired_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(&ctx, "CREATE TABLE x (id BIGINT, d DATE) PARTITIONED BY (d)")
        .await
        .unwrap();
    execute_sql(&ctx, "INSERT INTO x VALUES (1, DATE '2024-01-01')")
        .await
        .unwrap();
    let first = count(&ctx, "SELECT snapshot_id FROM \"x$snapshots\"").await;
    execute_sql(&ctx, "INSERT INTO x VALUES (2, DATE '2024-01-02')")
        .await
        .unwrap();
    assert_eq!(count(&ctx, &format!("SELECT count(*) FROM \"x@{first}\"")).await, 1);
    execute_sql(
        &ctx,
        "ALTER TABLE x EXECUTE expire_snapshots(retention_threshold => '0s')",
    )
    .await
    .unwrap();
    let err = execute_sql(&ctx, &format!("SELECT count(*) FROM \"x@{first}\""))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("table x has no snapshot {first}")), "{err}");
    assert!(err.contains("expired"), "{err}");
    assert_eq!(count(&ctx, "SELECT count(*) FROM x").await, 2);
    // The expired snapshot's file is gone only if no live snapshot reads it:
    // both rows' files are still read by the current one.
    assert_eq!(count(&ctx, "SELECT count(*) FROM \"x$files\"").await, 2);
}

/// A commit serializes each new version through the loader's own checks:
/// metadata a reader would refuse (here a bucket count beyond Iceberg's
/// 32-bit int, built through the Rust API past the SQL checks) is never
/// written (issue 21, item 7).
#[tokio::test]
async fn a_version_that_readers_would_refuse_is_never_written() {
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use hidden_partitions::table::{PartitionFieldDef, Table};
    use hidden_partitions::transform::Transform;
    let dir = tempfile::tempdir().unwrap();
    let warehouse = Warehouse::local(dir.path()).unwrap();
    let schema = Schema::new(vec![Field::new("id", DataType::Int64, true)]);
    let partition = [PartitionFieldDef {
        source: "id".into(),
        transform: Transform::Bucket(16),
        name: None,
    }];
    let mut metadata = Table::initial_metadata(&schema, &partition).unwrap();
    metadata.table_specs[0].partition_spec.fields[0].transform = Transform::Bucket(3_000_000_000);
    let err = warehouse
        .table_location("bad")
        .create(&metadata, &hidden_partitions::table::iceberg_commit::IcebergFiles)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("refusing to commit a metadata version that readers would refuse"),
        "{err}"
    );
    assert!(err.contains("3000000000"), "{err}");
    assert_eq!(walk(&dir.path().join("bad")), 0, "nothing may be written");
}

/// One table whose metadata cannot be read (damaged on disk) does not hide
/// the others from SHOW TABLES and information_schema.tables; reading it
/// says what is wrong (issue 21, item 7).
#[tokio::test]
async fn a_damaged_table_does_not_break_the_warehouse_listing() {
    let dir = tempfile::tempdir().unwrap();
    {
        let ctx = session(dir.path()).await.unwrap();
        execute_sql(
            &ctx,
            "CREATE TABLE good (id BIGINT) PARTITIONED BY (bucket(4, id));
             INSERT INTO good VALUES (1), (2);
             CREATE TABLE damaged (id BIGINT) PARTITIONED BY (bucket(16, id))",
        )
        .await
        .unwrap();
    }
    let version = dir.path().join("damaged/metadata/v1.metadata.json");
    let json = std::fs::read_to_string(&version).unwrap();
    assert!(json.contains("bucket[16]"), "{json}");
    std::fs::write(&version, json.replace("bucket[16]", "bucket[3000000000]")).unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let listed = text(
        &ctx,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    )
    .await;
    assert!(listed.contains("damaged") && listed.contains("good"), "{listed}");
    let shown = text(&ctx, "SHOW TABLES").await;
    assert!(shown.contains("damaged") && shown.contains("good"), "{shown}");
    assert_eq!(count(&ctx, "SELECT count(*) FROM good").await, 2);
    let err = execute_sql(&ctx, "SELECT * FROM damaged")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("bucket[3000000000]"), "{err}");
}
