//! Random sequences of inserts, partition evolution and schema evolution; after
//! every step, queries over the evolved table must return exactly what the same
//! rows held in a plain in-memory table return.

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
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => proptest::collection::vec((any::<u64>(), proptest::option::weighted(0.85, -30i64..30)), 1..12).prop_map(Op::Insert),
        2 => (0usize..8, 0u8..6).prop_map(|(c, t)| Op::AddPartition(c, t)),
        1 => (0usize..8, 0u8..6).prop_map(|(c, t)| Op::DropPartition(c, t)),
        1 => any::<bool>().prop_map(Op::AddColumn),
        1 => (0usize..8).prop_map(Op::Rename),
        1 => (0usize..8).prop_map(Op::Drop),
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
                    let mut tuples = Vec::new();
                    for (seed, v) in &rows {
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
                    execute_sql(&ctx, &format!("INSERT INTO t VALUES {}", tuples.join(", ")))
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
