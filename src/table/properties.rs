//! Table properties: string pairs in the table's metadata, with Iceberg's
//! names, committed as metadata only.
//!
//! | statement                                                      | effect                         |
//! |----------------------------------------------------------------|--------------------------------|
//! | `CREATE TABLE t (…) TBLPROPERTIES ('owner' = 'ana')`           | the table starts with them     |
//! | `ALTER TABLE t SET TBLPROPERTIES ('write.delete.mode' = 'copy-on-write')` | set (or replace) each |
//! | `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('owner')`      | remove each                    |
//! | `SELECT * FROM "t$properties"`                                 | key, value                     |
//!
//! Any key may be set, as in Iceberg; the keys this engine acts on are
//! checked when set, so a table never holds a value that a later statement
//! would refuse:
//!
//! | key | values |
//! |-----|--------|
//! | `write.delete.mode`, `write.update.mode`, `write.merge.mode` | `copy-on-write` (the default) or `merge-on-read`: DELETE, UPDATE, MERGE write position delete files (deletion vectors on format version 3 tables) and the new rows instead of rewriting data files |
//! | `write.target-file-size-bytes` | a positive number of bytes (default 536870912, 512 MiB): writers cut data files at this size, `optimize(strategy => 'sort')` writes files of it |
//! | `format-version` | `2` or `3`: not stored; `3` upgrades the table (row lineage starts), never down |

use std::collections::BTreeMap;

use crate::error::Result;
use crate::invalid;
use crate::spec::TableMetadata;
use crate::spec::metadata::ICEBERG_V3;
use crate::store::Versioned;
use crate::table::Table;

/// How DELETE, UPDATE and MERGE change a table (Iceberg's `write.*.mode`).
pub const ROW_LEVEL_MODES: [&str; 3] = ["write.delete.mode", "write.update.mode", "write.merge.mode"];

/// The key of DELETE's mode.
pub const DELETE_MODE: &str = "write.delete.mode";
/// The key of UPDATE's mode.
pub const UPDATE_MODE: &str = "write.update.mode";
/// The key of MERGE's mode.
pub const MERGE_MODE: &str = "write.merge.mode";

/// Whether the statement whose mode is `key` (one of [`ROW_LEVEL_MODES`])
/// writes position delete files on `md` instead of rewriting data files.
pub fn merge_on_read(md: &TableMetadata, key: &str) -> bool {
    md.properties.get(key).map(String::as_str) == Some(MERGE_ON_READ)
}

const MERGE_ON_READ: &str = "merge-on-read";

/// Iceberg's reserved key for the format version.
pub const FORMAT_VERSION: &str = "format-version";

impl Table {
    /// Set each of `properties` (validated first; nothing changes if one is refused).
    pub async fn set_properties(&self, properties: &BTreeMap<String, String>) -> Result<Versioned> {
        self.commit(|md| set_properties(md, properties)).await
    }

    /// Remove each of `keys`; without `if_exists` a missing key is an error.
    pub async fn unset_properties(&self, keys: &[String], if_exists: bool) -> Result<Versioned> {
        self.commit(|md| unset_properties(md, keys, if_exists)).await
    }
}

/// Whether this engine accepts `value` for `key` (see the module docs).
pub fn check_property(key: &str, value: &str) -> Result<()> {
    if key.is_empty() {
        return invalid!("a table property needs a name");
    }
    if key == crate::table::writer::TARGET_FILE_SIZE_PROPERTY {
        return crate::table::writer::parse_target_size(value).map(|_| ());
    }
    if ROW_LEVEL_MODES.contains(&key) {
        return match value {
            "copy-on-write" | MERGE_ON_READ => Ok(()),
            other => invalid!("table property {key} is 'copy-on-write' or 'merge-on-read', not {other:?}"),
        };
    }
    Ok(())
}

/// `md` with `properties` set.
pub fn set_properties(md: &TableMetadata, properties: &BTreeMap<String, String>) -> Result<TableMetadata> {
    let mut next = md.clone();
    for (key, value) in properties {
        if key == FORMAT_VERSION {
            upgrade_format_version(&mut next, value)?;
            continue;
        }
        check_property(key, value)?;
        next.properties.insert(key.clone(), value.clone());
    }
    Ok(next)
}

