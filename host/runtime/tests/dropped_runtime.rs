//! A runtime whose last handle is dropped shuts down as
//! [`Runtime::shutdown`] does: its actors are released (their databases
//! closed), and the node's threads end with it, engine and instance pool
//! included (ADR 060). Before, an actor left resident kept the node alive
//! (the node holds its actors and each actor its node) until the idle
//! timeout hibernated it: a process that made runtimes one after another
//! (tests, the benchmark) carried every earlier one's threads, files and pool.
//! One test, in its own binary: it counts the process's threads and files.

mod common;

use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use wasmkeep_host::{ActorKey, HttpRequest, Runtime, RuntimeConfig};

/// Descriptors of this process open on a file under `dir`, but for the
/// node's own files (its alarm index, in `host/`).
fn actor_files_open_under(dir: &Path) -> usize {
    files_open_under(dir, |target| !target.starts_with(dir.join("host")))
}

/// Descriptors of this process open on a file under `dir` that `pick` keeps.
fn files_open_under(dir: &Path, pick: impl Fn(&Path) -> bool) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir) && pick(target))
        .count()
}

/// Threads of this process named `name`.
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.trim_end() == name)
        .count()
}

/// The node's threads: each ends once the node is gone.
const NODE_THREADS: [&str; 4] = ["epoch ticker", "alarm timer", "idle sweep", "actor worker"];

fn node_threads() -> usize {
    NODE_THREADS.iter().map(|name| threads_named(name)).sum()
}

/// A runtime on `data` (a real clock; events time out after 1.5 s).
fn runtime_on(data: &Path) -> Runtime {
    let mut config = RuntimeConfig::new(data);
    config.cache_dir = common::cache_dir();
    // Nothing hibernates by itself during the test.
    config.idle_timeout = Duration::from_secs(3600);
    config.event_timeout = Duration::from_millis(1500);
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    rt
}

/// The actor `name`, made resident by writing a row.
fn resident_actor(rt: &Runtime, name: &str) -> ActorKey {
    let key = ActorKey::new("t/app", "testee", name);
    let answer = common::ops(
        rt,
        &key,
        json!([{"op": "exec", "sql": "CREATE TABLE t(x); INSERT INTO t VALUES (1)"}]),
    );
    assert!(!answer.contains("\"err\""), "{answer}");
    key
}

/// Waits up to five seconds for `done`.
fn wait_for(done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for the node to be gone, and says so.
fn assert_the_node_goes(data: &Path, what: &str) {
    wait_for(|| node_threads() == 0 && files_open_under(data, |_| true) == 0);
    for name in NODE_THREADS {
        assert_eq!(threads_named(name), 0, "{what}: no {name} thread is left");
    }
    assert_eq!(
        files_open_under(data, |_| true),
        0,
        "{what}: the node's own files are closed"
    );
}

// One test: the counts of threads and files are the whole process's.
#[test]
fn dropping_the_last_handle_releases_the_actors_and_ends_the_node_s_threads() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("data")).expect("mkdir");
    let data = dir.path().join("data").canonicalize().expect("the data directory");

    let rt = runtime_on(&data);
    let key = resident_actor(&rt, "kept");
    assert!(
        actor_files_open_under(&data) > 0,
        "the resident actor's database is open"
    );
    assert_eq!(threads_named("epoch ticker"), 1, "the node's engine ticks");

    // Another handle is the same runtime: dropping one of two releases nothing.
    let other = rt.clone();
    drop(rt);
    assert!(actor_files_open_under(&data) > 0, "still open while a handle is left");
    assert_eq!(other.admin().resident_count(), 1);

    drop(other);
    assert_eq!(
        actor_files_open_under(&data),
        0,
        "dropping the last handle closed the actor's database before it returned"
    );
    // The node itself is gone too, its own files closed with it (and its
    // instance pool given back: a runtime made next gets one).
    assert_eq!(
        files_open_under(&data, |_| true),
        0,
        "the node was dropped before the drop returned"
    );
    // Its threads end as they next look at it: the ticker within 10 ms, the
    // idle sweep within a second.
    assert_the_node_goes(&data, "after the drop");

    // What the actor wrote is there for the next runtime on the directory.
    let rt = runtime_on(&data);
    let answer = common::ops(&rt, &key, json!([{"op": "query", "sql": "SELECT x FROM t"}]));
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(
        answer["outcomes"][0]["ok"]["rows"],
        json!([[{"integer": "1"}]]),
        "{answer}"
    );
    drop(rt);
    assert_the_node_goes(&data, "after the second runtime's drop");

    // Dropped on an async runtime's thread, where the shutdown may not
    // block: the drop returns, and the release follows.
    let rt = runtime_on(&data);
    resident_actor(&rt, "on-tokio");
    assert!(
        actor_files_open_under(&data) > 0,
        "the resident actor's database is open"
    );
    let tokio = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    tokio.block_on(async move { drop(rt) });
    wait_for(|| actor_files_open_under(&data) == 0);
    assert_eq!(actor_files_open_under(&data), 0, "the actor was released");
    assert_the_node_goes(&data, "after a drop on an async runtime's thread");

    // An alarm that falls due while the shutdown waits for a running event
    // is not run, and does not keep the node alive: before, the alarm timer
    // queued it again every 50 ms, and each try kept a worker, and with it
    // the node, alive.
    let rt = runtime_on(&data);
    let alarmed = resident_actor(&rt, "alarmed");
    common::ops(&rt, &alarmed, json!([{"op": "set-alarm", "in": "300"}]));
    let busy = ActorKey::new("t/app", "testee", "busy");
    let body = serde_json::to_vec(&json!({ "ops": [{"op": "loop"}] })).expect("json");
    let running = rt.request(&busy, HttpRequest::new("POST", "/", body)).expect("request");
    std::thread::sleep(Duration::from_millis(100));
    let dropped = Instant::now();
    drop(rt);
    assert!(
        dropped.elapsed() > Duration::from_millis(300),
        "the drop waited for the running event, past the alarm's time ({:?})",
        dropped.elapsed()
    );
    drop(running.wait());
    assert_the_node_goes(&data, "after an alarm fell due during the shutdown");
}
