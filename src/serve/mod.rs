//! `hidden-partitions serve`: the warehouse as an Iceberg REST catalog, so
//! that pyiceberg, DuckDB, Spark and Trino attach it as a lakehouse.
//!
//! ```sh
//! hidden-partitions serve --warehouse ./warehouse --port 8181
//! ```
//!
//! ```python
//! from pyiceberg.catalog.rest import RestCatalog
//! catalog = RestCatalog("hp", uri="http://127.0.0.1:8181")
//! catalog.load_table("public.events").scan(row_filter="ts >= '2024-01-03'").to_arrow()
//! ```
//!
//! One room for the server: HTTP here (axum), the operations beside it.
//!
//! - `service.rs` — namespaces and tables in the protocol's terms, over the
//!   same session (and so the same DDL rules) as SQL;
//! - `updates.rs` — a `CommitTableRequest`'s requirements and updates on our
//!   metadata (pure, so a commit that lost a race re-applies it);
//! - `commit.rs` — such a commit through our commit protocol, the client's
//!   snapshots turned into changes of ours (`formats::iceberg::adopt`);
//! - `error.rs` — our errors in the protocol's error model (the words the
//!   server and our client share are `iceberg::rest`'s).
//!
//! Safe by default:
//!
//! - it binds 127.0.0.1 unless told another address;
//! - with a token (`--token`, or `HIDDEN_PARTITIONS_TOKEN`) every request
//!   needs `Authorization: Bearer <token>`, else 401;
//! - bodies are limited ([`ServeOptions::body_limit`], 16 MiB by default),
//!   malformed JSON is a 400 in the protocol's error model;
//! - connections are bounded ([`ServeOptions::max_connections`]), and a
//!   client slow to send a request's headers or body is cut off
//!   ([`connections`]);
//! - a new table is placed in the warehouse, or under a root the operator
//!   allows (`--allow-location`); a client never learns what lies elsewhere;
//! - a request that changes something runs to its end on its own task, so
//!   a client that disconnects mid-commit leaves the table at the old or
//!   the new snapshot, never between;
//! - the request log says method, path, status and time: never a header,
//!   a body or a credential; tables' `config` holds the store's endpoint
//!   and region, and credentials only when vending them is asked for.

pub mod commit;
pub mod connections;
pub mod error;
pub mod service;
pub mod updates;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value as Json;

use self::error::RestError;
use self::service::RestCatalog;
use crate::catalog::Warehouse;
use crate::error::{Error, Result};
use crate::store::connect::StorageOptions;

/// Every route served (but `GET /v1/config`), as the config lists them
/// (`endpoints`; `{prefix}` is empty here).
pub const ENDPOINTS: [&str; 16] = [
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
];

/// How `serve` listens.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub host: String,
    pub port: u16,
    /// Required as `Authorization: Bearer <token>` on every request.
    pub token: Option<String>,
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    /// Hand clients the store's credentials with each table (off: only
    /// the endpoint and region).
    pub vend_credentials: bool,
    /// Print one line per request on stderr (with the reason of a failure).
    pub log_requests: bool,
    /// Roots under which a client may place a new table (besides its place
    /// in the warehouse).
    pub allowed_locations: Vec<String>,
    /// Connections served at once (more wait to be accepted).
    pub max_connections: usize,
    /// How long a client may take to send a request's headers, and to send
    /// its body ([`connections`]).
    pub header_deadline: std::time::Duration,
    pub body_deadline: std::time::Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".to_string(),
            port: 8181,
            token: None,
            body_limit: 16 * 1024 * 1024,
            vend_credentials: false,
            log_requests: true,
            allowed_locations: Vec::new(),
            max_connections: 256,
            header_deadline: connections::HEADER_DEADLINE,
            body_deadline: connections::BODY_DEADLINE,
        }
    }
}

/// What clients get in each table's `config`: the S3 endpoint and region
/// (Iceberg's names for them), and the credentials only when vending them.
pub fn table_config(options: &StorageOptions, vend_credentials: bool) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (key, value) in options.iter() {
        let key = key.to_ascii_lowercase();
        let names: &[&str] = match key.as_str() {
            "aws_endpoint" | "aws_endpoint_url" | "endpoint" => &["s3.endpoint"],
            "aws_region" | "region" => &["s3.region", "client.region"],
            "aws_access_key_id" | "access_key_id" if vend_credentials => &["s3.access-key-id"],
            "aws_secret_access_key" | "secret_access_key" if vend_credentials => &["s3.secret-access-key"],
            "aws_session_token" | "session_token" if vend_credentials => &["s3.session-token"],
            _ => &[],
        };
        for name in names {
            out.insert(name.to_string(), value.clone());
        }
    }
    if out.contains_key("s3.endpoint") {
        out.insert("s3.path-style-access".to_string(), "true".to_string());
    }
    out
}

