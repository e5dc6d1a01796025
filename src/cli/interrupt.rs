//! Ctrl-C while a statement runs at the prompt.
//!
//! The signal is watched on a thread of its own: the runtime's workers may
//! all be busy in a join that does not yield, and then a signal handled on
//! them would wait with it. The thread sets the running statement's
//! [`Cancel`] flag, which stops its joins within a batch (see
//! [`crate::optimizer::stop_on_cancel`]), and tells the prompt, which drops
//! the statement and prints `Cancelled.`.

use std::sync::{Mutex, OnceLock};

use tokio::sync::watch;

use crate::optimizer::stop_on_cancel::Cancel;

/// The flag of the statement running now.
static RUNNING: Mutex<Option<Cancel>> = Mutex::new(None);

/// A fresh cancel flag for the statement about to run; Ctrl-C sets it.
pub fn start_statement() -> Cancel {
    let cancel = Cancel::new();
    if let Ok(mut running) = RUNNING.lock() {
        *running = Some(cancel.clone());
    }
    cancel
}

/// Counts the Ctrl-Cs seen; changes at each. The first call starts
/// watching for the signal (from then on Ctrl-C no longer ends the process).
pub fn interrupts() -> watch::Receiver<u64> {
    static SENDER: OnceLock<Option<watch::Sender<u64>>> = OnceLock::new();
    let sender = SENDER.get_or_init(|| {
        let (tx, _) = watch::channel(0);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        let signals = tx.clone();
        std::thread::Builder::new()
            .name("ctrl-c".into())
            .spawn(move || {
                runtime.block_on(async move {
                    while tokio::signal::ctrl_c().await.is_ok() {
                        if let Ok(running) = RUNNING.lock()
                            && let Some(cancel) = running.as_ref()
                        {
                            cancel.cancel();
                        }
                        signals.send_modify(|n| *n += 1);
                    }
                })
            })
            .ok()?;
        Some(tx)
    });
    match sender {
        Some(tx) => tx.subscribe(),
        // No thread: a receiver whose count never changes.
        None => watch::channel(0).1,
    }
}
