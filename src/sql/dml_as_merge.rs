//! UPDATE and DELETE that read another table, run as the MERGE they mean:
//!
//! | written                                                        | run as |
//! |----------------------------------------------------------------|--------|
//! | `UPDATE t SET v = s.v FROM s WHERE t.k = s.k AND s.x > 0`       | `MERGE INTO t USING s ON t.k = s.k AND s.x > 0 WHEN MATCHED THEN UPDATE SET v = s.v` |
//! | `DELETE FROM t WHERE k IN (SELECT c FROM s …) AND t.y > 1`     | `MERGE INTO t USING (SELECT DISTINCT * FROM (SELECT c FROM s …)) AS __hp_in(__hp_key) ON k = __hp_in.__hp_key AND t.y > 1 WHEN MATCHED THEN DELETE` |
//! | `DELETE FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.k = t.k AND s.x = 1)` | `MERGE INTO t USING (SELECT DISTINCT s.k AS __hp_k0 FROM s WHERE s.x = 1) AS __hp_in ON t.k = __hp_in.__hp_k0 WHEN MATCHED THEN DELETE` |
//! | `UPDATE t SET … WHERE k IN (SELECT …)` / `EXISTS (…)`           | the same, `WHEN MATCHED THEN UPDATE SET …` |
//!
//! DataFusion would not hand such a statement's condition to the table
//! (`optimizer::dml_check` refuses it); MERGE keeps it whole, so the rows
//! changed are exactly those the statement selects. Where the two differ,
//! MERGE is the stricter: an UPDATE whose row meets two source rows is an
//! error (PostgreSQL would pick one of them). `IN` keeps SQL's NULL
//! semantics: a NULL key, or a NULL in the subquery, matches nothing, as
//! `ON k = key` does. An `EXISTS` is taken when each condition of its
//! subquery that names the target is an equality `t.k = <inner expression>`
//! (those become the keys; the others filter the source). `NOT IN`,
//! `NOT EXISTS`, and subqueries under `OR` or `NOT`, stay refused.

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, FromTable, GroupByExpr, Ident, Query, SetExpr, Statement, TableFactor, TableWithJoins,
    UpdateTableFromKind,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

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
            if !u.table.joins.is_empty() || u.returning.is_some() || u.limit.is_some() || !u.order_by.is_empty() {
                return None;
            }
            let assignments: Vec<String> = u.assignments.iter().map(ToString::to_string).collect();
            let set = format!("UPDATE SET {}", assignments.join(", "));
            let Some(from) = u.from.as_ref() else {
                // UPDATE t SET … WHERE k IN (SELECT …) / EXISTS (…)
                return semi_join_merge(
                    &u.table.to_string(),
                    target_names(&u.table),
                    u.selection.as_ref()?,
                    &set,
                );
            };
            let from = match from {
                UpdateTableFromKind::AfterSet(from) | UpdateTableFromKind::BeforeSet(from) => from,
            };
            // One source, as MERGE takes; `FROM a, b` stays refused.
            let [source] = from.as_slice() else {
                return None;
            };
            let condition = u.selection.as_ref().map_or("true".to_string(), ToString::to_string);
            Some(format!(
                "MERGE INTO {} USING {source} ON {condition} WHEN MATCHED THEN {set}",
                u.table
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
            semi_join_merge(
                &target.to_string(),
                target_names(target),
                d.selection.as_ref()?,
                "DELETE",
            )
        }
        _ => None,
    }
}

/// `MERGE INTO target USING <keys> ON … WHEN MATCHED THEN action` for a
/// condition with one `k IN (SELECT …)` or correlated `EXISTS (…)` among
/// its top-level ANDs and no other subquery.
fn semi_join_merge(target: &str, names: Vec<String>, condition: &Expr, action: &str) -> Option<String> {
    let mut conjuncts = Vec::new();
    split_and(condition, &mut conjuncts);
    let is_semi = |c: &Expr| {
        matches!(
            c,
            Expr::InSubquery { negated: false, .. } | Expr::Exists { negated: false, .. }
        )
    };
    let mut semis = conjuncts.iter().filter(|c| is_semi(c));
    let semi = semis.next()?;
    if semis.next().is_some() {
        return None;
    }
    let (source, mut on) = match semi {
        Expr::InSubquery { expr, subquery, .. } => (
            format!("(SELECT DISTINCT * FROM ({subquery})) AS __hp_in(__hp_key)"),
            vec![format!("({expr}) = __hp_in.__hp_key")],
        ),
        Expr::Exists { subquery, .. } => exists_keys(subquery.as_ref(), &names)?,
        _ => return None,
    };
    on.extend(conjuncts.iter().filter(|c| !is_semi(c)).map(|c| format!("({c})")));
    Some(format!(
        "MERGE INTO {target} USING {source} ON {} WHEN MATCHED THEN {action}",
        on.join(" AND ")
    ))
}

