//! `wasmkeep-shim serve`: the dev server over one node or a local cluster.

use anyhow::Context as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_shim::Cluster;
use wasmkeep_shim::clock::{Clock, SystemClock, VirtualClock};
use wasmkeep_shim::{Manifest, Mode, ReadsHere, Runtime, RuntimeConfig};

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// The app manifest (wasmkeep.toml).
    #[arg(long, default_value = "wasmkeep.toml")]
    pub(crate) manifest: PathBuf,
    /// Address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub(crate) listen: SocketAddr,
    /// Where actors' databases go.
    #[arg(long, default_value = ".wasmkeep")]
    pub(crate) data_dir: PathBuf,
    /// Use a virtual clock, moved only through POST /_shim/clock/advance.
    #[arg(long)]
    pub(crate) virtual_clock: bool,
    /// How long one event may run (ms) before it is interrupted; its waits for
    /// the bucket (durable writes and deletes) do not count (ADR 079).
    #[arg(long, default_value_t = 5000)]
    pub(crate) event_timeout_ms: u64,
    /// How long an idle actor stays resident (ms) before it hibernates.
    #[arg(long, default_value_t = 30_000)]
    pub(crate) idle_timeout_ms: u64,
    /// single (one node, local files) or cluster (nodes sharing a bucket); default: the manifest's `mode`.
    #[arg(long, value_enum)]
    pub(crate) mode: Option<Mode>,
    /// How many nodes a cluster has (default: the manifest's `nodes`, or 2). Node i listens on the port + i - 1.
    #[arg(long)]
    pub(crate) nodes: Option<usize>,
    /// The bucket of a cluster: a directory, or a URL (file:///DIR, s3://BUCKET[/PREFIX],
    /// az://CONTAINER[/PREFIX], gs://BUCKET[/PREFIX], memory://; credentials and endpoints
    /// from the usual environment variables). Default: <data-dir>/bucket.
    #[arg(long)]
    pub(crate) bucket: Option<String>,
    /// Cluster: run one node process with this id (its data in --data-dir), joining the
    /// cluster of every process on the same --bucket by a lease in the bucket. Without it,
    /// --nodes N nodes run in this process.
    #[arg(long, value_name = "ID", conflicts_with = "nodes")]
    pub(crate) node_id: Option<String>,
    /// With --node-id: how long the node's lease lasts after each renewal (ms); a node
    /// killed without stopping is taken over this long after its last renewal.
    #[arg(long, default_value_t = wasmkeep_shim::node_lease::DEFAULT_TTL_MS, value_parser = clap::value_parser!(u64).range(300..))]
    pub(crate) lease_ms: u64,
    /// Testing only, never for use: with --node-id, every upload is
    /// acknowledged without its condition (no fence). The process simulation
    /// runs it to prove it catches a broken fence (ADR 031). Hidden.
    #[arg(long, hide = true, requires = "node_id")]
    pub(crate) testing_break_the_fence: bool,
    /// `class=limit` (e.g. `carts=7d`; s, m, h, d; at least 1h): overrides the
    /// manifest's `expire-after-idle` for that class; `carts=` removes it.
    /// Repeat for more classes. Idle expiry runs in cluster mode.
    #[arg(long = "expire-after-idle", value_name = "CLASS=LIMIT")]
    pub(crate) expire_after_idle: Vec<String>,
    /// Cluster: use the name of an app that was deleted (`app delete`) again:
    /// removes its tombstone, refused while anything else of it remains.
    #[arg(long)]
    pub(crate) recreate: bool,
    /// How long a client has to send a request's headers (after connecting,
    /// or after its previous request) before the connection is closed.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..))]
    pub(crate) header_read_timeout_ms: u64,
    /// Opens the admin API (`/_shim/`) to any client that sends
    /// `Authorization: Bearer <TOKEN>`; without it, loopback clients only.
    #[arg(long, env = "WASMKEEP_ADMIN_TOKEN", value_name = "TOKEN")]
    pub(crate) admin_token: Option<String>,
    /// How many actors may be resident at once (per node); beyond it the
    /// least recently used hibernate, and when as many wait again, requests
    /// get 503 with Retry-After. Default: what the open-files limit and
    /// vm.max_map_count allow (at most 4096), shared among a cluster's nodes.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_resident: Option<u64>,
    /// The most one actor's database may hold (MiB); past it, its writes fail
    /// with an error that says so.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub(crate) max_actor_mib: u64,
    /// Rebuild a class when its sources change (its `build` command, on the
    /// files under its `watch` paths in the manifest) and swap the new
    /// component in: actors keep their state, alarms and open sockets.
    #[arg(long)]
    pub(crate) watch: bool,
    /// Single node: which of a resident actor's requests run on the HTTP
    /// thread that received them, not on the actor's own thread (ADR 059).
    /// `while-overlapping`: after a quick read (at most 25 µs) while many
    /// connections send to one actor, which lifts such reads' rate; `never`:
    /// no request, so that one slow read never delays another actor's
    /// requests on that thread; `after-every-quick-read`: ADR 048's rule.
    /// [default: while-overlapping]
    #[arg(long, value_enum)]
    pub(crate) reads_here: Option<ReadsHereRule>,
    /// Single node: keep no history of the actors (ADR 064). By default each
    /// actor's commits follow into `<data-dir>/history` every 10 ms, so an
    /// actor can be restored to an earlier state or time (admin API,
    /// dashboard); a cluster's history is its bucket whatever this says.
    #[arg(long)]
    pub(crate) no_history: bool,
    /// With --node-id: this node's certificate (PEM; its chain after it), signed
    /// by the cluster CA (--tls-ca). With --tls-key and --tls-ca, the node talks
    /// to its peers over mutual TLS only, on a listener of its own
    /// (--peer-listen); clients still reach it on --listen (ADR 074).
    /// `wasmkeep-shim cluster certs` makes a test cluster's.
    #[arg(long, value_name = "FILE", requires_all = ["tls_key", "tls_ca"])]
    pub(crate) tls_cert: Option<PathBuf>,
    /// With --tls-cert: the certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires_all = ["tls_cert", "tls_ca"])]
    pub(crate) tls_key: Option<PathBuf>,
    /// With --tls-cert: the cluster CA's certificate (PEM). A peer is taken
    /// only with a certificate it signed, as a client and as a server.
    #[arg(long, value_name = "FILE", requires_all = ["tls_cert", "tls_key"])]
    pub(crate) tls_ca: Option<PathBuf>,
    /// With --tls-cert: where to listen for the node's peers (its lease
    /// advertises https://ADDR). Default: --listen's address, a free port.
    #[arg(long, value_name = "ADDR", requires = "tls_cert")]
    pub(crate) peer_listen: Option<SocketAddr>,
    /// With --node-id: the token calls between node processes show and are
    /// asked for (every node of the cluster the same). Default: the bucket's
    /// cluster/secret, made by the first node. Rotate it without stopping
    /// the cluster with --cluster-token-previous (docs/clusters.md).
    #[arg(long, env = "WASMKEEP_CLUSTER_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    pub(crate) cluster_token: Option<String>,
    /// With --cluster-token: the token it replaces, taken as well for the
    /// rotation's window, and shown to a peer that refuses the new one.
    #[arg(
        long,
        env = "WASMKEEP_CLUSTER_TOKEN_PREVIOUS",
        value_name = "TOKEN",
        hide_env_values = true,
        requires = "cluster_token"
    )]
    pub(crate) cluster_token_previous: Option<String>,
}

