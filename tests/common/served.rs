//! A REST catalog server of ours on 127.0.0.1, for the tests that talk to it.

use std::path::{Path, PathBuf};

use hidden_partitions::Warehouse;
use hidden_partitions::serve::{ServeOptions, bind};

use super::readers::runtime;

/// A server over a fresh warehouse, running on its own runtime until dropped.
pub struct Served {
    pub url: String,
    pub warehouse: PathBuf,
    pub dir: tempfile::TempDir,
    pub runtime: tokio::runtime::Runtime,
}

/// Serve a fresh warehouse with the options `configure` sets (given the
/// temporary directory the warehouse is in); port chosen by the system.
pub fn serve_with(configure: impl FnOnce(&mut ServeOptions, &Path)) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("wh");
    let rt = runtime();
    let mut options = ServeOptions {
        port: 0,
        log_requests: false,
        ..Default::default()
    };
    configure(&mut options, dir.path());
    let (address, server) = rt
        .block_on(bind(Warehouse::local(&warehouse).unwrap(), options))
        .unwrap();
    rt.spawn(server);
    Served {
        url: format!("http://{address}"),
        warehouse,
        dir,
        runtime: rt,
    }
}

impl Served {
    /// (status, body) of one request.
    pub fn call(&self, method: &str, path: &str, body: Option<serde_json::Value>) -> (u16, serde_json::Value) {
        let url = format!("{}{path}", self.url);
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        self.runtime.block_on(async move {
            let client = reqwest::Client::new();
            let mut request = client.request(method, url);
            if let Some(b) = body {
                request = request
                    .header("Content-Type", "application/json")
                    .body(serde_json::to_vec(&b).unwrap());
            }
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let text = response.text().await.unwrap();
            (
                status,
                serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
            )
        })
    }
}
