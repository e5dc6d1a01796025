//! Progress of a long write on the terminal: rows and files written so far
//! (from `table::writer::progress`), redrawn a few times a second on stderr
//! while a statement runs — only when stderr is a terminal.

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::table::writer::progress;

/// Shows progress until dropped or [`Progress::finish`]ed.
pub struct Progress {
    bar: Option<ProgressBar>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    /// Start showing write progress for the statement about to run.
    pub fn start() -> Self {
        if !std::io::stderr().is_terminal() {
            return Self {
                bar: None,
                ticker: None,
            };
        }
        let p = progress();
        let (rows0, files0, bytes0) = (
            p.rows.load(Ordering::Relaxed),
            p.files.load(Ordering::Relaxed),
            p.bytes.load(Ordering::Relaxed),
        );
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        let shown = bar.clone();
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let rows = p.rows.load(Ordering::Relaxed) - rows0;
                if rows == 0 {
                    continue;
                }
                let files = p.files.load(Ordering::Relaxed) - files0;
                let mib = (p.bytes.load(Ordering::Relaxed) - bytes0) as f64 / (1024.0 * 1024.0);
                shown.set_message(format!("{rows} rows routed, {files} files written ({mib:.1} MiB)"));
                shown.tick();
            }
        });
        Self {
            bar: Some(bar),
            ticker: Some(ticker),
        }
    }

    /// Stop and clear the line.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}
