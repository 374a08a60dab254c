//! An alarm whose event's writes were not kept runs again (issue 58: alarms
//! are at-least-once). The alarm's event clears the actor's alarm and runs
//! `on-alarm`; when the end of that event is not acknowledged (the upload
//! fails), the actor goes back to what the bucket holds, where the alarm is
//! still due, so the alarm must run again. Before, the index had forgotten
//! it: the alarm was lost until something else woke the actor.

mod common;

use serde_json::json;
use wasmkeep_host::ActorKey;
use wasmkeep_host::faults::FaultKind;

fn alarm_runs(rt: &wasmkeep_host::Runtime, key: &ActorKey) -> u64 {
    let body = common::ops(
        rt,
        key,
        json!([
            {"op": "exec", "sql": "CREATE TABLE IF NOT EXISTS alarm_log(at TEXT)"},
            {"op": "query", "sql": "SELECT count(*) FROM alarm_log"}
        ]),
    );
    let v: serde_json::Value = serde_json::from_str(&body).expect("json");
    v.pointer("/outcomes/1/ok/rows/0/0/integer")
        .and_then(|n| n.as_str())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a count: {body}"))
}

#[test]
fn an_alarm_whose_writes_were_not_kept_runs_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = common::testee_cluster_node(dir.path());
    let key = ActorKey::new("t/app", "testee", "alarmed");
    common::ops(&rt, &key, json!([{"op": "set-alarm", "in": "1000"}]));
    rt.dev().advance_clock(1_000).expect("virtual clock");
    // The alarm's event runs, and its end is not acknowledged.
    rt.dev().faults().arm(FaultKind::FailUpload, 1);
    assert_eq!(rt.dev().run_due_alarms(), 1, "the alarm ran");
    rt.settle(&key);
    assert_eq!(
        rt.dev().faults().remaining(FaultKind::FailUpload),
        0,
        "its end's upload failed"
    );
    // Its writes were not kept, and nothing else wakes the actor: the alarm
    // is still due, and the next pass runs it.
    assert_eq!(rt.dev().run_due_alarms(), 1, "the alarm runs again");
    rt.settle(&key);
    assert_eq!(alarm_runs(&rt, &key), 1, "and this time its writes were kept, once");
    rt.dev().run_due_alarms();
    rt.settle(&key);
    assert_eq!(alarm_runs(&rt, &key), 1, "and only once more");
}
