//! Runs `sql-tests/**/*.slt` (or the files and directories given as
//! arguments: `cargo test --test sqllogictests -- path/to/x.slt`) against a
//! local warehouse, the DML suites (`sql-tests/dml/`) once more with tables
//! that delete, update and merge merge-on-read, then everything once more against a warehouse
//! on the S3 test server when one is configured (`HP_S3_ENDPOINT`; required
//! in CI).

use std::path::PathBuf;
use std::process::ExitCode;

use hidden_partitions::slt::{
    S3Server, collect_files, run_file, run_file_merge_on_read, run_file_on_s3, skipped_without_s3,
};

#[tokio::main]
async fn main() -> ExitCode {
    // libtest-style flags (e.g. --nocapture, --quiet) are accepted and ignored.
    let args: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .collect();
    let roots = if args.is_empty() {
        vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sql-tests")]
    } else {
        args
    };
    let files = match collect_files(&roots) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cannot list test files: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = match S3Server::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        match run_file(file).await {
            Ok(()) => {
                passed += 1;
                println!("ok   {}", file.display());
            }
            Err(e) => {
                failed += 1;
                println!("FAIL {}\n{e}", file.display());
            }
        }
    }
    // The DML suites again, with merge-on-read DELETE, UPDATE and MERGE.
    for file in files.iter().filter(|f| f.components().any(|c| c.as_os_str() == "dml")) {
        match run_file_merge_on_read(file).await {
            Ok(()) => {
                passed += 1;
                println!("ok   {} (merge-on-read)", file.display());
            }
            Err(e) => {
                failed += 1;
                println!("FAIL {} (merge-on-read)\n{e}", file.display());
            }
        }
    }
    match &server {
        Some(server) => {
            for file in &files {
                match run_file_on_s3(file, server).await {
                    Ok(()) => {
                        passed += 1;
                        println!("ok   {} (S3)", file.display());
                    }
                    Err(e) => {
                        failed += 1;
                        println!("FAIL {} (S3)\n{e}", file.display());
                    }
                }
            }
        }
        None => skipped_without_s3("the sqllogictest suite on S3"),
    }
    println!("sqllogictests: {passed} passed, {failed} failed");
    if failed > 0 || files.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
