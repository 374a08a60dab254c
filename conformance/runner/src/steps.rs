//! The one step interpreter (ADR 084): the steps of a case run here, once,
//! over a [`Driver`] that reaches the host: the nodes in this process
//! (`in_process`) or `wasmkeep-shim serve` node processes (`node_processes`).
//! What a step checks and every message it fails with are written here; a
//! driver only does what the step asks of the host and answers.

use crate::case::{Case, Step};
use crate::expect;
use anyhow::{Context as _, anyhow, bail};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};

/// The app every case runs in.
pub const APP: &str = "conformance/testee";
/// The class of the actors the steps address; `peer` is the same component, for calls.
pub const CLASS: &str = "testee";

/// How long a socket step looks for a close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Patience {
    /// The step expects a close: wait for one (as long as the driver's way
    /// of reaching the host needs).
    ForAClose,
    /// The step expects none: a look at what arrived.
    Glance,
}

/// What the steps ask of a host. Nodes are numbered from 1, as the cases
/// name them; a driver says when a node does not exist, and when it cannot
/// do what a step asks (node processes: the host's inside).
pub trait Driver {
    /// A socket a step opened.
    type Socket;

    /// Sends the testee's request `body` (`{"ops": [...]}`) to `actor`
    /// through `node`: the status and body of the answer.
    ///
    /// # Errors
    /// No answer, or no such node.
    fn request(&mut self, node: usize, actor: &str, body: Vec<u8>) -> anyhow::Result<(u16, Vec<u8>)>;

    /// Waits until every node has run what was queued for `actor`: an event
    /// may go on after answering, or run on the node that holds the actor.
    ///
    /// # Errors
    /// A node that did not say it settled.
    fn settle(&mut self, actor: &str) -> anyhow::Result<()>;

    /// Calls `actor` through `node` as the host, with `payload`: its answer.
    ///
    /// # Errors
    /// The call failed, or this driver cannot call.
    fn call(&mut self, node: usize, actor: &str, payload: Vec<u8>) -> anyhow::Result<Vec<u8>>;

    /// Arms the fault named `kind` on `node`, for `count` times.
    ///
    /// # Errors
    /// An unknown fault, or the node refused.
    fn arm_fault(&mut self, node: usize, kind: &str, count: u32) -> anyhow::Result<()>;

    /// Cuts `node` off the cluster.
    ///
    /// # Errors
    /// The node refused.
    fn cut_off(&mut self, node: usize) -> anyhow::Result<()>;

    /// Moves the virtual clock forward by `ms`.
    ///
    /// # Errors
    /// The clock did not move.
    fn advance(&mut self, ms: u64) -> anyhow::Result<()>;

    /// Runs the due alarms: how many ran.
    ///
    /// # Errors
    /// A node did not say.
    fn run_alarms(&mut self) -> anyhow::Result<u64>;

    /// Whether `actor` has a database.
    ///
    /// # Errors
    /// This driver cannot see it.
    fn exists(&mut self, actor: &str) -> anyhow::Result<bool>;

    /// Opens a socket to `actor` through `node`, named `name` by the case,
    /// and waits until its open event ran.
    ///
    /// # Errors
    /// It did not open.
    fn open_socket(&mut self, node: usize, actor: &str, name: &str) -> anyhow::Result<Self::Socket>;

    /// The id the actor knows `socket` by (a step's `"$name"`).
    fn socket_id(socket: &Self::Socket) -> String;

    /// The close `socket` received, if it received one, reading past the
    /// messages before it.
    ///
    /// # Errors
    /// The socket broke without a close.
    fn close_received(
        &mut self,
        socket: &mut Self::Socket,
        patience: Patience,
    ) -> anyhow::Result<Option<(u16, String)>>;

    /// Hibernates every actor on every node.
    ///
    /// # Errors
    /// A node could not.
    fn hibernate(&mut self) -> anyhow::Result<()>;

    /// The counter `name` with the label value `label` on `node`.
    ///
    /// # Errors
    /// The node did not answer.
    fn metric(&mut self, node: usize, name: &str, label: &str) -> anyhow::Result<u64>;

    /// After a failing step: ends the nodes and says what they logged, to
    /// follow the failure's message (nothing when the nodes log here).
    fn failure_note(&mut self) -> String;

    /// At the end of the case, the sockets still open.
    fn finish(&mut self);
}

/// Runs the steps of `case` over `driver`.
///
/// # Errors
/// The first step whose outcome differs: `step N (name): what differs`,
/// then what the driver notes.
pub fn run<D: Driver>(case: &Case, driver: &mut D) -> anyhow::Result<()> {
    let mut sockets: HashMap<String, D::Socket> = HashMap::new();
    let mut saved = Saved::default();
    let mut result = Ok(());
    for (i, step) in case.steps.iter().enumerate() {
        if let Err(e) = run_step(driver, step, &mut sockets, &mut saved) {
            let note = driver.failure_note();
            result = Err(anyhow!("step {} ({}): {e:#}{note}", i + 1, step_name(step)));
            break;
        }
    }
    driver.finish();
    result
}

