//! The physical codec: our plan nodes inside the stage plans a Ballista
//! scheduler sends to executors.
//!
//! | node                                  | on the wire                                              |
//! |---------------------------------------|----------------------------------------------------------|
//! | `HiddenPartitionsScanExec`            | the Parquet scan (DataFusion's own encoding), the pushed filters, the selected files' specs and partition values |
//! | `DataSinkExec` + `HiddenPartitionsSink` | the table, its spec (INSERT; the input travels as the node's child) |
//! | `WriteExec` (DELETE, UPDATE, MERGE)   | refused: row-level writes run in a local session         |
//! | `DifferenceExec` (changelog reads)    | its key, sign, row hash and projected columns; the input as its child |
//! | `BuildInTasksExec` (a join with its build rows) | the hash join with its build side, an empty stand-in for the probe side; the probe as its child |
//!
//! DataFusion's Parquet encoding drops the expression adapter, so the scan
//! re-attaches the one that matches columns by field id after decoding;
//! without it an executor would read renamed columns by name.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::datasource::physical_plan::FileGroup;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::{FileScanConfig, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::{PhysicalExprNode, PhysicalPlanNode};
use object_store::ObjectStore;
use object_store::path::Path;
use prost::Message;

use super::build_in_tasks::{BuildInTasksExec, with_probe};
use super::functions::{aggregate_by_name, scalar_by_name};
use super::stores::{location_from_wire, location_to_wire, options_from_wire, options_to_wire, store_for};
use super::wire::{
    self, BUILD_IN_TASKS_TAG, BuildInTasksNode, DIFFERENCE_EXEC_TAG, DifferenceExecNode, FileNode, SCAN_TAG, SINK_TAG,
    ScanNode, SinkNode,
};
use crate::manifest::deletes::skipping_deleted;
use crate::provider::HiddenPartitionsScanExec;
use crate::provider::difference::DifferenceExec;
use crate::provider::field_ids::FieldIdAdapterFactory;
use crate::provider::scan_exec::{FileInfo, RuntimeContext};
use crate::provider::sink::HiddenPartitionsSink;
use crate::provider::write_exec::WriteExec;
use crate::spec::{TableMetadata, TableSpec};
use crate::store::Versioned;
use crate::table::Table;

#[derive(Debug)]
pub struct HiddenPartitionsPhysicalCodec {
    fallback: Arc<dyn PhysicalExtensionCodec>,
}

impl Default for HiddenPartitionsPhysicalCodec {
    fn default() -> Self {
        Self::new(Arc::new(ballista_core::serde::BallistaPhysicalExtensionCodec::default()))
    }
}

impl HiddenPartitionsPhysicalCodec {
    /// Our codec in front of `fallback` (for everything that is not ours).
    pub fn new(fallback: Arc<dyn PhysicalExtensionCodec>) -> Self {
        Self { fallback }
    }

