//! The case format: data files under `conformance/cases/`, one `[[case]]` each.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A case: a rule of the platform, shown by a sequence of steps.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique, kebab-case; used in the matrix and the expected-failure files.
    pub name: String,
    /// The rule the case shows, in words.
    pub rule: String,
    /// `single` (one node) or `cluster` (two nodes, `node = 1|2` in steps, sharing a bucket).
    #[serde(default = "single")]
    pub mode: String,
    /// The steps, in order.
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
}

fn single() -> String {
    "single".into()
}

/// One step of a case.
#[derive(Debug, Deserialize)]
#[serde(tag = "do", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Step {
    /// Send a request listing operations to an actor of class `testee`.
    Request {
        #[serde(default = "default_node")]
        node: usize,
        #[serde(default = "default_actor")]
        actor: String,
        #[serde(default)]
        ops: Vec<Value>,
        /// One expectation per outcome (see `Expect`).
        #[serde(default)]
        expect: Vec<Value>,
        /// The HTTP status expected (200 when not given).
        #[serde(default)]
        status: Option<u16>,
        /// A substring the body must contain (for host answers).
        #[serde(default)]
        body_contains: Option<String>,
        /// Values of the answer kept for later steps: a name, and where the
        /// value is in the outcomes as a JSON pointer (`"/1/ok/bookmark"`).
        /// A later step's `"$name"`, in its operations or its expectations,
        /// is replaced by it.
        #[serde(default)]
        save: BTreeMap<String, String>,
    },
    /// Check that values saved by earlier steps sort in this order, each
    /// after the one before (as strings).
    Ordered { names: Vec<String> },
    /// Call an actor from the host with a list of operations.
    Call {
        #[serde(default = "default_node")]
        node: usize,
        #[serde(default = "default_actor")]
        actor: String,
        ops: Vec<Value>,
        #[serde(default)]
        expect: Vec<Value>,
    },
    /// Arm a fault (on a node).
    Fault {
        #[serde(default = "default_node")]
        node: usize,
        kind: String,
        count: u32,
    },
    /// Cut a node off (cluster): it holds nothing from now on.
    CutOff { node: usize },
    /// Move the virtual clock forward.
    Advance { ms: u64 },
    /// Run due alarms and check how many ran.
    RunAlarms { ran: usize },
    /// Check whether the actor has a database.
    Exists {
        #[serde(default = "default_actor")]
        actor: String,
        expect: bool,
    },
    /// Open a socket to an actor, named for later steps.
    SocketOpen {
        #[serde(default = "default_node")]
        node: usize,
        #[serde(default = "default_actor")]
        actor: String,
        socket: String,
    },
    /// Expect the named socket to have been closed with this code and reason.
    SocketClosed { socket: String, code: u16, reason: String },
    /// Expect the named socket to be still open (no close received).
    SocketOpenStill { socket: String },
    /// Hibernate every actor.
    Hibernate,
    /// Check a counter (on a node).
    Metric {
        #[serde(default = "default_node")]
        node: usize,
        name: String,
        label: String,
        value: u64,
    },
}

fn default_node() -> usize {
    1
}

fn default_actor() -> String {
    "a".into()
}

#[derive(Debug, Deserialize)]
struct File {
    #[serde(rename = "case", default)]
    cases: Vec<Case>,
}

/// Reads every `*.toml` under `dir`, in name order.
///
/// # Errors
/// A file that cannot be read or parsed, or two cases with one name.
pub fn load_all(dir: &Path) -> anyhow::Result<Vec<Case>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f)?;
        let file: File = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        cases.extend(file.cases);
    }
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        anyhow::bail!("two cases are named {}", w[0]);
    }
    Ok(cases)
}
