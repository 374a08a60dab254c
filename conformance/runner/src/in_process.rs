//! The in-process driver: a case on a fresh host in this process, one node
//! or two sharing a bucket in a local directory (`Cluster::local`), each on
//! its own data directory. The steps are `steps.rs`'s; this reaches the
//! nodes through `wasmkeep-host`'s own calls.

use crate::case::Case;
use crate::steps::{APP, CLASS, Driver, Patience};
use anyhow::{anyhow, bail};
use std::path::Path;
use std::time::Duration;
use wasmkeep_host::Cluster;
use wasmkeep_host::{
    Access, ActorKey, ClassSpec, FaultKind, HttpRequest, Outbound, Runtime, RuntimeConfig, SocketHandle,
};

/// The nodes of one case, in this process.
pub struct InProcess {
    nodes: Vec<Runtime>,
    // Dropped after the nodes.
    _dir: tempfile::TempDir,
}

impl InProcess {
    /// A new host for `case` (its `mode`: one node, or a cluster of two)
    /// with the testee component as its classes `testee` and `peer`.
    ///
    /// # Errors
    /// An unknown mode, or a host that did not start.
    pub fn start(case: &Case, component: &Path, cache_dir: &Path) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let config = |d: &Path| {
            let mut config = RuntimeConfig::for_tests(d);
            config.cache_dir = cache_dir.to_owned();
            config.event_timeout = Duration::from_millis(1000);
            config.idle_timeout = Duration::from_secs(5);
            config
        };
        let nodes: Vec<Runtime> = match case.mode.as_str() {
            "single" => vec![Runtime::new(config(dir.path()))?],
            // Two nodes in this process sharing a bucket in a local directory.
            "cluster" => Cluster::local(dir.path(), 2, &config(dir.path()))?.nodes,
            other => bail!("unknown mode {other:?}: use single or cluster"),
        };
        let classes = [CLASS, "peer"].map(|name| ClassSpec {
            name: name.into(),
            component: component.to_owned(),
            access: Access::Open,
        });
        for rt in &nodes {
            rt.add_app(APP, &classes)?;
        }
        Ok(Self { nodes, _dir: dir })
    }

    fn node(&self, n: usize) -> anyhow::Result<&Runtime> {
        self.nodes
            .get(n.wrapping_sub(1))
            .ok_or_else(|| anyhow!("node {n} does not exist (this mode has {} node(s))", self.nodes.len()))
    }
}

fn key(actor: &str) -> ActorKey {
    ActorKey::new(APP, CLASS, actor)
}

impl Driver for InProcess {
    type Socket = SocketHandle;

    fn request(&mut self, node: usize, actor: &str, body: Vec<u8>) -> anyhow::Result<(u16, Vec<u8>)> {
        let answer = self
            .node(node)?
            .request_blocking(&key(actor), HttpRequest::new("POST", "/", body))?;
        Ok((answer.status, answer.body))
    }

    /// Twice, since an event may be forwarded from one node to the other.
    fn settle(&mut self, actor: &str) -> anyhow::Result<()> {
        for _ in 0..2 {
            for rt in &self.nodes {
                rt.settle(&key(actor));
            }
        }
        Ok(())
    }

    fn call(&mut self, node: usize, actor: &str, payload: Vec<u8>) -> anyhow::Result<Vec<u8>> {
        match self.node(node)?.call(&key(actor), payload)? {
            Ok(answer) => Ok(answer),
            Err(e) => bail!("the call failed: {e:?}"),
        }
    }

    fn arm_fault(&mut self, node: usize, kind: &str, count: u32) -> anyhow::Result<()> {
        let k = FaultKind::from_name(kind).ok_or_else(|| anyhow!("unknown fault {kind}"))?;
        self.node(node)?.dev().faults().arm(k, count);
        Ok(())
    }

    fn cut_off(&mut self, node: usize) -> anyhow::Result<()> {
        self.node(node)?.dev().cut_off()?;
        Ok(())
    }

    /// On node 1: the nodes of a local cluster share its clock.
    fn advance(&mut self, ms: u64) -> anyhow::Result<()> {
        self.node(1)?.dev().advance_clock(ms)?;
        Ok(())
    }

    fn run_alarms(&mut self) -> anyhow::Result<u64> {
        Ok(self.node(1)?.dev().run_due_alarms() as u64)
    }

    fn exists(&mut self, actor: &str) -> anyhow::Result<bool> {
        Ok(self.node(1)?.admin().exists(&key(actor)))
    }

    fn open_socket(&mut self, node: usize, actor: &str, _name: &str) -> anyhow::Result<SocketHandle> {
        let h = self.node(node)?.open_socket(&key(actor), "/")?;
        self.settle(actor)?;
        Ok(h)
    }

    fn socket_id(socket: &SocketHandle) -> String {
        socket.id.to_string()
    }

    /// What is queued for the socket, with no wait: the host closes a
    /// socket inside the event that closes it, which has ended.
    fn close_received(
        &mut self,
        socket: &mut SocketHandle,
        _patience: Patience,
    ) -> anyhow::Result<Option<(u16, String)>> {
        while let Ok(m) = socket.outbound.try_recv() {
            if let Outbound::Close { code, reason } = m {
                return Ok(Some((code, reason)));
            }
        }
        Ok(None)
    }

    fn hibernate(&mut self) -> anyhow::Result<()> {
        for rt in &self.nodes {
            rt.dev().hibernate_all();
        }
        Ok(())
    }

    fn metric(&mut self, node: usize, name: &str, label: &str) -> anyhow::Result<u64> {
        Ok(self.node(node)?.admin().metrics().get(name, label))
    }

    /// The nodes log into this process's own output.
    fn failure_note(&mut self) -> String {
        String::new()
    }

    fn finish(&mut self) {
        for rt in &self.nodes {
            rt.dev().hibernate_all();
        }
    }
}
