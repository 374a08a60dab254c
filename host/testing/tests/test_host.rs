//! The test host as the harnesses drive it: after a node is cut off, the
//! verbs that act for the whole host (the due alarms, one actor's alarm) run
//! on a node that is still live, as `serve --nodes N` does; and a restart of
//! the whole host keeps the data, the time and the alarms.

#[path = "../../runtime/tests/common/mod.rs"]
mod common;

use serde_json::{Value, json};
use wasmkeep_host::{ActorKey, ClassSpec, HttpRequest};
use wasmkeep_host_testing::{ChaosRunError, TestAnswer, TestHost, TestHostOptions, run_chaos};

fn cluster(nodes: usize) -> TestHost {
    let host = TestHost::new(TestHostOptions {
        nodes: (nodes > 1).then_some(nodes),
        cache_dir: Some(common::cache_dir()),
        ..TestHostOptions::default()
    })
    .expect("a test host starts");
    host.add_app(
        "t/app",
        &[ClassSpec {
            name: "testee".into(),
            component: common::component("conformance-testee-rust"),
            access: wasmkeep_host::Access::Open,
        }],
    )
    .expect("the testee app loads");
    host
}

fn ops_on(host: &TestHost, node: usize, key: &ActorKey, ops: Value) -> String {
    let body = serde_json::to_vec(&json!({ "ops": ops })).expect("json");
    let r = host
        .request(key, HttpRequest::new("POST", "/", body), Some(node))
        .expect("request")
        .response;
    assert_eq!(r.status, 200, "{}", r.text());
    r.text()
}

/// A request whose event logs a line, then traps (a 500).
fn log_then_trap(host: &TestHost, key: &ActorKey, line: &str) -> TestAnswer {
    let body = json!({ "ops": [{"op": "log", "level": "error", "message": line}, {"op": "trap"}] });
    host.request(
        key,
        HttpRequest::new("POST", "/", serde_json::to_vec(&body).expect("json")),
        None,
    )
    .expect("request")
}

