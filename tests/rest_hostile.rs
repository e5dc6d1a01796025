//! The REST catalog against a hostile client: every route with bad paths,
//! names and bodies gets the answer the spec gives (4xx in the error model,
//! never a 500 for the client's mistake), reaches nothing outside the
//! warehouse, learns nothing of what lies there, and changes nothing.

use std::path::Path;
use std::time::{Duration, Instant};

use hidden_partitions::serve::ServeOptions;
use hidden_partitions::{Warehouse, execute_sql, session_with};
use serde_json::{Value, json};

mod common;
use common::readers::runtime;
use common::served::{Served, serve_with};

fn serve(configure: impl FnOnce(&mut ServeOptions, &Path)) -> Served {
    serve_with(configure)
}

impl Served {
    fn sql(&self, sql: &str) -> Vec<datafusion::arrow::record_batch::RecordBatch> {
        let warehouse = self.warehouse.clone();
        let sql = sql.to_string();
        runtime().block_on(async move {
            let ctx = session_with(Warehouse::local(&warehouse).unwrap()).await.unwrap();
            let mut r = execute_sql(&ctx, &sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
            r.pop().map(|r| r.batches).unwrap_or_default()
        })
    }
}

/// The error model's (code, type) of an answer, and its message.
fn kind(answer: &(u16, Value)) -> (u16, String, String) {
    let error = &answer.1["error"];
    (
        answer.0,
        error["type"].as_str().unwrap_or_default().to_string(),
        error["message"].as_str().unwrap_or_default().to_string(),
    )
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            match e.path().is_dir() {
                true => out.extend(files_under(&e.path())),
                false => out.push(e.path().display().to_string()),
            }
        }
    }
    out.sort();
    out
}

fn schema(fields: Value) -> Value {
    json!({"type": "struct", "schema-id": 0, "fields": fields})
}

fn long(id: i64, name: &str) -> Value {
    json!({"id": id, "name": name, "required": false, "type": "long"})
}

/// A table `ns.<name>` created through the catalog with columns id, v.
fn create(s: &Served, name: &str, extra: Value) -> (u16, Value) {
    let mut body = json!({"name": name, "schema": schema(json!([long(1, "id"), long(2, "v")]))});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    s.call("POST", "/v1/namespaces/ns/tables", Some(body))
}

fn commit(s: &Served, table: &str, updates: Value) -> (u16, Value) {
    s.call(
        "POST",
        &format!("/v1/namespaces/ns/tables/{table}"),
        Some(json!({"requirements": [], "updates": updates})),
    )
}

#[test]
fn locations_outside_the_warehouse_are_refused_without_looking() {
    let s = serve(|o, dir| o.allowed_locations = vec![dir.join("allowed").display().to_string()]);
    assert_eq!(
        s.call("POST", "/v1/namespaces", Some(json!({"namespace": ["ns"]}))).0,
        200
    );
    let outside = s.dir.path().join("victim");
    std::fs::create_dir_all(outside.join("etc/rc2.d")).unwrap();
    std::fs::write(outside.join("etc/rc2.d/S01secret"), "x").unwrap();
    let before = files_under(s.dir.path());
    for location in [
        "/etc".to_string(),
        outside.join("etc").display().to_string(),
        format!("file://{}", outside.display()),
        "/proc/self".to_string(),
        "relative/place".to_string(),
        "memory:///x".to_string(),
        format!("{}/ns.db/other_place", s.warehouse.display()),
        format!("{}/../victim", s.warehouse.display()),
    ] {
        let answer = create(&s, "t", json!({"location": location}));
        let (code, typ, message) = kind(&answer);
        assert_eq!(
            (code, typ.as_str()),
            (403, "ForbiddenException"),
            "{location}: {answer:?}"
        );
        assert!(
            !message.contains("S01secret") && !message.contains("rc2.d"),
            "{message}"
        );
        assert_eq!(files_under(s.dir.path()), before, "{location}: something was written");
    }
    // Under a root the operator allows: the table lives there.
    let allowed = s.dir.path().join("allowed/t");
    let answer = s.call(
        "POST",
        "/v1/namespaces/public/tables",
        Some(json!({"name": "t", "schema": schema(json!([long(1, "id")])), "location": allowed.display().to_string()})),
    );
    assert_eq!(answer.0, 200, "{answer:?}");
    assert!(allowed.join("metadata").is_dir());
    // A table's own place is fine, said either way.
    let own = format!("{}/ns.db/mine", s.warehouse.display());
    assert_eq!(create(&s, "mine", json!({"location": own})).0, 200);
}

