//! The examples in README.md run, and print what the README shows.
//!
//! Conventions in README.md, which this test relies on:
//!
//! - Every ` ```sql ` block runs with the `hidden-partitions` binary, on a
//!   warehouse of its own.
//! - In a ` ```sql ` block, a line starting with `--` and three spaces shows
//!   output: the text after them must appear in one line of what the
//!   statements since the previous such line (or the block's start) print,
//!   in the table format. `…` stands for any text.
//! - In a ` ```sh ` block, the lines `cargo run --release [-- ARGS]` and
//!   `hidden-partitions ARGS` are CLI commands: they run the binary with ARGS
//!   (split as the shell would), in README order, all in one scratch working
//!   directory (so `./warehouse` is shared, as it would be for a reader), with
//!   nothing on stdin. A path to a file of the repository (such as
//!   `examples/quickstart.sql`) is taken from the repository. Each must exit
//!   with status 0. Other lines (`cargo test …`) are not run.
//! - A ` ```text ` block right after a ` ```sql ` or ` ```sh ` block (blank
//!   lines between them at most) shows output of that block's last statement
//!   or command: each of its lines must appear there, in that order, `…`
//!   again standing for any text.
//! - A block whose fence comes right after a line `<!-- not run … -->` is not
//!   run (it needs an S3 server, or tables from other engines).

use std::path::Path;
use std::process::{Command, Output, Stdio};

const README: &str = include_str!("../README.md");

/// A fenced block of the README.
#[derive(Debug)]
struct Block {
    lang: String,
    text: String,
    /// 1-based line of the opening fence, for messages.
    line: usize,
    not_run: bool,
    /// The ```text block shown right after it.
    shown: Option<String>,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out: Vec<Block> = Vec::new();
    let mut i = 0;
    // Index in `out` of a block that a ```text block may still follow.
    let mut last_closed: Option<usize> = None;
    while i < lines.len() {
        let Some(info) = lines[i].strip_prefix("```") else {
            if !lines[i].trim().is_empty() {
                last_closed = None;
            }
            i += 1;
            continue;
        };
        let lang = info.split_whitespace().next().unwrap_or("").to_string();
        let not_run = i > 0 && lines[i - 1].starts_with("<!-- not run");
        let start = i;
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].starts_with("```"))
            .unwrap_or_else(|| panic!("README.md:{}: the block never closes", i + 1));
        let text: String = lines[i + 1..end].iter().map(|l| format!("{l}\n")).collect();
        i = end + 1;
        if lang == "text"
            && let Some(k) = last_closed
        {
            out[k].shown = Some(text);
            last_closed = None;
            continue;
        }
        out.push(Block {
            lang,
            text,
            line: start + 1,
            not_run,
            shown: None,
        });
        last_closed = Some(out.len() - 1);
    }
    out
}

/// Whether `line` matches `pattern`, `…` standing for any text.
fn matches_line(line: &str, pattern: &str) -> bool {
    let mut rest = line;
    for part in pattern.split('…') {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Check that each of `shown` (in order) matches a line of `output`.
fn assert_shown(shown: &[&str], output: &str, what: &str) {
    let mut lines = output.lines();
    for pattern in shown {
        assert!(
            lines.any(|l| matches_line(l, pattern.trim())),
            "{what}: `{pattern}` is not in (what follows) the output\n{output}"
        );
    }
}

/// Split shell command lines into commands of words: quotes, backslashes
/// and line continuations as `sh` reads them (no variables, no globs).
fn shell_commands(text: &str) -> Vec<Vec<String>> {
    let (mut commands, mut words, mut word) = (Vec::new(), Vec::new(), None::<String>);
    let mut chars = text.chars().peekable();
    let mut quote = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                word.get_or_insert_default().push(chars.next().unwrap())
            }
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, '\\') => match chars.next() {
                Some('\n') | None => {}
                Some(c) => word.get_or_insert_default().push(c),
            },
            (None, '#') if word.is_none() => while chars.next_if(|&c| c != '\n').is_some() {},
            (None, c) if c.is_whitespace() => {
                words.extend(word.take());
                if c == '\n' && !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    if !words.is_empty() {
        commands.push(words);
    }
    commands
}

/// The binary's arguments when `command` runs the CLI.
fn cli_args(command: &[String]) -> Option<Vec<String>> {
    let words: Vec<&str> = command.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["cargo", "run", "--release"] => Some(Vec::new()),
        ["cargo", "run", "--release", "--", args @ ..] | ["hidden-partitions", args @ ..] => {
            Some(args.iter().map(|a| a.to_string()).collect())
        }
        _ => None,
    }
}

