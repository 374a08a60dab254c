//! A runtime whose last handle is dropped shuts down as
//! [`Runtime::shutdown`] does: its actors are released (their databases
//! closed), and the node's threads end with it, engine and instance pool
//! included. Before, an actor left resident kept the node alive (the node
//! holds its actors and each actor its node) until the idle timeout
//! hibernated it: a process that made runtimes one after another (tests, the
//! benchmark) carried every earlier one's threads, files and pool.
//! One test, in its own binary: it counts the process's threads and files.

mod common;

use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use wasmkeep_host::{ActorKey, Runtime, RuntimeConfig};

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

/// A runtime on `data` whose actor `kept` is resident, with a row written.
fn runtime_with_a_resident_actor(data: &Path) -> (Runtime, ActorKey) {
    let mut config = RuntimeConfig::new(data);
    config.cache_dir = common::cache_dir();
    // Nothing hibernates by itself during the test.
    config.idle_timeout = Duration::from_secs(3600);
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    let key = ActorKey::new("t/app", "testee", "kept");
    common::ops(
        &rt,
        &key,
        json!([{"op": "exec", "sql": "CREATE TABLE t(x); INSERT INTO t VALUES (1)"}]),
    );
    (rt, key)
}

/// Waits up to five seconds for `done`.
fn wait_for(done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

// One test: the counts of threads and files are the whole process's.
#[test]
fn dropping_the_last_handle_releases_the_actors_and_ends_the_node_s_threads() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("data")).expect("mkdir");
    let data = dir.path().join("data").canonicalize().expect("the data directory");
    let (rt, key) = runtime_with_a_resident_actor(&data);
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
    // The node itself goes when its threads let go of it: the ticker sleeps
    // 10 ms between ticks, a worker ends its run just after the release.
    wait_for(|| threads_named("epoch ticker") == 0 && files_open_under(&data, |_| true) == 0);
    assert_eq!(threads_named("epoch ticker"), 0, "the node's engine is gone");
    assert_eq!(files_open_under(&data, |_| true), 0, "the node's own files are closed");

    // What the actor wrote is there for the next runtime on the directory.
    let mut config = RuntimeConfig::new(&data);
    config.cache_dir = common::cache_dir();
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    let answer = common::ops(&rt, &key, json!([{"op": "query", "sql": "SELECT x FROM t"}]));
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(
        answer["outcomes"][0]["ok"]["rows"],
        json!([[{"integer": "1"}]]),
        "{answer}"
    );
    drop(rt);
    wait_for(|| threads_named("epoch ticker") == 0);

    // Dropped on an async runtime's thread, where the shutdown may not
    // block: the drop returns at once, and the release follows.
    let (rt, _) = runtime_with_a_resident_actor(&data);
    let tokio = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    tokio.block_on(async move { drop(rt) });
    wait_for(|| threads_named("epoch ticker") == 0 && files_open_under(&data, |_| true) == 0);
    assert_eq!(actor_files_open_under(&data), 0, "the actor was released");
    assert_eq!(threads_named("epoch ticker"), 0, "the node's engine is gone");
}
