//! The statement layer: `CREATE TABLE … PARTITIONED BY (…)` and friends,
//! usable from Rust ([`execute_sql`]) and from the CLI.

pub mod as_of;
pub mod describe;
pub mod dml_as_merge;
pub mod execute;
pub mod insert_errors;
pub mod literals;
pub mod sort_list;
pub mod statement;
pub mod table_changes;
pub mod tblproperties;
pub mod timestamp_precision;
pub mod transform_list;
pub mod type_planner;
pub mod views;
pub mod with_properties;

pub use execute::{StatementResult, execute_sql, execute_statement, execute_statement_stream};
pub use statement::{Statement, parse_each, parse_statements};