    fn encode_scan(
        &self,
        scan: &HiddenPartitionsScanExec,
        conv: &dyn PhysicalProtoConverterExtension,
    ) -> Result<ScanNode> {
        let runtime = scan.runtime();
        // As a child, the Parquet scan travels as the node's input.
        let inner = match scan.inner_is_child() {
            true => Vec::new(),
            false => conv.execution_plan_to_proto(scan.inner(), self)?.encode_to_vec(),
        };
        let filters = scan
            .runtime_filters()
            .iter()
            .map(|f| Ok(conv.physical_expr_to_proto(f, self)?.encode_to_vec()))
            .collect::<Result<Vec<_>>>()?;
        let mut files = runtime
            .files
            .iter()
            .map(|(path, info)| {
                Ok(FileNode {
                    path: path.to_string(),
                    spec_id: info.spec_id,
                    manifest: info.manifest as u64,
                    partition: info.partition.iter().map(wire::encode_scalar).collect::<Result<_>>()?,
                    record_count: info.record_count,
                    deleted: info.deletes.as_deref().map(<[u64]>::to_vec).unwrap_or_default(),
                    has_deletes: info.deletes.is_some(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let (store_url, options) = scan_store(scan)?;
        Ok(ScanNode {
            table: scan.table().to_string(),
            counts_json: wire::to_json("file counts", &scan.file_counts())?,
            inner,
            filters,
            metadata_json: wire::to_json("table metadata", runtime.metadata.as_ref())?,
            manifests_json: wire::to_json("manifest summaries", &runtime.manifests)?,
            files,
            store_url,
            options,
            inner_is_child: scan.inner_is_child(),
        })
    }

    fn decode_scan(
        &self,
        node: ScanNode,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        conv: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let store = match node.store_url.as_str() {
            "" => None,
            url => Some(store_for(ctx, url, &options_from_wire(&node.options))?),
        };
        let metadata: TableMetadata = wire::from_json("table metadata", &node.metadata_json)?;
        let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
        let inner = match (node.inner_is_child, inputs) {
            (true, [inner]) => Arc::clone(inner),
            (true, _) => {
                return Err(DataFusionError::Internal(format!(
                    "the scan of {} arrived with {} inputs, expected its Parquet scan",
                    node.table,
                    inputs.len()
                )));
            }
            (false, _) => {
                let inner = PhysicalPlanNode::decode(node.inner.as_slice()).map_err(|e| {
                    DataFusionError::Internal(format!("cannot decode the Parquet scan of {}: {e}", node.table))
                })?;
                conv.proto_to_execution_plan(&inner, &decode_ctx)?
            }
        };
        let files: HashMap<Path, FileInfo> = node
            .files
            .iter()
            .map(|f| {
                let partition = f
                    .partition
                    .iter()
                    .map(|v| wire::decode_scalar(v))
                    .collect::<Result<_>>()?;
                Ok((
                    Path::from(f.path.as_str()),
                    FileInfo {
                        spec_id: f.spec_id,
                        partition,
                        manifest: f.manifest as usize,
                        record_count: f.record_count,
                        deletes: f.has_deletes.then(|| Arc::from(f.deleted.as_slice())),
                    },
                ))
            })
            .collect::<Result<_>>()?;
        let inner = bound_to_table(inner, &metadata, store, ctx, &files)?;
        let schema = inner.schema();
        let filters = node
            .filters
            .iter()
            .map(|bytes| {
                let expr = PhysicalExprNode::decode(bytes.as_slice())
                    .map_err(|e| DataFusionError::Internal(format!("cannot decode a filter of {}: {e}", node.table)))?;
                conv.proto_to_physical_expr(&expr, &schema, &decode_ctx)
            })
            .collect::<Result<Vec<_>>>()?;
        let runtime = RuntimeContext {
            metadata: Arc::new(metadata),
            manifests: wire::from_json("manifest summaries", &node.manifests_json)?,
            files,
            requests: None,
            options: options_from_wire(&node.options),
        };
        Ok(Arc::new(HiddenPartitionsScanExec::decoded(
            node.table,
            wire::from_json("file counts", &node.counts_json)?,
            inner,
            Arc::new(runtime),
            filters,
            node.inner_is_child,
        )))
    }

    fn decode_sink(
        &self,
        node: SinkNode,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let [input] = inputs else {
            return Err(DataFusionError::Internal(format!(
                "the INSERT into {} arrived with {} inputs, expected 1",
                node.name,
                inputs.len()
            )));
        };
        let location = location_from_wire(ctx, node.location.as_ref())?;
        let table = Table::new(node.name.clone(), location).bound(&node.table_uuid);
        let spec: TableSpec = wire::from_json("table spec", &node.spec_json)?;
        let schema = spec.schema.arrow_schema();
        let order: Option<crate::spec::sort_order::SortOrder> = match node.sort_order_json.as_str() {
            "" => None,
            json => Some(wire::from_json("sort order", json)?),
        };
        let mut sink = HiddenPartitionsSink::new(table, spec, schema).with_layout(order, node.target_file_size)?;
        if let Some(version) = node.overwrite_version {
            let metadata: TableMetadata = wire::from_json("table metadata", &node.overwrite_metadata_json)?;
            sink = sink.overwrite(Versioned {
                version,
                metadata: metadata.into(),
            });
        }
        Ok(Arc::new(DataSinkExec::new(Arc::clone(input), Arc::new(sink), None)))
    }
}

/// The store URL and options of the table a scan reads.
fn scan_store(scan: &HiddenPartitionsScanExec) -> Result<(String, std::collections::HashMap<String, String>)> {
    let url = scan
        .inner()
        .downcast_ref::<DataSourceExec>()
        .and_then(|ds| ds.data_source().downcast_ref::<FileScanConfig>())
        .map(|c| c.object_store_url.as_str().to_string())
        .unwrap_or_default();
    Ok((url, options_to_wire(&scan.runtime().options)))
}

/// The Parquet scan with what DataFusion's encoding drops or binds too
/// early: the adapter that matches columns by field id, the row selections
/// that skip deleted rows, and the table's store (a Parquet scan decoded as
/// a child opens its store before the table's options are known on this node).
fn bound_to_table(
    inner: Arc<dyn ExecutionPlan>,
    metadata: &TableMetadata,
    store: Option<Arc<dyn ObjectStore>>,
    ctx: &TaskContext,
    files: &HashMap<Path, FileInfo>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let Some(config) = inner
        .downcast_ref::<DataSourceExec>()
        .and_then(|ds| ds.data_source().downcast_ref::<FileScanConfig>())
    else {
        return Ok(inner);
    };
    let schema = &metadata
        .current_spec()
        .map_err(|e| DataFusionError::Plan(e.to_string()))?
        .schema;
    let groups = config
        .file_groups
        .iter()
        .map(|group| {
            let files = group
                .iter()
                .map(|file| {
                    match files
                        .get(&file.object_meta.location)
                        .and_then(|i| Some((i.record_count, i.deletes.as_ref()?)))
                    {
                        Some((rows, deleted)) => skipping_deleted(file.clone(), rows, deleted),
                        None => file.clone(),
                    }
                })
                .collect::<Vec<_>>();
            FileGroup::new(files)
        })
        .collect();
    let mut builder = FileScanConfigBuilder::from(config.clone())
        .with_file_groups(groups)
        .with_expr_adapter(Some(Arc::new(FieldIdAdapterFactory::new(schema))));
    if let (Some(store), Some(parquet)) = (store, config.file_source().downcast_ref::<ParquetSource>()) {
        let cache = ctx.runtime_env().cache_manager.get_file_metadata_cache();
        let source = parquet
            .clone()
            .with_parquet_file_reader_factory(Arc::new(CachedParquetFileReaderFactory::new(store, cache)));
        builder = builder.with_source(Arc::new(source));
    }
    Ok(DataSourceExec::from_data_source(builder.build()))
}

fn recompute() -> ReplaceChildrenOptions {
    ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute)
}

fn refuse_write(write: &WriteExec) -> DataFusionError {
    let statement = match write.operation() {
        "merge" => "MERGE INTO".to_string(),
        other => other.to_ascii_uppercase(),
    };
    DataFusionError::NotImplemented(format!(
        "{statement} on table {} cannot run on a Ballista cluster: DELETE, UPDATE, MERGE INTO and TRUNCATE run in a local session \
         (e.g. the hidden-partitions CLI without --ballista, on the same warehouse); INSERT and SELECT run on the cluster",
        write.table_name()
    ))
}

impl PhysicalExtensionCodec for HiddenPartitionsPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        conv: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if let Some(node) = wire::decode::<ScanNode>(SCAN_TAG, buf, "scan") {
            return self.decode_scan(node?, inputs, ctx, conv);
        }
        if let Some(node) = wire::decode::<SinkNode>(SINK_TAG, buf, "INSERT") {
            return self.decode_sink(node?, inputs, ctx);
        }
        if let Some(node) = wire::decode::<DifferenceExecNode>(DIFFERENCE_EXEC_TAG, buf, "changelog difference") {
            let node = node?;
            let [input] = inputs else {
                return Err(DataFusionError::Internal(format!(
                    "a changelog difference has one input, not {}",
                    inputs.len()
                )));
            };
            let projection = node
                .projected
                .then(|| node.projection.iter().map(|i| *i as usize).collect());
            return Ok(Arc::new(DifferenceExec::try_new(
                Arc::clone(input),
                node.keys.iter().map(|k| *k as usize).collect(),
                node.sign as usize,
                node.hash.map(|h| h as usize),
                super::logical_codec::change_columns(node.ordinal, node.snapshot),
                projection,
                node.parallel,
            )?));
        }
        if let Some(node) = wire::decode::<BuildInTasksNode>(BUILD_IN_TASKS_TAG, buf, "join with its build rows") {
            let [probe] = inputs else {
                return Err(DataFusionError::Internal(format!(
                    "a join with its build rows has one input, the probe side, not {}",
                    inputs.len()
                )));
            };
            let join = PhysicalPlanNode::decode(node?.join.as_slice())
                .map_err(|e| DataFusionError::Internal(format!("cannot decode a join with its build rows: {e}")))?;
            let join = conv.proto_to_execution_plan(&join, &PhysicalPlanDecodeContext::new(ctx, self))?;
            let join = with_probe(&join, Arc::clone(probe), recompute())?;
            return Ok(Arc::new(BuildInTasksExec::try_new(join)?));
        }
        self.fallback.try_decode(buf, inputs, ctx, conv)
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        conv: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        if let Some(scan) = node.downcast_ref::<HiddenPartitionsScanExec>() {
            wire::encode(SCAN_TAG, &self.encode_scan(scan, conv)?, buf);
            return Ok(());
        }
        if let Some(sink) = node
            .downcast_ref::<DataSinkExec>()
            .and_then(|ds| (ds.sink() as &dyn std::any::Any).downcast_ref::<HiddenPartitionsSink>())
        {
            let overwrite = sink.overwrite.as_ref();
            let message = SinkNode {
                name: sink.table.name.clone(),
                location: Some(location_to_wire(&sink.table.location)),
                table_uuid: sink
                    .table
                    .uuid()
                    .map_err(|e| DataFusionError::Plan(e.to_string()))?
                    .to_string(),
                spec_json: wire::to_json("table spec", &sink.spec)?,
                sort_order_json: match &sink.order {
                    Some(order) => wire::to_json("sort order", order)?,
                    None => String::new(),
                },
                target_file_size: sink.target_file_size,
                overwrite_version: overwrite.map(|v| v.version),
                overwrite_metadata_json: match overwrite {
                    Some(v) => wire::to_json("table metadata", &v.metadata)?,
                    None => String::new(),
                },
            };
            wire::encode(SINK_TAG, &message, buf);
            return Ok(());
        }
        if let Some(write) = node.downcast_ref::<WriteExec>() {
            return Err(refuse_write(write));
        }
        if let Some(difference) = node.downcast_ref::<DifferenceExec>() {
            let message = DifferenceExecNode {
                keys: difference.keys().iter().map(|k| *k as u32).collect(),
                sign: difference.sign() as u32,
                projected: difference.projection().is_some(),
                projection: difference
                    .projection()
                    .map(|p| p.iter().map(|i| *i as u32).collect())
                    .unwrap_or_default(),
                parallel: difference.parallel(),
                hash: difference.hash().map(|h| h as u32),
                ordinal: difference.added().map(|a| a.ordinal),
                snapshot: difference.added().map(|a| a.snapshot),
            };
            wire::encode(DIFFERENCE_EXEC_TAG, &message, buf);
            return Ok(());
        }
        if let Some(wrapper) = node.downcast_ref::<BuildInTasksExec>() {
            let join = wrapper.join();
            let stand_in = Arc::new(EmptyExec::new(join.children()[1].schema()));
            let join = with_probe(join, stand_in, recompute())?;
            let message = BuildInTasksNode {
                join: conv.execution_plan_to_proto(&join, self)?.encode_to_vec(),
            };
            wire::encode(BUILD_IN_TASKS_TAG, &message, buf);
            return Ok(());
        }
        self.fallback.try_encode(node, buf, conv)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match scalar_by_name(name) {
            Some(f) => Ok(f),
            None => self.fallback.try_decode_udf(name, buf),
        }
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.fallback.try_encode_udf(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        match aggregate_by_name(name) {
            Some(f) => Ok(f),
            None => self.fallback.try_decode_udaf(name, buf),
        }
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.fallback.try_encode_udaf(node, buf)
    }
}
