//! An idle resident actor gives back its thread (ADR 044): its worker parks
//! in its mailbox after a second without an event, the actor stays resident
//! (its instance and database open), the next event resumes it on a thread,
//! and the idle sweep hibernates it at the idle timeout. One test, in its
//! own binary: it counts the process's threads.

mod common;

use serde_json::json;
use std::time::{Duration, Instant};
use wasmkeep_host::{ActorKey, HttpRequest, Runtime, RuntimeConfig};

const ACTORS: usize = 40;

fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("Threads")
}

/// A node of the testee app with this idle timeout (and resident cap).
fn runtime(dir: &std::path::Path, idle_timeout: Duration, max_resident: Option<usize>) -> Runtime {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.idle_timeout = idle_timeout;
    if let Some(cap) = max_resident {
        config.max_resident = cap;
    }
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    rt
}

fn count(rt: &Runtime, key: &ActorKey) -> String {
    let (status, body) = common::count_request(rt, key);
    assert_eq!(status, 200, "{key}: {body}");
    body
}

fn wait_until(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let until = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < until, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_idle_resident_actor_gives_back_its_thread_keeps_its_state_and_hibernates_at_the_idle_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path(), Duration::from_secs(6), None);
    let keys: Vec<ActorKey> = (0..ACTORS)
        .map(|i| ActorKey::new("t/app", "testee", format!("k{i}")))
        .collect();
    // All resident at once, each on a thread of its own.
    let before = threads();
    let pending: Vec<_> = keys
        .iter()
        .map(|k| {
            let body = json!({ "ops": [{ "op": "exec", "sql": "CREATE TABLE n(v INTEGER)" }] }).to_string();
            rt.request(k, HttpRequest::new("POST", "/", body)).expect("request")
        })
        .collect();
    for p in pending {
        assert_eq!(p.wait().status, 200);
    }
    let busy = threads();
    assert!(
        busy >= before + ACTORS / 2,
        "{before} threads before, {busy} with {ACTORS} actors running"
    );
    // After a second idle, the workers park: the threads go (all but the
    // few the node keeps for the next wakes), the actors stay resident.
    wait_until(
        "the idle workers give back their threads",
        Duration::from_secs(20),
        || threads() + ACTORS / 2 <= busy,
    );
    assert_eq!(rt.admin().resident_count(), ACTORS, "parked actors stay resident");
    // The next event resumes the parked worker: the database it holds open
    // has the table, and the count goes on.
    for key in &keys {
        assert!(count(&rt, key).contains(r#""rows":[[{"integer":"1"}]]"#));
    }
    assert_eq!(rt.admin().resident_count(), ACTORS);
    // At the idle timeout the sweep hibernates them.
    wait_until(
        "the idle sweep hibernates the parked actors",
        Duration::from_secs(20),
        || rt.admin().resident_count() == 0,
    );
    // And they wake with what they wrote.
    assert!(count(&rt, &keys[0]).contains(r#""rows":[[{"integer":"2"}]]"#));
}

#[test]
fn a_parked_actor_makes_room_when_another_needs_its_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path(), Duration::from_secs(60), Some(2));
    let first = ActorKey::new("t/app", "testee", "first");
    let second = ActorKey::new("t/app", "testee", "second");
    let third = ActorKey::new("t/app", "testee", "third");
    count(&rt, &first);
    count(&rt, &second);
    // Both park after a second; the third needs a place: the least recently
    // used parked one hibernates for it.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(count(&rt, &third).contains(r#""rows":[[{"integer":"1"}]]"#));
    assert!(rt.admin().resident_count() <= 2);
    assert!(count(&rt, &first).contains(r#""rows":[[{"integer":"2"}]]"#));
}

#[test]
fn a_worker_whose_actor_is_not_open_ends_after_a_second() {
    // Review of ADR 044: such a worker (here an admin delete of an actor that
    // never existed) has nothing to park, and must still leave; since ADR
    // 045 it leaves after a second, not at the idle timeout (a minute here),
    // so a run of events for actors that cannot open (a scan of names that
    // do not exist, files that cannot open) holds no threads or places.
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path(), Duration::from_secs(60), None);
    let never = ActorKey::new("t/app", "testee", "never-existed");
    let _ = rt.admin().delete_actor(&never);
    wait_until(
        "the worker of an actor that is not open ends",
        Duration::from_secs(6),
        || rt.admin().resident_count() == 0,
    );
}

/// The files under `dir` this process holds open.
fn files_open_under(dir: &std::path::Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("fd")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir))
        .count()
}

#[test]
fn an_idle_resident_actor_closes_its_database_and_opens_it_at_its_next_event() {
    // ADR 045: ten seconds after its last event the actor stays resident,
    // its instance kept, but holds neither its database file nor its WAL.
    let dir = tempfile::tempdir().expect("tempdir");
    let dir_path = dir.path().canonicalize().expect("canonical");
    let rt = runtime(dir.path(), Duration::from_secs(60), None);
    let key = ActorKey::new("t/app", "testee", "resting");
    let before = files_open_under(&dir_path);
    assert!(count(&rt, &key).contains(r#""rows":[[{"integer":"1"}]]"#));
    let busy = files_open_under(&dir_path);
    assert!(busy >= before + 2, "{before} files open before the event, {busy} after");
    // A second idle parks the worker; the database stays open for an actor
    // whose events come more often than every ten seconds.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(files_open_under(&dir_path), busy, "open after 2.5 s idle");
    wait_until(
        "the idle actor closes its database and its WAL",
        Duration::from_secs(20),
        || files_open_under(&dir_path) + 2 <= busy,
    );
    assert_eq!(rt.admin().resident_count(), 1, "a resting actor stays resident");
    // The next job opens it again, with what it wrote: the admin dump, then
    // an event whose count goes on.
    let tables = rt.admin().tables(&key).expect("tables");
    assert!(tables.iter().any(|(name, _)| name == "n"), "{tables:?}");
    assert!(count(&rt, &key).contains(r#""rows":[[{"integer":"2"}]]"#));
    assert!(files_open_under(&dir_path) >= busy, "the database is open again");
}
