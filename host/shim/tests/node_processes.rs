//! A cluster of node processes (`serve --mode cluster --node-id`; ADR 028),
//! run as real `wasmkeep-shim` processes over one bucket: requests to the
//! counter example through every node (a node that does not hold the actor
//! forwards to the one that does), then `kill -9` of the holder: another node
//! takes the actor over once the holder's lease lapses, and every count that
//! was acknowledged is still there. Over `file://` always; over moto's S3
//! server and Azurite when the test command names them (`WASMKEEP_TEST_S3`,
//! `WASMKEEP_TEST_AZURE`).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmkeep_shim::ActorKey;
use wasmkeep_shim::bucket::ObjectStore;
use wasmkeep_shim::clock::SystemClock;
use wasmkeep_shim::replica::OwnerRecord;

/// Short enough for a quick takeover, long enough for renewals on a busy machine.
const LEASE_MS: u64 = 2_000;
const APP: &str = "examples/counter";

/// One `wasmkeep-shim serve --node-id` process; killed (by its id) when dropped.
struct NodeProcess {
    id: String,
    child: std::process::Child,
    base: String,
    /// What it wrote to stderr so far, for a failure's message.
    stderr: Arc<std::sync::Mutex<String>>,
}

impl NodeProcess {
    fn log(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn manifest() -> PathBuf {
    // The component must be built; this panics with how to build it.
    common::component("counter-rust");
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/counter-rust/wasmkeep.toml")
}

fn start(id: &str, bucket: &str, dir: &Path) -> NodeProcess {
    start_app(&manifest(), id, bucket, dir)
}

/// The Rust conformance testee as app `t/app`, class `testee`.
fn testee_manifest(dir: &Path) -> PathBuf {
    common::testee_manifest(dir, "testee.toml")
}

fn start_app(manifest: &Path, id: &str, bucket: &str, dir: &Path) -> NodeProcess {
    use std::io::BufRead as _;
    let lease = LEASE_MS.to_string();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(["serve", "--listen", "127.0.0.1:0", "--mode", "cluster", "--node-id", id])
        .args(["--bucket", bucket, "--lease-ms", &lease])
        .arg("--manifest")
        .arg(manifest)
        .arg("--data-dir")
        .arg(dir.join(id))
        .env("WASMKEEP_CACHE_DIR", common::cache_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start serve");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the listening line");
    // "listening on http://127.0.0.1:PORT (n1)"
    let Some(base) = line
        .strip_prefix("listening on ")
        .and_then(|l| l.split_whitespace().next())
    else {
        let out = child.wait_with_output().expect("serve ends");
        panic!(
            "node {id} did not start ({}): {line:?}; its stderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let base = base.to_owned();
    let stderr = Arc::new(std::sync::Mutex::new(String::new()));
    if let Some(pipe) = child.stderr.take() {
        let sink = stderr.clone();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
    }
    NodeProcess {
        id: id.to_owned(),
        child,
        base,
        stderr,
    }
}

/// `POST /counter/<name>/` through `node`, retried on 503 (a holder not yet
/// taken over) until `patience` runs out: the count it answered.
fn increment(node: &NodeProcess, name: &str, patience: Duration) -> u64 {
    let url = format!("{}/counter/{name}/", node.base);
    let deadline = Instant::now() + patience;
    loop {
        let (status, body) = common::http("POST", &url);
        if status == 200 {
            return body.trim().parse().unwrap_or_else(|_| panic!("a count: {body:?}"));
        }
        assert_eq!(status, 503, "through {}: only a retryable failure: {body}", node.id);
        assert!(
            Instant::now() < deadline,
            "through {}: still {status} after {patience:?}: {body}",
            node.id
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn owner(bucket: &dyn ObjectStore, name: &str) -> OwnerRecord {
    let key = wasmkeep_shim::keys::owner(&ActorKey::new(APP, "counter", name));
    let (body, _) = bucket.get(&key).expect("read the record").expect("a record");
    serde_json::from_slice(&body).expect("an ownership record")
}

/// The node holding an unexpired control lease.
fn control_holder(bucket: &dyn ObjectStore) -> Option<String> {
    let (record, _) = wasmkeep_shim::node_lease::read_control(bucket).expect("read the control lease")?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or_default();
    record.is_live_at(now).then_some(record.node)
}

fn lease_epoch(bucket: &dyn ObjectStore, node: &str) -> u64 {
    wasmkeep_shim::node_lease::read_lease(bucket, node)
        .expect("read the lease")
        .expect("a lease")
        .0
        .epoch
}

/// The scenario over `bucket_url` with `count` node processes.
fn kill_the_holder_and_lose_nothing(bucket_url: &str, count: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let bucket = wasmkeep_shim::bucket_url::open_bucket(bucket_url, Arc::new(SystemClock)).expect("the bucket opens");
    let mut nodes: Vec<NodeProcess> = (1..=count)
        .map(|i| start(&format!("n{i}"), bucket_url, dir.path()))
        .collect();
    let actors = ["a", "b", "c"];
    let mut acknowledged = std::collections::HashMap::new();
    // Every node answers for every actor, in turn: the holder itself or by forwarding.
    for round in 0..2 * count {
        for name in actors {
            let node = &nodes[round % count];
            let n = increment(node, name, Duration::from_secs(10));
            let last = acknowledged.insert(name, n).unwrap_or(0);
            assert_eq!(n, last + 1, "{name} through {}: one more than the last answer", node.id);
        }
    }
    let leader = control_holder(bucket.as_ref()).expect("a node holds the control lease");
    assert!(nodes.iter().any(|n| n.id == leader), "one of ours leads: {leader}");
    let holder = owner(bucket.as_ref(), "a");
    let held_at = holder.generation;
    let victim = nodes
        .iter()
        .position(|n| n.id == holder.node)
        .unwrap_or_else(|| panic!("the holder {} is one of ours", holder.node));
    let killed = nodes.remove(victim);
    let killed_id = killed.id.clone();
    // kill -9: no ordered stop, no lease given up.
    drop(killed);
    let took_over_within = Instant::now();
    for (i, name) in actors.iter().enumerate() {
        let node = &nodes[i % nodes.len()];
        let n = increment(node, name, Duration::from_millis(LEASE_MS * 10));
        assert_eq!(
            n,
            acknowledged[name] + 1,
            "{name} after {killed_id} was killed: nothing acknowledged is lost, nothing counted twice"
        );
        acknowledged.insert(name, n);
    }
    let elapsed = took_over_within.elapsed();
    // The control lease is with a live node (taken over if the killed node held it).
    let deadline = Instant::now() + Duration::from_millis(LEASE_MS * 5);
    while control_holder(bucket.as_ref()).is_none_or(|n| n == killed_id) {
        assert!(Instant::now() < deadline, "no live node took the control lease over");
        std::thread::sleep(Duration::from_millis(100));
    }
    let now = owner(bucket.as_ref(), "a");
    assert_ne!(now.node, killed_id, "another node holds a");
    assert!(now.generation > held_at, "at a higher generation: {now:?}");
    eprintln!(
        "{bucket_url}, {count} nodes: {killed_id} killed, {} took over within {elapsed:?} (lease {LEASE_MS} ms)",
        now.node
    );
    // The killed node comes back at a higher epoch, and serves again (forwarding).
    let before = lease_epoch(bucket.as_ref(), &killed_id);
    let back = start(&killed_id, bucket_url, dir.path());
    assert_eq!(
        lease_epoch(bucket.as_ref(), &killed_id),
        before + 1,
        "a restart takes the next epoch"
    );
    for name in actors {
        let n = increment(&back, name, Duration::from_secs(10));
        assert_eq!(n, acknowledged[name] + 1, "{name} through {} restarted", back.id);
        acknowledged.insert(name, n);
    }
}

/// The testee's ops through `node`: status and body.
fn ops(node: &NodeProcess, actor: &str, ops: &serde_json::Value) -> (u16, String) {
    let body = serde_json::json!({ "ops": ops }).to_string();
    common::http_body("POST", &format!("{}/testee/{actor}", node.base), &body)
}

/// An alarm set on a node that is then killed runs on another node: the
/// alarm index is in the bucket, and the other node takes the actor over
/// once the holder's lease lapses.
#[test]
fn an_alarm_set_on_a_killed_node_runs_on_another() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let manifest = testee_manifest(dir.path());
    let n1 = start_app(&manifest, "n1", &url, dir.path());
    let n2 = start_app(&manifest, "n2", &url, dir.path());
    let (status, body) = ops(
        &n1,
        "sleeper",
        // Flushed before the answer: the alarm is in the bucket when n1 is
        // killed (without it, the answer may go out before the event's upload).
        &serde_json::json!([{ "op": "set-alarm", "in": "1500" }, { "op": "flush" }]),
    );
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("\"err\""), "set and kept: {body}");
    let bucket = wasmkeep_shim::bucket_url::open_bucket(&url, Arc::new(SystemClock)).expect("open");
    let key = ActorKey::new("t/app", "testee", "sleeper");
    assert_eq!(
        wasmkeep_shim::replica::recorded_holder(bucket.as_ref(), &key)
            .expect("read")
            .map(|r| r.node)
            .as_deref(),
        Some("n1"),
        "n1 holds the actor"
    );
    drop(n1);
    // Due in 1.5 s; n1's lease lapses within 2 s; n2's timer looks at least
    // every second. Nothing is sent to the actor meanwhile (a request would
    // take it over and register its alarm anyway): only the index in the
    // bucket tells n2 to wake it.
    let holder = || {
        wasmkeep_shim::replica::recorded_holder(bucket.as_ref(), &key)
            .expect("read")
            .map(|r| r.node)
    };
    let deadline = Instant::now() + Duration::from_millis(LEASE_MS * 10);
    while holder().as_deref() != Some("n2") {
        assert!(
            Instant::now() < deadline,
            "n2 never woke the alarm of the actor n1 held; n2's log:\n{}",
            n2.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, body) = ops(
        &n2,
        "sleeper",
        &serde_json::json!([{ "op": "query", "sql": "SELECT count(*) FROM alarm_log" }]),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(r#"[[{"integer":"1"}]]"#),
        "the alarm ran once, on n2: {body}"
    );
}

/// A second process joining as a node id that runs fences the first: its
/// next renewal fails its condition, and it stops (exit status 1) while the
/// new one serves.
#[test]
fn a_node_process_whose_id_is_taken_stops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let mut old = start("n1", &url, &dir.path().join("old"));
    assert_eq!(increment(&old, "a", Duration::from_secs(10)), 1);
    let new = start("n1", &url, &dir.path().join("new"));
    let deadline = Instant::now() + Duration::from_millis(LEASE_MS * 5);
    let status = loop {
        if let Some(status) = old.child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the fenced process still runs; its log:\n{}",
            old.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        status.code(),
        Some(1),
        "it stops with an error; its log:\n{}",
        old.log()
    );
    assert_eq!(
        increment(&new, "a", Duration::from_millis(LEASE_MS * 5)),
        2,
        "the new n1 serves, with what the old one acknowledged"
    );
}

/// A WebSocket opened through a node that does not hold the actor reaches
/// the holder: the node carries it to the holder's process.
#[test]
fn a_websocket_through_another_node_reaches_the_holder() {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let manifest = testee_manifest(dir.path());
    let n1 = start_app(&manifest, "n1", &url, dir.path());
    let n2 = start_app(&manifest, "n2", &url, dir.path());
    let (status, body) = ops(&n1, "room", &serde_json::json!([]));
    assert_eq!(status, 200, "n1 takes the actor: {body}");
    let ws_url = format!("{}/testee/room/lobby", n2.base.replacen("http://", "ws://", 1));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let echoed = rt.block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url)
            .await
            .expect("the socket opens");
        ws.send(Message::text("echo:hello")).await.expect("send");
        let answer = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(m) = ws.next().await {
                if let Message::Text(t) = m.expect("a message") {
                    return Some(t.as_str().to_owned());
                }
            }
            None
        })
        .await;
        let _ = ws.close(None).await;
        answer
    });
    assert_eq!(
        echoed.ok().flatten().as_deref(),
        Some("hello"),
        "the holder's actor echoes through n2; n2's log:\n{}",
        n2.log()
    );
    let (status, body) = ops(
        &n1,
        "room",
        &serde_json::json!([{ "op": "query", "sql": "SELECT event, detail FROM socket_log WHERE event = 'open'" }]),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("/lobby"),
        "the socket was opened on the holder, with its path: {body}"
    );
}

#[test]
fn node_processes_over_a_file_url_take_over_from_a_killed_holder() {
    let dir = tempfile::tempdir().expect("tempdir");
    for count in [2, 3] {
        let url = format!("file://{}", dir.path().join(format!("bucket-{count}")).display());
        kill_the_holder_and_lose_nothing(&url, count);
    }
}

/// With the test command's moto server (`WASMKEEP_TEST_S3` and the AWS_*
/// exports of scripts/s3-server.sh).
#[test]
fn node_processes_over_moto_take_over_from_a_killed_holder() {
    over_a_server("WASMKEEP_TEST_S3", "scripts/s3-server.sh");
}

/// With the test command's Azurite (`WASMKEEP_TEST_AZURE` and the exports of
/// scripts/azurite-server.sh).
#[test]
fn node_processes_over_azurite_take_over_from_a_killed_holder() {
    over_a_server("WASMKEEP_TEST_AZURE", "scripts/azurite-server.sh");
}

fn over_a_server(env: &str, script: &str) {
    let Some(prefix) = server_prefix(env, script, "node-processes") else {
        return;
    };
    for count in [2, 3] {
        kill_the_holder_and_lose_nothing(&format!("{prefix}-{count}"), count);
    }
}

/// What a counter may hold now, as far as its answers tell: acknowledged
/// answers pin it, failed requests may or may not have been applied.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    lo: u64,
    hi: u64,
}

