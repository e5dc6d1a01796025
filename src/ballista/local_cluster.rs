//! A scheduler and executors as child processes on 127.0.0.1: for tests,
//! benchmarks and trying a deployment on one machine.
//!
//! | step                   | what happens                                          |
//! |------------------------|-------------------------------------------------------|
//! | [`LocalCluster::start`] | the scheduler on a free port, then each executor with its own work dir and ports; returns once all print that they serve |
//! | [`LocalCluster::url`]  | `df://127.0.0.1:<port>` for [`remote`](super::remote) or the CLI's `--ballista` |
//! | [`LocalCluster::stop`] | SIGTERM to the executors, which finish their tasks and print what they read ([`ReadSummary`]); then the scheduler is killed |
//!
//! Dropping a cluster kills its processes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::ReadSummary;
use crate::error::{Error, Result};

/// How long a process may take to say it serves.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running process, killed when dropped.
struct Process {
    name: String,
    child: Child,
    /// Its standard output, line by line, until it exits.
    lines: Option<JoinHandle<Vec<String>>>,
}

impl Process {
    /// Start `bin` and wait until it prints a line containing `ready`.
    fn start(bin: &Path, args: &[String], ready: &str, name: String) -> Result<Process> {
        let mut child = Command::new(bin)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Error::Invalid(format!("cannot start {name} ({}): {e}", bin.display())))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| Error::Invalid(format!("{name} has no standard output")))?;
        let (tx, rx) = mpsc::channel();
        let ready = ready.to_string();
        let lines = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for line in BufReader::new(stdout).lines().map_while(std::result::Result::ok) {
                if line.contains(&ready) {
                    let _ = tx.send(());
                }
                seen.push(line);
            }
            seen
        });
        let mut process = Process {
            name,
            child,
            lines: Some(lines),
        };
        if rx.recv_timeout(START_TIMEOUT).is_err() {
            let status = process.child.try_wait().ok().flatten();
            return Err(Error::Invalid(match status {
                Some(status) => format!("{} exited at start ({status})", process.name),
                None => format!("{} did not start within {} s", process.name, START_TIMEOUT.as_secs()),
            }));
        }
        Ok(process)
    }

    /// Ask the process to stop (SIGTERM) and give back what it printed.
    fn terminate(mut self) -> Result<Vec<String>> {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .map_err(|e| Error::Invalid(format!("cannot signal {}: {e}", self.name)))?;
        if !sent.success() {
            return Err(Error::Invalid(format!("cannot signal {} (pid {pid})", self.name)));
        }
        let deadline = std::time::Instant::now() + START_TIMEOUT;
        while self.child.try_wait().ok().flatten().is_none() {
            if std::time::Instant::now() > deadline {
                return Err(Error::Invalid(format!(
                    "{} did not stop within {} s of SIGTERM",
                    self.name,
                    START_TIMEOUT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(self.lines.take().and_then(|l| l.join().ok()).unwrap_or_default())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free TCP port on 127.0.0.1.
fn free_port() -> Result<u16> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Error::Invalid(format!("no free port on 127.0.0.1: {e}")))
}

/// Where the scheduler and executor binaries are, and how to start executors.
#[derive(Debug, Clone)]
pub struct LocalClusterConfig {
    pub scheduler_bin: PathBuf,
    pub executor_bin: PathBuf,
    /// Number of executor processes.
    pub executors: usize,
    /// Task slots per executor (`--concurrent-tasks`).
    pub concurrent_tasks: usize,
    /// More executor flags, e.g. `--storage-option k=v`.
    pub executor_args: Vec<String>,
    /// More scheduler flags, e.g. `--scheduler-policy push-staged`.
    pub scheduler_args: Vec<String>,
}

/// A scheduler and executors running as child processes.
pub struct LocalCluster {
    url: String,
    work_dirs: Vec<PathBuf>,
    scheduler: Option<Process>,
    executors: Vec<Process>,
}

impl LocalCluster {
    /// Start the scheduler, then the executors, each with a work dir under `dir`.
    pub fn start(config: &LocalClusterConfig, dir: &Path) -> Result<LocalCluster> {
        let port = free_port()?;
        let owned = |args: &[&str]| args.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut args = owned(&["--bind-host", "127.0.0.1", "--external-host", "127.0.0.1"]);
        args.extend(["--bind-port".to_string(), port.to_string()]);
        args.extend(config.scheduler_args.iter().cloned());
        let scheduler = Process::start(
            &config.scheduler_bin,
            &args,
            "scheduler listening",
            "the scheduler".into(),
        )?;
        let mut executors = Vec::new();
        let mut work_dirs = Vec::new();
        for i in 0..config.executors {
            let work_dir = dir.join(format!("executor-{i}"));
            std::fs::create_dir_all(&work_dir)
                .map_err(|e| Error::Invalid(format!("cannot create {}: {e}", work_dir.display())))?;
            let mut args = owned(&[
                "--bind-host",
                "127.0.0.1",
                "--external-host",
                "127.0.0.1",
                "--scheduler-host",
                "127.0.0.1",
            ]);
            args.extend([
                "--scheduler-port".to_string(),
                port.to_string(),
                "--concurrent-tasks".to_string(),
                config.concurrent_tasks.max(1).to_string(),
                "--bind-port".to_string(),
                free_port()?.to_string(),
                "--bind-grpc-port".to_string(),
                free_port()?.to_string(),
                "--work-dir".to_string(),
                work_dir.display().to_string(),
            ]);
            args.extend(config.executor_args.iter().cloned());
            executors.push(Process::start(
                &config.executor_bin,
                &args,
                "executor serving",
                format!("executor {i}"),
            )?);
            work_dirs.push(work_dir);
        }
        Ok(LocalCluster {
            url: format!("df://127.0.0.1:{port}"),
            work_dirs,
            scheduler: Some(scheduler),
            executors,
        })
    }

    /// The scheduler's URL, `df://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Each executor's work dir (its shuffle files).
    pub fn work_dirs(&self) -> &[PathBuf] {
        &self.work_dirs
    }

    /// Stop the executors and then the scheduler; what each executor read,
    /// in the order they were started.
    pub fn stop(mut self) -> Result<Vec<ReadSummary>> {
        let mut reads = Vec::new();
        for executor in std::mem::take(&mut self.executors) {
            let name = executor.name.clone();
            let lines = executor.terminate()?;
            let summary = lines
                .iter()
                .find_map(|l| ReadSummary::from_line(l))
                .ok_or_else(|| Error::Invalid(format!("{name} stopped without saying what it read")))?;
            reads.push(summary);
        }
        drop(self.scheduler.take());
        Ok(reads)
    }
}
