//! The `hidden-partitions` command line: run SQL against a warehouse.

pub mod output;
pub mod progress;
pub mod repl;

pub use output::{OutputFormat, write_result};
