//! `schema_of_variant` and the merge behind `schema_of_variant_agg`.
//!
//! The schema of a value is printed like Spark: all integers are `BIGINT`,
//! decimals get their minimal `DECIMAL(p,s)` (trailing zeros dropped), a null
//! is `VOID`, objects list fields sorted by name, array element types are
//! merged.
//!
//! | value                              | schema                                  |
//! |------------------------------------|-----------------------------------------|
//! | `{"b":[1,"x"],"a":1.50}`           | `OBJECT<a: DECIMAL(2,1), b: ARRAY<VARIANT>>` |
//! | `[1, 2.5, null]`                   | `ARRAY<DECIMAL(21,1)>`                  |
//! | `[1, 1e3]`                         | `ARRAY<DOUBLE>`                         |
//! | `null`                             | `VOID`                                  |
//!
//! Merging (tightest common type): equal types stay; `VOID` yields to the
//! other; BIGINT and DECIMAL widen to a decimal (DOUBLE past 38 digits);
//! DOUBLE absorbs the other numbers; TIMESTAMP absorbs TIMESTAMP_NTZ;
//! objects merge field by field, arrays by element; anything else is `VARIANT`.
//! Names that are not plain identifiers are quoted with backticks.

use std::fmt;

use super::decode::{Variant, VariantValue};
use super::format::strip_decimal;
use super::{MAX_DEPTH, Result, VariantError};

use super::encode::decimal_digits;

/// A Spark data type as reported by `schema_of_variant`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum VariantSchema {
    Void,
    Boolean,
    BigInt,
    Double,
    Float,
    Decimal {
        precision: u8,
        scale: u8,
    },
    String,
    Date,
    Timestamp,
    TimestampNtz,
    Time,
    Binary,
    Variant,
    Array(Box<VariantSchema>),
    /// Fields sorted by name.
    Object(Vec<(String, VariantSchema)>),
}

/// Schema of one variant value.
pub fn schema_of_variant(v: &Variant<'_>) -> Result<VariantSchema> {
    schema_at(v, 0)
}

fn schema_at(v: &Variant<'_>, depth: usize) -> Result<VariantSchema> {
    if depth > MAX_DEPTH {
        return Err(VariantError::TooDeep(MAX_DEPTH));
    }
    Ok(match v.decode()? {
        VariantValue::Null => VariantSchema::Void,
        VariantValue::Boolean(_) => VariantSchema::Boolean,
        VariantValue::Int8(_) | VariantValue::Int16(_) | VariantValue::Int32(_) | VariantValue::Int64(_) => {
            VariantSchema::BigInt
        }
        VariantValue::Double(_) => VariantSchema::Double,
        VariantValue::Float(_) => VariantSchema::Float,
        VariantValue::Decimal { unscaled, scale } => {
            let (u, s) = strip_decimal(unscaled, scale);
            VariantSchema::Decimal {
                precision: (decimal_digits(u) as u8).max(s),
                scale: s,
            }
        }
        VariantValue::String(_) | VariantValue::Uuid(_) => VariantSchema::String,
        VariantValue::Date(_) => VariantSchema::Date,
        VariantValue::Timestamp(_) | VariantValue::TimestampNanos(_) => VariantSchema::Timestamp,
        VariantValue::TimestampNtz(_) | VariantValue::TimestampNtzNanos(_) => VariantSchema::TimestampNtz,
        VariantValue::TimeNtz(_) => VariantSchema::Time,
        VariantValue::Binary(_) => VariantSchema::Binary,
        VariantValue::Object(o) => {
            let mut fields: Vec<(String, VariantSchema)> = Vec::with_capacity(o.len());
            for i in 0..o.len() {
                let (k, child) = o.field(i)?;
                fields.push((k.to_string(), schema_at(&child, depth + 1)?));
            }
            VariantSchema::Object(normalize_fields(fields))
        }
        VariantValue::Array(a) => {
            let mut element = VariantSchema::Void;
            for i in 0..a.len() {
                element = merge(element, schema_at(&a.get(i)?, depth + 1)?);
            }
            VariantSchema::Array(Box::new(element))
        }
    })
}

/// Sorts by name and merges duplicate names.
fn normalize_fields(mut fields: Vec<(String, VariantSchema)>) -> Vec<(String, VariantSchema)> {
    if !fields.windows(2).all(|w| w[0].0 < w[1].0) {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(String, VariantSchema)> = Vec::with_capacity(fields.len());
        for (k, t) in fields {
            match out.last_mut() {
                Some((lk, lt)) if *lk == k => *lt = merge(std::mem::replace(lt, VariantSchema::Void), t),
                _ => out.push((k, t)),
            }
        }
        return out;
    }
    fields
}

