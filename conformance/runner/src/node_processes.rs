//! The node-process driver (issue 24, ADR 031): each case gets
//! N `wasmkeep-shim serve --mode cluster --node-id` processes of the testee
//! over a bucket URL of its own, started by `wasmkeep-host-testing`'s
//! `served` (ADR 084), and the steps (`steps.rs`) reach them over HTTP, as a
//! client and an operator reach a real cluster: requests to
//! `/testee/<actor>`, faults through `/_shim/faults`, a cut-off through
//! `/_shim/cluster/cut-off`, hibernation through `/_shim/hibernate`, counters
//! from `/metrics`, the end of an event through `/_shim/actors/…/settle`. A
//! case that moves the clock runs on virtual clocks (`serve --virtual-clock`),
//! moved on every node through `/_shim/clock/advance`, its alarms run through
//! `/_shim/alarms/run` on every node. Sockets are WebSockets the runner opens
//! to a node. Steps that need the host's inside (host calls, the local files)
//! have no such door: a case with one is reported as not run here. With
//! `--tls` the processes talk to each other over mutual TLS (ADR 074), with
//! a CA and certificates `wasmkeep-shim cluster certs` makes for each case.

use crate::case::{Case, Step};
use crate::http;
use crate::steps::{CLASS, Driver, Patience, step_name};
use anyhow::{Context as _, anyhow, bail};
use serde_json::json;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wasmkeep_host_testing::served::{NodeProcess, Serve, ServeError};

/// How the node processes run.
pub struct NodeProcesses {
    /// How many (the case's nodes 1 and 2 are the first two).
    pub count: usize,
    /// The `wasmkeep-shim` binary.
    pub shim: PathBuf,
    /// The bucket URL under which each case gets a prefix of its own; a
    /// `file://` directory in the case's temporary directory when none.
    pub bucket: Option<String>,
    /// The compiled-component cache the processes share.
    pub cache_dir: PathBuf,
    /// Whether the processes talk to each other over TLS.
    pub tls: bool,
}

/// Lease of the processes: short, so that a killed node is taken over soon.
const LEASE_MS: u64 = 2000;
/// Lease on virtual clocks: renewals run on the real clock, every third of
/// the lease, so a lease as short as a step's advance would seem to lapse
/// between the advance and the next renewal.
const VIRTUAL_LEASE_MS: u64 = 600_000;
/// How long a socket step waits for the close it expects.
const SOCKET_PATIENCE: Duration = Duration::from_secs(10);
/// How long a socket step that expects none looks for a close.
const SOCKET_GLANCE: Duration = Duration::from_millis(200);

/// Why `case` cannot run on node processes, if it cannot.
pub fn not_here(case: &Case) -> Option<String> {
    if case.mode != "cluster" {
        return Some("not a cluster case".into());
    }
    case.steps
        .iter()
        .find(|s| {
            !matches!(
                s,
                Step::Request { .. }
                    | Step::Fault { .. }
                    | Step::CutOff { .. }
                    | Step::Hibernate
                    | Step::Metric { .. }
                    | Step::Advance { .. }
                    | Step::RunAlarms { .. }
                    | Step::SocketOpen { .. }
                    | Step::SocketClosed { .. }
                    | Step::SocketOpenStill { .. }
                    | Step::Ordered { .. }
            )
        })
        .map(|s| format!("its `{}` step needs the host's inside", step_name(s)))
}

/// The node processes of one case.
pub struct Nodes {
    /// Killed (by their ids) before the directory goes.
    nodes: Vec<NodeProcess>,
    _dir: tempfile::TempDir,
}

fn manifest(dir: &Path, component: &Path) -> anyhow::Result<PathBuf> {
    let path = dir.join("wasmkeep.toml");
    let component = component.display().to_string();
    std::fs::write(
        &path,
        format!(
            "app = \"{app}\"\n[classes.{CLASS}]\ncomponent = {component:?}\naccess = \"open\"\n\
             [classes.peer]\ncomponent = {component:?}\naccess = \"open\"\n",
            app = crate::steps::APP
        ),
    )?;
    Ok(path)
}

