//! What `serve` runs, read from its flags and the manifest and checked
//! before anything starts: the mode, how many nodes, the cluster's token,
//! each node's configuration, and the classes' idle limits.

use super::{ReadsHereRule, ServeArgs};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use wasmkeep_shim::cluster_calls::ClusterTokens;
use wasmkeep_shim::{Manifest, Mode, ReadsHere, RuntimeConfig};

/// `serve`'s flags and manifest, checked.
pub(super) struct Plan {
    pub(super) manifest: Manifest,
    pub(super) mode: Mode,
    /// How many nodes this process runs (1 for a node process).
    pub(super) nodes: usize,
    /// The token of calls between node processes.
    pub(super) tokens: Option<ClusterTokens>,
    reads_here: ReadsHere,
    max_resident: usize,
}

impl Plan {
    /// Reads the manifest and checks the flags against it and each other.
    /// Raises this process's open-files limit first: the resident cap is
    /// sized to it.
    ///
    /// # Errors
    /// The manifest cannot be read, or a flag is refused (the message says
    /// which and what to give instead).
    pub(super) fn make(args: &ServeArgs) -> anyhow::Result<Self> {
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
                Some(ClusterTokens::new(t, args.cluster_token_previous.as_deref()))
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
        super::raise_open_files_limit();
        let max_resident = args.max_resident.map_or_else(
            || (wasmkeep_shim::default_resident_limit() / nodes).max(1),
            |n| usize::try_from(n).unwrap_or(usize::MAX),
        );
        Ok(Self {
            manifest,
            mode,
            nodes,
            tokens,
            reads_here,
            max_resident,
        })
    }

    /// The configuration of a node whose files go in `dir`.
    pub(super) fn config_for(&self, args: &ServeArgs, dir: PathBuf) -> RuntimeConfig {
        let mut config = RuntimeConfig::new(dir);
        config.virtual_clock = args.virtual_clock;
        // With a virtual clock, advancing it drives the cluster's passes.
        config.passes_on_virtual_clock = args.virtual_clock;
        config.event_timeout = Duration::from_millis(args.event_timeout_ms);
        config.idle_timeout = Duration::from_millis(args.idle_timeout_ms);
        config.max_resident = self.max_resident;
        config.max_actor_bytes = args.max_actor_mib << 20;
        config.reads_here = self.reads_here;
        if self.mode == Mode::Single && !args.no_history {
            config.history = Some(wasmkeep_shim::HistoryConfig::in_data_dir(&config.data_dir));
        }
        config
    }

    /// Each class's idle limit: the manifest's, with `--expire-after-idle`'s
    /// on top (`CLASS=` removes one).
    ///
    /// # Errors
    /// A flag names no class of the manifest, or its limit does not read.
    pub(super) fn idle_limits(&self, args: &ServeArgs) -> anyhow::Result<BTreeMap<String, Duration>> {
        let mut limits = self.manifest.expire_after_idle.clone();
        for spec in &args.expire_after_idle {
            let (class, limit) = spec.split_once('=').ok_or_else(|| {
                anyhow::anyhow!("--expire-after-idle {spec:?}: write CLASS=LIMIT, e.g. carts=7d (carts= removes it)")
            })?;
            anyhow::ensure!(
                self.manifest.classes.iter().any(|c| c.name == class),
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
        if !limits.is_empty() && self.mode == Mode::Single {
            eprintln!(
                "note: expire-after-idle applies in cluster mode (--mode cluster); a single node keeps idle actors"
            );
        }
        Ok(limits)
    }
}
