//! `wasmkeep-shim`: run wasmkeep actors locally.

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_shim::Cluster;
use wasmkeep_shim::bucket::LocalDirBucket;
use wasmkeep_shim::clock::{Clock, SystemClock, VirtualClock};
use wasmkeep_shim::{Manifest, Mode, Runtime, RuntimeConfig};

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

/// Where the operator commands find a data directory and a cluster's bucket.
#[derive(clap::Args)]
struct BucketArgs {
    /// The data directory `serve` used (a cluster's bucket is `<data-dir>/bucket`).
    #[arg(long, default_value = ".wasmkeep")]
    data_dir: PathBuf,
    /// The bucket directory, when it is not `<data-dir>/bucket`.
    #[arg(long)]
    bucket: Option<PathBuf>,
}

impl BucketArgs {
    /// The bucket directory these arguments name.
    fn bucket_dir(&self) -> PathBuf {
        self.bucket.clone().unwrap_or_else(|| self.data_dir.join("bucket"))
    }

    /// The cluster's bucket, or a message saying where it was looked for and
    /// what to pass; `what` says why the command needs one.
    fn open(&self, what: &str) -> Result<LocalDirBucket, String> {
        let dir = self.bucket_dir();
        if !dir.is_dir() {
            return Err(format!(
                "no bucket at {}: {what} works on a cluster's bucket. Point --data-dir at a \
                 `serve --mode cluster` data directory, or --bucket at the bucket",
                dir.display()
            ));
        }
        Ok(LocalDirBucket::new(dir, Arc::new(SystemClock)))
    }
}

#[derive(clap::Args)]
struct AppDeleteArgs {
    /// The app, `tenant/app`.
    #[arg(long)]
    app: String,
    #[command(flatten)]
    place: BucketArgs,
    /// How long to wait for the nodes to stop serving the app, in seconds.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(0..=3000))]
    wait: u64,
    /// Remove the data even while nodes still look live.
    #[arg(long)]
    force: bool,
}