/// `--reads-here`: the names of [`ReadsHere`]'s rules, each with the
/// default `quick`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ReadsHereRule {
    Never,
    WhileOverlapping,
    AfterEveryQuickRead,
}

impl ReadsHereRule {
    /// The rule `--reads-here` names, or the runtime's default without it.
    fn rule(named: Option<Self>) -> ReadsHere {
        let quick = ReadsHere::DEFAULT_QUICK;
        match named {
            None => ReadsHere::default(),
            Some(Self::Never) => ReadsHere::Never,
            Some(Self::WhileOverlapping) => ReadsHere::WhileOverlapping { quick },
            Some(Self::AfterEveryQuickRead) => ReadsHere::AfterEveryQuickRead { quick },
        }
    }

    /// [`Self::rule`] for a node of `mode`.
    ///
    /// # Errors
    /// A rule named for a cluster, whose nodes run every request on its
    /// actor's thread: it would be ignored, so it is refused instead.
    fn for_mode(named: Option<Self>, mode: Mode) -> anyhow::Result<ReadsHere> {
        if named.is_some() && mode == Mode::Cluster {
            anyhow::bail!(
                "--reads-here needs --mode single (a cluster's nodes run every request on its actor's thread)"
            );
        }
        Ok(Self::rule(named))
    }
}