#[test]
fn snapshots_naming_files_outside_the_table_are_refused() {
    let s = serve(|_, _| {});
    s.call("POST", "/v1/namespaces", Some(json!({"namespace": ["ns"]})));
    assert_eq!(create(&s, "t", json!({})).0, 200);
    let root = s.warehouse.join("ns.db/t");
    std::fs::write(root.join("metadata/list.json"), b"{\"not\": \"avro\"}").unwrap();
    for list in [
        format!("{}/data/../../victim/snap.avro", root.display()),
        format!("{}/../u/metadata/snap.avro", root.display()),
        "/etc/passwd".to_string(),
        format!("{}/metadata/missing.avro", root.display()),
        format!("{}/metadata/list.json", root.display()),
    ] {
        let snapshot = json!({"snapshot-id": 7, "timestamp-ms": 1, "manifest-list": list,
                              "summary": {"operation": "append"}, "sequence-number": 1});
        let answer = commit(&s, "t", json!([{"action": "add-snapshot", "snapshot": snapshot}]));
        let (code, typ, _) = kind(&answer);
        assert_eq!((code, typ.as_str()), (400, "BadRequestException"), "{list}: {answer:?}");
    }
    let snapshots = s.sql("SELECT count(*) FROM ns.\"t$snapshots\"");
    assert_eq!(
        datafusion::arrow::util::pretty::pretty_format_batches(&snapshots)
            .unwrap()
            .to_string()
            .lines()
            .nth(3),
        Some("| 0        |")
    );
}

#[test]
fn names_are_exact_strings_and_bad_ones_are_client_errors() {
    let s = serve(|_, _| {});
    // Exact strings: MyNs is not myns.
    assert_eq!(
        s.call("POST", "/v1/namespaces", Some(json!({"namespace": ["MyNs"]}))).0,
        200
    );
    assert_eq!(s.call("GET", "/v1/namespaces/MyNs", None).0, 200);
    assert_eq!(kind(&s.call("GET", "/v1/namespaces/myns", None)).0, 404);
    assert!(s.warehouse.join("MyNs.db").is_dir());
    assert!(!s.warehouse.join("myns.db").exists());
    assert_eq!(
        s.call("POST", "/v1/namespaces", Some(json!({"namespace": ["myns"]}))).0,
        200
    );
    assert_eq!(s.call("DELETE", "/v1/namespaces/MyNs", None).0, 204);
    assert_eq!(
        s.call("GET", "/v1/namespaces/myns", None).0,
        200,
        "dropping MyNs kept myns"
    );
    // Too long, or not a name: 400 to create, 404 to look up; never a 500.
    let long_name = "n".repeat(300);
    for bad in [long_name.as_str(), "a/b", "..", ".hidden", "x$1", ""] {
        let answer = s.call("POST", "/v1/namespaces", Some(json!({"namespace": [bad]})));
        assert_eq!(kind(&answer).0, 400, "{bad:?}: {answer:?}");
        if !bad.is_empty() && !bad.contains('/') {
            assert_eq!(s.call("GET", &format!("/v1/namespaces/{bad}"), None).0, 404, "{bad:?}");
        }
    }
    for bad in [long_name.as_str(), "a/data/x", "x$1", "t.location", "t@1"] {
        let answer = create(&s, bad, json!({}));
        assert!(matches!(kind(&answer).0, 400 | 404), "{bad:?}: {answer:?}");
    }
    s.call("POST", "/v1/namespaces", Some(json!({"namespace": ["ns"]})));
    for bad in [long_name.as_str(), "a/data/x", "x$1", "t.location"] {
        let answer = create(&s, bad, json!({}));
        assert_eq!(kind(&answer).0, 400, "{bad:?}: {answer:?}");
    }
    // A name with a dot works as one name.
    assert_eq!(create(&s, "a.b.c", json!({})).0, 200);
    assert_eq!(s.call("GET", "/v1/namespaces/ns/tables/a.b.c", None).0, 200);
}

