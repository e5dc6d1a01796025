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

/// Longest directory name [`partition_dir`] makes, in bytes: file systems
/// refuse names over 255 bytes.
pub const MAX_DIR_BYTES: usize = 200;

/// The directory name for one partition column: `column=value`.
///
/// A name longer than [`MAX_DIR_BYTES`] is shortened deterministically:
/// the escaped value is cut (at a character and escape boundary) and
/// followed by `~` and 16 hex digits of the FNV-1a hash of the whole
/// serialized value, e.g. `s=xxxx…xxxx~5c1f0e8d2a3b4c6d`. Such a name
/// cannot be read back into the value; the manifest keeps the value.
pub fn partition_dir(column: &str, serialized: Option<&str>) -> String {
    let value = match serialized {
        Some(text) => escape(text),
        None => DEFAULT_PARTITION.to_owned(),
    };
    let column = escape(column);
    if column.len() + 1 + value.len() <= MAX_DIR_BYTES {
        return format!("{column}={value}");
    }
    let hash = fnv1a_64(serialized.unwrap_or_default().as_bytes());
    let room = MAX_DIR_BYTES.saturating_sub(column.len() + 1 + 17);
    let mut cut = room.min(value.len());
    let bytes = value.as_bytes();
    let splits_escape = |cut: usize| bytes[..cut].iter().rev().take(2).any(|b| *b == b'%');
    while cut > 0 && (!value.is_char_boundary(cut) || splits_escape(cut)) {
        cut -= 1;
    }
    format!("{column}={}~{hash:016x}", &value[..cut])
}

/// FNV-1a, 64 bits: small, stable across versions and platforms.
fn fnv1a_64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
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

    #[test]
    fn long_values_get_a_short_deterministic_directory() {
        let long = "é".repeat(150) + "/x";
        let dir = partition_dir("s", Some(&long));
        assert!(dir.len() <= MAX_DIR_BYTES, "{} bytes", dir.len());
        assert!(dir.starts_with("s=éé"), "{dir}");
        assert_eq!(dir, partition_dir("s", Some(&long)));
        assert_ne!(dir, partition_dir("s", Some(&(long.clone() + "y"))));
        // A cut never splits an escape: `%2F` stays whole or goes.
        for n in 150..200 {
            let v = "/".repeat(n);
            let d = partition_dir("s", Some(&v));
            let (prefix, _) = d.split_once('~').unwrap();
            assert!(unescape(prefix.trim_start_matches("s=")).is_ok(), "{d}");
        }
        // Short ones are untouched.
        assert_eq!(partition_dir("s", Some("a b")), "s=a b");
    }
}
