//! Changelog reads are exact: random statement sequences (INSERT, DELETE, UPDATE, MERGE,
//! INSERT OVERWRITE, optimize, ADD / DROP COLUMN, partition evolution, upgrade to format
//! version 3) run on copy-on-write
//! and merge-on-read tables (v2 position delete files, v3 deletion vectors and row lineage); then for every
//! snapshot S with parent P, `table_changes('t', P, S)` must be the multiset difference of
//! the time-travel reads `"t@P"` and `"t@S"` (rows only before: DELETE; only after: INSERT),
//! with identifier columns its DELETE / INSERT pairs of one `id` as UPDATE_BEFORE /
//! UPDATE_AFTER, and the whole range the concatenation of its snapshots.

mod common;

use std::collections::BTreeMap;

use common::readers::render_batch;
use datafusion::prelude::SessionContext;
use hidden_partitions::{execute_sql, session};
use proptest::prelude::*;
use serde_json::Value;

const LAYOUTS: &[&str] = &[
    "",
    "PARTITIONED BY (bucket(2, id))",
    "PARTITIONED BY (truncate(10, n))",
    "PARTITIONED BY (s)",
];

const MODES: &[&str] = &[
    "",
    "TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')",
    "TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')",
    // Row lineage: copy-on-write rewrites keep copied rows' ids, which the
    // changelog uses to leave them out unread.
    "TBLPROPERTIES ('format-version' = '3')",
    "TBLPROPERTIES ('format-version' = '3', 'write.update.mode' = 'merge-on-read')",
];

const STRINGS: &[&str] = &["a", "ab", "b", "é"];

