//! UPDATE and DELETE that read another table, run as the MERGE they mean:
//!
//! | written                                                        | run as |
//! |----------------------------------------------------------------|--------|
//! | `UPDATE t SET v = s.v FROM s WHERE t.k = s.k AND s.x > 0`       | `MERGE INTO t USING s ON t.k = s.k AND s.x > 0 WHEN MATCHED THEN UPDATE SET v = s.v` |
//! | `DELETE FROM t WHERE k IN (SELECT c FROM s …) AND t.y > 1`     | `MERGE INTO t USING (SELECT DISTINCT * FROM (SELECT c FROM s …)) AS __hp_in(__hp_key) ON k = __hp_in.__hp_key AND t.y > 1 WHEN MATCHED THEN DELETE` |
//!
//! DataFusion would not hand such a statement's condition to the table
//! (`optimizer::dml_check` refuses it); MERGE keeps it whole, so the rows
//! changed are exactly those the statement selects. Where the two differ,
//! MERGE is the stricter: an UPDATE whose row meets two source rows is an
//! error (PostgreSQL would pick one of them). `IN` keeps SQL's NULL
//! semantics: a NULL key, or a NULL in the subquery, matches nothing, as
//! `ON k = key` does. `NOT IN`, and `IN` under `OR` or `NOT`, stay refused.

use datafusion::sql::sqlparser::ast::{BinaryOperator, Expr, FromTable, Statement, UpdateTableFromKind};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// The MERGE statement `text` means, when it is an UPDATE … FROM or a
/// DELETE … WHERE k IN (SELECT …); `None` otherwise.
pub fn as_merge(text: &str) -> Option<String> {
    let head = text.trim_start().get(..6)?;
    if !head.eq_ignore_ascii_case("update") && !head.eq_ignore_ascii_case("delete") {
        return None;
    }
    let mut statements = Parser::parse_sql(&GenericDialect {}, text).ok()?;
    if statements.len() != 1 {
        return None;
    }
    match statements.pop()? {
        Statement::Update(u) => {
            let from = match u.from.as_ref()? {
                UpdateTableFromKind::AfterSet(from) | UpdateTableFromKind::BeforeSet(from) => from,
            };
            // One source, as MERGE takes; `FROM a, b` stays refused.
            let [source] = from.as_slice() else {
                return None;
            };
            if !u.table.joins.is_empty() || u.returning.is_some() || u.limit.is_some() || !u.order_by.is_empty() {
                return None;
            }
            let condition = u.selection.as_ref().map_or("true".to_string(), ToString::to_string);
            let assignments: Vec<String> = u.assignments.iter().map(ToString::to_string).collect();
            Some(format!(
                "MERGE INTO {} USING {source} ON {condition} WHEN MATCHED THEN UPDATE SET {}",
                u.table,
                assignments.join(", ")
            ))
        }
        Statement::Delete(d) => {
            let tables = match &d.from {
                FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
            };
            let [target] = tables.as_slice() else {
                return None;
            };
            if !target.joins.is_empty()
                || d.using.is_some()
                || d.returning.is_some()
                || d.limit.is_some()
                || !d.tables.is_empty()
                || !d.order_by.is_empty()
            {
                return None;
            }
            let mut conjuncts = Vec::new();
            split_and(d.selection.as_ref()?, &mut conjuncts);
            let mut keys = conjuncts.iter().filter_map(|c| match c {
                Expr::InSubquery {
                    expr,
                    subquery,
                    negated: false,
                } => Some((expr, subquery)),
                _ => None,
            });
            let (key, subquery) = keys.next()?;
            if keys.next().is_some() {
                return None;
            }
            let rest: Vec<String> = conjuncts
                .iter()
                .filter(|c| !matches!(c, Expr::InSubquery { negated: false, .. }))
                .map(|c| format!(" AND ({c})"))
                .collect();
            Some(format!(
                "MERGE INTO {target} USING (SELECT DISTINCT * FROM ({subquery})) AS __hp_in(__hp_key) ON ({key}) = __hp_in.__hp_key{} WHEN MATCHED THEN DELETE",
                rest.concat()
            ))
        }
        _ => None,
    }
}

/// The operands of a chain of ANDs (parentheses looked through).
fn split_and<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            split_and(left, out);
            split_and(right, out);
        }
        Expr::Nested(inner) => split_and(inner, out),
        other => out.push(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_from_and_delete_in_become_merges() {
        assert_eq!(
            as_merge("UPDATE t SET v = s.v, w = 1 FROM s WHERE t.k = s.k AND s.x > 0").as_deref(),
            Some("MERGE INTO t USING s ON t.k = s.k AND s.x > 0 WHEN MATCHED THEN UPDATE SET v = s.v, w = 1")
        );
        assert_eq!(
            as_merge("update t AS a SET v = b.v FROM (SELECT * FROM s) AS b WHERE a.k = b.k").as_deref(),
            Some("MERGE INTO t AS a USING (SELECT * FROM s) AS b ON a.k = b.k WHEN MATCHED THEN UPDATE SET v = b.v")
        );
        assert_eq!(
            as_merge("DELETE FROM t WHERE k IN (SELECT c FROM s WHERE s.x = 1) AND (y > 1)").as_deref(),
            Some(
                "MERGE INTO t USING (SELECT DISTINCT * FROM (SELECT c FROM s WHERE s.x = 1)) AS __hp_in(__hp_key) ON (k) = __hp_in.__hp_key AND (y > 1) WHEN MATCHED THEN DELETE"
            )
        );
    }

    #[test]
    fn what_merge_cannot_say_is_left_alone() {
        for sql in [
            "UPDATE t SET v = 1 WHERE k = 2",
            "UPDATE t SET v = a.v FROM a, b WHERE t.k = a.k AND a.k = b.k",
            "DELETE FROM t WHERE k NOT IN (SELECT c FROM s)",
            "DELETE FROM t WHERE k IN (SELECT c FROM s) OR y = 1",
            "DELETE FROM t WHERE k IN (SELECT c FROM s) AND j IN (SELECT d FROM s)",
            "DELETE FROM t WHERE k = 1",
            "SELECT 1",
        ] {
            assert_eq!(as_merge(sql), None, "{sql}");
        }
    }
}
