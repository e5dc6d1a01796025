//! The `hidden-partitions` binary: flags, output formats, exit status.

use std::process::{Command, Output};

fn run(warehouse: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("--warehouse")
        .arg(warehouse)
        .args(args)
        .output()
        .expect("binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// The prompt (no `-c`/`-f`) with `input` piped into it.
fn prompt(warehouse: &std::path::Path, args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("--warehouse")
        .arg(warehouse)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("binary runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn statements_persist_across_invocations_and_csv_prints_nulls_empty() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let o = run(
        &wh,
        &[
            "-c",
            "CREATE TABLE t (id BIGINT, s VARCHAR) PARTITIONED BY (s); INSERT INTO t VALUES (1, 'a'), (2, NULL)",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&wh, &["--format", "csv", "-c", "SELECT id, s FROM t ORDER BY id"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "id,s\n1,a\n2,\n");
}

#[test]
fn json_format_and_repeated_commands() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        dir.path(),
        &[
            "--format",
            "json",
            "-c",
            "SELECT 1 AS a",
            "-c",
            "SELECT 'x' AS b, NULL AS c",
        ],
    );
    assert!(o.status.success());
    assert_eq!(stdout(&o), "[{\"a\":1}]\n[{\"b\":\"x\",\"c\":null}]\n");
}

#[test]
fn file_argument_and_table_format() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.sql");
    std::fs::write(
        &script,
        "CREATE TABLE t (id INT) PARTITIONED BY (bucket(2, id));\nINSERT INTO t VALUES (7);\nSELECT id FROM t;\n",
    )
    .unwrap();
    let o = run(&dir.path().join("wh"), &["-f", script.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("| id |") && out.contains("| 7  |"), "{out}");
}

#[test]
fn failing_statement_exits_non_zero_with_the_error_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        dir.path(),
        &[
            "--format",
            "csv",
            "-c",
            "SELECT 1 AS ok; SELECT * FROM missing_table; SELECT 2",
        ],
    );
    assert!(!o.status.success());
    // Output of the statement before the failure is kept; nothing after it runs.
    assert_eq!(stdout(&o), "ok\n1\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Error:") && err.contains("missing_table"), "{err}");
}

#[test]
fn interactive_prompt_reads_statements_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let o = prompt(
        dir.path(),
        &["--format", "csv"],
        "SELECT 40 +\n 2 AS answer;\n\\q\nSELECT 'not run';\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "answer\n42\n");
}

#[test]
fn piped_prompt_stops_at_the_first_error_with_a_non_zero_exit() {
    let dir = tempfile::tempdir().unwrap();
    let o = prompt(
        dir.path(),
        &["--format", "csv"],
        "SELECT 1 AS a;\nSELECT nope;\nSELECT 2 AS b;\n",
    );
    assert!(!o.status.success());
    assert_eq!(stdout(&o), "a\n1\n");
    assert!(
        stderr(&o).contains("Error:") && stderr(&o).contains("nope"),
        "{}",
        stderr(&o)
    );
    // As in a script, an error in a statement's text stops it too.
    let o = prompt(dir.path(), &[], "SELECT 'unterminated;\n");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("Unterminated string literal"), "{}", stderr(&o));
}

#[test]
fn piped_prompt_runs_a_last_statement_without_semicolon() {
    let dir = tempfile::tempdir().unwrap();
    let o = prompt(dir.path(), &["--format", "csv"], "SELECT 1 AS a;\nSELECT 2 AS b");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a\n1\nb\n2\n");
}

#[test]
fn semicolons_in_comments_strings_and_identifiers_do_not_end_statements() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "SELECT 'a;b' AS s; -- c;d\n/* e;f\n g; */ SELECT 2 AS \"x;y\" -- h;\n;";
    let expected = "s\na;b\nx;y\n2\n";
    let o = run(dir.path(), &["--format", "csv", "-c", sql]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), expected);
    let script = dir.path().join("script.sql");
    std::fs::write(&script, sql).unwrap();
    let o = run(dir.path(), &["--format", "csv", "-f", script.to_str().unwrap()]);
    assert_eq!(stdout(&o), expected);
    // The prompt reads on until the statement really ends.
    let o = prompt(
        dir.path(),
        &["--format", "csv"],
        &format!("{sql}\nSELECT 'it''s;\n;' AS t;\n"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{expected}t\n\"it's;\n;\"\n"));
}