/// A small xorshift: the simulation's draws, replayable from the printed seed.
struct Draws(u64);

impl Draws {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

/// The process-level simulation, small by default: three node processes over
/// `file://`, counters written and deleted through random nodes while a node
/// (often the holder) is killed with `kill -9` at random moments and
/// restarted. After every answer: nothing acknowledged is lost, nothing
/// deleted comes back, and no increment appears that was never sent.
/// `WASMKEEP_PROCESS_SIM_CYCLES` sets the kill/restart cycles (default 6),
/// `WASMKEEP_PROCESS_SIM_SEED` replays a seed.
#[test]
fn killed_and_restarted_node_processes_keep_every_acknowledged_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    process_simulation(&format!("file://{}", dir.path().join("bucket").display()));
}

/// The simulation over the test command's moto server.
#[test]
fn process_simulation_over_moto_keeps_every_acknowledged_write() {
    if let Some(url) = server_prefix("WASMKEEP_TEST_S3", "scripts/s3-server.sh", "simulation") {
        process_simulation(&url);
    }
}

/// The simulation over the test command's Azurite.
#[test]
fn process_simulation_over_azurite_keeps_every_acknowledged_write() {
    if let Some(url) = server_prefix("WASMKEEP_TEST_AZURE", "scripts/azurite-server.sh", "simulation") {
        process_simulation(&url);
    }
}

