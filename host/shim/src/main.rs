//! `wasmkeep-shim`: run wasmkeep actors locally.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

mod broken_pipe;
mod bucket_command;
mod history_commands;
mod http_listener;
mod new_command;
mod new_templates;
mod node_process;
mod operator_commands;
mod progress;
mod serve_command;
mod watch;

use bucket_command::{BucketCheckArgs, bucket_check};
use history_commands::{ForkArgs, HistoryArgs, RestoreArgs, fork_actor, history, restore};
use new_command::{NewArgs, new_project};
use operator_commands::{
    AppDeleteArgs, DeleteArgs, StatusArgs, VerifyArgs, app_delete, operator_delete, status, verify,
};
use serve_command::{ServeArgs, serve};

#[derive(Parser)]
#[command(
    name = "wasmkeep-shim",
    version,
    about = "The local wasmkeep host: serve actor components with SQLite storage and ADR 0028's deletion rules"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve an app's actors over HTTP and WebSockets on 127.0.0.1.
    Serve(Box<ServeArgs>),
    /// Operator commands on actors (cluster mode's bucket).
    #[command(subcommand)]
    Actor(ActorCommand),
    /// Operator commands on apps (cluster mode's bucket).
    #[command(subcommand)]
    App(AppCommand),
    /// The orphan sweep: reports what the deletion rules should have removed and
    /// did not (history before a reset, requests and outcomes past expiry,
    /// `.db.replaced` files, local databases that are not the bucket's head,
    /// alarm index entries of actors without an alarm). Never deletes. Exit 0
    /// clean, 1 orphans found, 2 a listing failed or could not be trusted (fail
    /// closed), 3 the report was only replayed from a finished --checkpoint.
    Verify(VerifyArgs),
    /// Start a project: an actor in Rust, TypeScript, Python or C that builds,
    /// tests in its language's own runner and serves (a manifest, a README of
    /// three commands, a .gitignore). Uses the SDKs of the wasmkeep repository.
    New(NewArgs),
    /// Commands on a bucket named by a URL.
    #[command(subcommand)]
    Bucket(BucketCommand),
    /// Commands for node processes' clusters.
    #[command(subcommand)]
    Cluster(ClusterCommand),
    /// Build a Rust guest crate into a component (wasm32-wasip2; falls back to
    /// Debian's rustc-web with build-std when no wasm32 target is installed).
    Build(BuildArgs),
}

#[derive(Subcommand)]
enum ActorCommand {
    /// Whether an actor was deleted, from positive evidence in the bucket only:
    /// prints `deleted at <ms> (<how>)`, `not deleted`, or `unknown: <why>`
    /// (exit 0, 0, 2). With --json, one JSON object.
    Status(StatusArgs),
    /// Deletes an actor as an operator (ADR 0028 §3), through a request in a
    /// cluster's bucket that a node of the app carries out. Prints `Deleted`
    /// (exit 0), `no such actor` (exit 1, nothing written, or the node found
    /// none), `dropped` (exit 3: the request went without an outcome, nothing
    /// is known to be deleted) or `requested; the cluster keeps trying until
    /// <time>` (exit 4: still pending when the wait ended); exit 2 when the
    /// bucket could not be read or written.
    Delete(DeleteArgs),
    /// An actor's history in a cluster's bucket, oldest first: each
    /// position's bookmark, when it was written and what it is (ADR 064).
    /// Exit 1 when it has none. With --json, the records as JSON.
    History(HistoryArgs),
    /// Puts the state at --to (a bookmark, or a time) on the actor's head as
    /// a new position, so another restore undoes it. Never brings back what
    /// a delete removed. Refused while a node holds the actor (exit 1);
    /// exit 2 when the bucket failed.
    Restore(RestoreArgs),
    /// Starts a new actor (--into, which must not exist) from the state of
    /// another at --to. Exit 1 refused, 2 the bucket failed.
    Fork(ForkArgs),
}

