//! Our tables are Iceberg tables: engines nobody here wrote read them.
//!
//! Each test writes a table with our CLI (a separate process, as a user would), then reads it
//! with pyiceberg 0.12 (`StaticTable.from_metadata`) and DuckDB 1.4.4 (`iceberg_scan`) through
//! `tests/interop/iceberg_read.py`, and compares with our own answer: the same rows (rendered
//! from their Arrow types by the same rules on both sides, see the script's doc), pyiceberg's
//! `plan_files()` against our `EXPLAIN FILES` for the same predicate, time travel by snapshot
//! id against `"t@<id>"`. The latest `metadata/v<N>.metadata.json` is read, and the table
//! directory (through `metadata/version-hint.text`) too.
//!
//! The readers live in a Python environment (`.ci/requirements-iceberg.txt`, installed by
//! `.ci/run`): `HP_ICEBERG_PYTHON` names its interpreter. Without it these tests say loudly
//! that they were skipped; with `HP_ICEBERG_REQUIRED=1` (CI) they fail instead.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use hidden_partitions::slt::{S3Server, skipped_without_s3};

mod common;
use common::readers::{python, read_batch, render_batch, runtime, script, sorted, text};
use serde_json::{Value, json};

// --- the readers ----------------------------------------------------------------------------

/// One read by one engine, as `iceberg_read.py --batch` takes it.
#[derive(Clone, Debug)]
struct Read {
    engine: &'static str,
    metadata: String,
    filter: Option<String>,
    sql_where: Option<String>,
    snapshot_id: Option<i64>,
    plan_files: bool,
}

impl Read {
    fn new(engine: &'static str, metadata: &str) -> Self {
        Self {
            engine,
            metadata: metadata.to_string(),
            filter: None,
            sql_where: None,
            snapshot_id: None,
            plan_files: false,
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "engine": self.engine,
            "metadata": self.metadata,
            "filter": self.filter,
            "sql_where": self.sql_where,
            "snapshot_id": self.snapshot_id,
            "plan_files": self.plan_files,
        })
    }
}

/// Runs all reads in one python process; one result per read: `{"rows", "files"?}` or `{"error"}`.
fn read_all(python: &Path, reads: &[Read]) -> Vec<Value> {
    read_batch(python, &reads.iter().map(Read::to_json).collect::<Vec<_>>())
}

// --- our side --------------------------------------------------------------------------------

/// A warehouse (local directory or S3 prefix) and the CLI arguments that reach it.
struct Warehouse {
    url: String,
    args: Vec<String>,
    /// statements run first in every session (`CREATE EXTERNAL TABLE` of a foreign table)
    prelude: String,
    /// foreign tables registered by the prelude: name → table directory
    foreign: BTreeMap<String, String>,
    _dir: Option<tempfile::TempDir>,
}

impl Warehouse {
    fn local() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self {
            url: dir.path().join("wh").to_string_lossy().to_string(),
            args: Vec::new(),
            prelude: String::new(),
            foreign: BTreeMap::new(),
            _dir: Some(dir),
        }
    }

    /// Every session of this warehouse also sees the Iceberg table at `dir` as `name`.
    fn with_foreign(mut self, name: &str, dir: &str) -> Self {
        let location = dir.strip_prefix("file://").unwrap_or(dir);
        self.prelude +=
            &format!("CREATE EXTERNAL TABLE IF NOT EXISTS {name} STORED AS ICEBERG LOCATION '{location}'; ");
        self.foreign.insert(name.to_string(), dir.to_string());
        self
    }

    fn s3(server: &S3Server, name: &str) -> Self {
        Self {
            url: server.prefix(name),
            args: server.cli_args(),
            prelude: String::new(),
            foreign: BTreeMap::new(),
            _dir: None,
        }
    }

    fn is_s3(&self) -> bool {
        self.url.starts_with("s3://")
    }

    /// The table's directory as the readers name it.
    fn table_dir(&self, table: &str) -> String {
        match self.foreign.get(table) {
            Some(dir) => dir.clone(),
            None => format!("{}/{table}", self.url),
        }
    }

    /// Runs statements with our CLI (`-c`, one process); panics with stderr on failure.
    fn sql(&self, sql: &str) -> String {
        let o = self.cli(sql);
        assert!(o.status.success(), "our CLI failed on {sql:?}: {}", text(&o.stderr));
        text(&o.stdout)
    }

    fn cli(&self, sql: &str) -> Output {
        Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
            .arg("--warehouse")
            .arg(&self.url)
            .args(&self.args)
            .args(["--format", "json", "-c", &format!("{}{sql}", self.prelude)])
            .output()
            .expect("our CLI runs")
    }

    /// Our rows for one query, rendered like `iceberg_read.py` renders theirs.
    fn rows(&self, sql: &str) -> Vec<Value> {
        self.rows_of_each(&[sql.to_string()]).pop().unwrap()
    }

    /// Our rows for each of `queries`, run in one session.
    fn rows_of_each(&self, queries: &[String]) -> Vec<Vec<Value>> {
        let prelude = self.prelude.clone();
        let queries = queries.to_vec();
        let url = self.url.clone();
        let s3 = self.is_s3();
        let each = runtime().block_on(async move {
            let options = if s3 {
                S3Server::from_env()
                    .unwrap()
                    .expect("an S3 warehouse needs the S3 server")
                    .options()
            } else {
                hidden_partitions::StorageOptions::new()
            };
            let ctx = hidden_partitions::session_with(hidden_partitions::Warehouse::open(&url, options).unwrap())
                .await
                .unwrap();
            let mut each = Vec::new();
            for sql in queries {
                let sql = format!("{prelude}{sql}");
                let mut results = hidden_partitions::execute_sql(&ctx, &sql)
                    .await
                    .unwrap_or_else(|e| panic!("our query {sql:?} failed: {e}"));
                each.push(results.pop().unwrap().batches);
            }
            each
        });
        each.iter()
            .map(|batches| sorted(batches.iter().flat_map(render_batch).collect()))
            .collect()
    }

    /// One JSON value of our CLI's output (the last statement's array).
    fn json(&self, sql: &str) -> Vec<Value> {
        let out = self.sql(sql);
        let last = out.lines().last().unwrap_or("[]");
        serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {out}"))
    }

    /// Our snapshot ids, oldest first.
    fn snapshot_ids(&self, table: &str) -> Vec<i64> {
        self.json(&format!(
            "SELECT snapshot_id FROM \"{table}$snapshots\" ORDER BY sequence_number"
        ))
        .iter()
        .map(|r| r["snapshot_id"].as_i64().unwrap())
        .collect()
    }

    /// `EXPLAIN FILES` of a query: selected file count per spec id.
    fn explain_files(&self, query: &str) -> BTreeMap<i64, u64> {
        let mut counts = BTreeMap::new();
        for row in self.json(&format!("EXPLAIN FILES {query}")) {
            let selected = row["files"].as_str().unwrap().split('/').next().unwrap();
            *counts.entry(row["spec_id"].as_i64().unwrap()).or_default() += selected.parse::<u64>().unwrap();
        }
        counts.retain(|_, n| *n > 0);
        counts
    }

    /// Our live data files: path relative to the table directory → spec id.
    fn files(&self, table: &str) -> BTreeMap<String, i64> {
        let dir = self.table_dir(table);
        self.json(&format!("SELECT path, spec_id FROM \"{table}$files\""))
            .iter()
            .map(|r| {
                // Our paths are stored URI-encoded; Iceberg's name the file as it is.
                let path = hidden_partitions::values::uri::decode(r["path"].as_str().unwrap()).unwrap();
                let relative = relative_path(&path, &dir).unwrap_or_else(|| path.to_string());
                (relative, r["spec_id"].as_i64().unwrap())
            })
            .collect()
    }

    /// The `v<N>.metadata.json` files left in a local table's metadata directory.
    fn metadata_versions(&self, table: &str) -> Vec<String> {
        let dir = format!("{}/metadata", self.table_dir(table));
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        entries
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n.starts_with('v') && n.ends_with(".metadata.json"))
            .map(|n| format!("{dir}/{n}"))
            .collect()
    }

    /// The latest `metadata/v<N>.metadata.json` of a table, as a path or URL.
    fn latest_metadata(&self, table: &str) -> String {
        let dir = self.table_dir(table);
        if self.foreign.contains_key(table) {
            return newest_metadata_file(&dir);
        }
        let names = if self.is_s3() {
            list_s3(&format!("{dir}/metadata/"))
        } else {
            std::fs::read_dir(format!("{dir}/metadata"))
                .unwrap_or_else(|e| panic!("{dir}/metadata: {e}"))
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .collect()
        };
        let latest = names
            .iter()
            .filter_map(|n| n.strip_prefix('v')?.strip_suffix(".metadata.json")?.parse::<u64>().ok())
            .max()
            .unwrap_or_else(|| panic!("no v<N>.metadata.json in {dir}/metadata: {names:?}"));
        format!("{dir}/metadata/v{latest}.metadata.json")
    }
}

/// File names directly under an `s3://bucket/prefix/` of the test server.
fn list_s3(url: &str) -> Vec<String> {
    use futures::TryStreamExt;
    use object_store::ObjectStore;
    let server = S3Server::from_env().unwrap().unwrap();
    let rest = url.strip_prefix("s3://").unwrap();
    let (bucket, prefix) = rest.split_once('/').unwrap();
    let store = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(&server.endpoint)
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_bucket_name(bucket)
        .with_access_key_id("hp-test-key")
        .with_secret_access_key("hp-test-secret")
        .build()
        .unwrap();
    let prefix = object_store::path::Path::from(prefix.trim_end_matches('/'));
    runtime().block_on(async move {
        let listed: Vec<_> = store.list(Some(&prefix)).try_collect().await.unwrap();
        listed
            .into_iter()
            .filter_map(|m| m.location.filename().map(str::to_string))
            .collect()
    })
}

// --- comparing -------------------------------------------------------------------------------

/// One question asked of every engine: our SQL and the same predicate in each reader's syntax.
#[derive(Clone, Copy)]
struct Query<'a> {
    /// our WHERE clause (`None`: all rows)
    ours: Option<&'a str>,
    /// pyiceberg row_filter
    pyiceberg: Option<&'a str>,
    /// DuckDB WHERE clause
    duckdb: Option<&'a str>,
    /// also compare pyiceberg's plan_files with our EXPLAIN FILES
    files: bool,
    /// DuckDB is known to answer this one wrongly (on its own tables too)
    duckdb_wrong: bool,
}

const ALL: Query<'static> = Query {
    ours: None,
    pyiceberg: None,
    duckdb: None,
    files: false,
    duckdb_wrong: false,
};

/// A predicate written the same in all three dialects.
fn same(predicate: &str) -> Query<'_> {
    Query {
        ours: Some(predicate),
        pyiceberg: Some(predicate),
        duckdb: Some(predicate),
        files: true,
        duckdb_wrong: false,
    }
}

/// `column op TIMESTAMP 'value'` in the three dialects (pyiceberg takes ISO text).
fn at(column: &str, op: &str, value: &str) -> Query<'static> {
    let text = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let sql = text(format!("{column} {op} TIMESTAMP '{value}'"));
    Query {
        ours: Some(sql),
        pyiceberg: Some(text(format!("{column} {op} '{}'", value.replace(' ', "T")))),
        duckdb: Some(sql),
        files: true,
        duckdb_wrong: false,
    }
}

/// `same`, checked with pyiceberg only: DuckDB 1.4.4 gets some wrong (`IS NULL` on a
/// column added after some files were written returns no rows from those files, on tables
/// pyiceberg wrote as well) and reads no table with an Iceberg v3 type.
fn pyiceberg_only(predicate: &str) -> Query<'_> {
    Query {
        duckdb_wrong: true,
        ..same(predicate)
    }
}