fn merge_decimal(p1: u8, s1: u8, p2: u8, s2: u8) -> VariantSchema {
    let scale = s1.max(s2);
    let range = (p1 - s1.min(p1)).max(p2 - s2.min(p2));
    if range as u32 + scale as u32 > 38 {
        VariantSchema::Double
    } else {
        VariantSchema::Decimal {
            precision: range + scale,
            scale,
        }
    }
}

/// Tightest common type of two schemas (`VARIANT` when there is none).
pub fn merge(a: VariantSchema, b: VariantSchema) -> VariantSchema {
    use VariantSchema::*;
    match (a, b) {
        (a, b) if a == b => a,
        (Void, t) | (t, Void) => t,
        (BigInt, Decimal { precision, scale }) | (Decimal { precision, scale }, BigInt) => {
            merge_decimal(20, 0, precision, scale)
        }
        (
            Decimal {
                precision: p1,
                scale: s1,
            },
            Decimal {
                precision: p2,
                scale: s2,
            },
        ) => merge_decimal(p1, s1, p2, s2),
        (Double, BigInt | Decimal { .. } | Float) | (BigInt | Decimal { .. } | Float, Double) => Double,
        (Float, BigInt | Decimal { .. }) | (BigInt | Decimal { .. }, Float) => Double,
        (Timestamp, TimestampNtz) | (TimestampNtz, Timestamp) => Timestamp,
        (Array(x), Array(y)) => Array(Box::new(merge(*x, *y))),
        (Object(x), Object(y)) => {
            let mut out = Vec::with_capacity(x.len().max(y.len()));
            let mut yi = y.into_iter().peekable();
            for (k, t) in x {
                while let Some(next) = yi.next_if(|(yk, _)| *yk < k) {
                    out.push(next);
                }
                match yi.next_if(|(yk, _)| *yk == k) {
                    Some((_, t2)) => out.push((k, merge(t, t2))),
                    None => out.push((k, t)),
                }
            }
            out.extend(yi);
            Object(out)
        }
        _ => Variant,
    }
}

fn quote_if_needed(name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let plain = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.bytes().all(|b| b.is_ascii_digit());
    if plain {
        f.write_str(name)
    } else {
        write!(f, "`{}`", name.replace('`', "``"))
    }
}

impl fmt::Display for VariantSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Void => f.write_str("VOID"),
            Self::Boolean => f.write_str("BOOLEAN"),
            Self::BigInt => f.write_str("BIGINT"),
            Self::Double => f.write_str("DOUBLE"),
            Self::Float => f.write_str("FLOAT"),
            Self::Decimal { precision, scale } => write!(f, "DECIMAL({precision},{scale})"),
            Self::String => f.write_str("STRING"),
            Self::Date => f.write_str("DATE"),
            Self::Timestamp => f.write_str("TIMESTAMP"),
            Self::TimestampNtz => f.write_str("TIMESTAMP_NTZ"),
            Self::Time => f.write_str("TIME"),
            Self::Binary => f.write_str("BINARY"),
            Self::Variant => f.write_str("VARIANT"),
            Self::Array(e) => write!(f, "ARRAY<{e}>"),
            Self::Object(fields) => {
                f.write_str("OBJECT<")?;
                for (i, (k, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    quote_if_needed(k, f)?;
                    write!(f, ": {t}")?;
                }
                f.write_str(">")
            }
        }
    }
}

impl VariantSchema {
    /// Parses the printed form (used for aggregate state).
    pub fn parse(s: &str) -> Result<Self> {
        let mut p = SchemaParser { s, pos: 0 };
        let t = p.ty(0)?;
        if p.pos != s.len() {
            return Err(p.err());
        }
        Ok(t)
    }
}

struct SchemaParser<'a> {
    s: &'a str,
    pos: usize,
}

