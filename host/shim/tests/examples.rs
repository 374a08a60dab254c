//! Examples are tests: `wasmkeep-shim serve` runs each example manifest, and
//! the example's actors answer as their READMEs say. Also the binary's errors
//! for bad input.

mod common;
#[path = "examples/metrics.rs"]
mod metrics;
#[path = "examples/served.rs"]
mod served;

use common::{http, http_body};
use metrics::metric;
use served::{repo, serve, serve_with, spawn_counter_serve};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn counter_rust_example_counts_and_deletes() {
    common::component("counter-rust");
    for manifest in ["examples/counter-rust/wasmkeep.toml", "examples/wasmkeep.toml"] {
        let s = serve(&repo().join(manifest));
        let url = format!("{}/counter/visits", s.base);
        assert_eq!(
            http("GET", &url),
            (200, "0".into()),
            "{manifest}: a new counter reads 0"
        );
        assert_eq!(http("POST", &url), (200, "1".into()), "{manifest}: POST adds one");
        assert_eq!(http("POST", &url), (200, "2".into()), "{manifest}: and again");
        assert_eq!(
            http("DELETE", &url),
            (200, "deleted".into()),
            "{manifest}: DELETE deletes durably"
        );
        assert_eq!(
            http("GET", &url),
            (200, "0".into()),
            "{manifest}: the next request meets a new counter"
        );
        if manifest == "examples/wasmkeep.toml" {
            let ts = format!("{}/counter-ts/visits", s.base);
            assert_eq!(
                http("POST", &ts),
                (200, "1".into()),
                "the TypeScript counter is served beside it"
            );
            for (class, what) in [("counter-c", "the C counter"), ("counter-py", "the Python counter")] {
                assert_eq!(
                    http("POST", &format!("{}/{class}/visits", s.base)),
                    (200, "1".into()),
                    "{what} is served beside it"
                );
            }
        }
        let (status, metrics) = http("GET", &format!("{}/metrics", s.base));
        assert_eq!(status, 200, "metrics are served");
        assert!(
            metrics.contains("wasmkeep_actor_deletes_total{how=\"self_durable\"} 1"),
            "{metrics}"
        );
    }
}

#[test]
fn account_example_refuses_late_webhooks_after_it_was_closed() {
    common::component("account-rust");
    let s = serve(&repo().join("examples/account-rust/wasmkeep.toml"));
    let url = format!("{}/account/a-17", s.base);
    let hook = format!("{url}/webhook");
    assert_eq!(
        http_body("POST", &hook, "paid"),
        (404, "no such account: open it with PUT / first".into()),
        "a webhook for an account never opened does not create it"
    );
    assert_eq!(
        http_body("PUT", &url, "pro"),
        (200, "open, plan pro".into()),
        "PUT opens"
    );
    assert_eq!(
        http_body("POST", &hook, "paid"),
        (200, "recorded".into()),
        "an open account records webhooks"
    );
    assert_eq!(http("DELETE", &url), (200, "closed".into()), "DELETE closes durably");
    let (status, text) = http_body("POST", &hook, "paid again");
    assert_eq!(status, 410, "a late webhook after the close is refused: {text}");
    assert!(
        text.contains("closed at") && text.contains("DeleteSelfDurable"),
        "the refusal says when and how the account was closed: {text}"
    );
    let (status, _) = http("GET", &url);
    assert_eq!(status, 410, "the refusal left nothing behind: the account stays closed");
}

