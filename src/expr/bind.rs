//! Bind a DataFusion filter to field ids.
//!
//! | filter (SQL)                      | predicate                            |
//! |-----------------------------------|--------------------------------------|
//! | `ts >= TIMESTAMP '2024-01-01'`    | `#2 GtEq 2024-01-01T00:00:00`        |
//! | `5 < id`                          | `#1 Gt 5`                            |
//! | `id BETWEEN 1 AND 9`              | `#1 GtEq 1 AND #1 LtEq 9`            |
//! | `region LIKE 'EU%'`               | `#3 StartsWith 'EU'`                 |
//! | `CAST(small AS BIGINT) = 7`       | `#4 Eq 7` (widening casts only)      |
//! | `upper(region) = 'EU'`            | `unknown`                            |
//!
//! Literals are converted to the column's type only when that is exact;
//! otherwise the comparison stays `unknown` (sound: it prunes nothing). A cast
//! on the column is looked through only when it is an order-preserving,
//! injective widening — never stripped otherwise (`CAST(f AS INT) = 5` is not
//! `f = 5`).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::{InList, Like};
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};

use super::normalize::{Column, normalize};
use super::predicate::{BinaryOp, Predicate, SetOp, UnaryOp};
use crate::spec::Schema;

/// Bind `expr` against `schema`; parts that cannot be bound become `Unknown`.
pub fn bind(expr: &Expr, schema: &Schema) -> Predicate {
    Binder { schema }.bind(expr)
}

struct Binder<'a> {
    schema: &'a Schema,
}

/// A column reference resolved to a field id and its Arrow type.
struct Term {
    field: i32,
    data_type: DataType,
    /// An integer column seen through a cast to floating point.
    via_float: bool,
}

