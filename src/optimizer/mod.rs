//! Optimization: file pruning with filters known only after physical
//! planning (see [`pruning_rule`]); run-time pruning with dynamic filters
//! lives in the scan node (`provider::scan_exec`). Also the analyzer rule
//! that records DELETE / UPDATE statements as written for the table
//! ([`dml_check`]), the one that keeps decimal literals beside floats
//! from turning float columns into decimals ([`float_literals`]), and the
//! one that refuses comparing or ordering VARIANT values ([`variant_order`]),
//! and the guard that keeps MIN/MAX from pushing running bounds into scans
//! while DataFusion builds them wrongly ([`aggregate_filter_guard`]).
//! Not a rule but a rewrite of the plan about to run: joins that stop when
//! their statement is cancelled ([`stop_on_cancel`]).

pub mod aggregate_filter_guard;
pub mod dml_check;
pub mod float_literals;
pub mod join_keys;
pub mod pruning_rule;
pub mod stop_on_cancel;
pub mod variant_order;

pub use aggregate_filter_guard::{AGGREGATE_FILTER_GUARD_NAME, AggregateFilterGuard};
pub use dml_check::{DML_CHECK_NAME, DmlCheck};
pub use float_literals::{DecimalLiteralsBesideFloats, FLOAT_LITERALS_NAME};
pub use pruning_rule::{PartitionPruningRule, RULE_NAME};
pub use variant_order::{VARIANT_ORDER_NAME, VariantOrder};
