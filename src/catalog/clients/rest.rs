//! An Iceberg REST catalog as the catalog of our session (`--catalog
//! http://…`): tested against our own server (`serve`), and speaking only
//! the protocol, so any REST catalog serves.
//!
//! A commit is not a file of ours: the change between the metadata our
//! statement read and the one it made is sent as the protocol's
//! requirements and updates, and the catalog writes the metadata file.
//!
//! | what changed                      | requirements                      | updates                              |
//! |-----------------------------------|-----------------------------------|--------------------------------------|
//! | always                            | `assert-table-uuid`, `assert-ref-snapshot-id` main | —                       |
//! | a schema was added / made current | `assert-current-schema-id`        | `add-schema`, `set-current-schema`   |
//! | a partition spec was added / made default | `assert-default-spec-id`  | `add-spec`, `set-default-spec`       |
//! | a snapshot was added              | —                                 | `add-snapshot`, `set-snapshot-ref` main |
//!
//! A 409 is a lost race (the statement reloads and starts over); a 5xx
//! on a commit leaves its outcome unknown (its files are kept). A bearer
//! token comes from `HIDDEN_PARTITIONS_CATALOG_TOKEN`.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value as Json, json};

use crate::error::{Error, Result};
use crate::formats::iceberg::pointer::{Current, MetadataPointer, NextMetadata};
use crate::iceberg::metadata::metadata_version;
use crate::store::TableLocation;

/// A REST catalog at one URL.
pub struct RestClient {
    /// `http://host:port/v1/[prefix/]`
    base: String,
    http: reqwest::Client,
    token: Option<String>,
    /// The catalog rebases an append without `assert-ref-snapshot-id`
    /// (ours says so in `/v1/config`); any other catalog gets the requirement.
    rebases_snapshots: bool,
}

impl std::fmt::Debug for RestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RestClient({})", self.base)
    }
}

/// A response: status and JSON body (`null` when empty).
struct Answer {
    status: u16,
    body: Json,
}

impl Answer {
    /// The error model's type (`NoSuchTableException`, …), or "".
    fn kind(&self) -> &str {
        crate::iceberg::rest::error_kind(&self.body)
    }

    /// The error model's message, or the body.
    fn message(&self) -> String {
        crate::iceberg::rest::error_message(&self.body)
            .map(str::to_string)
            .unwrap_or_else(|| self.body.to_string())
    }
}

/// A response body as JSON (`null` when empty, a string when not JSON). A
/// table's `metadata` is left out: we read the metadata file itself, and
/// building a tree of a large document on every load and commit is slow.
fn answer_body(bytes: &[u8]) -> Json {
    if bytes.is_empty() {
        return Json::Null;
    }
    if let Ok(fields) = serde_json::from_slice::<BTreeMap<&str, &serde_json::value::RawValue>>(bytes) {
        return Json::Object(
            fields
                .into_iter()
                .filter(|(key, _)| *key != "metadata")
                .filter_map(|(key, raw)| Some((key.to_string(), serde_json::from_str(raw.get()).ok()?)))
                .collect(),
        );
    }
    serde_json::from_slice(bytes).unwrap_or_else(|_| Json::String(String::from_utf8_lossy(bytes).into()))
}

/// A namespace in a URL path: levels joined by the unit separator.
fn path_namespace(namespace: &str) -> String {
    namespace
        .split('.')
        .map(|level| percent_encoding::utf8_percent_encode(level, percent_encoding::NON_ALPHANUMERIC).to_string())
        .collect::<Vec<_>>()
        .join("%1F")
}

/// The route of table `namespace.name`.
fn table_route(namespace: &str, name: &str) -> String {
    let name = percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC);
    format!("namespaces/{}/tables/{name}", path_namespace(namespace))
}

