//! History as page sets on a chain (issue 55, ADR 064): an acknowledged
//! write puts the pages it changed, not the database; an event that wrote
//! nothing puts nothing; a takeover restores along the chain; a restore to
//! a time gives the last state written at or before it, and is undone by
//! another; collection keeps the window and erases what lies before it.

mod common;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_host::bucket::ObjectStore;
use wasmkeep_host::clock::Clock;
use wasmkeep_host::history::{Kind, parse_listed};
use wasmkeep_host::replica::{Acquired, Replica, Target};
use wasmkeep_host::{ActorKey, Cluster, Runtime, RuntimeConfig};

use common::ops;

fn nodes(dir: &std::path::Path, n: usize) -> (Arc<dyn ObjectStore>, Vec<Runtime>, Arc<Cluster>) {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_secs(20);
    let local = Cluster::local(dir, n, &config).expect("nodes");
    for rt in &local.nodes {
        common::add_testee_app(rt);
    }
    (local.cluster.bucket().clone(), local.nodes, local.cluster)
}

/// Every object under the actor's history: its key and its length.
fn objects(bucket: &dyn ObjectStore, key: &ActorKey) -> Vec<(String, usize)> {
    let prefix = wasmkeep_host::keys::history_prefix(key);
    bucket
        .list(&prefix)
        .expect("listing")
        .into_iter()
        .map(|m| {
            let len = bucket.get(&m.key).expect("get").map_or(0, |(b, _)| b.len());
            (m.key, len)
        })
        .collect()
}

fn total(objects: &[(String, usize)]) -> usize {
    objects.iter().map(|o| o.1).sum()
}

/// The testee's table `big` with one 5 MB row and a small one that is updated.
fn a_five_megabyte_actor(rt: &Runtime, k: &ActorKey) {
    let answer = ops(
        rt,
        k,
        json!([
            {"op": "exec", "sql": "CREATE TABLE big(id INTEGER PRIMARY KEY, v BLOB)"},
            {"op": "exec", "sql": "INSERT INTO big VALUES (1, zeroblob(5000000))"},
            {"op": "exec", "sql": "CREATE TABLE n(id INTEGER PRIMARY KEY, v INTEGER)"},
            {"op": "exec", "sql": "INSERT INTO n VALUES (1, 0)"},
        ]),
    );
    assert!(!answer.contains("error"), "{answer}");
}

fn counter(rt: &Runtime, k: &ActorKey) -> String {
    ops(rt, k, json!([{"op": "query", "sql": "SELECT v FROM n WHERE id = 1"}]))
}

/// The value of the row `n` 1, as the testee answers it.
fn value(rt: &Runtime, k: &ActorKey) -> i64 {
    let answer = counter(rt, k);
    let v: serde_json::Value = serde_json::from_str(&answer).expect("json");
    let text = v
        .pointer("/outcomes/0/ok/rows/0/0/integer")
        .and_then(|x| x.as_str())
        .unwrap_or_else(|| panic!("no value in {answer}"));
    text.parse().expect("an integer")
}

#[test]
fn a_one_row_durable_write_to_a_five_megabyte_actor_puts_its_pages_not_the_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bucket, nodes, _cluster) = nodes(dir.path(), 1);
    let k = ActorKey::new("t/app", "testee", "big");
    a_five_megabyte_actor(&nodes[0], &k);
    let before = objects(bucket.as_ref(), &k);
    for i in 1..=50 {
        let answer = ops(
            &nodes[0],
            &k,
            json!([{"op": "exec-durable", "sql": format!("UPDATE n SET v = {i} WHERE id = 1")}]),
        );
        assert!(!answer.contains("error"), "{answer}");
    }
    let after = objects(bucket.as_ref(), &k);
    let grown = total(&after) - total(&before);
    let puts = after.len() - before.len();
    eprintln!(
        "history: 50 one-row exec-durable updates of a 5 MB actor put {puts} objects, {grown} bytes ({} bytes a write); the bucket held {} bytes before",
        grown / 50,
        total(&before)
    );
    assert!(puts >= 50, "each acknowledged write is on the chain: {puts}");
    assert!(
        grown <= 50 * 64 * 1024,
        "each write puts at most 64 KiB, not the database: {grown} bytes for 50"
    );
    assert_eq!(value(&nodes[0], &k), 50);
}