#[derive(clap::Args)]
struct VerifyArgs {
    #[command(flatten)]
    place: BucketArgs,
    /// Keep the finished report in FILE; a later run with the same FILE only
    /// replays it (exit 3). Remove FILE to sweep again.
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct DeleteArgs {
    /// The app, `tenant/app`.
    #[arg(long)]
    app: String,
    /// The actor, `class/name`.
    actor: String,
    #[command(flatten)]
    place: BucketArgs,
    /// How long to wait for the outcome, in seconds (at most 3000, below the
    /// request's one-hour expiry).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(0..=3000))]
    wait: u64,
    /// Write the request and return at once (exit 4, "requested").
    #[arg(long, conflicts_with = "wait")]
    no_wait: bool,
}

#[derive(clap::Args)]
struct StatusArgs {
    /// The app, `tenant/app`.
    #[arg(long)]
    app: String,
    /// The actor, `class/name`.
    actor: String,
    #[command(flatten)]
    place: BucketArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
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
    /// single (one node, local files) or cluster (nodes sharing a bucket); default: the manifest's `mode`.
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// How many nodes a cluster has (default: the manifest's `nodes`, or 2). Node i listens on the port + i - 1.
    #[arg(long)]
    nodes: Option<usize>,
    /// The bucket directory of a cluster (default: <data-dir>/bucket).
    #[arg(long)]
    bucket: Option<PathBuf>,
    /// `class=limit` (e.g. `carts=7d`; s, m, h, d; at least 1h): overrides the
    /// manifest's `expire-after-idle` for that class; `carts=` removes it.
    /// Repeat for more classes. Idle expiry runs in cluster mode.
    #[arg(long = "expire-after-idle", value_name = "CLASS=LIMIT")]
    expire_after_idle: Vec<String>,
    /// Cluster: use the name of an app that was deleted (`app delete`) again:
    /// removes its tombstone, refused while anything else of it remains.
    #[arg(long)]
    recreate: bool,
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
        Command::Actor(ActorCommand::Status(args)) => match status(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Actor(ActorCommand::Delete(args)) => return operator_delete(&args),
        Command::Verify(args) => return verify(&args),
        Command::App(AppCommand::Delete(args)) => return app_delete(&args),
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
    let manifest = Manifest::load(&args.manifest)?;
    let mode = args.mode.unwrap_or(manifest.mode);
    let nodes = match (mode, args.nodes) {
        (Mode::Single, Some(n)) if n != 1 => anyhow::bail!("--nodes {n} needs --mode cluster"),
        (_, Some(n)) if !(1..=16).contains(&n) => anyhow::bail!("--nodes {n}: a local cluster has 1 to 16 nodes"),
        (Mode::Single, _) => 1,
        (Mode::Cluster, n) => n.unwrap_or(manifest.nodes.max(2)),
    };
    let config_for = |dir: PathBuf| {
        let mut config = RuntimeConfig::new(dir);
        config.virtual_clock = args.virtual_clock;
        config.event_timeout = Duration::from_millis(args.event_timeout_ms);
        config.idle_timeout = Duration::from_millis(args.idle_timeout_ms);
        config
    };
    let started = std::time::Instant::now();
    let runtimes: Vec<Runtime> = match mode {
        Mode::Single => vec![Runtime::new(config_for(args.data_dir.clone()))?],
        Mode::Cluster => {
            let clock: Arc<dyn Clock> = if args.virtual_clock {
                Arc::new(VirtualClock::default())
            } else {
                Arc::new(SystemClock)
            };
            let bucket_dir = args.bucket.clone().unwrap_or_else(|| args.data_dir.join("bucket"));
            let bucket = Arc::new(LocalDirBucket::new(bucket_dir.clone(), clock.clone()));
            if let Some(t) = wasmkeep_shim::app_delete::read_tombstone(bucket.as_ref(), &manifest.app)? {
                if args.recreate {
                    wasmkeep_shim::app_delete::recreate(bucket.as_ref(), &manifest.app)?;
                    eprintln!(
                        "app {} deleted at {} ms is created again (--recreate)",
                        manifest.app, t.at_ms
                    );
                } else {
                    // A node refusing to start on a tombstone removes its local files of the app too.
                    for i in 1..=nodes {
                        let mut dir = args.data_dir.join(format!("node-{i}")).join("state");
                        for part in manifest.app.split('/') {
                            dir.push(part);
                        }
                        let _ = std::fs::remove_dir_all(dir);
                    }
                    anyhow::bail!(
                        "app {} was deleted (at {} ms, by {}): pass --recreate to use the name again",
                        manifest.app,
                        t.at_ms,
                        t.by
                    );
                }
            }
            let cluster = Cluster::new(bucket, clock);
            eprintln!("cluster of {nodes} nodes sharing the bucket {}", bucket_dir.display());
            (1..=nodes)
                .map(|i| {
                    Runtime::new_node(
                        config_for(args.data_dir.join(format!("node-{i}"))),
                        cluster.clone(),
                        &format!("node-{i}"),
                    )
                })
                .collect::<Result<_, _>>()?
        }
    };
    let mut limits = manifest.expire_after_idle.clone();
    for spec in &args.expire_after_idle {
        let (class, limit) = spec.split_once('=').with_context(|| {
            format!("--expire-after-idle {spec:?}: write CLASS=LIMIT, e.g. carts=7d (carts= removes it)")
        })?;
        anyhow::ensure!(
            manifest.classes.iter().any(|c| c.name == class),
            "--expire-after-idle {spec:?}: the manifest has no class {class:?}"
        );
        if limit.is_empty() {
            limits.remove(class);
        } else {
            let d = wasmkeep_shim::parse_idle_limit(limit)
                .map_err(|e| anyhow::anyhow!("--expire-after-idle {spec:?}: {e}"))?;
            limits.insert(class.to_owned(), d);
        }
    }
    if !limits.is_empty() && mode == Mode::Single {
        eprintln!("note: expire-after-idle applies in cluster mode (--mode cluster); a single node keeps idle actors");
    }
    for rt in &runtimes {
        rt.add_app(&manifest.app, &manifest.classes)?;
        for (class, limit) in &limits {
            rt.set_expire_after_idle(&manifest.app, class, Some(*limit))?;
        }
    }
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
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let mut servers = Vec::new();
        let nodes = runtimes.clone();
        for (i, rt) in runtimes.into_iter().enumerate() {
            // Node i listens on the given port + i (or on a free port when it is 0).
            let mut addr = args.listen;
            if addr.port() != 0 {
                addr.set_port(addr.port() + u16::try_from(i)?);
            }
            let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
                format!("cannot listen on {addr} (is another server using it? pick one with --listen)")
            })?;
            let bound = listener.local_addr()?;
            // Scripts and tests read these lines to find the ports.
            match rt.node_id() {
                Some(node) => println!("listening on http://{bound} ({node})"),
                None => println!("listening on http://{bound}"),
            }
            use std::io::Write as _;
            let _ = std::io::stdout().flush();
            let app = wasmkeep_shim::server::router(rt, manifest.app.clone());
            let mut stop = stop_rx.clone();
            servers.push(tokio::spawn(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stop.changed().await;
                    })
                    .await
            }));
        }
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        // A cluster's nodes stop serving a deleted app by themselves (its tombstone);
        // then serve stops too, and exits with an error.
        let app_name = manifest.app.clone();
        let watched = nodes.clone();
        let app_deleted = async move {
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                if watched.iter().all(|rt| rt.app_stopped(&app_name)) {
                    return;
                }
            }
        };
        let deleted = tokio::select! {
            _ = tokio::signal::ctrl_c() => false,
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => false,
            () = app_deleted => true,
        };
        // The ordered shutdown: queued events answered 503 at once, running ones
        // finish, sockets closed with 1001, actors released; then the servers
        // stop; "stopped" comes last, once all of it is done.
        eprintln!("stopping");
        let mut closed = 0;
        let mut released = 0;
        for s in futures_util::future::join_all(nodes.iter().map(Runtime::shutdown_async)).await {
            closed += s.sockets_closed;
            released += s.actors_released;
        }
        let _ = stop_tx.send(true);
        for s in servers {
            s.await??;
        }
        eprintln!("stopped ({closed} socket(s) closed with 1001, {released} actor(s) released)");
        anyhow::ensure!(
            !deleted,
            "app {} was deleted (app delete): its nodes stopped serving it and removed their local files",
            manifest.app
        );
        anyhow::Ok(())
    })
}

