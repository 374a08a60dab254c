//! `serve`'s servers: a listener per node (and a node process's listener
//! for its peers), until Ctrl-C, SIGTERM, the app's deletion or, for a node
//! process, the loss of its lease; then the ordered shutdown.

use super::nodes::Nodes;
use super::plan::Plan;
use super::{SHUTDOWN_GRACE, ServeArgs, Stop};
use anyhow::Context as _;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_shim::Runtime;

/// Serves every node until it is asked to stop, then shuts them down in
/// order ("stopped" comes last).
///
/// # Errors
/// A listener cannot be bound, the app was deleted (every node stopped
/// serving it), or this node process was fenced.
pub(super) fn serve_until_stopped(args: &ServeArgs, plan: &Plan, nodes: Nodes) -> anyhow::Result<()> {
    let Nodes { runtimes, process } = nodes;
    // A node process's listeners were bound before it joined; the first
    // (and only) node serves on them.
    let (joined, prebound, peers) = match process {
        Some(p) => (Some(p.joined), Some(p.listener), p.peers),
        None => (None, None, None),
    };
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
        let nodes = runtimes.clone();
        let listening = Listening {
            prebound,
            peers,
            call_tokens,
            stop: stop_rx,
        };
        let servers = listen(args, plan, runtimes, listening).await?;
        let why = stopped_by(plan, &nodes, joined.as_ref()).await;
        shut_down(&nodes, joined.as_ref(), &stop_tx, servers).await?;
        anyhow::ensure!(
            why != Stop::AppDeleted,
            "app {} was deleted (app delete): its nodes stopped serving it and removed their local files",
            plan.manifest.app
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

/// What the nodes' listeners start from: a node process's, bound before it
/// joined, the token of calls between node processes, and the signal to stop.
struct Listening {
    prebound: Option<std::net::TcpListener>,
    peers: Option<(std::net::TcpListener, &'static wasmkeep_shim::peer_tls::PeerTls)>,
    call_tokens: Option<wasmkeep_shim::cluster_calls::ClusterTokens>,
    stop: tokio::sync::watch::Receiver<bool>,
}

/// Starts each node's server (and a node process's server for its peers),
/// printing where each listens. Returns the servers, which run until the
/// stop signal.
async fn listen(
    args: &ServeArgs,
    plan: &Plan,
    runtimes: Vec<Runtime>,
    listening: Listening,
) -> anyhow::Result<Vec<tokio::task::JoinHandle<()>>> {
    let Listening {
        mut prebound,
        peers,
        call_tokens,
        stop: stop_rx,
    } = listening;
    let mut peer_listener = peers;
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
        let cluster = if rt.node_id().is_some() {
            nodes.clone()
        } else {
            Vec::new()
        };
        let calls = call_tokens
            .clone()
            .map(|tokens| wasmkeep_shim::cluster_calls::routes(rt.clone(), tokens));
        let mut app = wasmkeep_shim::server::router_for_node(
            rt,
            plan.manifest.app.clone(),
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
    Ok(servers)
}

/// Waits for why the server stops: Ctrl-C or SIGTERM, every node having
/// stopped serving the deleted app, or this node process fenced.
async fn stopped_by(plan: &Plan, nodes: &[Runtime], joined: Option<&crate::node_process::Joined>) -> Stop {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    // A cluster's nodes stop serving a deleted app by themselves (its tombstone);
    // then serve stops too, and exits with an error.
    let app_name = plan.manifest.app.clone();
    let watched = nodes.to_vec();
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
    tokio::select! {
        _ = tokio::signal::ctrl_c() => Stop::Asked,
        _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => Stop::Asked,
        () = app_deleted => Stop::AppDeleted,
        () = fenced => Stop::Fenced,
    }
}

/// The ordered shutdown: queued events answered 503 at once, running ones
/// finish, sockets closed with 1001, actors released; then the servers
/// stop; "stopped" comes last, once all of it is done.
async fn shut_down(
    nodes: &[Runtime],
    joined: Option<&crate::node_process::Joined>,
    stop_tx: &tokio::sync::watch::Sender<bool>,
    servers: Vec<tokio::task::JoinHandle<()>>,
) -> anyhow::Result<()> {
    eprintln!("stopping");
    let mut closed = 0;
    let mut released = 0;
    for s in futures_util::future::join_all(nodes.iter().map(Runtime::shutdown_async)).await {
        closed += s.sockets_closed;
        released += s.actors_released;
    }
    // A node process gives its lease up: others take its actors at once.
    if let Some(j) = joined {
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
    Ok(())
}
