//! Random sequences of inserts, partition evolution, schema evolution and
//! row-level writes (DELETE copy-on-write and merge-on-read, UPDATE, MERGE, INSERT OVERWRITE) and
//! maintenance (optimize, expire_snapshots); after every step, queries over
//! the table must return exactly what the same rows held in a plain
//! in-memory table return. The model applies each statement to its own rows
//! in Rust (SQL semantics: a NULL condition changes nothing).

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use hidden_partitions::{execute_sql, session};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Long,
    Text,
    Ts,
}

#[derive(Debug, Clone)]
struct Col {
    name: String,
    kind: Kind,
    values: Vec<Option<i64>>, // Text columns hold an index into WORDS
}

const WORDS: &[&str] = &["a", "ab", "b", "é", "e\u{301}", "日本", ""];

#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<(u64, Option<i64>)>),
    AddPartition(usize, u8),
    DropPartition(usize, u8),
    AddColumn(bool),
    Rename(usize),
    Drop(usize),
    /// DELETE WHERE col = v (text) or col >= v (others).
    Delete(usize, i64),
    /// UPDATE SET target = v2 WHERE cond-col = / >= v.
    Update(usize, usize, i64, i64),
    /// MERGE with these keys on the first BIGINT column: matched rows get
    /// +100, unmatched keys are inserted (other columns NULL).
    Merge(Vec<i64>),
    /// INSERT OVERWRITE (static) with these rows.
    Overwrite(Vec<(u64, Option<i64>)>),
    Optimize,
    Expire,
    /// `write.delete.mode`, `write.update.mode` and `write.merge.mode`:
    /// merge-on-read (true) or copy-on-write; the model is the same either way.
    RowLevelMode(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => proptest::collection::vec((any::<u64>(), proptest::option::weighted(0.85, -30i64..30)), 1..12).prop_map(Op::Insert),
        2 => (0usize..8, 0u8..6).prop_map(|(c, t)| Op::AddPartition(c, t)),
        1 => (0usize..8, 0u8..6).prop_map(|(c, t)| Op::DropPartition(c, t)),
        1 => any::<bool>().prop_map(Op::AddColumn),
        1 => (0usize..8).prop_map(Op::Rename),
        1 => (0usize..8).prop_map(Op::Drop),
        2 => (0usize..8, -30i64..30).prop_map(|(c, v)| Op::Delete(c, v)),
        2 => (0usize..8, 0usize..8, -30i64..30, -30i64..30).prop_map(|(t, c, v, w)| Op::Update(t, c, v, w)),
        1 => proptest::collection::btree_set(-30i64..30, 1..4).prop_map(|k| Op::Merge(k.into_iter().collect())),
        1 => proptest::collection::vec((any::<u64>(), proptest::option::weighted(0.85, -30i64..30)), 0..6).prop_map(Op::Overwrite),
        1 => Just(Op::Optimize),
        1 => Just(Op::Expire),
        2 => any::<bool>().prop_map(Op::RowLevelMode),
    ]
}

fn transform(kind: Kind, t: u8, col: &str) -> String {
    match (kind, t % 3) {
        (Kind::Ts, 0) => format!("day({col})"),
        (Kind::Ts, 1) => format!("month({col})"),
        (Kind::Ts, _) => format!("hour({col})"),
        (_, 0) => col.to_string(),
        (_, 1) => format!("bucket(3, {col})"),
        (_, _) => format!("truncate(2, {col})"),
    }
}

fn literal(kind: Kind, v: i64) -> String {
    match kind {
        Kind::Long => v.to_string(),
        Kind::Text => format!("'{}'", WORDS[v.unsigned_abs() as usize % WORDS.len()]),
        Kind::Ts => {
            let t = chrono::DateTime::from_timestamp(v * 3_600 * 7, 0).unwrap().naive_utc();
            format!("TIMESTAMP '{}'", t.format("%Y-%m-%d %H:%M:%S"))
        }
    }
}

