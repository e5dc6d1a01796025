//! What our plan pieces look like on the wire between a Ballista client,
//! scheduler and executors.
//!
//! | payload | starts with  | carries                                                                 |
//! |---------|--------------|-------------------------------------------------------------------------|
//! | table   | `HPTABLE2`   | name, location (store URL, root, storage options), version, metadata JSON, `as_of`, join keys |
//! | scan    | `HPSCAN01`   | table name, file counts, the Parquet scan, pushed filters, run-time map  |
//! | sink    | `HPSINK02`   | the table's name and location, its spec, the overwrite base (INSERT OVERWRITE) |
//! | changelog difference (table) | `HPDIFT01` | the sides' logical plan, the key columns, the sign column |
//! | changelog difference (plan)  | `HPDIFX01` | key and sign column indices, the projection, whether in hash partitions (the input travels as the node's child) |
//! | join with its build rows      | `HPJOIN01` | the hash join with its build side (DataFusion's encoding; the probe side travels as the node's child) |
//!
//! The magic prefix comes first so that our codecs recognise their own
//! bytes before Ballista's codecs (the fallback) ever see them. Storage
//! options are the ones the user configured (`--storage-option`); credentials
//! from the environment (`AWS_*`, …) are never put on the wire.

use std::collections::HashMap;

use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use prost::Message;

pub const TABLE_TAG: &[u8; 8] = b"HPTABLE2";
pub const SCAN_TAG: &[u8; 8] = b"HPSCAN01";
pub const SINK_TAG: &[u8; 8] = b"HPSINK02";
pub const DIFFERENCE_TABLE_TAG: &[u8; 8] = b"HPDIFT01";
pub const DIFFERENCE_EXEC_TAG: &[u8; 8] = b"HPDIFX01";
pub const BUILD_IN_TASKS_TAG: &[u8; 8] = b"HPJOIN01";

/// A broadcast hash join with its build rows (`ballista::build_in_tasks`).
#[derive(Clone, PartialEq, Message)]
pub struct BuildInTasksNode {
    /// The join (DataFusion's encoding) with an empty stand-in for its
    /// probe side, which travels as the node's child.
    #[prost(bytes = "vec", tag = "1")]
    pub join: Vec<u8>,
}

/// A changelog snapshot's difference as a table (`provider::difference`).
#[derive(Clone, PartialEq, Message)]
pub struct DifferenceTableNode {
    /// Both sides' rows, signed: a logical plan (DataFusion's encoding, our tables through our codec).
    #[prost(bytes = "vec", tag = "1")]
    pub input: Vec<u8>,
    #[prost(string, repeated, tag = "2")]
    pub keys: Vec<String>,
    #[prost(string, tag = "3")]
    pub sign: String,
    /// The column of each row's hash of the keys, if the input has one.
    #[prost(string, optional, tag = "4")]
    pub hash: Option<String>,
    /// The ordinal and snapshot id of the changelog columns it adds, if it adds them.
    #[prost(int32, optional, tag = "5")]
    pub ordinal: Option<i32>,
    #[prost(int64, optional, tag = "6")]
    pub snapshot: Option<i64>,
}

/// A changelog snapshot's difference as a plan node.
#[derive(Clone, PartialEq, Message)]
pub struct DifferenceExecNode {
    #[prost(uint32, repeated, tag = "1")]
    pub keys: Vec<u32>,
    #[prost(uint32, tag = "2")]
    pub sign: u32,
    #[prost(bool, tag = "3")]
    pub projected: bool,
    #[prost(uint32, repeated, tag = "4")]
    pub projection: Vec<u32>,
    /// Compared in hash partitions (else in one).
    #[prost(bool, tag = "5")]
    pub parallel: bool,
    /// The input's column of each row's hash of the keys, if it has one.
    #[prost(uint32, optional, tag = "6")]
    pub hash: Option<u32>,
    /// The ordinal and snapshot id of the changelog columns it adds, if it adds them.
    #[prost(int32, optional, tag = "7")]
    pub ordinal: Option<i32>,
    #[prost(int64, optional, tag = "8")]
    pub snapshot: Option<i64>,
}

