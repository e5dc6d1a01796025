//! The `hidden-partitions` command line: run SQL against a warehouse, from
//! `-c`/`-f` scripts ([`run`]) or at a prompt ([`repl`]).

pub mod commands;
pub mod completion;
pub mod history;
pub mod interrupt;
pub mod json_values;
pub mod output;
pub mod progress;
pub mod repl;
pub mod run;
pub mod statement_end;
pub mod table_text;
pub mod variant_text;

pub use output::{MaxRows, NullText, OutputFormat, write_result};