/// `md` without `keys`.
pub fn unset_properties(md: &TableMetadata, keys: &[String], if_exists: bool) -> Result<TableMetadata> {
    let mut next = md.clone();
    for key in keys {
        if key == FORMAT_VERSION {
            return invalid!("table property {FORMAT_VERSION} cannot be removed: every table has a format version");
        }
        if next.properties.remove(key).is_none() && !if_exists {
            return invalid!("table property {key:?} is not set (UNSET TBLPROPERTIES IF EXISTS ignores missing keys)");
        }
    }
    Ok(next)
}

/// `'format-version' = '3'` on a version 2 table starts its row lineage;
/// the version it has is accepted; down or unknown is refused.
fn upgrade_format_version(md: &mut TableMetadata, value: &str) -> Result<()> {
    let current = if crate::iceberg::json::needs_v3(md) {
        ICEBERG_V3
    } else {
        2
    };
    match value.trim().parse::<u32>() {
        Ok(v) if v == current => Ok(()),
        Ok(v) if v < current => invalid!("the table is format version {current}; it cannot go down to {v}"),
        Ok(ICEBERG_V3) => {
            md.next_row_id = Some(md.next_row_id.unwrap_or(0));
            Ok(())
        }
        _ => invalid!("table property {FORMAT_VERSION} is 2 or 3, not {value:?}"),
    }
}

/// `props` (a CREATE TABLE's TBLPROPERTIES) with the session's
/// `table_defaults` for the keys it does not set.
pub fn with_table_defaults(
    state: &datafusion::execution::context::SessionState,
    props: &std::collections::BTreeMap<String, String>,
) -> crate::error::Result<std::collections::BTreeMap<String, String>> {
    let defaults = crate::config::options(state).table_defaults;
    let mut out = props.clone();
    for pair in defaults.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return crate::invalid!(
                "hidden_partitions.table_defaults is key=value pairs separated by commas, not {pair:?}"
            );
        };
        out.entry(key.trim().to_string())
            .or_insert_with(|| value.trim().to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    fn table() -> TableMetadata {
        let schema = Schema::new(vec![Field::new("a", DataType::Int32, true)]);
        Table::initial_metadata(&schema, &[]).unwrap()
    }

    fn pairs(items: &[(&str, &str)]) -> BTreeMap<String, String> {
        items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn modes_are_checked_and_nothing_changes_when_one_is_refused() {
        let md = table();
        let set = set_properties(&md, &pairs(&[("owner", "ana"), ("write.delete.mode", "copy-on-write")])).unwrap();
        assert_eq!(set.properties.get("owner").map(String::as_str), Some("ana"));
        let err = set_properties(&md, &pairs(&[("a", "b"), ("write.update.mode", "sometimes")])).unwrap_err();
        assert!(err.to_string().contains("not \"sometimes\""), "{err}");
        let mor = set_properties(&md, &pairs(&[("write.delete.mode", "merge-on-read")])).unwrap();
        assert!(merge_on_read(&mor, DELETE_MODE) && !merge_on_read(&mor, MERGE_MODE));
        // A v3 table takes merge-on-read too: its deletes are deletion vectors.
        let v3 = set_properties(&mor, &pairs(&[("format-version", "3")])).unwrap();
        assert!(merge_on_read(&v3, DELETE_MODE) && crate::iceberg::json::needs_v3(&v3));
    }

    #[test]
    fn unset_needs_the_key_unless_if_exists() {
        let md = set_properties(&table(), &pairs(&[("owner", "ana")])).unwrap();
        assert!(unset_properties(&md, &["nope".into()], false).is_err());
        assert_eq!(
            unset_properties(&md, &["nope".into()], true).unwrap().properties.len(),
            1
        );
        assert!(
            unset_properties(&md, &["owner".into()], false)
                .unwrap()
                .properties
                .is_empty()
        );
    }

    #[test]
    fn format_version_goes_up_only() {
        let md = table();
        let v3 = set_properties(&md, &pairs(&[("format-version", "3")])).unwrap();
        assert!(crate::iceberg::json::needs_v3(&v3));
        assert!(!v3.properties.contains_key("format-version"));
        assert!(set_properties(&v3, &pairs(&[("format-version", "2")])).is_err());
        assert!(set_properties(&md, &pairs(&[("format-version", "4")])).is_err());
    }
}
