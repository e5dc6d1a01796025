//! Timing SQL for the bench binaries that compare sessions in one run.

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
