//! Timing for the bench binaries that compare against a baseline in one run.

// Each bench binary includes this module and uses part of it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use hidden_partitions::execute_sql;

/// The last result of `sql`, pretty-printed.
pub async fn answer(ctx: &SessionContext, sql: &str) -> String {
    let results = execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    pretty_format_batches(&results.last().expect("a result").batches)
        .unwrap()
        .to_string()
}

/// The median of `iterations` runs after one warm-up, and the answer.
pub async fn time(ctx: &SessionContext, sql: &str, iterations: usize) -> (Duration, String) {
    let answer = answer(ctx, sql).await;
    let mut samples = Vec::new();
    for _ in 0..iterations {
        let start = Instant::now();
        std::hint::black_box(execute_sql(ctx, sql).await.unwrap());
        samples.push(start.elapsed());
    }
    samples.sort();
    (samples[samples.len() / 2], answer)
}

/// The best (shortest) of `runs` runs of `f`, in seconds, and the last run's
/// value.
pub async fn best_of<T, F, Fut>(runs: usize, mut f: F) -> (f64, T)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut best = f64::MAX;
    let mut value = None;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        value = Some(f().await);
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, value.expect("at least one run"))
}

/// Register `table` as `t` and plan `SELECT id FROM t WHERE <filter>`: the
/// scan's `files=` (selected / total, per spec when there are several).
pub async fn planned_files(
    ctx: &SessionContext,
    table: std::sync::Arc<dyn datafusion::catalog::TableProvider>,
    filter: &str,
) -> String {
    let _ = ctx.deregister_table("t");
    ctx.register_table("t", table).expect("register");
    let plan = ctx
        .sql(&format!("SELECT id FROM t WHERE {filter}"))
        .await
        .expect("sql")
        .create_physical_plan()
        .await
        .expect("plan");
    let text = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(false)
        .to_string();
    text.split("files=")
        .nth(1)
        .and_then(|s| s.split(", runtime").next())
        .and_then(|s| s.split(", parquet").next())
        .unwrap_or("?")
        .to_string()
}

/// This process's peak resident memory (`VmHWM`), in KiB.
pub fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}
