//! Spark's variant path grammar: `$` followed by segments.
//!
//! | segment         | meaning                                  |
//! |-----------------|------------------------------------------|
//! | `.key`          | object field (any chars but `.` and `[`) |
//! | `['key']`       | object field (any chars but `'`)         |
//! | `["key"]`       | object field (any chars but `"`)         |
//! | `[N]`           | array element, N decimal digits          |
//!
//! `$.a.b[0]`, `$['a b'][2]`, `$` (the whole value). A segment that does not
//! match the value (a key on an array, an index past the end) yields no value
//! (SQL NULL), not an error.

use super::decode::Variant;
use super::{Result, VariantError};

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    Key(String),
    Index(usize),
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct VariantPath {
    segments: Vec<PathSegment>,
}

impl VariantPath {
    /// Parses Spark's `$`-path syntax.
    pub fn parse(path: &str) -> Result<Self> {
        let err = |msg: &str| VariantError::InvalidPath {
            path: path.to_string(),
            msg: msg.to_string(),
        };
        let rest = path.strip_prefix('$').ok_or_else(|| err("must start with '$'"))?;
        let mut segments = Vec::new();
        let mut s = rest;
        while !s.is_empty() {
            if let Some(r) = s.strip_prefix('.') {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                if end == 0 {
                    return Err(err("empty key after '.'"));
                }
                segments.push(PathSegment::Key(r[..end].to_string()));
                s = &r[end..];
            } else if let Some(r) = s.strip_prefix("['") {
                let end = r.find('\'').ok_or_else(|| err("unterminated ['key']"))?;
                if end == 0 || !r[end..].starts_with("']") {
                    return Err(err("expected a non-empty key closed by ']"));
                }
                segments.push(PathSegment::Key(r[..end].to_string()));
                s = &r[end + 2..];
            } else if let Some(r) = s.strip_prefix("[\"") {
                let end = r.find('"').ok_or_else(|| err("unterminated [\"key\"]"))?;
                if end == 0 || !r[end..].starts_with("\"]") {
                    return Err(err("expected a non-empty key closed by \"]"));
                }
                segments.push(PathSegment::Key(r[..end].to_string()));
                s = &r[end + 2..];
            } else if let Some(r) = s.strip_prefix('[') {
                let end = r.find(']').ok_or_else(|| err("unterminated [index]"))?;
                let digits = &r[..end];
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(err("array index must be decimal digits"));
                }
                let index = digits.parse::<usize>().map_err(|_| err("array index too large"))?;
                segments.push(PathSegment::Index(index));
                s = &r[end + 1..];
            } else {
                return Err(err("expected '.', '[' or the end"));
            }
        }
        Ok(Self { segments })
    }

    /// A path from segments.
    pub fn from_segments(segments: Vec<PathSegment>) -> Self {
        Self { segments }
    }

    /// The segments.
    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    /// True for `$`.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// Follows the path; `None` when a step finds nothing.
    #[inline]
    pub fn extract<'a>(&self, v: Variant<'a>) -> Result<Option<Variant<'a>>> {
        let mut cur = v;
        for seg in &self.segments {
            let next = match seg {
                PathSegment::Key(k) => cur.get_field(k)?,
                PathSegment::Index(i) => cur.get_index(*i)?,
            };
            match next {
                Some(n) => cur = n,
                None => return Ok(None),
            }
        }
        Ok(Some(cur))
    }
}

impl std::fmt::Display for VariantPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("$")?;
        for s in &self.segments {
            match s {
                PathSegment::Key(k) if !k.contains(['.', '[']) => write!(f, ".{k}")?,
                PathSegment::Key(k) if !k.contains('\'') => write!(f, "['{k}']")?,
                PathSegment::Key(k) => write!(f, "[\"{k}\"]")?,
                PathSegment::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::PathSegment::{Index, Key};
    use super::*;

    #[test]
    fn parses_spark_paths() {
        let p = |s: &str| VariantPath::parse(s).unwrap().segments;
        assert_eq!(p("$"), vec![]);
        assert_eq!(p("$.a.b[0]"), vec![Key("a".into()), Key("b".into()), Index(0)]);
        assert_eq!(
            p("$['a.b'][\"c'd\"][12]"),
            vec![Key("a.b".into()), Key("c'd".into()), Index(12)]
        );
        assert_eq!(p("$.a b]"), vec![Key("a b]".into())]);
        assert_eq!(p("$.é"), vec![Key("é".into())]);
        for bad in [
            "",
            "a",
            "$.",
            "$..a",
            "$[",
            "$[]",
            "$[-1]",
            "$[a]",
            "$['a]",
            "$['']",
            "$x",
            "$[1",
            "$[99999999999999999999999]",
        ] {
            assert!(VariantPath::parse(bad).is_err(), "accepted {bad:?}");
        }
        assert_eq!(
            VariantPath::parse("$['a.b'][3].c").unwrap().to_string(),
            "$['a.b'][3].c"
        );
    }
}