#[test]
fn schema_and_spec_updates_are_checked_and_kept() {
    let s = serve(|_, _| {});
    s.call("POST", "/v1/namespaces", Some(json!({"namespace": ["ns"]})));
    assert_eq!(create(&s, "t", json!({})).0, 200);
    let refused = |updates: Value, says: &str| {
        let answer = commit(&s, "t", updates.clone());
        let (code, typ, message) = kind(&answer);
        assert_eq!(
            (code, typ.as_str()),
            (400, "BadRequestException"),
            "{updates}: {answer:?}"
        );
        assert!(message.contains(says), "{updates}: {message}");
    };
    // Duplicate names, at the top and inside a struct.
    refused(
        json!([{"action": "add-schema", "schema": schema(json!([long(1, "id"), long(2, "v"), long(3, "id")]))}]),
        "two fields are named",
    );
    let nested = json!({"id": 3, "name": "s", "required": false, "type": {"type": "struct", "fields": [long(4, "a"), long(5, "A")]}});
    refused(
        json!([{"action": "add-schema", "schema": schema(json!([long(1, "id"), long(2, "v"), nested]))}]),
        "two fields are named",
    );
    // An id the table used for another type.
    refused(
        json!([{"action": "add-schema", "schema": schema(json!([long(1, "id"), {"id": 2, "name": "v", "required": false, "type": "string"}]))}]),
        "field id 2",
    );
    // Identifier fields that are not required primitive columns of the schema.
    refused(
        json!([{"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "identifier-field-ids": [9], "fields": [long(1, "id"), long(2, "v")]}}]),
        "identifier field id 9",
    );
    // Invalid specs.
    refused(
        json!([{"action": "add-spec", "spec": {"spec-id": 1, "fields": [{"source-id": 1, "field-id": 1000, "transform": "bucket[0]", "name": "b"}]}}]),
        "bucket",
    );
    refused(
        json!([{"action": "add-spec", "spec": {"spec-id": 1, "fields": [{"source-id": 9, "field-id": 1000, "transform": "identity", "name": "x"}]}}]),
        "source-id 9",
    );
    // Added without being made current: kept (Iceberg keeps unused schemas and specs).
    let answer = commit(
        &s,
        "t",
        json!([
            {"action": "add-schema", "schema": schema(json!([long(1, "id"), long(2, "v"), long(3, "w")])), "last-column-id": 3},
            {"action": "add-spec", "spec": {"spec-id": 1, "fields": [{"source-id": 1, "field-id": 1000, "transform": "bucket[4]", "name": "id_b"}]}}
        ]),
    );
    assert_eq!(answer.0, 200, "{answer:?}");
    let md = &answer.1["metadata"];
    assert_eq!(md["schemas"].as_array().unwrap().len(), 2, "{md}");
    assert_eq!(md["partition-specs"].as_array().unwrap().len(), 2, "{md}");
    assert_eq!(
        (md["current-schema-id"].clone(), md["default-spec-id"].clone()),
        (json!(0), json!(0))
    );
    // `last-column-id` is the new highest id (as Java sends it), not a floor for new columns.
    let answer = commit(
        &s,
        "t",
        json!([
            {"action": "add-schema", "schema": schema(json!([long(1, "id"), long(2, "v"), long(3, "w"), long(4, "x")])), "last-column-id": 4},
            {"action": "set-current-schema", "schema-id": -1}
        ]),
    );
    assert_eq!(answer.0, 200, "{answer:?}");
    assert_eq!(answer.1["metadata"]["last-column-id"], 4);
    // Still loads, and reads.
    assert_eq!(s.call("GET", "/v1/namespaces/ns/tables/t", None).0, 200);
    s.sql("SELECT id, v, w, x FROM ns.t");
}

#[test]
fn format_versions_and_write_modes_follow_the_rules_of_sql() {
    let s = serve(|_, _| {});
    s.call("POST", "/v1/namespaces", Some(json!({"namespace": ["ns"]})));
    let answer = create(&s, "v3", json!({"properties": {"format-version": "3"}}));
    assert_eq!(answer.0, 200, "{answer:?}");
    assert_eq!(answer.1["metadata"]["format-version"], 3);
    assert!(
        answer.1["metadata"]["properties"].get("format-version").is_none(),
        "{answer:?}"
    );
    let mor = json!({"properties": {"write.delete.mode": "merge-on-read"}});
    assert_eq!(create(&s, "mor", mor.clone()).0, 200);
    let answer = commit(
        &s,
        "mor",
        json!([{"action": "upgrade-format-version", "format-version": 3}]),
    );
    // A merge-on-read table may be v3: its deletes are deletion vectors.
    assert_eq!(answer.0, 200, "{answer:?}");
    assert_eq!(answer.1["metadata"]["format-version"], 3);
    let variant = json!({"name": "var", "schema": schema(json!([long(1, "id"), {"id": 2, "name": "doc", "required": false, "type": "variant"}])),
                         "properties": {"write.delete.mode": "merge-on-read"}});
    let answer = s.call("POST", "/v1/namespaces/ns/tables", Some(variant));
    assert_eq!(answer.0, 200, "{answer:?}");
    assert_eq!(answer.1["metadata"]["format-version"], 3);
    // A version that is not 2 or 3 is still refused.
    let answer = commit(
        &s,
        "v3",
        json!([{"action": "upgrade-format-version", "format-version": 4}]),
    );
    assert_eq!(kind(&answer).0, 400, "{answer:?}");
}

#[test]
fn slow_clients_and_many_connections_are_bounded() {
    use std::io::Write;
    let s = serve(|o, _| {
        o.max_connections = 2;
        o.header_deadline = Duration::from_millis(800);
        o.body_deadline = Duration::from_millis(800);
    });
    let address = s.url.trim_start_matches("http://").to_string();
    // A body announced (1 MB, under the limit) and never sent: 408, within the deadline.
    let started = Instant::now();
    let mut slow = std::net::TcpStream::connect(&address).unwrap();
    slow.write_all(
        b"POST /v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n",
    )
    .unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answer = String::new();
    use std::io::Read;
    let mut buf = [0u8; 4096];
    let n = slow.read(&mut buf).unwrap();
    answer.push_str(&String::from_utf8_lossy(&buf[..n]));
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    drop(slow);
    // Two idle connections hold the two slots; a request waits, then is served once the
    // server cut them off for sending nothing.
    let idle: Vec<_> = (0..2)
        .map(|_| std::net::TcpStream::connect(&address).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    assert_eq!(s.call("GET", "/v1/config", None).0, 200);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(400) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    drop(idle);
}

/// Every route, with names and bodies a careless or hostile client sends: each answer is a
/// client error (4xx) in the error model, never a 500, and the warehouse is as it was.
#[test]
fn every_route_answers_bad_names_and_bodies_with_client_errors() {
    let s = serve(|_, _| {});
    s.call("POST", "/v1/namespaces", Some(json!({"namespace": ["ns"]})));
    assert_eq!(create(&s, "t", json!({})).0, 200);
    let before = files_under(&s.warehouse);
    let long = "n".repeat(300);
    let names = [
        long.as_str(),
        "..",
        "%2e%2e",
        "a%2Fb",
        "nope",
        "%00",
        "ns%1Fx",
        "t.location",
    ];
    let mut routes: Vec<(&str, String)> = Vec::new();
    for n in names {
        routes.push(("GET", format!("/v1/namespaces/{n}")));
        routes.push(("HEAD", format!("/v1/namespaces/{n}")));
        routes.push(("DELETE", format!("/v1/namespaces/{n}")));
        routes.push(("POST", format!("/v1/namespaces/{n}/properties")));
        routes.push(("GET", format!("/v1/namespaces/{n}/tables")));
        routes.push(("POST", format!("/v1/namespaces/{n}/tables")));
        routes.push(("POST", format!("/v1/namespaces/{n}/register")));
        for table in [n, "t"] {
            routes.push(("GET", format!("/v1/namespaces/{n}/tables/{table}")));
            routes.push(("GET", format!("/v1/namespaces/ns/tables/{table}")));
            routes.push(("POST", format!("/v1/namespaces/ns/tables/{table}")));
            routes.push(("DELETE", format!("/v1/namespaces/{n}/tables/{table}")));
            routes.push(("POST", format!("/v1/namespaces/ns/tables/{table}/metrics")));
        }
    }
    routes.push(("POST", "/v1/namespaces".to_string()));
    routes.push(("POST", "/v1/tables/rename".to_string()));
    routes.push(("POST", "/v1/transactions/commit".to_string()));
    routes.push(("GET", "/v1/nothing/here".to_string()));
    let deep = json!({"namespace": ["ns"], "properties": {"k": "v"}, "x": (0..200).fold(json!(1), |v, _| json!([v]))});
    let bodies: Vec<Option<Value>> = vec![
        None,
        Some(Value::String("{not json".into())),
        Some(json!([])),
        Some(json!({"namespace": 5, "name": 7})),
        Some(json!({"name": "..", "schema": {"type": "struct", "fields": "x"}})),
        Some(json!({"requirements": "all", "updates": [{"action": "no-such-action"}]})),
        Some(
            json!({"source": {"namespace": ["ns"], "name": "t"}, "destination": {"namespace": [".."], "name": "../x"}}),
        ),
        Some(json!({"name": "r", "metadata-location": "/etc/passwd"})),
        Some(
            json!({"table-changes": [{"identifier": {"namespace": ["ns"], "name": "t"}, "requirements": [], "updates": "x"}]}),
        ),
        Some(deep),
    ];
    let mut server_errors = Vec::new();
    for (method, path) in &routes {
        for body in &bodies {
            let raw = match body {
                Some(Value::String(text)) => Some(text.clone()),
                Some(v) => Some(v.to_string()),
                None => None,
            };
            let url = format!("{}{path}", s.url);
            let method_value = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            let (status, text) = s.runtime.block_on(async move {
                let mut request = reqwest::Client::new().request(method_value, url);
                if let Some(raw) = raw {
                    request = request.header("Content-Type", "application/json").body(raw);
                }
                let response = request.send().await.unwrap();
                (response.status().as_u16(), response.text().await.unwrap())
            });
            let what = format!("{method} {path} with {body:?}: {status} {text}");
            if status >= 500 {
                server_errors.push(what);
                continue;
            }
            if status >= 400 && *method != "HEAD" && status != 405 {
                let parsed: Value =
                    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: not the error model ({e})"));
                assert_eq!(parsed["error"]["code"], json!(status), "{what}");
                assert!(
                    parsed["error"]["type"].is_string() && parsed["error"]["message"].is_string(),
                    "{what}"
                );
            }
        }
    }
    assert!(
        server_errors.is_empty(),
        "{} answers were 5xx:\n{}",
        server_errors.len(),
        server_errors.join("\n")
    );
    assert_eq!(files_under(&s.warehouse), before, "a bad request changed the warehouse");
}
