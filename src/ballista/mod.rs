//! Running hidden-partitions tables on an Apache Ballista cluster
//! (cargo feature `ballista`).
//!
//! A Ballista client plans SQL, sends the optimized logical plan to the
//! scheduler, which plans it physically and cuts it into stages, and the
//! executors run the stage tasks. Our pieces travel through two codecs:
//!
//! | where            | what travels                                   | codec                               |
//! |------------------|------------------------------------------------|-------------------------------------|
//! | client → scheduler | the table (location, options, pinned metadata) | [`HiddenPartitionsLogicalCodec`]  |
//! | scheduler → executors | the scan with its files and filters, the INSERT sink | [`HiddenPartitionsPhysicalCodec`] |
//! | everywhere       | calls of `bucket`, `variant_get`, … by name     | both                                |
//!
//! The scheduler plans with the statement's pinned snapshot and our
//! physical rule, so `files=S/T` is the same as in a local session. The
//! rule runs only in Ballista's static planner; [`ballista_config`] turns
//! the adaptive planner off for that reason.
//!
//! What prunes on a cluster: everything decided at planning (filters on
//! source columns, per table spec), the static filters the scan keeps for
//! run time, and the keys of a join's smaller side: the client runs that
//! side as a job of its own first and sends the plan with the larger
//! side's scan pruned by its keys (`optimizer::join_keys`; the table
//! travels with them). Dynamic filters (from a hash join's build side or a
//! TopK) do not cross stage boundaries, and Ballista turns them off.
//!
//! Writes: INSERT (and CTAS) run on the cluster — the final stage is one
//! task that writes the files and commits once. DELETE, UPDATE, MERGE INTO
//! and TRUNCATE are refused by the client's planner before any job is sent
//! (`optimizer::join_keys`, `OnCluster`); they run in a local session on
//! the same tables.

mod build_in_tasks;
mod cluster;
mod functions;
mod local_cluster;
mod logical_codec;
mod physical_codec;
mod stages;
mod stores;
mod wire;

use std::sync::Arc;

use ::ballista::prelude::{SessionConfigExt, SessionContextExt};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::{FunctionRegistry, SessionState};
use datafusion::prelude::{SessionConfig, SessionContext};

pub use cluster::{ExecutorArgs, SchedulerArgs, run_executor, run_scheduler, scheduler_session_builder};
pub use functions::{aggregate_functions, scalar_functions};
pub use local_cluster::{LocalCluster, LocalClusterConfig};
pub use logical_codec::HiddenPartitionsLogicalCodec;
pub use physical_codec::HiddenPartitionsPhysicalCodec;
pub use stores::{ReadSummary, node_reads, set_node_storage_options};

use crate::catalog::Warehouse;
use crate::config::HiddenPartitionsOptions;
use crate::error::{Error, Result};
use crate::session::SessionContextExt as _;

/// `hidden_partitions.scan_partition_bytes` of a Ballista session (Spark's
/// `maxPartitionBytes`): a task per 128 MiB of files, each file counting
/// at least 4 MiB.
pub const CLUSTER_SCAN_PARTITION_BYTES: u64 = 128 * 1024 * 1024;

