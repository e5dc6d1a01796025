//! `hidden-partitions-executor`: a Ballista executor that runs
//! hidden-partitions scans and INSERTs (our codecs and functions).

use clap::Parser;
use hidden_partitions::ballista::{ExecutorArgs, run_executor};

/// mimalloc, as the command-line tool: a long-running server keeps
/// allocating as fast as when it started (glibc's heap fragments).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "hidden-partitions-executor",
    version,
    about = "Ballista executor for hidden-partitions tables"
)]
struct Cli {
    #[command(flatten)]
    args: ExecutorArgs,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run_executor(Cli::parse().args).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hidden-partitions-executor: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
