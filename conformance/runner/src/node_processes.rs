//! The cluster cases on node processes (issue 24, ADR 031): each case gets
//! N `wasmkeep-shim serve --mode cluster --node-id` processes of the testee
//! over a bucket URL of its own, and its steps go to them over HTTP, as a
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
use crate::exec::{APP, CLASS, Saved, check_answer, step_name};
use crate::http;
use anyhow::{Context as _, anyhow, bail};
use serde_json::json;
use std::collections::HashMap;
use std::io::BufRead as _;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
const LEASE_MS: &str = "2000";
/// Lease on virtual clocks: renewals run on the real clock, every third of
/// the lease, so a lease as short as a step's advance would seem to lapse
/// between the advance and the next renewal.
const VIRTUAL_LEASE_MS: &str = "600000";
/// How long a socket step waits for the close it expects.
const SOCKET_PATIENCE: Duration = Duration::from_secs(10);

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

struct Process {
    child: std::process::Child,
    base: String,
}

impl Drop for Process {
    fn drop(&mut self) {
        // Killed by its own id, as a crashed node would be.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn manifest(dir: &Path, component: &Path) -> anyhow::Result<PathBuf> {
    let path = dir.join("wasmkeep.toml");
    let component = component.display().to_string();
    std::fs::write(
        &path,
        format!(
            "app = \"{APP}\"\n[classes.{CLASS}]\ncomponent = {component:?}\naccess = \"open\"\n\
             [classes.peer]\ncomponent = {component:?}\naccess = \"open\"\n"
        ),
    )?;
    Ok(path)
}

fn start(
    how: &NodeProcesses,
    manifest: &Path,
    bucket: &str,
    dir: &Path,
    id: &str,
    virtual_clock: bool,
) -> anyhow::Result<Process> {
    let mut child = std::process::Command::new(&how.shim)
        .args(["serve", "--listen", "127.0.0.1:0", "--mode", "cluster", "--node-id", id])
        .args(["--bucket", bucket])
        .args(if virtual_clock {
            ["--virtual-clock", "--lease-ms", VIRTUAL_LEASE_MS].as_slice()
        } else {
            ["--lease-ms", LEASE_MS].as_slice()
        })
        .arg("--manifest")
        .arg(manifest)
        .arg("--data-dir")
        .arg(dir.join(id))
        .args(if how.tls {
            let certs = dir.join("certs");
            vec![
                "--tls-cert".into(),
                certs.join(format!("{id}.crt")).into_os_string(),
                "--tls-key".into(),
                certs.join(format!("{id}.key")).into_os_string(),
                "--tls-ca".into(),
                certs.join("ca.crt").into_os_string(),
            ]
        } else {
            Vec::new()
        })
        .env("WASMKEEP_CACHE_DIR", &how.cache_dir)
        .stdout(std::process::Stdio::piped())
        // Kept for a failing case's message.
        .stderr(std::fs::File::create(dir.join(format!("{id}.log")))?)
        .spawn()
        .with_context(|| format!("starting {}", how.shim.display()))?;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
    let base = line
        .strip_prefix("listening on ")
        .and_then(|l| l.split_whitespace().next())
        .map(str::to_owned);
    match base {
        Some(base) => Ok(Process { child, base }),
        None => {
            let _ = child.kill();
            let status = child.wait()?;
            bail!("node {id} did not start ({status}): {line:?}")
        }
    }
}

/// Runs `case` on `how.count` fresh node processes of `component`.
///
/// # Errors
/// A node that did not start, or the first step whose outcome differs.
pub fn run_case(case: &Case, component: &Path, how: &NodeProcesses) -> anyhow::Result<()> {
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
    if how.tls {
        let ids: Vec<String> = (1..=how.count).map(|i| format!("n{i}")).collect();
        let out = std::process::Command::new(&how.shim)
            .args(["cluster", "certs", "--nodes", &ids.join(","), "--out"])
            .arg(dir.path().join("certs"))
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
    let nodes = (1..=how.count)
        .map(|i| start(how, &manifest, &bucket, dir.path(), &format!("n{i}"), virtual_clock))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut sockets = HashMap::new();
    let mut saved = Saved::default();
    for (i, step) in case.steps.iter().enumerate() {
        if let Err(e) = run_step(&nodes, &mut sockets, &mut saved, step) {
            drop(nodes);
            return Err(anyhow!(
                "step {} ({}): {e:#}{}",
                i + 1,
                step_name(step),
                logs(dir.path(), how.count)
            ));
        }
    }
    Ok(())
}

/// The last lines each node wrote to stderr, for a failing case's message.
fn logs(dir: &Path, count: usize) -> String {
    let mut out = String::new();
    for i in 1..=count {
        let text = std::fs::read_to_string(dir.join(format!("n{i}.log"))).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        out.push_str(&format!("\n  n{i}'s log:"));
        for l in &lines[lines.len().saturating_sub(15)..] {
            out.push_str("\n    ");
            out.push_str(l);
        }
    }
    out
}

/// A WebSocket the runner opened, and the id the actor knows it by.
struct Socket {
    ws: tungstenite::WebSocket<TcpStream>,
    id: String,
}

/// Opens a WebSocket to `actor` through `node` at the path `/<name>`, and
/// finds its id in the testee's `socket_log` by that path (a query: an
/// event that changes nothing, where the in-process runner holds the id).
fn open_socket(nodes: &[Process], n: usize, actor: &str, name: &str) -> anyhow::Result<Socket> {
    let base = &node(nodes, n)?.base;
    let host = base.strip_prefix("http://").unwrap_or(base);
    let stream = TcpStream::connect(host).with_context(|| format!("connecting to {host}"))?;
    let path = format!("/{name}");
    let (ws, _) = tungstenite::client(format!("ws://{host}/{CLASS}/{actor}{path}"), stream)
        .map_err(|e| anyhow!("opening a WebSocket to {actor} through node {n}: {e}"))?;
    settle(nodes, actor)?;
    let body = serde_json::to_vec(&json!({ "ops": [{
        "op": "query",
        "sql": "SELECT socket FROM socket_log WHERE event = 'open' AND detail = ?1 ORDER BY rowid DESC LIMIT 1",
        "params": [{ "text": path }],
    }] }))?;
    let answer = http::request(base, "POST", &format!("/{CLASS}/{actor}"), &body)?;
    let found: serde_json::Value =
        serde_json::from_slice(&answer.body).with_context(|| format!("finding the socket's id: {}", answer.text()))?;
    let id = found
        .pointer("/outcomes/0/ok/rows/0/0/text")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| anyhow!("the actor logged no open of {path}: {found}"))?
        .to_owned();
    settle(nodes, actor)?;
    Ok(Socket { ws, id })
}

/// Reads `socket` until it closes or `patience` runs out: the close's code
/// and reason, if it closed.
fn read_close(socket: &mut Socket, patience: Duration) -> anyhow::Result<Option<(u16, String)>> {
    use tungstenite::Message;
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

/// Waits until every node has run what was queued for `actor`: a request's
/// event may go on after its answer (its upload at the end), and the next
/// step must see it ended, as the in-process runner waits for the end. Twice,
/// since a node may hand an event to the holder. A fixed sleep here was too
/// short on a loaded machine.
fn settle(nodes: &[Process], actor: &str) -> anyhow::Result<()> {
    for _ in 0..2 {
        for p in nodes {
            let answer = http::request(&p.base, "POST", &format!("/_shim/actors/{CLASS}/{actor}/settle"), b"{}")?;
            if answer.status != 200 {
                bail!("settling {actor} on {}: {} {}", p.base, answer.status, answer.text());
            }
        }
    }
    Ok(())
}

fn node(nodes: &[Process], n: usize) -> anyhow::Result<&Process> {
    nodes
        .get(n.wrapping_sub(1))
        .ok_or_else(|| anyhow!("node {n} does not exist ({} node processes)", nodes.len()))
}

fn run_step(
    nodes: &[Process],
    sockets: &mut HashMap<String, Socket>,
    saved: &mut Saved,
    step: &Step,
) -> anyhow::Result<()> {
    match step {
        Step::Request {
            node: n,
            actor,
            ops,
            expect,
            status,
            body_contains,
            save,
        } => {
            let id_of = |name: &str| sockets.get(name).map(|s| s.id.clone()).or_else(|| saved.get(name));
            let ops: Vec<serde_json::Value> = ops.iter().map(|o| crate::exec::substitute(o, &id_of)).collect();
            let expect: Vec<serde_json::Value> = expect.iter().map(|e| crate::exec::substitute(e, &id_of)).collect();
            let body = serde_json::to_vec(&json!({ "ops": ops }))?;
            let answer = http::request(&node(nodes, *n)?.base, "POST", &format!("/{CLASS}/{actor}"), &body)?;
            let outcomes = check_answer(answer.status, &answer.body, *status, body_contains.as_deref(), &expect)?;
            saved.keep(save, &outcomes)?;
            settle(nodes, actor)?;
        }
        Step::Ordered { names } => saved.check_ordered(names)?,
        Step::Fault { node: n, kind, count } => {
            let body = serde_json::to_vec(&json!({ "kind": kind, "count": count }))?;
            let answer = http::request(&node(nodes, *n)?.base, "POST", "/_shim/faults", &body)?;
            if answer.status != 200 {
                bail!("arming {kind}: {} {}", answer.status, answer.text());
            }
        }
        Step::CutOff { node: n } => {
            let answer = http::request(&node(nodes, *n)?.base, "POST", "/_shim/cluster/cut-off", b"{}")?;
            if answer.status != 200 {
                bail!("cutting node {n} off: {} {}", answer.status, answer.text());
            }
        }
        Step::Hibernate => {
            // A node that stopped (cut off, fenced) has nothing to hibernate.
            for p in nodes {
                let _ = http::request(&p.base, "POST", "/_shim/hibernate", b"{}");
            }
        }
        Step::Metric {
            node: n,
            name,
            label,
            value,
        } => {
            let answer = http::request(&node(nodes, *n)?.base, "GET", "/metrics", b"")?;
            let v = metric(&answer.text(), name, label);
            if v != *value {
                bail!("expected {name}{{{label}}} = {value}, got {v}");
            }
        }
        Step::Advance { ms } => {
            for p in nodes {
                let answer = http::request(
                    &p.base,
                    "POST",
                    "/_shim/clock/advance",
                    json!({ "ms": ms }).to_string().as_bytes(),
                )?;
                if answer.status != 200 {
                    bail!("advancing {}'s clock: {} {}", p.base, answer.status, answer.text());
                }
            }
        }
        Step::RunAlarms { ran } => {
            // On every node: an alarm runs once wherever it was set, so they add up to `ran`.
            let mut n = 0;
            for p in nodes {
                let answer = http::request(&p.base, "POST", "/_shim/alarms/run", b"{}")?;
                let v: serde_json::Value = serde_json::from_slice(&answer.body)
                    .with_context(|| format!("running alarms on {}: {} {}", p.base, answer.status, answer.text()))?;
                n += v["ran"]
                    .as_u64()
                    .ok_or_else(|| anyhow!("running alarms on {}: {v}", p.base))?;
            }
            if n != *ran as u64 {
                bail!("expected {ran} alarms to run, {n} ran");
            }
        }
        Step::SocketOpen { node: n, actor, socket } => {
            let s = open_socket(nodes, *n, actor, socket)?;
            sockets.insert(socket.clone(), s);
        }
        Step::SocketClosed { socket, code, reason } => {
            let s = sockets
                .get_mut(socket)
                .ok_or_else(|| anyhow!("no socket named {socket}"))?;
            match read_close(s, SOCKET_PATIENCE)? {
                Some((c, r)) if c == *code && r == *reason => {}
                Some((c, r)) => bail!("expected close {code} {reason:?}, got {c} {r:?}"),
                None => bail!("expected the socket to be closed with {code} {reason:?}; it is still open"),
            }
        }
        Step::SocketOpenStill { socket } => {
            let s = sockets
                .get_mut(socket)
                .ok_or_else(|| anyhow!("no socket named {socket}"))?;
            if let Some((code, reason)) = read_close(s, Duration::from_millis(200))? {
                bail!("expected the socket open, it was closed with {code} {reason:?}");
            }
        }
        other => bail!("the `{}` step cannot run on node processes", step_name(other)),
    }
    Ok(())
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
