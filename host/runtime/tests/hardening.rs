//! Host behaviour found by review that the conformance cases cannot drive:
//! concurrency, restarts, queued events of deleted actors.

mod common;

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use wasmkeep_host::deletion::DeletionStatus;
use wasmkeep_host::{ActorKey, FaultKind, HttpRequest, Runtime, RuntimeConfig};

fn runtime(dir: &std::path::Path) -> Runtime {
    let mut config = RuntimeConfig::for_tests(dir);
    config.memory_alarm_index = false;
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_millis(1500);
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    rt
}

fn ops(rt: &Runtime, key: &ActorKey, ops: Value) -> (u16, String) {
    let body = serde_json::to_vec(&json!({ "ops": ops })).expect("json");
    let r = rt
        .request_blocking(key, HttpRequest::new("POST", "/", body))
        .expect("request");
    (r.status, r.text())
}

#[test]
fn actors_calling_each_other_at_once_both_get_an_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let a = ActorKey::new("t/app", "testee", "a");
    let b = ActorKey::new("t/app", "testee", "b");
    // Each first keeps busy for a while, then calls the other, which is busy calling back.
    let slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 200000) SELECT count(*) FROM c";
    let started = Instant::now();
    let (rt2, a2) = (rt.clone(), a.clone());
    let t = std::thread::spawn(move || {
        ops(
            &rt2,
            &a2,
            json!([{"op": "query", "sql": slow}, {"op": "call", "class": "testee", "name": "b", "payload": "{\"ops\":[]}"}]),
        )
    });
    let rb = ops(
        &rt,
        &b,
        json!([{"op": "query", "sql": slow}, {"op": "call", "class": "testee", "name": "a", "payload": "{\"ops\":[]}"}]),
    );
    let ra = t.join().expect("thread");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "crossed calls end within the time limits, not never"
    );
    for (name, (status, body)) in [("a", ra), ("b", rb)] {
        assert!(
            status == 200 || (status == 500 && body.contains("limit")),
            "{name} gets an answer, or an error saying it ran out of time: {status} {body}"
        );
    }
    let (status, _) = ops(&rt, &a, json!([]));
    assert_eq!(status, 200, "both actors stay usable afterwards");
}

#[test]
fn a_failed_removal_survives_a_restart_of_the_host() {
    let dir = tempfile::tempdir().expect("tempdir");
    let k = ActorKey::new("t/app", "testee", "r");
    {
        let rt = runtime(dir.path());
        ops(
            &rt,
            &k,
            json!([{"op": "exec", "sql": "CREATE TABLE secret(x); INSERT INTO secret VALUES('old')"}]),
        );
        rt.dev().faults().arm(FaultKind::FailRemoval, 2);
        let (_, body) = ops(&rt, &k, json!([{"op": "delete-self-durable"}]));
        assert!(body.contains("internal"), "the durable delete fails: {body}");
        rt.settle(&k);
        assert!(
            matches!(rt.passes().deletion_status(&k), DeletionStatus::Unknown { .. }),
            "the event's end could not finish the removal either: it is pending"
        );
        rt.dev().hibernate_all();
    }
    let rt = runtime(dir.path());
    assert!(
        !rt.admin().exists(&k),
        "after a restart the half-deleted actor does not exist"
    );
    let (status, body) = ops(
        &rt,
        &k,
        json!([{"op": "query", "sql": "SELECT name FROM sqlite_schema WHERE name = 'secret'"}]),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("\"rows\":[]"),
        "the next event meets a new, empty actor, never the deleted data: {body}"
    );
}

#[test]
fn socket_events_queued_behind_a_delete_run_no_guest_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let k = ActorKey::new("t/app", "testee", "s");
    let sock = rt.open_socket(&k, "/").expect("socket");
    rt.settle(&k);
    // The delete's event runs a while; the message arrives meanwhile and queues behind it.
    let (rt2, k2) = (rt.clone(), k.clone());
    let t = std::thread::spawn(move || {
        ops(
            &rt2,
            &k2,
            json!([{"op": "delete-self"}, {"op": "query", "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000) SELECT count(*) FROM c"}]),
        )
    });
    std::thread::sleep(Duration::from_millis(20));
    let _ = rt.socket_message(sock.id, wasmkeep_host::SocketMessage::Text("hello".into()));
    let (status, body) = t.join().expect("thread");
    assert_eq!(status, 200, "{body}");
    rt.settle(&k);
    assert!(
        !rt.admin().exists(&k),
        "a message for a deleted actor's socket does not create a new actor"
    );
}

