//! JSON ↔ variant, with Spark's rules.
//!
//! Parsing (`parse_json`): strict JSON (RFC 8259), one value, duplicate keys
//! rejected, nesting limited to [`MAX_DEPTH`]. Numbers:
//!
//! | JSON text               | variant                                   |
//! |-------------------------|-------------------------------------------|
//! | `1`, `-300`             | int8, int16 (smallest width that fits)    |
//! | `12345678901234567890`  | decimal16 (does not fit int64, ≤ 38 digits) |
//! | `1.50`                  | decimal4 (150, scale 2)                   |
//! | `1e2`, `0.` + 40 digits | double (exponent, or more than 38 digits) |
//!
//! Printing (`to_json`): compact, object keys in the variant's (sorted) order,
//! decimals without trailing zeros, doubles like Java (`-1.0E308`), dates and
//! timestamps as quoted strings, binary as base64:
//! `{"a":1,"b":[true,null],"c":1.5,"d":"2024-01-01"}`.

use std::borrow::Cow;

use super::decode::{Variant, VariantValue};
use super::encode::VariantBuilder;
use super::format;
use super::{MAX_DEPTH, Result, VariantError};

/// Parses `json` into `builder` (which is not reset first). On error the
/// builder content is unspecified.
pub fn parse_json(json: &str, builder: &mut VariantBuilder) -> Result<()> {
    let mut p = Parser {
        s: json,
        b: json.as_bytes(),
        pos: 0,
        fields: Vec::new(),
        offsets: Vec::new(),
    };
    p.ws();
    p.value(builder, 0)?;
    p.ws();
    if p.pos != p.b.len() {
        return Err(p.err("unexpected characters after the JSON value"));
    }
    Ok(())
}

/// Parses `json` into a fresh variant: `(metadata, value)`.
pub fn parse_json_to_vecs(json: &str) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut b = VariantBuilder::new();
    parse_json(json, &mut b)?;
    Ok(b.finish())
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
    /// Shared stacks of open objects' fields and arrays' offsets.
    fields: Vec<(u32, usize)>,
    offsets: Vec<usize>,
}

impl<'a> Parser<'a> {
    fn err(&self, msg: impl Into<String>) -> VariantError {
        VariantError::InvalidJson {
            pos: self.pos,
            msg: msg.into(),
        }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn literal(&mut self, word: &str) -> Result<()> {
        if self.b.get(self.pos..self.pos + word.len()) == Some(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.err("unexpected token"))
        }
    }

    fn value(&mut self, out: &mut VariantBuilder, depth: usize) -> Result<()> {
        match self.peek() {
            Some(b'{') => self.object(out, depth),
            Some(b'[') => self.array(out, depth),
            Some(b'"') => {
                let s = self.string()?;
                out.append_string(&s);
                Ok(())
            }
            Some(b't') => self.literal("true").map(|_| out.append_bool(true)),
            Some(b'f') => self.literal("false").map(|_| out.append_bool(false)),
            Some(b'n') => self.literal("null").map(|_| out.append_null()),
            Some(b'-' | b'0'..=b'9') => self.number(out),
            Some(_) => Err(self.err("unexpected character")),
            None => Err(self.err("unexpected end of input")),
        }
    }

