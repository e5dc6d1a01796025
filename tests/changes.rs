//! Changelog reads over histories that are not one plain line: a rollback
//! another client committed through the REST catalog (a fork), and
//! snapshots removed by expire_snapshots. The ranges that cross them are
//! errors naming the snapshot; the ones that do not still read.

mod common;

use common::readers::runtime;
use common::served::serve_with;
use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use hidden_partitions::{Warehouse, execute_sql, session_with};
use serde_json::json;

fn run(warehouse: &std::path::Path, sql: &str) -> Result<Vec<RecordBatch>, String> {
    let (warehouse, sql) = (warehouse.to_path_buf(), sql.to_string());
    runtime().block_on(async move {
        let ctx = session_with(Warehouse::local(&warehouse).unwrap()).await.unwrap();
        let mut results = execute_sql(&ctx, &sql).await.map_err(|e| e.to_string())?;
        Ok(results.pop().map(|r| r.batches).unwrap_or_default())
    })
}

fn ids(batches: &[RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect()
}

#[test]
fn forked_and_expired_histories_are_errors_naming_the_snapshot() {
    let s = serve_with(|_, _| {});
    let wh = s.warehouse.clone();
    assert_eq!(
        s.call("POST", "/v1/namespaces", Some(json!({"namespace": ["ns"]}))).0,
        200
    );
    run(&wh, "CREATE TABLE ns.t (id BIGINT)").unwrap();
    for i in 1..=3 {
        run(&wh, &format!("INSERT INTO ns.t VALUES ({i})")).unwrap();
    }
    let history = ids(&run(
        &wh,
        "SELECT snapshot_id FROM ns.\"t$snapshots\" ORDER BY sequence_number",
    )
    .unwrap());
    let [s1, s2, s3] = history[..] else {
        panic!("{history:?}")
    };
    // Another client rolls main back to s1; then a new insert: s4's parent is s1.
    let rollback = json!({"requirements": [], "updates": [
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": s1}
    ]});
    let answer = s.call("POST", "/v1/namespaces/ns/tables/t", Some(rollback));
    assert_eq!(answer.0, 200, "{answer:?}");
    run(&wh, "INSERT INTO ns.t VALUES (4)").unwrap();
    let changed = |from: String, to: &str| -> Result<Vec<i64>, String> {
        run(
            &wh,
            &format!("SELECT id FROM table_changes('ns.t', {from}, {to}) ORDER BY id"),
        )
        .map(|b| ids(&b))
    };
    // The current line is s1 ← s4: s2 and s3 are not on it.
    assert_eq!(changed(s1.to_string(), "NULL").unwrap(), vec![4]);
    assert_eq!(changed("NULL".into(), "NULL").unwrap(), vec![1, 4]);
    let e = changed(s2.to_string(), "NULL").unwrap_err();
    assert!(
        e.contains(&format!("snapshot {s2} is not an ancestor of snapshot")),
        "{e}"
    );
    // The rolled-back line still reads up to its own end.
    assert_eq!(changed(s1.to_string(), &s3.to_string()).unwrap(), vec![2, 3]);

    // Expiring everything but the current snapshot: ranges that need an
    // expired parent say which one.
    run(
        &wh,
        "ALTER TABLE ns.t EXECUTE expire_snapshots(retention_threshold => '0s')",
    )
    .unwrap();
    let live = ids(&run(&wh, "SELECT snapshot_id FROM ns.\"t$snapshots\"").unwrap());
    let [s4] = live[..] else { panic!("{live:?}") };
    let e = changed("NULL".into(), "NULL").unwrap_err();
    assert!(
        e.contains(&format!("snapshot {s1} (the parent of snapshot {s4}) was expired")),
        "{e}"
    );
    let e = changed(s1.to_string(), "NULL").unwrap_err();
    assert!(e.contains(&format!("has no snapshot {s1}")), "{e}");
    assert_eq!(changed(s4.to_string(), "NULL").unwrap(), Vec::<i64>::new());
}
