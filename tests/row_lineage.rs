//! Row lineage through writes: the ids and sequence numbers a lineage scan
//! reads after each kind of statement on a format version 3 table.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::{SessionContext, col};

use datafusion::catalog::TableProvider;
use hidden_partitions::plan::PlannedFile;
use hidden_partitions::plan::lineage::{self, ROW_ID, ROW_SEQ};
use hidden_partitions::provider::HiddenPartitionsTable;

/// (id, row id, last updated sequence number) of every row, by id.
async fn lineage_of(ctx: &SessionContext, table: &str) -> Vec<(i64, Option<i64>, Option<i64>)> {
    let provider = ctx.table_provider(table).await.unwrap();
    let ours = provider.downcast_ref::<HiddenPartitionsTable>().unwrap().with_lineage();
    let mut columns = vec![col("id")];
    columns.extend(lineage::columns());
    let batches = ctx
        .read_table(Arc::new(ours))
        .unwrap()
        .select(columns)
        .unwrap()
        .sort(vec![col("id").sort(true, true)])
        .unwrap()
        .collect()
        .await
        .unwrap();
    let mut rows = Vec::new();
    for b in batches {
        let (ids, row_ids, seqs) = (
            b.column(0).as_primitive::<Int64Type>(),
            b.column_by_name(ROW_ID).unwrap().as_primitive::<Int64Type>(),
            b.column_by_name(ROW_SEQ).unwrap().as_primitive::<Int64Type>(),
        );
        for i in 0..b.num_rows() {
            let get = |a: &datafusion::arrow::array::Int64Array| a.is_valid(i).then(|| a.value(i));
            rows.push((ids.value(i), get(row_ids), get(seqs)));
        }
    }
    rows
}

/// Table `t` as of its current snapshot and of that snapshot's parent,
/// each with the files it plans.
async fn last_sides(ctx: &SessionContext) -> [(HiddenPartitionsTable, Vec<PlannedFile>); 2] {
    let provider = ctx.table_provider("t").await.unwrap();
    let now = provider.downcast_ref::<HiddenPartitionsTable>().unwrap().clone();
    let parent = now.snapshot().unwrap().parent_snapshot_id.unwrap();
    let then = now.clone().at(&parent.to_string()).await.unwrap();
    let state = ctx.state();
    let (after, before) = (
        now.plan_files(&state, &[]).await.unwrap().files,
        then.plan_files(&state, &[]).await.unwrap().files,
    );
    [(now, after), (then, before)]
}

/// What `lineage::carried_over` finds for table `t`'s current snapshot
/// against its parent (`lineage`: match by row ids too), read from
/// `location` (the table's own when `None`), and the parent's id.
async fn carried_over_from(
    ctx: &SessionContext,
    lineage: bool,
    location: Option<hidden_partitions::store::TableLocation>,
) -> (lineage::CarriedOver, i64) {
    let [(now, after), (then, before)] = last_sides(ctx).await;
    let location = location.unwrap_or_else(|| now.table().location.clone());
    let carried = lineage::carried_over(
        &location,
        then.metadata(),
        (now.snapshot().unwrap(), &after),
        (then.snapshot().unwrap(), &before),
        lineage,
    )
    .await
    .unwrap();
    (carried, then.snapshot().unwrap().snapshot_id)
}

/// [`carried_over_from`] the table's own location.
async fn carried_over_last(ctx: &SessionContext, lineage: bool) -> (lineage::CarriedOver, i64) {
    carried_over_from(ctx, lineage, None).await
}

/// The GET requests `lineage::carried_over` makes for table `t`'s current
/// snapshot, its manifests already cached, and what it found.
async fn carried_over_requests(ctx: &SessionContext) -> (lineage::CarriedOver, u64) {
    use hidden_partitions::store::observe::{ObservedStore, RequestCounts};
    carried_over_last(ctx, true).await;
    let [(now, _), _] = last_sides(ctx).await;
    let counts = Arc::new(RequestCounts::default());
    let mut location = now.table().location.clone();
    location.store = Arc::new(ObservedStore::new(Arc::clone(&location.store), counts.clone()));
    let (carried, _) = carried_over_from(ctx, true, Some(location)).await;
    (carried, counts.snapshot().get)
}

