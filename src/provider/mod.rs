//! DataFusion integration: the `TableProvider`, the scan node and the
//! INSERT sink (the files a scan reads are chosen in `plan/`).

pub mod change_type;
pub mod changes;
pub mod difference;
pub mod dml;
pub mod exact_key;
pub mod field_ids;
pub mod row_hash;
pub mod scan_exec;
pub mod side_planner;
pub mod sink;
pub mod table_provider;
pub mod write_exec;

pub use scan_exec::HiddenPartitionsScanExec;
pub use table_provider::HiddenPartitionsTable;
