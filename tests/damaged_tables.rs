//! A table whose latest metadata version cannot be read (damaged on disk:
//! a transform parameter out of range, or not JSON at all) costs only
//! itself (issue 21, item 7's follow-up):
//!
//! - `information_schema.columns` (and `.views`) list every other table;
//! - reading or describing it is an error naming the table and the problem;
//! - `DROP TABLE` (and `IF EXISTS`) ends it, keeping its files (they cannot
//!   be proven to be the table's own); `DROP … PURGE` refuses and changes
//!   nothing;
//! - a table of the same name can be created afterwards;
//! - in a schema, the same holds, and `DROP SCHEMA … CASCADE` drops it too.

use std::path::{Path, PathBuf};

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use hidden_partitions::{execute_sql, session};

/// How the latest version of table `bad` is damaged.
#[derive(Debug, Clone, Copy)]
enum Damage {
    /// `bucket[16]` → `bucket[0]` (valid JSON, refused by the loader's checks).
    BucketZero,
    /// The version file is cut short (not JSON).
    Truncated,
}

impl Damage {
    const ALL: [Damage; 2] = [Damage::BucketZero, Damage::Truncated];

    /// Words the error must contain to name the problem.
    fn problem(self) -> &'static str {
        match self {
            Damage::BucketZero => "bucket[0]",
            Damage::Truncated => "EOF",
        }
    }
}