/// The name a step has in the cases (`do = "..."`).
pub fn step_name(step: &Step) -> &'static str {
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

fn run_step<D: Driver>(
    driver: &mut D,
    step: &Step,
    sockets: &mut HashMap<String, D::Socket>,
    saved: &mut Saved,
) -> anyhow::Result<()> {
    match step {
        Step::Request {
            node,
            actor,
            ops,
            expect,
            status,
            body_contains,
            save,
        } => {
            let id_of = |name: &str| sockets.get(name).map(D::socket_id).or_else(|| saved.get(name));
            let ops: Vec<Value> = ops.iter().map(|o| substitute(o, &id_of)).collect();
            let expect: Vec<Value> = expect.iter().map(|e| substitute(e, &id_of)).collect();
            let body = serde_json::to_vec(&json!({ "ops": ops }))?;
            let (got, answer) = driver.request(*node, actor, body)?;
            let outcomes = check_answer(got, &answer, *status, body_contains.as_deref(), &expect)?;
            saved.keep(save, &outcomes)?;
            // The next step starts once the event ended everywhere.
            driver.settle(actor)?;
        }
        Step::Call {
            node,
            actor,
            ops,
            expect,
        } => {
            let payload = serde_json::to_vec(&json!({ "ops": ops }))?;
            let answer = driver.call(*node, actor, payload)?;
            check_outcomes(expect, &parse_outcomes(&answer)?)?;
        }
        Step::Fault { node, kind, count } => driver.arm_fault(*node, kind, *count)?,
        Step::CutOff { node } => driver.cut_off(*node)?,
        Step::Advance { ms } => driver.advance(*ms)?,
        Step::RunAlarms { ran } => {
            let n = driver.run_alarms()?;
            if n != *ran as u64 {
                bail!("expected {ran} alarms to run, {n} ran");
            }
        }
        Step::Exists { actor, expect } => {
            let e = driver.exists(actor)?;
            if e != *expect {
                bail!(
                    "expected the actor's database to {}exist, it does{}",
                    if *expect { "" } else { "not " },
                    if e { "" } else { " not" }
                );
            }
        }
        Step::SocketOpen { node, actor, socket } => {
            let s = driver.open_socket(*node, actor, socket)?;
            sockets.insert(socket.clone(), s);
        }
        Step::SocketClosed { socket, code, reason } => {
            let s = sockets
                .get_mut(socket)
                .ok_or_else(|| anyhow!("no socket named {socket}"))?;
            match driver.close_received(s, Patience::ForAClose)? {
                Some((c, r)) if c == *code && r == *reason => {}
                Some((c, r)) => bail!("expected close {code} {reason:?}, got {c} {r:?}"),
                None => bail!("expected the socket to be closed with {code} {reason:?}; it is still open"),
            }
        }
        Step::SocketOpenStill { socket } => {
            let s = sockets
                .get_mut(socket)
                .ok_or_else(|| anyhow!("no socket named {socket}"))?;
            if let Some((code, reason)) = driver.close_received(s, Patience::Glance)? {
                bail!("expected the socket open, it was closed with {code} {reason:?}");
            }
        }
        Step::Hibernate => driver.hibernate()?,
        Step::Ordered { names } => saved.check_ordered(names)?,
        Step::Metric {
            node,
            name,
            label,
            value,
        } => {
            let v = driver.metric(*node, name, label)?;
            if v != *value {
                bail!("expected {name}{{{label}}} = {value}, got {v}");
            }
        }
    }
    Ok(())
}

fn check_outcomes(expect_list: &[Value], outcomes: &[Value]) -> anyhow::Result<()> {
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
fn check_answer(
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
struct Saved(HashMap<String, String>);

impl Saved {
    /// The value saved as `name`.
    fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }

    /// Keeps what `save` points at in `outcomes`: a string as it is,
    /// anything else as its JSON text.
    ///
    /// # Errors
    /// A pointer that finds nothing.
    fn keep(&mut self, save: &BTreeMap<String, String>, outcomes: &[Value]) -> anyhow::Result<()> {
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
    fn check_ordered(&self, names: &[String]) -> anyhow::Result<()> {
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

/// Replaces a string `"$name"` naming a socket opened by an earlier step,
/// or a value an earlier step saved, with what `id_of` finds for it.
fn substitute(v: &Value, id_of: &dyn Fn(&str) -> Option<String>) -> Value {
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

fn parse_outcomes(body: &[u8]) -> anyhow::Result<Vec<Value>> {
    let v: Value = serde_json::from_slice(body)
        .with_context(|| format!("the testee's answer is not JSON: {}", String::from_utf8_lossy(body)))?;
    v.get("outcomes")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| anyhow!("the testee's answer has no outcomes: {v}"))
}
