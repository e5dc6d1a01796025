//! One `CommitTableRequest` on a table of ours, through the commit protocol
//! our own writers use.
//!
//! 1. The requirements are checked against the latest version.
//! 2. The client's snapshots are turned into changes of ours
//!    (`formats::iceberg::adopt`: the I/O, done once), in order, each on
//!    the metadata as the updates before it leave it.
//! 3. [`Table::commit`] applies requirements and updates to the latest
//!    version — again after a lost race, so a commit that lost to another
//!    writer is checked against the winner: a requirement that no longer
//!    holds fails it (`CommitConflict`, a 409), never a lost update.
//!
//! Manifests written in step 2 are deleted when the commit fails for sure;
//! the client's own files are the client's.

use std::borrow::Cow;
use std::collections::HashMap;

use super::updates::{CommitRequest, Pending, Update, apply_one, check_requirements};
use crate::error::Result;
use crate::formats::iceberg::adopt::{ForeignSnapshot, adopt};
use crate::spec::TableMetadata;
use crate::store::{TableLocation, Versioned};
use crate::table::Table;
use crate::table::change::Change;

/// The client's snapshots of `request` as changes, prepared on `base`, and
/// `base` with every update applied (to check them before committing).
pub async fn prepare(
    location: &TableLocation,
    base: &TableMetadata,
    request: &CommitRequest,
    table: &str,
) -> Result<(HashMap<i64, Change>, TableMetadata)> {
    let mut prepared: HashMap<i64, Change> = HashMap::new();
    let mut md = Cow::Borrowed(base);
    let mut pending = Pending::default();
    for update in &request.updates {
        let step = async {
            if let Update::AddSnapshot { snapshot } = update {
                let foreign = ForeignSnapshot::parse(snapshot)?;
                let change = adopt(location, &md, &foreign, table).await?;
                prepared.insert(foreign.snapshot_id, change);
            }
            apply_one(&md, update, &prepared, &mut pending, table)
        }
        .await;
        match step {
            Ok(next) => md = Cow::Owned(next),
            Err(e) => {
                discard(location, &prepared).await;
                return Err(e);
            }
        }
    }
    Ok((prepared, md.into_owned()))
}

/// `latest` with `request` applied, using the prepared changes.
pub fn apply(
    latest: &TableMetadata,
    request: &CommitRequest,
    prepared: &HashMap<i64, Change>,
    table: &str,
) -> Result<TableMetadata> {
    check_requirements(latest, &request.requirements, table)?;
    let mut pending = Pending::default();
    let mut md = Cow::Borrowed(latest);
    for update in &request.updates {
        md = Cow::Owned(apply_one(&md, update, prepared, &mut pending, table)?);
    }
    Ok(md.into_owned())
}

/// Delete the manifests the prepared changes wrote.
pub async fn discard(location: &TableLocation, prepared: &HashMap<i64, Change>) {
    for change in prepared.values() {
        change.discard(location).await;
    }
}

/// Commit `request` to `table` (a table of ours, bound to its uuid) on
/// `base`, a version of it just loaded: the requirements are checked on it
/// first, then again on the latest version when committing. `None` when
/// there is nothing to commit. The client's files are read before waiting
/// for `turn`, the table's commit lock of this process.
pub async fn commit(
    table: &Table,
    base: &TableMetadata,
    request: &CommitRequest,
    turn: &tokio::sync::Mutex<()>,
) -> Result<Option<Versioned>> {
    check_requirements(base, &request.requirements, &table.name)?;
    if request.updates.is_empty() {
        return Ok(None);
    }
    let (prepared, _) = prepare(&table.location, base, request, &table.name).await?;
    let _turn = turn.lock().await;
    let result = table
        .commit(|latest| apply(latest, request, &prepared, &table.name))
        .await;
    if let Err(e) = &result
        && !e.commit_may_have_happened()
    {
        discard(&table.location, &prepared).await;
    }
    result.map(Some)
}
