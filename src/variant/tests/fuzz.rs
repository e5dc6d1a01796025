//! The decoder never panics: random bytes, mutations of valid encodings,
//! hostile nesting. Every reader runs on each input.

use proptest::prelude::*;

use super::super::cast::{CastBuilder, SparkType};
use super::super::decode::{Variant, VariantValue, value_size};
use super::super::encode::VariantBuilder;
use super::super::json::{parse_json, parse_json_to_vecs, to_json};
use super::super::metadata::VariantMetadata;
use super::super::path::{VariantPath, fast};
use super::super::schema::schema_of_variant;
use super::super::{MAX_DEPTH, VariantError};

const TYPES: [SparkType; 14] = [
    SparkType::Boolean,
    SparkType::TinyInt,
    SparkType::SmallInt,
    SparkType::Int,
    SparkType::BigInt,
    SparkType::Float,
    SparkType::Double,
    SparkType::Decimal {
        precision: 10,
        scale: 2,
    },
    SparkType::String,
    SparkType::Date,
    SparkType::Timestamp,
    SparkType::TimestampNtz,
    SparkType::Binary,
    SparkType::Variant,
];

/// Walks everything reachable, calling every reader.
fn walk(v: &Variant<'_>, depth: usize) {
    if depth > 64 {
        return;
    }
    let _ = v.exact_value_bytes();
    let _ = value_size(v.value_bytes());
    match v.decode() {
        Ok(VariantValue::Object(o)) => {
            for i in 0..o.len().min(64) {
                let _ = o.key(i);
                if let Ok(child) = o.value(i) {
                    walk(&child, depth + 1);
                }
            }
            let _ = o.get("a");
            let _ = o.get("zzz");
        }
        Ok(VariantValue::Array(a)) => {
            for i in 0..a.len().min(64) {
                if let Ok(child) = a.get(i) {
                    walk(&child, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// The fast raw-bytes walk agrees with the checked one.
fn fast_matches_checked(metadata: &[u8], value: &[u8], path: &VariantPath) {
    let checked = Variant::try_new(metadata, value).and_then(|v| path.extract(v));
    match (fast::extract(path.segments(), metadata, value), checked) {
        (Ok(Some(f)), Ok(Some(c))) => assert_eq!(f, c.value_bytes(), "{path}"),
        (Ok(None), Ok(None)) | (Err(_), _) => {}
        (f, c) => panic!("{path}: fast {f:?} vs checked {c:?}"),
    }
}

fn exercise(metadata: &[u8], value: &[u8]) {
    for p in ["$", "$.a", "$.b", "$[0]", "$[1].a", "$.a[1].b", "$.ab.c"] {
        if let Ok(path) = VariantPath::parse(p) {
            fast_matches_checked(metadata, value, &path);
        }
    }
    if let Ok(md) = VariantMetadata::try_new(metadata) {
        for i in 0..md.len().min(64) {
            let _ = md.key(i);
        }
    }
    let Ok(v) = Variant::try_new(metadata, value) else {
        return;
    };
    walk(&v, 0);
    let _ = to_json(&v);
    let _ = schema_of_variant(&v);
    let mut b = VariantBuilder::new();
    let _ = b.append_variant(&v);
    for p in ["$", "$.a", "$[0]", "$.a[1].b", "$[300]"] {
        if let Ok(Some(sub)) = VariantPath::parse(p).and_then(|p| p.extract(v)) {
            for t in TYPES {
                let mut out = CastBuilder::new(t, 1);
                let _ = out.append(sub, true);
                let _ = out.append(sub, false);
                let _ = out.finish();
            }
        }
    }
}

fn json_strategy() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|i| serde_json::json!(i)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| serde_json::json!(f)),
        "[a-z\u{e9}\u{1F600}\"\\\\ ]{0,70}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-c]{1,2}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(metadata in prop::collection::vec(any::<u8>(), 0..24),
                                value in prop::collection::vec(any::<u8>(), 0..64)) {
        exercise(&metadata, &value);
        exercise(&[0x01, 0x00, 0x00], &value);
        exercise(&[0x11, 0x02, 0x00, 0x01, 0x02, b'a', b'b'], &value);
    }

    #[test]
    fn mutated_encodings_never_panic(json in json_strategy(),
                                     edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..6),
                                     in_metadata in any::<bool>()) {
        let text = json.to_string();
        let (mut m, mut v) = parse_json_to_vecs(&text).unwrap();
        let target = if in_metadata { &mut m } else { &mut v };
        for (at, byte, kind) in edits {
            if target.is_empty() { break; }
            let i = at.index(target.len());
            match kind {
                0 => target[i] = byte,
                1 => target[i] ^= 1 << (byte % 8),
                2 => target.truncate(i),
                _ => target.insert(i, byte),
            }
        }
        exercise(&m, &v);
    }

    #[test]
    fn json_round_trip(json in json_strategy()) {
        let text = json.to_string();
        let (m, v) = parse_json_to_vecs(&text).unwrap();
        let out = to_json(&Variant::try_new(&m, &v).unwrap()).unwrap();
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        prop_assert!(super::roundtrip::same_json(&json, &back), "{} -> {}", text, out);
    }

    #[test]
    fn random_text_never_panics_parser(s in "[\\[\\]{}\",:0-9eE.+\\-a-z\\\\ ]{0,40}") {
        let mut b = VariantBuilder::new();
        let _ = parse_json(&s, &mut b);
    }
}

/// `depth` nested one-element arrays around a null, built bottom up.
fn nested_arrays(depth: usize) -> Vec<u8> {
    let mut v = vec![0x00];
    for _ in 0..depth {
        let n = v.len();
        let (size, code) = if n <= 0xFF {
            (1, 0)
        } else if n <= 0xFFFF {
            (2, 1)
        } else {
            (4, 3)
        };
        let mut w = vec![(code << 2 | 0x03) as u8, 1];
        w.extend_from_slice(&0u32.to_le_bytes()[..size]);
        w.extend_from_slice(&(n as u32).to_le_bytes()[..size]);
        w.extend_from_slice(&v);
        v = w;
    }
    v
}

#[test]
fn hostile_nesting_is_an_error_not_a_crash() {
    let v = nested_arrays(3000);
    let var = Variant::try_new(&[0x01, 0x00, 0x00], &v).unwrap();
    assert_eq!(to_json(&var), Err(VariantError::TooDeep(MAX_DEPTH)));
    assert_eq!(schema_of_variant(&var), Err(VariantError::TooDeep(MAX_DEPTH)));
    assert!(VariantBuilder::new().append_variant(&var).is_err());
    let ok = nested_arrays(MAX_DEPTH);
    let var = Variant::try_new(&[0x01, 0x00, 0x00], &ok).unwrap();
    assert_eq!(to_json(&var).unwrap().len(), MAX_DEPTH * 2 + 4);
}

#[test]
fn malformed_inputs_give_clear_errors() {
    let meta = [0x01, 0x00, 0x00];
    let cases: [(&[u8], &[u8], &str); 5] = [
        (&meta, &[0x18, 1, 2], "truncated"),
        (&meta, &[0x03, 0x01, 0x00, 0x09, 0x00], "past the end"),
        (&meta, &[0x54], "unknown primitive type id 21"),
        (&[0x03, 0x00, 0x00], &[0x00], "unsupported metadata version 3"),
        (&meta, &[0x02, 0x01, 0x05, 0x00, 0x01, 0x00], "field id 5 out of range"),
    ];
    for (m, v, expected) in cases {
        let err = Variant::try_new(m, v).and_then(|var| to_json(&var)).unwrap_err();
        assert!(matches!(err, VariantError::Malformed(_)), "{err:?}");
        assert!(err.to_string().contains(expected), "{err} lacks {expected}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random bytes in the `value` and `metadata` of a partially shredded column.
    #[test]
    fn unshredding_random_bytes_never_panics(metadata in prop::collection::vec(any::<u8>(), 0..16),
                                             value in prop::collection::vec(any::<u8>(), 0..32),
                                             field_value in prop::collection::vec(any::<u8>(), 0..8)) {
        use std::sync::Arc;
        use arrow::array::{Array, ArrayRef, BinaryArray, Int64Array, StructArray};
        use arrow::datatypes::{DataType, Field};
        let a = StructArray::from(vec![
            (Arc::new(Field::new("value", DataType::Binary, true)),
             Arc::new(BinaryArray::from(vec![Some(&field_value[..]), None])) as ArrayRef),
            (Arc::new(Field::new("typed_value", DataType::Int64, true)),
             Arc::new(Int64Array::from(vec![None, Some(3)])) as ArrayRef),
        ]);
        let typed = StructArray::from(vec![(Arc::new(Field::new("a", a.data_type().clone(), true)), Arc::new(a) as ArrayRef)]);
        let s = StructArray::from(vec![
            (Arc::new(Field::new("metadata", DataType::Binary, false)),
             Arc::new(BinaryArray::from(vec![&metadata[..], &metadata[..]])) as ArrayRef),
            (Arc::new(Field::new("value", DataType::Binary, true)),
             Arc::new(BinaryArray::from(vec![Some(&value[..]), Some(&value[..])])) as ArrayRef),
            (Arc::new(Field::new("typed_value", typed.data_type().clone(), true)), Arc::new(typed) as ArrayRef),
        ]);
        let _ = super::super::shredding::unshred(&s, false);
        let lenient = super::super::shredding::unshred(&s, true);
        prop_assert!(lenient.is_ok());
    }
}
