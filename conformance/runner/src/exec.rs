//! Running one case against one testee in a fresh host.

use crate::case::{Case, Step};
use crate::expect;
use anyhow::{Context as _, anyhow, bail};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;
use wasmkeep_host::Cluster;
use wasmkeep_host::{
    Access, ActorKey, ClassSpec, FaultKind, HttpRequest, Outbound, Runtime, RuntimeConfig, SocketHandle,
};

/// The app every case runs in.
pub const APP: &str = "conformance/testee";
/// The class of the actors the steps address; `peer` is the same component, for calls.
pub const CLASS: &str = "testee";

/// Runs `case` against the testee component in a new host with its own data directory.
///
/// # Errors
/// The first step whose outcome differs, naming the step and both outcomes.
pub fn run_case(case: &Case, component: &Path, cache_dir: &Path) -> anyhow::Result<()> {
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
    let mut sockets: HashMap<String, SocketHandle> = HashMap::new();
    let mut saved = Saved::default();
    let result = (|| -> anyhow::Result<()> {
        for (i, step) in case.steps.iter().enumerate() {
            run_step(&nodes, step, &mut sockets, &mut saved)
                .with_context(|| format!("step {} ({})", i + 1, step_name(step)))?;
        }
        Ok(())
    })();
    for rt in &nodes {
        rt.dev().hibernate_all();
    }
    result
}

fn node(nodes: &[Runtime], n: usize) -> anyhow::Result<&Runtime> {
    nodes
        .get(n.wrapping_sub(1))
        .ok_or_else(|| anyhow!("node {n} does not exist (this mode has {} node(s))", nodes.len()))
}

pub(crate) fn step_name(step: &Step) -> &'static str {
    match step {
        Step::Request { .. } => "request",
        Step::Call { .. } => "call",
        Step::Fault { .. } => "fault",
        Step::CutOff { .. } => "cut-off",
        Step::Advance { .. } => "advance",
        Step::RunAlarms { .. } => "run-alarms",
        Step::Exists { .. } => "exists",
        Step::SocketOpen { .. } => "socket-open",
        Step::SocketClosed { .. } => "socket-closed",
        Step::SocketOpenStill { .. } => "socket-open-still",
        Step::Hibernate => "hibernate",
        Step::Metric { .. } => "metric",
        Step::Ordered { .. } => "ordered",
    }
}

fn key(actor: &str) -> ActorKey {
    ActorKey::new(APP, CLASS, actor)
}

pub(crate) fn check_outcomes(expect_list: &[Value], outcomes: &[Value]) -> anyhow::Result<()> {
    for (i, e) in expect_list.iter().enumerate() {
        expect::check(e, outcomes.get(i)).map_err(|m| anyhow!("operation {}: {m}", i + 1))?;
    }
    if outcomes.len() > expect_list.len() {
        bail!(
            "the testee answered {} outcomes, the case expects {}: {}",
            outcomes.len(),
            expect_list.len(),
            Value::from(outcomes.to_vec())
        );
    }
    Ok(())
}

/// Checks a request step's answer: its status (200 unless `status` says),
/// the text `body_contains` names, and on 200 its outcomes against `expect`.
/// Returns the outcomes (none unless 200).
///
/// # Errors
/// What differs, with what was answered.
pub(crate) fn check_answer(
    got: u16,
    body: &[u8],
    status: Option<u16>,
    body_contains: Option<&str>,
    expect: &[Value],
) -> anyhow::Result<Vec<Value>> {
    let text = || String::from_utf8_lossy(body).into_owned();
    let want = status.unwrap_or(200);
    if got != want {
        bail!("expected status {want}, got {got} with body {}", text());
    }
    if let Some(sub) = body_contains
        && !text().contains(sub)
    {
        bail!("expected the body to contain {sub:?}, got {}", text());
    }
    if got != 200 {
        return Ok(Vec::new());
    }
    let outcomes = parse_outcomes(body)?;
    check_outcomes(expect, &outcomes)?;
    Ok(outcomes)
}

/// Values earlier steps kept (`save`), by name.
#[derive(Debug, Default)]
pub(crate) struct Saved(HashMap<String, String>);

impl Saved {
    /// The value saved as `name`.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }

    /// Keeps what `save` points at in `outcomes`: a string as it is,
    /// anything else as its JSON text.
    ///
    /// # Errors
    /// A pointer that finds nothing.
    pub(crate) fn keep(&mut self, save: &BTreeMap<String, String>, outcomes: &[Value]) -> anyhow::Result<()> {
        let all = Value::from(outcomes.to_vec());
        for (name, at) in save {
            let v = all
                .pointer(at)
                .ok_or_else(|| anyhow!("save {name}: nothing at {at} in the outcomes {all}"))?;
            self.0
                .insert(name.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned));
        }
        Ok(())
    }

    /// Checks that the values saved as `names` sort in that order, each
    /// strictly after the one before.
    ///
    /// # Errors
    /// A name not saved, or two out of order.
    pub(crate) fn check_ordered(&self, names: &[String]) -> anyhow::Result<()> {
        let values = names
            .iter()
            .map(|n| self.get(n).ok_or_else(|| anyhow!("nothing was saved as {n}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        for (i, w) in values.windows(2).enumerate() {
            if w[0] >= w[1] {
                bail!(
                    "expected {} ({:?}) to sort before {} ({:?})",
                    names[i],
                    w[0],
                    names[i + 1],
                    w[1]
                );
            }
        }
        Ok(())
    }
}

/// Waits until every node has run what was queued for `key` (twice, since an
/// event may be forwarded from one node to the other).
fn settle(nodes: &[Runtime], key: &ActorKey) {
    for _ in 0..2 {
        for rt in nodes {
            rt.settle(key);
        }
    }
}

/// Replaces a string `"$name"` naming a socket opened by an earlier step,
/// or a value an earlier step saved, with what `id_of` finds for it.
pub(crate) fn substitute(v: &Value, id_of: &dyn Fn(&str) -> Option<String>) -> Value {
    match v {
        Value::String(s) => match s.strip_prefix('$').and_then(id_of) {
            Some(id) => Value::String(id),
            None => v.clone(),
        },
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, id_of)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), substitute(x, id_of))).collect()),
        other => other.clone(),
    }
}