    fn object(&mut self, out: &mut VariantBuilder, depth: usize) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(VariantError::TooDeep(MAX_DEPTH));
        }
        self.pos += 1;
        let start = out.offset();
        let base = self.fields.len();
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.ws();
                if self.peek() != Some(b'"') {
                    return Err(self.err("expected a string key"));
                }
                let key = self.string()?;
                let id = out.add_key(&key);
                self.ws();
                if self.peek() != Some(b':') {
                    return Err(self.err("expected ':'"));
                }
                self.pos += 1;
                self.ws();
                self.fields.push((id, out.offset() - start));
                self.value(out, depth + 1)?;
                self.ws();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.err("expected ',' or '}'")),
                }
            }
        }
        let r = out.finish_object(start, &mut self.fields[base..]);
        self.fields.truncate(base);
        r
    }

    fn array(&mut self, out: &mut VariantBuilder, depth: usize) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(VariantError::TooDeep(MAX_DEPTH));
        }
        self.pos += 1;
        let start = out.offset();
        let base = self.offsets.len();
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
        } else {
            loop {
                self.ws();
                self.offsets.push(out.offset() - start);
                self.value(out, depth + 1)?;
                self.ws();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b']') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.err("expected ',' or ']'")),
                }
            }
        }
        let r = out.finish_array(start, &self.offsets[base..]);
        self.offsets.truncate(base);
        r
    }

    fn hex4(&mut self) -> Result<u32> {
        let h = self
            .b
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.err("truncated \\u escape"))?;
        let mut v = 0u32;
        for &c in h {
            let d = (c as char).to_digit(16).ok_or_else(|| self.err("invalid \\u escape"))?;
            v = v * 16 + d;
        }
        self.pos += 4;
        Ok(v)
    }

    /// A string literal starting at `"`; borrowed when it has no escapes.
    fn string(&mut self) -> Result<Cow<'a, str>> {
        let start = self.pos + 1;
        let mut i = start;
        while let Some(&c) = self.b.get(i) {
            if c == b'"' {
                self.pos = i + 1;
                let s = self.s.get(start..i).ok_or_else(|| self.err("invalid string"))?;
                return Ok(Cow::Borrowed(s));
            }
            if c == b'\\' || c < 0x20 {
                break;
            }
            i += 1;
        }
        let mut out = String::from(self.s.get(start..i).unwrap_or(""));
        self.pos = i;
        loop {
            let c = self.peek().ok_or_else(|| self.err("unterminated string"))?;
            match c {
                b'"' => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                b'\\' => {
                    self.pos += 1;
                    let e = self.peek().ok_or_else(|| self.err("unterminated string"))?;
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) {
                                if self.b.get(self.pos..self.pos + 2) != Some(b"\\u") {
                                    return Err(self.err("unpaired surrogate in \\u escape"));
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err("unpaired surrogate in \\u escape"));
                                }
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                            }
                            out.push(char::from_u32(cp).ok_or_else(|| self.err("unpaired surrogate in \\u escape"))?);
                        }
                        _ => return Err(self.err("invalid escape")),
                    }
                }
                0..0x20 => return Err(self.err("unescaped control character in string")),
                _ => {
                    let run_start = self.pos;
                    while let Some(&c) = self.b.get(self.pos) {
                        if c == b'"' || c == b'\\' || c < 0x20 {
                            break;
                        }
                        self.pos += 1;
                    }
                    out.push_str(
                        self.s
                            .get(run_start..self.pos)
                            .ok_or_else(|| self.err("invalid string"))?,
                    );
                }
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self, out: &mut VariantBuilder) -> Result<()> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("invalid number")),
        }
        let int_end = self.pos;
        let mut frac = None;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            let fs = self.pos;
            if self.digits() == 0 {
                return Err(self.err("invalid number: no digits after '.'"));
            }
            frac = Some(fs..self.pos);
        }
        let mut has_exp = false;
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number: no digits in exponent"));
            }
            has_exp = true;
        }
        let text = &self.s[start..self.pos];
        let neg = int_start > start;
        if !has_exp {
            if frac.is_none()
                && let Ok(v) = text.parse::<i64>()
            {
                out.append_int(v);
                return Ok(());
            }
            // Decimal when precision and scale fit 38 (Spark's tryParseDecimal).
            let frac_digits = frac.as_ref().map(|r| &self.s[r.clone()]).unwrap_or("");
            let all = format!("{}{}", &self.s[int_start..int_end], frac_digits);
            let significant = all.trim_start_matches('0');
            let precision = significant.len().max(1);
            let scale = frac_digits.len();
            if precision <= 38
                && scale <= 38
                && let Ok(u) = significant
                    .parse::<i128>()
                    .or_else(|e| if significant.is_empty() { Ok(0) } else { Err(e) })
            {
                return out.append_decimal(if neg { -u } else { u }, scale as u8);
            }
        }
        let v: f64 = text.parse().map_err(|_| self.err("invalid number"))?;
        out.append_double(v);
        Ok(())
    }
}

/// Prints a variant as compact JSON.
pub fn to_json(v: &Variant<'_>) -> Result<String> {
    let mut s = String::new();
    write_json(v, &mut s)?;
    Ok(s)
}

/// Appends the JSON text of `v` to `out`.
pub fn write_json(v: &Variant<'_>, out: &mut String) -> Result<()> {
    write_at(v, out, 0)
}

fn quoted(out: &mut String, s: &str) {
    out.push('"');
    out.push_str(s);
    out.push('"');
}

/// Decimal digits of `i` without going through `fmt`.
#[inline]
fn push_int(out: &mut String, i: i64) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let mut u = i.unsigned_abs();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if i < 0 {
        out.push('-');
    }
    for &b in &buf[pos..] {
        out.push(b as char);
    }
}

