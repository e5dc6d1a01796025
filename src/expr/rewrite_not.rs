//! Push NOT down to the leaves.
//!
//! | before                 | after                       |
//! |------------------------|-----------------------------|
//! | `NOT (a AND b)`        | `NOT a OR NOT b`            |
//! | `NOT (x < 5)`          | `x >= 5`                    |
//! | `NOT (x IN (1, 2))`    | `x NOT IN (1, 2)`           |
//! | `NOT (x IS NULL)`      | `x IS NOT NULL`             |
//! | `NOT unknown`          | `unknown`                   |
//!
//! Each step is exact in SQL's three-valued logic (NOT of NULL is NULL), so
//! the result keeps a row exactly when the input does; projection then never
//! has to see a NOT.

use super::predicate::{Predicate, SetOp, UnaryOp};

pub fn rewrite_not(p: Predicate) -> Predicate {
    match p {
        Predicate::Not(inner) => negate(*inner),
        Predicate::And(a, b) => Predicate::and(rewrite_not(*a), rewrite_not(*b)),
        Predicate::Or(a, b) => Predicate::or(rewrite_not(*a), rewrite_not(*b)),
        other => other,
    }
}

fn negate(p: Predicate) -> Predicate {
    match p {
        Predicate::True => Predicate::False,
        Predicate::False => Predicate::True,
        Predicate::Unknown => Predicate::Unknown,
        Predicate::Not(inner) => rewrite_not(*inner),
        Predicate::And(a, b) => Predicate::or(negate(*a), negate(*b)),
        Predicate::Or(a, b) => Predicate::and(negate(*a), negate(*b)),
        Predicate::Unary { op, field } => Predicate::Unary {
            op: match op {
                UnaryOp::IsNull => UnaryOp::NotNull,
                UnaryOp::NotNull => UnaryOp::IsNull,
                UnaryOp::IsNan => UnaryOp::NotNan,
                UnaryOp::NotNan => UnaryOp::IsNan,
            },
            field,
        },
        Predicate::Binary { op, field, literal } => Predicate::Binary {
            op: op.negate(),
            field,
            literal,
        },
        Predicate::Set { op, field, literals } => Predicate::Set {
            op: match op {
                SetOp::In => SetOp::NotIn,
                SetOp::NotIn => SetOp::In,
            },
            field,
            literals,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::predicate::BinaryOp;
    use datafusion::common::ScalarValue;

    fn lt(v: i64) -> Predicate {
        Predicate::Binary {
            op: BinaryOp::Lt,
            field: 1,
            literal: ScalarValue::Int64(Some(v)),
        }
    }

    #[test]
    fn de_morgan_and_leaf_negation() {
        let p = Predicate::Not(Box::new(Predicate::And(Box::new(lt(5)), Box::new(Predicate::Unknown))));
        let r = rewrite_not(p);
        assert_eq!(
            r,
            Predicate::Or(
                Box::new(Predicate::Binary {
                    op: BinaryOp::GtEq,
                    field: 1,
                    literal: ScalarValue::Int64(Some(5))
                }),
                Box::new(Predicate::Unknown)
            )
        );
    }

    #[test]
    fn double_negation_cancels() {
        let p = Predicate::Not(Box::new(Predicate::Not(Box::new(lt(3)))));
        assert_eq!(rewrite_not(p), lt(3));
    }
}
