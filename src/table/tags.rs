//! Tags: names for snapshots, committed as metadata only.
//!
//! | statement                          | effect                                               |
//! |------------------------------------|------------------------------------------------------|
//! | `ALTER TABLE t CREATE TAG before`  | `before` names the current snapshot                  |
//! | `SELECT * FROM "t@before"`         | the table as of that snapshot, with its schema       |
//! | `ALTER TABLE t DROP TAG before`    | the name is gone (the snapshot stays until expired)  |
//!
//! Tagged snapshots are kept by snapshot expiry, as in Iceberg.

use crate::error::Result;
use crate::invalid;
use crate::spec::{SnapshotRef, TableMetadata};
use crate::store::Versioned;
use crate::table::Table;

impl Table {
    /// Name the current snapshot `name`.
    pub async fn create_tag(&self, name: &str) -> Result<Versioned> {
        self.commit(|md| create_tag(md, name)).await
    }

    /// Remove tag `name`; with `if_exists`, a missing tag is not an error.
    pub async fn drop_tag(&self, name: &str, if_exists: bool) -> Result<Versioned> {
        self.commit(|md| drop_tag(md, name, if_exists)).await
    }
}

fn create_tag(md: &TableMetadata, name: &str) -> Result<TableMetadata> {
    if name.is_empty() || name.parse::<i64>().is_ok() || name.contains(['@', '$']) {
        return invalid!("invalid tag name {name:?}: a tag is a name, not a number, and has no '@' or '$'");
    }
    if md.refs.contains_key(name) {
        return invalid!("tag {name:?} already exists");
    }
    let Some(snapshot_id) = md.current_snapshot_id else {
        return invalid!("cannot create tag {name:?}: the table has no snapshot yet (insert rows first)");
    };
    let mut next = md.clone();
    next.refs.insert(
        name.to_string(),
        SnapshotRef {
            snapshot_id,
            kind: "tag".to_string(),
        },
    );
    Ok(next)
}

fn drop_tag(md: &TableMetadata, name: &str, if_exists: bool) -> Result<TableMetadata> {
    let mut next = md.clone();
    if next.refs.remove(name).is_none() && !if_exists {
        return invalid!("tag {name:?} does not exist");
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Table;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    #[test]
    fn tags_need_a_snapshot_and_unique_names() {
        let schema = Schema::new(vec![Field::new("a", DataType::Int32, true)]);
        let mut md = Table::initial_metadata(&schema, &[]).unwrap();
        assert!(create_tag(&md, "x").is_err());
        md.current_snapshot_id = Some(7);
        let tagged = create_tag(&md, "x").unwrap();
        assert_eq!(tagged.refs["x"].snapshot_id, 7);
        assert!(create_tag(&tagged, "x").is_err());
        assert!(create_tag(&md, "12").is_err());
        assert!(drop_tag(&md, "x", false).is_err());
        assert!(drop_tag(&md, "x", true).is_ok());
        assert!(drop_tag(&tagged, "x", false).unwrap().refs.is_empty());
    }
}