#[test]
fn an_event_that_wrote_nothing_puts_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bucket, nodes, _cluster) = nodes(dir.path(), 1);
    let k = ActorKey::new("t/app", "testee", "reader");
    a_five_megabyte_actor(&nodes[0], &k);
    let before = objects(bucket.as_ref(), &k);
    for _ in 0..10 {
        assert_eq!(value(&nodes[0], &k), 0);
    }
    assert_eq!(objects(bucket.as_ref(), &k), before, "ten reads wrote no object");
}

#[test]
fn a_takeover_restores_along_the_chain_and_goes_on_from_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bucket, nodes, _cluster) = nodes(dir.path(), 2);
    let k = ActorKey::new("t/app", "testee", "moving");
    for _ in 0..5 {
        common::count_request(&nodes[0], &k);
    }
    nodes[0].dev().hibernate_all();
    let (status, body) = common::count_request(&nodes[1], &k);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains('6'), "node 2 went on from the fifth row: {body}");
    let prefix = wasmkeep_host::keys::history_prefix(&k);
    let kinds: Vec<Kind> = bucket
        .list(&prefix)
        .expect("listing")
        .iter()
        .filter_map(|m| parse_listed(&prefix, &m.key, m.last_modified))
        .map(|o| o.kind)
        .collect();
    assert!(
        kinds.contains(&Kind::Pages),
        "writes after the first are page sets: {kinds:?}"
    );
    nodes[1].dev().hibernate_all();
    let (_, body) = common::count_request(&nodes[0], &k);
    assert!(body.contains('7'), "and back on node 1: {body}");
}

#[test]
fn a_restore_to_a_time_gives_the_state_then_and_can_be_undone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bucket, nodes, cluster) = nodes(dir.path(), 1);
    let clock = cluster.clock().as_virtual().expect("a virtual clock").clone();
    let k = ActorKey::new("t/app", "testee", "travel");
    ops(
        &nodes[0],
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE n(id INTEGER PRIMARY KEY, v INTEGER)"}, {"op": "exec", "sql": "INSERT INTO n VALUES (1, 0)"}]),
    );
    let mut times = Vec::new();
    for i in 1..=5 {
        clock.advance(60_000);
        ops(
            &nodes[0],
            &k,
            json!([{"op": "exec", "sql": format!("UPDATE n SET v = {i} WHERE id = 1")}]),
        );
        times.push(clock.now_ms());
    }
    nodes[0].dev().hibernate_all();
    clock.advance(60_000);
    let live = |_: &str| true;
    let mut operator = Replica::new(bucket.clone(), Arc::new(Default::default()), k.clone(), "operator");
    assert!(matches!(operator.acquire(&live), Ok(Acquired::Held { .. })));
    let (from, to, _) = operator
        .restore_to(Target::Time(times[1] + 30_000), &live)
        .expect("restore");
    operator.release().expect("release");
    assert!(to > from, "the restore is a new position: {from} -> {to}");
    assert_eq!(value(&nodes[0], &k), 2, "the state at the second update");
    clock.advance(60_000);
    ops(
        &nodes[0],
        &k,
        json!([{"op": "exec", "sql": "UPDATE n SET v = 100 WHERE id = 1"}]),
    );
    nodes[0].dev().hibernate_all();
    let mut undo = Replica::new(bucket, Arc::new(Default::default()), k.clone(), "operator");
    assert!(matches!(undo.acquire(&live), Ok(Acquired::Held { .. })));
    undo.restore_to(Target::Time(times[4]), &live)
        .expect("undo: back to the last update");
    assert!(
        matches!(
            undo.restore_to(Target::Time(times[0] - 120_000), &live),
            Err(wasmkeep_host::replica::ReplicaError::Chain(_))
        ),
        "nothing was written before the actor was"
    );
    undo.release().expect("release");
    assert_eq!(value(&nodes[0], &k), 5, "the restore was undone");
}

