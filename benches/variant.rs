//! Variant kernels against arrow-rs (`parquet-variant-compute` 59.3.2) on the
//! same 1,000,000-row column:
//!
//! - `variant_get(v, '$.a.b', 'bigint')` vs `variant_get(v, GetOptions{path: a.b, as_type: Int64})`
//! - `to_json(v)` vs `variant_to_json(v)`
//!
//! Run: `cargo bench --bench variant`.

use std::hint::black_box;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringArray};
use arrow::datatypes::{DataType, Field, Int64Type};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hidden_partitions::variant::udf::{parse_json_array, to_json_array, variant_get_array};
use hidden_partitions::variant::{SparkType, VariantPath};
use parquet_variant::{VariantPath as ArrowPath, VariantPathElement};
use parquet_variant_compute::{GetOptions, variant_get, variant_to_json};

/// 1,000,000 rows under `cargo bench`; a small smoke size under `cargo test`.
fn rows() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        1_000_000
    } else {
        10_000
    }
}

/// Objects of a few fields with a nested `a.b`; every tenth row lacks it.
fn input() -> ArrayRef {
    let json: StringArray = (0..rows())
        .map(|i| {
            Some(if i % 10 == 9 {
                format!(r#"{{"id":{i},"name":"row {i}","a":{{"c":true}}}}"#)
            } else {
                format!(
                    r#"{{"id":{i},"name":"row {i}","a":{{"b":{},"c":"x{}"}},"tags":["p","q"]}}"#,
                    i * 7,
                    i % 100
                )
            })
        })
        .collect();
    parse_json_array(&(Arc::new(json) as ArrayRef), false).expect("valid JSON")
}

fn bench(c: &mut Criterion) {
    let data = input();
    let ours_path = VariantPath::parse("$.a.b").expect("valid path");

    // Both sides must agree before timing anything.
    let ours = variant_get_array(&data, &ours_path, SparkType::BigInt, false).expect("ours");
    let arrow_opts = || GetOptions {
        path: ArrowPath::from_iter([VariantPathElement::field("a"), VariantPathElement::field("b")]),
        as_type: Some(Arc::new(Field::new("b", DataType::Int64, true))),
        cast_options: Default::default(),
    };
    let theirs = variant_get(&data, arrow_opts()).expect("arrow-rs variant_get");
    assert_eq!(ours.as_primitive::<Int64Type>(), theirs.as_primitive::<Int64Type>());
    assert_eq!(ours.null_count(), rows() / 10);

    let mut g = c.benchmark_group("variant_get $.a.b bigint");
    g.throughput(Throughput::Elements(rows() as u64));
    g.sample_size(10);
    g.bench_function("hidden_partitions", |b| {
        b.iter(|| variant_get_array(black_box(&data), &ours_path, SparkType::BigInt, false).expect("ours"))
    });
    g.bench_function("arrow-rs parquet-variant-compute", |b| {
        b.iter(|| variant_get(black_box(&data), arrow_opts()).expect("arrow-rs"))
    });
    g.finish();

    let mut g = c.benchmark_group("to_json");
    g.throughput(Throughput::Elements(rows() as u64));
    g.sample_size(10);
    g.bench_function("hidden_partitions", |b| {
        b.iter(|| to_json_array(black_box(&data)).expect("ours"))
    });
    g.bench_function("arrow-rs parquet-variant-compute", |b| {
        b.iter(|| variant_to_json(black_box(&data)).expect("arrow-rs"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
