//! `hidden-partitions-scheduler`: a Ballista scheduler that plans
//! hidden-partitions tables (our codecs, functions and pruning rule).

use clap::Parser;
use hidden_partitions::ballista::{SchedulerArgs, run_scheduler};

/// mimalloc, as the command-line tool: a long-running server keeps
/// allocating as fast as when it started (glibc's heap fragments).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "hidden-partitions-scheduler",
    version,
    about = "Ballista scheduler for hidden-partitions tables"
)]
struct Cli {
    #[command(flatten)]
    args: SchedulerArgs,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run_scheduler(Cli::parse().args).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hidden-partitions-scheduler: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