#[test]
fn the_admin_restore_runs_in_the_mailbox_and_the_alarm_follows_the_restored_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_bucket, nodes, cluster) = nodes(dir.path(), 2);
    let clock = cluster.clock().as_virtual().expect("a virtual clock").clone();
    let k = ActorKey::new("t/app", "testee", "admin-restore");
    let far = clock.now_ms() + 86_400_000;
    ops(
        &nodes[0],
        &k,
        json!([
            {"op": "exec", "sql": "CREATE TABLE n(id INTEGER PRIMARY KEY, v INTEGER)"},
            {"op": "exec", "sql": "INSERT INTO n VALUES (1, 1)"},
            {"op": "set-alarm", "at": far.to_string()},
        ]),
    );
    clock.advance(60_000);
    let with_alarm = clock.now_ms();
    clock.advance(60_000);
    ops(
        &nodes[0],
        &k,
        json!([{"op": "exec", "sql": "UPDATE n SET v = 2 WHERE id = 1"}, {"op": "clear-alarm"}]),
    );
    // The actor's own alarm, as it reads it (the index may keep an entry
    // that wakes nothing; the database decides).
    let alarm = |rt: &Runtime| {
        let answer = ops(rt, &k, json!([{"op": "get-alarm"}]));
        let v: serde_json::Value = serde_json::from_str(&answer).expect("json");
        v.pointer("/outcomes/0/ok/at")
            .and_then(|a| a.as_str())
            .map(|a| a.parse::<u64>().expect("ms"))
    };
    assert_eq!(alarm(&nodes[0]), None, "the alarm was cleared");
    // Asked of node 2, which does not hold it: node 1 carries it out.
    let restored = nodes[1]
        .admin()
        .restore_actor(&k, Target::Time(with_alarm))
        .expect("restore");
    assert_eq!(value(&nodes[0], &k), 1, "the state before the update");
    assert_eq!(alarm(&nodes[0]), Some(far), "and its alarm");
    let indexed = nodes[0]
        .admin()
        .actors()
        .into_iter()
        .find(|a| a.key == k)
        .and_then(|a| a.alarm);
    assert_eq!(indexed, Some(far), "in the index again, so it wakes the actor");
    let undo = restored.undo.parse().expect("a bookmark");
    nodes[0]
        .admin()
        .restore_actor(&k, Target::Bookmark(undo))
        .expect("undo");
    assert_eq!(value(&nodes[0], &k), 2, "undone");
    assert_eq!(alarm(&nodes[0]), None, "the alarm went with it");
    let refused = nodes[0].admin().restore_actor(&k, Target::Time(with_alarm - 3_600_000));
    assert_eq!(
        refused.map_err(|e| e.kind()).err(),
        Some(wasmkeep_host::FailureKind::BadArgument),
        "no state was written an hour before"
    );
    let missing = ActorKey::new("t/app", "testee", "never");
    assert_eq!(
        nodes[0]
            .admin()
            .restore_actor(&missing, Target::Time(with_alarm))
            .map_err(|e| e.kind())
            .err(),
        Some(wasmkeep_host::FailureKind::NoSuchActor)
    );
}

