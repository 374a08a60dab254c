//! A cluster of node processes (`serve --mode cluster --node-id`; ADR 028),
//! run as real `wasmkeep-shim` processes over one bucket: requests to the
//! counter example through every node (a node that does not hold the actor
//! forwards to the one that does), then `kill -9` of the holder: another node
//! takes the actor over once the holder's lease lapses, and every count that
//! was acknowledged is still there. Over `file://` always; over moto's S3
//! server and Azurite when the test command names them (`WASMKEEP_TEST_S3`,
//! `WASMKEEP_TEST_AZURE`). The process simulation is `process_simulation/`.

mod common;

use common::node_process::{
    APP, LEASE_MS, NodeProcess, control_holder, increment, ops, server_prefix, start, start_app, testee_manifest,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmkeep_shim::ActorKey;
use wasmkeep_shim::bucket::ObjectStore;
use wasmkeep_shim::clock::SystemClock;
use wasmkeep_shim::replica::OwnerRecord;

fn owner(bucket: &dyn ObjectStore, name: &str) -> OwnerRecord {
    let key = wasmkeep_shim::keys::owner(&ActorKey::new(APP, "counter", name));
    let (body, _) = bucket.get(&key).expect("read the record").expect("a record");
    serde_json::from_slice(&body).expect("an ownership record")
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

/// A WebSocket for an actor whose holder is gone (killed, its lease not yet
/// lapsed) is refused before it is accepted: 503 with the kind
/// `holder-unreachable`, so the client knows to retry. Before, the node
/// accepted it, then closed it with 1011; and a socket it did carry was
/// accepted before the holder had queued its open, so a request sent right
/// after could run first (the conformance cases over TLS failed 13 runs of
/// 40 on `cluster-sockets-reach-the-holder`).
#[test]
fn a_socket_or_request_whose_holder_cannot_be_reached_is_refused_with_its_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let manifest = testee_manifest(dir.path());
    let mut n1 = start_app(&manifest, "n1", &url, dir.path());
    let n2 = start_app(&manifest, "n2", &url, dir.path());
    let (status, body) = ops(&n1, "room", &serde_json::json!([]));
    assert_eq!(status, 200, "n1 takes the actor: {body}");
    // kill -9: its lease stays live for a while, and nobody answers there.
    n1.child.kill().expect("kill n1");
    n1.child.wait().expect("n1 ends");
    let ws_url = format!("{}/testee/room/lobby", n2.base.replacen("http://", "ws://", 1));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let refused = rt.block_on(tokio_tungstenite::connect_async(&ws_url));
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(answer)) => {
            assert_eq!(answer.status().as_u16(), 503, "n2's log:\n{}", n2.log());
            assert_eq!(
                answer.headers().get("wasmkeep-failure").and_then(|v| v.to_str().ok()),
                Some("holder-unreachable")
            );
        }
        Err(e) => panic!("refused otherwise: {e}; n2's log:\n{}", n2.log()),
        Ok(_) => panic!("the socket was accepted although its holder cannot be reached"),
    }
    // A request meets the same holder: 503 with its kind, and the holder's
    // address, a route between nodes, is not told to the client (it went as
    // a `wasmkeep-holder` header until the route was typed).
    let answer = rt.block_on(async {
        reqwest::Client::new()
            .post(format!("{}/testee/room/", n2.base))
            .body(r#"{"ops":[]}"#)
            .send()
            .await
            .expect("an answer")
    });
    assert_eq!(answer.status().as_u16(), 503, "n2's log:\n{}", n2.log());
    assert_eq!(
        answer.headers().get("wasmkeep-failure").and_then(|v| v.to_str().ok()),
        Some("holder-unreachable")
    );
    assert!(
        answer.headers().get("wasmkeep-holder").is_none(),
        "no route between nodes in a client's answer: {:?}",
        answer.headers()
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

/// Three node processes (`node-1`…`node-3`, so that `verify --data-dir`
/// sweeps their directories) over `bucket_url`: counters held on each, then
/// `kill -9` of node-1, which held `a` and `b`; node-2 takes `a` over and
/// writes it, node-3 takes `b` over and deletes it (the counter's DELETE is
/// durable); node-1 starts again and forwards. Its copies of `a` and `b` are
/// not the bucket's head any more (`b`'s holds rows its delete removed), and
/// its start removes them (issue 57): `verify` is clean. Before, it found
/// both ("local database that is not the bucket's head"), and a take of
/// either by node-1 would have left a `.db.replaced` for good.
fn a_restarted_node_leaves_verify_clean(bucket_url: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut nodes: Vec<NodeProcess> = (1..=3)
        .map(|i| start(&format!("node-{i}"), bucket_url, dir.path()))
        .collect();
    let patience = Duration::from_millis(LEASE_MS * 10);
    for (name, through) in [("a", 0), ("b", 0), ("c", 1), ("d", 2)] {
        increment(&nodes[through], name, patience);
    }
    for node in &nodes {
        for name in ["a", "b", "c", "d"] {
            increment(node, name, patience);
        }
    }
    let killed = nodes.remove(0);
    drop(killed);
    increment(&nodes[0], "a", patience);
    let deadline = Instant::now() + patience;
    loop {
        let (status, body) = common::http("DELETE", &format!("{}/counter/b/", nodes[1].base));
        if status == 200 {
            break;
        }
        assert_eq!(status, 503, "only a retryable failure: {body}");
        assert!(Instant::now() < deadline, "b was never deleted: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let back = start("node-1", bucket_url, dir.path());
    for name in ["a", "c", "d"] {
        increment(&back, name, patience);
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .arg("verify")
        .arg("--data-dir")
        .arg(dir.path())
        .args(["--bucket", bucket_url])
        .output()
        .expect("verify runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{bucket_url}: verify after a kill and a restart: {stdout}{}; node-1's log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        back.log()
    );
    eprintln!("{bucket_url}: verify after a kill and a restart: {}", stdout.trim());
}

#[test]
fn a_restarted_node_over_a_file_url_leaves_verify_clean() {
    let dir = tempfile::tempdir().expect("tempdir");
    a_restarted_node_leaves_verify_clean(&format!("file://{}", dir.path().join("bucket").display()));
}

#[test]
fn a_restarted_node_over_moto_leaves_verify_clean() {
    if let Some(prefix) = server_prefix("WASMKEEP_TEST_S3", "scripts/s3-server.sh", "restart-verify") {
        a_restarted_node_leaves_verify_clean(&prefix);
    }
}

/// The overview of a node that only forwarded requests for an actor names
/// the node that holds it (the one the bucket's record names), not itself
/// (issue 57: before, n2 listed `a` as resident on n2).
#[test]
fn the_overview_of_a_forwarding_node_names_the_holder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let n1 = start("n1", &url, dir.path());
    let n2 = start("n2", &url, dir.path());
    increment(&n1, "a", Duration::from_secs(10));
    increment(&n2, "a", Duration::from_secs(10));
    increment(&n2, "a", Duration::from_secs(10));
    let bucket = wasmkeep_shim::bucket_url::open_bucket(&url, Arc::new(SystemClock)).expect("open");
    assert_eq!(owner(bucket.as_ref(), "a").node, "n1", "n1 holds a; n2 forwarded");
    for node in [&n1, &n2] {
        let (status, body) = common::http("GET", &format!("{}/_shim/overview", node.base));
        assert_eq!(status, 200, "{body}");
        let overview: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        let row = overview["actors"]
            .as_array()
            .expect("actors")
            .iter()
            .find(|r| r["name"] == "a")
            .unwrap_or_else(|| panic!("{}: a is listed: {body}", node.id))
            .clone();
        assert_eq!(
            (row["holder"].as_str(), row["status"].as_str()),
            (Some("n1"), Some("resident")),
            "{}'s overview: {row}",
            node.id
        );
    }
}

/// `method` on `url`: its status, its `wasmkeep-failure` and `retry-after`
/// headers, and its body.
fn with_headers(method: &str, url: &str) -> (u16, Option<String>, Option<String>, String) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(async {
        let r = reqwest::Client::new()
            .request(method.parse().expect("method"), url)
            .send()
            .await
            .expect("an answer");
        let header = |name: &str| r.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let (kind, retry) = (header("wasmkeep-failure"), header("retry-after"));
        (r.status().as_u16(), kind, retry, r.text().await.unwrap_or_default())
    })
}

/// The answers of a write and of a durable delete that are not known to be
/// kept (the upload failed) name their kind and when to retry (issue 57):
/// `503`, `wasmkeep-failure: not-acknowledged`, `retry-after`. Before, the
/// SDKs' 503 named no kind, and the counters' failed durable delete was a
/// `500` with neither (Rust's until ADR 076, the others' until their SDKs'
/// not-kept answer was public). The delete is safe to retry, and the retry
/// deletes. Both through each language's counter.
#[test]
fn answers_not_known_to_be_kept_carry_their_kind_and_when_to_retry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let not_kept = (503, Some("not-acknowledged".to_owned()), Some("1".to_owned()));
    for lang in ["rust", "ts", "py", "c"] {
        let manifest = dir.path().join(format!("counter-{lang}.toml"));
        std::fs::write(
            &manifest,
            format!(
                "app = \"examples/counter\"\n[classes.counter]\ncomponent = {:?}\naccess = \"open\"\n",
                common::component(&format!("counter-{lang}")).display().to_string()
            ),
        )
        .expect("manifest");
        let url = format!("file://{}", dir.path().join(format!("bucket-{lang}")).display());
        let n1 = start_app(&manifest, &format!("n-{lang}"), &url, dir.path());
        increment(&n1, "a", Duration::from_secs(10));
        let arm = || {
            let (status, body) = common::http_body(
                "POST",
                &format!("{}/_shim/faults", n1.base),
                r#"{"kind": "fail-upload", "count": 1}"#,
            );
            assert_eq!(status, 200, "{body}");
        };
        let counter = format!("{}/counter/a/", n1.base);
        arm();
        let (status, kind, retry, body) = with_headers("POST", &counter);
        assert_eq!(
            (status, kind, retry),
            not_kept.clone(),
            "{lang}: a write not kept: {body}"
        );
        // Held again (the failed upload gave the actor up), then the delete's upload fails.
        increment(&n1, "a", Duration::from_secs(10));
        arm();
        let (status, kind, retry, body) = with_headers("DELETE", &counter);
        assert_eq!(
            (status, kind, retry),
            not_kept.clone(),
            "{lang}: a durable delete not kept: {body}"
        );
        let (status, _, _, body) = with_headers("DELETE", &counter);
        assert_eq!((status, body.as_str()), (200, "deleted"), "{lang}: the retry deletes");
    }
}

/// Two node processes over a `file://` bucket: n1 holds the control lease,
/// and n2 holds the actor `held` (one durable write).
fn a_leader_and_a_holder(dir: &std::path::Path) -> (String, std::path::PathBuf, NodeProcess, NodeProcess) {
    let url = format!("file://{}", dir.join("bucket").display());
    let manifest = testee_manifest(dir);
    let n1 = start_app(&manifest, "n1", &url, dir);
    let bucket = wasmkeep_shim::bucket_url::open_bucket(&url, Arc::new(SystemClock)).expect("open");
    let deadline = Instant::now() + Duration::from_millis(LEASE_MS * 5);
    while control_holder(bucket.as_ref()).as_deref() != Some("n1") {
        assert!(Instant::now() < deadline, "n1 never took the control lease");
        std::thread::sleep(Duration::from_millis(100));
    }
    let n2 = start_app(&manifest, "n2", &url, dir);
    let (status, body) = ops(
        &n2,
        "held",
        &serde_json::json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}, {"op": "flush"}]),
    );
    assert_eq!(status, 200, "{body}");
    (url, manifest, n1, n2)
}