/// The value a code stands for, as far as comparisons go.
fn canon(kind: Kind, v: i64) -> i64 {
    match kind {
        Kind::Text => (v.unsigned_abs() as usize % WORDS.len()) as i64,
        _ => v,
    }
}

/// The SQL condition on `c` and whether a stored value satisfies it (None:
/// NULL, the condition is not true).
fn condition(c: &Col, v: i64) -> (String, Box<dyn Fn(Option<i64>) -> bool>) {
    let q = format!("\"{}\"", c.name);
    let kind = c.kind;
    match kind {
        Kind::Text => (
            format!("{q} = {}", literal(kind, v)),
            Box::new(move |x: Option<i64>| {
                x.is_some_and(|x| WORDS[canon(kind, x) as usize] == WORDS[canon(kind, v) as usize])
            }),
        ),
        _ => (
            format!("{q} >= {}", literal(kind, v)),
            Box::new(move |x: Option<i64>| x.is_some_and(|x| x >= v)),
        ),
    }
}

/// Append rows (one value per column, derived from a seed) to the model and
/// return them as SQL tuples.
fn new_rows(cols: &mut [Col], rows: &[(u64, Option<i64>)]) -> Vec<String> {
    let mut tuples = Vec::new();
    for (seed, v) in rows {
        let vals: Vec<Option<i64>> = (0..cols.len())
            .map(|i| v.map(|x| x + ((seed >> (i * 5)) % 7) as i64 - 3))
            .collect();
        let sql: Vec<String> = cols
            .iter()
            .zip(&vals)
            .map(|(c, v)| match v {
                Some(x) => literal(c.kind, *x),
                None => "NULL".into(),
            })
            .collect();
        tuples.push(format!("({})", sql.join(", ")));
        for (c, v) in cols.iter_mut().zip(vals) {
            c.values.push(v);
        }
    }
    tuples
}