async fn text(ctx: &SessionContext, sql: &str) -> String {
    let results = execute_sql(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    match results.last() {
        Some(r) => pretty_format_batches(&r.batches).unwrap().to_string(),
        None => String::new(),
    }
}

async fn error(ctx: &SessionContext, sql: &str) -> String {
    execute_sql(ctx, sql)
        .await
        .err()
        .unwrap_or_else(|| panic!("{sql} succeeded"))
        .to_string()
}

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A warehouse with tables `good` and `bad` (two versions, rows in both),
/// `bad`'s latest version damaged; `location` puts `bad` at a `LOCATION`.
async fn warehouse(damage: Damage, location: Option<&Path>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let clause = location.map_or(String::new(), |l| format!(" LOCATION '{}'", l.display()));
    execute_sql(
        &ctx,
        &format!(
            "CREATE TABLE good (id BIGINT, s VARCHAR) PARTITIONED BY (bucket(4, id));
             INSERT INTO good VALUES (1, 'a'), (2, 'b');
             CREATE TABLE bad (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(16, id)){clause};
             INSERT INTO bad VALUES (1, 'x'), (2, 'y')"
        ),
    )
    .await
    .unwrap();
    let table_dir = location.map_or_else(|| dir.path().join("bad"), Path::to_path_buf);
    let latest = table_dir.join("metadata/v2.metadata.json");
    let json = std::fs::read_to_string(&latest).unwrap();
    assert!(json.contains("bucket[16]"), "{json}");
    let damaged = match damage {
        Damage::BucketZero => json.replace("bucket[16]", "bucket[0]"),
        Damage::Truncated => json[..json.len() / 2].to_string(),
    };
    std::fs::write(&latest, damaged).unwrap();
    (dir, table_dir)
}

#[tokio::test]
async fn a_damaged_table_does_not_break_information_schema_columns() {
    for damage in Damage::ALL {
        let (dir, _) = warehouse(damage, None).await;
        let ctx = session(dir.path()).await.unwrap();
        let columns = text(
            &ctx,
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position",
        )
        .await;
        assert!(
            columns.contains("| good       | id ") && columns.contains("| good       | s "),
            "{damage:?}: {columns}"
        );
        assert!(!columns.contains("bad"), "{damage:?}: {columns}");
        let shown = text(&ctx, "SHOW COLUMNS FROM good").await;
        assert!(shown.contains("id") && shown.contains("Utf8"), "{damage:?}: {shown}");
        let views = text(
            &ctx,
            "SELECT table_name FROM information_schema.views ORDER BY table_name",
        )
        .await;
        assert!(views.contains("good") && !views.contains("bad"), "{damage:?}: {views}");
        // Still listed as a table (item 7), and reading it says what is wrong.
        let listed = text(&ctx, "SHOW TABLES").await;
        assert!(listed.contains("bad"), "{damage:?}: {listed}");
        for sql in [
            "SELECT * FROM bad",
            "DESCRIBE bad",
            "SHOW COLUMNS FROM bad",
            "SELECT count(*) FROM \"bad$files\"",
        ] {
            let e = error(&ctx, sql).await;
            assert!(
                e.contains("table bad") && e.contains("v2.metadata.json") && e.contains(damage.problem()),
                "{damage:?}: {sql}: {e}"
            );
        }
    }
}

#[tokio::test]
async fn a_damaged_warehouse_table_can_be_dropped_and_its_files_are_kept() {
    for (damage, if_exists) in [(Damage::BucketZero, false), (Damage::Truncated, true)] {
        let (dir, table_dir) = warehouse(damage, None).await;
        let before = files_under(&table_dir);
        assert!(before.iter().any(|p| p.extension().is_some_and(|e| e == "parquet")));
        let ctx = session(dir.path()).await.unwrap();
        // PURGE cannot know which files are the table's: refused, nothing changes.
        let e = error(&ctx, "DROP TABLE bad PURGE").await;
        assert!(
            e.contains("DROP TABLE bad PURGE") && e.contains(damage.problem()) && e.contains("DROP TABLE bad"),
            "{damage:?}: {e}"
        );
        assert_eq!(
            files_under(&table_dir),
            before,
            "{damage:?}: a refused PURGE changed files"
        );

        let sql = if if_exists {
            "DROP TABLE IF EXISTS bad"
        } else {
            "DROP TABLE bad"
        };
        let note = text(&ctx, sql).await;
        assert!(note.contains("bad") && note.contains("kept"), "{damage:?}: {note}");
        // Every file the table had stays (a tombstone is added).
        let after = files_under(&table_dir);
        for p in &before {
            assert!(after.contains(p), "{damage:?}: {} was deleted", p.display());
        }
        assert!(
            after.iter().any(|p| p.ends_with("metadata/v3.metadata.json")),
            "{damage:?}: {after:?}"
        );

        let fresh = session(dir.path()).await.unwrap();
        let listed = text(&fresh, "SHOW TABLES").await;
        assert!(
            !listed.contains("bad") && listed.contains("good"),
            "{damage:?}: {listed}"
        );
        let e = error(&fresh, "SELECT * FROM bad").await;
        assert!(e.contains("not found"), "{damage:?}: {e}");
        assert!(text(&fresh, "SELECT count(*) AS n FROM good").await.contains("| 2 "));
        // The name is free again.
        execute_sql(&fresh, "CREATE TABLE bad (n INT); INSERT INTO bad VALUES (7)")
            .await
            .unwrap_or_else(|e| panic!("{damage:?}: {e}"));
        assert!(text(&fresh, "SELECT * FROM bad").await.contains("| 7 "));
    }
}

#[tokio::test]
async fn a_damaged_table_with_a_location_is_unregistered_and_left_as_it_is() {
    let elsewhere = tempfile::tempdir().unwrap();
    let place = elsewhere.path().join("bad_here");
    let (dir, table_dir) = warehouse(Damage::BucketZero, Some(&place)).await;
    let before: Vec<_> = files_under(&table_dir)
        .into_iter()
        .map(|p| (std::fs::read(&p).unwrap(), p))
        .collect();
    let ctx = session(dir.path()).await.unwrap();
    let e = error(&ctx, "DROP TABLE bad PURGE").await;
    assert!(e.contains("DROP TABLE bad PURGE") && e.contains("bucket[0]"), "{e}");
    let note = text(&ctx, "DROP TABLE bad").await;
    assert!(note.contains("bad") && note.contains("kept"), "{note}");
    let after: Vec<_> = files_under(&table_dir)
        .into_iter()
        .map(|p| (std::fs::read(&p).unwrap(), p))
        .collect();
    assert_eq!(after, before, "a plain DROP of a LOCATION table changes nothing there");
    let listed = text(&session(dir.path()).await.unwrap(), "SHOW TABLES").await;
    assert!(!listed.contains("bad") && listed.contains("good"), "{listed}");
}

#[tokio::test]
async fn a_damaged_table_in_a_schema_is_skipped_and_dropped_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path()).await.unwrap();
    execute_sql(
        &ctx,
        "CREATE SCHEMA s;
         CREATE TABLE s.ok (a INT);
         CREATE TABLE s.bad (id BIGINT) PARTITIONED BY (bucket(16, id));
         INSERT INTO s.bad VALUES (1)",
    )
    .await
    .unwrap();
    let latest = dir.path().join("s.db/bad/metadata/v2.metadata.json");
    let json = std::fs::read_to_string(&latest).unwrap();
    std::fs::write(&latest, json.replace("bucket[16]", "bucket[0]")).unwrap();
    let ctx = session(dir.path()).await.unwrap();
    let columns = text(
        &ctx,
        "SELECT table_schema, table_name, column_name FROM information_schema.columns WHERE table_schema = 's'",
    )
    .await;
    assert!(columns.contains("| ok ") && !columns.contains("bad"), "{columns}");
    let e = error(&ctx, "SELECT * FROM s.bad").await;
    assert!(e.contains("table bad") && e.contains("bucket[0]"), "{e}");
    execute_sql(&ctx, "DROP SCHEMA s CASCADE")
        .await
        .unwrap_or_else(|e| panic!("DROP SCHEMA … CASCADE: {e}"));
    let data: Vec<_> = files_under(&dir.path().join("s.db/bad/data"));
    assert!(!data.is_empty(), "the damaged table's files were deleted");
    let schemas = text(
        &session(dir.path()).await.unwrap(),
        "SELECT schema_name FROM information_schema.schemata",
    )
    .await;
    assert!(!schemas.contains("| s "), "{schemas}");
}
