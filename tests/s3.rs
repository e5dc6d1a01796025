//! Tables on a real S3 API server (moto, started by `.ci/run`; see
//! `hidden_partitions::slt::S3Server`). Without a server these tests say
//! loudly that they were skipped; in CI (`HP_S3_REQUIRED=1`) they fail.

use std::process::{Command, Output};

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use hidden_partitions::slt::{S3Server, skipped_without_s3};
use hidden_partitions::{StorageOptions, Warehouse, execute_sql, session_with};

fn server(test: &str) -> Option<S3Server> {
    match S3Server::from_env() {
        Ok(Some(s)) => Some(s),
        Ok(None) => {
            skipped_without_s3(test);
            None
        }
        Err(e) => panic!("{e}"),
    }
}

async fn open(url: &str, options: StorageOptions) -> SessionContext {
    session_with(Warehouse::open(url, options).unwrap()).await.unwrap()
}

async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let results = execute_sql(ctx, sql).await.unwrap();
    results[0].batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

fn cli(server: &S3Server, warehouse: &str, sql: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .args(["--warehouse", warehouse])
        .args(server.cli_args())
        .args(["--format", "csv", "-c", sql])
        .output()
        .expect("binary runs")
}

#[tokio::test]
async fn eight_concurrent_writers_on_s3() {
    let Some(s3) = server("eight_concurrent_writers_on_s3") else {
        return;
    };
    let wh = s3.prefix("writers");
    let ctx = open(&wh, s3.options()).await;
    execute_sql(
        &ctx,
        "CREATE TABLE c (writer BIGINT, n BIGINT, p VARCHAR) PARTITIONED BY (p, bucket(2, n))",
    )
    .await
    .unwrap();
    let writers = 8;
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let (wh, options) = (wh.clone(), s3.options());
            tokio::spawn(async move {
                // Each writer has its own session, like another process would.
                let ctx = open(&wh, options).await;
                for round in 0..3 {
                    let sql = format!(
                        "INSERT INTO c SELECT {w}, value, CASE WHEN value % 2 = 0 THEN 'even' ELSE 'odd' END FROM generate_series({}, {}) AS t(value)",
                        round * 10,
                        round * 10 + 9
                    );
                    execute_sql(&ctx, &sql).await.unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.await.unwrap();
    }
    let ctx = open(&wh, s3.options()).await;
    assert_eq!(count(&ctx, "SELECT count(*) FROM c").await, writers * 30);
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM (SELECT DISTINCT writer, n FROM c)").await,
        writers * 30
    );
    // 1 create + one version per committed insert, no more, no less.
    assert_eq!(count(&ctx, "SELECT count(*) FROM \"c$snapshots\"").await, writers * 3);
}

#[test]
fn written_by_one_process_read_by_another() {
    let Some(s3) = server("written_by_one_process_read_by_another") else {
        return;
    };
    let wh = s3.prefix("processes");
    let o = cli(
        &s3,
        &wh,
        "CREATE TABLE ev (id BIGINT, ts TIMESTAMP) PARTITIONED BY (day(ts));
         INSERT INTO ev VALUES (1, TIMESTAMP '2024-01-01 10:00:00'), (2, TIMESTAMP '2024-01-02 10:00:00')",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cli(
        &s3,
        &wh,
        "SELECT id FROM ev WHERE ts >= TIMESTAMP '2024-01-02 00:00:00'; EXPLAIN FILES SELECT * FROM ev WHERE ts >= TIMESTAMP '2024-01-02 00:00:00'",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "id\n2\ntable,spec_id,files\nev,0,1/2\n"
    );
}

#[tokio::test]
async fn external_tables_and_copy_share_the_warehouse_store() {
    let Some(s3) = server("external_tables_and_copy_share_the_warehouse_store") else {
        return;
    };
    let base = s3.prefix("copy");
    let ctx = open(&format!("{base}/wh"), s3.options()).await;
    execute_sql(
        &ctx,
        &format!(
            "CREATE TABLE t (id INT, s VARCHAR) PARTITIONED BY (s);
             INSERT INTO t VALUES (1, 'a'), (2, 'b');
             COPY (SELECT * FROM t) TO '{base}/exported/' STORED AS PARQUET;
             CREATE EXTERNAL TABLE e STORED AS PARQUET LOCATION '{base}/exported/'"
        ),
    )
    .await
    .unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM e").await, 2);
    // A table with a LOCATION in the same bucket, outside the warehouse.
    execute_sql(
        &ctx,
        &format!("CREATE TABLE l LOCATION '{base}/located' AS SELECT * FROM e"),
    )
    .await
    .unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM l").await, 2);
}

/// `--storage-option` reaches every bucket of the store a statement names,
/// not only the warehouse's: COPY TO, an external table (stored, so a second
/// process finds it) and a file read by its URL.
#[test]
fn storage_options_reach_another_bucket() {
    let Some(s3) = server("storage_options_reach_another_bucket") else {
        return;
    };
    let wh = s3.prefix("other-bucket");
    let other = s3.other_bucket_prefix("exported");
    let o = cli(
        &s3,
        &wh,
        &format!(
            "COPY (SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(id, s)) TO '{other}/part.parquet' STORED AS PARQUET;
             CREATE EXTERNAL TABLE e STORED AS PARQUET LOCATION '{other}/';
             SELECT count(*) AS n FROM e"
        ),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "count\n2\nn\n2\n");
    let o = cli(
        &s3,
        &wh,
        &format!("SELECT id FROM e WHERE s = 'b'; SELECT count(*) AS n FROM '{other}/part.parquet'; DROP TABLE e"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "id\n2\nn\n2\n");
    // DROP TABLE of an external table keeps its files.
    let o = cli(&s3, &wh, &format!("SELECT count(*) AS n FROM '{other}/part.parquet'"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "n\n2\n");
}

#[tokio::test]
async fn bad_input_is_a_clear_error_without_secrets() {
    let Some(s3) = server("bad_input_is_a_clear_error_without_secrets") else {
        return;
    };
    let secret = "hp-super-secret-value";
    let options = s3.options().with("aws_secret_access_key", secret);
    let err = |r: hidden_partitions::Result<Warehouse>| match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    };
    // A bucket that does not exist: named, and said so.
    let wh = Warehouse::open("s3://no-such-bucket-hp/wh", options.clone()).unwrap();
    let e = match session_with(wh).await {
        Ok(_) => panic!("a missing bucket must be an error"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("the bucket does not exist") && e.contains("s3://no-such-bucket-hp/wh"),
        "{e}"
    );
    assert!(!e.contains(secret), "{e}");
    // A URL is never taken for a path.
    let e = err(Warehouse::open("s4://bucket/x", options.clone()));
    assert!(e.contains("unknown URL scheme \"s4\""), "{e}");
    let e = err(Warehouse::open("s3:///x", options.clone()));
    assert!(e.contains("needs a bucket"), "{e}");
    let e = err(Warehouse::open(&format!("s3://{}/wh/../x", s3.bucket), options.clone()));
    assert!(e.contains("'..' are not allowed"), "{e}");
    let e = err(Warehouse::open(&format!("s3://{}/wh?x=1", s3.bucket), options.clone()));
    assert!(e.contains("no query"), "{e}");
    assert!(!std::path::Path::new("s3:").exists());
    // An unknown option is an error, not ignored.
    let e = err(Warehouse::open(
        &format!("s3://{}/wh", s3.bucket),
        options.clone().with("aws_endpont", "x"),
    ));
    assert!(e.contains("\"aws_endpont\" is not a setting of any store"), "{e}");

    // Wrong credentials (here: unsigned requests): the store and the
    // operation are named, the secret is not.
    let wh = s3.prefix("creds");
    let ctx = open(&wh, options.clone()).await;
    execute_sql(&ctx, "CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
        .await
        .unwrap();
    let plan = execute_sql(&ctx, "EXPLAIN ANALYZE SELECT * FROM t").await.unwrap();
    let shown = datafusion::arrow::util::pretty::pretty_format_batches(&plan[0].batches)
        .unwrap()
        .to_string();
    assert!(!shown.contains(secret), "{shown}");
    let unsigned = open(&wh, options.clone().with("aws_skip_signature", "true")).await;
    let e = execute_sql(&unsigned, "SELECT * FROM t").await.unwrap_err().to_string();
    assert!(e.contains("access denied") && e.contains("GET"), "{e}");
    assert!(!e.contains(secret), "{e}");

    // No metadata file holds a secret.
    let o = cli(&s3, &wh, "SELECT * FROM \"t$files\"");
    assert!(o.status.success());
    let store = Warehouse::open(&wh, options.clone()).unwrap();
    use futures::TryStreamExt;
    use object_store::ObjectStoreExt;
    let objects: Vec<_> = store.store.list(Some(&store.root)).try_collect().await.unwrap();
    assert!(objects.len() >= 4);
    for o in objects {
        let bytes = store.store.get(&o.location).await.unwrap().bytes().await.unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains(secret), "{}", o.location);
    }

    // A store without conditional writes is refused for writes, unless the
    // user vouches for a single writer.
    let no_cas = options.clone().with("aws_conditional_put", "disabled");
    let ctx = open(&s3.prefix("nocas"), no_cas.clone()).await;
    let e = execute_sql(&ctx, "CREATE TABLE t (id INT)")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not support conditional writes") && e.contains("single_writer=true"),
        "{e}"
    );
    let ctx = open(&s3.prefix("nocas"), no_cas.with("single_writer", "true")).await;
    execute_sql(&ctx, "CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2)")
        .await
        .unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 2);
}
