//! DELETE and UPDATE act on the condition as written, never on "no filter"
//! when DataFusion folded or lost it (the SQL cases are in
//! sql-tests/dml/folded_conditions.slt). Here: the provider used from a
//! plain DataFusion session, without the analyzer rule that records the
//! statement, refuses DELETE and UPDATE and leaves the table unchanged.

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use hidden_partitions::{execute_sql, session};

async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

#[tokio::test]
async fn a_session_without_the_rule_cannot_delete_or_update() {
    let dir = tempfile::tempdir().unwrap();
    let ours = session(dir.path()).await.unwrap();
    execute_sql(
        &ours,
        "CREATE TABLE t (id BIGINT, s VARCHAR) PARTITIONED BY (bucket(4, id));
         INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    )
    .await
    .unwrap();
    let provider = ours.table_provider("t").await.unwrap();

    let plain = SessionContext::new();
    plain.register_table("t", provider).unwrap();
    for sql in [
        "DELETE FROM t WHERE false",
        "DELETE FROM t WHERE id = 1",
        "UPDATE t SET s = 'x' WHERE s = NULL",
    ] {
        let err = match plain.sql(sql).await {
            Ok(df) => df.collect().await.unwrap_err(),
            Err(e) => e,
        };
        let msg = err.to_string();
        assert!(
            msg.contains("planned without the hidden-partitions analyzer rule") && msg.contains("nothing was changed"),
            "{sql}: {msg}"
        );
    }
    assert_eq!(count(&ours, "SELECT count(*) FROM t").await, 3);
    assert_eq!(count(&ours, "SELECT count(*) FROM \"t$snapshots\"").await, 1);
    // Reads through the plain session still work.
    assert_eq!(count(&plain, "SELECT count(*) FROM t WHERE id > 1").await, 2);
}
