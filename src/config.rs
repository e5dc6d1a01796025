//! Session options of hidden-partitions, set with SQL like any DataFusion
//! option: `SET hidden_partitions.allow_non_empty_location = true`.
//!
//! | option                                     | default | meaning                                              |
//! |--------------------------------------------|---------|------------------------------------------------------|
//! | `hidden_partitions.allow_non_empty_location` | `false` | let `CREATE TABLE … LOCATION` use a directory that already holds other files |
//! | `hidden_partitions.partition_overwrite_mode` | `static` | `INSERT OVERWRITE` replaces the whole table (`static`) or only the partitions its rows fall into (`dynamic`) |
//! | `hidden_partitions.write_buffer_size`      | 256 MiB | rows an INSERT buffers before writing out the largest partitions (also bounded by `datafusion.runtime.memory_limit`) |
//! | `hidden_partitions.no_concurrent_writers`  | `false` | the user knows no other statement writes to the table: `remove_orphan_files` may take a threshold under 24 hours |

use datafusion::common::config::ConfigExtension;
use datafusion::common::extensions_options;
use datafusion::execution::context::SessionState;

extensions_options! {
    /// Options under the `hidden_partitions.` prefix.
    pub struct HiddenPartitionsOptions {
        /// Let `CREATE TABLE … LOCATION '…'` (or a warehouse table directory)
        /// use a place that already holds files that are not a table's.
        /// Those files are never read, listed as orphans, or deleted.
        pub allow_non_empty_location: bool, default = false
        /// Bytes of rows an INSERT buffers (over all partitions, plus files
        /// being encoded) before it writes out the largest partitions as
        /// files; the session's memory pool may grant less.
        pub write_buffer_size: usize, default = crate::table::writer::DEFAULT_WRITE_BUFFER
        /// `static`: INSERT OVERWRITE replaces the whole table; `dynamic`:
        /// only the partitions (of the current spec) its rows fall into.
        pub partition_overwrite_mode: String, default = "static".to_string()
        /// The user vouches that no other statement (of this or another
        /// process) writes to the tables this session maintains: lets
        /// `remove_orphan_files` take a `retention_threshold` under 24 hours.
        pub no_concurrent_writers: bool, default = false
    }
}

impl ConfigExtension for HiddenPartitionsOptions {
    const PREFIX: &'static str = "hidden_partitions";
}

/// How a statement running in `task` may write: its memory pool, the
/// write buffer size, and as many files at once as target partitions.
pub fn write_options(task: &datafusion::execution::TaskContext) -> crate::table::writer::WriteOptions {
    let config = task.session_config();
    let ours = config
        .options()
        .extensions
        .get::<HiddenPartitionsOptions>()
        .cloned()
        .unwrap_or_default();
    crate::table::writer::WriteOptions {
        buffer_limit: ours.write_buffer_size,
        memory_pool: task.memory_pool().clone(),
        parallelism: config.target_partitions(),
    }
}

/// The options of a session (defaults when the extension is not installed).
pub fn options(state: &SessionState) -> HiddenPartitionsOptions {
    state
        .config_options()
        .extensions
        .get::<HiddenPartitionsOptions>()
        .cloned()
        .unwrap_or_default()
}
