//! The cluster cases on node processes (issue 24, ADR 031): each case gets
//! N `wasmkeep-shim serve --mode cluster --node-id` processes of the testee
//! over a bucket URL of its own, and its steps go to them over HTTP, as a
//! client and an operator reach a real cluster: requests to
//! `/testee/<actor>`, faults through `/_shim/faults`, a cut-off through
//! `/_shim/cluster/cut-off`, hibernation through `/_shim/hibernate`, counters
//! from `/metrics`. Steps that need the host's inside (the virtual clock,
//! alarms on demand, host calls, sockets held by the runner, the local
//! files) have no such door: a case with one is reported as not run here.

use crate::case::{Case, Step};
use crate::exec::{APP, CLASS, check_answer, step_name};
use crate::http;
use anyhow::{Context as _, anyhow, bail};
use serde_json::json;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};

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
}

/// Lease of the processes: short, so that a killed node is taken over soon.
const LEASE_MS: &str = "2000";

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
                Step::Request { .. } | Step::Fault { .. } | Step::CutOff { .. } | Step::Hibernate | Step::Metric { .. }
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

fn start(how: &NodeProcesses, manifest: &Path, bucket: &str, dir: &Path, id: &str) -> anyhow::Result<Process> {
    let mut child = std::process::Command::new(&how.shim)
        .args(["serve", "--listen", "127.0.0.1:0", "--mode", "cluster", "--node-id", id])
        .args(["--bucket", bucket, "--lease-ms", LEASE_MS])
        .arg("--manifest")
        .arg(manifest)
        .arg("--data-dir")
        .arg(dir.join(id))
        .env("WASMKEEP_CACHE_DIR", &how.cache_dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
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
    let nodes = (1..=how.count)
        .map(|i| start(how, &manifest, &bucket, dir.path(), &format!("n{i}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for (i, step) in case.steps.iter().enumerate() {
        run_step(&nodes, step).with_context(|| format!("step {} ({})", i + 1, step_name(step)))?;
    }
    Ok(())
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

fn run_step(nodes: &[Process], step: &Step) -> anyhow::Result<()> {
    match step {
        Step::Request {
            node: n,
            actor,
            ops,
            expect,
            status,
            body_contains,
        } => {
            let body = serde_json::to_vec(&json!({ "ops": ops }))?;
            let answer = http::request(&node(nodes, *n)?.base, "POST", &format!("/{CLASS}/{actor}"), &body)?;
            check_answer(answer.status, &answer.body, *status, body_contains.as_deref(), expect)?;
            settle(nodes, actor)?;
        }
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
