//! `wasmkeep-shim actor history | restore | fork` through the binary, over
//! a cluster's bucket (ADR 064): the history's bookmarks, a restore to one
//! and its undo, a fork into a new actor, and the refusals by exit code.

mod common;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use wasmkeep_shim::{ActorKey, Cluster, HttpRequest, LocalCluster, Runtime, RuntimeConfig};

fn shim(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .expect("run wasmkeep-shim");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ops(rt: &Runtime, k: &ActorKey, ops: Value) -> String {
    let body = serde_json::to_vec(&json!({ "ops": ops })).expect("json");
    let r = rt
        .request_blocking(k, HttpRequest::new("POST", "/", body))
        .expect("request");
    rt.settle(k);
    r.text()
}

fn count(rt: &Runtime, k: &ActorKey) -> String {
    ops(rt, k, json!([{"op": "query", "sql": "SELECT count(*) FROM t"}]))
}

#[test]
fn history_restore_and_fork_from_the_command_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_secs(10);
    let LocalCluster { nodes, .. } = Cluster::local(dir.path(), 1, &config).expect("node");
    let rt = &nodes[0];
    common::add_testee_app(rt);
    let k = ActorKey::new("t/app", "testee", "a");
    ops(
        rt,
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}, {"op": "exec", "sql": "INSERT INTO t VALUES (1)"}]),
    );
    rt.dev().advance_clock(60_000).expect("virtual clock");
    ops(rt, &k, json!([{"op": "exec", "sql": "INSERT INTO t VALUES (2)"}]));

    // Held by node-1: a restore is refused, and says what to do.
    let (code, _, err) = shim(
        dir.path(),
        &["actor", "restore", "--app", "t/app", "testee/a", "--to", "0"],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("hibernate"), "the refusal says what to do: {err}");
    rt.dev().hibernate_all();

    let (code, out, err) = shim(
        dir.path(),
        &["actor", "history", "--app", "t/app", "testee/a", "--json"],
    );
    assert_eq!(code, Some(0), "{err}");
    let records: Vec<Value> = serde_json::from_str(&out).expect("json");
    let first = records[0]["bookmark"].as_str().expect("a bookmark").to_owned();
    assert!(records.last().is_some_and(|r| r["head"] == true), "{out}");

    let (code, out, err) = shim(
        dir.path(),
        &["actor", "restore", "--app", "t/app", "testee/a", "--to", &first],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        count(rt, &k).contains(r#"{"integer":"1"}"#),
        "the state at the first bookmark"
    );
    let undo = out
        .split("`actor restore --to ")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap_or_else(|| panic!("the restore names its undo: {out}"))
        .to_owned();
    rt.dev().hibernate_all();
    let (code, _, err) = shim(
        dir.path(),
        &["actor", "restore", "--app", "t/app", "testee/a", "--to", &undo],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(count(rt, &k).contains(r#"{"integer":"2"}"#), "undone");
    rt.dev().hibernate_all();

    let fork = [
        "actor",
        "fork",
        "--app",
        "t/app",
        "testee/a",
        "--to",
        &first,
        "--into",
        "testee/copy",
    ];
    let (code, _, err) = shim(dir.path(), &fork);
    assert_eq!(code, Some(0), "{err}");
    let copy = ActorKey::new("t/app", "testee", "copy");
    assert!(
        count(rt, &copy).contains(r#"{"integer":"1"}"#),
        "the fork starts at the bookmark"
    );
    rt.dev().hibernate_all();
    let (code, _, err) = shim(dir.path(), &fork);
    assert_eq!(code, Some(1), "a fork into an actor that exists is refused: {err}");

    let (code, _, err) = shim(
        dir.path(),
        &["actor", "restore", "--app", "t/app", "testee/a", "--to", "yesterday"],
    );
    assert_ne!(code, Some(0));
    assert!(
        err.contains("bookmark"),
        "a --to that is none of the three says which it takes: {err}"
    );
    let (code, _, _) = shim(dir.path(), &["actor", "history", "--app", "t/app", "testee/never"]);
    assert_eq!(code, Some(1), "no history: exit 1");
}