#[derive(Debug, Clone)]
enum Step {
    Insert(Vec<(i64, Option<i64>, Option<&'static str>, f64)>),
    Delete(String),
    UpdateN(String, i64),
    NegateF(String),
    Merge(Vec<(i64, i64)>, bool),
    Overwrite(String),
    Optimize,
    AddColumn,
    DropColumn,
    SetAdded(String),
    AddPartitionField,
    /// Format version 3 from here on (row lineage starts).
    Upgrade,
}

fn predicate() -> impl Strategy<Value = String> {
    let cmp = proptest::sample::select(vec!["=", "<>", "<", ">="]);
    let leaf = prop_oneof![
        (cmp.clone(), 0i64..20).prop_map(|(op, v)| format!("id {op} {v}")),
        (cmp.clone(), -10i64..10).prop_map(|(op, v)| format!("n {op} {v}")),
        (cmp, proptest::sample::select(STRINGS)).prop_map(|(op, v)| format!("s {op} '{v}'")),
        Just("n IS NULL".to_string()),
    ];
    (leaf.clone(), leaf, any::<bool>()).prop_map(|(a, b, and)| format!("({a} {} {b})", if and { "AND" } else { "OR" }))
}

fn rows() -> impl Strategy<Value = Vec<(i64, Option<i64>, Option<&'static str>, f64)>> {
    proptest::collection::vec(
        (
            0i64..20,
            prop_oneof![1 => Just(None), 5 => (-10i64..10).prop_map(Some)],
            prop_oneof![1 => Just(None), 4 => proptest::sample::select(STRINGS).prop_map(Some)],
            proptest::sample::select(vec![0.0, -0.0, 1.5, f64::NAN]),
        ),
        1..8,
    )
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => rows().prop_map(Step::Insert),
        2 => predicate().prop_map(Step::Delete),
        2 => (predicate(), -3i64..3).prop_map(|(p, d)| Step::UpdateN(p, d)),
        1 => predicate().prop_map(Step::NegateF),
        2 => (proptest::collection::btree_map(0i64..25, -10i64..10, 1..5), any::<bool>())
            .prop_map(|(keys, delete)| Step::Merge(keys.into_iter().collect(), delete)),
        1 => predicate().prop_map(Step::Overwrite),
        1 => Just(Step::Optimize),
        1 => Just(Step::AddColumn),
        1 => Just(Step::DropColumn),
        1 => predicate().prop_map(Step::SetAdded),
        1 => Just(Step::AddPartitionField),
        1 => Just(Step::Upgrade),
    ]
}

fn text(v: Option<i64>) -> String {
    v.map_or("NULL".into(), |v| v.to_string())
}

fn float(f: f64) -> String {
    if f.is_nan() {
        "'NaN'::DOUBLE".into()
    } else if f == 0.0 && f.is_sign_negative() {
        "-0.0::DOUBLE".into()
    } else {
        format!("{f:?}::DOUBLE")
    }
}

/// The statement for `step`, given the added columns that are there now
/// (`added`, updated by ADD / DROP COLUMN; `next` numbers new ones).
fn sql(step: &Step, added: &mut Vec<String>, next: &mut usize) -> Option<String> {
    Some(match step {
        Step::Insert(rows) => {
            let values: Vec<String> = rows
                .iter()
                .map(|(id, n, s, f)| {
                    format!(
                        "({id}, {}, {}, {})",
                        text(*n),
                        s.map_or("NULL".into(), |s| format!("'{s}'")),
                        float(*f)
                    )
                })
                .collect();
            format!("INSERT INTO t (id, n, s, f) VALUES {}", values.join(", "))
        }
        Step::Delete(p) => format!("DELETE FROM t WHERE {p}"),
        Step::UpdateN(p, d) => format!("UPDATE t SET n = n + {d} WHERE {p}"),
        Step::NegateF(p) => format!("UPDATE t SET f = -f WHERE {p}"),
        Step::Merge(keys, delete) => {
            let source: Vec<String> = keys.iter().map(|(k, v)| format!("({k}, {v})")).collect();
            let matched = if *delete {
                "WHEN MATCHED AND src.v < 0 THEN DELETE WHEN MATCHED THEN UPDATE SET n = src.v"
            } else {
                "WHEN MATCHED THEN UPDATE SET n = t.n + src.v"
            };
            format!(
                "MERGE INTO t USING (VALUES {}) src(id, v) ON t.id = src.id {matched} \
                 WHEN NOT MATCHED THEN INSERT (id, n, s, f) VALUES (src.id, src.v, 'm', 0.0)",
                source.join(", ")
            )
        }
        Step::Overwrite(p) => format!("INSERT OVERWRITE t SELECT * FROM t WHERE {p}"),
        Step::Optimize => "ALTER TABLE t EXECUTE optimize".into(),
        Step::AddColumn => {
            *next += 1;
            added.push(format!("c{next}"));
            format!("ALTER TABLE t ADD COLUMN c{next} BIGINT")
        }
        Step::DropColumn => format!("ALTER TABLE t DROP COLUMN {}", added.pop()?),
        Step::SetAdded(p) => format!("UPDATE t SET {} = id * 10 WHERE {p}", added.last()?),
        Step::AddPartitionField => "ALTER TABLE t ADD PARTITION FIELD bucket(3, id)".into(),
        Step::Upgrade => "ALTER TABLE t SET TBLPROPERTIES ('format-version' = '3')".into(),
    })
}

async fn rows_of(ctx: &SessionContext, query: &str) -> Vec<Value> {
    let results = execute_sql(ctx, query).await.unwrap_or_else(|e| panic!("{query}: {e}"));
    results.iter().flat_map(|r| &r.batches).flat_map(render_batch).collect()
}

/// The columns of the table as of snapshot `s`.
async fn columns_at(ctx: &SessionContext, s: i64) -> Vec<String> {
    let results = execute_sql(ctx, &format!("SELECT * FROM \"t@{s}\" LIMIT 0"))
        .await
        .unwrap();
    let schema = results[0].schema.clone();
    schema.fields().iter().map(|f| f.name().clone()).collect()
}

/// The table's columns now (its current schema).
async fn current_columns(ctx: &SessionContext) -> Vec<String> {
    let results = execute_sql(ctx, "SELECT * FROM t LIMIT 0").await.unwrap();
    let schema = results[0].schema.clone();
    schema.fields().iter().map(|f| f.name().clone()).collect()
}

/// `"t@s"` read as rows of `columns` (NULL for a column it does not have).
async fn read_as(ctx: &SessionContext, s: Option<i64>, columns: &[String]) -> Vec<Value> {
    let Some(s) = s else { return Vec::new() };
    let have = columns_at(ctx, s).await;
    let select: Vec<String> = columns
        .iter()
        .map(|c| {
            if have.contains(c) {
                format!("\"{c}\"")
            } else {
                format!("NULL AS \"{c}\"")
            }
        })
        .collect();
    rows_of(ctx, &format!("SELECT {} FROM \"t@{s}\"", select.join(", "))).await
}

type Counts = BTreeMap<String, i64>;

fn counts(rows: &[Value]) -> Counts {
    let mut c = Counts::new();
    for r in rows {
        *c.entry(r.to_string()).or_default() += 1;
    }
    c
}

/// The expected changes of snapshot `s` (parent `p`): row text → +n inserted / −n deleted.
async fn expected(ctx: &SessionContext, p: Option<i64>, s: i64, columns: &[String]) -> Counts {
    let mut c = counts(&read_as(ctx, Some(s), columns).await);
    for (row, n) in counts(&read_as(ctx, p, columns).await) {
        *c.entry(row).or_default() -= n;
    }
    c.retain(|_, n| *n != 0);
    c
}

/// A changelog's rows as the same counts, keeping `keep` of its columns, with
/// each change type's sign; `extra` appends the other changelog columns to the key.
fn changelog_counts(rows: &[Value], columns: &[String], extra: &[&str]) -> Counts {
    let mut c = Counts::new();
    for r in rows {
        let mut object = serde_json::Map::new();
        for col in columns {
            object.insert(col.clone(), r[col].clone());
        }
        let mut key = Value::Object(object).to_string();
        for e in extra {
            key.push_str(&format!(" {}={}", e, r[*e]));
        }
        let sign = match r["_change_type"].as_str() {
            Some("INSERT" | "UPDATE_AFTER") => 1,
            Some("DELETE" | "UPDATE_BEFORE") => -1,
            other => panic!("change type {other:?}"),
        };
        *c.entry(key).or_default() += sign;
    }
    c.retain(|_, n| *n != 0);
    c
}

fn check(layout: usize, mode: usize, first: Vec<(i64, Option<i64>, Option<&'static str>, f64)>, steps: Vec<Step>) {
    common::readers::runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ctx = session(dir.path()).await.unwrap();
        execute_sql(
            &ctx,
            &format!(
                "CREATE TABLE t (id BIGINT, n BIGINT, s VARCHAR, f DOUBLE) {} {}",
                LAYOUTS[layout], MODES[mode]
            ),
        )
        .await
        .unwrap();
        let (mut added, mut next) = (Vec::new(), 0);
        let mut script = Vec::new();
        for step in std::iter::once(Step::Insert(first)).chain(steps) {
            let Some(statement) = sql(&step, &mut added, &mut next) else {
                continue;
            };
            if let Err(e) = execute_sql(&ctx, &statement).await {
                let evolution = matches!(step, Step::AddPartitionField);
                assert!(evolution, "{statement}: {e}\nafter {script:#?}");
            }
            script.push(statement);
        }
        let what = format!(
            "layout {:?}, mode {:?}, statements {script:#?}",
            LAYOUTS[layout], MODES[mode]
        );
        let history = rows_of(
            &ctx,
            "SELECT snapshot_id, parent_id FROM \"t$snapshots\" ORDER BY sequence_number",
        )
        .await;
        let chain: Vec<(i64, Option<i64>)> = history
            .iter()
            .map(|r| (r["snapshot_id"].as_i64().unwrap(), r["parent_id"].as_i64()))
            .collect();
        for (s, p) in &chain {
            let columns = columns_at(&ctx, *s).await;
            let want = expected(&ctx, *p, *s, &columns).await;
            let from = p.map_or("NULL".to_string(), |p| p.to_string());
            let plain = rows_of(&ctx, &format!("SELECT * FROM table_changes('t', {from}, {s})")).await;
            for r in &plain {
                assert!(
                    matches!(r["_change_type"].as_str(), Some("INSERT" | "DELETE")),
                    "{r}\n{what}"
                );
                assert_eq!(r["_commit_snapshot_id"].as_i64(), Some(*s), "{r}\n{what}");
                assert_eq!(r["_change_ordinal"].as_i64(), Some(0), "{r}\n{what}");
            }
            let got = changelog_counts(&plain, &columns, &[]);
            // Each row is listed as often as it changed: no INSERT and DELETE of one row in a snapshot.
            assert_eq!(plain.len() as i64, got.values().map(|n| n.abs()).sum::<i64>(), "{what}");
            assert_eq!(
                got, want,
                "table_changes('t', {from}, {s}) differs from the time-travel difference\n{what}"
            );
            // With identifier column id: the same rows; UPDATE_* exactly for ids on both sides.
            let by_id = rows_of(&ctx, &format!("SELECT * FROM table_changes('t', {from}, {s}, 'id')")).await;
            assert_eq!(changelog_counts(&by_id, &columns, &[]), want, "with 'id'\n{what}");
            let ids = |types: &[&str]| -> std::collections::BTreeSet<String> {
                plain
                    .iter()
                    .filter(|r| types.contains(&r["_change_type"].as_str().unwrap()))
                    .map(|r| r["id"].to_string())
                    .collect()
            };
            let both: std::collections::BTreeSet<String> =
                ids(&["INSERT"]).intersection(&ids(&["DELETE"])).cloned().collect();
            for r in &by_id {
                let t = r["_change_type"].as_str().unwrap();
                let paired = both.contains(&r["id"].to_string());
                assert_eq!(t.starts_with("UPDATE_"), paired, "{r} with 'id'\n{what}");
            }
        }
        // The whole range: every snapshot's changes, in order, with TO's
        // columns; TO NULL is the current snapshot read as the table is now
        // (a column dropped after it is gone, as from `SELECT * FROM t`).
        let columns = current_columns(&ctx).await;
        let mut want = Counts::new();
        for (ordinal, (s, p)) in chain.iter().enumerate() {
            for (row, n) in expected(&ctx, *p, *s, &columns).await {
                want.insert(format!("{row} _change_ordinal={ordinal} _commit_snapshot_id={s}"), n);
            }
        }
        let range = rows_of(&ctx, "SELECT * FROM table_changes('t', NULL, NULL)").await;
        let got = changelog_counts(&range, &columns, &["_change_ordinal", "_commit_snapshot_id"]);
        assert_eq!(
            got, want,
            "table_changes('t', NULL, NULL) is not its snapshots' changes\n{what}"
        );
        // A filter on a column prunes and keeps exactly the matching changes.
        let filtered = rows_of(&ctx, "SELECT * FROM table_changes('t', NULL, NULL) WHERE id < 10").await;
        let kept: Vec<Value> = range
            .iter()
            .filter(|r| r["id"].as_i64().is_some_and(|id| id < 10))
            .cloned()
            .collect();
        assert_eq!(
            changelog_counts(&filtered, &columns, &["_change_ordinal", "_commit_snapshot_id"]),
            changelog_counts(&kept, &columns, &["_change_ordinal", "_commit_snapshot_id"]),
            "WHERE id < 10\n{what}"
        );
    });
}

fn cases() -> u32 {
    common::cases::proptest_cases(4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn changes_are_the_difference_of_time_travel_reads(
        layout in 0..LAYOUTS.len(),
        mode in 0..MODES.len(),
        first in rows(),
        steps in proptest::collection::vec(step(), 1..8),
    ) {
        check(layout, mode, first, steps);
    }
}