#[test]
fn prompt_commands_list_and_describe_tables() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        dir.path(),
        &[
            "-c",
            "CREATE TABLE events (id BIGINT NOT NULL, ts TIMESTAMP, payload VARIANT) \
             PARTITIONED BY (day(ts), bucket(4, id)); CREATE TABLE other (x INT)",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = prompt(dir.path(), &["--format", "csv"], "\\d\n\\d events\n\\d other\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("table_name\nevents\nother\n"), "{out}");
    assert!(
        out.contains("column_name,data_type,is_nullable\nid,BIGINT,NO\nts,TIMESTAMP(6),YES\npayload,VARIANT,YES\n"),
        "{out}"
    );
    assert!(out.contains("partition_spec\n\"day(ts) AS ts_day"), "{out}");
    assert!(out.contains("bucket(4, id) AS id_bucket_4"), "{out}");
    assert!(
        out.ends_with("column_name,data_type,is_nullable\nx,INT,YES\npartition_spec\nunpartitioned\n"),
        "{out}"
    );
    // A table that is not ours (here a view) has columns but no partition spec.
    let o = prompt(
        dir.path(),
        &["--format", "csv"],
        "CREATE VIEW v AS SELECT 1 AS a;\n\\d v\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "column_name,data_type,is_nullable\na,BIGINT,NO\n");
    // A table that does not exist is an error, like a failing statement.
    let o = prompt(dir.path(), &[], "\\d missing\n");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("missing"), "{}", stderr(&o));
}

#[test]
fn prompt_help_timing_and_quit() {
    let dir = tempfile::tempdir().unwrap();
    let o = prompt(
        dir.path(),
        &["--format", "csv"],
        "\\?\nhelp\n\\timing on\nSELECT 1 AS one;\n\\timing off\nSELECT 2 AS two;\nexit\nSELECT 3 AS three;\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.matches("\\d NAME").count(), 2, "{out}");
    let timed = out.split("Timing is on.\n").nth(1).unwrap();
    let elapsed = timed
        .strip_prefix("one\n1\nElapsed ")
        .unwrap_or_else(|| panic!("{out}"));
    let (seconds, rest) = elapsed.split_once(" s\n").unwrap();
    assert!(seconds.parse::<f64>().is_ok(), "{out}");
    assert_eq!(rest, "Timing is off.\ntwo\n2\n");
    let help = stdout(&run(dir.path(), &["--help"]));
    assert!(
        help.contains("Without -c or -f a prompt opens; \\? there lists its commands."),
        "{help}"
    );
    // Commands belong to the prompt: in a script `\d` is SQL, and wrong.
    let o = run(dir.path(), &["-c", "\\d"]);
    assert!(!o.status.success());
    // An unknown command is an error.
    let o = prompt(dir.path(), &[], "\\dx\n");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("unknown command `\\dx`"), "{}", stderr(&o));
}

#[test]
fn variants_print_as_json_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let sql = r#"SELECT 1 AS id, parse_json('{"b":[1,null],"a":"x"}') AS v UNION ALL SELECT 2, NULL ORDER BY id"#;
    let o = run(dir.path(), &["--format", "csv", "-c", sql]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "id,v\n1,\"{\"\"a\"\":\"\"x\"\",\"\"b\"\":[1,null]}\"\n2,\n");
    let o = run(dir.path(), &["--format", "json", "-c", sql]);
    assert_eq!(
        stdout(&o),
        "[{\"id\":1,\"v\":{\"a\":\"x\",\"b\":[1,null]}},{\"id\":2,\"v\":null}]\n"
    );
    let o = run(dir.path(), &["-c", sql]);
    let out = stdout(&o);
    assert!(out.contains(r#"| 1  | {"a":"x","b":[1,null]} |"#), "{out}");
    // A variant nested in a struct, and a table's variant column.
    let o = run(
        dir.path(),
        &[
            "--format",
            "json",
            "-c",
            "CREATE TABLE t (id INT, v VARIANT) PARTITIONED BY (id); \
             INSERT INTO t VALUES (1, parse_json('[1,2]')); \
             SELECT named_struct('v', v) AS s, v FROM t",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).ends_with("[{\"s\":{\"v\":[1,2]},\"v\":[1,2]}]\n"),
        "{}",
        stdout(&o)
    );
}

/// The CLI's prompt at a pseudo-terminal (util-linux `script`), `$HOME` in `dir`; `None`
/// (after saying so) where no pseudo-terminal can be opened.
struct Terminal {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    output: std::sync::Arc<std::sync::Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Terminal {
    fn start(test: &str, dir: &std::path::Path) -> Option<Self> {
        use std::io::Read;
        let has_pty = Command::new("script")
            .args(["-qec", "true", "/dev/null"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !has_pty {
            // CI installs it; it never skips there.
            assert!(
                std::env::var_os("HP_PTY_REQUIRED").is_none(),
                "{test}: util-linux `script` is not installed or cannot open a pseudo-terminal"
            );
            eprintln!("SKIPPED {test}: util-linux `script` is not installed or cannot open a pseudo-terminal");
            return None;
        }
        let binary = env!("CARGO_BIN_EXE_hidden-partitions");
        // `exec`: the prompt is the shell's process, as at a real terminal,
        // so no shell in between takes Ctrl-C for itself (dash would).
        let mut child = Command::new("script")
            .args(["-qec"])
            .arg(format!(
                "exec '{binary}' --warehouse '{}' --format csv",
                dir.join("wh").display()
            ))
            .arg("/dev/null")
            .env("HOME", dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let output = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut stdout = child.stdout.take().unwrap();
        let collected = output.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut buf) {
                collected.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Some(Self {
            stdin: child.stdin.take(),
            child,
            output,
            reader: Some(reader),
        })
    }

    /// Wait (up to a minute) until the output holds `what` `count` times.
    fn wait_for(&self, what: &str, count: usize) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while self.output.lock().unwrap().matches(what).count() < count {
            assert!(
                std::time::Instant::now() < deadline,
                "no {what:?}: {}",
                self.output.lock().unwrap()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    fn type_in(&mut self, text: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Wait for the process to end; its output without carriage returns.
    fn finish(mut self) -> (std::process::ExitStatus, String) {
        let status = self.child.wait().unwrap();
        drop(self.stdin.take());
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        let out = self.output.lock().unwrap().replace('\r', "");
        (status, out)
    }
}

/// At a terminal (a pseudo-terminal from util-linux `script`): a failing
/// statement does not end the prompt, the exit status stays 0, Ctrl-C drops
/// the statement being typed, and the history is saved in `$HOME`.
#[test]
fn terminal_prompt_goes_on_after_errors_and_keeps_history() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut terminal) = Terminal::start("terminal_prompt_goes_on_after_errors_and_keeps_history", dir.path())
    else {
        return;
    };
    // Typed-ahead input is dropped when the line editor starts, so each line
    // waits for its prompt ("hp> " or "  -> ").
    let lines = [
        "SELECT nope;\n",
        "SELECT 'a\n",
        "\x03",
        "SELECT 41 +\n",
        "1 AS answer;\n",
        "\\q\n",
    ];
    for (i, line) in lines.iter().enumerate() {
        terminal.wait_for("> ", i + 1);
        terminal.type_in(line);
    }
    let (status, out) = terminal.finish();
    assert!(status.success(), "{out}");
    assert!(out.contains("Error: Schema error: No field named nope"), "{out}");
    assert!(out.contains("answer\n42\n"), "{out}");
    let history = std::fs::read_to_string(dir.path().join(".hidden_partitions_history")).unwrap();
    assert_eq!(history, "SELECT nope;\nSELECT 41 +\\n1 AS answer;\n\\\\q\n");
}

#[test]
fn quickstart_example_runs_and_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/quickstart.sql");
    let first = run(dir.path(), &["--format", "csv", "-f", script]);
    assert!(first.status.success(), "{}", stderr(&first));
    let out = stdout(&first);
    for shown in [
        "events,0,8/80\n",                  // one day
        "events,0,1/80\n",                  // one id
        "events,0,80/80\nevents,1,24/72\n", // region, after evolution
        "0,2024-01-01T00:00:00,EU,\"{\"\"amount\"\":0,\"\"device\"\":\"\"ios\"\"}\"\n",
        "android,3000,150000\nios,1000,48000\nweb,1000,49500\n",
    ] {
        assert!(out.contains(shown), "{shown} missing from\n{out}");
    }
    // DROP TABLE IF EXISTS at its start makes it re-runnable.
    let again = run(dir.path(), &["--format", "csv", "-f", script]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), out);
}

/// A malformed `--storage-option` never prints its text, which may hold a
/// secret: a colon for `=`, a missing key, a secret as the key, a secret
/// given to a setting that cannot parse it (issue 21, item 16).
#[test]
fn malformed_storage_options_never_print_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzz9Qx";
    let local = dir.path().join("wh");
    let local = local.to_str().unwrap();
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!("aws_secret_access_key:{secret}"),
            local,
            "did you mean aws_secret_access_key=…?",
        ),
        (format!("aws_secret_access_key {secret}"), local, "has no '='"),
        (secret.to_string(), local, "has no '='"),
        (format!("={secret}"), local, "has no key before '='"),
        (format!("{secret}=aws_secret_access_key"), local, "not shown"),
        (format!("aws_secret_access_key:{secret}=x"), local, "not shown"),
        (format!("{secret}="), local, "not shown"),
        (
            format!("aws_allow_http={secret}"),
            "s3://bucket/wh",
            "<value of aws_allow_http>",
        ),
    ];
    for (option, warehouse, expected) in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
            .args(["--warehouse", warehouse, "--storage-option", &option, "-c", "SELECT 1"])
            .output()
            .expect("binary runs");
        let err = stderr(&o);
        assert!(!o.status.success(), "{option}: {err}");
        assert!(!err.contains(secret), "{option}: the secret is printed: {err}");
        assert!(
            !err.contains("wJalrXUtnFEMI"),
            "{option}: part of the secret is printed: {err}"
        );
        assert!(err.contains(expected), "{option}: expected {expected:?} in {err}");
    }
}

/// A schema made by CREATE SCHEMA, and its tables (partitioned, plain,
/// CTAS), are stored in the warehouse: a second process finds them, and
/// after DROP SCHEMA … CASCADE a third does not (issue 21, item 8).
#[test]
fn schemas_and_their_tables_outlive_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let o = run(
        &wh,
        &[
            "-c",
            "CREATE SCHEMA s2;
             CREATE TABLE s2.t (id BIGINT, s VARCHAR) PARTITIONED BY (s);
             CREATE TABLE s2.plain (a INT);
             CREATE TABLE s2.ctas AS SELECT 5 AS x;
             INSERT INTO s2.t VALUES (1, 'a'), (2, 'b');
             INSERT INTO s2.plain VALUES (3)",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(wh.join("s2.db/.namespace").is_file());
    assert!(wh.join("s2.db/t/metadata").is_dir());
    let o = run(
        &wh,
        &[
            "--format",
            "csv",
            "-c",
            "SELECT count(*) AS n FROM s2.t WHERE s = 'b';
             SELECT a FROM s2.plain;
             SELECT x FROM s2.ctas;
             SELECT table_name FROM information_schema.tables WHERE table_schema = 's2' ORDER BY table_name",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "n\n1\na\n3\nx\n5\ntable_name\nctas\nplain\nt\n");
    let o = prompt(&wh, &["--format", "csv"], "\\d\n\\d s2.t\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.ends_with(
            "table_name\ns2.ctas\ns2.plain\ns2.t\ncolumn_name,data_type,is_nullable\nid,BIGINT,YES\ns,VARCHAR,YES\npartition_spec\ns AS s [1000]\n"
        ),
        "{out}"
    );
    let o = run(&wh, &["-c", "DROP SCHEMA s2"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("schema s2 is not empty"), "{}", stderr(&o));
    let o = run(&wh, &["-c", "DROP SCHEMA s2 CASCADE"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!wh.join("s2.db/.namespace").exists());
    let o = run(&wh, &["-c", "SELECT * FROM s2.t"]);
    assert!(!o.status.success());
    let o = run(
        &wh,
        &[
            "--format",
            "csv",
            "-c",
            "SELECT count(*) AS n FROM information_schema.schemata WHERE schema_name = 's2'",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "n\n0\n");
}

/// `-c` and `-f` run in the order given (issue 27, item 2).
#[test]
fn commands_and_files_run_in_the_order_given() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.sql");
    std::fs::write(&file, "SELECT 2 AS b;").unwrap();
    let file = file.to_str().unwrap();
    let o = run(
        dir.path(),
        &[
            "--format",
            "csv",
            "-c",
            "SELECT 1 AS a",
            "-f",
            file,
            "-c",
            "SELECT 3 AS c",
            "-f",
            file,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a\n1\nb\n2\nc\n3\nb\n2\n");
    // A file that cannot be read stops the run at its turn, after what came before.
    let o = run(
        dir.path(),
        &[
            "--format",
            "csv",
            "-c",
            "SELECT 1 AS a",
            "-f",
            "/nonexistent/x.sql",
            "-c",
            "SELECT 3 AS c",
        ],
    );
    assert!(!o.status.success());
    assert_eq!(stdout(&o), "a\n1\n");
    assert!(stderr(&o).contains("cannot read /nonexistent/x.sql"), "{}", stderr(&o));
}

/// Statements are parsed and run one by one: a syntax error in a later statement comes
/// after the results of the earlier ones, and nothing after it runs (issue 27, item 3).
#[test]
fn a_syntax_error_stops_a_script_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    for (script, error) in [
        ("SELECT 1 AS a; SELEC 2; SELECT 3 AS c", "SELEC"),
        (
            "SELECT 1 AS a; ALTER TABLE t EXECUTE optimize(x = 1); SELECT 3 AS c",
            "EXECUTE procedure",
        ),
        (
            "SELECT 1 AS a; SELECT 'abc; SELECT 3 AS c",
            "Unterminated string literal",
        ),
    ] {
        let o = run(dir.path(), &["--format", "csv", "-c", script]);
        assert!(!o.status.success(), "{script}");
        assert_eq!(stdout(&o), "a\n1\n", "{script}");
        assert!(stderr(&o).contains(error), "{script}: {}", stderr(&o));
    }
}

/// CSV prints nested values as JSON text and NULL as `--null-value` says; JSON keeps
/// every key, embeds VARIANT values and spells non-finite floats (issue 27, items 4–6).
#[test]
fn csv_and_json_print_every_value() {
    let dir = tempfile::tempdir().unwrap();
    let nested = "SELECT [1, 2] AS l, named_struct('x', 1, 'y', 'a') AS s, map(['k'], [1]) AS m, \
                  CAST(NULL AS BIGINT[]) AS n, [parse_json('{\"v\": true}')] AS vl";
    let o = run(dir.path(), &["--format", "csv", "-c", nested]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "l,s,m,n,vl\n\"[1,2]\",\"{\"\"x\"\":1,\"\"y\"\":\"\"a\"\"}\",\"{\"\"k\"\":1}\",,\"[{\"\"v\"\":true}]\"\n"
    );
    let o = run(
        dir.path(),
        &[
            "--format",
            "csv",
            "--null-value",
            "NULL",
            "-c",
            "SELECT NULL AS a, '' AS b, 'x' AS c",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a,b,c\nNULL,,x\n");
    let o = run(
        dir.path(),
        &["--null-value", "∅", "-c", "SELECT CAST(NULL AS INT) AS a"],
    );
    assert!(stdout(&o).contains("| ∅ |"), "{}", stdout(&o));
    let o = run(
        dir.path(),
        &[
            "--format",
            "json",
            "-c",
            "SELECT 1 AS a, CAST(NULL AS INT) AS b, CAST('NaN' AS DOUBLE) AS n, CAST('-inf' AS REAL) AS i, \
             1.5 AS f, parse_json('{\"x\": [1, null]}') AS v, CAST(NULL AS VARIANT) AS nv, \
             named_struct('p', CAST(NULL AS INT)) AS s",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        rows,
        serde_json::json!([{
            "a": 1, "b": null, "n": "NaN", "i": "-Infinity", "f": 1.5,
            "v": {"x": [1, null]}, "nv": null, "s": {"p": null}
        }])
    );
}

/// At a terminal, Ctrl-C stops the running statement and the prompt goes on; the history
/// is saved after every statement, so a killed session keeps it (issue 27, item 1).
#[test]
fn ctrl_c_cancels_the_running_statement() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let Some(mut terminal) = Terminal::start("ctrl_c_cancels_the_running_statement", dir.path()) else {
        return;
    };
    terminal.wait_for("hp> ", 1);
    terminal.type_in("SELECT count(*) FROM generate_series(1, 1000000000000) AS t(v) WHERE v % 7 = 3;\n");
    std::thread::sleep(Duration::from_millis(1500));
    terminal.type_in("\x03");
    terminal.wait_for("Cancelled", 1);
    terminal.wait_for("hp> ", 2);
    terminal.type_in("SELECT 7 AS seven;\n");
    terminal.wait_for("seven\r\n7", 1);
    // Killed, not quit: the history is already saved.
    let history = dir.path().join(".hidden_partitions_history");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&history).is_ok_and(|h| h.contains("SELECT 7 AS seven;")) {
        assert!(Instant::now() < deadline, "history not saved");
        std::thread::sleep(Duration::from_millis(20));
    }
    terminal.child.kill().unwrap();
    let _ = terminal.finish();
    let history = std::fs::read_to_string(&history).unwrap();
    assert!(history.starts_with("SELECT count(*) FROM generate_series"), "{history}");
}

/// The error of `SHOW TABLES` on an S3 warehouse at a closed local port with `options`
/// (`--storage-option` values), with the variables `unset` removed.
fn s3_error(options: &[&str], unset: &[&str]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"));
    for var in unset {
        command.env_remove(var);
    }
    command.args([
        "--warehouse",
        "s3://bucket/wh",
        "--storage-option",
        "aws_endpoint=http://127.0.0.1:9",
    ]);
    for option in options {
        command.args(["--storage-option", option]);
    }
    let o = command.args(["-c", "SHOW TABLES"]).output().expect("binary runs");
    assert!(!o.status.success());
    stderr(&o)
}

/// An `http://` S3 endpoint without `aws_allow_http=true` says to set it, instead of
/// failing every request with "HTTP error: builder error" (issue 27, item 13).
#[test]
fn a_plain_http_endpoint_needs_allow_http() {
    let err = s3_error(
        &["aws_access_key_id=k", "aws_secret_access_key=s", "aws_region=us-east-1"],
        &["AWS_ALLOW_HTTP"],
    );
    assert!(
        err.contains("plain HTTP") && err.contains("aws_allow_http=true"),
        "{err}"
    );
}

/// S3 without credentials says so, and where they are looked for, instead of "access
/// denied … PUT http://169.254.169.254/latest/api/token" (issue 27, item 13).
#[test]
fn s3_without_credentials_says_where_they_are_looked_for() {
    let err = s3_error(
        // The instance metadata service too is where nothing answers.
        &[
            "aws_allow_http=true",
            "aws_region=us-east-1",
            "aws_metadata_endpoint=http://127.0.0.1:9",
        ],
        &[
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "AWS_PROFILE",
        ],
    );
    assert!(
        err.contains("no AWS credentials were found") && err.contains("AWS_ACCESS_KEY_ID"),
        "{err}"
    );
}

/// Creating a table that exists says so once (issue 27, item 8).
#[test]
fn the_duplicate_table_message_says_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(dir.path(), &["-c", "CREATE TABLE t (a INT); CREATE TABLE t (a INT)"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.matches("already exists").count(), 1, "{err}");
    assert!(err.contains("table t already exists"), "{err}");
}

/// Views and external tables outlive the process that made them (item 11
/// of the SQL/CLI issue), a relative LOCATION means the same file from
/// another directory, and DROP removes only the definition.
#[test]
fn views_and_external_tables_outlive_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("people.csv"), "id,name\n1,ann\n2,bob\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .current_dir(dir.path())
        .args(["--warehouse", "wh", "-c"])
        .arg(
            "CREATE TABLE t (id INT, p VARCHAR) PARTITIONED BY (p); INSERT INTO t VALUES (1, 'x');
             CREATE VIEW v AS SELECT id, p FROM t WHERE id > 0;
             CREATE EXTERNAL TABLE people STORED AS CSV LOCATION 'data/people.csv' OPTIONS ('format.has_header' 'true')",
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Another process, another directory.
    let o = run(
        &wh,
        &[
            "--format",
            "csv",
            "-c",
            "INSERT INTO t VALUES (2, 'y')",
            "-c",
            "SELECT * FROM v ORDER BY id",
            "-c",
            "SELECT name FROM people ORDER BY id",
            "-c",
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "count\n1\nid,p\n1,x\n2,y\nname\nann\nbob\ntable_name,table_type\npeople,BASE TABLE\nt,BASE TABLE\nv,VIEW\n"
    );
    let o = run(&wh, &["-c", "DROP VIEW v; DROP TABLE people"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        data.join("people.csv").exists(),
        "DROP TABLE of an external table keeps its files"
    );
    let o = run(&wh, &["--format", "csv", "-c", "SHOW TABLES"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stdout(&o).contains(",v,") && !stdout(&o).contains("people"),
        "{}",
        stdout(&o)
    );
}

/// `SELECT … FROM 'file.csv'` reads a file, so loading a CSV into a
/// partitioned table is one statement.
#[test]
fn files_are_read_by_their_path() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("events.csv");
    std::fs::write(&csv, "id,day\n1,2026-01-01\n2,2026-01-02\n").unwrap();
    let wh = dir.path().join("wh");
    let o = run(
        &wh,
        &[
            "--format",
            "csv",
            "-c",
            &format!(
                "CREATE TABLE ev PARTITIONED BY (day) AS SELECT id, day FROM '{}'; SELECT count(*) AS n FROM \"ev$partitions\"",
                csv.display()
            ),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The CTAS prints the rows it wrote, as INSERT does.
    assert_eq!(stdout(&o), "count\n2\nn\n2\n");
}

/// A data file that is gone is named by its path (item 17): the table, and
/// the file with its leading `/`.
#[test]
fn a_missing_data_file_is_named_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let o = run(&wh, &["-c", "CREATE TABLE t (a INT); INSERT INTO t VALUES (1)"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let data = wh.join("t").join("data");
    let file = std::fs::read_dir(&data).unwrap().next().unwrap().unwrap().path();
    std::fs::remove_file(&file).unwrap();
    let o = run(&wh, &["-c", "SELECT * FROM t"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("cannot read the data files of table t"), "{e}");
    let path = file.display().to_string();
    assert!(e.contains(&format!(" {path}")), "{e}");
    assert!(!e.contains(&format!(" {}", path.trim_start_matches('/'))), "{e}");
}

/// A table whose LOCATION is on a store the session cannot reach (here: no
/// Azure account given) is listed, does not break the listing of the
/// others, and says what is wrong when it is read (item 12).
#[test]
fn an_unreachable_location_does_not_break_listings() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let o = run(&wh, &["-c", "CREATE TABLE t (a INT)"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(wh.join("elsewhere.location"), "az://container/elsewhere").unwrap();
    let o = run(
        &wh,
        &[
            "--format",
            "csv",
            "-c",
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
            "-c",
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "table_name\nelsewhere\nt\ntable_name,column_name\nt,a\n");
    let o = run(&wh, &["-c", "SELECT * FROM elsewhere"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("table elsewhere (LOCATION 'az://container/elsewhere') cannot be read")
            && e.contains("Account must be specified"),
        "{e}"
    );
}

/// `ALTER TABLE … RENAME TO` (issue 27, item 10): a new process sees the new
/// name only, the files stay where they were, and a rename killed between
/// its two writes is finished by running it again.
#[test]
fn renamed_tables_keep_their_files_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let o = run(
        &wh,
        &[
            "-c",
            "CREATE TABLE t (id BIGINT, s VARCHAR) PARTITIONED BY (s);
             INSERT INTO t VALUES (1, 'a'), (2, 'b');
             ALTER TABLE t RENAME TO u",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(wh.join("t/metadata").is_dir(), "the files stay where they are");
    assert!(wh.join("u.location").is_file());
    let csv = |sql: &str| {
        let o = run(&wh, &["--format", "csv", "-c", sql]);
        assert!(o.status.success(), "{sql}: {}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(
        csv("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"),
        "table_name\nu\n"
    );
    assert_eq!(csv("SELECT id FROM u ORDER BY id"), "id\n1\n2\n");
    let o = run(&wh, &["-c", "SELECT * FROM t"]);
    assert!(!o.status.success());
    // A new t gets a directory of its own beside the renamed table's.
    assert_eq!(
        csv("CREATE TABLE t (x INT); INSERT INTO t VALUES (9); SELECT x FROM t"),
        "count\n1\nx\n9\n"
    );
    assert_eq!(csv("SELECT id FROM u ORDER BY id"), "id\n1\n2\n");
    // Dropping u deletes its files, and only its files.
    assert_eq!(csv("DROP TABLE u; SELECT x FROM t"), "x\n9\n");
    assert!(wh.join("t/metadata").is_dir() && !wh.join("t/data").exists());
    assert!(std::fs::read_dir(&wh).unwrap().any(|e| {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        name.starts_with("t@") && wh.join(&name).join("data").is_dir()
    }));

    // A rename killed after its first write: the old name is gone, the new
    // one not there yet; the same statement finishes it.
    let o = run(&wh, &["-c", "CREATE TABLE k (id INT); INSERT INTO k VALUES (4)"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let url = format!("file://{}", wh.join("k").display());
    std::fs::write(
        wh.join("k.renamed"),
        format!("{{\"renamed_to\":\"k2\",\"location\":\"{url}\"}}\n"),
    )
    .unwrap();
    assert!(!run(&wh, &["-c", "SELECT * FROM k"]).status.success());
    assert!(!run(&wh, &["-c", "SELECT * FROM k2"]).status.success());
    assert_eq!(csv("ALTER TABLE k RENAME TO k2; SELECT id FROM k2"), "id\n4\n");
    // A DROP of the old name in between deletes nothing.
    assert_eq!(csv("DROP TABLE IF EXISTS k; SELECT id FROM k2"), "id\n4\n");
}

/// psql's prompt habits (issue 48): `\dt`, `\format`, `\maxrows`, `\i FILE`
/// (its errors say `FILE:LINE:`), and listings read afresh at each `\d` and
/// `SHOW TABLES` even when another process changed them.
#[test]
fn prompt_format_maxrows_include_and_fresh_listings() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let script = dir.path().join("rows.sql");
    std::fs::write(
        &script,
        "SELECT 1 AS a;\n\n-- a comment\nSELECT nope\n  FROM (SELECT 1 AS a);\nSELECT 3;\n",
    )
    .unwrap();
    let o = prompt(
        &wh,
        &[],
        &format!(
            "\\format csv\nSELECT * FROM generate_series(1, 5) t(v);\n\\maxrows 2\nSELECT * FROM generate_series(1, 5) t(v);\n\
             \\format table\nSELECT * FROM generate_series(1, 5) t(v);\n\\maxrows all\n\\format json\nSELECT 1 AS j;\n\\i {}\n",
            script.display()
        ),
    );
    assert!(!o.status.success());
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(out.contains("Output format is csv.\nv\n1\n2\n3\n4\n5\n"), "{out}");
    assert!(
        out.contains("At most 2 rows of a result are printed.\nv\n1\n2\n"),
        "{out}"
    );
    // In CSV the note goes to stderr, the data stays parseable.
    assert!(err.contains("… 3 more rows (5 in all;"), "{err}");
    assert!(
        out.contains("+---+\n| v |\n+---+\n| 1 |\n| 2 |\n+---+\n… 3 more rows (5 in all; --maxrows all, or \\maxrows all at the prompt, prints every row)\n"),
        "{out}"
    );
    assert!(out.contains("Output format is json.\n[{\"j\":1}]\n"), "{out}");
    assert!(out.ends_with("[{\"a\":1}]\n"), "{out}");
    assert!(
        err.contains(&format!(
            "{}:4: Error: Schema error: No field named nope",
            script.display()
        )),
        "{err}"
    );

    // `\dt` lists what another process created after the prompt opened.
    let mut child = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("--warehouse")
        .arg(&wh)
        .args(["--format", "csv"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    use std::io::Write;
    stdin.write_all(b"CREATE TABLE mine (x INT);\n\\dt\n").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let o = run(&wh, &["-c", "CREATE TABLE theirs (y INT)"]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdin.write_all(b"\\dt\nSHOW TABLES;\n").unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("table_name\nmine\ntable_name\nmine\ntheirs\n"), "{out}");
    assert!(out.contains(",theirs,BASE TABLE"), "{out}");
}

/// `-f FILE` says where a failing statement is, psql's way (issue 48, item 10).
#[test]
fn a_failing_statement_in_a_file_says_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("broken.sql");
    std::fs::write(
        &script,
        "SELECT 1 AS a;\n\nSELECT 2\n  AS b;\n/* two\nlines */ SELECT 'x' + ;\nSELECT 4;\n",
    )
    .unwrap();
    let o = run(dir.path(), &["--format", "csv", "-f", script.to_str().unwrap()]);
    assert!(!o.status.success());
    assert_eq!(stdout(&o), "a\n1\nb\n2\n");
    let err = stderr(&o);
    assert!(err.starts_with(&format!("{}:6: Error: ", script.display())), "{err}");
    // -c has no file to name.
    let o = run(dir.path(), &["-c", "SELECT nope"]);
    assert!(stderr(&o).starts_with("Error: "), "{}", stderr(&o));
}

/// CPU seconds the process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// The CLI process under `script`: the descendant running our binary
/// (`script` may run it through a shell that forks instead of exec-ing).
fn prompt_pid(script_pid: u32) -> u32 {
    let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_hidden-partitions")).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mut pending = vec![script_pid];
        while let Some(pid) = pending.pop() {
            if pid != script_pid && std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == binary) {
                return pid;
            }
            let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
                .into_iter()
                .flatten()
                .flatten();
            for task in tasks {
                let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
                pending.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no prompt process running {}",
            binary.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Ctrl-C during a nested-loop join and during a hash join that fans out:
/// the prompt says so within a second, and the work stops with it — no CPU
/// spent after (issue 48, item 2).
#[test]
fn ctrl_c_stops_joins_within_a_second() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &dir.path().join("wh"),
        &[
            "-c",
            "CREATE TABLE a AS SELECT value AS id FROM generate_series(1, 300000) g(value); \
             CREATE TABLE b AS SELECT value AS id FROM generate_series(1, 300000) g(value)",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let Some(mut terminal) = Terminal::start("ctrl_c_stops_joins_within_a_second", dir.path()) else {
        return;
    };
    let pid = prompt_pid(terminal.child.id());
    let joins = [
        "SELECT count(*) FROM a, b WHERE a.id + b.id = 7;\n",
        "SELECT count(*) FROM a JOIN b ON a.id % 10 = b.id % 10;\n",
    ];
    for (i, sql) in joins.iter().enumerate() {
        terminal.wait_for("hp> ", i + 1);
        terminal.type_in(sql);
        std::thread::sleep(Duration::from_millis(2000));
        let busy = cpu_seconds(pid);
        terminal.type_in("\x03");
        let pressed = Instant::now();
        terminal.wait_for("Cancelled", i + 1);
        let said = pressed.elapsed();
        assert!(said < Duration::from_secs(1), "{sql}: Cancelled after {said:?}");
        assert!(busy > 0.5, "{sql}: the join was not running ({busy} s of CPU)");
        std::thread::sleep(Duration::from_millis(300));
        let before = cpu_seconds(pid);
        std::thread::sleep(Duration::from_millis(1000));
        let after = cpu_seconds(pid);
        assert!(
            after - before < 0.2,
            "{sql}: {} CPU seconds spent after Cancelled",
            after - before
        );
    }
    terminal.wait_for("hp> ", 3);
    terminal.type_in("\\q\n");
    let (status, out) = terminal.finish();
    assert!(status.success(), "{out}");
}

/// Tab at the prompt completes keywords, table names and the columns of
/// the tables on the line (issue 48, item 11).
#[test]
fn tab_completes_keywords_tables_and_columns() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &dir.path().join("wh"),
        &["-c", "CREATE TABLE measurements (station_id BIGINT, reading DOUBLE)"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let Some(mut terminal) = Terminal::start("tab_completes_keywords_tables_and_columns", dir.path()) else {
        return;
    };
    terminal.wait_for("hp> ", 1);
    // `sel` → `select`, `measu` → `measurements`.
    terminal.type_in("sel\t * FROM measu\t LIMIT 0;\n");
    // Completion redraws the prompt: wait for results, not for prompts.
    terminal.wait_for("station_id,reading\r\n", 1);
    std::thread::sleep(std::time::Duration::from_millis(500));
    // `station_` → `station_id`, a column of the table named later on the
    // line: Ctrl-A, 15 × Ctrl-F to after `station_`, Tab, Ctrl-E, Enter.
    terminal.type_in(&format!(
        "SELECT station_ FROM measurements;\x01{}\t\x05\n",
        "\x06".repeat(15)
    ));
    terminal.wait_for("station_id\r\n", 1);
    std::thread::sleep(std::time::Duration::from_millis(500));
    terminal.type_in("\\q\n");
    let (status, out) = terminal.finish();
    assert!(status.success(), "{out}");
    let history = std::fs::read_to_string(dir.path().join(".hidden_partitions_history")).unwrap();
    assert_eq!(
        history, "select * FROM measurements LIMIT 0;\nSELECT station_id FROM measurements;\n\\\\q\n",
        "{out}"
    );
}

/// An empty result is one empty array in JSON, a header in CSV, a boxed
/// header in table format.
#[test]
fn empty_results_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "SELECT 1 AS a WHERE false";
    let o = run(dir.path(), &["--format", "json", "-c", sql]);
    assert_eq!(stdout(&o), "[]\n");
    let o = run(dir.path(), &["--format", "csv", "-c", sql]);
    assert_eq!(stdout(&o), "a\n");
    let o = run(dir.path(), &["--format", "table", "-c", sql]);
    assert_eq!(stdout(&o), "+---+\n| a |\n+---+\n+---+\n");
}