impl Binder<'_> {
    fn bind(&self, expr: &Expr) -> Predicate {
        match expr {
            Expr::Alias(a) => self.bind(&a.expr),
            Expr::Literal(ScalarValue::Boolean(Some(b)), _) => {
                if *b {
                    Predicate::True
                } else {
                    Predicate::False
                }
            }
            Expr::Not(inner) => Predicate::Not(Box::new(self.bind(inner))),
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
                Operator::And => Predicate::and(self.bind(left), self.bind(right)),
                Operator::Or => Predicate::or(self.bind(left), self.bind(right)),
                _ => self.comparison(left, *op, right),
            },
            Expr::IsNull(e) => self.unary(e, UnaryOp::IsNull),
            Expr::IsNotNull(e) => self.unary(e, UnaryOp::NotNull),
            Expr::Between(Between {
                expr,
                negated,
                low,
                high,
            }) => {
                let range = Predicate::and(
                    self.comparison(expr, Operator::GtEq, low),
                    self.comparison(expr, Operator::LtEq, high),
                );
                if *negated {
                    Predicate::Not(Box::new(range))
                } else {
                    range
                }
            }
            Expr::InList(InList { expr, list, negated }) => self.in_list(expr, list, *negated),
            Expr::Like(like) => self.like(like),
            Expr::Column(_) => match self.term(expr) {
                Some(t) if t.data_type == DataType::Boolean => Predicate::Binary {
                    op: BinaryOp::Eq,
                    field: t.field,
                    literal: ScalarValue::Boolean(Some(true)),
                },
                _ => Predicate::Unknown,
            },
            _ => Predicate::Unknown,
        }
    }

    /// A column, possibly under widening casts.
    fn term(&self, expr: &Expr) -> Option<Term> {
        match expr {
            Expr::Column(c) => {
                let f = self.schema.field_by_name(&c.name)?;
                Some(Term {
                    field: f.id,
                    data_type: f.field_type.to_arrow(),
                    via_float: false,
                })
            }
            Expr::Cast(cast) => {
                let mut inner = self.term(&cast.expr)?;
                if inner.data_type.is_integer()
                    && matches!(cast.field.data_type(), DataType::Float64 | DataType::Float32)
                {
                    inner.via_float = true;
                    return Some(inner);
                }
                is_widening(&inner.data_type, cast.field.data_type()).then_some(inner)
            }
            Expr::TryCast(cast) => {
                let inner = self.term(&cast.expr)?;
                is_widening(&inner.data_type, cast.field.data_type()).then_some(inner)
            }
            Expr::Alias(a) => self.term(&a.expr),
            _ => None,
        }
    }

    fn unary(&self, expr: &Expr, op: UnaryOp) -> Predicate {
        match self.term(expr) {
            Some(t) => Predicate::Unary { op, field: t.field },
            None => Predicate::Unknown,
        }
    }

    fn comparison(&self, left: &Expr, op: Operator, right: &Expr) -> Predicate {
        let Some(op) = binary_op(op) else {
            return Predicate::Unknown;
        };
        let (term, literal, op) = match (self.term(left), literal(right), self.term(right), literal(left)) {
            (Some(t), Some(l), _, _) => (t, l, op),
            (_, _, Some(t), Some(l)) => (t, l, op.flip()),
            // A function of a column compared with a literal: maybe a range on the column.
            (None, Some(l), _, _) => return self.function_comparison(left, op, &l),
            (_, _, None, Some(l)) => return self.function_comparison(right, op.flip(), &l),
            _ => return Predicate::Unknown,
        };
        if term.via_float {
            return integer_bound(&term, op, &literal);
        }
        match exact_literal(literal, &term.data_type) {
            Some(literal) if literal.is_null() => Predicate::Unknown,
            Some(literal) => Predicate::Binary {
                op,
                field: term.field,
                literal,
            },
            None => Predicate::Unknown,
        }
    }

    fn function_comparison(&self, function: &Expr, op: BinaryOp, literal: &ScalarValue) -> Predicate {
        if literal.is_null() {
            return Predicate::Unknown;
        }
        let column = |e: &Expr| {
            self.term(e).map(|t| Column {
                field: t.field,
                data_type: t.data_type,
            })
        };
        normalize(function, op, literal, &column).unwrap_or(Predicate::Unknown)
    }

    fn in_list(&self, expr: &Expr, list: &[Expr], negated: bool) -> Predicate {
        let values = match list_values(list.iter().map(literal), negated) {
            Ok(values) => values,
            Err(decided) => return decided,
        };
        match self.term(expr) {
            Some(term) => set(term.field, &term.data_type, values, negated),
            None => function_set(values, negated, |op, v| self.function_comparison(expr, op, v)),
        }
    }

    fn like(&self, like: &Like) -> Predicate {
        if like.case_insensitive || like.escape_char.is_some() {
            return Predicate::Unknown;
        }
        let Some(term) = self.term(&like.expr) else {
            return Predicate::Unknown;
        };
        let Some(pattern) = literal(&like.pattern).and_then(|p| match p {
            ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s)) => Some(s),
            _ => None,
        }) else {
            return Predicate::Unknown;
        };
        if !matches!(
            term.data_type,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        ) {
            return Predicate::Unknown;
        }
        let special = |c: char| c == '%' || c == '_' || c == '\\';
        let (op, value) = if let Some(prefix) = pattern.strip_suffix('%') {
            if prefix.contains(special) {
                return Predicate::Unknown;
            }
            (BinaryOp::StartsWith, prefix.to_string())
        } else if pattern.contains(special) {
            return Predicate::Unknown;
        } else {
            (BinaryOp::Eq, pattern)
        };
        let op = if like.negated { op.negate() } else { op };
        Predicate::Binary {
            op,
            field: term.field,
            literal: ScalarValue::Utf8(Some(value)),
        }
    }
}

/// `CAST(int_col AS DOUBLE) op v` as an equivalent comparison on the integer
/// column: `n < 5.5` ⇔ `n <= 5`, `n >= 2.5` ⇔ `n >= 3`, `n = 3.5` ⇔ false.
/// Exact while `|v| < 2^53`, where every integer is a double.
fn integer_bound(term: &Term, op: BinaryOp, literal: &ScalarValue) -> Predicate {
    let v = match literal {
        ScalarValue::Float64(Some(v)) => *v,
        ScalarValue::Float32(Some(v)) => *v as f64,
        _ => return Predicate::Unknown,
    };
    if !v.is_finite() || v.abs() >= 9_007_199_254_740_992.0 {
        return Predicate::Unknown;
    }
    let (lo, hi) = (v.floor(), v.ceil());
    let integral = lo == hi;
    let (op, bound) = match op {
        BinaryOp::Eq if !integral => return Predicate::False,
        BinaryOp::NotEq if !integral => return Predicate::Unknown,
        BinaryOp::Eq | BinaryOp::NotEq => (op, lo),
        BinaryOp::Lt if integral => (BinaryOp::Lt, lo),
        BinaryOp::Lt | BinaryOp::LtEq => (BinaryOp::LtEq, lo),
        BinaryOp::Gt if integral => (BinaryOp::Gt, lo),
        BinaryOp::Gt | BinaryOp::GtEq => (BinaryOp::GtEq, hi),
        _ => return Predicate::Unknown,
    };
    match ScalarValue::Int64(Some(bound as i64)).cast_to(&term.data_type) {
        Ok(literal) if literal.cast_to(&DataType::Int64).ok() == Some(ScalarValue::Int64(Some(bound as i64))) => {
            Predicate::Binary {
                op,
                field: term.field,
                literal,
            }
        }
        // Outside the column type's range: every value is on one side.
        _ => Predicate::Unknown,
    }
}

