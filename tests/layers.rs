//! Each layer only looks down: the imports that once went up (`table/` →
//! `provider/`, `error.rs` ↔ `store/`, `manifest/` → `table/`) must not come
//! back.

use std::path::{Path, PathBuf};

fn sources(under: &Path) -> Vec<PathBuf> {
    if under.is_file() {
        return vec![under.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(under).unwrap() {
        files.extend(sources(&entry.unwrap().path()));
    }
    files
}

/// The lines of `layer` (a file or folder under `src/`) that import one of
/// `above` (`crate::<module>` outside comments).
fn upward_imports(layer: &str, above: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for file in sources(&root.join(layer)) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for module in above {
                let path = format!("crate::{module}");
                let hit = code
                    .match_indices(&path)
                    .any(|(at, _)| !code[at + path.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'));
                if hit {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    found
}

/// Fails, naming the lines, when `layer` imports one of `above`.
fn assert_looks_down(layer: &str, above: &[&str]) {
    let found = upward_imports(layer, above);
    assert!(
        found.is_empty(),
        "{layer} imports a layer above it:\n{}",
        found.join("\n")
    );
}

#[test]
fn table_does_not_import_the_layers_above_it() {
    assert_looks_down(
        "table",
        &["provider", "catalog", "sql", "serve", "optimizer", "session"],
    );
}

#[test]
fn plan_is_below_provider_and_table() {
    assert_looks_down(
        "plan",
        &["provider", "table", "catalog", "sql", "serve", "optimizer", "formats"],
    );
}

#[test]
fn errors_import_no_store() {
    assert_looks_down(
        "error.rs",
        &["store", "table", "provider", "catalog", "manifest", "spec"],
    );
}

#[test]
fn manifests_do_not_import_table() {
    assert_looks_down("manifest", &["table", "provider", "plan", "catalog", "sql", "serve"]);
}

#[test]
fn the_server_is_one_room_above_the_session() {
    // serve/ holds the REST catalog's routes and operations; nothing below
    // it imports it, and the catalog does not reach back up to the session.
    for layer in [
        "session.rs",
        "sql",
        "catalog",
        "provider",
        "formats",
        "table",
        "iceberg",
        "store",
        "spec",
    ] {
        assert_looks_down(layer, &["serve"]);
    }
    assert_looks_down("catalog", &["session", "sql", "cli"]);
}

#[test]
fn provider_and_formats_are_below_catalog_and_optimizer() {
    assert_looks_down(
        "provider",
        &["catalog", "optimizer", "formats", "sql", "serve", "session"],
    );
    assert_looks_down("formats", &["catalog", "optimizer", "sql", "serve", "session"]);
}

#[test]
fn spec_and_config_know_no_table() {
    assert_looks_down(
        "spec",
        &[
            "table",
            "plan",
            "manifest",
            "store",
            "provider",
            "catalog",
            "formats",
            "iceberg",
            "sql",
            "serve",
            "optimizer",
        ],
    );
    assert_looks_down(
        "config.rs",
        &[
            "table",
            "spec",
            "plan",
            "manifest",
            "store",
            "provider",
            "catalog",
            "formats",
            "sql",
            "serve",
            "optimizer",
        ],
    );
}

#[test]
fn the_iceberg_format_knows_no_table_or_session() {
    assert_looks_down(
        "iceberg",
        &[
            "table",
            "plan",
            "provider",
            "catalog",
            "sql",
            "serve",
            "optimizer",
            "session",
            "cli",
        ],
    );
}

/// The commit protocol writes the files a hook gives it (`BeforeVersion`,
/// the manifest lists): it knows no manifest and no table. It encodes the
/// version file with `iceberg::json`, the format below it.
#[test]
fn the_commit_protocol_knows_no_manifest_or_table() {
    assert_looks_down(
        "store",
        &[
            "manifest",
            "functions",
            "expr",
            "plan",
            "table",
            "provider",
            "formats",
            "catalog",
            "sql",
            "serve",
        ],
    );
}

/// The rooms from top to bottom, as `docs/ARCHITECTURE.md` draws them:
/// (module name, file or folder under `src/`).
const ROOMS: &[(&str, &str)] = &[
    ("cli", "cli"),
    ("ballista", "ballista"),
    ("serve", "serve"),
    ("session", "session.rs"),
    ("sql", "sql"),
    ("catalog", "catalog"),
    ("optimizer", "optimizer"),
    ("formats", "formats"),
    ("provider", "provider"),
    ("table", "table"),
    ("plan", "plan"),
    ("manifest", "manifest"),
    ("expr", "expr"),
    ("functions", "functions"),
    ("store", "store"),
    ("iceberg", "iceberg"),
    ("spec", "spec"),
    ("config", "config.rs"),
    ("error", "error.rs"),
    ("variant", "variant"),
    ("transform", "transform"),
    ("values", "values"),
];

/// Every room imports only the rooms below it in [`ROOMS`]: no import runs
/// up, so no circle can form across rooms (see ARCHITECTURE.md, "What may
/// import what").
#[test]
fn every_room_imports_only_rooms_below_it() {
    let mut found = Vec::new();
    for (i, (_, path)) in ROOMS.iter().enumerate() {
        let above: Vec<&str> = ROOMS[..i].iter().map(|(module, _)| *module).collect();
        found.extend(upward_imports(path, &above));
    }
    assert!(
        found.is_empty(),
        "{} imports run up the rooms:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn every_room_is_in_the_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&root).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let top = ["main.rs", "lib.rs", "slt.rs", "bin"].contains(&name.as_str());
        assert!(
            top || ROOMS.iter().any(|(_, path)| *path == name),
            "src/{name} is in no room of the order (tests/layers.rs ROOMS, docs/ARCHITECTURE.md)"
        );
    }
}

#[test]
fn the_check_finds_an_import() {
    // The check itself must be able to fail: provider/ does import table/.
    assert!(!upward_imports("provider", &["table"]).is_empty());
}