#[test]
fn a_restore_closes_open_sockets_after_their_close_events_ran_on_the_old_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_bucket, nodes, cluster) = nodes(dir.path(), 1);
    let clock = cluster.clock().as_virtual().expect("a virtual clock").clone();
    let k = ActorKey::new("t/app", "testee", "sockets");
    ops(
        &nodes[0],
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE n(id INTEGER PRIMARY KEY, v INTEGER)"}]),
    );
    let before_socket = clock.now_ms();
    clock.advance(60_000);
    let mut socket = nodes[0].open_socket(&k, "/chat").expect("open");
    nodes[0].settle(&k);
    let restored = nodes[0]
        .admin()
        .restore_actor(&k, Target::Time(before_socket))
        .expect("restore");
    let mut closed = None;
    while let Ok(out) = socket.outbound.try_recv() {
        if let wasmkeep_host::Outbound::Close { code, reason } = out {
            closed = Some((code, reason));
        }
    }
    assert_eq!(closed, Some((1012, "actor restored".to_owned())), "the client was told");
    let log = |rt: &Runtime| {
        ops(
            rt,
            &k,
            json!([{"op": "query", "sql": "SELECT event FROM socket_log ORDER BY rowid"}]),
        )
    };
    assert!(
        log(&nodes[0]).contains("no such table"),
        "the restored state never saw the socket: {}",
        log(&nodes[0])
    );
    nodes[0]
        .admin()
        .restore_actor(&k, Target::Bookmark(restored.undo.parse().expect("bookmark")))
        .expect("undo");
    let events = log(&nodes[0]);
    assert!(
        events
            .find("open")
            .is_some_and(|o| events.find("close").is_some_and(|c| o < c)),
        "the close event ran on the old state, before the restore: {events}"
    );
}

/// One node with local files and a history in `dir/history`, written every `every`.
fn single_node(dir: &std::path::Path, every: Duration) -> Runtime {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.history = Some(wasmkeep_host::HistoryConfig {
        dir: dir.join("history"),
        every,
    });
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    rt
}

#[test]
fn a_single_node_keeps_history_too_and_restores_from_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = single_node(dir.path(), Duration::ZERO);
    let k = ActorKey::new("t/app", "testee", "local");
    ops(
        &rt,
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE n(id INTEGER PRIMARY KEY, v INTEGER)"}, {"op": "exec", "sql": "INSERT INTO n VALUES (1, 0)"}]),
    );
    let mut times = Vec::new();
    for i in 1..=5 {
        rt.dev().advance_clock(60_000).expect("virtual clock");
        ops(
            &rt,
            &k,
            json!([{"op": "exec", "sql": format!("UPDATE n SET v = {i} WHERE id = 1")}]),
        );
        times.push(rt.dev().now_ms());
    }
    rt.dev().advance_clock(60_000).expect("virtual clock");
    let restored = rt.admin().restore_actor(&k, Target::Time(times[1])).expect("restore");
    assert_eq!(value(&rt, &k), 2, "the state at the second update");
    rt.admin()
        .restore_actor(&k, Target::Bookmark(restored.undo.parse().expect("an undo bookmark")))
        .expect("undo");
    assert_eq!(value(&rt, &k), 5, "undone");
    // A delete: nothing from before it comes back, even for the actor made again.
    ops(&rt, &k, json!([{"op": "delete-self-durable"}]));
    rt.dev().advance_clock(60_000).expect("virtual clock");
    ops(
        &rt,
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE n(id INTEGER PRIMARY KEY, v INTEGER)"}, {"op": "exec", "sql": "INSERT INTO n VALUES (1, 99)"}]),
    );
    let refused = rt.admin().restore_actor(&k, Target::Time(times[4]));
    assert_eq!(
        refused.map_err(|e| e.kind()).err(),
        Some(wasmkeep_host::FailureKind::BadArgument)
    );
    assert_eq!(value(&rt, &k), 99);
}