/// Where a table lives: its store, its root in the store, and the storage
/// options it was opened with.
#[derive(Clone, PartialEq, Message)]
pub struct LocationNode {
    #[prost(string, tag = "1")]
    pub store_url: String,
    #[prost(string, tag = "2")]
    pub root: String,
    #[prost(map = "string, string", tag = "3")]
    pub options: HashMap<String, String>,
}

/// Where a table lives and which version of it a statement planned with.
#[derive(Clone, PartialEq, Message)]
pub struct TableNode {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub location: Option<LocationNode>,
    #[prost(uint64, tag = "5")]
    pub version: u64,
    /// The table's metadata at `version` (`docs/FORMAT.md`), as JSON.
    #[prost(string, tag = "6")]
    pub metadata_json: String,
    #[prost(int64, optional, tag = "7")]
    pub as_of: Option<i64>,
    /// The data files a rewriting statement reads (empty: all).
    #[prost(string, repeated, tag = "8")]
    pub only: Vec<String>,
    #[prost(bool, tag = "9")]
    pub restricted: bool,
    #[prost(string, tag = "10")]
    pub definition: String,
    /// A positions scan (each row with its data file and position).
    #[prost(bool, tag = "11")]
    pub positions: bool,
    /// Keys of joins' other sides the scans are planned with.
    #[prost(message, repeated, tag = "12")]
    pub join_keys: Vec<JoinKeysNode>,
    /// A lineage scan (each row's lineage parts after the table's columns).
    #[prost(bool, tag = "13")]
    pub lineage: bool,
    /// Rows the scans leave out besides deleted ones (a changelog's copied rows).
    #[prost(message, repeated, tag = "14")]
    pub hidden: Vec<HiddenRowsNode>,
    /// A changelog append's own columns, added by the scan: its ordinal
    /// in the range and its snapshot (both set or neither).
    #[prost(int32, optional, tag = "15")]
    pub change_ordinal: Option<i32>,
    #[prost(int64, optional, tag = "16")]
    pub change_snapshot: Option<i64>,
}

/// Positions of one data file a scan leaves out.
#[derive(Clone, PartialEq, Message)]
pub struct HiddenRowsNode {
    #[prost(string, tag = "1")]
    pub path: String,
    /// Sorted.
    #[prost(uint64, repeated, tag = "2")]
    pub positions: Vec<u64>,
}

/// The keys a join's other side gave a table's scans (`optimizer::join_keys`).
#[derive(Clone, PartialEq, Message)]
pub struct JoinKeysNode {
    #[prost(string, tag = "1")]
    pub column: String,
    /// Each an encoded `datafusion.ScalarValue`.
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub values: Vec<Vec<u8>>,
    /// False: more than `max` keys (`values` is empty).
    #[prost(bool, tag = "3")]
    pub found: bool,
    #[prost(uint64, tag = "4")]
    pub max: u64,
    /// The keys' smallest and largest value (encoded), when not `found`.
    #[prost(bytes = "vec", optional, tag = "5")]
    pub low: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "6")]
    pub high: Option<Vec<u8>>,
    /// The key is this function of the column (`KeyFunction::encode`).
    #[prost(string, optional, tag = "7")]
    pub function: Option<String>,
    /// Why the join does not prune the scan.
    #[prost(string, optional, tag = "8")]
    pub refused: Option<String>,
}