/// The positions of `carried`'s files, all together.
fn positions(carried: &std::collections::HashMap<object_store::path::Path, Vec<u64>>) -> Vec<u64> {
    carried.values().flatten().copied().collect()
}

async fn run(ctx: &SessionContext, sql: &str) {
    hidden_partitions::execute_sql(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[tokio::test]
async fn rewrites_keep_the_ids_of_the_rows_they_copy_and_renew_the_sequence_of_those_they_change() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = hidden_partitions::session(dir.path()).await.unwrap();
    run(
        &ctx,
        "CREATE TABLE t (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(2, id)) TBLPROPERTIES ('format-version' = '3')",
    )
    .await;
    run(&ctx, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')").await;
    run(&ctx, "INSERT INTO t VALUES (4, 'd'), (5, 'e')").await;
    let inserted = lineage_of(&ctx, "t").await;
    let ids: Vec<i64> = inserted.iter().map(|r| r.1.unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 5, "distinct row ids: {inserted:?}");
    assert!(
        inserted.iter().all(|r| r.2 == Some(if r.0 <= 3 { 1 } else { 2 })),
        "{inserted:?}"
    );
    let expect = |changed: &[(i64, i64)], gone: &[i64]| -> Vec<(i64, Option<i64>, Option<i64>)> {
        inserted
            .iter()
            .filter(|r| !gone.contains(&r.0))
            .map(|r| match changed.iter().find(|c| c.0 == r.0) {
                Some((_, seq)) => (r.0, r.1, Some(*seq)),
                None => *r,
            })
            .collect()
    };
    // Copy-on-write UPDATE (sequence number 3): the rest of the file is copied.
    run(&ctx, "UPDATE t SET v = 'B' WHERE id = 2").await;
    assert_eq!(lineage_of(&ctx, "t").await, expect(&[(2, 3)], &[]));
    // Copy-on-write DELETE (4), then optimize (5): nothing else changes.
    run(&ctx, "DELETE FROM t WHERE id = 4").await;
    assert_eq!(lineage_of(&ctx, "t").await, expect(&[(2, 3)], &[4]));
    run(
        &ctx,
        "ALTER TABLE t EXECUTE optimize(strategy => 'sort', sort_order => 'v DESC')",
    )
    .await;
    assert_eq!(lineage_of(&ctx, "t").await, expect(&[(2, 3)], &[4]));
    run(
        &ctx,
        "ALTER TABLE t EXECUTE optimize(strategy => 'sort', sort_order => 'zorder(id, v)')",
    )
    .await;
    assert_eq!(lineage_of(&ctx, "t").await, expect(&[(2, 3)], &[4]));
    // Merge-on-read UPDATE (7): the new row keeps its id.
    run(
        &ctx,
        "ALTER TABLE t SET TBLPROPERTIES ('write.update.mode' = 'merge-on-read')",
    )
    .await;
    run(&ctx, "UPDATE t SET v = 'A' WHERE id = 1").await;
    assert_eq!(lineage_of(&ctx, "t").await, expect(&[(2, 3), (1, 7)], &[4]));
    // An UPDATE that changes no row keeps every sequence number.
    run(&ctx, "UPDATE t SET v = 'x' WHERE id = 99").await;
    assert_eq!(lineage_of(&ctx, "t").await, expect(&[(2, 3), (1, 7)], &[4]));
}

#[tokio::test]
async fn merge_keeps_the_ids_of_the_rows_it_copies_or_updates_and_gives_inserted_rows_new_ones() {
    for mode in ["copy-on-write", "merge-on-read"] {
        let dir = tempfile::tempdir().unwrap();
        let ctx = hidden_partitions::session(dir.path()).await.unwrap();
        run(
            &ctx,
            &format!(
                "CREATE TABLE t (id BIGINT, v VARCHAR) TBLPROPERTIES ('format-version' = '3', 'write.merge.mode' = '{mode}')"
            ),
        )
        .await;
        run(&ctx, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')").await;
        let before = lineage_of(&ctx, "t").await;
        // Sequence number 2: 1 updated, 2 deleted, 3 and 4 untouched, 5 inserted.
        run(
            &ctx,
            "MERGE INTO t USING (VALUES (1, 'A'), (2, NULL), (5, 'e')) s(id, v) ON t.id = s.id
               WHEN MATCHED AND s.v IS NULL THEN DELETE
               WHEN MATCHED THEN UPDATE SET v = s.v
               WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)",
        )
        .await;
        let after = lineage_of(&ctx, "t").await;
        let old = |id: i64| before.iter().find(|r| r.0 == id).copied().unwrap();
        assert_eq!(
            after[..3],
            [(1, old(1).1, Some(2)), old(3), old(4)],
            "{mode}: {before:?} -> {after:?}"
        );
        let (id, row_id, seq) = after[3];
        assert_eq!((id, seq), (5, Some(2)), "{mode}: {after:?}");
        assert!(
            row_id.is_some_and(|r| before.iter().all(|b| b.1 != Some(r))),
            "{mode}: an inserted row gets an id of its own: {before:?} -> {after:?}"
        );
    }
}

#[tokio::test]
async fn a_table_before_format_version_3_has_no_lineage_to_read() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = hidden_partitions::session(dir.path()).await.unwrap();
    run(&ctx, "CREATE TABLE t (id BIGINT)").await;
    run(&ctx, "INSERT INTO t VALUES (1)").await;
    let provider = ctx.table_provider("t").await.unwrap();
    let ours = provider.downcast_ref::<HiddenPartitionsTable>().unwrap();
    assert_eq!(ours.with_lineage().schema(), ours.schema());
}

#[tokio::test]
async fn a_changelog_leaves_out_the_rows_a_rewrite_copied() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = hidden_partitions::session(dir.path()).await.unwrap();
    run(
        &ctx,
        "CREATE TABLE t (id BIGINT, v VARCHAR) TBLPROPERTIES ('format-version' = '3')",
    )
    .await;
    run(&ctx, "INSERT INTO t SELECT value, 'x' FROM range(5)").await;
    run(&ctx, "UPDATE t SET v = 'y' WHERE id = 3").await;
    let (carried, parent) = carried_over_last(&ctx, true).await;
    // Four rows copied, left out on both sides; the updated row stays.
    assert_eq!(carried.rows, 4);
    assert_eq!(positions(&carried.before), vec![0, 1, 2, 4]);
    assert_eq!(positions(&carried.after).len(), 4);
    let changes = hidden_partitions::execute_sql(
        &ctx,
        &format!("SELECT id, v, _change_type FROM table_changes('t', {parent}, NULL) ORDER BY _change_type"),
    )
    .await
    .unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&changes.last().unwrap().batches)
        .unwrap()
        .to_string();
    assert!(
        text.contains("| 3  | x | DELETE") && text.contains("| 3  | y | INSERT"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 6, "{text}");
    let (_, copying) = carried_over_requests(&ctx).await;
    // An UPDATE of every row copies none: the new file's footer says so
    // (no row stores a sequence number), and nothing else is read.
    run(&ctx, "UPDATE t SET v = 'z'").await;
    let (carried, reads) = carried_over_requests(&ctx).await;
    assert_eq!(carried.rows, 0);
    // The footer of the new file alone (at most two reads), where one that
    // copied rows also read both files' footers and the new file's ids.
    assert!(
        reads <= 2 && copying > 2,
        "{reads} GET requests for a rewrite that copied nothing, {copying} for one that did"
    );
}