pub(crate) fn parse_outcomes(body: &[u8]) -> anyhow::Result<Vec<Value>> {
    let v: Value = serde_json::from_slice(body)
        .with_context(|| format!("the testee's answer is not JSON: {}", String::from_utf8_lossy(body)))?;
    v.get("outcomes")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| anyhow!("the testee's answer has no outcomes: {v}"))
}

fn run_step(
    nodes: &[Runtime],
    step: &Step,
    sockets: &mut HashMap<String, SocketHandle>,
    saved: &mut Saved,
) -> anyhow::Result<()> {
    let rt = node(nodes, 1)?;
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
            let id_of = |name: &str| sockets.get(name).map(|h| h.id.to_string()).or_else(|| saved.get(name));
            let ops: Vec<Value> = ops.iter().map(|o| substitute(o, &id_of)).collect();
            let expect: Vec<Value> = expect.iter().map(|e| substitute(e, &id_of)).collect();
            let body = serde_json::to_vec(&json!({ "ops": ops }))?;
            let rt = node(nodes, *n)?;
            let answer = rt.request_blocking(&key(actor), HttpRequest::new("POST", "/", body))?;
            let outcomes = check_answer(answer.status, &answer.body, *status, body_contains.as_deref(), &expect)?;
            saved.keep(save, &outcomes)?;
            // The event may go on after answering (or run on the node that holds the
            // actor); the next step starts once it ended everywhere.
            settle(nodes, &key(actor));
        }
        Step::Call {
            node: n,
            actor,
            ops,
            expect,
        } => {
            let payload = serde_json::to_vec(&json!({ "ops": ops }))?;
            match node(nodes, *n)?.call(&key(actor), payload)? {
                Ok(answer) => check_outcomes(expect, &parse_outcomes(&answer)?)?,
                Err(e) => bail!("the call failed: {e:?}"),
            }
        }
        Step::Fault { node: n, kind, count } => {
            let k = FaultKind::from_name(kind).ok_or_else(|| anyhow!("unknown fault {kind}"))?;
            node(nodes, *n)?.dev().faults().arm(k, *count);
        }
        Step::CutOff { node: n } => {
            node(nodes, *n)?.dev().cut_off()?;
        }
        Step::Advance { ms } => {
            rt.dev().advance_clock(*ms)?;
        }
        Step::RunAlarms { ran } => {
            let n = rt.dev().run_due_alarms();
            if n != *ran {
                bail!("expected {ran} alarms to run, {n} ran");
            }
        }
        Step::Exists { actor, expect } => {
            let e = rt.admin().exists(&key(actor));
            if e != *expect {
                bail!(
                    "expected the actor's database to {}exist, it does{}",
                    if *expect { "" } else { "not " },
                    if e { "" } else { " not" }
                );
            }
        }
        Step::SocketOpen { node: n, actor, socket } => {
            let h = node(nodes, *n)?.open_socket(&key(actor), "/")?;
            settle(nodes, &key(actor));
            sockets.insert(socket.clone(), h);
        }
        Step::SocketClosed { socket, code, reason } => {
            let h = sockets
                .get_mut(socket)
                .ok_or_else(|| anyhow!("no socket named {socket}"))?;
            loop {
                match h.outbound.try_recv() {
                    Ok(Outbound::Close { code: c, reason: r }) => {
                        if c != *code || r != *reason {
                            bail!("expected close {code} {reason:?}, got {c} {r:?}");
                        }
                        break;
                    }
                    Ok(Outbound::Message(_)) => {}
                    Err(_) => bail!("expected the socket to be closed with {code} {reason:?}; it is still open"),
                }
            }
        }
        Step::SocketOpenStill { socket } => {
            let h = sockets
                .get_mut(socket)
                .ok_or_else(|| anyhow!("no socket named {socket}"))?;
            while let Ok(m) = h.outbound.try_recv() {
                if let Outbound::Close { code, reason } = m {
                    bail!("expected the socket open, it was closed with {code} {reason:?}");
                }
            }
        }
        Step::Hibernate => {
            for rt in nodes {
                rt.dev().hibernate_all();
            }
        }
        Step::Ordered { names } => saved.check_ordered(names)?,
        Step::Metric {
            node: n,
            name,
            label,
            value,
        } => {
            let v = node(nodes, *n)?.admin().metrics().get(name, label);
            if v != *value {
                bail!("expected {name}{{{label}}} = {value}, got {v}");
            }
        }
    }
    Ok(())
}
