//! `serve --watch`: a change under a class's `watch` paths runs its `build`
//! and swaps the new component in. The actors keep their database and their
//! open sockets; a failed build, or a component that does not load, keeps
//! the old one and says why. The "builds" here copy prebuilt components, so
//! the test needs no compiler.

mod common;

use common::{component, http, http_body};
use futures_util::{SinkExt as _, StreamExt as _};
use std::io::BufRead as _;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// The server of a test, stopped when the test ends, passed or not (a
/// failed assertion would otherwise leave it running).
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// serve --watch of `manifest`: the process, its base URL and its stderr lines.
fn serve_watching(manifest: &Path, data: &Path) -> (Server, String, mpsc::Receiver<String>) {
    let (mut child, base) = common::spawn_serve(manifest, data, &["--watch"]);
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (Server(child), base, rx)
}

/// The first stderr line containing `what`, within 30 s.
fn line_with(rx: &mpsc::Receiver<String>, what: &str) -> String {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(what) => return line,
            Ok(line) => seen.push(line),
            Err(_) => break,
        }
    }
    panic!("no line with {what:?} within 30 s; serve printed:\n{}", seen.join("\n"));
}

fn write_build(dir: &Path, script: &str) {
    std::fs::write(dir.join("build.sh"), script).expect("write build.sh");
}

/// Changes a watched file (as an editor's save does).
fn touch_source(dir: &Path, n: u32) {
    std::fs::write(dir.join("src/actor.src"), format!("version {n}\n")).expect("write source");
}

#[test]
fn a_changed_source_swaps_the_component_keeping_state_and_sockets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir(d.join("src")).expect("src");
    touch_source(d, 0);
    std::fs::copy(component("counter-rust"), d.join("actor.wasm")).expect("copy");
    std::fs::copy(component("conformance-testee-rust"), d.join("socket.wasm")).expect("copy");
    std::fs::write(
        d.join("wasmkeep.toml"),
        "app = \"t/watch\"\n\
         [classes.c]\ncomponent = \"actor.wasm\"\nbuild = \"sh build.sh\"\nwatch = [\"src\"]\n\
         [classes.s]\ncomponent = \"socket.wasm\"\n",
    )
    .expect("manifest");
    let (_server, base, rx) = serve_watching(&d.join("wasmkeep.toml"), &d.join("data"));
    line_with(&rx, "watch: class c rebuilds with `sh build.sh`");
    assert_eq!(
        http("POST", &format!("{base}/c/a")),
        (200, "1".into()),
        "the counter counts"
    );

    // An open socket on another actor (the testee echoes).
    let ws_url = format!("{}/s/room", base.replace("http://", "ws://"));
    let tokio_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let mut ws = tokio_rt
        .block_on(tokio_tungstenite::connect_async(&ws_url))
        .expect("websocket connects")
        .0;
    let echo = |ws: &mut tokio_tungstenite::WebSocketStream<_>, text: &str| -> String {
        tokio_rt.block_on(async {
            ws.send(Message::Text(format!("echo:{text}").into()))
                .await
                .expect("send");
            let got = tokio::time::timeout(Duration::from_secs(10), ws.next())
                .await
                .expect("an answer");
            got.expect("message")
                .expect("ok")
                .into_text()
                .expect("text")
                .to_string()
        })
    };
    assert_eq!(echo(&mut ws, "before"), "before");

    // The build turns class c into the testee: the same actor now runs it, on its old database.
    write_build(
        d,
        &format!("cp '{}' actor.wasm\n", component("conformance-testee-rust").display()),
    );
    touch_source(d, 1);
    let line = line_with(&rx, "watch: reloaded class c");
    assert!(line.contains("next event"), "one line per reload: {line}");
    let query = r#"{"ops":[{"op":"query","sql":"SELECT n FROM counter"}]}"#;
    let (status, body) = http_body("POST", &format!("{base}/c/a"), query);
    assert_eq!(status, 200, "the new component answers: {body}");
    assert!(
        body.contains(r#""rows":[[{"integer":"1"}]]"#),
        "the counter's row is still there, read by the new component: {body}"
    );

    // A failed build keeps the component that runs, and says why.
    write_build(d, "echo 'error: the build is broken on purpose' >&2\nexit 3\n");
    touch_source(d, 2);
    let line = line_with(&rx, "the build failed");
    assert!(line.contains("old component stays"), "{line}");
    line_with(&rx, "the build is broken on purpose");
    let (status, body) = http_body("POST", &format!("{base}/c/a"), query);
    assert_eq!(status, 200, "still served by the last good component: {body}");
    assert!(body.contains("outcomes"), "by the testee, not the counter: {body}");

    // A build that writes no component: the old one stays too.
    write_build(d, "echo junk > actor.wasm\n");
    touch_source(d, 3);
    let line = line_with(&rx, "does not load");
    assert!(line.contains("old component stays"), "{line}");
    let (status, _) = http_body("POST", &format!("{base}/c/a"), query);
    assert_eq!(status, 200, "still served");

    assert_eq!(
        echo(&mut ws, "after"),
        "after",
        "the socket opened before the reloads still works"
    );
}

/// What `serve --watch` prints on stderr for a manifest of `text`, when it refuses to start.
fn refused_with(text: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::copy(component("counter-rust"), d.join("actor.wasm")).expect("copy");
    std::fs::write(d.join("wasmkeep.toml"), text).expect("manifest");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(["serve", "--watch", "--listen", "127.0.0.1:0", "--manifest"])
        .arg(d.join("wasmkeep.toml"))
        .arg("--data-dir")
        .arg(d.join("data"))
        .env("WASMKEEP_CACHE_DIR", common::cache_dir())
        .output()
        .expect("run serve");
    assert!(!out.status.success(), "serve --watch refuses {text:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn watch_without_a_build_says_what_to_add() {
    let err = refused_with("app = \"t/w\"\n[classes.c]\ncomponent = \"actor.wasm\"\n");
    assert!(err.contains("--watch needs a class with `build ="), "{err}");
    let err = refused_with("app = \"t/w\"\n[classes.c]\ncomponent = \"actor.wasm\"\nwatch = [\"src\"]\n");
    assert!(err.contains("`watch` needs `build`"), "{err}");
}
