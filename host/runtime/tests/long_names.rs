//! Actor names of any length (hardening issue, item 2): a name's file and
//! bucket keys are shortened with a hash past 64 bytes, the full name is kept
//! inside the database, and every delete works (before, from 122 bytes the
//! removal marker's file name was too long: `delete-self-durable` answered
//! `internal` forever; from 123 bytes every event was 503).

mod common;

use serde_json::{Value, json};
use wasmkeep_host::{ActorKey, HttpRequest, Runtime, RuntimeConfig};

fn ops(rt: &Runtime, key: &ActorKey, ops: Value) -> (u16, String) {
    let body = serde_json::to_vec(&json!({ "ops": ops })).expect("json");
    let r = rt
        .request_blocking(key, HttpRequest::new("POST", "/", body))
        .expect("request");
    rt.settle(key);
    (r.status, r.text())
}

/// Writes, reads back, is listed by its full name, deletes itself durably,
/// leaves no file, and comes back new.
fn a_long_name_lives_and_dies(rt: &Runtime, data: &std::path::Path, name: &str) {
    let key = ActorKey::new("t/app", "testee", name);
    let (status, body) = ops(
        rt,
        &key,
        json!([
            { "op": "exec", "sql": "CREATE TABLE t(v)" },
            { "op": "exec", "sql": "INSERT INTO t VALUES ('kept')" },
            { "op": "self" },
        ]),
    );
    assert_eq!(status, 200, "{} bytes: {body}", name.len());
    assert!(
        body.contains(&serde_json::to_string(name).expect("json")),
        "the actor sees its full name: {body}"
    );
    rt.dev().hibernate_all();
    let (status, body) = ops(rt, &key, json!([{ "op": "query", "sql": "SELECT v FROM t" }]));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("kept"), "woken from its shortened files: {body}");
    rt.dev().hibernate_all();
    assert!(
        rt.admin().actors().iter().any(|a| a.key == key),
        "listed by its full name: {:?}",
        rt.admin().actors().iter().map(|a| a.key.name.len()).collect::<Vec<_>>()
    );
    let longest = walk(data).into_iter().map(|f| f.len()).max().unwrap_or(0);
    assert!(longest <= 200, "no file name over 200 bytes: {longest}");
    let (status, body) = ops(rt, &key, json!([{ "op": "delete-self-durable" }]));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#"{"ok":null}"#), "the durable delete answers ok: {body}");
    let (status, body) = ops(
        rt,
        &key,
        json!([{ "op": "query", "sql": "SELECT count(*) FROM init_log" }]),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(r#""rows":[[{"integer":"1"}]]"#),
        "a new, empty actor: {body}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        out.push(e.file_name().to_string_lossy().into_owned());
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

fn names() -> Vec<String> {
    vec![
        "n".repeat(122),
        "é".repeat(100),
        format!("{}\u{0}end", "z".repeat(300)),
        "w".repeat(20_000),
    ]
}

#[test]
fn long_names_live_and_die_on_one_node() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    for name in names() {
        a_long_name_lives_and_dies(&rt, &dir.path().join("state"), &name);
    }
}

#[test]
fn long_names_live_and_die_in_a_cluster() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = common::testee_cluster_node(dir.path());
    for name in names() {
        a_long_name_lives_and_dies(&rt, dir.path(), &name);
    }
}
