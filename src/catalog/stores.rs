//! Every URL a statement names reaches its store with the session's storage
//! options (`--storage-option`), not only the warehouse and `LOCATION`
//! tables: `COPY … TO 's3://…'`, `CREATE EXTERNAL TABLE … LOCATION 'gs://…'`
//! and `SELECT * FROM 's3://…/x.parquet'` alike.
//!
//! DataFusion finds a store by its URL in the session's registry and fails
//! for one nobody registered; so before a statement runs, the store of each
//! cloud URL in its string literals is built from the warehouse's options
//! and registered (once per store; a store the user registered is kept).

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use super::WarehouseSchema;
use crate::store::url::{Scheme, parse_location};

/// The cloud URLs (`s3://`, `gs://`, `az://`, …) among the string literals
/// and quoted names of `sql`.
pub fn cloud_urls(sql: &str) -> Vec<String> {
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize() else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for token in tokens {
        let text = match token {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
            Token::Word(w) if w.quote_style.is_some() => w.value,
            _ => continue,
        };
        if text.contains("://")
            && let Ok(place) = parse_location(&text)
            && !matches!(place.scheme, Scheme::Local | Scheme::Memory)
            && !out.contains(&text)
        {
            out.push(text);
        }
    }
    out
}

/// Register the store of every cloud URL in `sql` that the session has no
/// store for, built from `schema`'s warehouse options. A store that cannot
/// be built (a literal that only looks like a URL) is left to the statement
/// to report if it uses it.
pub fn register_stores(schema: &WarehouseSchema, sql: &str) {
    for url in cloud_urls(sql) {
        let _ = schema.resolve_location(&url);
    }
}

#[cfg(test)]
mod tests {
    use super::cloud_urls;

    #[test]
    fn finds_cloud_urls_in_literals_only() {
        let sql = "COPY (SELECT 's3://not/this' AS x) TO 's3://bucket/out/' STORED AS PARQUET; \
                   SELECT * FROM 'gs://b/data.csv' WHERE note = 'file:///tmp/x' -- 'az://c/p'";
        assert_eq!(
            cloud_urls(sql),
            vec!["s3://not/this", "s3://bucket/out/", "gs://b/data.csv"]
        );
        assert!(cloud_urls("SELECT 'no url', 'https//x'").is_empty());
    }
}
