//! A resident actor's quick reads run on the thread that received them,
//! without a hand-off to its worker; a write, or a read slower than
//! `ReadsHere`'s `quick`, sends the next requests to the worker's own
//! thread (ADR 048). By default only while the actor's requests overlap:
//! one request at a time goes to the worker's thread (ADR 059).

mod common;

use serde_json::json;
use std::time::{Duration, Instant};
use wasmkeep_host::{ActorKey, HttpRequest, ReadsHere, Runtime, RuntimeConfig};

const QUICK: Duration = Duration::from_millis(100);

/// A node with `reads_here`: the tests' quick reads are those under 100 ms
/// (a test build's events take longer than the default 25 µs).
fn runtime(dir: &std::path::Path, reads_here: ReadsHere) -> Runtime {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.reads_here = reads_here;
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

/// Sends `ops` and waits for the answer, as a client does.
fn send(rt: &Runtime, key: &ActorKey, ops: &serde_json::Value) -> String {
    let body = json!({ "ops": ops }).to_string();
    let r = rt
        .request_blocking(key, HttpRequest::new("POST", "/", body))
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    r.text()
}

/// Sends `ops`, then waits for the actor's queue, as the test hosts do
/// after each event.
fn ops(rt: &Runtime, key: &ActorKey, ops: &serde_json::Value) -> String {
    let text = send(rt, key, ops);
    rt.settle(key);
    text
}

fn count_rows() -> serde_json::Value {
    json!([{ "op": "query", "sql": "SELECT count(*) FROM n" }])
}

/// A read that takes over 100 ms (checked in the first test).
fn slow_read() -> serde_json::Value {
    json!([{ "op": "query", "sql":
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000000) SELECT count(*) FROM c" }])
}

fn read(rt: &Runtime, key: &ActorKey) -> String {
    ops(rt, key, &count_rows())
}

/// How many of `n` reads, one at a time, ran on the receiving thread.
fn reads_run_here(rt: &Runtime, key: &ActorKey, n: usize) -> u64 {
    let before = run_here(rt);
    for _ in 0..n {
        read(rt, key);
    }
    run_here(rt) - before
}

/// `threads` clients at once, each calling `client(t, i)` for its request
/// `i` of `requests`.
fn clients(threads: usize, requests: usize, client: impl Fn(usize, usize) + Sync) {
    std::thread::scope(|s| {
        for t in 0..threads {
            let client = &client;
            s.spawn(move || {
                for i in 0..requests {
                    client(t, i);
                }
            });
        }
    });
}

/// A node with one testee actor, `name`, whose table `n` exists.
/// After every quick read the next request runs here, even when requests
/// come one at a time, as these tests send them.
fn actor_with_table(name: &str) -> (tempfile::TempDir, Runtime, ActorKey) {
    actor_with_table_on(name, ReadsHere::AfterEveryQuickRead { quick: QUICK })
}

fn actor_with_table_on(name: &str, reads_here: ReadsHere) -> (tempfile::TempDir, Runtime, ActorKey) {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path(), reads_here);
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
    let reads_here = reads_run_here(&rt, &key, 20);
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
    let slow = slow_read();
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
    clients(8, 100, |t, i| {
        if (i + t) % 4 == 0 {
            write(&rt, &key);
        } else {
            read(&rt, &key);
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

/// By default reads run here only while requests overlap: one client's
/// reads, one at a time, all run on the actor's own thread, where they run
/// faster (ADR 048's addenda). Once a request has come while another ran,
/// the reads run where they are received until 32 requests have come
/// since (ADR 059).
#[test]
fn by_default_only_overlapping_reads_run_where_they_are_received() {
    let default = ReadsHere::WhileOverlapping { quick: QUICK };
    let (_dir, rt, key) = actor_with_table_on("overlap", default);
    let alone = reads_run_here(&rt, &key, 40);
    assert_eq!(
        alone, 0,
        "{alone} of 40 reads one at a time ran on the receiving thread"
    );

    // An overlap: a read comes while a slow read of another client runs.
    std::thread::scope(|s| {
        let slow = s.spawn(|| send(&rt, &key, &slow_read()));
        std::thread::sleep(Duration::from_millis(50));
        send(&rt, &key, &count_rows());
        slow.join().expect("the slow read's client");
    });
    rt.settle(&key);

    // The read behind it ran on the actor's thread, quick, while requests
    // overlapped: the next ones run here, up to the 32nd since the overlap.
    let after = reads_run_here(&rt, &key, 20);
    assert!(
        after >= 19,
        "{after} of the 20 reads after an overlap ran on the receiving thread"
    );
    reads_run_here(&rt, &key, 20);
    let again = reads_run_here(&rt, &key, 20);
    assert_eq!(
        again, 0,
        "{again} of 20 reads one at a time ran here after the overlap ended"
    );
}

/// Eight clients at once, none waiting for the actor's queue between its
/// requests, all reading: every read is answered, on whichever thread.
#[test]
fn overlapping_reads_from_many_clients_are_each_answered() {
    let (_dir, rt, key) = actor_with_table_on("clients", ReadsHere::WhileOverlapping { quick: QUICK });
    write(&rt, &key);
    let one_row = read(&rt, &key);
    clients(8, 50, |_, _| {
        assert_eq!(send(&rt, &key, &count_rows()), one_row);
    });
}

/// `ReadsHere::Never`: even overlapping reads go to the actor's thread.
#[test]
fn never_runs_a_request_where_it_is_received() {
    let (_dir, rt, key) = actor_with_table_on("never", ReadsHere::Never);
    let before = run_here(&rt);
    clients(4, 25, |_, _| {
        send(&rt, &key, &count_rows());
    });
    assert_eq!(run_here(&rt) - before, 0);
}