impl SchemaParser<'_> {
    fn err(&self) -> VariantError {
        VariantError::Unsupported(format!("invalid variant schema {:?} at {}", self.s, self.pos))
    }

    fn eat(&mut self, t: &str) -> bool {
        if self.s[self.pos..].starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &str) -> Result<()> {
        if self.eat(t) { Ok(()) } else { Err(self.err()) }
    }

    fn number(&mut self) -> Result<u8> {
        let rest = &self.s[self.pos..];
        let n = rest.bytes().take_while(u8::is_ascii_digit).count();
        self.pos += n;
        rest[..n].parse().map_err(|_| self.err())
    }

    fn name(&mut self) -> Result<String> {
        if self.eat("`") {
            let mut out = String::new();
            loop {
                let rest = &self.s[self.pos..];
                let i = rest.find('`').ok_or_else(|| self.err())?;
                out.push_str(&rest[..i]);
                self.pos += i + 1;
                if self.eat("`") {
                    out.push('`');
                } else {
                    return Ok(out);
                }
            }
        }
        let rest = &self.s[self.pos..];
        let n = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if n == 0 {
            return Err(self.err());
        }
        self.pos += n;
        Ok(rest[..n].to_string())
    }

    fn ty(&mut self, depth: usize) -> Result<VariantSchema> {
        if depth > MAX_DEPTH {
            return Err(VariantError::TooDeep(MAX_DEPTH));
        }
        use VariantSchema::*;
        if self.eat("ARRAY<") {
            let e = self.ty(depth + 1)?;
            self.expect(">")?;
            return Ok(Array(Box::new(e)));
        }
        if self.eat("OBJECT<") {
            let mut fields = Vec::new();
            if !self.eat(">") {
                loop {
                    let k = self.name()?;
                    self.expect(": ")?;
                    fields.push((k, self.ty(depth + 1)?));
                    if self.eat(">") {
                        break;
                    }
                    self.expect(", ")?;
                }
            }
            return Ok(Object(normalize_fields(fields)));
        }
        if self.eat("DECIMAL(") {
            let precision = self.number()?;
            self.expect(",")?;
            let scale = self.number()?;
            self.expect(")")?;
            return Ok(Decimal { precision, scale });
        }
        // Longest names first (TIMESTAMP_NTZ before TIMESTAMP).
        for (name, t) in [
            ("TIMESTAMP_NTZ", TimestampNtz),
            ("TIMESTAMP", Timestamp),
            ("VOID", Void),
            ("BOOLEAN", Boolean),
            ("BIGINT", BigInt),
            ("DOUBLE", Double),
            ("FLOAT", Float),
            ("STRING", String),
            ("DATE", Date),
            ("TIME", Time),
            ("BINARY", Binary),
            ("VARIANT", Variant),
        ] {
            if self.eat(name) {
                return Ok(t);
            }
        }
        Err(self.err())
    }
}

#[cfg(test)]
mod tests {
    use super::super::json::parse_json_to_vecs;
    use super::*;

    fn schema(json: &str) -> String {
        let (m, v) = parse_json_to_vecs(json).unwrap();
        schema_of_variant(&Variant::try_new(&m, &v).unwrap())
            .unwrap()
            .to_string()
    }

    #[test]
    fn schemas_like_spark() {
        assert_eq!(schema("null"), "VOID");
        assert_eq!(schema("1"), "BIGINT");
        assert_eq!(schema("1.50"), "DECIMAL(2,1)");
        assert_eq!(schema("0.01"), "DECIMAL(2,2)");
        assert_eq!(schema("100.0"), "DECIMAL(3,0)");
        assert_eq!(schema(r#"{"b":["x"],"a":1}"#), "OBJECT<a: BIGINT, b: ARRAY<STRING>>");
        assert_eq!(schema(r#"[{"b":true,"a":0}]"#), "ARRAY<OBJECT<a: BIGINT, b: BOOLEAN>>");
        assert_eq!(schema("[1, 2.5, null]"), "ARRAY<DECIMAL(21,1)>");
        assert_eq!(schema("[1, 1e3]"), "ARRAY<DOUBLE>");
        assert_eq!(schema("[1, \"a\"]"), "ARRAY<VARIANT>");
        assert_eq!(schema("[]"), "ARRAY<VOID>");
        assert_eq!(
            schema(r#"[{"a":1},{"b":"x","a":null}]"#),
            "OBJECT<a: BIGINT, b: STRING>".replace("OBJECT", "ARRAY<OBJECT") + ">"
        );
        assert_eq!(
            schema(r#"{"a b":1,"1":2,"x`y":3}"#),
            "OBJECT<`1`: BIGINT, `a b`: BIGINT, `x``y`: BIGINT>"
        );
        assert_eq!(schema(&format!("[1, 0.{}1]", "0".repeat(36))), "ARRAY<DOUBLE>");
    }

    #[test]
    fn parses_printed_form() {
        for s in [
            "VOID",
            "OBJECT<`1`: BIGINT, `a b`: ARRAY<DECIMAL(21,1)>, `x``y`: OBJECT<>, z: TIMESTAMP_NTZ>",
            "ARRAY<ARRAY<VARIANT>>",
            "OBJECT<a: TIMESTAMP, b: TIME, c: DATE, d: BINARY, e: FLOAT, f: DOUBLE, g: BOOLEAN, h: STRING>",
        ] {
            assert_eq!(VariantSchema::parse(s).unwrap().to_string(), s);
        }
        for bad in ["", "OBJECT<a BIGINT>", "ARRAY<", "DECIMAL(1)", "INT", "VOIDX"] {
            assert!(VariantSchema::parse(bad).is_err(), "{bad}");
        }
    }
}