#[test]
fn a_two_node_cluster_serves_one_actor_from_either_node() {
    common::component("counter-rust");
    let nodes = serve_with(
        &repo().join("examples/counter-rust/wasmkeep.toml"),
        &["--mode", "cluster", "--nodes", "2"],
    );
    let (n1, n2) = (&nodes[0].base, &nodes[1].base);
    assert_ne!(n1, n2, "each node has its own port");
    assert_eq!(
        http("POST", &format!("{n1}/counter/c")),
        (200, "1".into()),
        "node 1 counts"
    );
    assert_eq!(
        http("POST", &format!("{n2}/counter/c")),
        (200, "2".into()),
        "node 2 reaches the same actor (held by node 1)"
    );
    // The answer leaves before the event ends; the event's writes are uploaded at
    // its end. A request queued behind it returns only once that is done.
    assert_eq!(
        http("GET", &format!("{n1}/counter/c")),
        (200, "2".into()),
        "node 1 sees both"
    );
    let (_, info) = http("GET", &format!("{n1}/_shim/cluster"));
    assert!(
        info.contains("node-1") && info.contains("node-2"),
        "both nodes are live: {info}"
    );
    assert_eq!(
        http("POST", &format!("{n1}/_shim/cluster/cut-off")).0,
        200,
        "node 1 can be cut off"
    );
    assert_eq!(
        http("GET", &format!("{n2}/counter/c")),
        (200, "2".into()),
        "node 2 takes the actor over with its data"
    );
    assert_eq!(
        http("DELETE", &format!("{n2}/counter/c")),
        (200, "deleted".into()),
        "and deletes it durably"
    );
    let data_dir = nodes[0]._dir.as_ref().expect("the first node owns the data dir").path();
    let status = |actor: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
            .args(["actor", "status", "--app", "examples/counter", actor, "--data-dir"])
            .arg(data_dir)
            .output()
            .expect("run actor status");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        )
    };
    let (code, text) = status("counter/c");
    assert_eq!(code, Some(0), "actor status answers: {text}");
    assert!(
        text.starts_with("deleted at ") && text.ends_with("(self_durable)"),
        "the reset is positive evidence: {text}"
    );
    assert_eq!(
        status("counter/never"),
        (Some(0), "not deleted".into()),
        "absence is never deleted"
    );
    assert_eq!(
        http("GET", &format!("{n2}/counter/c")),
        (200, "0".into()),
        "the next request meets a new counter"
    );
}

#[test]
fn a_cluster_never_answers_a_200_whose_write_is_lost() {
    // Issue 22: with fail-upload armed, POST answered 2 and the next GET 1.
    // The SDK now keeps the write before it answers (storage.flush).
    common::component("counter-rust");
    let nodes = serve_with(
        &repo().join("examples/counter-rust/wasmkeep.toml"),
        &["--mode", "cluster", "--nodes", "2"],
    );
    let n1 = &nodes[0].base;
    assert_eq!(http("POST", &format!("{n1}/counter/c")), (200, "1".into()));
    let (status, _) = http_body(
        "POST",
        &format!("{n1}/_shim/faults"),
        r#"{"kind": "fail-upload", "count": 1}"#,
    );
    assert_eq!(status, 200, "the fault is armed");
    let (status, text) = http("POST", &format!("{n1}/counter/c"));
    assert_eq!(
        status, 503,
        "the upload failed, so the count is not acknowledged: {text}"
    );
    assert_eq!(
        http("GET", &format!("{n1}/counter/c")),
        (200, "1".into()),
        "nothing acknowledged was lost"
    );
    assert_eq!(
        http("POST", &format!("{n1}/counter/c")),
        (200, "2".into()),
        "a retry counts"
    );
    assert_eq!(http("GET", &format!("{}/counter/c", nodes[1].base)), (200, "2".into()));
}

