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
    line_with_after(rx, what, "")
}

/// As `line_with`; the failure names `after`, what the test did before.
fn line_with_after(rx: &mpsc::Receiver<String>, what: &str, after: &str) -> String {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(what) => return line,
            Ok(line) => seen.push(line),
            Err(_) => break,
        }
    }
    panic!(
        "no line with {what:?} within 30 s{after}; serve printed:\n{}",
        seen.join("\n")
    );
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
    let (status, stderr) = common::refused(common::serve(&d.join("wasmkeep.toml"), &d.join("data")).arg("--watch"));
    assert!(!status.success(), "serve --watch refuses {text:?}");
    stderr
}

#[test]
fn watch_without_a_build_says_what_to_add() {
    let err = refused_with("app = \"t/w\"\n[classes.c]\ncomponent = \"actor.wasm\"\n");
    assert!(err.contains("--watch needs a class with `build ="), "{err}");
    let err = refused_with("app = \"t/w\"\n[classes.c]\ncomponent = \"actor.wasm\"\nwatch = [\"src\"]\n");
    assert!(err.contains("`watch` needs `build`"), "{err}");
}

/// How an editor or a tool saves a file.
#[derive(Clone, Copy, Debug)]
enum Save {
    /// Truncates the file and writes it again (the same inode).
    InPlace,
    /// Writes a temporary file beside it, then renames it over the file
    /// (`sed -i`, vim's default, JetBrains' safe write): a new inode.
    Rename,
    /// Deletes the file, then writes a new one.
    DeleteThenRecreate,
    /// Deletes the file's folder, then makes it again with the file.
    FolderDeletedThenRecreated,
}

fn save(file: &Path, contents: &str, how: Save) {
    match how {
        Save::InPlace => std::fs::write(file, contents).expect("write in place"),
        Save::Rename => {
            let tmp = file.with_file_name(".save-by-rename.tmp");
            std::fs::write(&tmp, contents).expect("write the temporary file");
            std::fs::rename(&tmp, file).expect("rename over the file");
        }
        Save::DeleteThenRecreate => {
            std::fs::remove_file(file).expect("delete");
            std::thread::sleep(Duration::from_millis(50));
            std::fs::write(file, contents).expect("recreate");
        }
        Save::FolderDeletedThenRecreated => {
            let folder = file.parent().expect("a folder");
            std::fs::remove_dir_all(folder).expect("delete the folder");
            std::thread::sleep(Duration::from_millis(50));
            std::fs::create_dir(folder).expect("make the folder again");
            std::fs::write(file, contents).expect("recreate");
        }
    }
}

/// Which component serves class `c` now, from one request's answer: the
/// counter answers its count, the testee its outcomes.
fn served_by(base: &str) -> &'static str {
    let query = r#"{"ops":[{"op":"query","sql":"SELECT 1"}]}"#;
    let (status, body) = http_body("POST", &format!("{base}/c/a"), query);
    assert_eq!(status, 200, "{body}");
    if body.contains("outcomes") {
        "conformance-testee-rust"
    } else {
        assert!(
            body.parse::<u64>().is_ok(),
            "neither the counter nor the testee: {body}"
        );
        "counter-rust"
    }
}

/// Saves `source` every way an editor does, one after another, each naming
/// the other component: each save must rebuild and serve the new one. The
/// build copies the component whose name the source holds.
fn every_save_rebuilds(manifest_watch: &str, source: &str, extra: &[Save]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let src = d.join(source);
    std::fs::create_dir_all(src.parent().expect("parent")).expect("source dir");
    std::fs::write(&src, "counter-rust").expect("source");
    std::fs::copy(component("counter-rust"), d.join("actor.wasm")).expect("copy");
    let components = component("counter-rust");
    let components = components.parent().expect("components dir");
    write_build(
        d,
        &format!("cp \"{}/$(cat '{source}').wasm\" actor.wasm\n", components.display()),
    );
    std::fs::write(
        d.join("wasmkeep.toml"),
        format!(
            "app = \"t/watch\"\n\
             [classes.c]\ncomponent = \"actor.wasm\"\nbuild = \"sh build.sh\"\nwatch = [{manifest_watch:?}]\n"
        ),
    )
    .expect("manifest");
    let (_server, base, rx) = serve_watching(&d.join("wasmkeep.toml"), &d.join("data"));
    line_with(&rx, "watch: class c rebuilds");
    assert_eq!(served_by(&base), "counter-rust");
    // In place, then by rename, then in place again (the watch must survive the
    // rename), a delete and a recreate, and in place once more.
    let mut saves = vec![
        Save::InPlace,
        Save::Rename,
        Save::InPlace,
        Save::DeleteThenRecreate,
        Save::InPlace,
        Save::Rename,
        Save::Rename,
    ];
    for how in extra {
        saves.extend([*how, Save::InPlace, Save::Rename]);
    }
    let mut now = "counter-rust";
    for (i, how) in saves.into_iter().enumerate() {
        let next = if now == "counter-rust" {
            "conformance-testee-rust"
        } else {
            "counter-rust"
        };
        save(&src, next, how);
        line_with_after(
            &rx,
            "watch: reloaded class c",
            &format!(" after save {i} ({how:?}) of {source} (watch = [{manifest_watch:?}])"),
        );
        assert_eq!(
            served_by(&base),
            next,
            "save {i} ({how:?}) of {source} (watch = [{manifest_watch:?}]) serves the new build"
        );
        now = next;
    }
}

#[test]
fn a_watched_file_rebuilds_after_every_way_of_saving_it() {
    every_save_rebuilds("actor.c", "actor.c", &[]);
}

#[test]
fn a_file_in_a_watched_folder_rebuilds_after_every_way_of_saving_it() {
    every_save_rebuilds("src", "src/actor.c", &[Save::FolderDeletedThenRecreated]);
}
