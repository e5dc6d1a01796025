//! End-to-end: SQL through a `SessionContext` with the functions registered.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, Int64Array, LargeBinaryArray, RecordBatch, StringArray, StructArray,
};
use arrow::datatypes::{DataType, Field, Fields, Schema};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::MemTable;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;

use super::super::arrow_type::{EXTENSION_NAME_KEY, VARIANT_EXTENSION, variant_data_type};
use super::super::json::parse_json_to_vecs;
use super::super::{VariantTypePlanner, register_functions};

fn ctx() -> SessionContext {
    let ctx = SessionContext::new();
    register_functions(&ctx);
    ctx
}

async fn batches(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

/// All cells of all rows as text (`NULL` for nulls).
async fn rows(ctx: &SessionContext, sql: &str) -> Vec<Vec<String>> {
    let bs = batches(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let opts = FormatOptions::default().with_null("NULL");
    let mut out = vec![];
    for b in &bs {
        let fmts: Vec<_> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            out.push(fmts.iter().map(|f| f.value(r).to_string()).collect());
        }
    }
    out
}

async fn one(ctx: &SessionContext, sql: &str) -> String {
    let r = rows(ctx, sql).await;
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r[0][0].clone()
}

async fn err(ctx: &SessionContext, sql: &str) -> String {
    match batches(ctx, sql).await {
        Ok(b) => panic!("{sql} succeeded: {b:?}"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn parse_json_and_to_json() {
    let ctx = ctx();
    let r = rows(
        &ctx,
        r#"SELECT to_json(parse_json(j)) FROM (VALUES ('{"b":[true,null],"a":1}'), ('1.50'), (NULL), ('null'), ('-1e308')) t(j)"#,
    )
    .await;
    let flat: Vec<_> = r.into_iter().map(|mut c| c.remove(0)).collect();
    assert_eq!(flat, [r#"{"a":1,"b":[true,null]}"#, "1.5", "NULL", "null", "-1.0E308"]);
    // constant-folded at planning time
    assert_eq!(
        one(&ctx, r#"SELECT to_json(parse_json('{"x": [1, 2.5, "s"]}'))"#).await,
        r#"{"x":[1,2.5,"s"]}"#
    );
    assert_eq!(one(&ctx, "SELECT to_json(parse_json(NULL))").await, "NULL");
    assert_eq!(one(&ctx, "SELECT to_json(NULL)").await, "NULL");
    let e = err(&ctx, r#"SELECT parse_json('{"a":1,"a":2}')"#).await;
    assert!(e.contains("duplicate key \"a\""), "{e}");
    let e = err(&ctx, "SELECT parse_json(j) FROM (VALUES ('{')) t(j)").await;
    assert!(e.contains("invalid JSON"), "{e}");
    assert_eq!(
        one(&ctx, "SELECT to_json(try_parse_json(j)) FROM (VALUES ('{')) t(j)").await,
        "NULL"
    );
    assert_eq!(one(&ctx, r#"SELECT to_json(try_parse_json('[1]'))"#).await, "[1]");
    let e = err(&ctx, "SELECT to_json(1)").await;
    assert!(e.contains("expects a VARIANT"), "{e}");
}

#[tokio::test]
async fn variant_output_type_is_exact() {
    let ctx = ctx();
    for sql in [
        "SELECT parse_json(j) AS v FROM (VALUES ('1')) t(j)",
        "SELECT try_parse_json('1') AS v",
        "SELECT variant_get(parse_json(j), '$.a') AS v FROM (VALUES ('{\"a\":1}')) t(j)",
        "SELECT try_variant_get(parse_json(j), '$.a', 'variant') AS v FROM (VALUES ('{\"a\":1}')) t(j)",
        "SELECT to_variant(x) AS v FROM (VALUES (1), (NULL)) t(x)",
    ] {
        let df = ctx.sql(sql).await.unwrap();
        let field = df.schema().field(0).clone();
        assert_eq!(field.data_type(), &variant_data_type(), "{sql}");
        assert_eq!(
            field.metadata().get(EXTENSION_NAME_KEY).map(String::as_str),
            Some(VARIANT_EXTENSION),
            "{sql}"
        );
        for b in df.collect().await.unwrap() {
            assert_eq!(b.column(0).data_type(), &variant_data_type(), "{sql}");
        }
    }
}

#[tokio::test]
async fn variant_get_types_and_paths() {
    let ctx = ctx();
    let doc = r#"{"a":{"b":[7,"8",2.5,true,null]},"s":"x","d":"2024-01-02","ts":"2024-01-02 03:04:05","n":3000000000,"dec":12.345,"k.e y":1}"#;
    let cases = [
        ("$.a.b[0]", "int", "7"),
        ("$.a.b[0]", "bigint", "7"),
        ("$.a.b[0]", "smallint", "7"),
        ("$.a.b[0]", "tinyint", "7"),
        ("$.a.b[1]", "int", "8"),
        ("$.a.b[2]", "int", "2"),
        ("$.a.b[2]", "double", "2.5"),
        ("$.a.b[2]", "float", "2.5"),
        ("$.a.b[2]", "decimal(5,2)", "2.50"),
        ("$.a.b[3]", "boolean", "true"),
        ("$.a.b[3]", "int", "1"),
        ("$.a.b[4]", "int", "NULL"),
        ("$.a.b[9]", "int", "NULL"),
        ("$.a.zz", "int", "NULL"),
        ("$.s.t", "int", "NULL"),
        ("$.a", "string", r#"{"b":[7,"8",2.5,true,null]}"#),
        ("$.a.b", "string", r#"[7,"8",2.5,true,null]"#),
        ("$.a.b[0]", "string", "7"),
        ("$.s", "string", "x"),
        ("$['s']", "string", "x"),
        ("$[\"k.e y\"]", "int", "1"),
        ("$.d", "date", "2024-01-02"),
        ("$.ts", "timestamp_ntz", "2024-01-02T03:04:05"),
        ("$.ts", "timestamp", "2024-01-02T03:04:05Z"),
        ("$.s", "binary", "78"),
        ("$.n", "bigint", "3000000000"),
        ("$.dec", "decimal(4,1)", "12.3"),
        ("$.dec", "string", "12.345"),
        ("$.dec", "DECIMAL(10, 3)", "12.345"),
    ];
    for (path, ty, expected) in cases {
        let path = path.replace('\'', "''");
        let sql = format!("SELECT variant_get(parse_json(j), '{path}', '{ty}') FROM (VALUES ('{doc}')) t(j)");
        assert_eq!(one(&ctx, &sql).await, expected, "{sql}");
        let sql = format!("SELECT try_variant_get(parse_json(j), '{path}', '{ty}') FROM (VALUES ('{doc}')) t(j)");
        assert_eq!(one(&ctx, &sql).await, expected, "{sql}");
    }
    // failed casts: error vs NULL
    for (path, ty) in [
        ("$.s", "int"),
        ("$.n", "int"),
        ("$.a", "int"),
        ("$.dec", "decimal(2,1)"),
        ("$.s", "date"),
    ] {
        let sql = format!("SELECT variant_get(parse_json(j), '{path}', '{ty}') FROM (VALUES ('{doc}')) t(j)");
        let e = err(&ctx, &sql).await;
        assert!(e.contains("cannot be cast into"), "{sql}: {e}");
        let sql = format!("SELECT try_variant_get(parse_json(j), '{path}', '{ty}') FROM (VALUES ('{doc}')) t(j)");
        assert_eq!(one(&ctx, &sql).await, "NULL", "{sql}");
    }
    assert!(
        err(&ctx, "SELECT variant_get(parse_json('1'), 'a', 'int')")
            .await
            .contains("must start with '$'")
    );
    assert!(
        err(&ctx, "SELECT variant_get(parse_json('1'), '$', 'struct<a int>')")
            .await
            .contains("unsupported target type")
    );
    assert!(
        err(
            &ctx,
            "SELECT variant_get(parse_json('1'), '$', x) FROM (VALUES ('int')) t(x)"
        )
        .await
        .contains("literal")
    );
    // path from a column: parsed per row
    let r = rows(
        &ctx,
        r#"SELECT variant_get(parse_json(j), p, 'int') FROM (VALUES ('{"a":1}', '$.a'), ('[5,6]', '$[1]'), ('[5,6]', NULL), ('[5,6]', '$[1]')) t(j, p)"#,
    )
    .await;
    assert_eq!(r, vec![vec!["1"], vec!["6"], vec!["NULL"], vec!["6"]]);
    assert_eq!(one(&ctx, "SELECT variant_get(NULL, '$.a', 'int')").await, "NULL");
    assert_eq!(
        one(
            &ctx,
            "SELECT to_json(variant_get(parse_json('{\"a\":[1,{\"b\":2}]}'), '$.a[1]'))"
        )
        .await,
        r#"{"b":2}"#
    );
}

#[tokio::test]
async fn is_variant_null_and_schemas() {
    let ctx = ctx();
    let r = rows(
        &ctx,
        "SELECT is_variant_null(parse_json(j)), schema_of_variant(parse_json(j)) FROM (VALUES ('null'), ('1'), (NULL), ('{\"b\":[\"x\"],\"a\":1}')) t(j)",
    )
    .await;
    assert_eq!(
        r,
        vec![
            vec!["true", "VOID"],
            vec!["false", "BIGINT"],
            vec!["false", "NULL"],
            vec!["false", "OBJECT<a: BIGINT, b: ARRAY<STRING>>"],
        ]
    );
    assert_eq!(
        one(
            &ctx,
            "SELECT is_variant_null(variant_get(parse_json('{\"a\":null}'), '$.a'))"
        )
        .await,
        "true"
    );
}

#[tokio::test]
async fn schema_of_variant_agg_merges_across_partitions() {
    let ctx = ctx();
    let schema = Arc::new(Schema::new(vec![
        Field::new("g", DataType::Utf8, false),
        Field::new("j", DataType::Utf8, true),
    ]));
    let part = |g: Vec<&str>, j: Vec<Option<&str>>| {
        RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(StringArray::from(g)), Arc::new(StringArray::from(j))],
        )
        .unwrap()
    };
    let table = MemTable::try_new(
        schema.clone(),
        vec![
            vec![part(vec!["x", "y"], vec![Some(r#"{"a":1,"c":[1]}"#), Some("1")])],
            vec![part(vec!["x", "y"], vec![Some(r#"{"b":"s","a":2.5}"#), Some("\"s\"")])],
            vec![part(vec!["x", "y"], vec![None, None])],
        ],
    )
    .unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();
    let r = rows(
        &ctx,
        "SELECT g, schema_of_variant_agg(parse_json(j)) FROM t GROUP BY g ORDER BY g",
    )
    .await;
    assert_eq!(
        r,
        vec![
            vec!["x", "OBJECT<a: DECIMAL(21,1), b: STRING, c: ARRAY<BIGINT>>"],
            vec!["y", "VARIANT"]
        ]
    );
    assert_eq!(
        one(
            &ctx,
            "SELECT schema_of_variant_agg(parse_json(j)) FROM t WHERE j IS NULL"
        )
        .await,
        "VOID"
    );
}

#[tokio::test]
async fn to_variant_from_scalars() {
    let ctx = ctx();
    let r = rows(
        &ctx,
        "SELECT to_json(to_variant(42)), to_json(to_variant('hi')), to_json(to_variant(DATE '2024-01-01')), \
         to_json(to_variant(named_struct('b', 1, 'a', make_array(true, false)))), to_json(to_variant(2.5)), \
         to_json(to_variant(CAST(1.50 AS DECIMAL(5,2)))), to_json(to_variant(NULL)), \
         to_json(to_variant(parse_json('[1]')))",
    )
    .await;
    assert_eq!(
        r,
        vec![vec![
            "42",
            "\"hi\"",
            "\"2024-01-01\"",
            r#"{"a":[true,false],"b":1}"#,
            "2.5",
            "1.5",
            "NULL",
            "[1]"
        ]]
    );
}

/// A batch with one variant column `v` of the given child layout.
fn variant_batch(children: Vec<(&str, ArrayRef)>, nulls: Option<Vec<bool>>) -> RecordBatch {
    let fields: Fields = children
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let s = StructArray::try_new(
        fields.clone(),
        children.into_iter().map(|(_, a)| a).collect(),
        nulls.map(|n| n.into()),
    )
    .unwrap();
    let schema = Schema::new(vec![Field::new("v", DataType::Struct(fields), true)]);
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(s)]).unwrap()
}

fn refs(x: &[Vec<u8>]) -> Vec<&[u8]> {
    x.iter().map(|b| b.as_slice()).collect()
}

fn encoded(jsons: &[&str]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    jsons.iter().map(|j| parse_json_to_vecs(j).unwrap()).unzip()
}

#[tokio::test]
async fn any_binary_layout_and_malformed_rows() {
    let (m, v) = encoded(&[r#"{"a":1}"#, "[true]"]);
    let layouts: Vec<(ArrayRef, ArrayRef)> = vec![
        (
            Arc::new(BinaryArray::from(refs(&m))),
            Arc::new(BinaryArray::from(refs(&v))),
        ),
        (
            Arc::new(LargeBinaryArray::from(refs(&m))),
            Arc::new(LargeBinaryArray::from(refs(&v))),
        ),
        (
            Arc::new(BinaryViewArray::from(refs(&m))),
            Arc::new(BinaryViewArray::from(refs(&v))),
        ),
    ];
    for (ma, va) in layouts {
        let ctx = ctx();
        let batch = variant_batch(vec![("value", va), ("metadata", ma)], None);
        ctx.register_batch("t", batch).unwrap();
        assert_eq!(
            rows(&ctx, "SELECT to_json(v) FROM t").await,
            vec![vec![r#"{"a":1}"#], vec!["[true]"]]
        );
        assert_eq!(
            rows(&ctx, "SELECT variant_get(v, '$[0]', 'string') FROM t").await,
            vec![vec!["NULL"], vec!["true"]]
        );
    }
    // malformed bytes: errors from the strict forms, NULL from the try forms
    let ctx = ctx();
    let bad_meta: ArrayRef = Arc::new(BinaryArray::from(vec![
        &[0x01u8, 0, 0][..],
        &[0x01, 0, 0],
        &[0x07, 0, 0],
    ]));
    let bad_val: ArrayRef = Arc::new(BinaryArray::from(vec![&[0x0cu8, 1][..], &[0x18, 1, 2], &[0x00]]));
    ctx.register_batch(
        "bad",
        variant_batch(vec![("metadata", bad_meta), ("value", bad_val)], None),
    )
    .unwrap();
    let e = err(&ctx, "SELECT to_json(v) FROM bad").await;
    assert!(e.contains("malformed variant: truncated"), "{e}");
    let e = err(&ctx, "SELECT variant_get(v, '$', 'int') FROM bad").await;
    assert!(e.contains("malformed variant"), "{e}");
    assert_eq!(
        rows(&ctx, "SELECT try_variant_get(v, '$', 'int') FROM bad").await,
        vec![vec!["1"], vec!["NULL"], vec!["NULL"]]
    );
}

fn write_parquet(path: &std::path::Path, batch: &RecordBatch) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

#[tokio::test]
async fn reads_parquet_written_like_spark() {
    let dir = tempfile::tempdir().unwrap();
    let (m, v) = encoded(&[r#"{"a":{"b":5},"tags":["x","y"]}"#, "null", r#"{"a":{"b":"6"}}"#]);
    // Spark order (value first), no extension marker, a null row.
    let batch = variant_batch(
        vec![
            ("value", Arc::new(BinaryArray::from(refs(&v))) as ArrayRef),
            ("metadata", Arc::new(BinaryArray::from(refs(&m))) as ArrayRef),
        ],
        Some(vec![true, true, false]),
    );
    let path = dir.path().join("plain.parquet");
    write_parquet(&path, &batch);
    let ctx = ctx();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{}'",
        path.display()
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    assert_eq!(
        rows(
            &ctx,
            "SELECT to_json(v), variant_get(v, '$.a.b', 'bigint'), is_variant_null(v) FROM t"
        )
        .await,
        vec![
            vec![r#"{"a":{"b":5},"tags":["x","y"]}"#, "5", "false"],
            vec!["null", "NULL", "true"],
            vec!["NULL", "NULL", "false"],
        ]
    );
    assert_eq!(
        one(&ctx, "SELECT schema_of_variant_agg(v) FROM t").await,
        "OBJECT<a: OBJECT<b: BIGINT>, tags: ARRAY<STRING>>"
    );
    let df = ctx
        .read_parquet(path.to_str().unwrap(), Default::default())
        .await
        .unwrap();
    assert_eq!(df.count().await.unwrap(), 3);
}

#[tokio::test]
async fn reads_shredded_parquet() {
    let dir = tempfile::tempdir().unwrap();
    // rows: {"a":1,"c":true} (a shredded, c in value), 5 (unshredded), {"a":"x"} (a not an int)
    let (meta, _) = parse_json_to_vecs(r#"{"a":0,"c":true}"#).unwrap();
    let (_, c_obj) = {
        let md = super::super::metadata::VariantMetadata::try_new(&meta).unwrap();
        let mut b = super::super::encode::VariantBuilder::with_metadata(&md).unwrap();
        let mut f = vec![(b.add_key("c"), 0)];
        b.append_bool(true);
        b.finish_object(0, &mut f).unwrap();
        b.finish()
    };
    let a_value: ArrayRef = Arc::new(BinaryArray::from(vec![None, None, Some(&[0x05u8, b'x'][..])]));
    let a_typed: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, None]));
    let a = StructArray::from(vec![
        (Arc::new(Field::new("value", DataType::Binary, true)), a_value),
        (Arc::new(Field::new("typed_value", DataType::Int64, true)), a_typed),
    ]);
    let typed = StructArray::try_new(
        Fields::from(vec![Field::new("a", a.data_type().clone(), true)]),
        vec![Arc::new(a)],
        Some(vec![true, false, true].into()),
    )
    .unwrap();
    let value: ArrayRef = Arc::new(BinaryArray::from(vec![Some(&c_obj[..]), Some(&[0x0cu8, 5][..]), None]));
    let metadata: ArrayRef = Arc::new(BinaryArray::from(vec![&meta[..], &meta[..], &meta[..]]));
    let batch = variant_batch(
        vec![
            ("metadata", metadata),
            ("value", value),
            ("typed_value", Arc::new(typed)),
        ],
        None,
    );
    let path = dir.path().join("shredded.parquet");
    write_parquet(&path, &batch);
    let ctx = ctx();
    ctx.register_parquet("s", path.to_str().unwrap(), Default::default())
        .await
        .unwrap();
    assert_eq!(
        rows(
            &ctx,
            "SELECT to_json(v), try_variant_get(v, '$.a', 'int'), variant_get(v, '$.c', 'string') FROM s"
        )
        .await,
        vec![
            vec![r#"{"a":1,"c":true}"#, "1", "true"],
            vec!["5", "NULL", "NULL"],
            vec![r#"{"a":"x"}"#, "NULL", "NULL"]
        ]
    );
    let e = err(&ctx, "SELECT variant_get(v, '$.a', 'int') FROM s").await;
    assert!(e.contains("the variant value `\"x\"` cannot be cast into `INT`"), "{e}");
}

#[tokio::test]
async fn variant_sql_type_via_type_planner() {
    let state = SessionStateBuilder::new()
        .with_default_features()
        .with_type_planner(Arc::new(VariantTypePlanner))
        .build();
    let ctx = SessionContext::new_with_state(state);
    register_functions(&ctx);
    let df = ctx.sql("SELECT CAST(NULL AS VARIANT) AS v").await.unwrap();
    assert_eq!(df.schema().field(0).data_type(), &variant_data_type());
    ctx.sql("CREATE TABLE t (id INT, v VARIANT)")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    ctx.sql(r#"INSERT INTO t VALUES (1, parse_json('{"a":1}'))"#)
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        rows(&ctx, "SELECT id, to_json(v) FROM t").await,
        vec![vec!["1", r#"{"a":1}"#]]
    );
}
