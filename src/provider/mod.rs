//! DataFusion integration: the `TableProvider`, file planning, the scan node
//! and the INSERT sink.

pub mod dml;
pub mod field_ids;
pub mod planning;
pub mod positions;
pub mod scan_exec;
pub mod sink;
pub mod table_provider;
pub mod write_exec;

pub use scan_exec::HiddenPartitionsScanExec;
pub use table_provider::HiddenPartitionsTable;