/// Why `serve` stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Ctrl-C or SIGTERM.
    Asked,
    /// Every node stopped serving the app: it was deleted.
    AppDeleted,
    /// This node process lost its lease to another process.
    Fenced,
}

/// How long an ordered shutdown waits for open connections once every actor
/// is stopped.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Raises this process's soft open-files limit to its hard limit (as Go's
/// runtime does at start): the default soft limit (often 1,024) is far below
/// what a host with many resident actors and connections needs.
fn raise_open_files_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        if let Err(e) = setrlimit(Resource::Nofile, raised) {
            tracing::debug!("the open-files limit stays {:?}: {e}", limit.current);
        }
    }
}

pub(crate) fn serve(args: ServeArgs) -> anyhow::Result<()> {
    if !args.listen.ip().is_loopback() && args.admin_token.is_none() {
        eprintln!(
            "note: listening on {} (not loopback): actors answer anyone who reaches it; the admin API \
             (/_shim/) answers loopback clients only (pass --admin-token to reach it from elsewhere)",
            args.listen
        );
    }
    let manifest = Manifest::load(&args.manifest)?;
    let mode = args.mode.unwrap_or(manifest.mode);
    if args.node_id.is_some() && mode == Mode::Single {
        anyhow::bail!("--node-id needs --mode cluster");
    }
    let reads_here = ReadsHereRule::for_mode(args.reads_here, mode)?;
    if args.node_id.is_none() {
        anyhow::ensure!(
            args.tls_cert.is_none(),
            "--tls-cert, --tls-key and --tls-ca need --node-id: TLS is between node processes (the nodes of \
             --nodes N talk within this process)"
        );
        anyhow::ensure!(
            args.cluster_token.is_none(),
            "--cluster-token (or WASMKEEP_CLUSTER_TOKEN) needs --node-id: the token is for calls between node \
             processes"
        );
    }
    let tokens = match &args.cluster_token {
        Some(t) => {
            anyhow::ensure!(
                !t.trim().is_empty() && t.trim() == t,
                "--cluster-token: give a token with no spaces at its ends, not empty"
            );
            Some(wasmkeep_shim::cluster_calls::ClusterTokens::new(
                t,
                args.cluster_token_previous.as_deref(),
            ))
        }
        None => None,
    };
    let nodes = match (mode, args.nodes) {
        _ if args.node_id.is_some() => 1,
        (Mode::Single, Some(n)) if n != 1 => anyhow::bail!("--nodes {n} needs --mode cluster"),
        (_, Some(n)) if !(1..=16).contains(&n) => anyhow::bail!("--nodes {n}: a local cluster has 1 to 16 nodes"),
        (Mode::Single, _) => 1,
        (Mode::Cluster, n) => n.unwrap_or(manifest.nodes.max(2)),
    };
    // Each resident actor holds three files: use all the descriptors the
    // system lets this process have, then size the cap to them.
    raise_open_files_limit();
    let max_resident = args.max_resident.map_or_else(
        || (wasmkeep_shim::default_resident_limit() / nodes).max(1),
        |n| usize::try_from(n).unwrap_or(usize::MAX),
    );
    let config_for = |dir: PathBuf| {
        let mut config = RuntimeConfig::new(dir);
        config.virtual_clock = args.virtual_clock;
        // With a virtual clock, advancing it drives the cluster's passes.
        config.passes_on_virtual_clock = args.virtual_clock;
        config.event_timeout = Duration::from_millis(args.event_timeout_ms);
        config.idle_timeout = Duration::from_millis(args.idle_timeout_ms);
        config.max_resident = max_resident;
        config.max_actor_bytes = args.max_actor_mib << 20;
        config.reads_here = reads_here;
        if mode == Mode::Single && !args.no_history {
            config.history = Some(wasmkeep_shim::HistoryConfig::in_data_dir(&config.data_dir));
        }
        config
    };
    let started = std::time::Instant::now();
    // A node process advertises where it listens in its lease: bind first.
    let mut prebound = None;
    // With TLS, a node process's peers reach it on a listener of its own.
    let mut peer_listener: Option<(std::net::TcpListener, &'static wasmkeep_shim::peer_tls::PeerTls)> = None;
    let mut joined: Option<crate::node_process::Joined> = None;
    let runtimes: Vec<Runtime> = match mode {
        Mode::Single => vec![Runtime::new(config_for(args.data_dir.clone()))?],
        Mode::Cluster => {
            let clock: Arc<dyn Clock> = if args.virtual_clock {
                Arc::new(VirtualClock::default())
            } else {
                Arc::new(SystemClock)
            };
            let (bucket, bucket_name) = crate::node_process::open_cluster_bucket(
                args.bucket.as_deref(),
                &args.data_dir.join("bucket"),
                clock.clone(),
            )?;
            if let Some(t) = wasmkeep_shim::app_delete::read_tombstone(bucket.as_ref(), &manifest.app)? {
                if args.recreate {
                    wasmkeep_shim::app_delete::recreate(bucket.as_ref(), &manifest.app)?;
                    eprintln!(
                        "app {} deleted at {} ms is created again (--recreate)",
                        manifest.app, t.at_ms
                    );
                } else {
                    // A node refusing to start on a tombstone removes its local files of the app too.
                    let node_dirs: Vec<PathBuf> = match &args.node_id {
                        Some(_) => vec![args.data_dir.clone()],
                        None => (1..=nodes).map(|i| args.data_dir.join(format!("node-{i}"))).collect(),
                    };
                    for node_dir in node_dirs {
                        let mut dir = node_dir.join("state");
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
            match &args.node_id {
                Some(node) => {
                    let listener = std::net::TcpListener::bind(args.listen).with_context(|| {
                        format!(
                            "cannot listen on {} (is another server using it? pick one with --listen)",
                            args.listen
                        )
                    })?;
                    let address = match (&args.tls_cert, &args.tls_key, &args.tls_ca) {
                        (Some(cert), Some(key), Some(ca)) => {
                            let tls = wasmkeep_shim::peer_tls::PeerTls::load(cert, key, ca)?;
                            if wasmkeep_shim::peer_tls::install(tls).is_err() {
                                anyhow::bail!("this process's TLS to its peers was set up twice");
                            }
                            let tls = wasmkeep_shim::peer_tls::installed().context("TLS installed")?;
                            let at = args.peer_listen.unwrap_or_else(|| SocketAddr::new(args.listen.ip(), 0));
                            let peers = std::net::TcpListener::bind(at).with_context(|| {
                                format!("cannot listen for peers on {at} (is another server using it? pick one with --peer-listen)")
                            })?;
                            let address = format!("https://{}", peers.local_addr()?);
                            peer_listener = Some((peers, tls));
                            address
                        }
                        _ => format!("http://{}", listener.local_addr()?),
                    };
                    let (node_process, rt) = crate::node_process::start(
                        bucket,
                        clock,
                        node,
                        &address,
                        args.lease_ms,
                        config_for(args.data_dir.clone()),
                        tokens.clone(),
                    )?;
                    if args.testing_break_the_fence {
                        eprintln!(
                            "warning: --testing-break-the-fence: uploads are acknowledged without their condition"
                        );
                        node_process.break_the_fence_for_tests();
                    }
                    eprintln!("node {node} of the cluster on {bucket_name}, at {address}");
                    prebound = Some(listener);
                    joined = Some(node_process);
                    vec![rt]
                }
                None => {
                    let cluster = Cluster::new(bucket, clock);
                    eprintln!("cluster of {nodes} nodes sharing the bucket {bucket_name}");
                    cluster.start_nodes(nodes, |i| config_for(args.data_dir.join(format!("node-{i}"))))?
                }
            }
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
    let loading = crate::progress::Spinner::start(format!(
        "loading {} ({} classes; a component is compiled once, then read from the cache)",
        manifest.app,
        manifest.classes.len()
    ));
    for rt in &runtimes {
        rt.add_app(&manifest.app, &manifest.classes)?;
        for (class, limit) in &limits {
            rt.passes().set_expire_after_idle(&manifest.app, class, Some(*limit))?;
        }
    }
    drop(loading);
    // Lives as long as the server: dropping it stops the watching.
    let _watcher = if args.watch {
        Some(crate::watch::start(&manifest, runtimes.clone(), &args.data_dir)?)
    } else {
        None
    };
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
    // A node process carries calls to actors other node processes hold (ADR 034).
    if let (Some(j), [rt]) = (&joined, runtimes.as_slice()) {
        rt.set_remote_calls(Arc::new(wasmkeep_shim::cluster_calls::HttpRemoteCalls::new(
            tokio_rt.handle().clone(),
            j.tokens(),
            j.node(),
        )));
    }
    let call_tokens = joined.as_ref().map(crate::node_process::Joined::tokens);
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
            let listener = match prebound.take() {
                Some(l) => {
                    l.set_nonblocking(true)?;
                    tokio::net::TcpListener::from_std(l)?
                }
                None => tokio::net::TcpListener::bind(addr).await.with_context(|| {
                    format!("cannot listen on {addr} (is another server using it? pick one with --listen)")
                })?,
            };
            let bound = listener.local_addr()?;
            // Scripts and tests read these lines to find the ports.
            match rt.node_id() {
                Some(node) => println!("listening on http://{bound} ({node})"),
                None => println!("listening on http://{bound}"),
            }
            use std::io::Write as _;
            let _ = std::io::stdout().flush();
            // Where a guest author starts (issue 58): on stderr, so the
            // lines scripts read stay one per node.
            eprintln!("dashboard: http://{bound}/_shim/ui");
            let cluster = if rt.node_id().is_some() { nodes.clone() } else { Vec::new() };
            let calls = call_tokens
                .clone()
                .map(|tokens| wasmkeep_shim::cluster_calls::routes(rt.clone(), tokens));
            let mut app = wasmkeep_shim::server::router_for_node(
                rt,
                manifest.app.clone(),
                wasmkeep_shim::server::AdminAccess {
                    token: args.admin_token.clone(),
                },
                cluster,
            );
            // With TLS, calls between node processes are taken from verified peers only.
            if let Some((peers, tls)) = peer_listener.take() {
                peers.set_nonblocking(true)?;
                let peers = tokio::net::TcpListener::from_std(peers)?;
                eprintln!(
                    "peers: https://{} (mutual TLS under the cluster CA {})",
                    peers.local_addr()?,
                    tls.ca().display()
                );
                let peer_app = match calls.clone() {
                    Some(calls) => app.clone().merge(calls),
                    None => app.clone(),
                };
                servers.push(tokio::spawn(crate::http_listener::serve_until(
                    peers,
                    peer_app,
                    Duration::from_millis(args.header_read_timeout_ms),
                    Some(tls),
                    stop_rx.clone(),
                )));
            } else if let Some(calls) = calls {
                app = app.merge(calls);
            }
            servers.push(tokio::spawn(crate::http_listener::serve_until(
                listener,
                app,
                Duration::from_millis(args.header_read_timeout_ms),
                None,
                stop_rx.clone(),
            )));
        }
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        // A cluster's nodes stop serving a deleted app by themselves (its tombstone);
        // then serve stops too, and exits with an error.
        let app_name = manifest.app.clone();
        let watched = nodes.clone();
        let app_deleted = async move {
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                if watched.iter().all(|rt| rt.passes().app_stopped(&app_name)) {
                    return;
                }
            }
        };
        // A node process that lost its lease to another process stops.
        let fenced = async {
            match &joined {
                Some(j) => j.fenced().await,
                None => std::future::pending().await,
            }
        };
        let why = tokio::select! {
            _ = tokio::signal::ctrl_c() => Stop::Asked,
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => Stop::Asked,
            () = app_deleted => Stop::AppDeleted,
            () = fenced => Stop::Fenced,
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
        // A node process gives its lease up: others take its actors at once.
        if let Some(j) = &joined {
            j.leave();
        }
        let _ = stop_tx.send(true);
        // Connections still open (a client that sent half a request, a slow
        // reader) get a bounded grace; then they are dropped, so "stopped" comes.
        let grace = tokio::time::sleep(SHUTDOWN_GRACE);
        tokio::pin!(grace);
        let mut dropped = 0;
        for mut s in servers {
            tokio::select! {
                r = &mut s => { r?; }
                () = &mut grace => { s.abort(); dropped += 1; }
            }
        }
        if dropped > 0 {
            eprintln!(
                "connections still open after {} s were dropped ({dropped} server(s))",
                SHUTDOWN_GRACE.as_secs()
            );
        }
        eprintln!("stopped ({closed} socket(s) closed with 1001, {released} actor(s) released)");
        anyhow::ensure!(
            why != Stop::AppDeleted,
            "app {} was deleted (app delete): its nodes stopped serving it and removed their local files",
            manifest.app
        );
        if let (Stop::Fenced, Some(j)) = (why, &joined) {
            anyhow::bail!(
                "node {node} was fenced: another process joined as {node}, or it was cut off; it stopped",
                node = j.node()
            );
        }
        anyhow::Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn parse(args: &[&str]) -> Result<ServeArgs, clap::Error> {
        Serve::try_parse_from(std::iter::once("serve").chain(args.iter().copied())).map(|s| s.args)
    }

    #[test]
    fn reads_here_names_each_rule_and_defaults_to_the_runtime_s() {
        let rule = |args: &[&str]| ReadsHereRule::rule(parse(args).expect("parses").reads_here);
        assert_eq!(rule(&[]), ReadsHere::default());
        assert_eq!(rule(&["--reads-here", "never"]), ReadsHere::Never);
        assert_eq!(rule(&["--reads-here", "while-overlapping"]), ReadsHere::default());
        assert!(matches!(
            rule(&["--reads-here", "after-every-quick-read"]),
            ReadsHere::AfterEveryQuickRead { .. }
        ));
        let bad = parse(&["--reads-here", "sometimes"]).err().expect("refused");
        assert_eq!(bad.kind(), clap::error::ErrorKind::InvalidValue);
        // A cluster ignores the rule: naming one there is refused.
        let never = parse(&["--reads-here", "never"]).expect("parses").reads_here;
        assert!(ReadsHereRule::for_mode(never, Mode::Cluster).is_err());
        assert_eq!(
            ReadsHereRule::for_mode(never, Mode::Single).ok(),
            Some(ReadsHere::Never)
        );
        assert_eq!(
            ReadsHereRule::for_mode(None, Mode::Cluster).ok(),
            Some(ReadsHere::default())
        );
    }
}