/// The names a condition refers to the target by: its alias, else its
/// name's last part.
fn target_names(table: &TableWithJoins) -> Vec<String> {
    match &table.relation {
        TableFactor::Table { alias: Some(a), .. } => vec![normal(&a.name)],
        TableFactor::Table { name, .. } => name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(normal)
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

fn normal(ident: &Ident) -> String {
    match ident.quote_style {
        Some(_) => ident.value.clone(),
        None => ident.value.to_lowercase(),
    }
}

/// Whether `e` names a column of the target (`t.c`).
fn refers_to(e: &Expr, names: &[String]) -> bool {
    let text = e.to_string();
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, &text).tokenize() else {
        return true;
    };
    tokens.windows(2).any(|w| match (&w[0], &w[1]) {
        (Token::Word(q), Token::Period) => {
            let q = match q.quote_style {
                Some(_) => q.value.clone(),
                None => q.value.to_lowercase(),
            };
            names.contains(&q)
        }
        _ => false,
    })
}

/// `EXISTS (SELECT … FROM s WHERE s.k = t.k AND …)`: the distinct inner
/// keys as the source, and `t.k = key` terms; `None` unless every
/// conjunct that names the target is such an equality.
fn exists_keys(subquery: &Query, names: &[String]) -> Option<(String, Vec<String>)> {
    if names.is_empty()
        || subquery.with.is_some()
        || subquery.order_by.is_some()
        || subquery.limit_clause.is_some()
        || subquery.fetch.is_some()
    {
        return None;
    }
    let SetExpr::Select(select) = subquery.body.as_ref() else {
        return None;
    };
    let no_grouping = matches!(&select.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
    if select.from.is_empty() || !no_grouping || select.having.is_some() || select.qualify.is_some() {
        return None;
    }
    let mut conjuncts = Vec::new();
    if let Some(selection) = &select.selection {
        split_and(selection, &mut conjuncts);
    }
    let (mut keys, mut on, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for c in conjuncts {
        if !refers_to(c, names) {
            rest.push(format!("({c})"));
            continue;
        }
        let Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } = c
        else {
            return None;
        };
        let (outer, inner) = match (refers_to(left, names), refers_to(right, names)) {
            (true, false) => (left, right),
            (false, true) => (right, left),
            _ => return None,
        };
        let k = keys.len();
        keys.push(format!("{inner} AS __hp_k{k}"));
        on.push(format!("({outer}) = __hp_in.__hp_k{k}"));
    }
    if keys.is_empty() {
        return None;
    }
    let from: Vec<String> = select.from.iter().map(ToString::to_string).collect();
    let filter = if rest.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", rest.join(" AND "))
    };
    Some((
        format!(
            "(SELECT DISTINCT {} FROM {}{filter}) AS __hp_in",
            keys.join(", "),
            from.join(", ")
        ),
        on,
    ))
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
    fn exists_and_in_under_update_and_delete() {
        assert_eq!(
            as_merge("DELETE FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.k = t.k AND s.x = 1) AND t.y > 0").as_deref(),
            Some(
                "MERGE INTO t USING (SELECT DISTINCT s.k AS __hp_k0 FROM s WHERE (s.x = 1)) AS __hp_in ON (t.k) = __hp_in.__hp_k0 AND (t.y > 0) WHEN MATCHED THEN DELETE"
            )
        );
        assert_eq!(
            as_merge("UPDATE t AS a SET v = 0 WHERE EXISTS (SELECT 1 FROM s WHERE a.k = s.k AND a.j = s.j)").as_deref(),
            Some(
                "MERGE INTO t AS a USING (SELECT DISTINCT s.k AS __hp_k0, s.j AS __hp_k1 FROM s) AS __hp_in ON (a.k) = __hp_in.__hp_k0 AND (a.j) = __hp_in.__hp_k1 WHEN MATCHED THEN UPDATE SET v = 0"
            )
        );
        assert_eq!(
            as_merge("UPDATE t SET v = 0 WHERE k IN (SELECT c FROM s)").as_deref(),
            Some(
                "MERGE INTO t USING (SELECT DISTINCT * FROM (SELECT c FROM s)) AS __hp_in(__hp_key) ON (k) = __hp_in.__hp_key WHEN MATCHED THEN UPDATE SET v = 0"
            )
        );
    }

    #[test]
    fn what_merge_cannot_say_is_left_alone() {
        for sql in [
            "UPDATE t SET v = 1 WHERE k = 2",
            "UPDATE t SET v = a.v FROM a, b WHERE t.k = a.k AND a.k = b.k",
            "DELETE FROM t WHERE k NOT IN (SELECT c FROM s)",
            "DELETE FROM t WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.k = t.k)",
            "DELETE FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.k > t.k)",
            "DELETE FROM t WHERE EXISTS (SELECT 1 FROM s WHERE s.x = 1)",
            "DELETE FROM t WHERE EXISTS (SELECT s.k FROM s WHERE s.k = t.k GROUP BY s.k)",
            "DELETE FROM t WHERE k IN (SELECT c FROM s) OR y = 1",
            "DELETE FROM t WHERE k IN (SELECT c FROM s) AND j IN (SELECT d FROM s)",
            "DELETE FROM t WHERE k = 1",
            "SELECT 1",
        ] {
            assert_eq!(as_merge(sql), None, "{sql}");
        }
    }
}