#[test]
fn an_actor_name_with_a_nul_is_served_like_any_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let k = ActorKey::new("t/app", "testee", "a\0b");
    let (status, body) = ops(&rt, &k, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    assert_eq!(status, 200, "a NUL in a name is only a byte of it: {body}");
    assert!(rt.admin().exists(&k), "and the actor exists");
}

#[test]
fn a_guest_close_with_a_reserved_code_or_a_long_reason_is_sent_as_a_valid_frame() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let k = ActorKey::new("t/app", "testee", "closer");
    let mut sock = rt.open_socket(&k, "/").expect("socket");
    rt.settle(&k);
    let reason = "r".repeat(300);
    let (status, body) = ops(
        &rt,
        &k,
        json!([{"op": "close", "socket": sock.id.to_string(), "code": 1005, "reason": reason}]),
    );
    assert_eq!(status, 200, "{body}");
    match sock.outbound.try_recv() {
        Ok(wasmkeep_host::Outbound::Close { code, reason }) => {
            assert_eq!(code, 1011, "1005 may not be sent: the client gets 1011");
            assert!(
                reason.len() <= 123,
                "a close reason fits a frame: {} bytes",
                reason.len()
            );
        }
        other => panic!("expected a close, got {other:?}"),
    }
}

#[test]
fn an_on_init_that_traps_after_its_first_write_keeps_nothing_and_runs_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    // The testee's on-init writes a row, then traps while the clock is before `until`.
    let until = rt.dev().now_ms() + 1000;
    let key = ActorKey::new("t/app", "testee", format!("init-traps-before-{until}"));
    let (status, body) = ops(&rt, &key, json!([]));
    assert_eq!(status, 500, "{body}");
    assert!(
        body.contains("on-init failed") && body.contains("nothing it wrote is kept"),
        "{body}"
    );
    rt.dev().advance_clock(2000).expect("clock");
    let (status, body) = ops(
        &rt,
        &key,
        json!([{ "op": "query", "sql": "SELECT count(*) FROM init_log" }]),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(r#""rows":[[{"integer":"1"}]]"#),
        "the trapped on-init's row is gone: on-init's writes count once: {body}"
    );
}

