//! Observed vectors: 68 rows from Spark-written Delta tables, one test.
//!
//! Each row gives a typed value for a partition column `p` and what the
//! pipeline must produce for it:
//!
//! | Column        | Meaning                                                    |
//! |---------------|------------------------------------------------------------|
//! | dir           | the directory name on disk, [`partition_dir`]              |
//! | uri           | the stored path, [`uri::encode`] of `dir`                  |
//! | value         | the protocol string from [`serialize`] (`None` = null)     |
//! | error         | for rows whose write must fail before anything is written |
//!
//! Every row that succeeds is also read back: `uri::decode(uri) == dir`,
//! `parse_partition_dir(dir) == ("p", value)`, and `parse(value)` gives the
//! input (or a typed null for null, empty string and empty binary).
//!
//! # Divergences
//!
//! Where the observed writers disagree, or where the observation is a bug,
//! this crate does the following:
//!
//! | Row(s)   | Input                        | Delta-Spark                     | Here                                        |
//! |----------|------------------------------|---------------------------------|---------------------------------------------|
//! | 16       | DOUBLE `-0.0`                | `0.0` (sign dropped)            | `-0.0`: sign kept, round-trips by bits      |
//! | 18       | DOUBLE smallest subnormal    | `4.9E-324`                      | `5.0E-324` (shortest digits); `4.9E-324` still parses |
//! | 40–42    | TIMESTAMP (session LA time)  | dir in session-local time `p=2024-06-15 12%3A30%3A45` | dir = hive escape of the UTC protocol string, `p=2024-06-15T19%3A30%3A45.000000Z` |
//! | 44–45    | TIMESTAMP_NTZ, whole seconds | `2024-06-15 12:30:45` (no fraction) | always 6 digits `2024-06-15 12:30:45.000000`, in the value and the dir; both forms parse |
//! | 47, 48, 52 | NUL in string or binary    | fails late, at `mkdirs`         | [`ValueError::NulByte`] from [`serialize`], before anything is written |
//! | 50       | binary `DEADBEEF`            | raw bytes in path and JSON (corrupt) | [`ValueError::InvalidUtf8`]            |
//!
//! The timestamp rows use a column typed `Timestamp(µs, "America/Los_Angeles")`
//! holding the instant Spark stored (19:30:45 UTC for local 12:30:45): the
//! protocol string is that instant in UTC, and the directory is derived from
//! the protocol string, so the path never depends on a session time zone.

use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;

use super::{PartitionColumn, ValueError, parse, parse_partition_dir, partition_dir, serialize, uri, validate};

/// What one row must produce.
enum Expect {
    Written {
        dir: &'static str,
        uri: &'static str,
        value: Option<&'static str>,
    },
    Fails(fn(&ValueError) -> bool),
}

/// A row whose stored path equals its directory name ("same" in the seed).
fn same(dir: &'static str, value: Option<&'static str>) -> Expect {
    Expect::Written { dir, uri: dir, value }
}

fn written(dir: &'static str, uri: &'static str, value: Option<&'static str>) -> Expect {
    Expect::Written { dir, uri, value }
}

const NULL_DIR: &str = "p=__HIVE_DEFAULT_PARTITION__";

fn null() -> Expect {
    same(NULL_DIR, None)
}

fn nul_byte(e: &ValueError) -> bool {
    matches!(e, ValueError::NulByte { .. })
}

fn invalid_utf8(e: &ValueError) -> bool {
    matches!(e, ValueError::InvalidUtf8 { .. })
}

fn days(y: i32, m: u32, d: u32) -> Option<i32> {
    let date = NaiveDate::from_ymd_opt(y, m, d)?;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    i32::try_from(date.signed_duration_since(epoch).num_days()).ok()
}

