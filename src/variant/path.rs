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

/// Fast path of [`VariantPath::extract`] over raw bytes, with small return
/// types so the hot loop stays in registers. `Err(NeedsCheck)` means "something is
/// malformed": callers re-run [`VariantPath::extract`] for the precise error.
/// For well-formed input both give the same answer.
pub mod fast {
    use super::PathSegment;

    /// The bytes are malformed somewhere on the path: re-run the checked walk.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct NeedsCheck;

    #[inline(always)]
    fn rd(b: &[u8], pos: usize, size: usize) -> Option<usize> {
        match size {
            1 => b.get(pos).map(|&x| x as usize),
            2 => b
                .get(pos..pos.checked_add(2)?)
                .map(|s| u16::from_le_bytes([s[0], s[1]]) as usize),
            3 => b
                .get(pos..pos.checked_add(3)?)
                .map(|s| u32::from_le_bytes([s[0], s[1], s[2], 0]) as usize),
            4 => b
                .get(pos..pos.checked_add(4)?)
                .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize),
            _ => None,
        }
    }

    /// Metadata header, checked like `VariantMetadata::try_new`.
    #[derive(Clone, Copy)]
    struct Meta<'a> {
        b: &'a [u8],
        osz: usize,
        n: usize,
        strings: usize,
    }

    impl<'a> Meta<'a> {
        #[inline(always)]
        fn parse(b: &'a [u8]) -> Option<Self> {
            let h = *b.first()?;
            if h & 0x0F != 1 {
                return None;
            }
            let osz = ((h >> 6) & 3) as usize + 1;
            let n = rd(b, 1, osz)?;
            let strings = n.checked_add(1)?.checked_mul(osz)?.checked_add(1 + osz)?;
            if strings > b.len() {
                return None;
            }
            let last = rd(b, 1 + osz + n * osz, osz)?;
            if strings.checked_add(last)? > b.len() {
                return None;
            }
            Some(Self { b, osz, n, strings })
        }

        #[inline(always)]
        fn key(&self, id: usize) -> Option<&'a [u8]> {
            if id >= self.n {
                return None;
            }
            let p = 1 + self.osz + id * self.osz;
            let (s, e) = (rd(self.b, p, self.osz)?, rd(self.b, p + self.osz, self.osz)?);
            if s > e {
                return None;
            }
            self.b.get(self.strings + s..self.strings + e)
        }
    }

    #[inline(always)]
    fn eq_short(a: &[u8], b: &[u8]) -> bool {
        a.len() == b.len() && (a.len() > 16 && a == b || a.len() <= 16 && a.iter().zip(b).all(|(x, y)| x == y))
    }

    /// (count, first id / offset positions, data start, data end) of a container.
    #[inline(always)]
    fn container(v: &[u8], large: bool, isz: usize, osz: usize) -> Option<(usize, usize, usize, usize, usize)> {
        let nsz = if large { 4 } else { 1 };
        let n = rd(v, 1, nsz)?;
        let ids = 1 + nsz;
        let offs = n.checked_mul(isz)?.checked_add(ids)?;
        let data = n.checked_add(1)?.checked_mul(osz)?.checked_add(offs)?;
        if data > v.len() {
            return None;
        }
        let end = data.checked_add(rd(v, offs + n * osz, osz)?)?;
        if end > v.len() {
            return None;
        }
        Some((n, ids, offs, data, end))
    }

    #[inline(always)]
    fn field<'a>(m: &Meta<'_>, v: &'a [u8], key: &[u8]) -> Result<Option<&'a [u8]>, NeedsCheck> {
        let h = v[0];
        if h & 3 != 2 {
            return Ok(None);
        }
        let vh = h >> 2;
        let (osz, isz) = ((vh & 3) as usize + 1, ((vh >> 2) & 3) as usize + 1);
        let (n, ids, offs, data, end) = container(v, vh & 0x10 != 0, isz, osz).ok_or(NeedsCheck)?;
        let key_at = |i: usize| rd(v, ids + i * isz, isz).and_then(|id| m.key(id)).ok_or(NeedsCheck);
        let mut found = None;
        if n <= 8 {
            for i in 0..n {
                if eq_short(key_at(i)?, key) {
                    found = Some(i);
                    break;
                }
            }
        } else {
            let (mut lo, mut hi) = (0, n);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match key_at(mid)?.cmp(key) {
                    std::cmp::Ordering::Less => lo = mid + 1,
                    std::cmp::Ordering::Greater => hi = mid,
                    std::cmp::Ordering::Equal => {
                        found = Some(mid);
                        break;
                    }
                }
            }
        }
        let Some(i) = found else { return Ok(None) };
        let off = rd(v, offs + i * osz, osz).ok_or(NeedsCheck)?;
        if data + off >= end {
            return Err(NeedsCheck);
        }
        Ok(Some(&v[data + off..end]))
    }

    #[inline(always)]
    fn element(v: &[u8], index: usize) -> Result<Option<&[u8]>, NeedsCheck> {
        let h = v[0];
        if h & 3 != 3 {
            return Ok(None);
        }
        let vh = h >> 2;
        let osz = (vh & 3) as usize + 1;
        let (n, _, offs, data, end) = container(v, vh & 0x04 != 0, 0, osz).ok_or(NeedsCheck)?;
        if index >= n {
            return Ok(None);
        }
        let s = rd(v, offs + index * osz, osz).ok_or(NeedsCheck)?;
        let e = rd(v, offs + (index + 1) * osz, osz).ok_or(NeedsCheck)?;
        if s >= e || data + e > end {
            return Err(NeedsCheck);
        }
        Ok(Some(&v[data + s..data + e]))
    }

    /// The value bytes at `segments`, `Ok(None)` when absent.
    #[inline]
    pub fn extract<'a>(
        segments: &[PathSegment],
        metadata: &[u8],
        value: &'a [u8],
    ) -> Result<Option<&'a [u8]>, NeedsCheck> {
        let m = Meta::parse(metadata).ok_or(NeedsCheck)?;
        if value.is_empty() {
            return Err(NeedsCheck);
        }
        let mut cur = value;
        for seg in segments {
            let next = match seg {
                PathSegment::Key(k) => field(&m, cur, k.as_bytes())?,
                PathSegment::Index(i) => element(cur, *i)?,
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