#[derive(Clone)]
struct Served {
    catalog: Arc<RestCatalog>,
    token: Option<Arc<str>>,
    log: bool,
    body_limit: usize,
    body_deadline: std::time::Duration,
}

/// Why a request failed, kept with its response for the request log.
#[derive(Clone)]
struct Failure(String);

/// A reply: JSON text with a status, or the error model.
struct Answer(std::result::Result<(StatusCode, Option<String>), RestError>);

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        match self.0 {
            Ok((status, Some(body))) => {
                (status, [(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response()
            }
            Ok((status, None)) => status.into_response(),
            Err(e) => {
                let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let mut response = (status, axum::Json(e.body())).into_response();
                // For the request log: why it failed.
                response
                    .extensions_mut()
                    .insert(Failure(format!("{}: {}", e.kind, e.message)));
                response
            }
        }
    }
}

/// 200 with `body` (a table's metadata inside it goes out as the text it
/// was written as, not parsed again).
fn ok(body: impl serde::Serialize) -> Answer {
    match serde_json::to_string(&body) {
        Ok(text) => Answer(Ok((StatusCode::OK, Some(text)))),
        Err(e) => failed(RestError::from(Error::from(e))),
    }
}

fn no_content() -> Answer {
    Answer(Ok((StatusCode::NO_CONTENT, None)))
}

fn failed(e: RestError) -> Answer {
    Answer(Err(e))
}

/// A path's `{namespace}`: levels joined by the unit separator (0x1F).
fn levels(namespace: &str) -> Vec<String> {
    namespace.split('\u{1f}').map(str::to_string).collect()
}

/// The request body as JSON; too large or malformed is a 400.
fn json_body(body: std::result::Result<Bytes, BytesRejection>) -> std::result::Result<Json, RestError> {
    let bytes = body.map_err(|e| {
        RestError::new(
            e.status().as_u16(),
            "BadRequestException",
            format!("the request body cannot be read: {}", e.body_text()),
        )
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| RestError::bad_request(format!("the request body is not valid JSON: {e}")))
}

/// Run `work` on its own task: a client that goes away does not stop it midway.
async fn to_the_end<T: Send + 'static>(
    work: impl Future<Output = std::result::Result<T, RestError>> + Send + 'static,
) -> std::result::Result<T, RestError> {
    match tokio::spawn(work).await {
        Ok(result) => result,
        Err(e) => Err(RestError::new(
            500,
            "ServiceFailureException",
            format!("the request failed: {e}"),
        )),
    }
}

async fn config(State(s): State<Served>) -> Answer {
    ok(s.catalog.config(&ENDPOINTS))
}

async fn list_namespaces(State(s): State<Served>, Query(q): Query<BTreeMap<String, String>>) -> Answer {
    let parent = q
        .get("parent")
        .filter(|p| !p.is_empty())
        .map(|p| levels(p))
        .unwrap_or_default();
    match s.catalog.list_namespaces(&parent).await {
        Ok(body) => ok(body),
        Err(e) => failed(e),
    }
}

async fn create_namespace(State(s): State<Served>, body: std::result::Result<Bytes, BytesRejection>) -> Answer {
    let body = match json_body(body) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let catalog = Arc::clone(&s.catalog);
    match to_the_end(async move { catalog.create_namespace(&body).await }).await {
        Ok(body) => ok(body),
        Err(e) => failed(e),
    }
}

async fn load_namespace(State(s): State<Served>, Path(ns): Path<String>, method: Method) -> Answer {
    match s.catalog.load_namespace(&levels(&ns)).await {
        Ok(_) if method == Method::HEAD => no_content(),
        Ok(body) => ok(body),
        Err(e) => failed(e),
    }
}

async fn drop_namespace(State(s): State<Served>, Path(ns): Path<String>) -> Answer {
    let catalog = Arc::clone(&s.catalog);
    match to_the_end(async move { catalog.drop_namespace(&levels(&ns)).await }).await {
        Ok(()) => no_content(),
        Err(e) => failed(e),
    }
}

async fn namespace_properties(
    State(s): State<Served>,
    Path(ns): Path<String>,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Answer {
    let body = match json_body(body) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let catalog = Arc::clone(&s.catalog);
    match to_the_end(async move { catalog.update_namespace_properties(&levels(&ns), &body).await }).await {
        Ok(body) => ok(body),
        Err(e) => failed(e),
    }
}

async fn list_tables(State(s): State<Served>, Path(ns): Path<String>) -> Answer {
    match s.catalog.list_tables(&levels(&ns)).await {
        Ok(body) => ok(body),
        Err(e) => failed(e),
    }
}

async fn create_table(
    State(s): State<Served>,
    Path(ns): Path<String>,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Answer {
    let body = match json_body(body) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let catalog = Arc::clone(&s.catalog);
    match to_the_end(async move { catalog.create_table(&levels(&ns), &body).await }).await {
        Ok(body) => ok(body),
        Err(e) => failed(e),
    }
}

async fn load_table(State(s): State<Served>, Path((ns, table)): Path<(String, String)>, method: Method) -> Answer {
    if method == Method::HEAD {
        return match s.catalog.table_exists(&levels(&ns), &table).await {
            Ok(()) => no_content(),
            Err(e) => failed(e),
        };
    }
    match s.catalog.load_table(&levels(&ns), &table).await {
        Ok(body) => ok(body),
        Err(e) => failed(e),
    }
}

async fn commit_table(
    State(s): State<Served>,
    Path((ns, table)): Path<(String, String)>,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Answer {
    let body = match json_body(body) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let catalog = Arc::clone(&s.catalog);
    match to_the_end(async move { catalog.commit_table(&levels(&ns), &table, &body).await }).await {
        Ok(body) => ok(body),
        Err(e) => failed(e),
    }
}

async fn drop_table(
    State(s): State<Served>,
    Path((ns, table)): Path<(String, String)>,
    Query(q): Query<BTreeMap<String, String>>,
) -> Answer {
    let purge = match q.get("purgeRequested").map(|v| v.to_ascii_lowercase()) {
        None => false,
        Some(v) if v == "true" => true,
        Some(v) if v == "false" => false,
        Some(v) => {
            return failed(RestError::bad_request(format!(
                "purgeRequested={v}: expected true or false"
            )));
        }
    };
    let catalog = Arc::clone(&s.catalog);
    match to_the_end(async move { catalog.drop_table(&levels(&ns), &table, purge).await }).await {
        Ok(()) => no_content(),
        Err(e) => failed(e),
    }
}

async fn metrics(State(s): State<Served>, Path((ns, table)): Path<(String, String)>) -> Answer {
    match s.catalog.table_exists(&levels(&ns), &table).await {
        Ok(()) => no_content(),
        Err(e) => failed(e),
    }
}

async fn register_table(
    State(s): State<Served>,
    Path(ns): Path<String>,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Answer {
    let body = match json_body(body) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let catalog = Arc::clone(&s.catalog);
    match to_the_end(async move { catalog.register_table(&levels(&ns), &body).await }).await {
        Ok(body) => ok(body),
        Err(e) => failed(e),
    }
}

async fn rename_table(State(s): State<Served>, body: std::result::Result<Bytes, BytesRejection>) -> Answer {
    let body = match json_body(body) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let catalog = Arc::clone(&s.catalog);
    match to_the_end(async move { catalog.rename_table(&body).await }).await {
        Ok(()) => no_content(),
        Err(e) => failed(e),
    }
}

async fn commit_transaction(State(s): State<Served>, body: std::result::Result<Bytes, BytesRejection>) -> Answer {
    let body = match json_body(body) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let catalog = Arc::clone(&s.catalog);
    match to_the_end(async move { catalog.commit_transaction(&body).await }).await {
        Ok(()) => no_content(),
        Err(e) => failed(e),
    }
}

async fn not_found(method: Method, uri: axum::http::Uri) -> Answer {
    failed(RestError::new(
        404,
        "NotFoundException",
        format!("{method} {} is not a route of this catalog", uri.path()),
    ))
}

/// The token check and the request log.
async fn guard(State(s): State<Served>, headers: HeaderMap, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let allowed = match &s.token {
        None => true,
        Some(token) => headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|given| constant_time_eq(given.as_bytes(), token.as_bytes())),
    };
    let response = match allowed {
        true => match with_body(request, s.body_limit, s.body_deadline).await {
            Ok(request) => next.run(request).await,
            Err(e) => failed(e).into_response(),
        },
        false => failed(RestError::not_authorized()).into_response(),
    };
    if s.log {
        let why = response
            .extensions()
            .get::<Failure>()
            .map_or(String::new(), |f| format!(" ({})", f.0));
        eprintln!(
            "{method} {path} {} {:.1} ms{why}",
            response.status().as_u16(),
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    response
}

/// `request` with its body read, within `deadline` and `limit` bytes (a
/// larger announced length is refused before reading).
async fn with_body(
    request: Request,
    limit: usize,
    deadline: std::time::Duration,
) -> std::result::Result<Request, RestError> {
    let too_large = || {
        RestError::new(
            413,
            "BadRequestException",
            format!("the request body is larger than {limit} bytes"),
        )
    };
    let announced = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(deadline, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(bytes)) => Ok(Request::from_parts(parts, axum::body::Body::from(bytes))),
        Ok(Err(e)) if e.to_string().contains("length limit") => Err(too_large()),
        Ok(Err(e)) => Err(RestError::bad_request(format!("the request body cannot be read: {e}"))),
        Err(_) => Err(RestError::new(
            408,
            "RequestTimeoutException",
            format!("the request body did not arrive within {:.1} s", deadline.as_secs_f64()),
        )),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The catalog's routes over `catalog`.
pub fn router(catalog: Arc<RestCatalog>, options: &ServeOptions) -> Router {
    let served = Served {
        catalog,
        token: options.token.clone().filter(|t| !t.is_empty()).map(Arc::from),
        log: options.log_requests,
        body_limit: options.body_limit,
        body_deadline: options.body_deadline,
    };
    Router::new()
        .route("/v1/config", get(config))
        .route("/v1/namespaces", get(list_namespaces).post(create_namespace))
        .route(
            "/v1/namespaces/{ns}",
            get(load_namespace).head(load_namespace).delete(drop_namespace),
        )
        .route("/v1/namespaces/{ns}/properties", post(namespace_properties))
        .route("/v1/namespaces/{ns}/tables", get(list_tables).post(create_table))
        .route(
            "/v1/namespaces/{ns}/tables/{table}",
            get(load_table).head(load_table).post(commit_table).delete(drop_table),
        )
        .route("/v1/namespaces/{ns}/tables/{table}/metrics", post(metrics))
        .route("/v1/namespaces/{ns}/register", post(register_table))
        .route("/v1/tables/rename", post(rename_table))
        .route("/v1/transactions/commit", post(commit_transaction))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(options.body_limit))
        .layer(middleware::from_fn_with_state(served.clone(), guard))
        .with_state(served)
}

/// Bind the catalog of `warehouse`; the address it listens on and the
/// server to run (until it is dropped).
pub async fn bind(
    warehouse: Warehouse,
    options: ServeOptions,
) -> Result<(SocketAddr, impl Future<Output = std::io::Result<()>> + Send)> {
    let config = table_config(&warehouse.options, options.vend_credentials);
    let catalog = Arc::new(RestCatalog::open(warehouse, config, &options.allowed_locations).await?);
    let address = format!("{}:{}", options.host, options.port);
    let listener = tokio::net::TcpListener::bind(&address)
        .await
        .map_err(|e| Error::Invalid(format!("cannot listen on {address}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Error::Invalid(format!("cannot listen on {address}: {e}")))?;
    let app = router(catalog, &options);
    let (max_connections, header_deadline) = (options.max_connections, options.header_deadline);
    Ok((
        bound,
        connections::serve_connections(listener, app, max_connections, header_deadline),
    ))
}

/// Serve `warehouse` until Ctrl-C.
pub async fn serve(warehouse: Warehouse, options: ServeOptions) -> Result<()> {
    let place = warehouse.place().url();
    let secured = options.token.as_deref().is_some_and(|t| !t.is_empty());
    let (address, server) = bind(warehouse, options).await?;
    eprintln!(
        "serving the warehouse {place} as an Iceberg REST catalog at http://{address}/ ({})",
        if secured {
            "a bearer token is required"
        } else {
            "no token required"
        }
    );
    tokio::select! {
        result = server => result.map_err(|e| Error::Invalid(format!("the catalog server stopped: {e}"))),
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}
