//! The logical codec: our tables inside logical plans sent from a Ballista
//! client to the scheduler.
//!
//! A [`HiddenPartitionsTable`] is sent as its location, the storage options
//! it was opened with, and its metadata at the version the client planned
//! with, so the scheduler plans exactly the snapshot the client saw and
//! reads no metadata file to do it; the keys of a join that prune its
//! scans travel with it. A changelog's difference travels as the logical
//! plan of its sides (our tables in it through this codec). Everything
//! else goes to Ballista's own codec. Iceberg and Delta tables are refused by name: they do not run on
//! a cluster yet.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF};
use datafusion_proto::logical_plan::LogicalExtensionCodec;

use super::functions::{aggregate_by_name, scalar_by_name};
use super::stores::{location_from_wire, location_to_wire};
use super::wire::{
    self, DIFFERENCE_TABLE_TAG, DifferenceTableNode, HiddenRowsNode, JoinKeysNode, TABLE_TAG, TableNode,
};
use crate::expr::key_function::KeyFunction;
use crate::provider::HiddenPartitionsTable;
use crate::provider::difference::{ChangeColumns, ChangeDifference};
use crate::provider::scan_exec::JoinKeys;
use crate::provider::table_provider::Definition;
use crate::spec::TableMetadata;
use crate::store::Versioned;
use crate::table::Table;

#[derive(Debug)]
pub struct HiddenPartitionsLogicalCodec {
    fallback: Arc<dyn LogicalExtensionCodec>,
}

impl Default for HiddenPartitionsLogicalCodec {
    fn default() -> Self {
        Self::new(Arc::new(ballista_core::serde::BallistaLogicalExtensionCodec::default()))
    }
}

impl HiddenPartitionsLogicalCodec {
    /// Our codec in front of `fallback` (for everything that is not ours).
    pub fn new(fallback: Arc<dyn LogicalExtensionCodec>) -> Self {
        Self { fallback }
    }
}

/// A table as sent over the wire.
/// The changelog columns a difference adds, from their two wire fields.
pub(super) fn change_columns(ordinal: Option<i32>, snapshot: Option<i64>) -> Option<ChangeColumns> {
    Some(ChangeColumns {
        ordinal: ordinal?,
        snapshot: snapshot?,
    })
}

fn table_node(t: &HiddenPartitionsTable) -> Result<TableNode> {
    let mut only: Vec<String> = t
        .only
        .as_ref()
        .map(|o| o.iter().map(|p| p.to_string()).collect())
        .unwrap_or_default();
    only.sort();
    Ok(TableNode {
        name: t.table.name.clone(),
        location: Some(location_to_wire(&t.table.location)),
        version: t.version.version,
        metadata_json: wire::to_json("table metadata", &t.version.metadata)?,
        as_of: t.as_of,
        only,
        restricted: t.only.is_some(),
        definition: t.definition().to_string(),
        positions: t.extras.positions,
        lineage: t.extras.lineage,
        change_ordinal: t.extras.change.map(|c| c.ordinal),
        change_snapshot: t.extras.change.map(|c| c.snapshot),
        hidden: {
            let mut hidden: Vec<HiddenRowsNode> = t
                .hidden
                .iter()
                .flat_map(|h| h.iter())
                .map(|(path, positions)| HiddenRowsNode {
                    path: path.to_string(),
                    positions: positions.to_vec(),
                })
                .collect();
            hidden.sort_by(|a, b| a.path.cmp(&b.path));
            hidden
        },
        join_keys: t
            .join_keys()
            .iter()
            .map(|k| {
                Ok(JoinKeysNode {
                    column: k.column.clone(),
                    values: k
                        .values
                        .iter()
                        .flatten()
                        .map(wire::encode_scalar)
                        .collect::<Result<_>>()?,
                    found: k.values.is_some(),
                    max: k.max as u64,
                    low: k.range.as_ref().map(|(low, _)| wire::encode_scalar(low)).transpose()?,
                    high: k
                        .range
                        .as_ref()
                        .map(|(_, high)| wire::encode_scalar(high))
                        .transpose()?,
                    function: k.function.as_ref().map(KeyFunction::encode),
                    refused: k.refused.clone(),
                })
            })
            .collect::<Result<_>>()?,
    })
}

/// The table handle (location and commit binding) a node rebuilds.
fn table_from_node(node: &TableNode, ctx: &TaskContext) -> Result<(Table, TableMetadata)> {
    let location = location_from_wire(ctx, node.location.as_ref())?;
    let metadata: TableMetadata = wire::from_json("table metadata", &node.metadata_json)?;
    let table = Table::new(node.name.clone(), location).bound(&metadata.table_uuid);
    Ok((table, metadata))
}