/// Both engines read `table` (its latest metadata file; DuckDB also the table directory
/// through `version-hint.text`) and answer each query as we do.
fn assert_same(python: &Path, wh: &Warehouse, table: &str, step: &str, queries: &[Query]) {
    let differences = differences(python, wh, table, step, queries, true);
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
}

/// Where the engines' answers to `queries` on `table` differ from ours, each said in full;
/// with `by_directory` each engine also reads the table by its directory.
fn differences(
    python: &Path,
    wh: &Warehouse,
    table: &str,
    step: &str,
    queries: &[Query],
    by_directory: bool,
) -> Vec<String> {
    let latest = wh.latest_metadata(table);
    let dir = wh.table_dir(table);
    let mut reads = Vec::new();
    let mut expected = Vec::new();
    let sqls: Vec<String> = queries
        .iter()
        .map(|q| match q.ours {
            Some(w) => format!("SELECT * FROM \"{table}\" WHERE {w}"),
            None => format!("SELECT * FROM \"{table}\""),
        })
        .collect();
    let all_ours = wh.rows_of_each(&sqls);
    for ((q, sql), ours) in queries.iter().zip(sqls).zip(all_ours) {
        let mut py = Read::new("pyiceberg", &latest);
        py.filter = q.pyiceberg.map(str::to_string);
        py.plan_files = q.files;
        let mut duck = Read::new("duckdb", &latest);
        duck.sql_where = q.duckdb.map(str::to_string);
        let mut duck_dir = Read::new("duckdb", &dir);
        duck_dir.sql_where = duck.sql_where.clone();
        let mut py_dir = Read::new("pyiceberg", &dir);
        py_dir.filter = py.filter.clone();
        let mut engines = vec![py];
        if !q.duckdb_wrong {
            engines.push(duck);
        }
        if by_directory {
            engines.push(py_dir);
            if !q.duckdb_wrong {
                engines.push(duck_dir);
            }
        }
        for r in engines {
            reads.push(r);
            expected.push((sql.clone(), ours.clone()));
        }
    }
    let results = read_all(python, &reads);
    let ours_files = wh.files(table);
    let mut differences = Vec::new();
    for ((read, result), (sql, ours)) in reads.iter().zip(&results).zip(&expected) {
        let what = format!("{step}: {} reading {} for {sql}", read.engine, read.metadata);
        if let Some(e) = result.get("error") {
            differences.push(format!("{what}: the reader failed: {e}"));
            continue;
        }
        let theirs = sorted(result["rows"].as_array().unwrap().clone());
        if &theirs != ours {
            differences.push(format!(
                "{what}: rows differ ({} theirs, {} ours)\n theirs: {}\n ours:   {}",
                theirs.len(),
                ours.len(),
                Value::Array(theirs.clone()),
                Value::Array(ours.clone())
            ));
            continue;
        }
        if let Some(files) = result.get("files") {
            assert_same_files(wh, table, &what, files, &ours_files, sql);
        }
    }
    differences
}

/// pyiceberg's planned files are ours, and as many per spec as our `EXPLAIN FILES` selects.
fn assert_same_files(wh: &Warehouse, table: &str, what: &str, files: &Value, ours: &BTreeMap<String, i64>, sql: &str) {
    let dir = wh.table_dir(table);
    let mut per_spec: BTreeMap<i64, u64> = BTreeMap::new();
    for f in files.as_array().unwrap() {
        let path = f.as_str().unwrap();
        let relative = relative_path(path, &dir)
            .unwrap_or_else(|| panic!("{what}: pyiceberg planned {path}, outside the table {dir}"));
        let spec = ours
            .get(&relative)
            .unwrap_or_else(|| panic!("{what}: pyiceberg planned {relative}, not a live file of ours: {ours:?}"));
        *per_spec.entry(*spec).or_default() += 1;
    }
    assert_eq!(
        per_spec,
        wh.explain_files(sql),
        "{what}: pyiceberg's plan_files (per spec) differs from our EXPLAIN FILES"
    );
}

/// `path` relative to the table directory `dir` (either may be a `file://` URL).
fn relative_path(path: &str, dir: &str) -> Option<String> {
    let strip = |p: &str| p.strip_prefix("file://").unwrap_or(p).to_string();
    let (path, dir) = (strip(path), strip(dir));
    path.strip_prefix(&format!("{}/", dir.trim_end_matches('/')))
        .map(str::to_string)
}

/// pyiceberg and DuckDB read each snapshot by id as we read `"t@<id>"`.
fn assert_time_travel(python: &Path, wh: &Warehouse, table: &str, snapshots: &[i64]) {
    assert_time_travel_with(python, wh, table, snapshots, &["pyiceberg", "duckdb"]);
}

