//! From a location URL and options to an `ObjectStore`.
//!
//! | URL                                   | store                               | configured from                          |
//! |---------------------------------------|-------------------------------------|------------------------------------------|
//! | `/path`, `./path`, `file:///path`     | local file system                   | —                                        |
//! | `memory://`                           | in memory (one per process)         | —                                        |
//! | `s3://bucket/prefix`, `s3a://…`       | Amazon S3 or an S3-compatible server| `AWS_*` variables, then options          |
//! | `gs://bucket/prefix`                  | Google Cloud Storage                | `GOOGLE_*` variables, then options       |
//! | `az://container/prefix`, `abfss://container@account.dfs.core.windows.net/prefix` | Azure Blob / ADLS | `AZURE_*` variables, then options |
//!
//! Options are object_store's configuration keys (`aws_endpoint`,
//! `aws_region`, `google_service_account`, `azure_storage_account_name`, …,
//! case does not matter); each store takes the keys that are its settings.
//! A key that is no store's setting is an error, never silently ignored.
//! One key is ours: `single_writer = true` lets a store without conditional writes be
//! written to, trusting that only one writer commits at a time.
//!
//! Requests are retried with backoff on transient errors (object_store's
//! `RetryConfig`: 5 retries within 60 s); a commit whose outcome a retry hid
//! is recognised by its content (see `store::commit`).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::memory::InMemory;
use object_store::{BackoffConfig, ObjectStore, RetryConfig};

use super::cache::ObjectCache;
use super::url::{Scheme, StoreLocation};
use crate::error::{Error, Result};

/// Our own option key (not passed to object_store).
pub const SINGLE_WRITER: &str = "single_writer";

/// Options for building stores: `key = value` pairs given on the command
/// line (`--storage-option`) or from Rust, on top of the environment.
/// Values may be secrets: they are never printed, not even by `Debug`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StorageOptions {
    options: BTreeMap<String, String>,
}

impl std::fmt::Debug for StorageOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.options.keys()).finish()
    }
}

/// Whether `key` is a setting of some store, or ours.
fn is_known_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key == SINGLE_WRITER
        || key.parse::<AmazonS3ConfigKey>().is_ok()
        || key.parse::<GoogleConfigKey>().is_ok()
        || key.parse::<AzureConfigKey>().is_ok()
}

/// Letters and `_` only, as setting names are (a secret has digits or symbols).
fn looks_like_a_name(key: &str) -> bool {
    key.len() <= 64 && key.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
}

/// `text` with every option value in it masked (a store's error may quote
/// a value it could not use, and that value may be a secret).
fn redact(text: &str, options: &StorageOptions) -> String {
    let mut out = text.to_string();
    let mut values: Vec<(&String, &String)> = options.iter().filter(|(_, v)| v.len() >= 4).collect();
    values.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (key, value) in values {
        out = out.replace(value.as_str(), &format!("<value of {key}>"));
    }
    out
}

impl StorageOptions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one option (`aws_endpoint`, `AWS_REGION`, `single_writer`, …).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.insert(key.into().to_ascii_lowercase(), value.into());
        self
    }

    /// Parse `key=value` (as given to `--storage-option`). The text may
    /// hold a secret, so an error never repeats it: it names at most a key
    /// that is a known setting.
    pub fn parse_pair(pair: &str) -> Result<(String, String)> {
        let usage = "expected KEY=VALUE, e.g. aws_region=us-east-1; the text is not shown, as it may hold a secret";
        match pair.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            Some(_) => Err(Error::Invalid(format!(
                "a storage option has no key before '=' ({usage})"
            ))),
            None => {
                let head = pair.split([':', ' ', '\t']).next().unwrap_or_default().trim();
                let hint = if is_known_key(head) {
                    format!("; did you mean {}=…?", head.to_ascii_lowercase())
                } else {
                    String::new()
                };
                Err(Error::Invalid(format!("a storage option has no '=' ({usage}){hint}")))
            }
        }
    }

    /// The options as given (keys lower-cased).
    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.options.iter()
    }

    /// Whether the user vouched that only one writer commits at a time.
    pub fn single_writer(&self) -> bool {
        self.options
            .get(SINGLE_WRITER)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    fn store_keys(&self) -> impl Iterator<Item = (&String, &String)> {
        self.options.iter().filter(|(k, _)| k.as_str() != SINGLE_WRITER)
    }

    /// Every key is a setting of some store (or ours): a typo is an error,
    /// never silently ignored.
    pub fn validate(&self) -> Result<()> {
        for (key, _) in self.store_keys() {
            if !is_known_key(key) {
                // A key in the wrong place may be a secret: show only what reads as a setting name.
                let shown = if looks_like_a_name(key) {
                    format!("{key:?}")
                } else {
                    "(not shown: it does not read as a setting name and may be a secret)".to_string()
                };
                return Err(Error::Invalid(format!(
                    "storage option key {shown} is not a setting of any store (S3: aws_*, e.g. aws_endpoint; GCS: google_*; Azure: azure_*; or single_writer)"
                )));
            }
        }
        Ok(())
    }

    /// The options that are settings of stores of type `K`.
    fn for_store<K: std::str::FromStr>(&self) -> impl Iterator<Item = (K, &String)> {
        self.store_keys().filter_map(|(k, v)| Some((k.parse::<K>().ok()?, v)))
    }
}

fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig::default(),
        max_retries: 5,
        retry_timeout: Duration::from_secs(60),
    }
}

/// The one in-memory store of this process (so `memory://` tables outlive a session).
fn memory() -> Arc<dyn ObjectStore> {
    static MEMORY: OnceLock<Arc<dyn ObjectStore>> = OnceLock::new();
    Arc::clone(MEMORY.get_or_init(|| Arc::new(InMemory::new())))
}

/// Build the store for `place` (not registered anywhere).
pub fn build_store(place: &StoreLocation, options: &StorageOptions) -> Result<Arc<dyn ObjectStore>> {
    let scheme = place.scheme;
    options.validate()?;
    let url = place.store_url.as_str();
    let failed = |e: object_store::Error| {
        Error::Invalid(format!(
            "cannot set up the {} store for {}: {}",
            scheme.describe(),
            place.url(),
            redact(&e.to_string(), options)
        ))
    };
    Ok(match scheme {
        Scheme::Local => Arc::new(object_store::local::LocalFileSystem::new()),
        Scheme::Memory => memory(),
        Scheme::S3 => {
            let mut b = AmazonS3Builder::from_env().with_url(url).with_retry(retry());
            for (k, v) in options.for_store::<AmazonS3ConfigKey>() {
                b = b.with_config(k, v);
            }
            // Else every request fails with "HTTP error: builder error".
            let allow_http = AmazonS3ConfigKey::Client(object_store::ClientConfigKey::AllowHttp);
            if let Some(endpoint) = b.get_config_value(&AmazonS3ConfigKey::Endpoint)
                && endpoint.to_ascii_lowercase().starts_with("http://")
                && !b
                    .get_config_value(&allow_http)
                    .is_some_and(|v| v.eq_ignore_ascii_case("true"))
            {
                return Err(Error::Invalid(format!(
                    "cannot set up the S3 store for {}: the endpoint {endpoint} is plain HTTP, which needs --storage-option aws_allow_http=true (or AWS_ALLOW_HTTP=true)",
                    place.url()
                )));
            }
            Arc::new(b.build().map_err(failed)?)
        }
        Scheme::Gcs => {
            let mut b = GoogleCloudStorageBuilder::from_env().with_url(url).with_retry(retry());
            for (k, v) in options.for_store::<GoogleConfigKey>() {
                b = b.with_config(k, v);
            }
            Arc::new(b.build().map_err(failed)?)
        }
        Scheme::Azure => {
            let mut b = MicrosoftAzureBuilder::from_env().with_url(url).with_retry(retry());
            for (k, v) in options.for_store::<AzureConfigKey>() {
                b = b.with_config(k, v);
            }
            Arc::new(b.build().map_err(failed)?)
        }
    })
}

/// Whether put-if-absent really works on a store: found out once per
/// session (the answer is kept in its `cache`) by writing a probe object
/// twice; the second write must be refused. A store that ignores the
/// condition would let two writers overwrite each other's commits.
pub async fn conditional_writes(
    place: &StoreLocation,
    store: &dyn ObjectStore,
    probe_dir: &object_store::path::Path,
    cache: &ObjectCache,
) -> Result<bool> {
    if matches!(place.scheme, Scheme::Local | Scheme::Memory) {
        return Ok(true);
    }
    let key = format!("conditional-writes:{}", place.store_url.as_str());
    if let Some(known) = cache.bytes(&key) {
        return Ok(known.as_ref() == b"yes");
    }
    let probe = probe_dir.clone().join(format!(".hp-probe-{}", uuid::Uuid::new_v4()));
    let create = object_store::PutOptions {
        mode: object_store::PutMode::Create,
        ..Default::default()
    };
    let supported = match store.put_opts(&probe, "1".into(), create.clone()).await {
        Err(object_store::Error::NotImplemented { .. }) => false,
        Err(e) => return Err(e.into()),
        Ok(_) => {
            let second = store.put_opts(&probe, "2".into(), create).await;
            let _ = object_store::ObjectStoreExt::delete(store, &probe).await;
            match second {
                Err(object_store::Error::AlreadyExists { .. }) => true,
                Ok(_) | Err(object_store::Error::NotImplemented { .. }) => false,
                Err(e) => return Err(e.into()),
            }
        }
    };
    cache.put_bytes(key, Bytes::from_static(if supported { b"yes" } else { b"no" }));
    Ok(supported)
}
