//! The prompt's history file, `$HOME/.hidden_partitions_history`.
//!
//! rustyline is built without its file-history feature (which needs another
//! crate), so the file is read and written here: one entry per line, a
//! multi-line statement with its line breaks escaped as `\n` (and `\` as
//! `\\`). Each entry is appended as it is typed, so prompts open at once
//! each add theirs and none loses another's; the file is cut back to the
//! last [`MAX_ENTRIES`] when a prompt opens with twice as many. History is
//! a convenience: a file that cannot be read or written is ignored.

use std::path::{Path, PathBuf};

/// Entries kept in the file.
pub const MAX_ENTRIES: usize = 1000;

/// Where the history lives: `$HOME/.hidden_partitions_history`.
pub fn default_path() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| Path::new(&h).join(".hidden_partitions_history"))
}

/// The entries stored in `path`, oldest first; none if it cannot be read.
pub fn load(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let entries: Vec<String> = text.lines().filter(|l| !l.is_empty()).map(unescape).collect();
    let skip = entries.len().saturating_sub(MAX_ENTRIES);
    entries.into_iter().skip(skip).collect()
}

/// Add `entry` at the end of `path` (one write, so lines of prompts open
/// at once do not mix), ignoring failure.
pub fn append(path: &Path, entry: &str) {
    use std::io::Write;
    let line = escape(entry) + "\n";
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = file.write_all(line.as_bytes());
    }
}

/// Cut `path` back to its last [`MAX_ENTRIES`] entries once it holds twice
/// as many (written aside, then renamed over it), ignoring failure.
pub fn trim(path: &Path) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    if lines.len() <= 2 * MAX_ENTRIES {
        return;
    }
    let kept: String = lines[lines.len() - MAX_ENTRIES..]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    let aside = path.with_extension(format!("trim-{}", std::process::id()));
    if std::fs::write(&aside, kept).is_ok() && std::fs::rename(&aside, path).is_err() {
        let _ = std::fs::remove_file(&aside);
    }
}

fn escape(entry: &str) -> String {
    entry.replace('\\', "\\\\").replace('\n', "\\n")
}

fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some('n')) => {
                out.push('\n');
                chars.next();
            }
            ('\\', Some('\\')) => {
                out.push('\\');
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_entries_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        let entries = vec![
            "SELECT 1;".to_string(),
            "SELECT 'a\\nb' -- not a line break\n  , 2;".to_string(),
            "\\d t".to_string(),
        ];
        for e in &entries {
            append(&path, e);
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);
        assert_eq!(load(&path), entries);
    }

    #[test]
    fn two_prompts_at_once_keep_each_others_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        let first = load(&path);
        append(&path, "SELECT 1;");
        let second = load(&path);
        append(&path, "SELECT 2;");
        append(&path, "SELECT 3;");
        assert!(first.is_empty() && second.len() == 1);
        assert_eq!(load(&path), ["SELECT 1;", "SELECT 2;", "SELECT 3;"]);
    }

    #[test]
    fn keeps_the_last_entries_and_ignores_unwritable_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        for i in 0..2 * MAX_ENTRIES {
            append(&path, &format!("SELECT {i};"));
        }
        trim(&path);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2 * MAX_ENTRIES);
        append(&path, "SELECT last;");
        let loaded = load(&path);
        assert_eq!(loaded.len(), MAX_ENTRIES);
        assert_eq!(loaded[0], format!("SELECT {};", MAX_ENTRIES + 1));
        trim(&path);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), MAX_ENTRIES);
        assert_eq!(load(&path), loaded);
        append(&dir.path().join("missing/dir/history"), "SELECT 1;");
        assert!(load(&dir.path().join("missing/dir/history")).is_empty());
    }
}
