//! Ballista's scheduler and executor with our codecs, functions and rule
//! installed: what `hidden-partitions-scheduler` and
//! `hidden-partitions-executor` run.
//!
//! Both take Ballista's usual flags (`--bind-host`, `--bind-port`,
//! `--scheduler-host`, `--scheduler-port`, `--concurrent-tasks`,
//! `--work-dir`, …), and `--storage-option key=value` for the tables'
//! stores (credentials also come from the `AWS_*`/`GOOGLE_*`/`AZURE_*`
//! environment variables of the process).

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::SessionBuilder;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service_with_listener};
use clap::Args;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};

use super::{HiddenPartitionsLogicalCodec, HiddenPartitionsPhysicalCodec, ballista_config, session_state};
use crate::error::{Error, Result};
use crate::store::connect::StorageOptions;

fn policy(name: &str) -> Result<TaskSchedulingPolicy> {
    match name {
        "pull-staged" => Ok(TaskSchedulingPolicy::PullStaged),
        "push-staged" => Ok(TaskSchedulingPolicy::PushStaged),
        other => Err(Error::Invalid(format!(
            "scheduling policy {other:?} is not pull-staged or push-staged"
        ))),
    }
}

fn storage_options(pairs: &[String]) -> Result<StorageOptions> {
    let mut options = StorageOptions::new();
    for pair in pairs {
        let (k, v) = StorageOptions::parse_pair(pair)?;
        options = options.with(k, v);
    }
    options.validate()?;
    Ok(options)
}

/// Flags of `hidden-partitions-scheduler`.
#[derive(Debug, Clone, Args)]
pub struct SchedulerArgs {
    /// Address to listen on: this machine only unless told otherwise
    /// (`--bind-host 0.0.0.0` opens it to the network).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind_host: String,
    /// Port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 50050)]
    pub bind_port: u16,
    /// Host name executors and clients reach this scheduler by.
    #[arg(long, default_value = "localhost")]
    pub external_host: String,
    /// `push-staged` (the scheduler hands tasks to executors as slots free
    /// up) or `pull-staged` (executors ask for work on a timer, about half a
    /// second more per job: BENCHMARKS.md); executors must use the same.
    #[arg(long, default_value = "push-staged")]
    pub scheduler_policy: String,
    /// Object store option for the tables' stores (repeatable), e.g. aws_endpoint=http://….
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,
}

/// Flags of `hidden-partitions-executor`.
#[derive(Debug, Clone, Args)]
pub struct ExecutorArgs {
    /// Address to listen on: this machine only unless told otherwise
    /// (`--bind-host 0.0.0.0` opens it to the network).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind_host: String,
    /// Host name other executors and clients reach this one by.
    #[arg(long)]
    pub external_host: Option<String>,
    /// Arrow Flight port (shuffle reads).
    #[arg(long, default_value_t = 50051)]
    pub bind_port: u16,
    /// gRPC port (push-staged scheduling).
    #[arg(long, default_value_t = 50052)]
    pub bind_grpc_port: u16,
    #[arg(long, default_value = "localhost")]
    pub scheduler_host: String,
    #[arg(long, default_value_t = 50050)]
    pub scheduler_port: u16,
    /// Seconds to keep trying to reach the scheduler at start.
    #[arg(long, default_value_t = 30)]
    pub scheduler_connect_timeout_seconds: u16,
    /// Tasks run at once (default: the number of cores).
    #[arg(long)]
    pub concurrent_tasks: Option<usize>,
    /// Directory for shuffle files (default: a temporary one).
    #[arg(long)]
    pub work_dir: Option<String>,
    /// `push-staged` or `pull-staged`, as the scheduler's.
    #[arg(long, default_value = "push-staged")]
    pub task_scheduling_policy: String,
    /// Object store option for the tables' stores (repeatable).
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,
}

/// The runtime every scheduler session shares: stores are opened once.
fn scheduler_runtime() -> Arc<RuntimeEnv> {
    static RUNTIME: OnceLock<Arc<RuntimeEnv>> = OnceLock::new();
    Arc::clone(RUNTIME.get_or_init(|| super::stores::node_runtime(None).unwrap_or_default()))
}

/// How the scheduler builds a session per job: Ballista's config with the
/// client's settings, our rule, functions, type and options.
pub fn scheduler_session_builder() -> SessionBuilder {
    Arc::new(|config: SessionConfig| {
        let builder = datafusion::execution::SessionStateBuilder::new()
            .with_config(config)
            .with_default_features()
            .with_runtime_env(scheduler_runtime())
            .with_optimizer_rules(ballista_core::optimizer::ballista_default_optimizer_rules());
        let mut state = super::with_cluster_rules(builder).build();
        super::register_functions(&mut state);
        Ok(state)
    })
}

/// A listening socket whose accepted connections send small messages at
/// once (`TCP_NODELAY`, which Linux passes on to each accepted socket).
/// Ballista serves the scheduler through axum, which leaves Nagle's
/// algorithm on: a job's status and results then wait on the client's
/// delayed ACK, about 40 ms per job.
async fn listen_without_delay(host: &str, port: u16) -> Result<tokio::net::TcpListener> {
    let cannot = |e: std::io::Error| Error::Invalid(format!("cannot listen on {host}:{port}: {e}"));
    let address = tokio::net::lookup_host((host, port))
        .await
        .map_err(cannot)?
        .next()
        .ok_or_else(|| Error::Invalid(format!("cannot listen on {host}:{port}: the host has no address")))?;
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(cannot)?;
    socket.set_reuseaddr(true).map_err(cannot)?;
    socket.set_nodelay(true).map_err(cannot)?;
    socket.bind(address).map_err(cannot)?;
    socket.listen(1024).map_err(cannot)
}

