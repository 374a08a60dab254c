//! One outcome per operator delete request (issue 57): `wasmkeep-shim actor
//! delete` of a counter that one of two or three node processes holds, with
//! and without a `kill -9` of the holder at several moments of the delete.
//! Every node process lists the requests (ADR 031), so two nodes may act on
//! one request: the holder carries it out and releases the actor, and the
//! leader, listing the request before its key is deleted, finds the actor
//! deleted. Whichever acts, the answer is "Deleted" for an actor the request
//! deleted (seed 000 §3, step 3), and the request leaves one outcome.
//!
//! Over moto (`WASMKEEP_TEST_S3`, the exports of scripts/s3-server.sh; tests
//! named `_over_moto_`, skipped without it) and over `file://`.
//! `WASMKEEP_OPERATOR_DELETE_TRIALS` trials per case (default 4).

mod common;

use common::node_process::{APP, LEASE_MS, NodeProcess, increment, server_prefix, start};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasmkeep_shim::ActorKey;
use wasmkeep_shim::bucket::ObjectStore;
use wasmkeep_shim::clock::SystemClock;
use wasmkeep_shim::deletion::DeletionStatus;
use wasmkeep_shim::replica::OwnerRecord;

/// Trials per case: `WASMKEEP_OPERATOR_DELETE_TRIALS`, else `default`.
fn trials(default: usize) -> usize {
    std::env::var("WASMKEEP_OPERATOR_DELETE_TRIALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn owner(bucket: &dyn ObjectStore, name: &str) -> OwnerRecord {
    let key = wasmkeep_shim::keys::owner(&ActorKey::new(APP, "counter", name));
    let (body, _) = bucket.get(&key).expect("read the record").expect("a record");
    serde_json::from_slice(&body).expect("an ownership record")
}

/// Every object under the app's `deletes/` that an outcome's key names
/// (`<id>.done`, `<id>.absent`) as long as it runs, listed every 20 ms: the
/// command removes the outcome it reads, so a listing after it would miss one.
struct Watcher {
    seen: Arc<Mutex<BTreeSet<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    fn start(bucket: Arc<dyn ObjectStore>) -> Self {
        let seen = Arc::new(Mutex::new(BTreeSet::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let prefix = wasmkeep_shim::keys::deletes_prefix(APP);
            while !st.load(Ordering::Relaxed) {
                if let Ok(listed) = bucket.list(&prefix) {
                    let mut seen = s.lock().expect("seen");
                    for m in listed {
                        if m.key.ends_with(".done") || m.key.ends_with(".absent") {
                            seen.insert(m.key);
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Self {
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// The outcomes seen of `name`'s requests, by request id.
    fn outcomes_of(&self, name: &str) -> BTreeMap<String, BTreeSet<String>> {
        let prefix = format!(
            "{}counter/{}/",
            wasmkeep_shim::keys::deletes_prefix(APP),
            ActorKey::new(APP, "counter", name).encoded_name()
        );
        let mut by_id: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for k in self.seen.lock().expect("seen").iter() {
            if let Some((id, kind)) = k.strip_prefix(&prefix).and_then(|rest| rest.split_once('.')) {
                by_id.entry(id.to_owned()).or_default().insert(kind.to_owned());
            }
        }
        by_id
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What one case found over its trials.
#[derive(Debug, Default)]
struct Tally {
    deleted: usize,
    no_such_actor: usize,
    other: Vec<String>,
    two_outcomes: Vec<String>,
    left_behind: Vec<String>,
}

/// `count` node processes over `url`; per trial a new counter, incremented
/// through one node (which holds it), then `actor delete`; with `kill_at`,
/// the holder is killed that long after the command started and started
/// again once the command answered.
fn case(url: &str, count: usize, trials: usize, kill_at: &[u64]) -> Tally {
    let dir = tempfile::tempdir().expect("tempdir");
    let bucket = wasmkeep_shim::bucket_url::open_bucket(url, Arc::new(SystemClock)).expect("the bucket opens");
    let mut nodes: Vec<NodeProcess> = (1..=count).map(|i| start(&format!("n{i}"), url, dir.path())).collect();
    let watcher = Watcher::start(bucket.clone());
    let mut tally = Tally::default();
    for trial in 0..trials {
        let name = format!("d{trial}");
        let through = trial % nodes.len();
        increment(&nodes[through], &name, Duration::from_secs(20));
        increment(&nodes[through], &name, Duration::from_secs(20));
        let holder = owner(bucket.as_ref(), &name).node;
        let command = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
            .args(["actor", "delete", "--app", APP, &format!("counter/{name}")])
            .args(["--bucket", url, "--wait", "40"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("actor delete runs");
        let started = Instant::now();
        let mut killed = None;
        if !kill_at.is_empty() {
            let at = Duration::from_millis(kill_at[trial % kill_at.len()]);
            std::thread::sleep(at.saturating_sub(started.elapsed()));
            let victim = nodes
                .iter()
                .position(|n| n.id == holder)
                .unwrap_or_else(|| panic!("the holder {holder} is one of ours"));
            // kill -9 (the drop kills by its id): no ordered stop, no lease given up.
            killed = Some(nodes.remove(victim).id.clone());
        }
        let out = command.wait_with_output().expect("actor delete ends");
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let took = started.elapsed();
        match (out.status.code(), stdout.as_str()) {
            (Some(0), "Deleted") => tally.deleted += 1,
            (Some(1), "no such actor") => tally.no_such_actor += 1,
            (code, _) => tally.other.push(format!(
                "{name}: exit {code:?}: {stdout} {}",
                String::from_utf8_lossy(&out.stderr)
            )),
        }
        eprintln!(
            "{url}, {count} nodes, {name} held by {holder}{}: {stdout:?} after {took:?}",
            killed
                .as_ref()
                .map(|k| format!(", {k} killed at {:?}", kill_at[trial % kill_at.len()]))
                .unwrap_or_default()
        );
        if let Some(id) = killed {
            nodes.push(start(&id, url, dir.path()));
        }
        // The actor is deleted, by an operator (`actor status` says so).
        let status = wasmkeep_shim::replica::deletion_status(bucket.as_ref(), &ActorKey::new(APP, "counter", &name));
        assert!(
            matches!(&status, DeletionStatus::Deleted { how, .. } if how == "operator"),
            "{name}: {status:?}"
        );
        // Every node has listed the deletes at least twice since (a pass a
        // second; a taken-over actor after its holder's lease).
        std::thread::sleep(Duration::from_millis(2_500.max(LEASE_MS)));
        for (id, kinds) in watcher.outcomes_of(&name) {
            if kinds.len() > 1 {
                tally.two_outcomes.push(format!("{name}: request {id}: {kinds:?}"));
            }
        }
        let prefix = format!(
            "{}counter/{}/",
            wasmkeep_shim::keys::deletes_prefix(APP),
            ActorKey::new(APP, "counter", &name).encoded_name()
        );
        for m in bucket.list(&prefix).expect("list the requests") {
            tally.left_behind.push(m.key);
        }
    }
    drop(watcher);
    tally
}

fn check(what: &str, tally: &Tally, trials: usize) {
    assert_eq!(
        tally.no_such_actor, 0,
        "{what}: \"no such actor\" for a deleted actor: {tally:?}"
    );
    assert!(tally.other.is_empty(), "{what}: {tally:?}");
    assert!(
        tally.two_outcomes.is_empty(),
        "{what}: two outcomes of one request: {tally:?}"
    );
    assert!(
        tally.left_behind.is_empty(),
        "{what}: an outcome (or the request) left once the command read its outcome: {tally:?}"
    );
    assert_eq!(tally.deleted, trials, "{what}");
}

/// No kill; every moment of the kill list (ms after the command started).
const KILL_AT: [u64; 4] = [0, 150, 400, 900];

/// Every case first, then the checks: a failure's message shows them all.
fn over(url_of: impl Fn(&str) -> String, counts: &[usize], trials: usize) {
    let mut tallies = Vec::new();
    for &count in counts {
        let what = format!("{count} nodes, no kill");
        tallies.push((what, case(&url_of(&format!("plain-{count}")), count, trials, &[])));
        let what = format!("{count} nodes, the holder killed");
        tallies.push((what, case(&url_of(&format!("kill-{count}")), count, trials, &KILL_AT)));
    }
    for (what, tally) in &tallies {
        eprintln!("{what}: {tally:?}");
    }
    for (what, tally) in &tallies {
        check(what, tally, trials);
    }
}

/// Two and three node processes over moto, 4 trials per case unless
/// `WASMKEEP_OPERATOR_DELETE_TRIALS` says more (20 for the figure).
#[test]
fn one_outcome_per_operator_delete_over_moto_with_and_without_kills() {
    let Some(prefix) = server_prefix("WASMKEEP_TEST_S3", "scripts/s3-server.sh", "operator-outcomes") else {
        return;
    };
    over(|case| format!("{prefix}-{case}"), &[2, 3], trials(4));
}

/// Three node processes over `file://`, 2 trials per case (the workspace's
/// tests run it; the moto test is the one with the figures).
#[test]
fn one_outcome_per_operator_delete_over_a_file_url_with_and_without_kills() {
    let dir = tempfile::tempdir().expect("tempdir");
    over(
        |case| format!("file://{}", dir.path().join(case).display()),
        &[3],
        trials(2),
    );
}