fn write_at(v: &Variant<'_>, out: &mut String, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(VariantError::TooDeep(MAX_DEPTH));
    }
    match v.decode()? {
        VariantValue::Null => out.push_str("null"),
        VariantValue::Boolean(b) => out.push_str(if b { "true" } else { "false" }),
        VariantValue::Int8(i) => push_int(out, i as i64),
        VariantValue::Int16(i) => push_int(out, i as i64),
        VariantValue::Int32(i) => push_int(out, i as i64),
        VariantValue::Int64(i) => push_int(out, i),
        VariantValue::Double(d) if d.is_finite() => out.push_str(&format::java_double(d)),
        VariantValue::Double(d) => quoted(out, &format::java_double(d)),
        VariantValue::Float(f) if f.is_finite() => out.push_str(&format::java_float(f)),
        VariantValue::Float(f) => quoted(out, &format::java_float(f)),
        VariantValue::Decimal { unscaled, scale } => out.push_str(&format::decimal_plain(unscaled, scale)),
        VariantValue::Date(d) => quoted(out, &format::date(d)),
        VariantValue::Timestamp(t) => quoted(out, &format::timestamp(t, 1_000_000, true)),
        VariantValue::TimestampNtz(t) => quoted(out, &format::timestamp(t, 1_000_000, false)),
        VariantValue::TimestampNanos(t) => quoted(out, &format::timestamp(t, 1_000_000_000, true)),
        VariantValue::TimestampNtzNanos(t) => quoted(out, &format::timestamp(t, 1_000_000_000, false)),
        VariantValue::TimeNtz(t) => quoted(out, &format::time(t)),
        VariantValue::Binary(b) => quoted(out, &format::base64(b)),
        VariantValue::String(s) => format::json_string(out, s),
        VariantValue::Uuid(u) => quoted(out, &format::uuid(&u)),
        VariantValue::Object(o) => {
            out.push('{');
            for i in 0..o.len() {
                if i > 0 {
                    out.push(',');
                }
                let (k, child) = o.field(i)?;
                format::json_string(out, k);
                out.push(':');
                write_at(&child, out, depth + 1)?;
            }
            out.push('}');
        }
        VariantValue::Array(a) => {
            out.push('[');
            for i in 0..a.len() {
                if i > 0 {
                    out.push(',');
                }
                write_at(&a.get(i)?, out, depth + 1)?;
            }
            out.push(']');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::decode::type_id;
    use super::*;

    fn round(json: &str) -> String {
        let (m, v) = parse_json_to_vecs(json).unwrap();
        to_json(&Variant::try_new(&m, &v).unwrap()).unwrap()
    }

    fn type_of(json: &str) -> (u8, u8) {
        let (_, v) = parse_json_to_vecs(json).unwrap();
        (v[0] & 3, v[0] >> 2)
    }

    #[test]
    fn compact_output_sorted_keys() {
        assert_eq!(
            round(r#" { "b" : [ true , null ] , "a" : 1 } "#),
            r#"{"a":1,"b":[true,null]}"#
        );
        assert_eq!(round(r#""é\n\u00e9\ud83d\ude00""#), "\"é\\né😀\"");
        assert_eq!(round("1.50"), "1.5");
        assert_eq!(round("-1e308"), "-1.0E308");
        assert_eq!(round("12345678901234567890"), "12345678901234567890");
        assert_eq!(round("{}"), "{}");
        assert_eq!(round("[]"), "[]");
    }

    #[test]
    fn number_types_like_spark() {
        assert_eq!(type_of("1"), (0, type_id::INT8));
        assert_eq!(type_of("-129"), (0, type_id::INT16));
        assert_eq!(type_of("100000"), (0, type_id::INT32));
        assert_eq!(type_of("10000000000"), (0, type_id::INT64));
        assert_eq!(type_of("12345678901234567890"), (0, type_id::DECIMAL16));
        assert_eq!(type_of("1.5"), (0, type_id::DECIMAL4));
        assert_eq!(type_of("1234567890.5"), (0, type_id::DECIMAL8));
        assert_eq!(type_of("1e2"), (0, type_id::DOUBLE));
        assert_eq!(type_of(&format!("0.{}1", "0".repeat(40))), (0, type_id::DOUBLE));
        assert_eq!(type_of(&"9".repeat(39)), (0, type_id::DOUBLE));
    }

    #[test]
    fn rejects_invalid_json() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "-",
            "+1",
            "tru",
            "nul",
            "\"abc",
            "\"\\x\"",
            "\"\\ud800\"",
            "{a:1}",
            "[1 2]",
            "1 2",
            "NaN",
            "'a'",
            "\"\u{1}\"",
            "{\"a\" 1}",
        ] {
            assert!(parse_json_to_vecs(bad).is_err(), "accepted {bad:?}");
        }
        assert_eq!(
            parse_json_to_vecs(r#"{"a":1,"a":2}"#),
            Err(VariantError::DuplicateKey("a".into()))
        );
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(parse_json_to_vecs(&deep), Err(VariantError::TooDeep(MAX_DEPTH)));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert_eq!(round(&ok), ok);
    }
}
