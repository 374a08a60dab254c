//! `wasmkeep-load`: hostile load against `wasmkeep-shim serve`, run as a
//! separate process the way an outsider would hit it. Not a benchmark: each
//! run checks what the hardening ADR (012) promises and exits 1 when the host
//! broke it.
//!
//! ```text
//! wasmkeep-load names --shim target/release/wasmkeep-shim --names 20000 --connections 32
//! wasmkeep-load ws-flood --shim target/release/wasmkeep-shim --mib 1024
//! ```

mod names;
mod served;
mod ws_flood;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "wasmkeep-load",
    about = "Hostile load against wasmkeep-shim serve (checks, not figures)"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

/// The host under load.
#[derive(Debug, clap::Args)]
struct Target {
    /// The `wasmkeep-shim` binary to serve with.
    #[arg(long, default_value = "target/release/wasmkeep-shim")]
    shim: PathBuf,
    /// The Rust counter component (examples/counter-rust), served as class `counter`.
    #[arg(long, default_value = "target/components/counter-rust.wasm")]
    counter: PathBuf,
    /// The Rust conformance testee, served as class `testee` (it writes
    /// every socket message it gets into its database: a slow consumer).
    #[arg(long, default_value = "target/components/conformance-testee-rust.wasm")]
    testee: PathBuf,
    /// Run serve under this open-files limit (`ulimit -n`); default: the caller's.
    #[arg(long)]
    nofile: Option<u64>,
    /// Fail when the host's peak resident memory (VmHWM) passes this (MiB).
    #[arg(long, default_value_t = 2048)]
    max_rss_mib: u64,
    /// More arguments for `serve`.
    #[arg(long = "serve-arg", allow_hyphen_values = true)]
    serve_args: Vec<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Distinct actor names as fast as N connections can ask: every request
    /// answered 200 or 503 with Retry-After, the host up, memory bounded.
    Names {
        #[command(flatten)]
        target: Target,
        /// How many distinct names.
        #[arg(long, default_value_t = 20_000)]
        names: u64,
        /// Concurrent keep-alive connections.
        #[arg(long, default_value_t = 32)]
        connections: usize,
    },
    /// One client floods one actor's WebSocket without reading: the host's
    /// memory must grow less than `--max-growth-mib`.
    WsFlood {
        #[command(flatten)]
        target: Target,
        /// How much to send (MiB).
        #[arg(long, default_value_t = 1024)]
        mib: u64,
        /// Size of each text message (KiB).
        #[arg(long, default_value_t = 64)]
        message_kib: usize,
        /// The class whose actor gets the flood: `testee` writes each message
        /// into its database (slower than the network), `counter` ignores them.
        #[arg(long, default_value = "testee")]
        class: String,
        /// Fail when the host's resident memory grows more than this (MiB).
        #[arg(long, default_value_t = 100)]
        max_growth_mib: u64,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("wasmkeep-load: cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        match args.command {
            Command::Names {
                target,
                names,
                connections,
            } => names::run(&target, names, connections).await,
            Command::WsFlood {
                target,
                mib,
                message_kib,
                class,
                max_growth_mib,
            } => ws_flood::run(&target, &class, mib, message_kib, max_growth_mib).await,
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wasmkeep-load: FAILED: {e:#}");
            ExitCode::FAILURE
        }
    }
}