/// `wasmkeep-shim actor delete` of `held`, waiting 15 s: its exit code and output.
fn operator_delete_of_held(url: &str) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(["actor", "delete", "--app", "t/app", "testee/held"])
        .args(["--bucket", url, "--wait", "15"])
        .output()
        .expect("actor delete runs");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// An operator delete of an actor held by a node process that does not hold
/// the control lease: the holder carries it out (the leader's job could not
/// reach it; before, the request waited until the actor was released).
#[test]
fn an_operator_delete_of_an_actor_held_by_a_node_that_does_not_lead_is_carried_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (url, _, n1, n2) = a_leader_and_a_holder(dir.path());
    let (code, out) = operator_delete_of_held(&url);
    assert_eq!(
        code,
        Some(0),
        "deleted by n2, its holder: {out}; n2's log:\n{}",
        n2.log()
    );
    drop(n1);
}

/// The same after the holder was killed and started again under its id: the
/// bucket's record still names n2, a live node, so the leader leaves the
/// request to n2, whose new process has no mailbox for the actor. Before,
/// neither acted and the request waited (found by the process simulation).
#[test]
fn an_operator_delete_of_an_actor_whose_holder_restarted_is_carried_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (url, manifest, n1, n2) = a_leader_and_a_holder(dir.path());
    // kill -9 (the drop), then the same id again.
    drop(n2);
    let n2 = start_app(&manifest, "n2", &url, dir.path());
    let (code, out) = operator_delete_of_held(&url);
    assert_eq!(
        code,
        Some(0),
        "deleted by n2 after its restart: {out}; n2's log:\n{}",
        n2.log()
    );
    drop(n1);
}