/// A Ballista session config with our codecs and options: Ballista's
/// defaults, the `hidden_partitions.*` options, the static planner (so our
/// physical rule runs on the scheduler).
pub fn ballista_config() -> SessionConfig {
    let mut config = SessionConfig::new_with_ballista()
        .with_information_schema(true)
        .with_option_extension(HiddenPartitionsOptions::default())
        .with_ballista_adaptive_query_planner(false)
        .with_ballista_logical_extension_codec(Arc::new(HiddenPartitionsLogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(HiddenPartitionsPhysicalCodec::default()));
    // Exact decimal literals, as in a local session.
    config.options_mut().sql_parser.parse_float_as_decimal = true;
    // A scan partition is a task: tiny scans get few.
    if let Some(options) = config.options_mut().extensions.get_mut::<HiddenPartitionsOptions>() {
        options.scan_partition_bytes = CLUSTER_SCAN_PARTITION_BYTES;
    }
    config
}

/// A session state with everything of ours: the rule, the `VARIANT` type,
/// the table factories and the SQL functions.
pub fn session_state(config: SessionConfig, runtime: Option<Arc<RuntimeEnv>>) -> SessionState {
    let mut builder = SessionStateBuilder::new().with_config(config).with_default_features();
    if let Some(runtime) = runtime {
        builder = builder.with_runtime_env(runtime);
    }
    let mut state = with_cluster_rules(builder).build();
    register_functions(&mut state);
    state
}

/// `builder` with everything of ours and the physical rules that shape a
/// plan for Ballista's stages: a join with rows in the plan builds them
/// first, then each scan shows its Parquet scan as its child
/// (`stages.rs`) and such a join hides its build side
/// (`build_in_tasks.rs`).
pub(crate) fn with_cluster_rules(builder: SessionStateBuilder) -> SessionStateBuilder {
    crate::session::with_hidden_partitions(build_in_tasks::with_rows_as_build_side(builder))
        .with_physical_optimizer_rule(Arc::new(stages::ScanSlicesForTasks))
        .with_physical_optimizer_rule(Arc::new(build_in_tasks::BuildInTasks))
}

pub(crate) fn register_functions(state: &mut SessionState) {
    // SessionState's registration does not fail.
    for f in scalar_functions() {
        let _ = state.register_udf(f);
    }
    for f in aggregate_functions() {
        let _ = state.register_udaf(f);
    }
}

/// A session that runs statements on an in-process Ballista cluster
/// (scheduler and executor in this process), with `warehouse` as the
/// default schema. For tests and for trying a plan on Ballista.
pub async fn standalone(warehouse: Warehouse, parallelism: usize) -> Result<SessionContext> {
    let config = ballista_config().with_ballista_standalone_parallelism(parallelism.max(1));
    let state = session_state(config, None);
    let ctx = SessionContext::standalone_with_state(state)
        .await
        .map_err(Error::from)?;
    let ctx = with_join_key_pruning(ctx);
    ctx.register_warehouse(warehouse).await?;
    Ok(ctx)
}

/// A session that runs statements on the Ballista scheduler at `url`
/// (`df://host:port`), with `warehouse` as the default schema. The
/// scheduler and executors must have our codecs: start them with
/// `hidden-partitions-scheduler` and `hidden-partitions-executor`.
pub async fn remote(url: &str, warehouse: Warehouse) -> Result<SessionContext> {
    let state = session_state(ballista_config(), None);
    let ctx = SessionContext::remote_with_state(url, state)
        .await
        .map_err(|e| Error::Invalid(format!("cannot connect to the Ballista scheduler at {url}: {e}")))?;
    let ctx = with_join_key_pruning(ctx);
    ctx.register_warehouse(warehouse).await?;
    Ok(ctx)
}

/// `ctx` (a Ballista client) whose planner first finds the keys of a
/// join's smaller side with a job on the cluster, then sends the plan with
/// the larger side's scan pruned by them (`optimizer::join_keys`).
fn with_join_key_pruning(ctx: SessionContext) -> SessionContext {
    let mut state = crate::session::with_join_key_pruning(ctx.state());
    state
        .config_mut()
        .set_extension(Arc::new(crate::optimizer::join_keys::OnCluster));
    SessionContext::new_with_state(state)
}

/// The message of an error raised in a task on an executor: Ballista
/// reports it as `Job … failed: … DataFusionError(Shared(External(…(Execution("<message>")))))`;
/// this gives back the message as the task wrote it.
pub fn readable_cluster_error(text: &str) -> String {
    let Some(start) = ["Execution(\"", "Plan(\"", "NotImplemented(\"", "Internal(\""]
        .iter()
        .filter_map(|m| text.rfind(m).map(|i| i + m.len()))
        .max()
    else {
        return text.to_string();
    };
    let Some(end) = text.rfind("\")") else {
        return text.to_string();
    };
    if end <= start || !text.contains("Task failed") {
        return text.to_string();
    }
    text[start..end].replace("\\\"", "\"").replace("\\\\", "\\")
}

/// An error from a cluster, with what to do about it when the cause is
/// known (a scheduler or executor without our codecs).
pub fn explain_cluster_error(message: &str) -> Option<String> {
    let missing = [
        "LogicalExtensionCodec is not provided",
        "Unsupported plan and extension codec failed",
    ];
    missing.iter().any(|m| message.contains(m)).then(|| {
        "the Ballista scheduler or executor could not decode a hidden-partitions table or scan: it runs without the \
         hidden-partitions codecs (HiddenPartitionsLogicalCodec, HiddenPartitionsPhysicalCodec). Start the cluster with \
         hidden-partitions-scheduler and hidden-partitions-executor, or install the codecs with \
         hidden_partitions::ballista::scheduler_session_builder and ballista_config"
            .to_string()
    })
}
