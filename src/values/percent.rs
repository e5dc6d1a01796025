//! Percent-encoding shared by the hive and URI steps.
//!
//! Only ASCII bytes chosen by a predicate are encoded (`%XX`, uppercase);
//! non-ASCII characters always pass through raw. Decoding is strict: `%`
//! must be followed by two hex digits (either case) and the decoded bytes
//! must be UTF-8.

use super::ValueError;

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Encodes every ASCII byte for which `escaped` is true.
pub(super) fn encode(s: &str, escaped: fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match u8::try_from(c) {
            Ok(b) if b.is_ascii() && escaped(b) => push_escape(&mut out, b),
            _ => out.push(c),
        }
    }
    out
}

fn push_escape(out: &mut String, b: u8) {
    out.push('%');
    out.push(char::from(HEX[usize::from(b >> 4)]));
    out.push(char::from(HEX[usize::from(b & 0x0F)]));
}

/// Decodes every `%XX`; anything else is copied as is.
pub(super) fn decode(s: &str) -> Result<String, ValueError> {
    if !s.contains('%') {
        return Ok(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(escaped_byte(bytes, i).ok_or_else(|| ValueError::InvalidEscape {
                input: s.to_owned(),
                offset: i,
            })?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| ValueError::DecodedNotUtf8 { input: s.to_owned() })
}

/// The byte written as `%XX` at `at`, if two hex digits follow the `%`.
fn escaped_byte(bytes: &[u8], at: usize) -> Option<u8> {
    let hi = hex_value(*bytes.get(at + 1)?)?;
    let lo = hex_value(*bytes.get(at + 2)?)?;
    Some(hi << 4 | lo)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_only_selected_ascii() {
        assert_eq!(encode("a/b ü", |b| b == b'/'), "a%2Fb ü");
        assert_eq!(encode("\u{0}\u{7f}", |_| true), "%00%7F");
    }

    #[test]
    fn decodes_either_case_and_rejects_malformed() {
        assert_eq!(decode("%2f%2F%c3%bc").expect("ok"), "//ü");
        assert_eq!(
            decode("ab%2").expect_err("short"),
            ValueError::InvalidEscape {
                input: "ab%2".into(),
                offset: 2
            }
        );
        assert!(matches!(
            decode("%zz"),
            Err(ValueError::InvalidEscape { offset: 0, .. })
        ));
        assert!(matches!(decode("%FF"), Err(ValueError::DecodedNotUtf8 { .. })));
        assert!(matches!(decode("%"), Err(ValueError::InvalidEscape { .. })));
        // A multi-byte character right after `%` is not a hex digit.
        assert!(matches!(decode("%ü"), Err(ValueError::InvalidEscape { .. })));
    }
}