fn binary(cwd: &Path, args: &[String]) -> Output {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let args = args.iter().map(|a| {
        let in_repo = repo.join(a);
        if !a.starts_with('-') && in_repo.is_file() {
            in_repo.into_os_string()
        } else {
            a.into()
        }
    });
    Command::new(env!("CARGO_BIN_EXE_hidden-partitions"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .expect("binary runs")
}

fn run_sql(warehouse: &Path, sql: &str, at: &str) -> String {
    let o = binary(
        warehouse,
        &[
            "--warehouse".into(),
            warehouse.display().to_string(),
            "-c".into(),
            sql.into(),
        ],
    );
    assert!(
        o.status.success(),
        "{at}: failed\n{sql}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn sql_examples_run_and_print_what_the_readme_shows() {
    let (mut blocks_run, mut checked) = (0, 0);
    for block in blocks(README).iter().filter(|b| b.lang == "sql" && !b.not_run) {
        let at = format!("README.md:{}", block.line);
        let dir = tempfile::tempdir().unwrap();
        let (mut sql, mut shown, mut output) = (String::new(), Vec::new(), String::new());
        let lines: Vec<&str> = block.text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            match line.strip_prefix("--   ") {
                Some(expected) => shown.push(expected),
                None => sql.push_str(&format!("{line}\n")),
            }
            // A segment ends at the block's end or where shown output is followed by SQL.
            let next_is_sql = lines.get(i + 1).is_none_or(|l| !l.starts_with("--   "));
            if next_is_sql && (!shown.is_empty() || i + 1 == lines.len()) && !sql.trim().is_empty() {
                output = run_sql(dir.path(), &sql, &at);
                assert_shown(&shown, &output, &at);
                checked += shown.len();
                sql.clear();
                shown.clear();
            }
        }
        if let Some(text) = &block.shown {
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            assert_shown(&lines, &output, &at);
            checked += lines.len();
        }
        blocks_run += 1;
    }
    assert!(
        blocks_run >= 1 && checked >= 1,
        "no SQL example of README.md was checked"
    );
}

#[test]
fn cli_commands_run_and_print_what_the_readme_shows() {
    let cwd = tempfile::tempdir().unwrap();
    let (mut commands_run, mut checked) = (0, 0);
    for block in blocks(README).iter().filter(|b| b.lang == "sh" && !b.not_run) {
        let at = format!("README.md:{}", block.line);
        let mut last = None;
        for args in shell_commands(&block.text).iter().filter_map(|c| cli_args(c)) {
            let o = binary(cwd.path(), &args);
            assert!(
                o.status.success(),
                "{at}: {args:?} failed\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
            commands_run += 1;
            last = Some(String::from_utf8_lossy(&o.stdout).to_string());
        }
        if let Some(text) = &block.shown {
            let output = last.unwrap_or_else(|| panic!("{at}: output shown for a block with no CLI command"));
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            assert_shown(&lines, &output, &at);
            checked += lines.len();
        }
    }
    // The quickstart, the prompt and the CSV example at least.
    assert!(
        commands_run >= 3 && checked >= 1,
        "too few CLI examples of README.md were checked"
    );
}

#[test]
fn readme_conventions() {
    let md = "x\n\n```sql\nSELECT 1;\n```\n\n```text\n| 1 |\n```\n\n<!-- not run: why -->\n```sh\nls\n```\ntext\n```text\nnot shown\n```\n";
    let b = blocks(md);
    assert_eq!(b.len(), 3, "{b:?}");
    assert_eq!((b[0].lang.as_str(), b[0].line), ("sql", 3));
    assert_eq!(b[0].shown.as_deref(), Some("| 1 |\n"));
    assert!(b[1].not_run && b[1].shown.is_none());
    assert_eq!(b[2].lang, "text");

    assert!(matches_line("| plan | Scan: files=1/3, parquet", "Scan: files=1/3, …"));
    assert!(matches_line("a b c", "a … c"));
    assert!(!matches_line("a b c", "c … a"));

    let commands = shell_commands(
        "cargo run --release -- -f x.sql   # a comment\nhidden-partitions -c \"SELECT 'a'\n  , \\\"b\\\"\" \\\n  --format csv\ncargo run --release\n",
    );
    assert_eq!(
        commands,
        vec![
            vec!["cargo", "run", "--release", "--", "-f", "x.sql"],
            vec!["hidden-partitions", "-c", "SELECT 'a'\n  , \"b\"", "--format", "csv"],
            vec!["cargo", "run", "--release"],
        ]
    );
    assert_eq!(
        cli_args(&commands[0]),
        Some(vec!["-f".to_string(), "x.sql".to_string()])
    );
    assert_eq!(cli_args(&commands[2]), Some(vec![]));
    assert_eq!(cli_args(&["cargo".into(), "test".into()]), None);
}
