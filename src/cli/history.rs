//! The prompt's history file, `$HOME/.hidden_partitions_history`.
//!
//! rustyline is built without its file-history feature (which needs another
//! crate), so the file is read and written here: one entry per line, a
//! multi-line statement with its line breaks escaped as `\n` (and `\` as
//! `\\`), the last [`MAX_ENTRIES`] entries kept. History is a convenience:
//! a file that cannot be read or written is ignored.

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

/// Write the last [`MAX_ENTRIES`] of `entries` to `path`, ignoring failure.
pub fn save(path: &Path, entries: &[String]) {
    let skip = entries.len().saturating_sub(MAX_ENTRIES);
    let text: String = entries[skip..].iter().map(|e| escape(e) + "\n").collect();
    let _ = std::fs::write(path, text);
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
        save(&path, &entries);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);
        assert_eq!(load(&path), entries);
    }

    #[test]
    fn keeps_the_last_entries_and_ignores_unwritable_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        let entries: Vec<String> = (0..MAX_ENTRIES + 5).map(|i| format!("SELECT {i};")).collect();
        save(&path, &entries);
        let loaded = load(&path);
        assert_eq!(loaded.len(), MAX_ENTRIES);
        assert_eq!(loaded[0], "SELECT 5;");
        save(&dir.path().join("missing/dir/history"), &entries);
        assert!(load(&dir.path().join("missing/dir/history")).is_empty());
    }
}