#[derive(Subcommand)]
enum AppCommand {
    /// Deletes an app (ADR 0028 §5): the tombstone first (who and when); the
    /// nodes serving the app stop at their next check (sockets 1001, alarms
    /// stopped, local files removed); once none serves it, every key of the
    /// app in the bucket but the tombstone is removed. Prints `Deleted app …`
    /// (exit 0); `refused` (exit 1); the bucket failed (exit 2); nodes still
    /// serving it when the wait ended (exit 4: the tombstone is written and
    /// nothing removed; run again to resume, or --force).
    Delete(AppDeleteArgs),
}

#[derive(Subcommand)]
enum BucketCommand {
    /// Probes that a store refuses what a cluster relies on it refusing: a
    /// second create of a key, an update with a stale ETag, an update of a
    /// missing key (docs/adr/027). Writes and removes a few objects under
    /// `wasmkeep-bucket-check/`. Prints each probe; exit 0 all refused, 1 the
    /// store accepted one, 2 the store failed or the URL did not open.
    Check(BucketCheckArgs),
}

#[derive(Subcommand)]
enum ClusterCommand {
    /// Makes a test cluster's certificates for TLS between node processes
    /// (docs/clusters.md, ADR 074): a CA of its own (ca.crt, ca.key) and, for
    /// each node, <node>.crt and <node>.key signed by it, naming the node's id
    /// and each --host. Start node i with `serve --tls-cert DIR/<node>.crt
    /// --tls-key DIR/<node>.key --tls-ca DIR/ca.crt`. Keep ca.key away from
    /// the nodes: whoever holds it can make a node.
    Certs(ClusterCertsArgs),
}

#[derive(clap::Args)]
struct ClusterCertsArgs {
    /// The directory to write the files to (made if missing; files of the same names are replaced).
    #[arg(long)]
    out: PathBuf,
    /// The nodes' ids, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "n1,n2,n3")]
    nodes: Vec<String>,
    /// A host (DNS name or IP address) the nodes' peers reach them at; repeat for more.
    /// Default: localhost, 127.0.0.1 and ::1.
    #[arg(long = "host", value_name = "HOST")]
    hosts: Vec<String>,
}

fn cluster_certs(args: &ClusterCertsArgs) -> anyhow::Result<()> {
    let hosts = if args.hosts.is_empty() {
        wasmkeep_shim::cluster_certs::DEFAULT_HOSTS
            .iter()
            .map(|h| (*h).to_owned())
            .collect()
    } else {
        args.hosts.clone()
    };
    let made = wasmkeep_shim::cluster_certs::make(&args.out, &args.nodes, &hosts)?;
    println!("ca {}", made.ca.display());
    for (node, cert, key) in &made.nodes {
        println!("{node} {} {}", cert.display(), key.display());
    }
    Ok(())
}

#[derive(clap::Args)]
struct BuildArgs {
    /// The guest crate's Cargo.toml (or its directory).
    #[arg(long, default_value = "Cargo.toml")]
    manifest_path: PathBuf,
    /// Where to write the component (default: <target dir>/components/<crate>.wasm).
    #[arg(short, long)]
    out: Option<PathBuf>,
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,wasmtime=warn,cranelift=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve(_)) {
        broken_pipe::end_quietly_when_the_reader_goes();
    }
    let result = match cli.command {
        Command::Serve(args) => serve(*args),
        Command::Actor(ActorCommand::Status(args)) => match status(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Actor(ActorCommand::Delete(args)) => return operator_delete(&args),
        Command::Actor(ActorCommand::History(args)) => match history(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Actor(ActorCommand::Restore(args)) => match restore(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Actor(ActorCommand::Fork(args)) => match fork_actor(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Verify(args) => return verify(&args),
        Command::App(AppCommand::Delete(args)) => return app_delete(&args),
        Command::New(args) => new_project(&args),
        Command::Bucket(BucketCommand::Check(args)) => return bucket_check(&args),
        Command::Cluster(ClusterCommand::Certs(args)) => cluster_certs(&args),
        Command::Build(args) => {
            wasmkeep_guest_build::build_rust_guest(&args.manifest_path, args.out.as_deref()).map(|p| {
                println!("{}", p.display());
            })
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
