//! Step 4: the URI layer on the relative path stored in the log.
//!
//! The stored path (for example `add.path` in a Delta log) is a URI
//! reference, so the hive directory names get one more layer of encoding
//! (RFC 2396 style). It applies to the whole relative path; `/` separates
//! segments and stays.
//!
//! # Encoded characters
//!
//! Exactly these ASCII bytes become `%XX` (uppercase hex):
//!
//! | Bytes                                               |
//! |-----------------------------------------------------|
//! | `0x00`–`0x1F`, `0x7F` (controls), space             |
//! | `"` `#` `%` `<` `>` `?` `[` `\` `]` `^` `` ` `` `{` `\|` `}` |
//!
//! Everything else stays raw, including `/`, `:`, `=`, `@`, `!`, `&`, `+`,
//! `$`, `;`, `,` and every non-ASCII character. Because `%` is encoded, an
//! escape left by the hive step is encoded a second time.
//!
//! | Hive directory path              | URI form                            |
//! |----------------------------------|-------------------------------------|
//! | `p=US%2FEast`                    | `p=US%252FEast`                     |
//! | `p=hello world`                  | `p=hello%20world`                   |
//! | `p=a<b>c\|d`                     | `p=a%3Cb%3Ec%7Cd`                   |
//! | `p=a}b`                          | `p=a%7Db`                           |
//! | `p=München`                      | `p=München`                         |
//! | `p=a@b!c(d)`                     | `p=a@b!c(d)`                        |
//! | `a=1/b=2`                        | `a=1/b=2`                           |
//!
//! [`decode`] decodes every `%XX` (either case). A `%` not followed by two
//! hex digits is an error ([`ValueError::InvalidEscape`]), as are escapes
//! that decode to bytes which are not UTF-8.

use super::{ValueError, percent};

/// Whether the URI layer turns ASCII byte `b` into `%XX`.
const fn is_encoded(b: u8) -> bool {
    matches!(
        b,
        0x00..=0x20
            | 0x7F
            | b'"'
            | b'#'
            | b'%'
            | b'<'
            | b'>'
            | b'?'
            | b'['
            | b'\\'
            | b']'
            | b'^'
            | b'`'
            | b'{'
            | b'|'
            | b'}'
    )
}

/// Applies the URI layer to a relative path of hive directory names.
pub fn encode(path: &str) -> String {
    percent::encode(path, is_encoded)
}

/// Reverses [`encode`]: decodes every `%XX`.
///
/// # Errors
///
/// [`ValueError::InvalidEscape`] for a `%` without two hex digits,
/// [`ValueError::DecodedNotUtf8`] if the decoded bytes are not UTF-8.
pub fn decode(s: &str) -> Result<String, ValueError> {
    percent::decode(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_exactly_the_uri_set() {
        for b in 0u8..0x80 {
            let s = char::from(b).to_string();
            let expected_encoded = b <= 0x20 || b == 0x7F || "\"#%<>?[\\]^`{|}".contains(char::from(b));
            if expected_encoded {
                assert_eq!(encode(&s), format!("%{b:02X}"), "byte {b:#04x}");
            } else {
                assert_eq!(encode(&s), s, "byte {b:#04x}");
            }
        }
    }

    #[test]
    fn table_examples() {
        let cases = [
            ("p=US%2FEast", "p=US%252FEast"),
            ("p=hello world", "p=hello%20world"),
            ("p=a<b>c|d", "p=a%3Cb%3Ec%7Cd"),
            ("p=a}b", "p=a%7Db"),
            ("p=München", "p=München"),
            ("p=a@b!c(d)", "p=a@b!c(d)"),
            ("a=1/b=2", "a=1/b=2"),
        ];
        for (dir, uri) in cases {
            assert_eq!(encode(dir), uri);
            assert_eq!(decode(uri).expect("decodes"), dir);
        }
    }

    #[test]
    fn decode_is_strict() {
        assert_eq!(decode("p=US%252feast").expect("ok"), "p=US%2feast");
        assert!(matches!(
            decode("p=50%"),
            Err(ValueError::InvalidEscape { offset: 4, .. })
        ));
        assert!(matches!(decode("p=%C3"), Err(ValueError::DecodedNotUtf8 { .. })));
    }
}
