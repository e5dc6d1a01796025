//! The catalog's connections: how many at once, and how long a client may
//! take to send a request.
//!
//! | a client that …                                   | gets                                      |
//! |---------------------------------------------------|-------------------------------------------|
//! | opens more than `max_connections` connections      | waits: the next one is accepted when one closes |
//! | sends no (or not all) request headers in 30 s, or keeps a connection idle that long | the connection closed |
//! | sends a request body slower than the deadline (announces 100 MB, sends nothing) | 408 in the error model, the connection closed |
//!
//! A request being handled is never cut short: the deadlines apply only
//! while the server waits for the client.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How long a client may take to send a request's headers (also the most a
/// kept-alive connection stays idle), by default.
pub const HEADER_DEADLINE: Duration = Duration::from_secs(30);

/// How long a client may take to send a request's body, by default.
pub const BODY_DEADLINE: Duration = Duration::from_secs(60);

/// Serve `app` on the connections `listener` accepts, at most
/// `max_connections` at once, each cut off when its client takes longer
/// than `header_deadline` to send a request's headers, until the future is
/// dropped.
pub async fn serve_connections(
    listener: TcpListener,
    app: Router,
    max_connections: usize,
    header_deadline: Duration,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(max_connections.max(1)));
    loop {
        let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
            return Ok(());
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // A connection that failed before it was accepted (reset, or
            // the process is out of descriptors): go on after a breath.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_deadline)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
    }
}