fn literal(expr: &Expr) -> Option<ScalarValue> {
    match expr {
        Expr::Literal(v, _) => Some(v.clone()),
        Expr::Alias(a) => literal(&a.expr),
        _ => None,
    }
}

/// The comparison operators the predicate language knows.
pub(crate) fn binary_op(op: Operator) -> Option<BinaryOp> {
    Some(match op {
        Operator::Eq => BinaryOp::Eq,
        Operator::NotEq => BinaryOp::NotEq,
        Operator::Lt => BinaryOp::Lt,
        Operator::LtEq => BinaryOp::LtEq,
        Operator::Gt => BinaryOp::Gt,
        Operator::GtEq => BinaryOp::GtEq,
        _ => return None,
    })
}

/// Casts that keep order and equality of every value exactly.
/// The values of an IN list whose items are `items` (`None`: not a
/// literal), or the predicate the list decides alone: `Unknown` for an item
/// that is not a literal, `False` for NULL in NOT IN (nothing matches). A
/// NULL in IN is dropped (it makes non-matches NULL, never true).
pub(crate) fn list_values(
    items: impl IntoIterator<Item = Option<ScalarValue>>,
    negated: bool,
) -> std::result::Result<Vec<ScalarValue>, Predicate> {
    let mut values = Vec::new();
    for item in items {
        let Some(v) = item else {
            return Err(Predicate::Unknown);
        };
        match (v.is_null(), negated) {
            (true, true) => return Err(Predicate::False),
            (true, false) => {}
            (false, _) => values.push(v),
        }
    }
    Ok(values)
}

/// `field [NOT] IN (values)`, each value converted exactly to `data_type`.
pub(crate) fn set(field: i32, data_type: &DataType, values: Vec<ScalarValue>, negated: bool) -> Predicate {
    let literals = values
        .into_iter()
        .map(|v| exact_literal(v, data_type))
        .collect::<Option<Vec<_>>>();
    let Some(literals) = literals else {
        return Predicate::Unknown;
    };
    let op = if negated { SetOp::NotIn } else { SetOp::In };
    Predicate::Set { op, field, literals }
}

/// `f(column) [NOT] IN (values)` where `each(op, v)` is `f(column) op v`
/// as a range of the column: ORed, or for NOT IN the `<>`s ANDed.
pub(crate) fn function_set(
    values: Vec<ScalarValue>,
    negated: bool,
    each: impl Fn(BinaryOp, &ScalarValue) -> Predicate,
) -> Predicate {
    let op = if negated { BinaryOp::NotEq } else { BinaryOp::Eq };
    let mut parts = Vec::with_capacity(values.len());
    for v in &values {
        match each(op, v) {
            Predicate::Unknown => return Predicate::Unknown,
            p => parts.push(p),
        }
    }
    match negated {
        true => Predicate::and_all(parts),
        false => Predicate::or_all(parts),
    }
}

pub(crate) fn is_widening(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    if from == to {
        return true;
    }
    match (from, to) {
        (Int8, Int16 | Int32 | Int64) | (Int16, Int32 | Int64) | (Int32, Int64) => true,
        (Float32, Float64) => true,
        (Utf8 | LargeUtf8 | Utf8View, Utf8 | LargeUtf8 | Utf8View) => true,
        (Binary | LargeBinary | BinaryView, Binary | LargeBinary | BinaryView) => true,
        (Decimal128(p1, s1), Decimal128(p2, s2)) => s1 == s2 && p2 >= p1,
        _ => false,
    }
}