/// `engines` read each snapshot by id as we read `"t@<id>"`.
fn assert_time_travel_with(python: &Path, wh: &Warehouse, table: &str, snapshots: &[i64], engines: &[&'static str]) {
    let latest = wh.latest_metadata(table);
    let mut reads = Vec::new();
    for id in snapshots {
        for engine in engines {
            let mut r = Read::new(engine, &latest);
            r.snapshot_id = Some(*id);
            reads.push(r);
        }
    }
    let results = read_all(python, &reads);
    for (read, result) in reads.iter().zip(&results) {
        let id = read.snapshot_id.unwrap();
        let ours = wh.rows(&format!("SELECT * FROM \"{table}@{id}\""));
        let what = format!("{} at snapshot {id} of {}", read.engine, read.metadata);
        if let Some(e) = result.get("error") {
            panic!("{what}: the reader failed: {e}");
        }
        let theirs = sorted(result["rows"].as_array().unwrap().clone());
        assert_eq!(theirs, ours, "{what}: rows differ");
    }
}

/// Both engines refuse to read `location` (each read must fail).
fn assert_unreadable(python: &Path, locations: &[String], why: &str) {
    let reads: Vec<Read> = locations
        .iter()
        .flat_map(|l| [Read::new("pyiceberg", l), Read::new("duckdb", l)])
        .collect();
    for (read, result) in reads.iter().zip(read_all(python, &reads)) {
        assert!(
            result.get("error").is_some(),
            "{why}: {} still reads {}: {result}",
            read.engine,
            read.metadata
        );
    }
}

// --- the scenarios ---------------------------------------------------------------------------

/// The harness itself, on a table pyiceberg wrote (day(ts), bucket(16, id)): both readers
/// return pyiceberg's rows, and so do we (`STORED AS ICEBERG`), at every snapshot.
#[test]
fn a_pyiceberg_table_reads_the_same_in_both_engines_and_ours() {
    let Some(python) = python("a_pyiceberg_table_reads_the_same_in_both_engines_and_ours") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = make_pyiceberg_table(&python, &dir.path().join("catalog"), None);
    let metadata = made["metadata"].as_str().unwrap().to_string();
    let expected = sorted(made["rows"].as_array().unwrap().clone());
    assert_eq!(expected.len(), 8);
    let snapshots: Vec<i64> = made["snapshot_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();

    let mut reads = vec![Read::new("pyiceberg", &metadata), Read::new("duckdb", &metadata)];
    let mut r = Read::new("pyiceberg", &metadata);
    r.snapshot_id = Some(snapshots[0]);
    reads.push(r.clone());
    r.engine = "duckdb";
    reads.push(r);
    let results = read_all(&python, &reads);
    for (read, result) in reads.iter().zip(&results) {
        assert!(result.get("error").is_none(), "{read:?}: {result}");
    }
    assert_eq!(sorted(results[0]["rows"].as_array().unwrap().clone()), expected);
    assert_eq!(sorted(results[1]["rows"].as_array().unwrap().clone()), expected);
    assert_eq!(results[2]["rows"].as_array().unwrap().len(), 6);
    assert_eq!(results[2]["rows"], results[3]["rows"]);

    // We read what pyiceberg wrote, now and as of its first snapshot.
    let wh = Warehouse::local();
    let register = format!(
        "CREATE EXTERNAL TABLE IF NOT EXISTS ev STORED AS ICEBERG LOCATION '{}'; ",
        metadata.strip_prefix("file://").unwrap()
    );
    let ours = wh.rows(&format!("{register}SELECT * FROM ev"));
    assert_eq!(ours, expected);
    let ours_old = wh.rows(&format!("{register}SELECT * FROM \"ev@{}\"", snapshots[0]));
    assert_eq!(ours_old, sorted(results[2]["rows"].as_array().unwrap().clone()));

    // The checks our own tables get, on pyiceberg's: rows, plan_files against our EXPLAIN
    // FILES, both engines by directory too (version-hint.text), time travel.
    let foreign = Warehouse::local().with_foreign("ev", made["location"].as_str().unwrap());
    let day3 = at("ts", ">=", "2024-01-03 00:00:00");
    let queries = [ALL, same("id = 3"), day3, same("name IS NULL"), same("id IN (1, 8)")];
    assert_same(&python, &foreign, "ev", "pyiceberg's table", &queries);
    assert_time_travel(&python, &foreign, "ev", &snapshots);

    // Every type we share: both engines and we render pyiceberg's values alike.
    let types = make_pyiceberg(&python, "create-types", "ns.types", &dir.path().join("catalog"), None);
    let metadata = types["metadata"].as_str().unwrap();
    let expected = sorted(types["rows"].as_array().unwrap().clone());
    let reads = [Read::new("pyiceberg", metadata), Read::new("duckdb", metadata)];
    for (read, result) in reads.iter().zip(read_all(&python, &reads)) {
        assert!(result.get("error").is_none(), "{read:?}: {result}");
        assert_eq!(sorted(result["rows"].as_array().unwrap().clone()), expected, "{read:?}");
    }
    let ours = wh.rows(&format!(
        "CREATE EXTERNAL TABLE IF NOT EXISTS types STORED AS ICEBERG LOCATION '{}'; SELECT * FROM types",
        metadata.strip_prefix("file://").unwrap()
    ));
    assert_eq!(
        Value::Array(ours),
        Value::Array(expected),
        "our reading of pyiceberg's types"
    );
}

/// Every type we share with Iceberg v2, nested ones included, reads the same.
#[test]
fn every_type_reads_the_same() {
    let Some(python) = python("every_type_reads_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    // VALUES fixes DataFusion's types; the casts make them the Iceberg v2 ones.
    wh.sql(
        "CREATE TABLE typed PARTITIONED BY (b, day(ts), bucket(4, i), truncate(2, s)) AS SELECT
           b,
           arrow_cast(i, 'Int32') AS i,
           arrow_cast(l, 'Int64') AS l,
           arrow_cast(f, 'Float32') AS f,
           arrow_cast(d, 'Float64') AS d,
           arrow_cast(dec, 'Decimal128(10, 2)') AS dec,
           dt,
           arrow_cast(tm, 'Time64(Microsecond)') AS tm,
           arrow_cast(ts, 'Timestamp(Microsecond, None)') AS ts,
           arrow_cast(tz, 'Timestamp(Microsecond, Some(\"UTC\"))') AS tz,
           s,
           bin,
           CASE WHEN sa IS NULL AND sb IS NULL THEN NULL ELSE named_struct('a', sa, 'b', sb) END AS st,
           arrow_cast(li, 'List(Int64)') AS li,
           CASE WHEN mk IS NULL THEN NULL ELSE map([mk, 'k2'], [1, 2]) END AS m
         FROM (VALUES
           (true, 1, 10, 1.5, 2.25, 10.50, DATE '2024-01-01', TIME '10:00:00.123456',
            TIMESTAMP '2024-01-01 10:00:00.000001', TIMESTAMP '2024-01-01 10:00:00', 'x\"y', X'00ff',
            1, 'q', [1, 2], 'k1'),
           (false, -7, -9000000000, -0.25, 1e10, -0.01, DATE '1969-12-31', TIME '23:59:59',
            TIMESTAMP '1969-12-31 23:59:59.999999', TIMESTAMP '1970-01-01 00:00:00', '日本語', X'',
            NULL, NULL, [], NULL),
           (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
         ) AS v(b, i, l, f, d, dec, dt, tm, ts, tz, s, bin, sa, sb, li, mk)",
    );
    assert_same(
        &python,
        &wh,
        "typed",
        "CTAS of every type",
        &[
            ALL,
            same("i = 1"),
            at("ts", ">=", "2024-01-01 00:00:00"),
            same("s = '日本語'"),
        ],
    );
    // Declared TIME and TIMESTAMP columns are Iceberg's microsecond types (digits below a
    // microsecond are cut on the way in, as every Iceberg engine does).
    wh.sql(
        "CREATE TABLE declared (tm TIME, ts TIMESTAMP) PARTITIONED BY (hour(ts));
         INSERT INTO declared VALUES (TIME '10:00:00.123456789', TIMESTAMP '2024-01-01 10:00:00.123456789'), (NULL, NULL)",
    );
    assert_eq!(
        wh.rows("SELECT * FROM declared WHERE tm IS NOT NULL"),
        vec![json!({"tm": "10:00:00.123456000", "ts": "2024-01-01T10:00:00.123456000"})]
    );
    assert_same(
        &python,
        &wh,
        "declared",
        "declared TIME and TIMESTAMP",
        &[ALL, same("tm IS NULL")],
    );
}

/// All rows, read by pyiceberg only (DuckDB 1.4.4 has no Iceberg v3 types).
const ALL_PYICEBERG: Query<'static> = Query {
    duckdb_wrong: true,
    ..ALL
};

/// An Avro record's field (optional fields unwrapped), `Null` when absent.
fn avro_field<'a>(record: &'a apache_avro::types::Value, name: &str) -> &'a apache_avro::types::Value {
    use apache_avro::types::Value as V;
    static NULL: V = V::Null;
    let V::Record(fields) = record else {
        panic!("not an Avro record: {record:?}")
    };
    match fields.iter().find(|(n, _)| n == name).map(|(_, v)| v) {
        Some(V::Union(_, inner)) => inner,
        Some(v) => v,
        None => &NULL,
    }
}

fn avro_long(v: &apache_avro::types::Value) -> Option<i64> {
    use apache_avro::types::Value as V;
    match v {
        V::Long(n) => Some(*n),
        V::Int(n) => Some(i64::from(*n)),
        V::Null => None,
        other => panic!("not a long: {other:?}"),
    }
}

fn avro_records(path: &str) -> Vec<apache_avro::types::Value> {
    let bytes = std::fs::read(path.strip_prefix("file://").unwrap_or(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    apache_avro::Reader::new(&bytes[..])
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// Iceberg v3 row lineage of the current snapshot, as a reader derives it from the Avro
/// manifest list and manifests (`first_row_id` inheritance): data file → (first row id, rows).
/// Checks that every live file has row ids, that no two files share one, and that all lie
/// below the table's `next-row-id`.
fn row_lineage(metadata_file: &str) -> BTreeMap<String, (i64, i64)> {
    let md: Value = serde_json::from_slice(&std::fs::read(metadata_file).unwrap()).unwrap();
    assert_eq!(md["format-version"], 3, "{metadata_file}");
    let next_row_id = md["next-row-id"].as_i64().expect("a v3 table has next-row-id");
    let current = md["current-snapshot-id"].as_i64().unwrap();
    let snapshot = md["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["snapshot-id"] == current)
        .unwrap();
    let first = snapshot["first-row-id"]
        .as_i64()
        .expect("a v3 snapshot has first-row-id");
    let added = snapshot["added-rows"].as_i64().expect("a v3 snapshot has added-rows");
    assert!(
        first + added <= next_row_id,
        "snapshot rows {first}+{added} beyond next-row-id {next_row_id}"
    );
    let mut files = BTreeMap::new();
    for m in avro_records(snapshot["manifest-list"].as_str().unwrap()) {
        let path = avro_field(&m, "manifest_path").clone();
        let apache_avro::types::Value::String(path) = path else {
            panic!("manifest_path: {path:?}")
        };
        let mut next = avro_long(avro_field(&m, "first_row_id"))
            .unwrap_or_else(|| panic!("manifest {path} has no first_row_id in a v3 list"));
        for e in avro_records(&path) {
            if avro_long(avro_field(&e, "status")) == Some(2) {
                continue;
            }
            let f = avro_field(&e, "data_file");
            let apache_avro::types::Value::String(file) = avro_field(f, "file_path").clone() else {
                panic!()
            };
            let rows = avro_long(avro_field(f, "record_count")).unwrap();
            let id = match avro_long(avro_field(f, "first_row_id")) {
                Some(id) => id,
                None => {
                    next += rows;
                    next - rows
                }
            };
            files.insert(file, (id, rows));
        }
    }
    let mut ranges: Vec<(i64, i64)> = files.values().copied().collect();
    ranges.sort();
    for pair in ranges.windows(2) {
        assert!(pair[0].0 + pair[0].1 <= pair[1].0, "row id ranges overlap: {ranges:?}");
    }
    if let Some((id, rows)) = ranges.last() {
        assert!(
            id + rows <= next_row_id,
            "row ids {id}+{rows} reach past next-row-id {next_row_id}"
        );
    }
    files
}

/// Files in both `before` and `after` (row lineage of two snapshots) have the same row ids.
fn assert_kept_row_ids(step: &str, before: &BTreeMap<String, (i64, i64)>, after: &BTreeMap<String, (i64, i64)>) {
    for (file, ids) in after {
        if let Some(old) = before.get(file) {
            assert_eq!(ids, old, "{step}: {file} kept its rows but not its row ids");
        }
    }
}

/// Nanosecond timestamps make an Iceberg v3 table with row lineage; pyiceberg reads it as we
/// do after every statement, files a statement did not rewrite keep their row ids, and our
/// own Iceberg reader reads the Avro side back. DuckDB 1.4.4 and pyiceberg 0.12 know no
/// VARIANT, and DuckDB no nanosecond timestamp: those reads fail with the type named.
#[test]
fn iceberg_v3_tables_read_the_same() {
    let Some(python) = python("iceberg_v3_tables_read_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    let check = |step: &str| {
        assert_same(
            &python,
            &wh,
            "n",
            step,
            &[ALL_PYICEBERG, pyiceberg_only("cat = 'a'"), pyiceberg_only("id >= 3")],
        )
    };
    wh.sql(
        "CREATE TABLE n (id BIGINT, ts TIMESTAMP(9), tz TIMESTAMP(9) WITH TIME ZONE, cat VARCHAR)
           PARTITIONED BY (hour(ts), cat);
         INSERT INTO n VALUES
           (1, TIMESTAMP '2026-01-01 10:00:00.123456789', TIMESTAMP '2026-01-01 10:00:00.000000001Z', 'a'),
           (2, TIMESTAMP '2026-01-01 10:30:00', NULL, 'b'),
           (3, NULL, TIMESTAMP '1969-12-31 23:59:59.999999999Z', 'a'),
           (4, TIMESTAMP '2026-01-01 11:00:00.5', NULL, 'a'),
           (6, TIMESTAMP '2026-01-01 10:05:00', NULL, 'a')",
    );
    check("INSERT");
    let lineage = |step: &str, before: &BTreeMap<String, (i64, i64)>| {
        let after = row_lineage(&wh.latest_metadata("n"));
        assert_kept_row_ids(step, before, &after);
        after
    };
    let mut ids = lineage("INSERT", &BTreeMap::new());
    assert_eq!(ids.values().map(|(_, n)| n).sum::<i64>(), 5);
    let steps = [
        (
            "INSERT",
            "INSERT INTO n VALUES (5, TIMESTAMP '2026-01-02 00:00:00', NULL, 'c')",
        ),
        ("DELETE (whole file)", "DELETE FROM n WHERE id = 2"),
        ("DELETE (rewritten file)", "DELETE FROM n WHERE id = 6"),
        ("UPDATE", "UPDATE n SET cat = 'b' WHERE id = 4"),
        (
            "MERGE",
            "MERGE INTO n USING (VALUES (1, 'c'), (7, 'a')) s(id, cat) ON n.id = s.id
               WHEN MATCHED THEN UPDATE SET cat = s.cat
               WHEN NOT MATCHED THEN INSERT (id, cat) VALUES (s.id, s.cat)",
        ),
        ("optimize", "ALTER TABLE n EXECUTE optimize"),
    ];
    for (step, sql) in steps {
        wh.sql(sql);
        check(step);
        ids = lineage(step, &ids);
    }
    assert_time_travel_with(&python, &wh, "n", &wh.snapshot_ids("n"), &["pyiceberg"]);
    // Our own Iceberg reader reads the Avro side (v3 manifest lists and manifests).
    let dir = wh.table_dir("n");
    let ours = wh.rows("SELECT * FROM n");
    let foreign = Warehouse::local().with_foreign("f", &dir);
    assert_eq!(foreign.rows("SELECT * FROM f"), ours);

    // A v2 table that gets a v3 type becomes v3: its old snapshot keeps no row ids, the next
    // one assigns them to every file, kept or new.
    wh.sql(
        "CREATE TABLE u (id BIGINT) PARTITIONED BY (bucket(2, id)); INSERT INTO u VALUES (1), (2), (3);
         ALTER TABLE u ADD COLUMN t TIMESTAMP(9)",
    );
    let upgraded: Value = serde_json::from_slice(&std::fs::read(wh.latest_metadata("u")).unwrap()).unwrap();
    assert_eq!(upgraded["format-version"], 3);
    assert!(upgraded["snapshots"][0].get("first-row-id").is_none());
    wh.sql("INSERT INTO u VALUES (4, TIMESTAMP '2026-01-01 00:00:00.000000001')");
    let u = row_lineage(&wh.latest_metadata("u"));
    assert_eq!(u.values().map(|(_, n)| n).sum::<i64>(), 4);
    wh.sql("DELETE FROM u WHERE id = 1");
    assert_kept_row_ids("upgraded table", &u, &row_lineage(&wh.latest_metadata("u")));
    assert_same(
        &python,
        &wh,
        "u",
        "upgraded to v3",
        &[ALL_PYICEBERG, pyiceberg_only("id > 2")],
    );
    assert_time_travel_with(&python, &wh, "u", &wh.snapshot_ids("u"), &["pyiceberg"]);

    wh.sql("CREATE TABLE v (id BIGINT, doc VARIANT); INSERT INTO v VALUES (1, parse_json('{\"a\": 1}')), (2, NULL)");
    let latest = wh.latest_metadata("v");
    row_lineage(&latest);
    let foreign = Warehouse::local().with_foreign("f", &wh.table_dir("v"));
    assert_eq!(
        foreign.json("SELECT id, coalesce(to_json(doc), 'none') AS doc FROM f ORDER BY id"),
        vec![json!({"id": 1, "doc": "{\"a\":1}"}), json!({"id": 2, "doc": "none"})]
    );
    let refusals = read_all(
        &python,
        &[
            Read::new("pyiceberg", &latest),
            Read::new("duckdb", &latest),
            Read::new("duckdb", &wh.latest_metadata("n")),
        ],
    );
    for (result, says) in refusals.iter().zip(["variant", "variant", "timestamp_ns"]) {
        let e = result.get("error").map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains(says),
            "expected a reader to refuse the type {says}: {result}"
        );
    }
}

/// Writes to an Iceberg v3 table of another engine keep its row lineage. pyiceberg 0.12 and
/// DuckDB 1.4.4 cannot write v3 tables, so the table is one of ours made foreign: its latest
/// metadata file keeps only Iceberg's fields (what any v3 writer would have left).
#[test]
fn writes_to_a_foreign_v3_table_keep_row_lineage() {
    let Some(python) = python("writes_to_a_foreign_v3_table_keep_row_lineage") else {
        return;
    };
    let ours = Warehouse::local();
    ours.sql(
        "CREATE TABLE n3 (id BIGINT, ts TIMESTAMP(9), cat VARCHAR) PARTITIONED BY (cat);
         INSERT INTO n3 VALUES (1, TIMESTAMP '2026-01-01 00:00:00.000000001', 'a'), (2, NULL, 'a'), (3, NULL, 'b');
         INSERT INTO n3 VALUES (4, TIMESTAMP '2026-01-02 00:00:00', 'b'), (5, NULL, 'c')",
    );
    let dir = ours.table_dir("n3");
    let latest = ours.latest_metadata("n3");
    let mut md: Value = serde_json::from_slice(&std::fs::read(&latest).unwrap()).unwrap();
    let doc = md.as_object_mut().unwrap();
    for ours_only in ["table-specs", "current-spec-id", "file-prefix", "created-ms"] {
        doc.remove(ours_only);
    }
    for snapshot in doc["snapshots"].as_array_mut().unwrap() {
        let snapshot = snapshot.as_object_mut().unwrap();
        snapshot.remove("manifests");
        snapshot.remove("operation");
        snapshot.remove("table-spec-id");
    }
    std::fs::write(&latest, serde_json::to_vec_pretty(&md).unwrap()).unwrap();
    let wh = Warehouse::local().with_foreign("f", &dir);
    let mut ids = row_lineage(&newest_metadata_file(&dir));
    let steps = [
        (
            "INSERT",
            "INSERT INTO f VALUES (6, TIMESTAMP '2026-01-03 00:00:00', 'a')",
        ),
        ("DELETE (rewritten file)", "DELETE FROM f WHERE id = 2"),
        ("UPDATE", "UPDATE f SET cat = 'c' WHERE id = 4"),
        ("ALTER", "ALTER TABLE f ADD COLUMN v VARIANT"),
        (
            "INSERT after ALTER",
            "INSERT INTO f VALUES (7, NULL, 'd', parse_json('1'))",
        ),
    ];
    for (step, sql) in steps {
        wh.sql(sql);
        let after = row_lineage(&newest_metadata_file(&dir));
        assert_kept_row_ids(step, &ids, &after);
        assert_eq!(
            after.values().map(|(_, n)| n).sum::<i64>(),
            wh.rows("SELECT count(*) AS n FROM f")[0]["n"].as_i64().unwrap(),
            "{step}: every live row has a row id"
        );
        ids = after;
        if !step.contains("ALTER") {
            assert_same(&python, &wh, "f", step, &[ALL_PYICEBERG, pyiceberg_only("id > 3")]);
        }
    }
    assert_eq!(
        wh.json("SELECT id, cat FROM f ORDER BY id"),
        vec![
            json!({"id": 1, "cat": "a"}),
            json!({"id": 3, "cat": "b"}),
            json!({"id": 4, "cat": "c"}),
            json!({"id": 5, "cat": "c"}),
            json!({"id": 6, "cat": "a"}),
            json!({"id": 7, "cat": "d"}),
        ]
    );
}

/// Every transform, one source column each; pyiceberg plans the same files as we do.
#[test]
fn every_transform_prunes_the_same() {
    let Some(python) = python("every_transform_prunes_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    wh.sql(
        "CREATE TABLE tr (id BIGINT, cat VARCHAR, name VARCHAR, n INT, d DATE, ts TIMESTAMP(6), mts TIMESTAMP(6), hts TIMESTAMP(6))
         PARTITIONED BY (cat, year(d), month(mts), day(ts), hour(hts), bucket(4, id), truncate(2, name), truncate(10, n));
         INSERT INTO tr VALUES
           (1, 'a', 'abc', 5, DATE '2023-06-01', TIMESTAMP '2024-01-01 10:00:00', TIMESTAMP '2024-01-15 00:00:00', TIMESTAMP '2024-01-01 01:30:00'),
           (2, 'b', 'abd', 15, DATE '2024-06-01', TIMESTAMP '2024-01-02 10:00:00', TIMESTAMP '2024-02-15 00:00:00', TIMESTAMP '2024-01-01 02:30:00'),
           (3, 'a', 'xyz', 25, DATE '1969-06-01', TIMESTAMP '1969-12-31 23:00:00', TIMESTAMP '1969-12-15 00:00:00', TIMESTAMP '1969-12-31 23:30:00'),
           (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           (5, 'c', 'ab', -5, DATE '2024-12-31', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-03-01 00:00:00', TIMESTAMP '2024-01-01 03:00:00')",
    );
    assert_same(
        &python,
        &wh,
        "tr",
        "insert over every transform",
        &[
            ALL,
            same("cat = 'a'"),
            same("cat IS NULL"),
            Query {
                ours: Some("d >= DATE '2024-01-01'"),
                pyiceberg: Some("d >= '2024-01-01'"),
                duckdb: Some("d >= DATE '2024-01-01'"),
                files: true,
                duckdb_wrong: false,
            },
            at("mts", "<", "2024-02-01 00:00:00"),
            at("ts", ">=", "2024-01-02 00:00:00"),
            at("hts", "=", "2024-01-01 02:30:00"),
            same("id = 3"),
            same("id IN (1, 5)"),
            same("name LIKE 'ab%'"),
            same("n >= 10"),
        ],
    );
}

/// The DML statements, each read back by both engines.
#[test]
fn every_dml_statement_reads_the_same() {
    let Some(python) = python("every_dml_statement_reads_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    let check = |step: &str| {
        assert_same(
            &python,
            &wh,
            "t",
            step,
            &[ALL, same("cat = 'a'"), at("ts", "<", "2024-01-03 00:00:00")],
        )
    };
    wh.sql(
        "CREATE TABLE t (id BIGINT, ts TIMESTAMP(6), cat VARCHAR, n INT, amount DECIMAL(9,2))
         PARTITIONED BY (day(ts), bucket(4, id), cat);
         INSERT INTO t VALUES
           (1, TIMESTAMP '2024-01-01 10:00:00', 'a', 10, 1.25), (2, TIMESTAMP '2024-01-02 10:00:00', 'b', 20, 2.50),
           (3, TIMESTAMP '2024-01-03 10:00:00', 'a', 30, NULL), (4, TIMESTAMP '2024-01-01 11:00:00', 'a', 40, 4.00),
           (5, TIMESTAMP '2024-01-02 12:00:00', 'b', 50, 5.00)",
    );
    check("INSERT");
    wh.sql("DELETE FROM t WHERE cat = 'b' AND ts >= TIMESTAMP '2024-01-02 12:00:00'");
    check("DELETE (whole files)");
    wh.sql("DELETE FROM t WHERE n = 10");
    check("DELETE (rewritten file)");
    wh.sql("UPDATE t SET cat = 'c', n = n + 1 WHERE id = 2");
    check("UPDATE (moves a row to another partition)");
    wh.sql(
        "MERGE INTO t USING (SELECT 3 AS id, 99 AS n UNION ALL SELECT 6, 60) s ON t.id = s.id
         WHEN MATCHED THEN UPDATE SET n = s.n
         WHEN NOT MATCHED THEN INSERT (id, ts, cat, n, amount) VALUES (s.id, TIMESTAMP '2024-01-04 00:00:00', 'd', s.n, 6.00)",
    );
    check("MERGE");
    wh.sql(
        "SET hidden_partitions.partition_overwrite_mode = 'dynamic';
         INSERT OVERWRITE t SELECT 7, TIMESTAMP '2024-01-04 01:00:00', 'd', 70, 7.00",
    );
    check("INSERT OVERWRITE (dynamic)");
    wh.sql("INSERT OVERWRITE t SELECT id + 100, ts, cat, n, amount FROM t WHERE id < 7");
    check("INSERT OVERWRITE (static)");
    wh.sql("TRUNCATE TABLE t");
    check("TRUNCATE");
    assert_time_travel(&python, &wh, "t", &wh.snapshot_ids("t"));
}

/// Merge-on-read DELETE: pyiceberg and DuckDB apply our position delete files.
#[test]
fn merge_on_read_deletes_read_the_same() {
    let Some(python) = python("merge_on_read_deletes_read_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    let check = |step: &str| {
        assert_same(
            &python,
            &wh,
            "t",
            step,
            &[
                ALL,
                same("cat = 'a'"),
                same("n >= 30"),
                at("ts", "<", "2024-01-02 00:00:00"),
            ],
        )
    };
    wh.sql(
        "CREATE TABLE t (id BIGINT, ts TIMESTAMP(6), cat VARCHAR, n INT)
         PARTITIONED BY (day(ts), cat) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read');
         INSERT INTO t VALUES
           (1, TIMESTAMP '2024-01-01 10:00:00', 'a', 10), (2, TIMESTAMP '2024-01-01 11:00:00', 'a', 20),
           (3, TIMESTAMP '2024-01-01 12:00:00', 'a', 30), (4, TIMESTAMP '2024-01-01 13:00:00', 'a', 40),
           (5, TIMESTAMP '2024-01-02 10:00:00', 'b', 50), (6, TIMESTAMP '2024-01-02 11:00:00', 'b', 60),
           (7, TIMESTAMP '2024-01-03 10:00:00', NULL, 70)",
    );
    check("INSERT");
    wh.sql("DELETE FROM t WHERE n = 20 OR n = 60");
    check("DELETE (position deletes in two files)");
    wh.sql("DELETE FROM t WHERE id = 3");
    check("DELETE (a second delete file for one data file)");
    wh.sql("DELETE FROM t WHERE cat = 'b'");
    check("DELETE (a whole partition, with its delete file)");
    wh.sql("UPDATE t SET n = n + 1 WHERE id = 4");
    check("UPDATE (copy-on-write over a file with deletes)");
    wh.sql("INSERT INTO t VALUES (8, TIMESTAMP '2024-01-01 14:00:00', 'a', 80); DELETE FROM t WHERE id = 1");
    check("DELETE after INSERT");
    wh.sql(
        "ALTER TABLE t SET TBLPROPERTIES ('write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read');
         UPDATE t SET n = n * 10 WHERE id = 8",
    );
    check("UPDATE (merge-on-read: a delete file and a new data file)");
    wh.sql(
        "UPDATE t SET ts = TIMESTAMP '2024-01-02 09:00:00', cat = 'b' WHERE id = 4;
         CREATE TABLE src (id BIGINT, ts TIMESTAMP(6), cat VARCHAR, n INT);
         INSERT INTO src VALUES (4, TIMESTAMP '2024-01-02 09:00:00', 'b', 0), (8, TIMESTAMP '2024-01-01 14:00:00', 'a', 1),
           (9, TIMESTAMP '2024-01-03 12:00:00', 'a', 90);
         MERGE INTO t USING src s ON t.id = s.id
         WHEN MATCHED AND s.n = 0 THEN DELETE
         WHEN MATCHED THEN UPDATE SET n = s.n
         WHEN NOT MATCHED THEN INSERT (id, ts, cat, n) VALUES (s.id, s.ts, s.cat, s.n)",
    );
    check("UPDATE of a partition source and MERGE (merge-on-read)");
    wh.sql("ALTER TABLE t EXECUTE optimize");
    check("optimize");
    assert_time_travel(&python, &wh, "t", &wh.snapshot_ids("t"));
}

/// Merge-on-read on a format v3 table: deletion vectors in Puffin files
/// (one per data file, replaced as deletes accumulate), which pyiceberg and
/// DuckDB apply as we do, filtered and at every snapshot (issue 53).
#[test]
fn deletion_vectors_read_the_same() {
    let Some(python) = python("deletion_vectors_read_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    let check = |step: &str| {
        assert_same(
            &python,
            &wh,
            "t",
            step,
            &[ALL, same("cat = 'a'"), same("n >= 30"), same("id >= 3")],
        )
    };
    wh.sql(
        "CREATE TABLE t (id BIGINT, ts TIMESTAMP(6), cat VARCHAR, n INT)
         PARTITIONED BY (day(ts), cat)
         TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read',
                        'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read');
         INSERT INTO t VALUES
           (1, TIMESTAMP '2024-01-01 10:00:00', 'a', 10), (2, TIMESTAMP '2024-01-01 11:00:00', 'a', 20),
           (3, TIMESTAMP '2024-01-01 12:00:00', 'a', 30), (4, TIMESTAMP '2024-01-01 13:00:00', 'a', 40),
           (5, TIMESTAMP '2024-01-02 10:00:00', 'b', 50), (6, TIMESTAMP '2024-01-02 11:00:00', 'b', 60),
           (7, TIMESTAMP '2024-01-03 10:00:00', NULL, 70)",
    );
    check("INSERT");
    wh.sql("DELETE FROM t WHERE n = 20 OR n = 60");
    check("DELETE (vectors for two files, one Puffin file)");
    wh.sql("DELETE FROM t WHERE id = 3");
    check("DELETE (a vector replacing the file's first one)");
    wh.sql("UPDATE t SET n = n * 10 WHERE id = 4");
    check("UPDATE (a vector and a new data file)");
    wh.sql(
        "MERGE INTO t USING (VALUES (1, 0), (9, 90)) s(id, n) ON t.id = s.id
         WHEN MATCHED THEN DELETE
         WHEN NOT MATCHED THEN INSERT (id, ts, cat, n) VALUES (s.id, TIMESTAMP '2024-01-03 12:00:00', 'a', s.n)",
    );
    check("MERGE");
    wh.sql("DELETE FROM t WHERE cat = 'b'");
    check("DELETE (a whole partition, with its vector)");
    wh.sql("ALTER TABLE t EXECUTE optimize");
    check("optimize");
    assert_time_travel(&python, &wh, "t", &wh.snapshot_ids("t"));
}

/// Columns a dictionary does not shrink (unique ids, times, ints and doubles in files of
/// 5,000 rows) are written without one (`DELTA_BINARY_PACKED`, `PLAIN` for doubles); both
/// engines read them, also with a merge-on-read DELETE on top.
#[test]
fn columns_written_without_a_dictionary_read_the_same() {
    let Some(python) = python("columns_written_without_a_dictionary_read_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    wh.sql(
        "CREATE TABLE u (id BIGINT, ts TIMESTAMP(6), n INT, v DOUBLE, cat VARCHAR)
         PARTITIONED BY (cat) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read');
         INSERT INTO u SELECT value * 7 - 20000, to_timestamp_micros(1704067200000000 + value * 1000003),
           CAST(value * 3 AS INT), value * 0.37, CASE WHEN value % 2 = 0 THEN 'a' ELSE 'b' END
         FROM range(10000)",
    );
    let dir = wh.table_dir("u");
    let data_files: Vec<String> = wh.files("u").into_keys().map(|f| format!("{dir}/{f}")).collect();
    assert_eq!(data_files.len(), 2, "one file per partition: {data_files:?}");
    for f in &data_files {
        use parquet::basic::Encoding;
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let reader = SerializedFileReader::new(std::fs::File::open(f).unwrap()).unwrap();
        let group = reader.metadata().row_group(0);
        let encodings = |i: usize| group.column(i).encodings().collect::<Vec<_>>();
        for (i, expected) in [
            (0, Encoding::DELTA_BINARY_PACKED),
            (1, Encoding::DELTA_BINARY_PACKED),
            (2, Encoding::DELTA_BINARY_PACKED),
            (3, Encoding::PLAIN),
        ] {
            let e = encodings(i);
            assert!(
                e.contains(&expected) && !e.contains(&Encoding::RLE_DICTIONARY),
                "{f:?} column {i}: {e:?}"
            );
        }
        assert!(
            encodings(4).contains(&Encoding::RLE_DICTIONARY),
            "{f:?}: the repeated string keeps its dictionary"
        );
    }
    let check = |step: &str| {
        assert_same(
            &python,
            &wh,
            "u",
            step,
            &[
                ALL,
                same("id >= 49000"),
                same("n < 30"),
                at("ts", "<", "2024-01-01 00:00:01"),
            ],
        )
    };
    check("INSERT");
    wh.sql("DELETE FROM u WHERE id % 997 = 3 OR n = 3");
    check("merge-on-read DELETE");
}

// --- filtered reads on every layout -----------------------------------------------------------

/// `ours` in our dialect (and DuckDB's), `pyiceberg` as pyiceberg's row filter; rows compared
/// only (pyiceberg may plan more files than we do where its pruning is weaker).
fn filtered(ours: &'static str, pyiceberg: &'static str) -> Query<'static> {
    Query {
        ours: Some(ours),
        pyiceberg: Some(pyiceberg),
        duckdb: Some(ours),
        files: false,
        duckdb_wrong: false,
    }
}

/// The same words in all three, rows compared only.
fn filtered_same(predicate: &'static str) -> Query<'static> {
    filtered(predicate, predicate)
}

/// `q`, not asked of DuckDB: it answers wrongly on pyiceberg's metadata too
/// (`duckdb_is_wrong_on_pyiceberg_tables_too` shows each such case).
fn duckdb_wrong(q: Query<'static>) -> Query<'static> {
    Query {
        duckdb_wrong: true,
        ..q
    }
}

/// The predicates of the differential reads: empty strings, NULL, NaN, `-0.0`, non-ASCII
/// text, pre-1970 times and dates, decimals, booleans, ranges over several partitions. On a
/// table with position deletes (`deletes`) DuckDB is not asked `IS [NOT] NULL`
/// (`is_null_with_deletes`, `is_not_null_with_deletes`).
fn differential_queries(deletes: bool) -> Vec<Query<'static>> {
    let null_test = |predicate: &'static str| match deletes {
        true => duckdb_wrong(filtered_same(predicate)),
        false => filtered_same(predicate),
    };
    vec![
        ALL,
        filtered_same("s = 'beta'"),
        filtered_same("s = ''"),
        filtered_same("s >= 'b' AND s < 'f'"),
        filtered_same("s LIKE 'Mü%'"),
        null_test("s IS NULL"),
        filtered_same("region = 'München'"),
        filtered_same("region = ''"),
        null_test("region IS NULL"),
        null_test("region IS NOT NULL"),
        filtered_same("id IN (1, 5, 40, 333)"),
        filtered_same("id >= 280 AND id < 320"),
        filtered_same("flag = true"),
        filtered(
            "flag = true AND ts < TIMESTAMP '1969-12-28 00:00:00'",
            "flag = true AND ts < '1969-12-28T00:00:00'",
        ),
        filtered(
            "flag = true AND ts < TIMESTAMP '1970-01-20 00:00:00'",
            "flag = true AND ts < '1970-01-20T00:00:00'",
        ),
        // DuckDB rounds the month of a time before 1970 toward zero (`pre_1970_month`).
        duckdb_wrong(filtered(
            "ts >= TIMESTAMP '1969-12-25 00:00:00' AND ts < TIMESTAMP '1970-01-02 00:00:00'",
            "ts >= '1969-12-25T00:00:00' AND ts < '1970-01-02T00:00:00'",
        )),
        filtered(
            "ts >= TIMESTAMP '1970-01-20 00:00:00' AND ts < TIMESTAMP '1970-02-01 00:00:00'",
            "ts >= '1970-01-20T00:00:00' AND ts < '1970-02-01T00:00:00'",
        ),
        filtered("d < DATE '1970-01-01'", "d < '1970-01-01'"),
        filtered_same("x = 0.0"),
        // NaN is above every number for us and DuckDB (as in Spark), unordered for pyiceberg.
        filtered("x > 1 AND NOT isnan(x)", "x > 1"),
        filtered_same("x < 0"),
        filtered_same("m > 1.50"),
        filtered_same("m <= -4.75"),
    ]
}

/// `n` rows from `first` on: every kind of value the readers could mishandle, spread so
/// that each partition gets several.
fn differential_rows(first: i64, n: i64) -> String {
    format!(
        "SELECT value AS id,
           to_timestamp_micros(-3456000000000 + value * 25200000000) AS ts,
           CASE value % 8 WHEN 0 THEN '' WHEN 1 THEN 'beta' WHEN 2 THEN NULL WHEN 3 THEN 'München'
             WHEN 4 THEN '日本語' WHEN 5 THEN 'alpha' WHEN 6 THEN 'b' ELSE 'zz' END AS s,
           CASE value % 5 WHEN 0 THEN '' WHEN 1 THEN 'München' WHEN 2 THEN NULL WHEN 3 THEN 'EU' ELSE 'US' END AS region,
           CASE value % 6 WHEN 0 THEN CAST('NaN' AS DOUBLE) WHEN 1 THEN CAST('-0.0' AS DOUBLE) WHEN 2 THEN CAST(0 AS DOUBLE)
             WHEN 3 THEN NULL ELSE CAST(value AS DOUBLE) / 4 - 10 END AS x,
           CAST(value AS DECIMAL(9, 2)) / 4 - 5 AS m,
           CASE WHEN value % 7 = 0 THEN NULL ELSE value % 3 = 0 END AS flag,
           CAST(to_timestamp_micros(-3456000000000 + value * 25200000000) AS DATE) AS d
         FROM generate_series({first}, {}) AS g(value)",
        first + n - 1
    )
}

/// pyiceberg's `scan(row_filter=…)` and DuckDB's `iceberg_scan … WHERE …` return our rows
/// on every layout, through evolution and each kind of write.
#[test]
fn filtered_reads_match_ours_on_every_layout() {
    let Some(python) = python("filtered_reads_match_ours_on_every_layout") else {
        return;
    };
    let layouts = [
        (
            "PARTITIONED BY (month(ts), truncate(2, s), region)",
            "ALTER TABLE t DROP PARTITION FIELD region",
        ),
        (
            "PARTITIONED BY (flag, hour(ts))",
            "ALTER TABLE t ADD PARTITION FIELD truncate(1, s)",
        ),
        (
            "PARTITIONED BY (day(ts), bucket(4, id))",
            "ALTER TABLE t REPLACE PARTITION FIELD ts_day WITH month(ts)",
        ),
        (
            "PARTITIONED BY (s, year(d))",
            "ALTER TABLE t ADD PARTITION FIELD region",
        ),
        (
            "PARTITIONED BY (x, truncate(10, m))",
            "ALTER TABLE t DROP PARTITION FIELD x",
        ),
        ("", "ALTER TABLE t ADD PARTITION FIELD month(d)"),
        (
            "PARTITIONED BY (region) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')",
            "ALTER TABLE t ADD PARTITION FIELD bucket(2, id)",
        ),
    ];
    let found_all = std::cell::RefCell::new(Vec::new());
    for (layout, evolve) in layouts {
        let wh = Warehouse::local();
        let deletes = layout.contains("merge-on-read");
        let check = |step: &str| {
            let queries = differential_queries(deletes);
            let found = differences(&python, &wh, "t", &format!("{layout}: {step}"), &queries, false);
            found_all.borrow_mut().extend(found);
        };
        wh.sql(&format!(
            "CREATE TABLE t (id BIGINT, ts TIMESTAMP, s VARCHAR, region VARCHAR, x DOUBLE, m DECIMAL(9, 2), flag BOOLEAN, d DATE) {layout};
             INSERT INTO t {}",
            differential_rows(0, 300)
        ));
        check("INSERT");
        wh.sql(&format!(
            "INSERT INTO t {};
             ALTER TABLE t ADD COLUMN note VARCHAR;
             UPDATE t SET note = 'n' WHERE id % 4 = 0",
            differential_rows(300, 150)
        ));
        check("ADD COLUMN, UPDATE");
        assert_same(
            &python,
            &wh,
            "t",
            &format!("{layout}: the added column"),
            &[
                filtered_same("note = 'n'"),
                pyiceberg_only("note IS NULL"),
                filtered_same("note IS NOT NULL"),
            ],
        );
        wh.sql(&format!(
            "{evolve};
             INSERT INTO t SELECT *, CASE WHEN id % 2 = 0 THEN 'new' END FROM ({}) AS r;
             DELETE FROM t WHERE id % 11 = 0",
            differential_rows(450, 150)
        ));
        check("partition evolution, DELETE");
        wh.sql(
            "MERGE INTO t USING (SELECT * FROM t WHERE id % 9 = 1) s ON t.id = s.id
             WHEN MATCHED THEN UPDATE SET s = 'merged', x = CAST('-0.0' AS DOUBLE), region = '';
             ALTER TABLE t EXECUTE optimize",
        );
        check("MERGE, optimize");
    }
    let found = found_all.into_inner();
    assert!(found.is_empty(), "{} differences:\n{}", found.len(), found.join("\n\n"));
}

/// A statement that adds more than 2048 files writes them in manifests of at most 2048 entries
/// (`manifest_over_2048_entries`: DuckDB misreads partition values past that in one file), so
/// DuckDB's filtered reads of a large INSERT, and of a DELETE that keeps most of its files, are ours.
#[test]
fn manifests_of_at_most_2048_entries_read_right_in_duckdb() {
    let Some(python) = python("manifests_of_at_most_2048_entries_read_right_in_duckdb") else {
        return;
    };
    let wh = Warehouse::local();
    wh.sql(
        "CREATE TABLE t (id BIGINT, flag BOOLEAN) PARTITIONED BY (flag, id);
         INSERT INTO t SELECT value, CASE WHEN value % 2 = 0 THEN NULL ELSE true END FROM generate_series(1, 2200)",
    );
    let manifests = wh.json("SELECT file_count FROM \"t$manifests\" ORDER BY file_count");
    assert_eq!(manifests, vec![json!({"file_count": 152}), json!({"file_count": 2048})]);
    let queries = [ALL, same("flag = true"), same("flag IS NULL"), same("id > 2100")];
    assert_same(&python, &wh, "t", "2,200 files", &queries);
    wh.sql("DELETE FROM t WHERE id = 3");
    assert_same(&python, &wh, "t", "a DELETE rewriting a manifest's survivors", &queries);
}

/// What DuckDB 1.4.4 answers wrongly on our tables it answers wrongly on pyiceberg's too
/// (`tests/interop/duckdb_known_bugs.py`: pyiceberg writes the rows and the metadata, and its
/// own filtered scan gives the truth). When a case starts passing, DuckDB was fixed: drop the
/// matching `duckdb_wrong` / `pyiceberg_only` markers.
#[test]
fn duckdb_is_wrong_on_pyiceberg_tables_too() {
    let Some(python) = python("duckdb_is_wrong_on_pyiceberg_tables_too") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(&python)
        .arg(script("duckdb_known_bugs.py"))
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "duckdb_known_bugs.py: {}", text(&o.stderr));
    let cases: Value = serde_json::from_slice(&o.stdout).unwrap();
    let cases = cases.as_object().unwrap();
    for name in [
        "pre_1970_month",
        "coalesce_over_bounds",
        "length_over_bounds",
        "is_null_with_deletes",
        "is_not_null_with_deletes",
        "added_column_is_null",
        "manifest_over_2048_entries",
    ] {
        let case = &cases[name];
        assert_eq!(
            case["truth"], case["expected"],
            "{name}: pyiceberg's own answer is wrong: {case}"
        );
        assert_ne!(
            case["duckdb"], case["truth"],
            "{name}: DuckDB now answers right on pyiceberg's table; drop its duckdb_wrong marker: {case}"
        );
    }
}

/// Schema evolution: added, renamed, dropped and widened columns.
#[test]
fn schema_evolution_reads_the_same() {
    let Some(python) = python("schema_evolution_reads_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    wh.sql(
        "CREATE TABLE s (id BIGINT, ts TIMESTAMP(6), n INT, f REAL, dec DECIMAL(9,2), old VARCHAR) PARTITIONED BY (day(ts));
         INSERT INTO s VALUES (1, TIMESTAMP '2024-01-01 10:00:00', 1, 1.5, 1.10, 'x'), (2, TIMESTAMP '2024-01-02 10:00:00', 2, NULL, NULL, 'y')",
    );
    wh.sql("ALTER TABLE s ADD COLUMN note VARCHAR");
    wh.sql("INSERT INTO s VALUES (3, TIMESTAMP '2024-01-03 10:00:00', 3, 3.5, 3.30, 'z', 'new')");
    assert_same(&python, &wh, "s", "ADD COLUMN", &[ALL, pyiceberg_only("note IS NULL")]);
    wh.sql("ALTER TABLE s RENAME COLUMN n TO qty");
    assert_same(&python, &wh, "s", "RENAME COLUMN", &[ALL, same("qty >= 2")]);
    wh.sql(
        "ALTER TABLE s ALTER COLUMN qty TYPE BIGINT;
         ALTER TABLE s ALTER COLUMN f TYPE DOUBLE;
         ALTER TABLE s ALTER COLUMN dec TYPE DECIMAL(12,2)",
    );
    wh.sql("INSERT INTO s VALUES (4, TIMESTAMP '2024-01-04 10:00:00', 9000000000, 4.25, 4.40, 'w', 'wide')");
    assert_same(&python, &wh, "s", "widening", &[ALL, same("qty > 3")]);
    wh.sql("ALTER TABLE s DROP COLUMN old");
    assert_same(&python, &wh, "s", "DROP COLUMN", &[ALL, same("id = 1")]);
    assert_time_travel(&python, &wh, "s", &wh.snapshot_ids("s"));
    // Schema changes keep the partition spec, and its id, as Iceberg's own UpdateSchema does:
    // one partition spec, a schema per change, each snapshot naming the schema it was written with.
    let doc: Value = serde_json::from_slice(&std::fs::read(wh.latest_metadata("s")).unwrap()).unwrap();
    assert_eq!(
        doc["partition-specs"].as_array().unwrap().len(),
        1,
        "{}",
        doc["partition-specs"]
    );
    assert_eq!(doc["default-spec-id"], 0);
    let schema_ids: Vec<i64> = doc["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["schema-id"].as_i64().unwrap())
        .collect();
    assert_eq!(schema_ids, vec![0, 1, 2, 3, 4, 5, 6], "{}", doc["schemas"]);
    assert_eq!(doc["current-schema-id"], 6);
    let snapshot_schemas: Vec<i64> = doc["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["schema-id"].as_i64().unwrap())
        .collect();
    assert_eq!(snapshot_schemas, vec![0, 1, 5], "{}", doc["snapshots"]);
    assert_eq!(
        wh.json("SELECT spec_id FROM \"s$specs\"").len(),
        1,
        "one partition spec in s$specs"
    );
}

/// Partition evolution: files of several specs, pruned per spec by pyiceberg as by us.
#[test]
fn partition_evolution_reads_the_same() {
    let Some(python) = python("partition_evolution_reads_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    let ts_query = at("ts", ">=", "2024-02-02 00:00:00");
    wh.sql(
        "CREATE TABLE p (id BIGINT, ts TIMESTAMP(6), region VARCHAR) PARTITIONED BY (month(ts));
         INSERT INTO p VALUES (1, TIMESTAMP '2024-01-05 00:00:00', 'EU'), (2, TIMESTAMP '2024-02-05 00:00:00', 'US');
         ALTER TABLE p REPLACE PARTITION FIELD ts_month WITH day(ts) AS ts_day;
         INSERT INTO p VALUES (3, TIMESTAMP '2024-02-01 00:00:00', 'EU'), (4, TIMESTAMP '2024-02-03 00:00:00', 'US');
         ALTER TABLE p ADD PARTITION FIELD bucket(8, id);
         INSERT INTO p VALUES (5, TIMESTAMP '2024-02-04 00:00:00', 'EU'), (6, TIMESTAMP '2024-03-01 00:00:00', NULL)",
    );
    let queries = [ALL, ts_query, same("id = 5"), same("region = 'EU'")];
    assert_same(&python, &wh, "p", "three specs", &queries);
    wh.sql("ALTER TABLE p DROP PARTITION FIELD ts_day; ALTER TABLE p ADD PARTITION FIELD region");
    wh.sql("INSERT INTO p VALUES (7, TIMESTAMP '2024-02-10 00:00:00', 'EU')");
    assert_same(&python, &wh, "p", "dropped and added fields", &queries);
    assert_time_travel(&python, &wh, "p", &wh.snapshot_ids("p"));
}

/// optimize rewrites into the current spec; expire_snapshots removes snapshots from the
/// Iceberg metadata too (an expired id no longer reads anywhere).
#[test]
fn optimize_and_expire_snapshots_read_the_same() {
    let Some(python) = python("optimize_and_expire_snapshots_read_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    wh.sql(
        "CREATE TABLE o (id BIGINT, ts TIMESTAMP(6), v VARCHAR) PARTITIONED BY (day(ts));
         INSERT INTO o VALUES (1, TIMESTAMP '2024-01-01 00:00:00', 'a');
         INSERT INTO o VALUES (2, TIMESTAMP '2024-01-01 01:00:00', 'b');
         INSERT INTO o VALUES (3, TIMESTAMP '2024-01-02 00:00:00', 'c');
         ALTER TABLE o ADD PARTITION FIELD bucket(4, id);
         INSERT INTO o VALUES (4, TIMESTAMP '2024-01-02 01:00:00', 'd')",
    );
    let before = wh.snapshot_ids("o");
    wh.sql("ALTER TABLE o EXECUTE optimize");
    let day2 = at("ts", ">=", "2024-01-02 00:00:00");
    assert_same(&python, &wh, "o", "optimize", &[ALL, day2, same("id = 2")]);
    assert_time_travel(&python, &wh, "o", &wh.snapshot_ids("o"));
    wh.sql("ALTER TABLE o EXECUTE expire_snapshots(retention_threshold => '0s')");
    let kept = wh.snapshot_ids("o");
    assert_eq!(kept.len(), 1, "only the current snapshot is kept");
    assert_same(&python, &wh, "o", "expire_snapshots", &[ALL, day2]);
    assert_time_travel(&python, &wh, "o", &kept);
    // The expired snapshots are gone from the Iceberg metadata as well.
    let latest = wh.latest_metadata("o");
    let reads: Vec<Read> = before
        .iter()
        .flat_map(|id| {
            ["pyiceberg", "duckdb"].map(|engine| Read {
                snapshot_id: Some(*id),
                ..Read::new(engine, &latest)
            })
        })
        .collect();
    for (read, result) in reads.iter().zip(read_all(&python, &reads)) {
        assert!(
            result.get("error").is_some(),
            "{read:?} still reads an expired snapshot: {result}"
        );
    }
}

/// After DROP TABLE neither the table directory nor the last metadata file resolves.
#[test]
fn dropped_tables_stop_resolving() {
    let Some(python) = python("dropped_tables_stop_resolving") else {
        return;
    };
    let wh = Warehouse::local();
    wh.sql(
        "CREATE TABLE d (id BIGINT, ts TIMESTAMP(6)) PARTITIONED BY (day(ts));
         INSERT INTO d VALUES (1, TIMESTAMP '2024-01-01 00:00:00')",
    );
    assert_same(&python, &wh, "d", "before DROP", &[ALL]);
    let last = wh.latest_metadata("d");
    wh.sql("DROP TABLE d");
    // Whatever stays behind (a tombstone version, say) is no Iceberg table either.
    let mut gone = vec![last, wh.table_dir("d")];
    gone.extend(wh.metadata_versions("d"));
    assert_unreadable(&python, &gone, "after DROP TABLE");

    // A table with a LOCATION, dropped with PURGE.
    let elsewhere = tempfile::tempdir().unwrap();
    let location = elsewhere.path().join("l").to_string_lossy().to_string();
    wh.sql(&format!(
        "CREATE TABLE l (id BIGINT, s VARCHAR) PARTITIONED BY (bucket(2, id)) LOCATION '{location}';
         INSERT INTO l VALUES (1, 'a'), (2, 'b')"
    ));
    let versions = |dir: &str| -> Vec<String> {
        std::fs::read_dir(format!("{dir}/metadata"))
            .map(|entries| {
                entries
                    .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                    .filter(|n| n.starts_with('v') && n.ends_with(".metadata.json"))
                    .map(|n| format!("{dir}/metadata/{n}"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let before = versions(&location);
    assert!(!before.is_empty(), "no metadata versions at {location}");
    let reads = [Read::new("pyiceberg", &location), Read::new("duckdb", &location)];
    for (read, result) in reads.iter().zip(read_all(&python, &reads)) {
        assert_eq!(result["rows"].as_array().map(Vec::len), Some(2), "{read:?}: {result}");
    }
    wh.sql("DROP TABLE l PURGE");
    let mut gone = before;
    gone.push(location.clone());
    gone.extend(versions(&location));
    assert_unreadable(&python, &gone, "after DROP TABLE … PURGE of a LOCATION table");
}

/// Our writes to a table pyiceberg created (`STORED AS ICEBERG`, by its directory) are Iceberg
/// commits: after every statement both engines read, by the newest metadata file and by the
/// directory, the rows and files we read; fields we do not interpret stay as they were.
#[test]
fn writes_to_a_pyiceberg_table_read_the_same() {
    let Some(python) = python("writes_to_a_pyiceberg_table_read_the_same") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = make_pyiceberg_directory_table(&python, &dir.path().join("catalog"), None);
    let location = made["location"].as_str().unwrap();
    let table_dir = location.strip_prefix("file://").unwrap_or(location).to_string();
    // Something only another engine knows: a top-level field and a property.
    let theirs = newest_metadata_file(&table_dir);
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&theirs).unwrap()).unwrap();
    doc["x-other-engine"] = serde_json::json!({"kept": [1, 2, 3]});
    doc["properties"]["other.engine.setting"] = Value::from("on");
    let sort_orders = doc["sort-orders"].clone();
    std::fs::write(&theirs, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();

    let wh = Warehouse::local().with_foreign("ev", location);
    let check = |step: &str| {
        assert_same(
            &python,
            &wh,
            "ev",
            step,
            &[ALL, same("id = 3"), at("ts", ">=", "2024-01-03 00:00:00")],
        )
    };
    wh.sql("INSERT INTO ev VALUES (9, TIMESTAMP '2024-01-05 00:00:00', 'ours', 9.99), (10, NULL, 'no ts', 0.01)");
    check("INSERT");
    wh.sql("DELETE FROM ev WHERE id = 2");
    check("DELETE (rewritten file)");
    wh.sql("DELETE FROM ev WHERE ts >= TIMESTAMP '2024-01-05 00:00:00'");
    check("DELETE (whole files)");
    wh.sql("UPDATE ev SET name = 'updated', ts = TIMESTAMP '2024-01-04 00:00:00' WHERE id = 1");
    check("UPDATE (moves a row to another partition)");
    wh.sql(
        "MERGE INTO ev USING (SELECT 3 AS id, 'merged' AS name UNION ALL SELECT 20, 'new') s ON ev.id = s.id
         WHEN MATCHED THEN UPDATE SET name = s.name
         WHEN NOT MATCHED THEN INSERT (id, ts, name, amount) VALUES (s.id, TIMESTAMP '2024-01-06 00:00:00', s.name, 20.00)",
    );
    check("MERGE");
    wh.sql(
        "SET hidden_partitions.partition_overwrite_mode = 'dynamic';
         INSERT OVERWRITE ev SELECT 21, TIMESTAMP '2024-01-06 01:00:00', 'overwritten', 21.00",
    );
    check("INSERT OVERWRITE (dynamic)");
    wh.sql(
        "ALTER TABLE ev ADD COLUMN note VARCHAR;
         INSERT INTO ev VALUES (22, TIMESTAMP '2024-01-07 00:00:00', 'noted', 22.00, 'a note')",
    );
    check("ADD COLUMN");
    let evolved = [ALL, pyiceberg_only("note IS NULL"), same("note = 'a note'")];
    assert_same(&python, &wh, "ev", "ADD COLUMN (the new column)", &evolved);
    wh.sql(
        "ALTER TABLE ev DROP PARTITION FIELD id_bucket;
         ALTER TABLE ev ADD PARTITION FIELD truncate(2, name);
         INSERT INTO ev VALUES (23, TIMESTAMP '2024-01-07 01:00:00', 'spec two', 23.00, NULL)",
    );
    check("partition evolution");
    let before_truncate = wh.rows("SELECT * FROM ev");
    assert_eq!(before_truncate.len(), 12, "{before_truncate:?}");
    wh.sql("TRUNCATE TABLE ev");
    check("TRUNCATE");
    assert_time_travel(&python, &wh, "ev", &wh.snapshot_ids("ev"));

    let latest = newest_metadata_file(&table_dir);
    assert!(latest.ends_with("/v14.metadata.json"), "{latest}");
    let ours: Value = serde_json::from_slice(&std::fs::read(&latest).unwrap()).unwrap();
    assert_eq!(ours["x-other-engine"], doc["x-other-engine"]);
    assert_eq!(ours["properties"], doc["properties"]);
    assert_eq!(ours["sort-orders"], sort_orders);
    assert!(ours.get("table-specs").is_none(), "the table stays theirs: {ours}");
    assert_eq!(ours["snapshots"].as_array().unwrap().len(), 11);
    assert_eq!(ours["metadata-log"].as_array().unwrap().len(), 14);
    assert_eq!(ours["schemas"].as_array().unwrap().len(), 2);
    assert_eq!(ours["partition-specs"].as_array().unwrap().len(), 3);
    assert_eq!(
        ours["refs"]["main"]["snapshot-id"], ours["current-snapshot-id"],
        "main follows the current snapshot"
    );
    // Every manifest list and manifest we wrote is an Avro file in metadata/, and no
    // manifest of our own format was written.
    let names: Vec<String> = std::fs::read_dir(format!("{table_dir}/metadata"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with("-m.parquet")), "{names:?}");
}

/// Writers racing on one Iceberg table of another engine: each commit takes the next
/// metadata file with put-if-absent, a loser starts again from the winner's metadata, and
/// every row is there once, as pyiceberg reads it too.
#[test]
fn concurrent_writes_to_a_pyiceberg_table_keep_every_row() {
    let Some(python) = python("concurrent_writes_to_a_pyiceberg_table_keep_every_row") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = make_pyiceberg_directory_table(&python, &dir.path().join("catalog"), None);
    let location = made["location"].as_str().unwrap();
    let wh = Warehouse::local().with_foreign("ev", location);
    std::thread::scope(|s| {
        for writer in 0..3 {
            let wh = &wh;
            s.spawn(move || {
                for round in 0..4 {
                    let id = 100 + writer * 10 + round;
                    wh.sql(&format!(
                        "INSERT INTO ev VALUES ({id}, TIMESTAMP '2024-01-0{} 00:00:00', 'w{writer}', 1.00)",
                        1 + round
                    ));
                }
            });
        }
    });
    let ours = wh.rows("SELECT * FROM ev");
    assert_eq!(ours.len(), 8 + 12, "{ours:?}");
    let ids: std::collections::BTreeSet<i64> = ours.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 20, "every row once: {ours:?}");
    assert_same(&python, &wh, "ev", "after concurrent INSERTs", &[ALL]);
}

/// What a write to another engine's Iceberg table cannot keep correct is refused, naming
/// it, and nothing is written; reads are unaffected.
#[test]
fn writes_to_iceberg_tables_refuse_what_they_cannot_keep() {
    let Some(python) = python("writes_to_iceberg_tables_refuse_what_they_cannot_keep") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = make_pyiceberg_directory_table(&python, &dir.path().join("catalog"), None);
    let location = made["location"].as_str().unwrap();
    let table_dir = location.strip_prefix("file://").unwrap_or(location).to_string();
    let expected = sorted(made["rows"].as_array().unwrap().clone());
    let wh = Warehouse::local().with_foreign("ev", location);
    let files_before = || {
        let mut names: Vec<String> = walk(&table_dir);
        names.sort();
        names
    };
    let refused = |sql: &str, says: &str| {
        let before = files_before();
        let o = wh.cli(sql);
        let err = text(&o.stderr);
        assert!(!o.status.success(), "{sql} ran");
        assert!(err.contains(says), "{sql}: {err}");
        assert_eq!(files_before(), before, "{sql} left files behind");
        assert_eq!(wh.rows("SELECT * FROM ev"), expected, "reads are unaffected");
    };
    let latest = newest_metadata_file(&table_dir);
    let original = std::fs::read(&latest).unwrap();
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut doc: Value = serde_json::from_slice(&original).unwrap();
        f(&mut doc);
        std::fs::write(&latest, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    };
    // A partition transform we do not know: read, but never written under.
    edit(&|doc| {
        let specs = doc["partition-specs"].as_array_mut().unwrap();
        let fields = specs.last_mut().unwrap()["fields"].as_array_mut().unwrap();
        fields[1]["transform"] = Value::from("zorder");
    });
    let o = wh.cli("SELECT count(*) FROM ev");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let before = files_before();
    let o = wh.cli("INSERT INTO ev VALUES (9, TIMESTAMP '2024-01-05 00:00:00', 'ours', 9.99)");
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("transform \"zorder\""), "{}", text(&o.stderr));
    assert_eq!(files_before(), before, "a refused INSERT left files behind");
    // Format versions we do not write.
    for (version, says) in [(1, "format version 1"), (3, "format version 3")] {
        edit(&|doc| doc["format-version"] = Value::from(version));
        let before = files_before();
        let o = wh.cli("INSERT INTO ev VALUES (9, TIMESTAMP '2024-01-05 00:00:00', 'ours', 9.99)");
        assert!(!o.status.success());
        assert!(text(&o.stderr).contains(says), "{}", text(&o.stderr));
        assert_eq!(files_before(), before);
    }
    std::fs::write(&latest, &original).unwrap();
    // Another engine's files are never ours to delete.
    refused("ALTER TABLE ev EXECUTE remove_orphan_files", "does not delete");
    refused("ALTER TABLE ev EXECUTE expire_snapshots", "does not delete");
    // A manifest the metadata names but that is missing: an error naming it.
    let manifest = walk(&table_dir).into_iter().find(|n| n.ends_with("-m0.avro")).unwrap();
    let moved = format!("{table_dir}/{manifest}.away");
    std::fs::rename(format!("{table_dir}/{manifest}"), &moved).unwrap();
    let o = wh.cli("DELETE FROM ev WHERE id > 0");
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("does not exist"), "{}", text(&o.stderr));
    std::fs::rename(&moved, format!("{table_dir}/{manifest}")).unwrap();
    // A newest metadata file that is not JSON (the version after the hint's): named, nothing
    // written.
    let next = latest
        .rsplit_once("/v")
        .unwrap()
        .1
        .trim_end_matches(".metadata.json")
        .parse::<u64>()
        .unwrap()
        + 1;
    let broken = format!("{table_dir}/metadata/v{next}.metadata.json");
    std::fs::write(&broken, b"{ not json").unwrap();
    let before = files_before();
    let o = wh.cli("INSERT INTO ev VALUES (9, TIMESTAMP '2024-01-05 00:00:00', 'ours', 9.99)");
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains(&format!("v{next}.metadata.json")),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(files_before(), before);
}

/// Files under `dir`, relative to it.
fn walk(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().to_string());
            }
        }
    }
    out
}

/// The newest metadata file of a table pyiceberg named (`NNNNN-<uuid>.metadata.json`) or
/// we named (`v<N>.metadata.json`): the highest number.
fn newest_metadata_file(table_dir: &str) -> String {
    let dir = format!("{}/metadata", table_dir.strip_prefix("file://").unwrap_or(table_dir));
    let names: Vec<String> = if dir.starts_with("s3://") {
        list_s3(&format!("{dir}/"))
    } else {
        std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect()
    };
    let names: Vec<String> = names.into_iter().filter(|n| n.ends_with(".metadata.json")).collect();
    // By number; a directory table's `v<N>` before pyiceberg's `<N>-<uuid>` it was copied from.
    let number = |n: &str| -> (u64, bool) {
        let v = n.starts_with('v');
        let n = n.strip_prefix('v').unwrap_or(n);
        (n.split(['-', '.']).next().unwrap().parse().unwrap_or(0), v)
    };
    let newest = names
        .iter()
        .max_by_key(|n| number(n.as_str()))
        .unwrap_or_else(|| panic!("no metadata in {dir}"));
    format!("{dir}/{newest}")
}

/// The round trip: a pyiceberg table we append to, update and evolve; pyiceberg registers
/// our latest metadata and appends again; we read its metadata back, every row once.
#[test]
fn round_trip_with_pyiceberg() {
    let Some(python) = python("round_trip_with_pyiceberg") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let made = make_pyiceberg_directory_table(&python, &dir.path().join("catalog"), None);
    let location = made["location"].as_str().unwrap();
    let table_dir = location.strip_prefix("file://").unwrap_or(location).to_string();
    let wh = Warehouse::local();
    let register = format!("CREATE EXTERNAL TABLE IF NOT EXISTS ev STORED AS ICEBERG LOCATION '{table_dir}'; ");
    wh.sql(&format!(
        "{register}
         INSERT INTO ev VALUES (9, TIMESTAMP '2024-01-05 00:00:00', 'ours', 9.99);
         UPDATE ev SET name = 'updated' WHERE id = 1;
         ALTER TABLE ev ADD COLUMN note VARCHAR;
         INSERT INTO ev VALUES (10, TIMESTAMP '2024-01-06 00:00:00', 'ours again', 10.00, 'with note')"
    ));
    let ours = wh.rows(&format!("{register}SELECT * FROM ev"));
    assert_eq!(ours.len(), 10);
    let latest = newest_metadata_file(&table_dir);
    let reads = [
        Read::new("pyiceberg", &latest),
        Read::new("duckdb", &latest),
        Read::new("pyiceberg", &table_dir),
    ];
    for (read, result) in reads.iter().zip(read_all(&python, &reads)) {
        assert!(result.get("error").is_none(), "{read:?}: {result}");
        assert_eq!(sorted(result["rows"].as_array().unwrap().clone()), ours, "{read:?}");
    }

    let rows = dir.path().join("rows.json");
    std::fs::write(
        &rows,
        r#"[{"id": 11, "ts": "2024-01-07T00:00:00", "name": "pyiceberg again", "amount": "11.00", "note": "py"}]"#,
    )
    .unwrap();
    let o = Command::new(&python)
        .arg(script("make_pyiceberg_table.py"))
        .args(["register-append", "--catalog"])
        .arg(dir.path().join("catalog2"))
        .args(["--name", "ns.ours", "--metadata", &latest, "--rows"])
        .arg(&rows)
        .output()
        .unwrap();
    assert!(o.status.success(), "register-append: {}", text(&o.stderr));
    let appended: Value = serde_json::from_slice(&o.stdout).unwrap();
    let theirs = sorted(appended["rows"].as_array().unwrap().clone());
    assert_eq!(theirs.len(), 11);
    let metadata = appended["metadata"].as_str().unwrap();
    let metadata = metadata.strip_prefix("file://").unwrap_or(metadata);
    let back = wh.rows(&format!(
        "CREATE EXTERNAL TABLE IF NOT EXISTS back STORED AS ICEBERG LOCATION '{metadata}'; SELECT * FROM back"
    ));
    assert_eq!(back, theirs, "every row once, as pyiceberg reads it");
    let ids: std::collections::BTreeSet<i64> = back.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 11, "every row once: {back:?}");
}

/// `make_pyiceberg_table.py create`: the table's description (metadata, location, snapshot ids,
/// rows). Its metadata files are pyiceberg's (`<N>-<uuid>.metadata.json`): its catalog's table.
fn make_pyiceberg_table(python: &Path, catalog: &Path, warehouse: Option<&str>) -> Value {
    make_pyiceberg(python, "create", "ns.ev", catalog, warehouse)
}

/// `make_pyiceberg_table.py create --directory`: the same table made a directory table
/// (`v<N>.metadata.json` and its hint), which we may write to by its directory.
fn make_pyiceberg_directory_table(python: &Path, catalog: &Path, warehouse: Option<&str>) -> Value {
    make_pyiceberg_with(python, &["create", "--directory"], "ns.ev", catalog, warehouse)
}

fn make_pyiceberg(python: &Path, action: &str, name: &str, catalog: &Path, warehouse: Option<&str>) -> Value {
    make_pyiceberg_with(python, &[action], name, catalog, warehouse)
}

fn make_pyiceberg_with(python: &Path, args: &[&str], name: &str, catalog: &Path, warehouse: Option<&str>) -> Value {
    let mut c = Command::new(python);
    c.arg(script("make_pyiceberg_table.py"))
        .args(args)
        .arg("--catalog")
        .arg(catalog)
        .args(["--name", name]);
    if let Some(w) = warehouse {
        c.args(["--warehouse", w]);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "make_pyiceberg_table.py: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The S3 test server, or `None` (said loudly) when none is configured.
fn s3_server(test: &str) -> Option<S3Server> {
    match S3Server::from_env() {
        Ok(Some(s)) => Some(s),
        Ok(None) => {
            skipped_without_s3(test);
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// The same on the S3 test server: metadata and data read through s3:// URLs.
#[test]
fn s3_tables_read_the_same() {
    let Some(python) = python("s3_tables_read_the_same") else {
        return;
    };
    let Some(server) = s3_server("s3_tables_read_the_same") else {
        return;
    };
    let wh = Warehouse::s3(&server, "iceberg-interop");
    wh.sql(
        "CREATE TABLE t (id BIGINT, ts TIMESTAMP(6), cat VARCHAR) PARTITIONED BY (day(ts), bucket(4, id));
         INSERT INTO t VALUES (1, TIMESTAMP '2024-01-01 10:00:00', 'a'), (2, TIMESTAMP '2024-01-02 10:00:00', 'b'),
                              (3, TIMESTAMP '2024-01-03 10:00:00', NULL)",
    );
    let day3 = at("ts", ">=", "2024-01-03 00:00:00");
    assert_same(&python, &wh, "t", "INSERT on S3", &[ALL, day3]);
    wh.sql("DELETE FROM t WHERE id = 2; ALTER TABLE t ADD COLUMN note VARCHAR; INSERT INTO t VALUES (4, TIMESTAMP '2024-01-04 00:00:00', 'd', 'n')");
    assert_same(&python, &wh, "t", "DELETE, ADD COLUMN, INSERT on S3", &[ALL, day3]);
    assert_time_travel(&python, &wh, "t", &wh.snapshot_ids("t"));
    let last = wh.latest_metadata("t");
    wh.sql("DROP TABLE t");
    assert_unreadable(&python, &[last, wh.table_dir("t")], "after DROP TABLE on S3");
}

/// The S3 side of the harness, on a table pyiceberg wrote there: both engines and we read
/// it through s3:// URLs alike, with the same planned files and snapshots.
#[test]
fn a_pyiceberg_table_on_s3_reads_the_same() {
    let Some(python) = python("a_pyiceberg_table_on_s3_reads_the_same") else {
        return;
    };
    let Some(server) = s3_server("a_pyiceberg_table_on_s3_reads_the_same") else {
        return;
    };
    let wh = Warehouse::s3(&server, "iceberg-interop-pyiceberg");
    let catalog = tempfile::tempdir().unwrap();
    let made = make_pyiceberg_directory_table(&python, catalog.path(), Some(&format!("{}/pyiceberg", wh.url)));
    let location = made["location"].as_str().unwrap();
    assert!(location.starts_with("s3://"), "{location}");
    let wh = wh.with_foreign("ev", location);
    assert_eq!(
        wh.rows("SELECT * FROM ev"),
        sorted(made["rows"].as_array().unwrap().clone())
    );
    let day3 = at("ts", ">=", "2024-01-03 00:00:00");
    assert_same(
        &python,
        &wh,
        "ev",
        "pyiceberg's table on S3",
        &[ALL, day3, same("id = 3")],
    );
    let snapshots: Vec<i64> = made["snapshot_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_time_travel(&python, &wh, "ev", &snapshots);

    // Our writes to it on S3 are Iceberg commits too.
    let queries = [ALL, same("id = 3"), same("id = 9")];
    wh.sql("INSERT INTO ev VALUES (9, TIMESTAMP '2024-01-05 00:00:00', 'ours', 9.99)");
    assert_same(&python, &wh, "ev", "INSERT on S3", &queries);
    wh.sql("UPDATE ev SET name = 'updated' WHERE id = 3; DELETE FROM ev WHERE id = 2");
    assert_same(&python, &wh, "ev", "UPDATE and DELETE on S3", &queries);
    wh.sql("ALTER TABLE ev ADD COLUMN note VARCHAR; INSERT INTO ev VALUES (10, NULL, NULL, NULL, 'noted')");
    assert_same(&python, &wh, "ev", "ADD COLUMN on S3", &[ALL, same("note = 'noted'")]);
    assert_eq!(wh.rows("SELECT * FROM ev").len(), 9);
}

/// A table with a sort order, written sorted and clustered by optimize:
/// pyiceberg sees the order (`sort_order()`) and each data file's
/// `sort_order_id`; both engines prune by the files' tight bounds and read
/// the same rows as we do.
#[test]
fn sorted_and_clustered_tables_read_the_same() {
    let Some(python) = python("sorted_and_clustered_tables_read_the_same") else {
        return;
    };
    let wh = Warehouse::local();
    wh.sql(
        "CREATE TABLE so (id BIGINT, b BIGINT, s VARCHAR, ts TIMESTAMP(6)) PARTITIONED BY (day(ts))
           ORDERED BY (id DESC, bucket(4, b) NULLS LAST)
           TBLPROPERTIES ('write.target-file-size-bytes' = '20000');
         INSERT INTO so SELECT (value * 7919) % 20000, value % 97, 'v' || value,
           CASE WHEN value % 2 = 0 THEN TIMESTAMP '2024-01-01 00:00:00' ELSE TIMESTAMP '2024-01-02 00:00:00' END
           FROM generate_series(1, 20000)",
    );
    let queries = [ALL, same("id = 5000"), same("id >= 19990"), same("b = 5")];
    assert_same(&python, &wh, "so", "sorted INSERT", &queries);
    let code = format!(
        "import json\nfrom pyiceberg.table import StaticTable\nt = StaticTable.from_metadata({:?})\n\
         o = t.sort_order()\n\
         print(json.dumps({{'order_id': o.order_id, 'fields': [[f.source_id, str(f.transform), f.direction.value, f.null_order.value] for f in o.fields],\n\
           'file_orders': sorted({{task.file.sort_order_id for task in t.scan().plan_files()}} - {{None}})}}))",
        wh.latest_metadata("so")
    );
    let out = Command::new(&python).arg("-c").arg(&code).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seen: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(
        seen,
        json!({"order_id": 1, "fields": [[1, "identity", "desc", "nulls-last"], [2, "bucket[4]", "asc", "nulls-last"]],
               "file_orders": [1]}),
        "pyiceberg's view of the sort order"
    );
    wh.sql("ALTER TABLE so EXECUTE optimize(strategy => 'sort', sort_order => 'zorder(id, b)')");
    assert_same(&python, &wh, "so", "z-ordered by optimize", &queries);
    wh.sql("ALTER TABLE so EXECUTE optimize(strategy => 'sort')");
    assert_same(&python, &wh, "so", "sorted by optimize", &queries);
}
