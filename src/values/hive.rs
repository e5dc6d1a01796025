//! Step 3: Hive-style directory names, `column=value`.
//!
//! Both the column name and the serialized value are escaped, then joined
//! with `=`. A null value (which includes the empty string and empty binary,
//! see [`serialize`](super::serialize)) becomes [`DEFAULT_PARTITION`].
//!
//! # Escaping
//!
//! Exactly these ASCII bytes become `%XX` (uppercase hex):
//!
//! | Bytes                                       | Why                                   |
//! |---------------------------------------------|---------------------------------------|
//! | `0x00`–`0x1F`, `0x7F`                       | control characters                    |
//! | `"` `#` `%` `'` `*` `/` `:` `=` `?` `\`     | path, URI and shell specials          |
//! | `{` `[` `]` `^`                             | glob specials                         |
//!
//! Everything else stays raw: space, `}`, `<`, `>`, `|`, `@`, `&`, `+`,
//! and every non-ASCII character. This matches the set Hive and Spark use.
//!
//! | Column | Serialized value         | Directory name                              |
//! |--------|--------------------------|---------------------------------------------|
//! | `p`    | `US/East`                | `p=US%2FEast`                               |
//! | `p`    | `/=%`                    | `p=%2F%3D%25`                               |
//! | `p`    | `100%25`                 | `p=100%2525`                                |
//! | `p`    | `a{b}`                   | `p=a%7Bb}`                                  |
//! | `p`    | `hello world`            | `p=hello world`                             |
//! | `p`    | `München`                | `p=München`                                 |
//! | `p`    | `2024-06-15 12:30:45.000000` | `p=2024-06-15 12%3A30%3A45.000000`      |
//! | `p`    | none (null)              | `p=__HIVE_DEFAULT_PARTITION__`              |
//! | `a=b`  | `1`                      | `a%3Db=1`                                   |
//!
//! # Unescaping
//!
//! [`unescape`] accepts upper- and lowercase hex. A `%` not followed by two
//! hex digits is an **error** ([`ValueError::InvalidEscape`]), not kept
//! literally: [`escape`] never leaves a bare `%`, so one in a directory name
//! means the name was not written by this encoder and guessing would hide
//! it. Escapes that decode to bytes which are not UTF-8 are an error too.
//!
//! | Directory name                  | [`parse_partition_dir`]         |
//! |---------------------------------|---------------------------------|
//! | `p=US%2FEast`                   | `("p", Some("US/East"))`        |
//! | `p=us%2feast`                   | `("p", Some("us/east"))`        |
//! | `p=__HIVE_DEFAULT_PARTITION__`  | `("p", None)`                   |
//! | `p=`                            | `("p", Some(""))` (parses as null) |
//! | `p=100%`                        | error: bare `%`                 |
//! | `p`, `=1`, `a=1/b=2`            | error: not one `column=value`   |
//!
//! A string value that is literally `__HIVE_DEFAULT_PARTITION__` reads back
//! as null; Hive and Spark share this ambiguity.

use super::{ValueError, percent};

/// Directory value standing for null (and empty string or empty binary).
pub const DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Whether Hive escaping turns ASCII byte `b` into `%XX`.
const fn is_escaped(b: u8) -> bool {
    matches!(
        b,
        0x00..=0x1F
            | b'"'
            | b'#'
            | b'%'
            | b'\''
            | b'*'
            | b'/'
            | b':'
            | b'='
            | b'?'
            | b'\\'
            | 0x7F
            | b'{'
            | b'['
            | b']'
            | b'^'
    )
}

/// Hive-escapes a column name or serialized value.
pub fn escape(s: &str) -> String {
    percent::encode(s, is_escaped)
}

/// Reverses [`escape`]; any `%XX` (either case) is decoded.
///
/// # Errors
///
/// [`ValueError::InvalidEscape`] for a `%` without two hex digits,
/// [`ValueError::DecodedNotUtf8`] if the decoded bytes are not UTF-8.
pub fn unescape(s: &str) -> Result<String, ValueError> {
    percent::decode(s)
}

/// The directory name for one partition column: `column=value`.
pub fn partition_dir(column: &str, serialized: Option<&str>) -> String {
    let value = match serialized {
        Some(text) => escape(text),
        None => DEFAULT_PARTITION.to_owned(),
    };
    format!("{}={value}", escape(column))
}