impl RestClient {
    /// Connect: `GET /v1/config` gives the prefix of every other route.
    pub async fn connect(url: &str) -> Result<Self> {
        let root = url.trim_end_matches('/').to_string();
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| Error::Invalid(format!("REST catalog {root}: {e}")))?;
        let mut client = Self {
            base: format!("{root}/v1/"),
            http,
            token: std::env::var("HIDDEN_PARTITIONS_CATALOG_TOKEN")
                .ok()
                .filter(|t| !t.is_empty()),
            rebases_snapshots: false,
        };
        let config = client.send(reqwest::Method::GET, "config", None).await?;
        if config.status != 200 {
            return Err(Error::Invalid(format!(
                "REST catalog {root}: GET /v1/config answered {}: {}",
                config.status,
                config.message()
            )));
        }
        let setting = |key: &str| {
            ["overrides", "defaults"]
                .iter()
                .find_map(|part| config.body.get(*part)?.get(key)?.as_str().map(str::to_string))
        };
        if let Some(prefix) = setting("prefix").filter(|p| !p.is_empty()) {
            client.base = format!("{root}/v1/{}/", prefix.trim_matches('/'));
        }
        client.rebases_snapshots = setting(crate::iceberg::rest::REBASES_SNAPSHOTS).as_deref() == Some("true");
        Ok(client)
    }

    async fn send(&self, method: reqwest::Method, route: &str, body: Option<&Json>) -> Result<Answer> {
        let url = format!("{}{route}", self.base);
        let mut request = self.http.request(method.clone(), &url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(serde_json::to_vec(body)?);
        }
        let response = request
            .send()
            .await
            .map_err(|e| Error::Invalid(format!("REST catalog {}: {method} {route} failed: {e}", self.base)))?;
        let status = response.status().as_u16();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| Error::Invalid(format!("REST catalog {}: {method} {route}: {e}", self.base)))?;
        Ok(Answer {
            status,
            body: answer_body(&bytes),
        })
    }

    fn failed(&self, what: &str, answer: &Answer) -> Error {
        Error::Invalid(format!(
            "REST catalog {}: {what} answered {}: {}",
            self.base,
            answer.status,
            answer.message()
        ))
    }

    /// Load table `namespace.name`: its metadata location, if it exists.
    async fn load(&self, namespace: &str, name: &str) -> Result<Option<String>> {
        let route = table_route(namespace, name);
        let answer = self.send(reqwest::Method::GET, &route, None).await?;
        match answer.status {
            200 => answer
                .body
                .get("metadata-location")
                .and_then(Json::as_str)
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "REST catalog {}: table {namespace}.{name} was loaded without its metadata-location",
                        self.base
                    ))
                }),
            404 => Ok(None),
            _ => Err(self.failed(&format!("loading {namespace}.{name}"), &answer)),
        }
    }
}

#[async_trait]
impl super::IcebergCatalog for Arc<RestClient> {
    fn describe(&self) -> String {
        format!("REST catalog {}", self.base)
    }

