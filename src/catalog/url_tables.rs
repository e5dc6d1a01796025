//! `SELECT * FROM 'data.csv'`: a table name that is a file's path or URL is
//! read as DataFusion's URL tables are (a listing table, its format from the
//! extension, its schema inferred). A warehouse schema tries this last, after
//! its tables and stored definitions (see `catalog::schema`).
//!
//! | name                         | read as                          |
//! |------------------------------|----------------------------------|
//! | `'events.csv'`, `'x.parquet.gz'` | that file                    |
//! | `'dir/'`, `'s3://b/p/'`      | the files under it               |
//! | `events` (no `/`, no file extension) | never a file: "table not found" |

use std::sync::Arc;

use datafusion::catalog::TableProvider;
use datafusion::execution::SessionState;

use crate::error::{Error, Result};

/// Whether a table name is a file's path or URL (`'data.csv'`,
/// `'s3://b/x.parquet'`, `'dir/'`): only such names are read as DataFusion's
/// URL tables, so a mistyped table name is never read from the current
/// directory.
pub fn looks_like_file(name: &str) -> bool {
    const EXTENSIONS: [&str; 7] = [".csv", ".tsv", ".parquet", ".json", ".ndjson", ".avro", ".arrow"];
    const COMPRESSIONS: [&str; 5] = [".gz", ".bz2", ".xz", ".zst", ".zstd"];
    let lower = name.to_ascii_lowercase();
    let stem = COMPRESSIONS
        .iter()
        .find_map(|c| lower.strip_suffix(c))
        .unwrap_or(&lower);
    name.contains('/') || EXTENSIONS.iter().any(|e| stem.ends_with(e))
}

/// A file (or directory of files) read as a table, its format from its
/// extension and its schema inferred, as DataFusion's URL tables are.
pub async fn url_table(state: &SessionState, name: &str) -> Result<Arc<dyn TableProvider>> {
    use datafusion::datasource::listing::{ListingTable, ListingTableConfig, ListingTableConfigExt, ListingTableUrl};
    let cannot = |e: datafusion::error::DataFusionError| Error::Invalid(format!("cannot read {name:?} as a file: {e}"));
    let url = ListingTableUrl::parse(name).map_err(cannot)?;
    let config = ListingTableConfig::new(url)
        .infer_options(state)
        .await
        .map_err(cannot)?
        .infer_partitions_from_path(state)
        .await
        .map_err(cannot)?
        .infer_schema(state)
        .await
        .map_err(cannot)?;
    Ok(Arc::new(ListingTable::try_new(config)?))
}