#[test]
fn a_single_node_gathers_its_history_and_a_restore_waits_for_what_is_still_to_be_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = single_node(dir.path(), Duration::from_millis(50));
    let k = ActorKey::new("t/app", "testee", "gathered");
    ops(
        &rt,
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE n(id INTEGER PRIMARY KEY, v INTEGER)"}, {"op": "exec", "sql": "INSERT INTO n VALUES (1, 0)"}]),
    );
    for i in 1..=100 {
        rt.dev().advance_clock(1_000).expect("virtual clock");
        ops(
            &rt,
            &k,
            json!([{"op": "exec", "sql": format!("UPDATE n SET v = {i} WHERE id = 1")}]),
        );
    }
    let last = rt.dev().now_ms();
    rt.dev().advance_clock(1_000).expect("virtual clock");
    ops(
        &rt,
        &k,
        json!([{"op": "exec", "sql": "UPDATE n SET v = 1000 WHERE id = 1"}]),
    );
    rt.admin().restore_actor(&k, Target::Time(last)).expect("restore");
    assert_eq!(
        value(&rt, &k),
        100,
        "the last write before the time, though the writer had not written it yet"
    );
    // Commits within 50 ms of each other are gathered into one page set.
    let history = wasmkeep_host::bucket::LocalDirBucket::new(
        dir.path().join("history"),
        Arc::new(wasmkeep_host::clock::SystemClock),
    );
    let count = || objects(&history, &k).len();
    let before = count();
    for i in 0..50 {
        ops(
            &rt,
            &k,
            json!([{"op": "exec", "sql": format!("UPDATE n SET v = {i} WHERE id = 1")}]),
        );
    }
    rt.admin()
        .restore_actor(&k, Target::Time(rt.dev().now_ms()))
        .expect("a restore to now");
    assert_eq!(value(&rt, &k), 49);
    let written = count() - before;
    assert!(written < 25, "50 commits at one time were gathered: {written} objects");
}

#[test]
fn without_a_history_a_single_node_refuses_a_restore_by_its_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    let k = ActorKey::new("t/app", "testee", "none");
    ops(&rt, &k, json!([{"op": "exec", "sql": "CREATE TABLE n(v)"}]));
    let refused = rt.admin().restore_actor(&k, Target::Time(0));
    assert_eq!(
        refused.map_err(|e| e.kind()).err(),
        Some(wasmkeep_host::FailureKind::BadArgument)
    );
}

#[test]
fn a_single_node_with_history_answers_the_guests_bookmark_calls_and_restores_on_its_next_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    for every in [Duration::ZERO, Duration::from_millis(20)] {
        let rt = single_node(&dir.path().join(format!("{}", every.as_millis())), every);
        let k = ActorKey::new("t/app", "testee", "guest-calls");
        let answer = ops(
            &rt,
            &k,
            json!([{"op": "exec", "sql": "CREATE TABLE n(id INTEGER PRIMARY KEY, v INTEGER)"}, {"op": "exec", "sql": "INSERT INTO n VALUES (1, 1)"}, {"op": "current-bookmark"}]),
        );
        let v: serde_json::Value = serde_json::from_str(&answer).expect("json");
        let one = v
            .pointer("/outcomes/2/ok/bookmark")
            .and_then(|b| b.as_str())
            .unwrap_or_else(|| panic!("a bookmark: {answer}"))
            .to_owned();
        rt.dev().advance_clock(1_000).expect("virtual clock");
        let at_one = rt.dev().now_ms();
        rt.dev().advance_clock(1_000).expect("virtual clock");
        let answer = ops(
            &rt,
            &k,
            json!([{"op": "exec", "sql": "UPDATE n SET v = 2 WHERE id = 1"}, {"op": "bookmark-for-time", "at": at_one.to_string()}, {"op": "restore-on-next-session", "bookmark": one}]),
        );
        let v: serde_json::Value = serde_json::from_str(&answer).expect("json");
        assert_eq!(
            v.pointer("/outcomes/1/ok/bookmark").and_then(|b| b.as_str()),
            Some(one.as_str()),
            "{answer}"
        );
        let undo = v
            .pointer("/outcomes/2/ok/undo")
            .and_then(|b| b.as_str())
            .unwrap_or_else(|| panic!("an undo bookmark: {answer}"))
            .to_owned();
        assert_eq!(
            value(&rt, &k),
            1,
            "the next session starts at the bookmark (every {every:?})"
        );
        ops(&rt, &k, json!([{"op": "restore-on-next-session", "bookmark": undo}]));
        assert_eq!(
            value(&rt, &k),
            2,
            "and the undo brings the later state back (every {every:?})"
        );
    }
}