/// One selected data file as run-time pruning sees it.
#[derive(Clone, PartialEq, Message)]
pub struct FileNode {
    #[prost(string, tag = "1")]
    pub path: String,
    #[prost(int32, tag = "2")]
    pub spec_id: i32,
    #[prost(uint64, tag = "3")]
    pub manifest: u64,
    /// Partition values, each an encoded `datafusion.ScalarValue`.
    #[prost(bytes = "vec", repeated, tag = "4")]
    pub partition: Vec<Vec<u8>>,
    #[prost(uint64, tag = "5")]
    pub record_count: u64,
    /// Deleted row positions (merge-on-read), sorted.
    #[prost(uint64, repeated, tag = "6")]
    pub deleted: Vec<u64>,
    #[prost(bool, tag = "7")]
    pub has_deletes: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct ScanNode {
    #[prost(string, tag = "1")]
    pub table: String,
    /// `Vec<SpecFileCount>` as JSON.
    #[prost(string, tag = "2")]
    pub counts_json: String,
    /// The Parquet `DataSourceExec` (a `PhysicalPlanNode`).
    #[prost(bytes = "vec", tag = "3")]
    pub inner: Vec<u8>,
    /// Filters pushed into the scan (`PhysicalExprNode`s over its output).
    #[prost(bytes = "vec", repeated, tag = "4")]
    pub filters: Vec<Vec<u8>>,
    #[prost(string, tag = "5")]
    pub metadata_json: String,
    /// The manifests' partition summaries, `Vec<Vec<FieldSummary>>` as JSON.
    #[prost(string, tag = "6")]
    pub manifests_json: String,
    #[prost(message, repeated, tag = "7")]
    pub files: Vec<FileNode>,
    /// The store the files are read from, and the options it was opened with.
    #[prost(string, tag = "8")]
    pub store_url: String,
    #[prost(map = "string, string", tag = "9")]
    pub options: HashMap<String, String>,
    /// The Parquet scan travels as the node's input (`inner` is empty).
    #[prost(bool, tag = "10")]
    pub inner_is_child: bool,
}

#[derive(Clone, PartialEq, Message)]
pub struct SinkNode {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub location: Option<LocationNode>,
    /// The table the commit must land on (see `Table::uuid`).
    #[prost(string, tag = "5")]
    pub table_uuid: String,
    /// The table spec rows are written with, as JSON.
    #[prost(string, tag = "6")]
    pub spec_json: String,
    /// INSERT OVERWRITE: the version it replaces, and its metadata as JSON.
    #[prost(uint64, optional, tag = "7")]
    pub overwrite_version: Option<u64>,
    #[prost(string, tag = "8")]
    pub overwrite_metadata_json: String,
    /// The table's write order (`spec::sort_order::SortOrder` as JSON), empty when unsorted.
    #[prost(string, tag = "9")]
    pub sort_order_json: String,
    /// `write.target-file-size-bytes`.
    #[prost(uint64, tag = "10")]
    pub target_file_size: u64,
}

/// `tag` followed by the message.
pub fn encode(tag: &[u8; 8], message: &impl Message, buf: &mut Vec<u8>) {
    buf.extend_from_slice(tag);
    message.encode(buf).expect("a Vec<u8> grows as needed");
}

/// The message after `tag`, `None` when `buf` is not ours.
pub fn decode<M: Message + Default>(tag: &[u8; 8], buf: &[u8], what: &str) -> Option<Result<M>> {
    let rest = buf.strip_prefix(tag.as_slice())?;
    Some(M::decode(rest).map_err(|e| {
        DataFusionError::Internal(format!(
            "cannot decode a hidden-partitions {what} sent by the Ballista client or scheduler: {e} (are all nodes running the same hidden-partitions version?)"
        ))
    }))
}

pub fn encode_scalar(value: &ScalarValue) -> Result<Vec<u8>> {
    let proto = datafusion_proto::protobuf::ScalarValue::try_from(value)
        .map_err(|e| DataFusionError::Internal(format!("cannot encode value {value}: {e}")))?;
    Ok(proto.encode_to_vec())
}

pub fn decode_scalar(bytes: &[u8]) -> Result<ScalarValue> {
    let proto = datafusion_proto::protobuf::ScalarValue::decode(bytes)
        .map_err(|e| DataFusionError::Internal(format!("cannot decode a value: {e}")))?;
    ScalarValue::try_from(&proto).map_err(|e| DataFusionError::Internal(format!("cannot decode a value: {e}")))
}

pub fn to_json(what: &str, value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| DataFusionError::Internal(format!("cannot encode {what}: {e}")))
}

pub fn from_json<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| DataFusionError::Internal(format!("cannot decode {what}: {e}")))
}
