//! The predicate language pruning works on: comparisons of a field (by id)
//! with literals, combined with AND / OR / NOT.
//!
//! `Unknown` stands for any part of a filter that could not be translated. It
//! is kept explicit (not turned into `true`) until NOT has been pushed down,
//! because `NOT unknown` is still unknown while `NOT true` would be `false`
//! and lose rows.

use std::fmt;

use datafusion::common::ScalarValue;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    IsNull,
    NotNull,
    IsNan,
    NotNan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Lt,
    LtEq,
    Gt,
    GtEq,
    Eq,
    NotEq,
    StartsWith,
    NotStartsWith,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    In,
    NotIn,
}

/// A predicate over fields identified by id (source field ids before
/// projection, partition field ids after).
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    True,
    False,
    Unknown,
    And(Box<Predicate>, Box<Predicate>),
    Or(Box<Predicate>, Box<Predicate>),
    Not(Box<Predicate>),
    Unary {
        op: UnaryOp,
        field: i32,
    },
    Binary {
        op: BinaryOp,
        field: i32,
        literal: ScalarValue,
    },
    Set {
        op: SetOp,
        field: i32,
        literals: Vec<ScalarValue>,
    },
}

impl BinaryOp {
    /// The operator with its operands swapped: `5 < x` is `x > 5`.
    pub fn flip(self) -> BinaryOp {
        match self {
            BinaryOp::Lt => BinaryOp::Gt,
            BinaryOp::LtEq => BinaryOp::GtEq,
            BinaryOp::Gt => BinaryOp::Lt,
            BinaryOp::GtEq => BinaryOp::LtEq,
            other => other,
        }
    }

    pub fn negate(self) -> BinaryOp {
        match self {
            BinaryOp::Lt => BinaryOp::GtEq,
            BinaryOp::LtEq => BinaryOp::Gt,
            BinaryOp::Gt => BinaryOp::LtEq,
            BinaryOp::GtEq => BinaryOp::Lt,
            BinaryOp::Eq => BinaryOp::NotEq,
            BinaryOp::NotEq => BinaryOp::Eq,
            BinaryOp::StartsWith => BinaryOp::NotStartsWith,
            BinaryOp::NotStartsWith => BinaryOp::StartsWith,
        }
    }
}

impl Predicate {
    pub fn and(a: Predicate, b: Predicate) -> Predicate {
        match (a, b) {
            (Predicate::False, _) | (_, Predicate::False) => Predicate::False,
            (Predicate::True, x) | (x, Predicate::True) => x,
            (a, b) => Predicate::And(Box::new(a), Box::new(b)),
        }
    }

    pub fn or(a: Predicate, b: Predicate) -> Predicate {
        match (a, b) {
            (Predicate::True, _) | (_, Predicate::True) => Predicate::True,
            (Predicate::False, x) | (x, Predicate::False) => x,
            (a, b) => Predicate::Or(Box::new(a), Box::new(b)),
        }
    }

    pub fn and_all(preds: impl IntoIterator<Item = Predicate>) -> Predicate {
        preds.into_iter().fold(Predicate::True, Predicate::and)
    }

    pub fn or_all(preds: impl IntoIterator<Item = Predicate>) -> Predicate {
        preds.into_iter().fold(Predicate::False, Predicate::or)
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::True => write!(f, "true"),
            Predicate::False => write!(f, "false"),
            Predicate::Unknown => write!(f, "unknown"),
            Predicate::And(a, b) => write!(f, "({a} AND {b})"),
            Predicate::Or(a, b) => write!(f, "({a} OR {b})"),
            Predicate::Not(a) => write!(f, "NOT {a}"),
            Predicate::Unary { op, field } => write!(f, "#{field} {op:?}"),
            Predicate::Binary { op, field, literal } => write!(f, "#{field} {op:?} {literal}"),
            Predicate::Set { op, field, literals } => {
                let lits: Vec<String> = literals.iter().map(|l| l.to_string()).collect();
                write!(f, "#{field} {op:?} ({})", lits.join(", "))
            }
        }
    }
}