/// Start a scheduler and serve until the process is stopped. Prints
/// `scheduler listening on <host>:<port>` once it accepts connections.
pub async fn run_scheduler(args: SchedulerArgs) -> Result<()> {
    super::set_node_storage_options(storage_options(&args.storage_options)?);
    let listener = listen_without_delay(&args.bind_host, args.bind_port).await?;
    let address: SocketAddr = listener
        .local_addr()
        .map_err(|e| Error::Invalid(format!("cannot read the scheduler's address: {e}")))?;
    let config = SchedulerConfig {
        bind_host: args.bind_host.clone(),
        bind_port: address.port(),
        external_host: args.external_host.clone(),
        scheduling_policy: policy(&args.scheduler_policy)?,
        override_config_producer: Some(Arc::new(ballista_config)),
        override_session_builder: Some(scheduler_session_builder()),
        override_logical_codec: Some(Arc::new(HiddenPartitionsLogicalCodec::default())),
        override_physical_codec: Some(Arc::new(HiddenPartitionsPhysicalCodec::default())),
        ..Default::default()
    };
    let config = Arc::new(config);
    config
        .validate()
        .map_err(|e| Error::Invalid(format!("scheduler configuration: {e}")))?;
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(|e| Error::Invalid(format!("cannot set up the scheduler's cluster state: {e}")))?;
    let scheduler = create_scheduler::<LogicalPlanNode, PhysicalPlanNode>(cluster, config)
        .await
        .map_err(|e| Error::Invalid(format!("cannot start the scheduler: {e}")))?;
    println!("scheduler listening on {}:{}", args.external_host, address.port());
    start_grpc_service_with_listener(listener, scheduler)
        .await
        .map_err(|e| Error::Invalid(format!("the scheduler stopped: {e}")))
}

/// Start an executor and serve until the process is stopped (SIGTERM,
/// Ctrl-C); it then prints what it read from the tables' stores
/// ([`ReadSummary`](super::ReadSummary)).
pub async fn run_executor(args: ExecutorArgs) -> Result<()> {
    super::set_node_storage_options(storage_options(&args.storage_options)?);
    let policy = policy(&args.task_scheduling_policy)?;
    let registry = BallistaFunctionRegistry::from(&session_state(ballista_config(), None));
    let work_dir = args.work_dir.clone();
    let mut config = ExecutorProcessConfig {
        bind_host: args.bind_host.clone(),
        external_host: args.external_host.clone(),
        port: args.bind_port,
        grpc_port: args.bind_grpc_port,
        scheduler_host: args.scheduler_host.clone(),
        scheduler_port: args.scheduler_port,
        scheduler_connect_timeout_seconds: args.scheduler_connect_timeout_seconds,
        task_scheduling_policy: policy,
        work_dir: args.work_dir.clone(),
        override_config_producer: Some(Arc::new(ballista_config)),
        override_runtime_producer: Some(Arc::new(move |_config: &SessionConfig| {
            super::stores::node_runtime(work_dir.as_deref())
        })),
        override_function_registry: Some(Arc::new(registry)),
        override_logical_codec: Some(Arc::new(HiddenPartitionsLogicalCodec::default())),
        override_physical_codec: Some(Arc::new(HiddenPartitionsPhysicalCodec::default())),
        ..Default::default()
    };
    if let Some(n) = args.concurrent_tasks {
        config.vcores = n.max(1);
    }
    println!(
        "executor serving on {}:{} for the scheduler at {}:{}",
        args.external_host.as_deref().unwrap_or(&args.bind_host),
        args.bind_port,
        args.scheduler_host,
        args.scheduler_port
    );
    start_executor_process(Arc::new(config))
        .await
        .map_err(|e| Error::Invalid(format!("the executor stopped: {e}")))?;
    println!("{}", super::stores::node_reads().line());
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Scheduler {
        #[command(flatten)]
        args: SchedulerArgs,
    }

    #[derive(Parser)]
    struct Executor {
        #[command(flatten)]
        args: ExecutorArgs,
    }

    #[test]
    fn both_servers_listen_on_this_machine_unless_told_otherwise() {
        assert_eq!(Scheduler::parse_from(["s"]).args.bind_host, "127.0.0.1");
        assert_eq!(Executor::parse_from(["e"]).args.bind_host, "127.0.0.1");
        let open = Executor::parse_from(["e", "--bind-host", "0.0.0.0"]);
        assert_eq!(open.args.bind_host, "0.0.0.0");
    }

    #[test]
    fn the_scheduler_pushes_tasks_unless_told_otherwise() {
        assert_eq!(Scheduler::parse_from(["s"]).args.scheduler_policy, "push-staged");
        assert_eq!(Executor::parse_from(["e"]).args.task_scheduling_policy, "push-staged");
        assert!(policy("pull-staged").is_ok());
        assert!(
            policy("eager")
                .unwrap_err()
                .to_string()
                .contains("not pull-staged or push-staged")
        );
    }
}