#[test]
fn actor_delete_through_the_command_line() {
    common::component("counter-rust");
    let nodes = serve_with(
        &repo().join("examples/counter-rust/wasmkeep.toml"),
        &["--mode", "cluster", "--nodes", "2"],
    );
    let (n1, n2) = (&nodes[0].base, &nodes[1].base);
    let data_dir = nodes[0]._dir.as_ref().expect("the first node owns the data dir").path();
    let delete = |actor: &str, extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
            .args(["actor", "delete", "--app", "examples/counter", actor])
            .args(extra)
            .arg("--data-dir")
            .arg(data_dir)
            .output()
            .expect("run actor delete");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).trim().to_owned(),
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        )
    };
    assert_eq!(http("POST", &format!("{n2}/counter/c")), (200, "1".into()), "a counter");
    assert_eq!(http("POST", &format!("{n2}/counter/c")), (200, "2".into()), "counts");
    let (code, out, err) = delete("counter/c", &["--wait", "30"]);
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "Deleted"),
        "the command waits for the outcome and says Deleted: {err}"
    );
    assert_eq!(
        http("GET", &format!("{n1}/counter/c")),
        (200, "0".into()),
        "after Deleted the data never comes back: the next request meets a new counter"
    );
    let (code, out, _) = delete("counter/never", &[]);
    assert_eq!(
        (code, out.as_str()),
        (Some(1), "no such actor"),
        "a mistyped name: no such actor, exit 1"
    );
    let (code, out, _) = delete("counter/c", &["--no-wait"]);
    assert_eq!(code, Some(4), "--no-wait returns at once with exit 4: {out}");
    assert!(
        out.starts_with("requested; the cluster keeps trying until ") && out.contains(" UTC"),
        "and says until when the cluster keeps trying: {out}"
    );
    let (code, _, err) = delete("counter/c", &["--bucket", "/nonexistent-wasmkeep"]);
    assert_eq!(code, Some(2), "no bucket: exit 2");
    assert!(err.contains("no bucket at"), "and says where it looked: {err}");
}

#[test]
fn app_delete_through_the_command_line_then_recreate() {
    common::component("counter-rust");
    let manifest = repo().join("examples/counter-rust/wasmkeep.toml");
    let mut nodes = serve_with(&manifest, &["--mode", "cluster", "--nodes", "2"]);
    let n1 = nodes[0].base.clone();
    assert_eq!(http("POST", &format!("{n1}/counter/c")), (200, "1".into()), "a counter");
    let data_dir = nodes[0]._dir.as_ref().expect("data dir").path().to_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args([
            "app",
            "delete",
            "--app",
            "examples/counter",
            "--wait",
            "30",
            "--data-dir",
        ])
        .arg(&data_dir)
        .output()
        .expect("run app delete");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "app delete succeeds: {stdout}");
    assert!(stdout.contains("Deleted app examples/counter"), "and says so: {stdout}");
    // The nodes stopped by themselves; serve exits with an error.
    let child = nodes[0].child.as_mut().expect("the serve process");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "serve stops after an app delete"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(!status.success(), "serve exits with an error when its app was deleted");
    let serve_again = || common::serve(&manifest, &data_dir).args(["--mode", "cluster", "--nodes", "2"]);
    let (refused, stderr) = common::refused(serve_again());
    assert!(
        !refused.success() && stderr.contains("pass --recreate"),
        "a deleted app is not served again without --recreate: {stderr}"
    );
    let (mut again, base) = serve_again()
        .arg("--recreate")
        .spawn()
        .unwrap_or_else(|e| panic!("serve --recreate: {e}"));
    // Where a user starts: the dashboard's URL, on stderr (issue 58).
    let mut err = BufReader::new(again.stderr.take().expect("stderr"));
    let dashboard = (0..200)
        .map_while(|_| {
            let mut l = String::new();
            err.read_line(&mut l).ok().filter(|n| *n > 0).map(|_| l)
        })
        .find(|l| l.starts_with("dashboard: "));
    assert_eq!(
        dashboard.as_deref().map(str::trim),
        Some(format!("dashboard: {base}/_shim/ui").as_str()),
        "serve prints its dashboard's URL"
    );
    let fresh = http("GET", &format!("{base}/counter/c"));
    // Only the server this test started.
    let _ = again.kill();
    let _ = again.wait();
    assert_eq!(
        fresh,
        (200, "0".into()),
        "--recreate serves the app again, with nothing of before"
    );

    let refuse = |app: &str, extra: Vec<&str>| {
        let out = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
            .args(["app", "delete", "--app", app])
            .args(extra)
            .output()
            .expect("run app delete");
        (
            out.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let (code, text) = refuse("default/default", vec!["--data-dir", data_dir.to_str().expect("utf-8")]);
    assert_eq!(code, Some(1), "the implicit app is refused: {text}");
    assert!(text.contains("refused"), "and says so: {text}");
    let (code, text) = refuse("examples/counter", vec!["--bucket", "/nonexistent-wasmkeep"]);
    assert_eq!(code, Some(2), "no bucket: exit 2: {text}");
    assert!(text.contains("no bucket at"), "and says where it looked: {text}");
}

#[test]
fn serve_stops_in_order_on_sigterm_and_says_stopped_last() {
    common::component("counter-rust");
    let dir = tempfile::tempdir().expect("tempdir");
    let (child, base) = spawn_counter_serve(dir.path());
    assert_eq!(http("POST", &format!("{base}/counter/c")), (200, "1".into()), "serving");
    // Only the server this test started, by its id.
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "SIGTERM sent");
    let out = child.wait_with_output().expect("serve exits");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "serve exits 0 after an ordered shutdown: {stderr}"
    );
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    assert!(
        stderr.contains("stopping") && last.starts_with("stopped (") && last.contains("1 actor(s) released"),
        "\"stopped\" is the last line, with what was released: {stderr}"
    );
}

