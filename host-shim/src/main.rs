//! `wasmkeep-shim`: run wasmkeep actors locally.

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use wasmkeep_shim::{Runtime, RuntimeConfig};

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
    Serve(ServeArgs),
    /// Build a Rust guest crate into a component (wasm32-wasip2; falls back to
    /// Debian's rustc-web with build-std when no wasm32 target is installed).
    Build(BuildArgs),
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

#[derive(clap::Args)]
struct ServeArgs {
    /// The app manifest (wasmkeep.toml).
    #[arg(long, default_value = "wasmkeep.toml")]
    manifest: PathBuf,
    /// Address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    /// Where actors' databases go.
    #[arg(long, default_value = ".wasmkeep")]
    data_dir: PathBuf,
    /// Use a virtual clock, moved only through POST /_shim/clock/advance.
    #[arg(long)]
    virtual_clock: bool,
    /// How long one event may run (ms) before it is interrupted.
    #[arg(long, default_value_t = 5000)]
    event_timeout_ms: u64,
    /// How long an idle actor stays resident (ms) before it hibernates.
    #[arg(long, default_value_t = 30_000)]
    idle_timeout_ms: u64,
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
    let result = match cli.command {
        Command::Serve(args) => serve(args),
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

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    if !args.listen.ip().is_loopback() {
        eprintln!(
            "warning: listening on {} (not loopback): the dev server has no authentication",
            args.listen
        );
    }
    let mut config = RuntimeConfig::new(&args.data_dir);
    config.virtual_clock = args.virtual_clock;
    config.event_timeout = Duration::from_millis(args.event_timeout_ms);
    config.idle_timeout = Duration::from_millis(args.idle_timeout_ms);
    let rt = Runtime::new(config)?;
    let started = std::time::Instant::now();
    let manifest = rt.load_manifest(&args.manifest)?;
    eprintln!(
        "loaded app {} ({} classes: {}) in {:?}",
        manifest.app,
        manifest.classes.len(),
        manifest
            .classes
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        started.elapsed()
    );
    let tokio_rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    tokio_rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen).await.with_context(|| {
            format!(
                "cannot listen on {} (is another server using it? pick one with --listen)",
                args.listen
            )
        })?;
        let addr = listener.local_addr()?;
        // Scripts and tests read this line to find the port.
        println!("listening on http://{addr}");
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        let app = wasmkeep_shim::server::router(rt, manifest.app.clone());
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
                }
                eprintln!("stopping");
            })
            .await?;
        eprintln!("stopped");
        anyhow::Ok(())
    })
}
