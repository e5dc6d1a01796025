//! Tables whose metadata another format owns (an Iceberg table this engine
//! did not create): how their versions are loaded and committed.
//!
//! The write statements (`table::delete`, `update`, `merge`, the INSERT
//! sink, …) run unchanged on such a table. They see it in our shape (a
//! [`Versioned`] `TableMetadata` whose manifests the table's location can
//! read) and hand their result to [`ForeignCommits::commit`], which writes
//! it in the format's own terms (for Iceberg: an Avro manifest list and the
//! next `*.metadata.json`, keeping everything it does not interpret).

use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;

use crate::error::Result;
use crate::plan::files::PlannedFile;
use crate::spec::TableMetadata;
use crate::store::Versioned;

/// The change a statement makes, as a function of the latest metadata (it
/// is called again after a lost race).
pub type Apply<'a> = dyn FnMut(&TableMetadata) -> Result<TableMetadata> + Send + 'a;

/// Loading and committing the versions of a table of another format.
#[async_trait]
pub trait ForeignCommits: Debug + Send + Sync {
    /// The latest version in our shape. Its manifests are readable through
    /// the location of the `Table` this belongs to.
    async fn load(&self) -> Result<Versioned>;
    /// Version `version` in our shape, when it is the one these commits
    /// last read (a table resolved by the statement being planned),
    /// otherwise the latest. A statement plans its write on the version it
    /// resolved; the commit is conditional either way.
    async fn load_at(&self, version: u64) -> Result<Versioned> {
        let _ = version;
        self.load().await
    }
    /// Commit `apply(latest)` as the next version.
    async fn commit(&self, apply: &mut Apply<'_>) -> Result<Versioned>;
    /// The rows the format's own delete files (another engine's
    /// merge-on-read) delete from `files`, planned on `version`, as sorted
    /// positions (`None`: none). A statement that reads the files to rewrite
    /// them must not bring those rows back.
    async fn deleted_positions(&self, version: u64, files: &[PlannedFile]) -> Result<Vec<Option<Arc<[u64]>>>> {
        let _ = version;
        Ok(vec![None; files.len()])
    }
}