fn decode_table(node: TableNode, ctx: &TaskContext) -> Result<HiddenPartitionsTable> {
    let (table, metadata) = table_from_node(&node, ctx)?;
    let schema = metadata
        .current_spec()
        .map_err(|e| DataFusionError::Plan(e.to_string()))?
        .schema
        .arrow_schema();
    let table = HiddenPartitionsTable {
        table,
        version: Versioned {
            version: node.version,
            metadata: metadata.into(),
        },
        schema,
        as_of: node.as_of,
        only: node.restricted.then(|| {
            Arc::new(
                node.only
                    .iter()
                    .map(|p| object_store::path::Path::from(p.as_str()))
                    .collect::<HashSet<_>>(),
            )
        }),
        definition: Definition::written(node.definition),
        dml: None,
        extras: Default::default(),
        hidden: (!node.hidden.is_empty()).then(|| {
            Arc::new(
                node.hidden
                    .iter()
                    .map(|h| {
                        (
                            object_store::path::Path::from(h.path.as_str()),
                            Arc::from(h.positions.clone()),
                        )
                    })
                    .collect(),
            )
        }),
        join_keys: node
            .join_keys
            .iter()
            .map(|k| {
                let values = k
                    .values
                    .iter()
                    .map(|v| wire::decode_scalar(v))
                    .collect::<Result<Vec<_>>>()?;
                let range = match (&k.low, &k.high) {
                    (Some(low), Some(high)) => Some((wire::decode_scalar(low)?, wire::decode_scalar(high)?)),
                    _ => None,
                };
                let function = match &k.function {
                    Some(text) => Some(KeyFunction::decode(text).ok_or_else(|| {
                        DataFusionError::Internal(format!("a join key function {text:?} this build does not know"))
                    })?),
                    None => None,
                };
                Ok(Arc::new(JoinKeys {
                    column: k.column.clone(),
                    function,
                    values: k.found.then_some(values),
                    range,
                    max: usize::try_from(k.max).unwrap_or(usize::MAX),
                    refused: k.refused.clone(),
                }))
            })
            .collect::<Result<_>>()?,
    };
    let table = if node.positions { table.with_positions() } else { table };
    let table = if node.lineage { table.with_lineage() } else { table };
    Ok(match (node.change_ordinal, node.change_snapshot) {
        (Some(ordinal), Some(snapshot)) => table.with_change_constants(ordinal, snapshot),
        _ => table,
    })
}

impl LogicalExtensionCodec for HiddenPartitionsLogicalCodec {
    fn try_decode(&self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext) -> Result<Extension> {
        self.fallback.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.fallback.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        if let Some(node) = wire::decode::<DifferenceTableNode>(DIFFERENCE_TABLE_TAG, buf, "changelog difference") {
            let node = node?;
            let input = datafusion_proto::bytes::logical_plan_from_bytes_with_extension_codec(&node.input, ctx, self)?;
            return Ok(Arc::new(ChangeDifference::new(
                input,
                node.keys,
                node.sign,
                node.hash,
                change_columns(node.ordinal, node.snapshot),
            )));
        }
        match wire::decode::<TableNode>(TABLE_TAG, buf, "table") {
            Some(node) => Ok(Arc::new(decode_table(node?, ctx)?)),
            None => self.fallback.try_decode_table_provider(buf, table_ref, schema, ctx),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if let Some(table) = node.downcast_ref::<HiddenPartitionsTable>() {
            wire::encode(TABLE_TAG, &table_node(table)?, buf);
            return Ok(());
        }
        if let Some(difference) = node.downcast_ref::<ChangeDifference>() {
            let message = DifferenceTableNode {
                input: datafusion_proto::bytes::logical_plan_to_bytes_with_extension_codec(difference.input(), self)?
                    .to_vec(),
                keys: difference.keys().to_vec(),
                sign: difference.sign().to_string(),
                hash: difference.hash().map(str::to_string),
                ordinal: difference.added().map(|a| a.ordinal),
                snapshot: difference.added().map(|a| a.snapshot),
            };
            wire::encode(DIFFERENCE_TABLE_TAG, &message, buf);
            return Ok(());
        }
        if let Some(foreign) = node.downcast_ref::<crate::formats::ForeignTable>() {
            return Err(DataFusionError::NotImplemented(format!(
                "table {table_ref} is an {} table: reading Iceberg and Delta tables on a Ballista cluster is not supported; \
                 query it in a local session, or copy it into a hidden-partitions table first (CREATE TABLE … AS SELECT * FROM {table_ref})",
                foreign.format()
            )));
        }
        self.fallback.try_encode_table_provider(table_ref, node, buf)
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn datafusion::datasource::file_format::FileFormatFactory>> {
        self.fallback.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn datafusion::datasource::file_format::FileFormatFactory>,
    ) -> Result<()> {
        self.fallback.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match scalar_by_name(name) {
            Some(f) => Ok(f),
            None => self.fallback.try_decode_udf(name, buf),
        }
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        match aggregate_by_name(name) {
            Some(f) => Ok(f),
            None => self.fallback.try_decode_udaf(name, buf),
        }
    }
}