#[test]
fn the_admin_table_dump_is_bounded_in_size_and_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    // Virtual generated columns: a few bytes on disk, computed as the dump reads them.
    let big = ActorKey::new("t/app", "testee", "big");
    let (status, body) = ops(
        &rt,
        &big,
        json!([
            { "op": "exec", "sql": "CREATE TABLE t(i INTEGER, g BLOB AS (zeroblob(4000000)) VIRTUAL)" },
            { "op": "exec", "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 50) INSERT INTO t(i) SELECT x FROM c" },
        ]),
    );
    assert_eq!(status, 200, "{body}");
    match rt.admin().tables(&big) {
        Err(wasmkeep_host::RuntimeError::TablesTooLarge(why)) => assert!(why.contains("16 MiB"), "{why}"),
        Ok(t) => panic!("200 MB of generated rows were read: {} rows", t[0].1.rows.len()),
        Err(e) => panic!("{e}"),
    }
    let slow = ActorKey::new("t/app", "testee", "slow");
    let (status, body) = ops(
        &rt,
        &slow,
        json!([
            { "op": "exec", "sql": "CREATE TABLE t(i INTEGER)" },
            { "op": "exec", "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 2000) INSERT INTO t(i) SELECT x FROM c" },
            { "op": "exec", "sql": "ALTER TABLE t ADD COLUMN g INTEGER AS (length(printf('%.*c', 20000000 + i, 'x'))) VIRTUAL" },
        ]),
    );
    assert_eq!(status, 200, "{body}");
    let started = Instant::now();
    match rt.admin().tables(&slow) {
        Err(wasmkeep_host::RuntimeError::TablesTooSlow(why)) => assert!(why.contains("2 s"), "{why}"),
        Ok(t) => panic!(
            "the dump ran for {:?}: {:?}",
            started.elapsed(),
            t.iter()
                .map(|x| (x.1.rows.len(), x.1.rows.first().cloned()))
                .collect::<Vec<_>>()
        ),
        Err(e) => panic!("{e}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    // The actors are fine afterwards.
    let (status, body) = ops(&rt, &slow, json!([{ "op": "query", "sql": "SELECT i FROM t LIMIT 1" }]));
    assert_eq!(status, 200, "{body}");
}

#[test]
fn an_actor_whose_database_is_damaged_can_be_deleted_through_the_admin_api() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let key = ActorKey::new("t/app", "testee", "damaged");
    let (status, _) = ops(&rt, &key, json!([{ "op": "exec", "sql": "CREATE TABLE t(x)" }]));
    assert_eq!(status, 200);
    rt.dev().hibernate_all();
    let db = rt.admin().db_path(&key);
    std::fs::write(&db, vec![0x42u8; 8192]).expect("damage the database");
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    // No event runs: not even the guest's own delete.
    let (status, body) = ops(&rt, &key, json!([{ "op": "delete-self" }]));
    assert_eq!(status, 500, "{body}");
    assert!(
        !body.contains(&dir.path().display().to_string()),
        "no host path in the answer: {body}"
    );
    assert_eq!(
        rt.admin().delete_actor(&key).expect("admin delete"),
        wasmkeep_host::AdminDeleted::RemovedUnopenable
    );
    let (status, body) = ops(
        &rt,
        &key,
        json!([{ "op": "query", "sql": "SELECT count(*) FROM init_log" }]),
    );
    assert_eq!(status, 200, "a new, empty actor: {body}");
    assert!(body.contains(r#""rows":[[{"integer":"1"}]]"#), "{body}");
    let (status, body) = ops(&rt, &key, json!([{ "op": "previous-deletion" }]));
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(r#""cause":"operator""#),
        "the removal is recorded as an operator delete: {body}"
    );
    // A sound actor is deleted through the one delete routine.
    assert_eq!(
        rt.admin().delete_actor(&key).expect("admin delete"),
        wasmkeep_host::AdminDeleted::Deleted
    );
    assert_eq!(
        rt.admin().delete_actor(&key).expect("admin delete"),
        wasmkeep_host::AdminDeleted::Absent
    );
}

#[test]
fn a_trap_answers_with_the_guest_message_first_and_no_backtrace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let key = ActorKey::new("t/app", "testee", "trapper");
    let (status, body) = ops(&rt, &key, json!([{ "op": "trap" }]));
    assert_eq!(status, 500, "{body}");
    assert!(
        !body.contains("wasm backtrace") && !body.contains("<wasm function"),
        "{body}"
    );
    // The SDK reported the panic through the WIT (`report-failure`): its
    // message is the first line, its location the next, and nothing of
    // what std's panic hook printed to stderr (`thread '<unnamed>' panicked`).
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.first(), Some(&"trap requested by the conformance case"), "{body}");
    assert!(
        lines
            .get(1)
            .is_some_and(|l| l.starts_with("panicked at ") && l.contains("src/lib.rs:")),
        "{body}"
    );
    assert!(!body.contains("thread '"), "{body}");
    assert!(
        body.contains("unreachable") && body.contains("the host's log has its backtrace"),
        "{body}"
    );
}

#[test]
fn a_hibernated_actor_keeps_its_wal_and_a_delete_removes_every_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let k = ActorKey::new("t/app", "testee", "files");
    let (status, _) = ops(
        &rt,
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE t(x); INSERT INTO t VALUES(1)"}]),
    );
    assert_eq!(status, 200);
    rt.dev().hibernate_all();
    let db = rt.admin().db_path(&k);
    let file = |suffix: &str| std::path::PathBuf::from(format!("{}{suffix}", db.display()));
    // Kept so the next wake does not create it again (issue 25); no shm is
    // ever made: the connection holds the file exclusively (ADR 040).
    assert_eq!(std::fs::metadata(file("-wal")).expect("the WAL stays").len(), 0);
    assert!(!file("-shm").exists());
    let (status, body) = ops(&rt, &k, json!([{"op": "delete-self-durable"}]));
    assert_eq!(status, 200, "{body}");
    rt.settle(&k);
    rt.dev().hibernate_all();
    for suffix in ["", "-wal", "-shm"] {
        assert!(!file(suffix).exists(), "{suffix:?} is gone after the delete");
    }
}