/// `POST /_shim/actors/<class>/<name>/settle` answers once the event that
/// answered before its end has ended: here a `delete-self` whose upload at
/// the end fails, counted only then. The conformance runner asks it instead
/// of sleeping; its fixed 300 ms sleep was too short for a slow bucket (CI
/// over Azurite read this counter as 0).
#[test]
fn settle_answers_once_the_event_answered_before_its_end_has_ended() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let n1 = start_app(&testee_manifest(dir.path()), "n1", &url, dir.path());
    let settle = || common::http_body("POST", &format!("{}/_shim/actors/testee/a/settle", n1.base), "{}");
    let (status, body) = ops(
        &n1,
        "a",
        &serde_json::json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]),
    );
    assert_eq!(status, 200, "{body}");
    // Else the fault may meet this event's upload, still under way.
    assert_eq!(settle().0, 200);
    let (status, body) = common::http_body(
        "POST",
        &format!("{}/_shim/faults", n1.base),
        r#"{"kind": "fail-upload", "count": 1}"#,
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = ops(&n1, "a", &serde_json::json!([{"op": "delete-self"}]));
    assert_eq!(status, 200, "{body}");
    let (status, body) = settle();
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).expect("JSON")["settled"],
        "t/app:testee/a"
    );
    let (_, metrics) = common::http_body("GET", &format!("{}/metrics", n1.base), "");
    assert!(
        metrics.contains("wasmkeep_actor_delete_failures_total{how=\"self\"} 1"),
        "the failed delete is counted once settled:\n{metrics}"
    );
}