#[test]
fn a_missing_manifest_is_said_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (status, stderr) = common::refused(common::serve(
        std::path::Path::new("/nonexistent/wasmkeep.toml"),
        &dir.path().join("data"),
    ));
    assert!(!status.success());
    assert_eq!(
        stderr.matches("No such file").count(),
        1,
        "the cause is said once: {stderr}"
    );
}

#[test]
fn serve_refuses_bad_manifests_with_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&str, &str); 3] = [
        (
            "app = \"no-tenant\"\n[classes.c]\ncomponent = \"x.wasm\"\n",
            "must be `tenant/app`",
        ),
        (
            "app = \"a/b\"\n[classes.c]\ncomponent = \"missing.wasm\"\n",
            "does not exist",
        ),
        (
            "app = \"a/b\"\n[classes.c]\ncomponent = \"not-wasm.wasm\"\n",
            "not a WebAssembly file",
        ),
    ];
    std::fs::write(dir.path().join("not-wasm.wasm"), b"hello").expect("write");
    for (text, why) in cases {
        let m = dir.path().join("wasmkeep.toml");
        std::fs::write(&m, text).expect("write manifest");
        let (status, stderr) = common::refused(common::serve(&m, &dir.path().join("data")));
        assert!(!status.success(), "a bad manifest makes serve exit non-zero");
        assert!(stderr.contains(why), "the error says {why:?}: {stderr}");
        if why != "must be `tenant/app`" {
            for build in [
                "wasmkeep-shim build",
                "npx wasmkeep-build",
                "python -m wasmkeep_actor build",
                "sdk-c/mk",
            ] {
                assert!(
                    stderr.contains(build),
                    "it says how each language builds ({build}): {stderr}"
                );
            }
        }
    }
    let (_, stderr) = common::refused(common::serve(&dir.path().join("absent.toml"), &dir.path().join("data")));
    assert!(stderr.contains("cannot read manifest"), "a missing manifest is named");
}

