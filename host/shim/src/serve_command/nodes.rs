//! The nodes `serve` runs: one node, a local cluster of nodes sharing a
//! bucket, or one node process of a cluster (ADR 028), which binds its
//! listeners first to advertise where it answers in its lease.

use super::ServeArgs;
use super::plan::Plan;
use anyhow::Context as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use wasmkeep_shim::Cluster;
use wasmkeep_shim::bucket::ObjectStore;
use wasmkeep_shim::clock::{Clock, SystemClock, VirtualClock};
use wasmkeep_shim::peer_tls::PeerTls;
use wasmkeep_shim::{Mode, Runtime};

/// The nodes started, each a runtime.
pub(super) struct Nodes {
    pub(super) runtimes: Vec<Runtime>,
    /// What a node process has beyond its runtime; none for the nodes of
    /// one process.
    pub(super) process: Option<NodeProcess>,
}

/// A node process's lease and the listeners it bound before it joined.
pub(super) struct NodeProcess {
    pub(super) joined: crate::node_process::Joined,
    /// Where it answers HTTP, bound first: its address is in its lease.
    pub(super) listener: std::net::TcpListener,
    /// With TLS, where its peers reach it, under the cluster's CA.
    pub(super) peers: Option<(std::net::TcpListener, &'static PeerTls)>,
}

/// Starts the nodes the plan names.
///
/// # Errors
/// A node does not start, the bucket cannot be opened, the app was deleted
/// (without `--recreate`), or a listener cannot be bound.
pub(super) fn start(args: &ServeArgs, plan: &Plan) -> anyhow::Result<Nodes> {
    if plan.mode == Mode::Single {
        return Ok(Nodes {
            runtimes: vec![Runtime::new(plan.config_for(args, args.data_dir.clone()))?],
            process: None,
        });
    }
    let clock: Arc<dyn Clock> = if args.virtual_clock {
        Arc::new(VirtualClock::default())
    } else {
        Arc::new(SystemClock)
    };
    let (bucket, bucket_name) =
        crate::node_process::open_cluster_bucket(args.bucket.as_deref(), &args.data_dir.join("bucket"), clock.clone())?;
    refuse_a_deleted_app(args, plan, bucket.as_ref())?;
    match &args.node_id {
        Some(node) => {
            let (process, rt) = join(args, plan, node, bucket, &bucket_name, clock)?;
            Ok(Nodes {
                runtimes: vec![rt],
                process: Some(process),
            })
        }
        None => {
            let cluster = Cluster::new(bucket, clock);
            eprintln!("cluster of {} nodes sharing the bucket {bucket_name}", plan.nodes);
            let runtimes = cluster.start_nodes(plan.nodes, |i| {
                plan.config_for(args, args.data_dir.join(format!("node-{i}")))
            })?;
            Ok(Nodes {
                runtimes,
                process: None,
            })
        }
    }
}

/// Refuses an app the bucket holds a tombstone of, unless `--recreate`
/// makes it again. A node refusing to start on a tombstone removes its local
/// files of the app too.
fn refuse_a_deleted_app(args: &ServeArgs, plan: &Plan, bucket: &dyn ObjectStore) -> anyhow::Result<()> {
    let app = &plan.manifest.app;
    let Some(t) = wasmkeep_shim::app_delete::read_tombstone(bucket, app)? else {
        return Ok(());
    };
    if args.recreate {
        wasmkeep_shim::app_delete::recreate(bucket, app)?;
        eprintln!("app {app} deleted at {} ms is created again (--recreate)", t.at_ms);
        return Ok(());
    }
    let node_dirs: Vec<PathBuf> = match &args.node_id {
        Some(_) => vec![args.data_dir.clone()],
        None => (1..=plan.nodes)
            .map(|i| args.data_dir.join(format!("node-{i}")))
            .collect(),
    };
    for node_dir in node_dirs {
        let mut dir = node_dir.join("state");
        for part in app.split('/') {
            dir.push(part);
        }
        // What is left of the deleted app's files; the refusal is the answer.
        let _ = std::fs::remove_dir_all(dir);
    }
    anyhow::bail!(
        "app {app} was deleted (at {} ms, by {}): pass --recreate to use the name again",
        t.at_ms,
        t.by
    )
}

/// Joins the cluster as node process `node`: binds its listeners, then
/// takes its lease naming where it answers.
fn join(
    args: &ServeArgs,
    plan: &Plan,
    node: &str,
    bucket: Arc<dyn ObjectStore>,
    bucket_name: &str,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<(NodeProcess, Runtime)> {
    let listener = std::net::TcpListener::bind(args.listen).with_context(|| {
        format!(
            "cannot listen on {} (is another server using it? pick one with --listen)",
            args.listen
        )
    })?;
    let mut peers = None;
    let address = match (&args.tls_cert, &args.tls_key, &args.tls_ca) {
        (Some(cert), Some(key), Some(ca)) => {
            let tls = PeerTls::load(cert, key, ca)?;
            if wasmkeep_shim::peer_tls::install(tls).is_err() {
                anyhow::bail!("this process's TLS to its peers was set up twice");
            }
            let tls = wasmkeep_shim::peer_tls::installed().context("TLS installed")?;
            let at = args.peer_listen.unwrap_or_else(|| SocketAddr::new(args.listen.ip(), 0));
            let listener = std::net::TcpListener::bind(at).with_context(|| {
                format!("cannot listen for peers on {at} (is another server using it? pick one with --peer-listen)")
            })?;
            let address = format!("https://{}", listener.local_addr()?);
            peers = Some((listener, tls));
            address
        }
        _ => format!("http://{}", listener.local_addr()?),
    };
    let (joined, rt) = crate::node_process::start(
        bucket,
        clock,
        node,
        &address,
        args.lease_ms,
        plan.config_for(args, args.data_dir.clone()),
        plan.tokens.clone(),
    )?;
    if args.testing_break_the_fence {
        eprintln!("warning: --testing-break-the-fence: uploads are acknowledged without their condition");
        joined.break_the_fence_for_tests();
    }
    eprintln!("node {node} of the cluster on {bucket_name}, at {address}");
    Ok((
        NodeProcess {
            joined,
            listener,
            peers,
        },
        rt,
    ))
}