fn reference(cols: &[Col]) -> RecordBatch {
    let fields: Vec<Field> = cols
        .iter()
        .map(|c| {
            let dt = match c.kind {
                Kind::Long => DataType::Int64,
                Kind::Text => DataType::Utf8,
                Kind::Ts => DataType::Timestamp(TimeUnit::Microsecond, None),
            };
            Field::new(&c.name, dt, true)
        })
        .collect();
    let arrays: Vec<ArrayRef> = cols
        .iter()
        .map(|c| -> ArrayRef {
            match c.kind {
                Kind::Long => Arc::new(Int64Array::from(c.values.clone())),
                Kind::Text => Arc::new(StringArray::from(
                    c.values
                        .iter()
                        .map(|v| v.map(|i| WORDS[i.unsigned_abs() as usize % WORDS.len()]))
                        .collect::<Vec<_>>(),
                )),
                Kind::Ts => Arc::new(TimestampMicrosecondArray::from(
                    c.values
                        .iter()
                        .map(|v| v.map(|i| i * 3_600 * 7 * 1_000_000))
                        .collect::<Vec<_>>(),
                )),
            }
        })
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

async fn rows(ctx: &SessionContext, sql: &str) -> String {
    let r = execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    pretty_format_batches(&r[0].batches).unwrap().to_string()
}

async fn compare(ctx: &SessionContext, cols: &[Col], probe: i64, step: usize) {
    let _ = ctx.deregister_table("reference");
    let full = reference(cols);
    ctx.register_table(
        "reference",
        Arc::new(MemTable::try_new(full.schema(), vec![vec![full]]).unwrap()),
    )
    .unwrap();
    let list: Vec<String> = cols
        .iter()
        .map(|c| {
            if c.kind == Kind::Ts {
                format!("CAST(\"{}\" AS TIMESTAMP(6)) AS \"{}\"", c.name, c.name)
            } else {
                format!("\"{}\"", c.name)
            }
        })
        .collect();
    let order: Vec<String> = cols.iter().map(|c| format!("\"{}\"", c.name)).collect();
    let mut predicates = vec!["true".to_string()];
    for c in cols {
        let q = format!("\"{}\"", c.name);
        predicates.push(format!("{q} = {}", literal(c.kind, probe)));
        predicates.push(format!("{q} >= {}", literal(c.kind, probe)));
        predicates.push(format!("{q} IS NULL"));
        predicates.push(format!("NOT ({q} < {})", literal(c.kind, probe + 3)));
    }
    for p in predicates {
        let q = |t: &str| {
            format!(
                "SELECT {} FROM {t} WHERE {p} ORDER BY {}",
                list.join(", "),
                order.join(", ")
            )
        };
        assert_eq!(
            rows(ctx, &q("t")).await,
            rows(ctx, &q("reference")).await,
            "step {step}: {p}"
        );
    }
}

fn run(ops: Vec<Op>, probe: i64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ctx = session(dir.path()).await.unwrap();
        execute_sql(
            &ctx,
            "CREATE TABLE t (id BIGINT, s VARCHAR, ts TIMESTAMP) PARTITIONED BY (bucket(2, id))",
        )
        .await
        .unwrap();
        let mut cols = vec![
            Col {
                name: "id".into(),
                kind: Kind::Long,
                values: vec![],
            },
            Col {
                name: "s".into(),
                kind: Kind::Text,
                values: vec![],
            },
            Col {
                name: "ts".into(),
                kind: Kind::Ts,
                values: vec![],
            },
        ];
        let mut counter = 0;
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Insert(rows) => {
                    let tuples = new_rows(&mut cols, &rows);
                    execute_sql(&ctx, &format!("INSERT INTO t VALUES {}", tuples.join(", ")))
                        .await
                        .unwrap();
                }
                Op::Delete(c, v) => {
                    let col = &cols[c % cols.len()];
                    let (sql, holds) = condition(col, v);
                    execute_sql(&ctx, &format!("DELETE FROM t WHERE {sql}")).await.unwrap();
                    let keep: Vec<bool> = col.values.iter().map(|x| !holds(*x)).collect();
                    for col in cols.iter_mut() {
                        let mut i = 0;
                        col.values.retain(|_| {
                            i += 1;
                            keep[i - 1]
                        });
                    }
                }
                Op::Update(target, c, v, w) => {
                    let (ti, ci) = (target % cols.len(), c % cols.len());
                    let (sql, holds) = condition(&cols[ci], v);
                    let value = literal(cols[ti].kind, w);
                    execute_sql(
                        &ctx,
                        &format!("UPDATE t SET \"{}\" = {value} WHERE {sql}", cols[ti].name),
                    )
                    .await
                    .unwrap();
                    let hit: Vec<bool> = cols[ci].values.iter().map(|x| holds(*x)).collect();
                    for (x, h) in cols[ti].values.iter_mut().zip(hit) {
                        if h {
                            *x = Some(w);
                        }
                    }
                }
                Op::Merge(keys) => {
                    let Some(ki) = cols.iter().position(|c| c.kind == Kind::Long) else {
                        continue;
                    };
                    let name = cols[ki].name.clone();
                    let source: Vec<String> = keys.iter().map(|k| format!("({k})")).collect();
                    execute_sql(
                        &ctx,
                        &format!(
                            "MERGE INTO t USING (SELECT * FROM (VALUES {}) AS v(k)) s ON t.\"{name}\" = s.k
                             WHEN MATCHED THEN UPDATE SET \"{name}\" = t.\"{name}\" + 100
                             WHEN NOT MATCHED THEN INSERT (\"{name}\") VALUES (s.k)",
                            source.join(", ")
                        ),
                    )
                    .await
                    .unwrap();
                    let present: Vec<i64> = cols[ki].values.iter().flatten().copied().collect();
                    for x in cols[ki].values.iter_mut() {
                        if let Some(v) = x
                            && keys.contains(v)
                        {
                            *v += 100;
                        }
                    }
                    for k in &keys {
                        if !present.contains(k) {
                            for (i, c) in cols.iter_mut().enumerate() {
                                c.values.push(if i == ki { Some(*k) } else { None });
                            }
                        }
                    }
                }
                Op::Overwrite(rows) => {
                    for c in cols.iter_mut() {
                        c.values.clear();
                    }
                    let tuples = new_rows(&mut cols, &rows);
                    let sql = if tuples.is_empty() {
                        let nulls: Vec<String> = (0..cols.len()).map(|i| format!("NULL AS n{i}")).collect();
                        format!("INSERT OVERWRITE t SELECT {} WHERE false", nulls.join(", "))
                    } else {
                        format!("INSERT OVERWRITE t VALUES {}", tuples.join(", "))
                    };
                    execute_sql(&ctx, &sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
                }
                Op::Optimize => {
                    execute_sql(&ctx, "ALTER TABLE t EXECUTE optimize").await.unwrap();
                }
                Op::RowLevelMode(merge_on_read) => {
                    let mode = if merge_on_read {
                        "merge-on-read"
                    } else {
                        "copy-on-write"
                    };
                    execute_sql(
                        &ctx,
                        &format!(
                            "ALTER TABLE t SET TBLPROPERTIES ('write.delete.mode' = '{mode}', 'write.update.mode' = '{mode}', 'write.merge.mode' = '{mode}')"
                        ),
                    )
                    .await
                    .unwrap();
                }
                Op::Expire => {
                    execute_sql(
                        &ctx,
                        "ALTER TABLE t EXECUTE expire_snapshots(retention_threshold => '0s')",
                    )
                    .await
                    .unwrap();
                }
                Op::AddPartition(c, tr) => {
                    let col = &cols[c % cols.len()];
                    let _ = execute_sql(
                        &ctx,
                        &format!(
                            "ALTER TABLE t ADD PARTITION FIELD {}",
                            transform(col.kind, tr, &format!("\"{}\"", col.name))
                        ),
                    )
                    .await;
                }
                Op::DropPartition(c, tr) => {
                    let col = &cols[c % cols.len()];
                    let _ = execute_sql(
                        &ctx,
                        &format!(
                            "ALTER TABLE t DROP PARTITION FIELD {}",
                            transform(col.kind, tr, &format!("\"{}\"", col.name))
                        ),
                    )
                    .await;
                }
                Op::AddColumn(text) => {
                    counter += 1;
                    let name = format!("c{counter}");
                    let ty = if text { "VARCHAR" } else { "BIGINT" };
                    execute_sql(&ctx, &format!("ALTER TABLE t ADD COLUMN {name} {ty}"))
                        .await
                        .unwrap();
                    let n = cols[0].values.len();
                    cols.push(Col {
                        name,
                        kind: if text { Kind::Text } else { Kind::Long },
                        values: vec![None; n],
                    });
                }
                Op::Rename(c) => {
                    counter += 1;
                    let i = c % cols.len();
                    let to = format!("r{counter}");
                    execute_sql(
                        &ctx,
                        &format!("ALTER TABLE t RENAME COLUMN \"{}\" TO {to}", cols[i].name),
                    )
                    .await
                    .unwrap();
                    cols[i].name = to;
                }
                Op::Drop(c) => {
                    let i = c % cols.len();
                    if cols.len() > 1
                        && execute_sql(&ctx, &format!("ALTER TABLE t DROP COLUMN \"{}\"", cols[i].name))
                            .await
                            .is_ok()
                    {
                        cols.remove(i);
                    }
                }
            }
            compare(&ctx, &cols, probe, step).await;
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("HP_PROPTEST_CASES").ok().and_then(|v| v.parse::<u32>().ok()).map_or(24, |n| n / 8),
        ..ProptestConfig::default()
    })]

    #[test]
    fn evolved_table_equals_plain_table(ops in proptest::collection::vec(op(), 1..10), probe in -20i64..20) {
        run(ops, probe);
    }
}