#[test]
fn a_virtual_clock_in_cluster_mode_drives_idle_expiry_and_operator_deletes() {
    common::component("counter-rust");
    let manifest = repo().join("examples/counter-rust/wasmkeep.toml");
    let nodes = serve_with(
        &manifest,
        &[
            "--mode",
            "cluster",
            "--nodes",
            "2",
            "--virtual-clock",
            "--expire-after-idle",
            "counter=1h",
        ],
    );
    let base = &nodes[0].base;
    assert_eq!(
        http("POST", &format!("{base}/counter/idle")).0,
        200,
        "an actor is created"
    );
    assert_eq!(http("POST", &format!("{base}/_shim/hibernate")).0, 200, "and released");
    let advance = |ms: u64| {
        http_body(
            "POST",
            &format!("{base}/_shim/clock/advance"),
            &format!("{{\"ms\": {ms}}}"),
        )
    };
    assert_eq!(advance(90 * 60 * 1000).0, 200, "1 h 30 min of virtual time pass");
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while metric(base, "wasmkeep_actor_deletes_total{how=\"expired\"}") == 0 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        metric(base, "wasmkeep_idle_expiry_candidates_total") >= 1,
        "the expiry pass ran on virtual time and found the idle actor"
    );
    assert_eq!(
        metric(base, "wasmkeep_actor_deletes_total{how=\"expired\"}"),
        1,
        "and collected it"
    );

    // An operator delete's request is carried out once the clock moves (the control pass, every second).
    assert_eq!(http("POST", &format!("{base}/counter/op")).0, 200, "another actor");
    let data_dir = nodes[0]
        ._dir
        .as_ref()
        .expect("the first node owns the data directory")
        .path();
    let mut delete = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args([
            "actor",
            "delete",
            "--app",
            "examples/counter",
            "counter/op",
            "--wait",
            "20",
            "--data-dir",
        ])
        .arg(data_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("actor delete");
    let until = std::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = delete.try_wait().expect("wait") {
            break status;
        }
        assert!(std::time::Instant::now() < until, "actor delete got no outcome");
        advance(1000);
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(0), "the delete is carried out and acknowledged");
    assert_eq!(metric(base, "wasmkeep_actor_deletes_total{how=\"operator\"}"), 1);
}

#[test]
fn a_half_sent_request_does_not_hold_up_the_ordered_shutdown() {
    use std::io::{Read, Write};
    common::component("counter-rust");
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, base) = spawn_counter_serve(dir.path());
    // A client that sends half a request and then nothing.
    let mut slow = std::net::TcpStream::connect(base.trim_start_matches("http://")).expect("connect");
    slow.write_all(b"POST /counter/c HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nabc")
        .expect("half a request");
    std::thread::sleep(Duration::from_millis(200));
    let sent = std::time::Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "SIGTERM sent");
    // Bounded: serve must exit on its own well before this.
    while child.try_wait().expect("wait").is_none() {
        if sent.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("serve did not stop within 30 s of SIGTERM with a half-sent request open");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    assert!(stderr.contains("stopped ("), "stopped is printed: {stderr}");
    assert!(
        sent.elapsed() < Duration::from_secs(15),
        "within the grace period: {:?}",
        sent.elapsed()
    );
}

#[test]
fn a_client_that_does_not_send_its_headers_is_cut_off() {
    use std::io::{Read, Write};
    common::component("counter-rust");
    let manifest = repo().join("examples/counter-rust/wasmkeep.toml");
    let s = serve_with(&manifest, &["--header-read-timeout-ms", "500"]).remove(0);
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut slow = std::net::TcpStream::connect(&addr).expect("connect");
    slow.write_all(b"GET /counter/a HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .expect("half the headers");
    slow.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    let started = std::time::Instant::now();
    let mut buf = Vec::new();
    let _ = slow.read_to_end(&mut buf);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the server closed the connection of a client that never finished its headers ({:?})",
        started.elapsed()
    );
    assert_eq!(
        http("GET", &format!("{}/counter/a", s.base)).0,
        200,
        "others are served"
    );
}

#[test]
fn serve_upgrades_websockets_to_the_chat_example() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    common::component("chat-ts");
    let s = serve(&repo().join("examples/wasmkeep.toml"));
    let ws_url = format!("{}/chat/lobby/?name=ada", s.base.replace("http://", "ws://"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(ws_url)
            .await
            .expect("the upgrade is served");
        let first = tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .expect("an answer in time")
            .expect("a frame")
            .expect("a message");
        assert!(
            first.to_text().unwrap_or_default().contains("history"),
            "the room's history: {first:?}"
        );
        ws.send(Message::text("hello")).await.expect("send");
        let echo = tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .expect("an answer in time")
            .expect("a frame")
            .expect("a message");
        assert!(
            echo.to_text().unwrap_or_default().contains("hello"),
            "the message comes back: {echo:?}"
        );
    });
}