/// Splits one directory name into the unescaped column and value; the value
/// is `None` for [`DEFAULT_PARTITION`].
///
/// # Errors
///
/// [`ValueError::MalformedDir`] unless `dir` is one `column=value` segment
/// with a non-empty column; the errors of [`unescape`] for either side.
pub fn parse_partition_dir(dir: &str) -> Result<(String, Option<String>), ValueError> {
    let malformed = || ValueError::MalformedDir { dir: dir.to_owned() };
    if dir.contains('/') {
        return Err(malformed());
    }
    let (column, value) = dir.split_once('=').ok_or_else(malformed)?;
    if column.is_empty() {
        return Err(malformed());
    }
    let value = match value {
        DEFAULT_PARTITION => None,
        text => Some(unescape(text)?),
    };
    Ok((unescape(column)?, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_exactly_the_hive_set() {
        for b in 0u8..0x80 {
            let s = char::from(b).to_string();
            let expected_escaped = b < 0x20 || b == 0x7F || "\"#%'*/:=?\\{[]^".contains(char::from(b));
            let escaped = escape(&s);
            if expected_escaped {
                assert_eq!(escaped, format!("%{b:02X}"), "byte {b:#04x}");
            } else {
                assert_eq!(escaped, s, "byte {b:#04x}");
            }
        }
    }

    #[test]
    fn leaves_non_ascii_and_common_punctuation_raw() {
        assert_eq!(escape(" }<>|@!()&+$;,~`"), " }<>|@!()&+$;,~`");
        assert_eq!(escape("日本語 🎵 München"), "日本語 🎵 München");
    }

    #[test]
    fn table_examples() {
        let cases = [
            ("p", Some("US/East"), "p=US%2FEast"),
            ("p", Some("/=%"), "p=%2F%3D%25"),
            ("p", Some("100%25"), "p=100%2525"),
            ("p", Some("a{b}"), "p=a%7Bb}"),
            ("p", Some("hello world"), "p=hello world"),
            ("p", Some("München"), "p=München"),
            (
                "p",
                Some("2024-06-15 12:30:45.000000"),
                "p=2024-06-15 12%3A30%3A45.000000",
            ),
            ("p", None, "p=__HIVE_DEFAULT_PARTITION__"),
            ("a=b", Some("1"), "a%3Db=1"),
        ];
        for (column, value, dir) in cases {
            assert_eq!(partition_dir(column, value), dir);
            let parsed = parse_partition_dir(dir).expect("parses");
            assert_eq!(parsed, (column.to_owned(), value.map(str::to_owned)));
        }
    }

    #[test]
    fn unescape_accepts_lowercase_hex() {
        assert_eq!(unescape("us%2feast").expect("ok"), "us/east");
        assert_eq!(
            parse_partition_dir("p=us%2feast").expect("ok"),
            ("p".to_owned(), Some("us/east".to_owned()))
        );
    }

    #[test]
    fn bare_percent_is_an_error() {
        let err = unescape("100%").expect_err("bare %");
        assert_eq!(
            err,
            ValueError::InvalidEscape {
                input: "100%".into(),
                offset: 3
            }
        );
        assert!(parse_partition_dir("p=100%").is_err());
        assert!(parse_partition_dir("p=%G0").is_err());
    }

    #[test]
    fn empty_value_parses_as_empty_text() {
        assert_eq!(
            parse_partition_dir("p=").expect("ok"),
            ("p".to_owned(), Some(String::new()))
        );
    }

    #[test]
    fn malformed_dirs_are_rejected() {
        for dir in ["p", "=1", "", "a=1/b=2"] {
            assert_eq!(
                parse_partition_dir(dir),
                Err(ValueError::MalformedDir { dir: dir.into() }),
                "{dir}"
            );
        }
    }

    #[test]
    fn default_partition_literal_reads_as_null() {
        let dir = partition_dir("p", Some(DEFAULT_PARTITION));
        assert_eq!(parse_partition_dir(&dir).expect("ok").1, None);
    }

    #[test]
    fn escape_then_unescape_is_identity() {
        let all_ascii: String = (0u8..0x80).map(char::from).collect();
        for s in [all_ascii.as_str(), "%%%25", "a=b=c", "ü%ü", ""] {
            assert_eq!(unescape(&escape(s)).expect("ok"), s);
        }
    }
}
