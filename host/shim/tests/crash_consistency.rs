//! `serve` killed with SIGKILL at the worst moments, then started again on
//! the same data directory: nothing half-done is left (ADR 012).

mod common;

use std::path::Path;
use std::process::Child;
use std::time::Duration;

/// A `serve` of the Rust conformance testee (class `testee`), killed when dropped.
struct Served {
    child: Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        // Only the server this test started.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path) -> Served {
    let manifest = common::testee_manifest(dir, "wasmkeep.toml");
    let (child, base) = common::spawn_serve(&manifest, &dir.join("data"), &["--event-timeout-ms", "20000"]);
    Served { child, base }
}

fn ops(base: &str, actor: &str, ops: &serde_json::Value) -> Result<(u16, String), String> {
    let body = serde_json::json!({ "ops": ops }).to_string();
    common::try_http_body("POST", &format!("{base}/testee/{actor}"), &body)
}

#[test]
fn a_host_killed_inside_on_init_keeps_nothing_of_it_and_runs_it_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    // on-init writes its row, then spins for 3 s: the host is killed meanwhile.
    let actor = "init-spins-3000";
    let first = serve(dir.path());
    let base = first.base.clone();
    let request = std::thread::spawn(move || ops(&base, actor, &serde_json::json!([])));
    std::thread::sleep(Duration::from_millis(1500));
    drop(first);
    assert!(
        request.join().expect("thread").is_err(),
        "the killed host did not answer"
    );

    let again = serve(dir.path());
    let (status, body) = ops(
        &again.base,
        actor,
        &serde_json::json!([{ "op": "query", "sql": "SELECT count(*) FROM init_log" }]),
    )
    .expect("answer");
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(r#""rows":[[{"integer":"1"}]]"#),
        "on-init's row from before the kill is gone, and it ran once more: {body}"
    );
}

#[test]
fn a_host_killed_during_durable_deletes_leaves_each_actor_whole_or_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = serve(dir.path());
    let names: Vec<String> = (0..60).map(|i| format!("d{i}")).collect();
    for name in &names {
        let (status, body) = ops(
            &first.base,
            name,
            &serde_json::json!([
                { "op": "exec", "sql": "CREATE TABLE t(v)" },
                { "op": "exec", "sql": "INSERT INTO t VALUES (randomblob(100000))" },
            ]),
        )
        .expect("answer");
        assert_eq!(status, 200, "{body}");
    }
    // Durable deletes one after another, the host killed part way (once ten
    // are acknowledged, whatever the machine's speed).
    let base = first.base.clone();
    let to_delete = names.clone();
    let (acked_tx, acked_rx) = std::sync::mpsc::channel();
    let deleting = std::thread::spawn(move || {
        let mut acknowledged = Vec::new();
        for name in &to_delete {
            match ops(&base, name, &serde_json::json!([{ "op": "delete-self-durable" }])) {
                Ok((200, body)) if body.contains(r#"{"ok":null}"#) => {
                    acknowledged.push(name.clone());
                    let _ = acked_tx.send(());
                }
                _ => break,
            }
        }
        acknowledged
    });
    for _ in 0..10 {
        acked_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a delete was acknowledged");
    }
    drop(first);
    let acknowledged = deleting.join().expect("thread");
    assert!(acknowledged.len() < names.len(), "the kill came before the last delete");

    let again = serve(dir.path());
    for name in &names {
        let (status, body) = ops(
            &again.base,
            name,
            &serde_json::json!([
                { "op": "query", "sql": "SELECT count(*) FROM init_log" },
                { "op": "query", "sql": "SELECT length(v) FROM t" },
            ]),
        )
        .expect("answer");
        assert_eq!(status, 200, "{name}: {body}");
        let whole = body.contains(r#""rows":[[{"integer":"100000"}]]"#);
        let gone = body.contains("no such table");
        assert!(whole ^ gone, "{name} is either whole or gone: {body}");
        if acknowledged.contains(name) {
            assert!(gone, "{name}'s acknowledged durable delete was kept: {body}");
        }
    }
}
