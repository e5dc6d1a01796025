//! `hidden-partitions`: SQL over a warehouse of partition-aware tables.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};
use hidden_partitions::cli::run::{Printing, run_file, run_sql};
use hidden_partitions::cli::{MaxRows, NullText, OutputFormat, repl};
use hidden_partitions::{StorageOptions, Warehouse, session_with};

/// The allocator of the command-line tool: long-running (a REST catalog
/// server), it keeps allocating as fast as when it started.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "hidden-partitions",
    version,
    about = "Run SQL against a warehouse of hidden-partitioned tables",
    after_help = "Without -c or -f a prompt opens; \\? there lists its commands."
)]
struct Args {
    /// Warehouse holding the tables: a directory (created if missing) or a
    /// URL such as s3://bucket/prefix, gs://bucket/prefix, az://container/prefix
    #[arg(long, default_value = "./warehouse", global = true)]
    warehouse: String,
    /// Object store setting KEY=VALUE (e.g. aws_endpoint=http://127.0.0.1:9000,
    /// aws_region=eu-west-1); may repeat. The standard AWS_*, GOOGLE_* and
    /// AZURE_* environment variables are read as well.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", global = true)]
    storage_option: Vec<String>,
    /// Use the Iceberg catalog at this URL: sqlite:PATH, postgresql://user@host/db
    /// (pyiceberg's SqlCatalog layout), or http(s)://… (an Iceberg REST catalog);
    /// its namespaces are the schemas
    #[arg(long, value_name = "URL")]
    catalog: Option<String>,
    #[command(subcommand)]
    action: Option<Action>,
    /// SQL to run: one or more `;`-separated statements (may repeat)
    #[arg(short = 'c', long = "command")]
    command: Vec<String>,
    /// File of SQL statements to run (may repeat)
    #[arg(short = 'f', long = "file")]
    file: Vec<PathBuf>,
    /// How to print results
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Rows printed per result: a number, or `all` (default: 40 when the
    /// output is a terminal, all when it is a file or a pipe)
    #[arg(long = "maxrows", value_name = "N|all")]
    max_rows: Option<MaxRows>,
    /// How NULL prints in table and CSV output (default: an empty field;
    /// JSON always prints null)
    #[arg(long = "null-value", value_name = "TEXT", default_value = "")]
    null_value: String,
    /// Run statements on the Ballista cluster whose scheduler is at this
    /// URL (df://host:port); it must be a hidden-partitions-scheduler
    #[arg(long, value_name = "URL")]
    ballista: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Serve the warehouse as an Iceberg REST catalog (pyiceberg, DuckDB,
    /// Spark and Trino attach it by its URL)
    Serve {
        /// Address to listen on (127.0.0.1: this machine only; 0.0.0.0 opens
        /// it to the network)
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        #[arg(long, default_value_t = 8181)]
        port: u16,
        /// Require `Authorization: Bearer <TOKEN>` on every request (also
        /// from the environment variable HIDDEN_PARTITIONS_TOKEN)
        #[arg(long, value_name = "TOKEN")]
        token: Option<String>,
        /// Hand clients the store's credentials with each table (by default
        /// only its endpoint and region)
        #[arg(long)]
        vend_credentials: bool,
        /// Let clients place new tables under ROOT (a directory or URL; may
        /// repeat); by default a table's place in the warehouse is its only
        /// location
        #[arg(long = "allow-location", value_name = "ROOT")]
        allow_location: Vec<String>,
        /// Connections served at once; more wait until one closes
        #[arg(long, default_value_t = 256, value_name = "N")]
        max_connections: usize,
    },
}

fn warehouse(args: &Args, matches: &clap::ArgMatches) -> hidden_partitions::Result<Warehouse> {
    let mut options = StorageOptions::new();
    for pair in &args.storage_option {
        let (k, v) = StorageOptions::parse_pair(pair)?;
        options = options.with(k, v);
    }
    // A REST catalog places its tables: without --warehouse nothing is made
    // in the working directory for it.
    let rest = args
        .catalog
        .as_deref()
        .is_some_and(|c| c.starts_with("http://") || c.starts_with("https://"));
    let defaulted = matches.value_source("warehouse") == Some(clap::parser::ValueSource::DefaultValue);
    Warehouse::open_with(&args.warehouse, options, !(rest && defaulted))
}

async fn open(
    args: &Args,
    matches: &clap::ArgMatches,
) -> hidden_partitions::Result<datafusion::prelude::SessionContext> {
    let warehouse = warehouse(args, matches)?;
    match (&args.ballista, &args.catalog) {
        (None, None) => session_with(warehouse).await,
        (None, Some(catalog)) => hidden_partitions::session::session_with_catalog(warehouse, catalog).await,
        (Some(url), None) => remote(url, warehouse).await,
        (Some(_), Some(_)) => Err(hidden_partitions::Error::Invalid(
            "--catalog and --ballista cannot be combined yet".into(),
        )),
    }
}

#[cfg(feature = "ballista")]
async fn remote(url: &str, warehouse: Warehouse) -> hidden_partitions::Result<datafusion::prelude::SessionContext> {
    hidden_partitions::ballista::remote(url, warehouse).await
}

#[cfg(not(feature = "ballista"))]
async fn remote(url: &str, _warehouse: Warehouse) -> hidden_partitions::Result<datafusion::prelude::SessionContext> {
    Err(hidden_partitions::Error::Invalid(format!(
        "--ballista {url}: this hidden-partitions was built without Ballista support; build it with `cargo build --release --features ballista`"
    )))
}

/// One `-c` or `-f`, in command-line order.
enum Script {
    Command(String),
    File(PathBuf),
}

/// The `-c` and `-f` arguments in the order they were given.
fn scripts(matches: &clap::ArgMatches, args: &Args) -> Vec<Script> {
    let at = |id: &str| {
        matches
            .indices_of(id)
            .map(Iterator::collect::<Vec<_>>)
            .unwrap_or_default()
    };
    let mut ordered: Vec<(usize, Script)> = at("command")
        .into_iter()
        .zip(args.command.iter().cloned().map(Script::Command))
        .chain(at("file").into_iter().zip(args.file.iter().cloned().map(Script::File)))
        .collect();
    ordered.sort_by_key(|(index, _)| *index);
    ordered.into_iter().map(|(_, s)| s).collect()
}

#[tokio::main]
async fn main() -> ExitCode {
    let matches = Args::command().get_matches();
    let args = match Args::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    if let Some(Action::Serve {
        host,
        port,
        token,
        vend_credentials,
        allow_location,
        max_connections,
    }) = &args.action
    {
        let options = hidden_partitions::serve::ServeOptions {
            host: host.clone(),
            port: *port,
            token: token.clone().or_else(|| std::env::var("HIDDEN_PARTITIONS_TOKEN").ok()),
            vend_credentials: *vend_credentials,
            allowed_locations: allow_location.clone(),
            max_connections: *max_connections,
            ..Default::default()
        };
        let served = match warehouse(&args, &matches) {
            Ok(w) => hidden_partitions::serve::serve(w, options).await,
            Err(e) => Err(e),
        };
        return match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("Error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let ctx = match open(&args, &matches).await {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let printing = Printing {
        format: args.format,
        timing: false,
        null: NullText(Box::leak(args.null_value.clone().into_boxed_str())),
        max_rows: args.max_rows.unwrap_or(if std::io::stdout().is_terminal() {
            MaxRows::TERMINAL
        } else {
            MaxRows::All
        }),
    };
    if args.command.is_empty() && args.file.is_empty() {
        return ExitCode::from(repl::run(&ctx, printing).await as u8);
    }
    // In the order given, each run when its turn comes (as psql does).
    for script in scripts(&matches, &args) {
        let ok = match script {
            Script::Command(sql) => run_sql(&ctx, &sql, printing).await,
            Script::File(f) => match std::fs::read_to_string(&f) {
                Ok(sql) => run_file(&ctx, &f.display().to_string(), &sql, printing).await,
                Err(e) => {
                    eprintln!("Error: cannot read {}: {e}", f.display());
                    false
                }
            },
        };
        if !ok {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