impl Nodes {
    /// Starts `how.count` fresh node processes of `component` for `case`,
    /// on virtual clocks when a step moves the clock.
    ///
    /// # Errors
    /// The certificates were not made, or a node did not start.
    pub fn start(case: &Case, component: &Path, how: &NodeProcesses) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let run = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let bucket = match &how.bucket {
            Some(url) => format!("{}/conformance-{}-{run}", url.trim_end_matches('/'), case.name),
            None => format!("file://{}", dir.path().join("bucket").display()),
        };
        let manifest = manifest(dir.path(), component)?;
        let certs = dir.path().join("certs");
        if how.tls {
            let ids: Vec<String> = (1..=how.count).map(|i| format!("n{i}")).collect();
            let out = std::process::Command::new(&how.shim)
                .args(["cluster", "certs", "--nodes", &ids.join(","), "--out"])
                .arg(&certs)
                .output()
                .with_context(|| format!("running {} cluster certs", how.shim.display()))?;
            if !out.status.success() {
                bail!(
                    "wasmkeep-shim cluster certs failed ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        let virtual_clock = case
            .steps
            .iter()
            .any(|s| matches!(s, Step::Advance { .. } | Step::RunAlarms { .. }));
        let mut nodes = Vec::new();
        for i in 1..=how.count {
            let id = format!("n{i}");
            let mut serve = Serve::new(&how.shim, &manifest, dir.path().join(&id))
                .cluster_node(&id, &bucket, if virtual_clock { VIRTUAL_LEASE_MS } else { LEASE_MS })
                .env("WASMKEEP_CACHE_DIR", &how.cache_dir)
                // Kept for a failing case's message.
                .log_to(dir.path().join(format!("{id}.log")));
            if virtual_clock {
                serve = serve.arg("--virtual-clock");
            }
            if how.tls {
                serve = serve.tls(&certs, &id);
            }
            nodes.push(serve.start_node(&id).map_err(|e| match e {
                ServeError::NotStarted { status, line, log, .. } => match log {
                    Some(log) => anyhow!(
                        "node {id} did not start ({status}): {line:?}; its log: {}",
                        log.display()
                    ),
                    None => anyhow!("node {id} did not start ({status}): {line:?}"),
                },
                other => anyhow::Error::from(other),
            })?);
        }
        Ok(Self { nodes, _dir: dir })
    }

    fn node(&self, n: usize) -> anyhow::Result<&NodeProcess> {
        self.nodes
            .get(n.wrapping_sub(1))
            .ok_or_else(|| anyhow!("node {n} does not exist ({} node processes)", self.nodes.len()))
    }
}

/// A WebSocket the runner opened, and the id the actor knows it by.
pub struct Socket {
    ws: tungstenite::WebSocket<TcpStream>,
    id: String,
}

impl Driver for Nodes {
    type Socket = Socket;

    fn request(&mut self, node: usize, actor: &str, body: Vec<u8>) -> anyhow::Result<(u16, Vec<u8>)> {
        let answer = http::request(&self.node(node)?.base, "POST", &format!("/{CLASS}/{actor}"), &body)?;
        Ok((answer.status, answer.body))
    }

    /// A request's event may go on after its answer (its upload at the end),
    /// and the next step must see it ended, as the in-process runner waits
    /// for the end. Twice, since a node may hand an event to the holder. A
    /// fixed sleep here was too short on a loaded machine.
    fn settle(&mut self, actor: &str) -> anyhow::Result<()> {
        let path = format!("/_shim/actors/{CLASS}/{actor}/settle");
        for _ in 0..2 {
            for p in &self.nodes {
                let answer = http::request(&p.base, "POST", &path, b"{}")?;
                if answer.status != 200 {
                    bail!("settling {actor} on {}: {} {}", p.base, answer.status, answer.text());
                }
            }
        }
        Ok(())
    }

    fn call(&mut self, _node: usize, _actor: &str, _payload: Vec<u8>) -> anyhow::Result<Vec<u8>> {
        bail!("the `call` step cannot run on node processes")
    }

    fn arm_fault(&mut self, node: usize, kind: &str, count: u32) -> anyhow::Result<()> {
        let body = serde_json::to_vec(&json!({ "kind": kind, "count": count }))?;
        let answer = http::request(&self.node(node)?.base, "POST", "/_shim/faults", &body)?;
        if answer.status != 200 {
            bail!("arming {kind}: {} {}", answer.status, answer.text());
        }
        Ok(())
    }

    fn cut_off(&mut self, node: usize) -> anyhow::Result<()> {
        let answer = http::request(&self.node(node)?.base, "POST", "/_shim/cluster/cut-off", b"{}")?;
        if answer.status != 200 {
            bail!("cutting node {node} off: {} {}", answer.status, answer.text());
        }
        Ok(())
    }

    /// Every node's clock.
    fn advance(&mut self, ms: u64) -> anyhow::Result<()> {
        let body = json!({ "ms": ms }).to_string();
        for p in &self.nodes {
            let answer = http::request(&p.base, "POST", "/_shim/clock/advance", body.as_bytes())?;
            if answer.status != 200 {
                bail!("advancing {}'s clock: {} {}", p.base, answer.status, answer.text());
            }
        }
        Ok(())
    }

    /// On every node: an alarm runs once wherever it was set, so they add up.
    fn run_alarms(&mut self) -> anyhow::Result<u64> {
        let mut n = 0;
        for p in &self.nodes {
            let answer = http::request(&p.base, "POST", "/_shim/alarms/run", b"{}")?;
            let v: serde_json::Value = serde_json::from_slice(&answer.body)
                .with_context(|| format!("running alarms on {}: {} {}", p.base, answer.status, answer.text()))?;
            n += v["ran"]
                .as_u64()
                .ok_or_else(|| anyhow!("running alarms on {}: {v}", p.base))?;
        }
        Ok(n)
    }

    fn exists(&mut self, _actor: &str) -> anyhow::Result<bool> {
        bail!("the `exists` step cannot run on node processes")
    }

    /// A WebSocket to `actor` through `node` at the path `/<name>`; its id
    /// found in the testee's `socket_log` by that path (a query: an event
    /// that changes nothing, where the in-process driver holds the id).
    fn open_socket(&mut self, n: usize, actor: &str, name: &str) -> anyhow::Result<Socket> {
        let base = self.node(n)?.base.clone();
        let host = base.strip_prefix("http://").unwrap_or(&base);
        let stream = TcpStream::connect(host).with_context(|| format!("connecting to {host}"))?;
        let path = format!("/{name}");
        let (ws, _) = tungstenite::client(format!("ws://{host}/{CLASS}/{actor}{path}"), stream)
            .map_err(|e| anyhow!("opening a WebSocket to {actor} through node {n}: {e}"))?;
        self.settle(actor)?;
        let body = serde_json::to_vec(&json!({ "ops": [{
            "op": "query",
            "sql": "SELECT socket FROM socket_log WHERE event = 'open' AND detail = ?1 ORDER BY rowid DESC LIMIT 1",
            "params": [{ "text": path }],
        }] }))?;
        let answer = http::request(&base, "POST", &format!("/{CLASS}/{actor}"), &body)?;
        let found: serde_json::Value = serde_json::from_slice(&answer.body)
            .with_context(|| format!("finding the socket's id: {}", answer.text()))?;
        let id = found
            .pointer("/outcomes/0/ok/rows/0/0/text")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| anyhow!("the actor logged no open of {path}: {found}"))?
            .to_owned();
        self.settle(actor)?;
        Ok(Socket { ws, id })
    }

    fn socket_id(socket: &Socket) -> String {
        socket.id.clone()
    }

    /// Reads the socket until it closes or the patience runs out.
    fn close_received(&mut self, socket: &mut Socket, patience: Patience) -> anyhow::Result<Option<(u16, String)>> {
        use tungstenite::Message;
        let patience = match patience {
            Patience::ForAClose => SOCKET_PATIENCE,
            Patience::Glance => SOCKET_GLANCE,
        };
        let deadline = std::time::Instant::now() + patience;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            socket.ws.get_ref().set_read_timeout(Some(left))?;
            match socket.ws.read() {
                Ok(Message::Close(frame)) => {
                    return Ok(Some(
                        frame.map_or((1005, String::new()), |f| (u16::from(f.code), f.reason.to_string())),
                    ));
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
                {
                    return Ok(None);
                }
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    bail!("the connection ended without a close frame")
                }
                Err(e) => return Err(anyhow!("reading the socket: {e}")),
            }
        }
    }

