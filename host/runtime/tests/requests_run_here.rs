//! A resident actor's quick reads run on the thread that received them,
//! without a hand-off to its worker; a write, or a read slower than
//! `RuntimeConfig::quick_read`, sends the next requests to the worker's own
//! thread (ADR 048).

mod common;

use serde_json::json;
use std::time::{Duration, Instant};
use wasmkeep_host::{ActorKey, HttpRequest, Runtime, RuntimeConfig};

const QUICK: Duration = Duration::from_millis(100);

/// A node whose quick reads are those under 100 ms: a test build's events
/// take longer than the default 25 µs.
fn runtime(dir: &std::path::Path) -> Runtime {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.quick_read = QUICK;
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    rt
}

/// `wasmkeep_requests_run_here_total`, as the metrics page shows it.
fn run_here(rt: &Runtime) -> u64 {
    rt.admin()
        .metrics()
        .render()
        .lines()
        .find_map(|l| l.strip_prefix("wasmkeep_requests_run_here_total "))
        .and_then(|n| n.trim().parse().ok())
        .expect("the counter is on the metrics page")
}

fn ops(rt: &Runtime, key: &ActorKey, ops: &serde_json::Value) -> String {
    let body = json!({ "ops": ops }).to_string();
    let r = rt
        .request_blocking(key, HttpRequest::new("POST", "/", body))
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    // What the test hosts do after each event: wait for the actor's queue.
    rt.settle(key);
    r.text()
}

fn read(rt: &Runtime, key: &ActorKey) -> String {
    ops(rt, key, &json!([{ "op": "query", "sql": "SELECT count(*) FROM n" }]))
}

/// A node with one testee actor, `name`, whose table `n` exists.
fn actor_with_table(name: &str) -> (tempfile::TempDir, Runtime, ActorKey) {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let key = ActorKey::new("t/app", "testee", name);
    ops(
        &rt,
        &key,
        &json!([{ "op": "exec", "sql": "CREATE TABLE n(v INTEGER)" }]),
    );
    (dir, rt, key)
}

fn write(rt: &Runtime, key: &ActorKey) {
    ops(rt, key, &json!([{ "op": "exec", "sql": "INSERT INTO n VALUES (1)" }]));
}

#[test]
fn quick_reads_run_where_they_are_received_and_writes_and_slow_reads_on_the_actor_s_thread() {
    let (_dir, rt, key) = actor_with_table("k");
    read(&rt, &key);

    // Reads: the worker parks after each, and the next runs on this thread.
    // (The first may run on the worker's thread, which then parks before
    // `settle` returns.)
    let before = run_here(&rt);
    for _ in 0..20 {
        read(&rt, &key);
    }
    let reads_here = run_here(&rt) - before;
    assert!(reads_here >= 19, "{reads_here} of 20 reads ran on the receiving thread");

    // Writes: at most the first runs here; it sends the rest to the worker's thread.
    let before = run_here(&rt);
    for _ in 0..20 {
        write(&rt, &key);
    }
    let writes_here = run_here(&rt) - before;
    assert!(
        writes_here <= 1,
        "{writes_here} of 20 writes ran on the receiving thread"
    );

    // Slow reads (over 100 ms): at most the first runs here.
    for _ in 0..5 {
        read(&rt, &key);
    }
    let slow = json!([{ "op": "query", "sql":
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000000) SELECT count(*) FROM c" }]);
    let before = run_here(&rt);
    for _ in 0..3 {
        let started = Instant::now();
        ops(&rt, &key, &slow);
        assert!(started.elapsed() > QUICK, "the slow read took {:?}", started.elapsed());
    }
    let slow_here = run_here(&rt) - before;
    assert!(
        slow_here <= 1,
        "{slow_here} of 3 slow reads ran on the receiving thread"
    );

    // Quick reads again run here, and every write was kept.
    let before = run_here(&rt);
    let mut last = String::new();
    for _ in 0..20 {
        last = read(&rt, &key);
    }
    let again = run_here(&rt) - before;
    assert!(again >= 19, "{again} of 20 reads ran here again");
    assert!(last.contains("20"), "20 rows: {last}");
}

/// Eight threads send reads and writes to one actor at once: every request
/// is answered, and every write is kept once, whichever thread ran it.
#[test]
fn requests_from_many_threads_to_one_actor_are_each_run_once() {
    let (_dir, rt, key) = actor_with_table("many");
    std::thread::scope(|s| {
        for t in 0..8 {
            let (rt, key) = (&rt, &key);
            s.spawn(move || {
                for i in 0..100 {
                    if (i + t) % 4 == 0 {
                        write(rt, key);
                    } else {
                        read(rt, key);
                    }
                }
            });
        }
    });
    assert!(read(&rt, &key).contains("200"), "8 × 25 writes kept once each");
}

/// A request that only changes the schema or the header (`CREATE TABLE`,
/// `PRAGMA user_version`) changes no row but commits as a write does: the
/// next request goes to the worker's own thread.
#[test]
fn a_request_that_commits_without_changing_a_row_counts_as_a_write() {
    let (_dir, rt, key) = actor_with_table("schema");
    for (i, sql) in ["CREATE TABLE m(v INTEGER)", "PRAGMA user_version = 7"]
        .iter()
        .enumerate()
    {
        for _ in 0..3 {
            read(&rt, &key);
        }
        let before = run_here(&rt);
        ops(&rt, &key, &json!([{ "op": "exec", "sql": sql }]));
        read(&rt, &key);
        let here = run_here(&rt) - before;
        assert_eq!(
            here, 1,
            "case {i} ({sql}): the commit and the read after it; only the commit ran here"
        );
    }
}