/// The literal in the column's type, if the conversion loses nothing.
pub fn exact_literal(value: ScalarValue, target: &DataType) -> Option<ScalarValue> {
    if &value.data_type() == target {
        return Some(value);
    }
    let source_type = value.data_type();
    let converted = value.cast_to(target).ok()?;
    if converted.is_null() != value.is_null() {
        return None;
    }
    // Round trip must give the original value back.
    let back = converted.cast_to(&source_type).ok()?;
    (back == value).then_some(converted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{Field, Schema as ArrowSchema};
    use datafusion::prelude::{col, lit};

    fn schema() -> Schema {
        Schema::from_arrow(
            &ArrowSchema::new(vec![
                Field::new("id", DataType::Int64, true),
                Field::new("f", DataType::Float64, true),
                Field::new("s", DataType::Utf8, true),
            ]),
            1,
        )
        .unwrap()
    }

    #[test]
    fn literal_on_left_is_flipped() {
        let p = bind(&lit(5i64).lt(col("id")), &schema());
        assert_eq!(
            p,
            Predicate::Binary {
                op: BinaryOp::Gt,
                field: 1,
                literal: ScalarValue::Int64(Some(5))
            }
        );
    }

    #[test]
    fn integer_column_against_a_fraction_rounds_the_bound() {
        let cast = |e: Expr| Expr::Cast(datafusion::logical_expr::Cast::new(Box::new(e), DataType::Float64));
        let p = bind(&cast(col("id")).lt(lit(5.5f64)), &schema());
        assert_eq!(
            p,
            Predicate::Binary {
                op: BinaryOp::LtEq,
                field: 1,
                literal: ScalarValue::Int64(Some(5))
            }
        );
        let p = bind(&cast(col("id")).gt_eq(lit(-2.5f64)), &schema());
        assert_eq!(
            p,
            Predicate::Binary {
                op: BinaryOp::GtEq,
                field: 1,
                literal: ScalarValue::Int64(Some(-2))
            }
        );
        assert_eq!(bind(&cast(col("id")).eq(lit(3.5f64)), &schema()), Predicate::False);
        assert_eq!(bind(&cast(col("id")).lt(lit(f64::NAN)), &schema()), Predicate::Unknown);
    }

    #[test]
    fn narrowing_cast_is_not_stripped() {
        let e = Expr::Cast(datafusion::logical_expr::Cast::new(Box::new(col("f")), DataType::Int32)).eq(lit(5i32));
        assert_eq!(bind(&e, &schema()), Predicate::Unknown);
    }

    #[test]
    fn narrowing_integer_cast_keeps_the_values_it_would_fail_on() {
        use datafusion::logical_expr::{Cast, TryCast};
        let id = |v: i64| ScalarValue::Int64(Some(v));
        let compare = |op, literal| Predicate::Binary { op, field: 1, literal };
        let held = Predicate::and(
            compare(BinaryOp::GtEq, id(i32::MIN.into())),
            compare(BinaryOp::LtEq, id(i32::MAX.into())),
        );
        let matched = Predicate::and(compare(BinaryOp::Eq, id(5)), held);
        let cast = Expr::Cast(Cast::new(Box::new(col("id")), DataType::Int32)).eq(lit(5i32));
        let outside = Predicate::or(
            compare(BinaryOp::Lt, id(i32::MIN.into())),
            compare(BinaryOp::Gt, id(i32::MAX.into())),
        );
        assert_eq!(
            bind(&cast, &schema()),
            Predicate::or(matched.clone(), Predicate::and(outside, Predicate::Unknown))
        );
        let try_cast = Expr::TryCast(TryCast::new(Box::new(col("id")), DataType::Int32)).eq(lit(5i32));
        assert_eq!(bind(&try_cast, &schema()), matched);
    }

    #[test]
    fn inexact_literal_stays_unknown() {
        assert_eq!(bind(&col("id").lt(lit(5.5f64)), &schema()), Predicate::Unknown);
        assert_eq!(
            bind(&col("id").lt(lit(5i32)), &schema()),
            Predicate::Binary {
                op: BinaryOp::Lt,
                field: 1,
                literal: ScalarValue::Int64(Some(5))
            }
        );
    }

    #[test]
    fn like_prefix() {
        assert_eq!(
            bind(&col("s").like(lit("ab%")), &schema()),
            Predicate::Binary {
                op: BinaryOp::StartsWith,
                field: 3,
                literal: ScalarValue::Utf8(Some("ab".into()))
            }
        );
        assert_eq!(bind(&col("s").like(lit("a_b%")), &schema()), Predicate::Unknown);
    }
}