    async fn namespaces(&self) -> Result<Vec<String>> {
        let answer = self.send(reqwest::Method::GET, "namespaces", None).await?;
        if answer.status != 200 {
            return Err(self.failed("listing namespaces", &answer));
        }
        let mut out: Vec<String> = answer
            .body
            .get("namespaces")
            .and_then(Json::as_array)
            .map(|all| {
                all.iter()
                    .filter_map(|levels| {
                        let levels: Vec<&str> = levels.as_array()?.iter().filter_map(Json::as_str).collect();
                        Some(levels.join("."))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        Ok(out)
    }

    async fn create_namespace(&self, namespace: &str) -> Result<bool> {
        let levels: Vec<&str> = namespace.split('.').collect();
        let answer = self
            .send(reqwest::Method::POST, "namespaces", Some(&json!({"namespace": levels})))
            .await?;
        match answer.status {
            200 => Ok(true),
            409 => Ok(false),
            _ => Err(self.failed(&format!("creating namespace {namespace}"), &answer)),
        }
    }

    async fn drop_namespace(&self, namespace: &str) -> Result<bool> {
        let route = format!("namespaces/{}", path_namespace(namespace));
        let answer = self.send(reqwest::Method::DELETE, &route, None).await?;
        match answer.status {
            200 | 204 => Ok(true),
            404 => Ok(false),
            _ => Err(self.failed(&format!("dropping namespace {namespace}"), &answer)),
        }
    }

    async fn tables(&self, namespace: &str) -> Result<Vec<String>> {
        let route = format!("namespaces/{}/tables", path_namespace(namespace));
        let answer = self.send(reqwest::Method::GET, &route, None).await?;
        if answer.status != 200 {
            return Err(self.failed(&format!("listing the tables of {namespace}"), &answer));
        }
        let mut out: Vec<String> = answer
            .body
            .get("identifiers")
            .and_then(Json::as_array)
            .map(|ids| {
                ids.iter()
                    .filter_map(|i| i.get("name")?.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        Ok(out)
    }

    async fn table(&self, namespace: &str, name: &str) -> Result<Option<(String, Arc<dyn MetadataPointer>)>> {
        let Some(location) = self.load(namespace, name).await? else {
            return Ok(None);
        };
        let pointer: Arc<dyn MetadataPointer> = Arc::new(RestPointer {
            client: Arc::clone(self),
            namespace: namespace.to_string(),
            name: name.to_string(),
        });
        Ok(Some((location, pointer)))
    }

    fn places_tables(&self) -> bool {
        true
    }

    async fn create_table(
        &self,
        namespace: &str,
        name: &str,
        table: Option<&TableLocation>,
        metadata: &Json,
    ) -> Result<()> {
        let current = |list: &str, id: &str| -> Option<Json> {
            let wanted = metadata.get(id)?;
            metadata
                .get(list)?
                .as_array()?
                .iter()
                .find(|s| s.get(if list == "schemas" { "schema-id" } else { "spec-id" }) == Some(wanted))
                .cloned()
        };
        let mut body = json!({
            "name": name,
            "schema": current("schemas", "current-schema-id"),
            "partition-spec": current("partition-specs", "default-spec-id"),
            "properties": metadata.get("properties").cloned().unwrap_or(json!({})),
        });
        if let Some(table) = table {
            body["location"] = json!(table.iceberg_root());
        }
        let route = format!("namespaces/{}/tables", path_namespace(namespace));
        let answer = self.send(reqwest::Method::POST, &route, Some(&body)).await?;
        match answer.status {
            200 => Ok(()),
            409 => Err(Error::TableExists(format!("table {namespace}.{name} already exists"))),
            _ => Err(self.failed(&format!("creating {namespace}.{name}"), &answer)),
        }
    }

    async fn rename_table(&self, namespace: &str, name: &str, to_namespace: &str, to: &str) -> Result<bool> {
        let levels = |ns: &str| ns.split('.').map(str::to_string).collect::<Vec<_>>();
        let body = json!({
            "source": {"namespace": levels(namespace), "name": name},
            "destination": {"namespace": levels(to_namespace), "name": to},
        });
        let answer = self.send(reqwest::Method::POST, "tables/rename", Some(&body)).await?;
        match answer.status {
            200 | 204 => Ok(true),
            404 if answer.kind() == "NoSuchTableException" => Ok(false),
            409 => Err(Error::TableExists(format!("table {to_namespace}.{to} already exists"))),
            _ => Err(self.failed(&format!("renaming {namespace}.{name} to {to_namespace}.{to}"), &answer)),
        }
    }

    async fn drop_table(&self, namespace: &str, name: &str, purge: bool) -> Result<bool> {
        let route = format!("{}?purgeRequested={purge}", table_route(namespace, name));
        let answer = self.send(reqwest::Method::DELETE, &route, None).await?;
        match answer.status {
            200 | 204 => Ok(true),
            404 => Ok(false),
            _ => Err(self.failed(&format!("dropping {namespace}.{name}"), &answer)),
        }
    }
}

/// The pointer of one table of a REST catalog.
#[derive(Debug)]
pub struct RestPointer {
    client: Arc<RestClient>,
    namespace: String,
    name: String,
}

/// Entries of `list` (by `id`) in `after` that `before` lacks.
fn added<'a>(before: &Json, after: &'a Json, list: &str, id: &str) -> Vec<&'a Json> {
    let known: Vec<&Json> = before
        .get(list)
        .and_then(Json::as_array)
        .map(|all| all.iter().filter_map(|e| e.get(id)).collect())
        .unwrap_or_default();
    after
        .get(list)
        .and_then(Json::as_array)
        .map(|all| {
            all.iter()
                .filter(|e| e.get(id).is_some_and(|i| !known.contains(&i)))
                .collect()
        })
        .unwrap_or_default()
}

/// The change from `before` to `after` as a `CommitTableRequest`. With
/// `rebased_appends` (the catalog rebases snapshots itself), a commit that
/// only appends leaves out `assert-ref-snapshot-id`: the catalog puts it on
/// top of whatever won meanwhile instead of answering 409.
pub fn commit_request(before: &Json, after: &Json, rebased_appends: bool) -> Json {
    let snapshot_id = |doc: &Json| {
        doc.get("current-snapshot-id")
            .and_then(Json::as_i64)
            .filter(|id| *id >= 0)
    };
    let mut requirements = vec![json!({"type": "assert-table-uuid", "uuid": before.get("table-uuid")})];
    let main_requirement = requirements.len();
    requirements.push(json!({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": snapshot_id(before)}));
    let mut updates = Vec::new();
    let schemas = added(before, after, "schemas", "schema-id");
    if !schemas.is_empty() || before.get("current-schema-id") != after.get("current-schema-id") {
        requirements
            .push(json!({"type": "assert-current-schema-id", "current-schema-id": before.get("current-schema-id")}));
        for schema in schemas {
            updates
                .push(json!({"action": "add-schema", "schema": schema, "last-column-id": after.get("last-column-id")}));
        }
        updates.push(json!({"action": "set-current-schema", "schema-id": after.get("current-schema-id")}));
    }
    let specs = added(before, after, "partition-specs", "spec-id");
    if !specs.is_empty() || before.get("default-spec-id") != after.get("default-spec-id") {
        requirements.push(json!({"type": "assert-default-spec-id", "default-spec-id": before.get("default-spec-id")}));
        for spec in specs {
            updates.push(json!({"action": "add-spec", "spec": spec}));
        }
        updates.push(json!({"action": "set-default-spec", "spec-id": after.get("default-spec-id")}));
    }
    for snapshot in added(before, after, "snapshots", "snapshot-id") {
        updates.push(json!({"action": "add-snapshot", "snapshot": snapshot}));
    }
    if snapshot_id(before) != snapshot_id(after)
        && let Some(id) = snapshot_id(after)
    {
        updates.push(json!({"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id}));
    }
    let object = |doc: &Json, key: &str| doc.get(key).and_then(Json::as_object).cloned().unwrap_or_default();
    let (refs_before, refs_after) = (object(before, "refs"), object(after, "refs"));
    for (name, r) in refs_after.iter().filter(|(n, _)| *n != "main") {
        if refs_before.get(name) != Some(r) {
            updates.push(json!({"action": "set-snapshot-ref", "ref-name": name, "type": r.get("type"), "snapshot-id": r.get("snapshot-id")}));
        }
    }
    for name in refs_before.keys().filter(|n| !refs_after.contains_key(*n)) {
        updates.push(json!({"action": "remove-snapshot-ref", "ref-name": name}));
    }
    let (props_before, props_after) = (object(before, "properties"), object(after, "properties"));
    let set: serde_json::Map<String, Json> = props_after
        .iter()
        .filter(|(k, v)| props_before.get(*k) != Some(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !set.is_empty() {
        updates.push(json!({"action": "set-properties", "updates": set}));
    }
    let unset: Vec<&String> = props_before.keys().filter(|k| !props_after.contains_key(*k)).collect();
    if !unset.is_empty() {
        updates.push(json!({"action": "remove-properties", "removals": unset}));
    }
    // After the refs: a snapshot is removed once no tag names it.
    let removed: Vec<&Json> = added(after, before, "snapshots", "snapshot-id")
        .iter()
        .filter_map(|s| s.get("snapshot-id"))
        .collect();
    if !removed.is_empty() {
        updates.push(json!({"action": "remove-snapshots", "snapshot-ids": removed}));
    }
    // Only an append (one new snapshot, made main, nothing else) may be rebased.
    let only_an_append = requirements.len() == main_requirement + 1
        && updates.len() == 2
        && updates[0]["action"] == "add-snapshot"
        && updates[0]["snapshot"]["summary"]["operation"] == "append"
        && updates[1]["action"] == "set-snapshot-ref";
    if rebased_appends && only_an_append {
        requirements.remove(main_requirement);
    }
    json!({"requirements": requirements, "updates": updates})
}

#[async_trait]
impl MetadataPointer for RestPointer {
    fn catalog_commits(&self) -> bool {
        true
    }

    async fn current(&self, table: &TableLocation) -> Result<Current> {
        let Some(location) = self.client.load(&self.namespace, &self.name).await? else {
            return Err(Error::TableNotFound(format!("{}.{}", self.namespace, self.name)));
        };
        let file = table.from_iceberg_path(&location)?;
        let version = file.filename().and_then(metadata_version).unwrap_or(0);
        Ok(Current { file, version })
    }

    async fn commit(&self, table: &TableLocation, latest: &Current, next: NextMetadata<'_>) -> Result<Option<Current>> {
        let body = commit_request(next.before, next.after, self.client.rebases_snapshots);
        let route = table_route(&self.namespace, &self.name);
        let full = format!("{}.{}", self.namespace, self.name);
        let answer = match self.client.send(reqwest::Method::POST, &route, Some(&body)).await {
            Ok(a) => a,
            Err(e) => {
                return Err(Error::CommitUnknown {
                    table: full,
                    detail: e.to_string(),
                });
            }
        };
        match answer.status {
            200 => {
                let Some(location) = answer.body.get("metadata-location").and_then(Json::as_str) else {
                    return Err(Error::CommitUnknown {
                        table: full,
                        detail: "the catalog answered the commit without a metadata-location".into(),
                    });
                };
                let file = table.from_iceberg_path(location)?;
                let version = file.filename().and_then(metadata_version).unwrap_or(latest.version + 1);
                Ok(Some(Current { file, version }))
            }
            409 => Ok(None),
            500 | 502 | 503 | 504 => Err(Error::CommitUnknown {
                table: full,
                detail: format!("the catalog answered {}: {}", answer.status, answer.message()),
            }),
            _ => Err(self.client.failed(&format!("committing to {full}"), &answer)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(snapshots: &[(i64, &str)], props: Json, refs: Json) -> Json {
        let list: Vec<Json> = snapshots
            .iter()
            .map(|(id, op)| json!({"snapshot-id": id, "summary": {"operation": op}}))
            .collect();
        json!({
            "table-uuid": "u", "current-schema-id": 0, "default-spec-id": 0,
            "current-snapshot-id": snapshots.last().map_or(-1, |s| s.0),
            "snapshots": list, "properties": props, "refs": refs,
        })
    }

    fn kinds(request: &Json, key: &str, tag: &str) -> Vec<String> {
        request[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[tag].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn an_append_is_rebased_only_by_a_catalog_that_says_it_rebases() {
        let before = doc(&[(1, "append")], json!({}), json!({}));
        let after = doc(&[(1, "append"), (2, "append")], json!({}), json!({}));
        let strict = commit_request(&before, &after, false);
        assert_eq!(
            kinds(&strict, "requirements", "type"),
            ["assert-table-uuid", "assert-ref-snapshot-id"]
        );
        let rebased = commit_request(&before, &after, true);
        assert_eq!(kinds(&rebased, "requirements", "type"), ["assert-table-uuid"]);
        assert_eq!(
            kinds(&rebased, "updates", "action"),
            ["add-snapshot", "set-snapshot-ref"]
        );
        // A delete keeps its requirement.
        let deleted = doc(&[(1, "append"), (3, "delete")], json!({}), json!({}));
        assert_eq!(
            kinds(&commit_request(&before, &deleted, true), "requirements", "type"),
            ["assert-table-uuid", "assert-ref-snapshot-id"]
        );
    }

    #[test]
    fn properties_tags_and_expired_snapshots_are_updates_too() {
        let before = doc(
            &[(1, "append"), (2, "append")],
            json!({"a": "1", "b": "2"}),
            json!({"main": {"snapshot-id": 2, "type": "branch"}, "old": {"snapshot-id": 1, "type": "tag"}}),
        );
        let after = doc(
            &[(2, "append")],
            json!({"a": "9", "c": "3"}),
            json!({"main": {"snapshot-id": 2, "type": "branch"}, "new": {"snapshot-id": 2, "type": "tag"}}),
        );
        let request = commit_request(&before, &after, true);
        assert_eq!(
            kinds(&request, "updates", "action"),
            [
                "set-snapshot-ref",
                "remove-snapshot-ref",
                "set-properties",
                "remove-properties",
                "remove-snapshots"
            ]
        );
        let updates = &request["updates"];
        assert_eq!(updates[0]["ref-name"], "new");
        assert_eq!(updates[1]["ref-name"], "old");
        assert_eq!(updates[2]["updates"], json!({"a": "9", "c": "3"}));
        assert_eq!(updates[3]["removals"], json!(["b"]));
        assert_eq!(updates[4]["snapshot-ids"], json!([1]));
        assert_eq!(
            kinds(&request, "requirements", "type"),
            ["assert-table-uuid", "assert-ref-snapshot-id"]
        );
    }
}