    /// A node that stopped (cut off, fenced) has nothing to hibernate.
    fn hibernate(&mut self) -> anyhow::Result<()> {
        for p in &self.nodes {
            let _ = http::request(&p.base, "POST", "/_shim/hibernate", b"{}");
        }
        Ok(())
    }

    fn metric(&mut self, node: usize, name: &str, label: &str) -> anyhow::Result<u64> {
        let answer = http::request(&self.node(node)?.base, "GET", "/metrics", b"")?;
        Ok(metric(&answer.text(), name, label))
    }

    /// Kills the nodes: the last lines each wrote to stderr.
    fn failure_note(&mut self) -> String {
        let mut nodes = std::mem::take(&mut self.nodes);
        for p in &mut nodes {
            let _ = p.child.kill();
        }
        let mut out = String::new();
        for (i, p) in nodes.into_iter().enumerate() {
            let text = p.stop();
            let lines: Vec<&str> = text.lines().collect();
            out.push_str(&format!("\n  n{}'s log:", i + 1));
            for l in &lines[lines.len().saturating_sub(15)..] {
                out.push_str("\n    ");
                out.push_str(l);
            }
        }
        out
    }

    /// The nodes are killed when dropped.
    fn finish(&mut self) {}
}

/// The value of `name` with the label value `label` (none: `""`) in a
/// Prometheus text exposition; 0 when absent, as the host's own counters read.
fn metric(text: &str, name: &str, label: &str) -> u64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .find(|(series, _)| {
            let (n, labels) = series.split_once('{').unwrap_or((series, ""));
            let value = labels
                .split_once('"')
                .and_then(|(_, v)| v.split_once('"'))
                .map_or("", |(v, _)| v);
            n == name && value == label
        })
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn metrics_are_read_by_name_and_label() {
        let text = "# HELP x y\nwasmkeep_a{how=\"self\"} 3\nwasmkeep_a{how=\"operator\"} 1\nwasmkeep_b 7\n";
        assert_eq!(super::metric(text, "wasmkeep_a", "self"), 3);
        assert_eq!(super::metric(text, "wasmkeep_b", ""), 7);
        assert_eq!(super::metric(text, "wasmkeep_c", ""), 0);
    }
}