#[test]
fn an_answer_of_500_comes_with_the_request_and_what_the_actor_logged() {
    let host = cluster(1);
    let key = ActorKey::new("t/app", "testee", "explained");
    let answer = log_then_trap(&host, &key, "about to trap");
    assert_eq!(answer.response.status, 500);
    let why = answer.explanation.expect("a 500 is explained");
    assert!(
        why.starts_with("wasmkeep: POST / to t/app:testee/explained answered 500; "),
        "{why}"
    );
    assert!(why.contains("about to trap"), "{why}");
    let fine = host
        .request(&key, HttpRequest::new("POST", "/", r#"{"ops":[]}"#), None)
        .expect("request");
    assert_eq!(fine.response.status, 200);
    assert!(fine.explanation.is_none(), "nothing explains a 200");
}

#[test]
fn under_chaos_a_5xx_is_kept_for_the_seed_that_fails() {
    let mut host = cluster(1);
    let key = ActorKey::new("t/app", "testee", "chaos");
    let passed = run_chaos(&mut host, [1, 2], |host, _| {
        let answer = log_then_trap(host, &key, "expected here");
        assert!(answer.explanation.is_none(), "kept, not handed back, under chaos");
        Ok(())
    })
    .expect("two seeds pass");
    assert_eq!(passed, 2);
    let failed = run_chaos(&mut host, [3, 4, 5], |host, seed| {
        log_then_trap(host, &key, "the failing seed's");
        if seed == 4 { Err("seed 4 fails".into()) } else { Ok(()) }
    });
    let Err(ChaosRunError::Failed(failure)) = failed else {
        panic!("seed 4 fails: {failed:?}")
    };
    assert_eq!((failure.seed, failure.passed), (4, 1));
    assert_eq!(failure.message, "seed 4 fails");
    assert!(
        !failure.explanations.is_empty() && failure.explanations.iter().all(|e| e.contains("the failing seed's")),
        "{:?}",
        failure.explanations
    );
    assert!(failure.report().contains("WASMKEEP_CHAOS_SEED=4"));
    assert_eq!(host.chaos_seed(), None, "no chaos is left running");
}

/// The actor is opened on node 1 with an alarm (kept by `exec-durable`);
/// node 1 is cut off and node 2 takes the actor over.
fn alarm_set_then_node_1_cut_off(host: &TestHost, key: &ActorKey) {
    ops_on(
        host,
        1,
        key,
        json!([
            {"op": "exec", "sql": "CREATE TABLE IF NOT EXISTS alarm_log(at)"},
            {"op": "set-alarm", "in": "1000"},
            {"op": "exec-durable", "sql": "INSERT INTO alarm_log VALUES(-1)"},
        ]),
    );
    host.cut_off(1).expect("cut off");
    let taken = ops_on(host, 2, key, json!([{"op": "get-alarm"}]));
    assert!(taken.contains("\"pending\":true"), "node 2 restored the alarm: {taken}");
    host.advance_clock(2 * 24 * 3600 * 1000).expect("advance");
}

#[test]
fn after_a_cut_off_the_due_alarms_run_on_the_new_holder() {
    let host = cluster(2);
    let key = ActorKey::new("t/app", "testee", "a");
    alarm_set_then_node_1_cut_off(&host, &key);
    assert_eq!(host.run_due_alarms().expect("run"), 1, "the alarm fires on node 2");
    let after = ops_on(&host, 2, &key, json!([{"op": "get-alarm"}]));
    assert!(after.contains("\"pending\":false"), "the alarm ran: {after}");
}

#[test]
fn after_a_cut_off_one_actors_alarm_runs_on_the_new_holder() {
    let host = cluster(3);
    let key = ActorKey::new("t/app", "testee", "b");
    alarm_set_then_node_1_cut_off(&host, &key);
    assert!(host.run_alarm(&key).expect("run"), "the alarm fires on node 2");
    assert!(!host.run_alarm(&key).expect("run"), "once");
}

#[test]
fn an_actors_alarm_runs_through_the_node_asked_for() {
    let host = cluster(3);
    let key = ActorKey::new("t/app", "testee", "c");
    alarm_set_then_node_1_cut_off(&host, &key);
    assert!(!host.run_alarm_on(1, &key).expect("run"), "a cut-off node runs nothing");
    assert!(
        host.run_alarm_on(3, &key).expect("run"),
        "node 3 forwards it to node 2, the holder"
    );
}

#[test]
fn a_restarted_host_keeps_the_data_the_time_and_the_alarms_and_closes_the_sockets() {
    let mut host = cluster(1);
    let key = ActorKey::new("t/app", "testee", "r");
    ops_on(
        &host,
        1,
        &key,
        json!([
            {"op": "exec", "sql": "CREATE TABLE t(x); INSERT INTO t VALUES(1)"},
            {"op": "set-alarm", "in": "60000"},
        ]),
    );
    let socket = host.open_socket(&key, "/").expect("a socket");
    let before = host.now_ms().expect("now");
    host.restart_host().expect("restart");
    assert!(host.now_ms().expect("now") >= before, "the clock does not go back");
    assert!(
        matches!(
            host.socket_take(socket),
            Err(wasmkeep_host_testing::TestHostError::NoSuchSocket(_))
        ),
        "the sockets are gone with the process"
    );
    host.advance_clock(120_000).expect("advance");
    assert_eq!(
        host.run_due_alarms().expect("run"),
        1,
        "the alarm of an actor not opened since the restart fires"
    );
    let rows = ops_on(
        &host,
        1,
        &key,
        json!([{"op": "query", "sql": "SELECT count(*) AS n FROM t"}]),
    );
    assert!(rows.contains("\"integer\":\"1\""), "the data is kept: {rows}");
}

#[test]
fn a_restarted_cluster_has_its_cut_off_node_back_and_keeps_the_alarms() {
    let mut host = cluster(2);
    let key = ActorKey::new("t/app", "testee", "q");
    alarm_set_then_node_1_cut_off(&host, &key);
    host.restart_host().expect("restart");
    let answer = ops_on(&host, 1, &key, json!([{"op": "get-alarm"}]));
    assert!(answer.contains("\"pending\":true"), "node 1 serves again: {answer}");
    assert_eq!(host.run_due_alarms().expect("run"), 1, "the alarm fires");
}

/// Going back in time (ADR 064): on a single node started with history, and
/// on two nodes, a restore to a bookmark or a time, and its undo.
#[test]
fn the_history_lists_bookmarks_and_a_restore_goes_back_and_is_undone() {
    for nodes in [1, 2] {
        let host = TestHost::new(TestHostOptions {
            nodes: (nodes > 1).then_some(nodes),
            cache_dir: Some(common::cache_dir()),
            history: true,
            ..TestHostOptions::default()
        })
        .expect("a test host starts");
        host.add_app(
            "t/app",
            &[ClassSpec {
                name: "testee".into(),
                component: common::component("conformance-testee-rust"),
                access: wasmkeep_host::Access::Open,
            }],
        )
        .expect("the testee loads");
        let key = ActorKey::new("t/app", "testee", "back");
        let ops = |sql: &str| {
            let body = serde_json::json!({"ops": [{"op": "exec", "sql": sql}]}).to_string();
            let a = host
                .request(&key, HttpRequest::new("POST", "/", body), None)
                .expect("request");
            assert_eq!(a.response.status, 200, "{}", a.response.text());
        };
        ops("CREATE TABLE t(x)");
        host.advance_clock(1_000).expect("clock");
        ops("INSERT INTO t VALUES (1)");
        let after_first = host.now_ms().expect("clock");
        host.advance_clock(1_000).expect("clock");
        ops("INSERT INTO t VALUES (2)");
        let history = host.history(&key).expect("history");
        assert!(history.len() >= 3, "{nodes} node(s): {history:?}");
        assert!(
            history.last().is_some_and(|p| p.head),
            "the newest is the head: {history:?}"
        );
        assert!(
            history.windows(2).all(|w| w[0].bookmark < w[1].bookmark),
            "bookmarks sort by position"
        );
        let count = || {
            let body = serde_json::json!({"ops": [{"op": "query", "sql": "SELECT count(*) FROM t"}]}).to_string();
            host.request(&key, HttpRequest::new("POST", "/", body), None)
                .expect("request")
                .response
                .text()
        };
        let restored = host
            .restore(&key, &wasmkeep_host_testing::RestoreTo::Time(after_first))
            .expect("restore");
        assert!(count().contains(r#"{"integer":"1"}"#), "{nodes} node(s): {}", count());
        host.restore(&key, &wasmkeep_host_testing::RestoreTo::Bookmark(restored.undo))
            .expect("undo");
        assert!(
            count().contains(r#"{"integer":"2"}"#),
            "{nodes} node(s): undone: {}",
            count()
        );
        let bad = host.restore(&key, &wasmkeep_host_testing::RestoreTo::Bookmark("yesterday".into()));
        assert!(
            matches!(
                bad.map_err(|e| e.kind()),
                Err(wasmkeep_host_testing::TestHostErrorKind::Host(
                    wasmkeep_host::FailureKind::BadArgument
                ))
            ),
            "a malformed bookmark is refused by its kind"
        );
    }
}