fn app_delete(args: &AppDeleteArgs) -> std::process::ExitCode {
    use std::process::ExitCode;
    use wasmkeep_shim::app_delete::{remove_data, serving_nodes, write_tombstone};
    let fail = |code: u8, msg: String| {
        eprintln!("error: {msg}");
        ExitCode::from(code)
    };
    if let Err(e) = wasmkeep_shim::address::validate_app_name(&args.app) {
        return fail(2, e);
    }
    if args.app == "default/default" {
        println!("refused: default/default is the implicit app of nodes that follow no deploys; it cannot be deleted");
        return ExitCode::from(1);
    }
    let bucket = match args.place.open("an app delete") {
        Ok(b) => b,
        Err(e) => return fail(2, e),
    };
    let who = std::env::var("USER").unwrap_or_else(|_| "operator".into());
    let tomb = match write_tombstone(&bucket, &args.app, &who, SystemClock.now_ms()) {
        Ok(t) => t,
        Err(e) => return fail(2, e.to_string()),
    };
    println!(
        "tombstone: app {} deleted at {} ms by {}",
        args.app, tomb.at_ms, tomb.by
    );
    let until = std::time::Instant::now() + Duration::from_secs(args.wait);
    let mut said = false;
    let live = loop {
        let live = match serving_nodes(&bucket, &args.app, SystemClock.now_ms()) {
            Ok(l) => l,
            Err(e) => return fail(2, e.to_string()),
        };
        if live.is_empty() || args.force || std::time::Instant::now() >= until {
            break live;
        }
        if !said {
            println!("waiting for the node(s) serving it to stop: {}", live.join(", "));
            said = true;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if !live.is_empty() && !args.force {
        println!(
            "the tombstone is written and nothing was removed: node(s) {} still serve the app. \
             Run the command again to resume, or pass --force",
            live.join(", ")
        );
        return ExitCode::from(4);
    }
    match remove_data(&bucket, &args.app) {
        Ok(n) => {
            println!(
                "Deleted app {} ({n} key(s) removed; the tombstone stays: `serve --recreate` uses the name again)",
                args.app
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(2, e.to_string()),
    }
}

fn verify(args: &VerifyArgs) -> std::process::ExitCode {
    use std::process::ExitCode;
    use wasmkeep_shim::verify::{Checkpoint, Report, sweep_bucket, sweep_node_dir};
    let print = |report: &Report, note: Option<String>| {
        if args.json {
            println!("{}", serde_json::json!({ "report": report, "note": note }));
            return;
        }
        if let Some(n) = &note {
            println!("{n}");
        }
        for o in &report.orphans {
            println!("orphan: {}: {}", o.kind, o.at);
        }
        for f in &report.failures {
            println!("not verified: {f}");
        }
        match report.exit_code() {
            0 => println!("clean"),
            1 => println!("{} orphan(s); nothing was deleted", report.orphans.len()),
            _ => println!("incomplete: the sweep could not see everything, so it reports nothing as clean"),
        }
    };
    if let Some(cp) = &args.checkpoint
        && let Ok(text) = std::fs::read_to_string(cp)
    {
        return match serde_json::from_str::<Checkpoint>(&text) {
            Ok(c) => {
                print(
                    &c.report,
                    Some(format!(
                        "replayed from the checkpoint {} (a sweep that finished at {} ms); remove it to sweep again",
                        cp.display(),
                        c.finished_at
                    )),
                );
                ExitCode::from(3)
            }
            Err(e) => {
                eprintln!(
                    "error: the checkpoint {} is not one this command wrote ({e}); remove it",
                    cp.display()
                );
                ExitCode::from(2)
            }
        };
    }
    let data_dir = &args.place.data_dir;
    if !data_dir.is_dir() && args.place.bucket.is_none() {
        eprintln!(
            "error: no data directory at {}: point --data-dir at the directory `serve` used",
            data_dir.display()
        );
        return ExitCode::from(2);
    }
    let mut report = Report::default();
    let bucket_dir = args.place.bucket_dir();
    let now = wasmkeep_shim::clock::Clock::now_ms(&SystemClock);
    let bucket = bucket_dir
        .is_dir()
        .then(|| LocalDirBucket::new(bucket_dir, Arc::new(SystemClock)));
    if let Some(b) = &bucket {
        sweep_bucket(b, now, &mut report);
        // A cluster's nodes keep their local files in <data-dir>/node-<i>.
        let mut nodes: Vec<PathBuf> = std::fs::read_dir(data_dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("node-")))
            .collect();
        nodes.sort();
        for n in nodes {
            sweep_node_dir(&n, Some(b), &mut report);
        }
    } else {
        sweep_node_dir(data_dir, None, &mut report);
    }
    print(&report, None);
    if let Some(cp) = &args.checkpoint
        && report.exit_code() != 2
    {
        let c = Checkpoint {
            finished_at: now,
            report: report.clone(),
        };
        if let Err(e) = serde_json::to_string(&c)
            .map_err(std::io::Error::other)
            .and_then(|t| std::fs::write(cp, t))
        {
            eprintln!("error: writing the checkpoint {}: {e}", cp.display());
            return ExitCode::from(2);
        }
    }
    ExitCode::from(report.exit_code())
}

fn operator_delete(args: &DeleteArgs) -> std::process::ExitCode {
    use std::process::ExitCode;
    use wasmkeep_shim::operator::{RequestError, Waited, request_delete, wait_for_outcome};
    let fail = |code: u8, msg: String| {
        eprintln!("error: {msg}");
        ExitCode::from(code)
    };
    if let Err(e) = wasmkeep_shim::address::validate_app_name(&args.app) {
        return fail(2, e);
    }
    let Some((class, name)) = args.actor.split_once('/') else {
        return fail(2, format!("the actor is `class/name`, got {:?}", args.actor));
    };
    let bucket = match args.place.open("an operator delete (a request in the bucket)") {
        Ok(b) => b,
        Err(e) => return fail(2, e),
    };
    let key = wasmkeep_shim::ActorKey::new(args.app.clone(), class, name);
    let req = match request_delete(&bucket, &key) {
        Ok(r) => r,
        Err(RequestError::NoSuchActor(_)) => {
            println!("no such actor");
            return ExitCode::from(1);
        }
        Err(e @ RequestError::AppDeleted(_)) => {
            println!("refused: {e}");
            return ExitCode::from(1);
        }
        Err(e) => return fail(2, e.to_string()),
    };
    let wait = if args.no_wait { 0 } else { args.wait };
    match wait_for_outcome(&bucket, &req, std::time::Duration::from_secs(wait)) {
        Ok(Waited::Deleted) => {
            println!("Deleted");
            ExitCode::SUCCESS
        }
        Ok(Waited::NoSuchActor) => {
            println!("no such actor");
            ExitCode::from(1)
        }
        Ok(Waited::Dropped) => {
            println!(
                "dropped: the request went without an outcome (expired, or not an actor address); nothing is known to be deleted"
            );
            ExitCode::from(3)
        }
        Ok(Waited::Pending { until }) => {
            println!(
                "requested; the cluster keeps trying until {} (request {})",
                format_ms(until),
                req.id
            );
            ExitCode::from(4)
        }
        Err(e) => fail(2, format!("waiting for the outcome: {e}")),
    }
}

/// Milliseconds since the epoch as UTC `YYYY-MM-DD HH:MM:SS UTC` (SQLite's
/// date functions, which the host links anyway).
fn format_ms(ms: u64) -> String {
    rusqlite::Connection::open_in_memory()
        .and_then(|c| {
            c.query_row(
                "SELECT datetime(?1 / 1000, 'unixepoch') || ' UTC'",
                [i64::try_from(ms).unwrap_or(i64::MAX)],
                |r| r.get::<_, String>(0),
            )
        })
        .unwrap_or_else(|_| format!("{ms} ms since the epoch"))
}

fn status(args: &StatusArgs) -> anyhow::Result<std::process::ExitCode> {
    use wasmkeep_shim::deletion::DeletionStatus;
    use wasmkeep_shim::replica::deletion_status;
    wasmkeep_shim::address::validate_app_name(&args.app).map_err(anyhow::Error::msg)?;
    let (class, name) = args
        .actor
        .split_once('/')
        .ok_or_else(|| anyhow::anyhow!("the actor is `class/name`, got {:?}", args.actor))?;
    let (dir, data_dir) = (args.place.bucket_dir(), &args.place.data_dir);
    let key = wasmkeep_shim::ActorKey::new(args.app.clone(), class, name);
    let st = if dir.is_dir() {
        deletion_status(&LocalDirBucket::new(dir, Arc::new(SystemClock)), &key)
    } else if args.place.bucket.is_none() && data_dir.join("state").is_dir() {
        // A single node's data directory: its removal records.
        let store = wasmkeep_shim::state_store::LocalStateStore::new(data_dir, Arc::default());
        wasmkeep_shim::state_store::deletion_status(&store, &key)
    } else {
        anyhow::bail!(
            "no bucket at {} and no single-node state under {}: point --data-dir at the data directory `serve` used, or --bucket at a cluster's bucket",
            dir.display(),
            data_dir.display()
        );
    };
    if args.json {
        println!("{}", serde_json::to_string(&st)?);
    } else {
        match &st {
            DeletionStatus::Deleted { at_ms, how } => println!("deleted at {at_ms} ({how})"),
            DeletionStatus::NotDeleted => println!("not deleted"),
            DeletionStatus::Unknown { reason } => println!("unknown: {reason}"),
        }
    }
    Ok(match st {
        DeletionStatus::Unknown { .. } => std::process::ExitCode::from(2),
        _ => std::process::ExitCode::SUCCESS,
    })
}
