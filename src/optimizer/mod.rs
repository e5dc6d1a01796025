//! Physical optimization: file pruning with filters known only after
//! physical planning (see [`pruning_rule`]); run-time pruning with dynamic
//! filters lives in the scan node (`provider::scan_exec`).

pub mod pruning_rule;

pub use pruning_rule::{PartitionPruningRule, RULE_NAME};