/// A prefix of its own in the bucket the test command's server `env` names
/// (the server's bucket is shared by the step's tests and keeps what they
/// leave); `None`, said on stderr, when it names none.
fn server_prefix(env: &str, script: &str, what: &str) -> Option<String> {
    let Ok(url) = std::env::var(env) else {
        eprintln!("{env} is not set: skipped ({script} starts a server)");
        return None;
    };
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    Some(format!("{}/{what}-{run}", url.trim_end_matches('/')))
}

fn process_simulation(url: &str) {
    let cycles: u64 = std::env::var("WASMKEEP_PROCESS_SIM_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let seed: u64 = std::env::var("WASMKEEP_PROCESS_SIM_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64 | 1)
                .unwrap_or(1)
        });
    eprintln!("process simulation over {url}: seed {seed}, {cycles} kill/restart cycles");
    let dir = tempfile::tempdir().expect("tempdir");
    let url = url.to_owned();
    let ids = ["n1", "n2", "n3"];
    let nodes: Vec<NodeProcess> = ids.iter().map(|id| start(id, &url, dir.path())).collect();
    let nodes = Arc::new(std::sync::Mutex::new(nodes));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The killer: a random node, at a random moment, killed and restarted.
    let killer = {
        let (nodes, done, url) = (nodes.clone(), done.clone(), url.clone());
        let data = dir.path().to_owned();
        std::thread::spawn(move || {
            let mut draws = Draws(seed ^ 0x9e37_79b9_7f4a_7c15);
            for _ in 0..cycles {
                std::thread::sleep(Duration::from_millis(300 + draws.next(1_500)));
                let i = usize::try_from(draws.next(3)).unwrap_or(0);
                let id = ids[i];
                // kill -9 (dropping it kills it), then a restart at the next epoch.
                drop(nodes.lock().expect("nodes").remove(i));
                std::thread::sleep(Duration::from_millis(draws.next(LEASE_MS)));
                let back = start(id, &url, &data);
                nodes.lock().expect("nodes").insert(i, back);
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        })
    };
    let actors = ["a", "b", "c", "d"];
    let mut bounds: std::collections::HashMap<&str, Bounds> =
        actors.iter().map(|a| (*a, Bounds { lo: 0, hi: 0 })).collect();
    let mut draws = Draws(seed);
    let (mut acked, mut failed, mut deletes) = (0u64, 0u64, 0u64);
    while !done.load(std::sync::atomic::Ordering::SeqCst) {
        let name = actors[usize::try_from(draws.next(4)).unwrap_or(0)];
        let base = {
            let nodes = nodes.lock().expect("nodes");
            nodes[usize::try_from(draws.next(nodes.len() as u64)).unwrap_or(0)]
                .base
                .clone()
        };
        let delete = draws.next(10) == 0;
        let method = if delete { "DELETE" } else { "POST" };
        let answer = common::try_http_body(method, &format!("{base}/counter/{name}/"), "");
        let b = bounds.get_mut(name).expect("bounds");
        match (delete, answer) {
            (false, Ok((200, body))) => {
                let n: u64 = body.trim().parse().unwrap_or_else(|_| panic!("a count: {body:?}"));
                assert!(
                    b.lo < n && n <= b.hi + 1,
                    "seed {seed}: {name} answered {n}, outside ({}, {}]: an acknowledged write was lost, \
                     or a deleted one came back",
                    b.lo,
                    b.hi + 1
                );
                *b = Bounds { lo: n, hi: n };
                acked += 1;
            }
            (true, Ok((200, _))) => {
                *b = Bounds { lo: 0, hi: 0 };
                deletes += 1;
            }
            // Not acknowledged: it may or may not have been applied.
            (false, _) => {
                b.hi += 1;
                failed += 1;
            }
            (true, _) => {
                b.lo = 0;
                failed += 1;
            }
        }
    }
    killer.join().expect("the killer");
    // Every node reads every counter within its bounds once the dust settles.
    let nodes = nodes.lock().expect("nodes");
    for name in actors {
        let b = bounds[name];
        let url = format!("{}/counter/{name}/", nodes[0].base);
        let deadline = Instant::now() + Duration::from_millis(LEASE_MS * 10);
        let n = loop {
            match common::try_http_body("GET", &url, "") {
                Ok((200, body)) => break body.trim().parse::<u64>().expect("a count"),
                other => assert!(Instant::now() < deadline, "seed {seed}: {name} unreadable: {other:?}"),
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(
            b.lo <= n && n <= b.hi,
            "seed {seed}: {name} reads {n}, outside [{}, {}]",
            b.lo,
            b.hi
        );
    }
    eprintln!(
        "process simulation over {url}: seed {seed}: {cycles} cycles, {acked} acknowledged writes, {deletes} deletes, \
         {failed} unacknowledged requests; no invariant violated"
    );
}
