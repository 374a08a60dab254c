//! `wasmkeep-shim serve`: the dev server over one node, a local cluster, or
//! one node process of a cluster. Its flags (`ServeArgs`) are here, and
//! `serve` runs its phases in turn: the plan (`plan`: flags and manifest
//! checked), the nodes (`nodes`), the app loaded on each, then the servers
//! until asked to stop, and the ordered shutdown (`servers`).

use plan::Plan;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use wasmkeep_shim::{Mode, ReadsHere};

mod nodes;
mod plan;
mod servers;

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
    let plan = Plan::make(&args)?;
    let limits = plan.idle_limits(&args)?;
    let started = std::time::Instant::now();
    let nodes = nodes::start(&args, &plan)?;
    let manifest = &plan.manifest;
    let loading = crate::progress::Spinner::start(format!(
        "loading {} ({} classes; a component is compiled once, then read from the cache)",
        manifest.app,
        manifest.classes.len()
    ));
    for rt in &nodes.runtimes {
        rt.add_app(&manifest.app, &manifest.classes)?;
        for (class, limit) in &limits {
            rt.passes().set_expire_after_idle(&manifest.app, class, Some(*limit))?;
        }
    }
    drop(loading);
    // Lives as long as the server: dropping it stops the watching.
    let _watcher = if args.watch {
        Some(crate::watch::start(manifest, nodes.runtimes.clone(), &args.data_dir)?)
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
    servers::serve_until_stopped(&args, &plan, nodes)
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
