//! Session options of hidden-partitions, set with SQL like any DataFusion
//! option: `SET hidden_partitions.allow_non_empty_location = true`.
//!
//! | option                                     | default | meaning                                              |
//! |--------------------------------------------|---------|------------------------------------------------------|
//! | `hidden_partitions.allow_non_empty_location` | `false` | let `CREATE TABLE … LOCATION` use a directory that already holds other files |

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
