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

/// Bytes of rows an INSERT buffers by default (`write_buffer_size`).
pub const DEFAULT_WRITE_BUFFER: usize = 256 * 1024 * 1024;

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
        pub write_buffer_size: usize, default = DEFAULT_WRITE_BUFFER
        /// `static`: INSERT OVERWRITE replaces the whole table; `dynamic`:
        /// only the partitions (of the current spec) its rows fall into.
        pub partition_overwrite_mode: String, default = "static".to_string()
        /// The user vouches that no other statement (of this or another
        /// process) writes to the tables this session maintains: lets
        /// `remove_orphan_files` take a `retention_threshold` under 24 hours.
        pub no_concurrent_writers: bool, default = false
        /// Table properties a `CREATE TABLE` gets when its `TBLPROPERTIES`
        /// do not set them, as `key=value` pairs separated by commas (as
        /// Iceberg catalogs' `table-default.*` properties), e.g.
        /// `write.delete.mode=merge-on-read`.
        pub table_defaults: String, default = String::new()
        /// Join-key pruning (`optimizer::join_keys`): a join's other side
        /// with at most this many distinct keys prunes the files of our
        /// table it joins; 0 turns it off.
        pub join_prune_max_keys: usize, default = 10_000
        /// Bytes of files a scan partition reads at least before the scan
        /// uses another (each file counting at least 4 MiB, for opening
        /// it), up to `target_partitions`; 0: `target_partitions`
        /// partitions whenever there are that many files. Ballista
        /// sessions default to 128 MiB: there every partition is a task.
        pub scan_partition_bytes: u64, default = 0
    }
}

impl ConfigExtension for HiddenPartitionsOptions {
    const PREFIX: &'static str = "hidden_partitions";
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
