//! `parse_json` then `to_json` gives back the same JSON value.

use serde_json::Value;

use super::super::decode::{Variant, VariantValue};
use super::super::json::{parse_json_to_vecs, to_json};

/// Same JSON value: numbers compared by value, objects regardless of order.
pub(crate) fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            // serde_json's float parsing may be off by an ulp; allow that.
            x.to_string() == y.to_string()
                || x.as_f64().zip(y.as_f64()).is_some_and(|(p, q)| {
                    p == q || (p - q).abs() <= 1e-15 * p.abs().max(q.abs()) || (p - q).abs() < 1e-320
                })
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

pub(crate) fn round(json: &str) -> String {
    let (m, v) = parse_json_to_vecs(json).unwrap();
    to_json(&Variant::try_new(&m, &v).unwrap()).unwrap()
}

fn assert_round(json: &str) {
    let out = round(json);
    let a: Value = serde_json::from_str(json).unwrap();
    let b: Value = serde_json::from_str(&out).unwrap();
    assert!(same_json(&a, &b), "{json} came back as {out}");
}

#[test]
fn corpus_round_trips() {
    let big_array = format!("[{}]", (0..300).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    let big_object = format!(
        "{{{}}}",
        (0..300)
            .map(|i| format!("\"k{i:03}\":{{\"n\":{i}}}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let huge_object = format!(
        "{{{}}}",
        (0..70_000)
            .map(|i| format!("\"{i}\":{i}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let long_string = format!("\"{}\"", "x".repeat(70_000));
    let corpus = [
        r#"{"a":{"b":{"c":[1,{"d":null}]}}}"#.to_string(),
        big_array,
        big_object,
        huge_object,
        long_string,
        r#"{"ключ":"значение","キー":"値","emoji😀":"🎉","":"empty key"}"#.into(),
        "[0,-1,127,-128,128,-129,32767,-32768,32768,-32769,2147483647,-2147483648,2147483648,-2147483649,9223372036854775807,-9223372036854775808]".into(),
        "[9223372036854775808,-9223372036854775809,99999999999999999999999999999999999999]".into(),
        "[1.5,-0.001,123456789.123456789,0.00000000000000000000000000000000000001,1.000]".into(),
        "[-1e308,1e308,2.2250738585072014E-308,4.9e-324,1.7976931348623157e308,0.1e1,-0.0e0]".into(),
        r#"["tab\tnewline\nquote\"backslash\\slash\/ctrl\u0001","\u00e9\ud83d\ude00"]"#.into(),
        "[true,false,null,[],{},[[]],[{}]]".into(),
        "\"short\"".into(),
        "null".into(),
        "0".into(),
    ];
    for json in &corpus {
        assert_round(json);
    }
}

#[test]
fn compact_sorted_output_like_spark() {
    assert_eq!(
        round(r#"{ "b" : [ true , null ], "a" : 1 }"#),
        r#"{"a":1,"b":[true,null]}"#
    );
    assert_eq!(
        round("[1.0, 1.50, -1e308, 1E2, 0.5e-5]"),
        "[1,1.5,-1.0E308,100.0,5.0E-6]"
    );
    assert_eq!(round(r#"{"z":{"y":1,"x":2},"a":[]}"#), r#"{"a":[],"z":{"x":2,"y":1}}"#);
}

#[test]
fn large_containers_use_wide_headers() {
    let (_, v) = parse_json_to_vecs(&format!("[{}]", vec!["1"; 300].join(","))).unwrap();
    assert_eq!(v[0], 0x03 | (0x04 << 2) | (1 << 2), "large flag + 2-byte offsets");
    let keys = format!(
        "{{{}}}",
        (0..300).map(|i| format!("\"{i}\":1")).collect::<Vec<_>>().join(",")
    );
    let (m, v) = parse_json_to_vecs(&keys).unwrap();
    let var = Variant::try_new(&m, &v).unwrap();
    let VariantValue::Object(o) = var.decode().unwrap() else {
        panic!("not an object")
    };
    assert_eq!(o.len(), 300);
    assert_eq!((v[0] >> 2) & 0x10, 0x10, "large object");
    assert_eq!(((v[0] >> 4) & 0x03) + 1, 2, "2-byte field ids");
    for i in [0, 1, 150, 299] {
        let f = var.get_field(&i.to_string()).unwrap().unwrap();
        assert!(matches!(f.decode().unwrap(), VariantValue::Int8(1)));
    }
    assert!(var.get_field("300").unwrap().is_none());
}