#[tokio::test]
async fn a_changelog_of_a_merge_on_read_delete_leaves_out_the_rows_its_file_kept() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = hidden_partitions::session(dir.path()).await.unwrap();
    run(
        &ctx,
        "CREATE TABLE t (id BIGINT) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
    )
    .await;
    run(&ctx, "INSERT INTO t SELECT value FROM range(6)").await;
    run(&ctx, "DELETE FROM t WHERE id = 4").await;
    // Format version 2: no lineage; the file both sides have is matched by position.
    let (carried, _) = carried_over_last(&ctx, false).await;
    assert_eq!(carried.rows, 5);
    assert_eq!(positions(&carried.before), vec![0, 1, 2, 3, 5]);
    assert_eq!(positions(&carried.after), positions(&carried.before));
}

#[tokio::test]
async fn a_changelog_of_a_version_2_rewrite_leaves_out_the_copies_its_new_files_record() {
    use datafusion::arrow::util::display::array_value_to_string;
    use hidden_partitions::plan::copies;
    let dir = tempfile::tempdir().unwrap();
    let ctx = hidden_partitions::session(dir.path()).await.unwrap();
    // Format version 2, two partitions, rows sorted by v when written: the
    // new files' rows are in another order than the old ones'.
    run(
        &ctx,
        "CREATE TABLE t (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(2, id)) TBLPROPERTIES ('sort-order' = 'v DESC')",
    )
    .await;
    run(&ctx, "INSERT INTO t SELECT value, 'x' || value FROM range(40)").await;
    run(&ctx, "INSERT INTO t SELECT value, 'y' || value FROM range(40, 60)").await;
    run(&ctx, "UPDATE t SET v = 'z' WHERE id % 10 = 3").await;
    let (carried, parent) = carried_over_last(&ctx, false).await;
    // 60 rows rewritten, 6 changed: 54 copies hidden on each side.
    assert_eq!(carried.rows, 54);
    assert_eq!(positions(&carried.before).len(), 54);
    assert_eq!(positions(&carried.after).len(), 54);
    let changes = |from: i64| {
        let ctx = ctx.clone();
        async move {
            let sql =
                format!("SELECT id, v, _change_type FROM table_changes('t', {from}, NULL) ORDER BY _change_type, id");
            let batches = hidden_partitions::execute_sql(&ctx, &sql).await.unwrap();
            // Each row as "id v type".
            let mut rows = Vec::new();
            for b in &batches.last().unwrap().batches {
                for i in 0..b.num_rows() {
                    let cells = b.columns().iter().map(|c| array_value_to_string(c, i).unwrap());
                    rows.push(cells.collect::<Vec<_>>().join(" "));
                }
            }
            rows
        }
    };
    let mut expected: Vec<String> = Vec::new();
    for id in [3, 13, 23, 33, 43, 53] {
        let old = if id < 40 { format!("x{id}") } else { format!("y{id}") };
        expected.push(format!("{id} {old} DELETE"));
    }
    expected.extend([3, 13, 23, 33, 43, 53].map(|id| format!("{id} z INSERT")));
    assert_eq!(changes(parent).await, expected);
    // A copy-on-write DELETE copies every row it keeps.
    run(&ctx, "DELETE FROM t WHERE id = 7").await;
    let (carried, parent) = carried_over_last(&ctx, false).await;
    assert!(carried.rows > 0, "{carried:?}");
    assert_eq!(changes(parent).await, vec!["7 x7 DELETE".to_string()]);
    // Footers that do not agree with the snapshot are not used: here a
    // source the snapshot did not remove.
    let [(now, after), (_, before)] = last_sides(&ctx).await;
    let added: Vec<_> = after
        .iter()
        .filter(|f| !before.iter().any(|b| b.path == f.path))
        .cloned()
        .collect();
    let removed: Vec<_> = before
        .iter()
        .filter(|f| !after.iter().any(|a| a.path == f.path))
        .cloned()
        .collect();
    let location = &now.table().location;
    let hidden = copies::recorded(location, &added, &removed).await.unwrap().unwrap();
    // Every row of the files it rewrote but the deleted one.
    assert_eq!(hidden.rows, removed.iter().map(|f| f.live_rows()).sum::<u64>() - 1);
    assert!(
        copies::recorded(location, &added, &removed[..0])
            .await
            .unwrap()
            .is_none()
    );
    assert!(copies::recorded(location, &added, &[]).await.unwrap().is_none());
    // A copy-on-write MERGE copies the target rows no clause acts on.
    run(&ctx, "CREATE TABLE src (id BIGINT, v VARCHAR)").await;
    run(&ctx, "INSERT INTO src VALUES (5, 'm'), (100, 'new')").await;
    run(
        &ctx,
        "MERGE INTO t USING src ON t.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (src.id, src.v)",
    )
    .await;
    let (carried, merged_parent) = carried_over_last(&ctx, false).await;
    assert!(carried.rows > 0, "{carried:?}");
    assert_eq!(
        changes(merged_parent).await,
        vec!["5 x5 DELETE".to_string(), "5 m INSERT".into(), "100 new INSERT".into()]
    );
}