/// Microseconds since the epoch of a UTC (or wall-clock) date and time.
fn micros(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> Option<i64> {
    let t = NaiveDate::from_ymd_opt(y, mo, d)?.and_hms_micro_opt(h, mi, s, us)?;
    Some(t.and_utc().timestamp_micros())
}

fn la() -> Option<Arc<str>> {
    Some("America/Los_Angeles".into())
}

fn tz(v: Option<i64>) -> ScalarValue {
    ScalarValue::TimestampMicrosecond(v, la())
}

fn ntz(v: Option<i64>) -> ScalarValue {
    ScalarValue::TimestampMicrosecond(v, None)
}

fn dec(v: Option<i128>) -> ScalarValue {
    ScalarValue::Decimal128(v, 38, 18)
}

fn utf8(s: &str) -> ScalarValue {
    ScalarValue::Utf8(Some(s.to_owned()))
}

fn bin(bytes: &[u8]) -> ScalarValue {
    ScalarValue::Binary(Some(bytes.to_vec()))
}

#[rustfmt::skip]
fn rows() -> Vec<(u32, ScalarValue, Expect)> {
    use ScalarValue as S;
    vec![
        // INT
        (1, S::Int32(Some(0)), same("p=0", Some("0"))),
        (2, S::Int32(Some(-1)), same("p=-1", Some("-1"))),
        (3, S::Int32(Some(i32::MAX)), same("p=2147483647", Some("2147483647"))),
        (4, S::Int32(Some(i32::MIN)), same("p=-2147483648", Some("-2147483648"))),
        (5, S::Int32(None), null()),
        // BIGINT
        (6, S::Int64(Some(i64::MAX)), same("p=9223372036854775807", Some("9223372036854775807"))),
        (7, S::Int64(Some(i64::MIN)), same("p=-9223372036854775808", Some("-9223372036854775808"))),
        (8, S::Int64(None), null()),
        // TINYINT
        (9, S::Int8(Some(127)), same("p=127", Some("127"))),
        (10, S::Int8(Some(-128)), same("p=-128", Some("-128"))),
        (11, S::Int8(None), null()),
        // SMALLINT
        (12, S::Int16(Some(32767)), same("p=32767", Some("32767"))),
        (13, S::Int16(Some(-32768)), same("p=-32768", Some("-32768"))),
        (14, S::Int16(None), null()),
        // DOUBLE
        (15, S::Float64(Some(0.0)), same("p=0.0", Some("0.0"))),
        (16, S::Float64(Some(-0.0)), same("p=-0.0", Some("-0.0"))),
        (17, S::Float64(Some(f64::MAX)), same("p=1.7976931348623157E308", Some("1.7976931348623157E308"))),
        (18, S::Float64(Some(f64::from_bits(1))), same("p=5.0E-324", Some("5.0E-324"))),
        (19, S::Float64(Some(f64::NAN)), same("p=NaN", Some("NaN"))),
        (20, S::Float64(Some(f64::INFINITY)), same("p=Infinity", Some("Infinity"))),
        (21, S::Float64(Some(f64::NEG_INFINITY)), same("p=-Infinity", Some("-Infinity"))),
        (22, S::Float64(None), null()),
        // FLOAT
        (23, S::Float32(Some(0.0)), same("p=0.0", Some("0.0"))),
        (24, S::Float32(Some(f32::NAN)), same("p=NaN", Some("NaN"))),
        (25, S::Float32(Some(f32::INFINITY)), same("p=Infinity", Some("Infinity"))),
        (26, S::Float32(Some(f32::NEG_INFINITY)), same("p=-Infinity", Some("-Infinity"))),
        (27, S::Float32(None), null()),
        // BOOLEAN
        (28, S::Boolean(Some(true)), same("p=true", Some("true"))),
        (29, S::Boolean(Some(false)), same("p=false", Some("false"))),
        (30, S::Boolean(None), null()),
        // DECIMAL(38,18)
        (31, dec(Some(0)), same("p=0.000000000000000000", Some("0.000000000000000000"))),
        (32, dec(Some(1_230_000_000_000_000_000)), same("p=1.230000000000000000", Some("1.230000000000000000"))),
        (33, dec(Some(-1_230_000_000_000_000_000)), same("p=-1.230000000000000000", Some("-1.230000000000000000"))),
        (34, dec(None), null()),
        // DATE
        (35, S::Date32(days(2024, 1, 1)), same("p=2024-01-01", Some("2024-01-01"))),
        (36, S::Date32(days(1970, 1, 1)), same("p=1970-01-01", Some("1970-01-01"))),
        (37, S::Date32(days(1, 1, 1)), same("p=0001-01-01", Some("0001-01-01"))),
        (38, S::Date32(days(9999, 12, 31)), same("p=9999-12-31", Some("9999-12-31"))),
        (39, S::Date32(None), null()),
        // TIMESTAMP: local 2024-06-15 12:30:45 in Los Angeles is 19:30:45 UTC.
        (40, tz(micros(2024, 6, 15, 19, 30, 45, 0)), written(
            "p=2024-06-15T19%3A30%3A45.000000Z",
            "p=2024-06-15T19%253A30%253A45.000000Z",
            Some("2024-06-15T19:30:45.000000Z"))),
        (41, tz(micros(1970, 1, 1, 8, 0, 0, 0)), written(
            "p=1970-01-01T08%3A00%3A00.000000Z",
            "p=1970-01-01T08%253A00%253A00.000000Z",
            Some("1970-01-01T08:00:00.000000Z"))),
        (42, tz(micros(2024, 6, 16, 6, 59, 59, 999_999)), written(
            "p=2024-06-16T06%3A59%3A59.999999Z",
            "p=2024-06-16T06%253A59%253A59.999999Z",
            Some("2024-06-16T06:59:59.999999Z"))),
        (43, tz(None), null()),
        // TIMESTAMP_NTZ
        (44, ntz(micros(2024, 6, 15, 12, 30, 45, 0)), written(
            "p=2024-06-15 12%3A30%3A45.000000",
            "p=2024-06-15%2012%253A30%253A45.000000",
            Some("2024-06-15 12:30:45.000000"))),
        (45, ntz(micros(1970, 1, 1, 0, 0, 0, 0)), written(
            "p=1970-01-01 00%3A00%3A00.000000",
            "p=1970-01-01%2000%253A00%253A00.000000",
            Some("1970-01-01 00:00:00.000000"))),
        (46, ntz(None), null()),
        // STRING and BINARY
        (47, utf8("\0"), Expect::Fails(nul_byte)),
        (48, utf8("before\0after"), Expect::Fails(nul_byte)),
        (49, bin(b""), null()),
        (50, bin(&[0xDE, 0xAD, 0xBE, 0xEF]), Expect::Fails(invalid_utf8)),
        (51, bin(b"HELLO"), same("p=HELLO", Some("HELLO"))),
        (52, bin(&[0x00, 0xFF]), Expect::Fails(nul_byte)),
        (53, bin(&[0x2F, 0x3D, 0x25]), written("p=%2F%3D%25", "p=%252F%253D%2525", Some("/=%"))),
        (54, utf8("a{b"), written("p=a%7Bb", "p=a%257Bb", Some("a{b"))),
        (55, utf8("a}b"), written("p=a}b", "p=a%7Db", Some("a}b"))),
        (56, utf8("hello world"), written("p=hello world", "p=hello%20world", Some("hello world"))),
        (57, utf8("M\u{00FC}nchen"), same("p=M\u{00FC}nchen", Some("M\u{00FC}nchen"))),
        (58, utf8("日本語"), same("p=日本語", Some("日本語"))),
        (59, utf8("🎵🎶"), same("p=🎵🎶", Some("🎵🎶"))),
        (60, utf8("a<b>c|d"), written("p=a<b>c|d", "p=a%3Cb%3Ec%7Cd", Some("a<b>c|d"))),
        (61, utf8("a@b!c(d)"), same("p=a@b!c(d)", Some("a@b!c(d)"))),
        (62, utf8("a&b+c$d;e,f"), same("p=a&b+c$d;e,f", Some("a&b+c$d;e,f"))),
        (63, utf8("Serbia/srb%"), written("p=Serbia%2Fsrb%25", "p=Serbia%252Fsrb%2525", Some("Serbia/srb%"))),
        (64, utf8("100%25"), written("p=100%2525", "p=100%252525", Some("100%25"))),
        (65, utf8(""), null()),
        (66, S::Utf8(None), null()),
        (67, utf8(" "), written("p= ", "p=%20", Some(" "))),
        (68, utf8("  "), written("p=  ", "p=%20%20", Some("  "))),
    ]
}

/// Floats compare by bits in `ScalarValue`; NaN only needs to stay NaN.
fn same_value(a: &ScalarValue, b: &ScalarValue) -> bool {
    match (a, b) {
        (ScalarValue::Float64(Some(x)), ScalarValue::Float64(Some(y))) if x.is_nan() => y.is_nan(),
        (ScalarValue::Float32(Some(x)), ScalarValue::Float32(Some(y))) if x.is_nan() => y.is_nan(),
        _ => a == b,
    }
}

fn check_written(n: u32, input: &ScalarValue, dir: &str, uri_form: &str, value: Option<&str>) -> Result<(), String> {
    let data_type = input.data_type();
    let columns = [PartitionColumn::new("p", data_type.clone(), true)];
    let valid =
        validate(&columns, &[("p".to_owned(), input.clone())]).map_err(|e| format!("row {n}: validate: {e}"))?;
    let serialized = serialize(&valid[0]).map_err(|e| format!("row {n}: serialize: {e}"))?;
    let actual_dir = partition_dir("p", serialized.as_deref());
    let actual_uri = uri::encode(&actual_dir);
    if (serialized.as_deref(), actual_dir.as_str(), actual_uri.as_str()) != (value, dir, uri_form) {
        return Err(format!(
            "row {n}: got value {serialized:?}, dir {actual_dir:?}, uri {actual_uri:?}; \
             expected value {value:?}, dir {dir:?}, uri {uri_form:?}"
        ));
    }
    check_read_back(n, input, &data_type, dir, uri_form, value)
}

fn check_read_back(
    n: u32,
    input: &ScalarValue,
    data_type: &DataType,
    dir: &str,
    uri_form: &str,
    value: Option<&str>,
) -> Result<(), String> {
    let decoded = uri::decode(uri_form).map_err(|e| format!("row {n}: uri::decode: {e}"))?;
    let parsed_dir = parse_partition_dir(&decoded).map_err(|e| format!("row {n}: dir: {e}"))?;
    let expected_dir = ("p".to_owned(), value.map(str::to_owned));
    if decoded != dir || parsed_dir != expected_dir {
        return Err(format!("row {n}: read back {decoded:?} as {parsed_dir:?}"));
    }
    let back = parse(value, data_type).map_err(|e| format!("row {n}: parse: {e}"))?;
    let expected = match value {
        Some(_) => input.clone(),
        None => ScalarValue::try_from(data_type).map_err(|e| format!("row {n}: {e}"))?,
    };
    if !same_value(&back, &expected) {
        return Err(format!("row {n}: parsed {back:?}, expected {expected:?}"));
    }
    Ok(())
}

fn check_fails(n: u32, input: &ScalarValue, expected: fn(&ValueError) -> bool) -> Result<(), String> {
    let columns = [PartitionColumn::new("p", input.data_type(), true)];
    let valid = validate(&columns, &[("p".to_owned(), input.clone())])
        .map_err(|e| format!("row {n}: validate should pass, got {e}"))?;
    match serialize(&valid[0]) {
        Err(e) if expected(&e) => Ok(()),
        other => Err(format!("row {n}: expected a serialization error, got {other:?}")),
    }
}

#[test]
fn seed_vectors() {
    let rows = rows();
    let numbers: Vec<u32> = rows.iter().map(|(n, ..)| *n).collect();
    assert_eq!(numbers, (1..=68).collect::<Vec<_>>(), "every row, in order");
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|(n, input, expect)| {
            match expect {
                Expect::Written { dir, uri, value } => check_written(*n, input, dir, uri, *value),
                Expect::Fails(matches) => check_fails(*n, input, *matches),
            }
            .err()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn divergence_forms_written_by_spark_still_parse() {
    let cases = [
        // Row 16: Spark's normalized zero.
        ("0.0", DataType::Float64, ScalarValue::Float64(Some(0.0))),
        // Row 18: Java's digits for the smallest subnormal.
        (
            "4.9E-324",
            DataType::Float64,
            ScalarValue::Float64(Some(f64::from_bits(1))),
        ),
        // Rows 44-45: no fractional digits.
        (
            "2024-06-15 12:30:45",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            ntz(micros(2024, 6, 15, 12, 30, 45, 0)),
        ),
        (
            "1970-01-01 00:00:00",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            ntz(Some(0)),
        ),
    ];
    for (text, data_type, expected) in cases {
        assert_eq!(parse(Some(text), &data_type), Ok(expected), "{text}");
    }
}

#[test]
fn rejected_rows_name_the_problem() {
    let err = serialize(&utf8("before\0after")).expect_err("row 48");
    assert_eq!(
        err,
        ValueError::NulByte {
            kind: "string",
            offset: 6
        }
    );
    let err = serialize(&bin(&[0x00, 0xFF])).expect_err("row 52");
    assert_eq!(
        err,
        ValueError::NulByte {
            kind: "binary",
            offset: 0
        }
    );
    let err = serialize(&bin(&[0xDE, 0xAD, 0xBE, 0xEF])).expect_err("row 50");
    // `DE AD` decodes as U+07AD; `BE` is the first bad byte.
    assert_eq!(err, ValueError::InvalidUtf8 { offset: 2 });
}

/// Every written row's directory name is accepted by a real local
/// filesystem and reads back from a directory listing.
#[test]
fn directory_names_survive_a_real_filesystem() {
    let root = tempfile::tempdir().expect("temp dir");
    for (n, _, expect) in rows() {
        let Expect::Written { dir, value, .. } = expect else {
            continue;
        };
        let row_dir = root.path().join(format!("row{n}"));
        std::fs::create_dir_all(row_dir.join(dir)).expect("mkdir");
        let names: Vec<String> = std::fs::read_dir(&row_dir)
            .expect("list")
            .map(|entry| {
                let name = entry.expect("entry").file_name();
                name.into_string().expect("UTF-8 name")
            })
            .collect();
        assert_eq!(names, vec![dir.to_owned()], "row {n}");
        let parsed = parse_partition_dir(&names[0]).expect("parses");
        assert_eq!(parsed, ("p".to_owned(), value.map(str::to_owned)), "row {n}");
    }
}