/// A call to an actor held by another node process is carried there (ADR
/// 034; the conformance case `cluster-calls-reach-the-holder` runs one). The
/// chain goes with it: `b` on n2 calls `a` on n1, and `a` calls `b` back,
/// which would wait forever, so n1 refuses it as a cycle (without the chain
/// it would wait out the call's time limit). The route that takes carried
/// calls refuses a client without the cluster's token: a call names its
/// caller, and a client must not pass for an actor.
#[test]
fn a_call_carried_to_another_node_process_keeps_its_chain_and_needs_the_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let manifest = testee_manifest(dir.path());
    let n1 = start_app(&manifest, "n1", &url, dir.path());
    let n2 = start_app(&manifest, "n2", &url, dir.path());
    let (status, body) = ops(&n1, "a", &serde_json::json!([]));
    assert_eq!(status, 200, "n1 takes a: {body}");
    let back =
        serde_json::json!({ "ops": [{ "op": "call", "class": "testee", "name": "b", "payload": "{\"ops\":[]}" }] });
    let started = Instant::now();
    let (status, body) = ops(
        &n2,
        "b",
        &serde_json::json!([{ "op": "call", "class": "testee", "name": "a", "payload": back.to_string() }]),
    );
    assert_eq!(status, 200, "{body}");
    let outer: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    let payload = outer
        .pointer("/outcomes/0/ok/payload")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_else(|| panic!("b's call to a on n1 answered: {outer}; n2's log:\n{}", n2.log()));
    let inner: serde_json::Value = serde_json::from_str(payload).expect("a's outcomes");
    assert_eq!(
        inner
            .pointer("/outcomes/0/err/kind")
            .and_then(serde_json::Value::as_str),
        Some("refused"),
        "a's call back to b is refused as a cycle: {inner}"
    );
    assert!(started.elapsed() < Duration::from_secs(10), "refused, not timed out");
    let (status, _) = common::http_body(
        "POST",
        &format!("{}{}", n1.base, wasmkeep_shim::cluster_calls::CALL_PATH),
        "{}",
    );
    assert_eq!(status, 403, "a client without the cluster's token");
}
