//! Optimization: file pruning with filters known only after physical
//! planning (see [`pruning_rule`]); run-time pruning with dynamic filters
//! lives in the scan node (`provider::scan_exec`). Also the analyzer check
//! that DELETE / UPDATE conditions reach the table ([`dml_check`]), and
//! common-subexpression elimination kept away from UPDATE ([`update_cse`]).

pub mod dml_check;
pub mod pruning_rule;
pub mod update_cse;

pub use dml_check::{DML_CHECK_NAME, DmlSubqueryCheck};
pub use pruning_rule::{PartitionPruningRule, RULE_NAME};
pub use update_cse::{CseExceptUpdate, UPDATE_CSE_NAME, replace_cse};
