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
    assert_eq!(stdout(&o), "[{\"a\":1}]\n[{\"b\":\"x\"}]\n");
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
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .arg("--warehouse")
        .arg(dir.path())
        .args(["--format", "csv"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"SELECT 40 +\n 2 AS answer;\n\\q\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).contains("answer\n42\n"), "{}", stdout(&o));
}
