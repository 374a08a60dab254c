//! `serve --watch`: when a file a class watches changes, its `build` command
//! runs, and the new component replaces the old one on every node
//! (`Runtime::reload_class`): each actor meets it at its next event, with its
//! database, alarm and open sockets as they were. A failed build or a
//! component that does not load keeps the old one and says why. One line per
//! reload. File events come from `notify`, the watcher cargo-watch and
//! watchexec use.

use anyhow::{Context as _, Result};
use notify::{RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wasmkeep_shim::{ClassBuild, ClassSpec, Manifest, Runtime};

/// Directories whose changes are build outputs, caches or data, never sources.
const IGNORED_DIRS: &[&str] = &[
    ".git",
    ".wasmkeep",
    "target",
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
];

/// How long after a change the build starts: an editor's save is several events.
const SETTLE: Duration = Duration::from_millis(300);

/// Starts watching every class of `manifest` that has a `build`; returns
/// the watcher, which must live as long as the server.
///
/// # Errors
/// No class has a `build`, or a watched path cannot be watched.
pub(crate) fn start(
    manifest: &Manifest,
    runtimes: Vec<Runtime>,
    data_dir: &Path,
) -> Result<notify::RecommendedWatcher> {
    anyhow::ensure!(
        !manifest.builds.is_empty(),
        "--watch needs a class with `build = \"<command>\"` in the manifest (and `watch = [\"src\"]`, \
         what to watch; default: the manifest's directory), e.g. build = \"npm run build\""
    );
    let (tx, rx) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(tx).context("starting the file watcher")?;
    for build in manifest.builds.values() {
        for path in &build.watch {
            watcher
                .watch(path, RecursiveMode::Recursive)
                .with_context(|| format!("watching {}", path.display()))?;
        }
    }
    let classes: Vec<(ClassSpec, ClassBuild)> = manifest
        .classes
        .iter()
        .filter_map(|c| manifest.builds.get(&c.name).map(|b| (c.clone(), b.clone())))
        .collect();
    for (c, b) in &classes {
        eprintln!(
            "watch: class {} rebuilds with `{}` when {} change",
            c.name,
            b.command,
            shown(&b.watch)
        );
    }
    let app = manifest.app.clone();
    let data_dir = std::path::absolute(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    std::thread::Builder::new()
        .name("watch".into())
        .spawn(move || run(&rx, &app, &classes, &runtimes, &data_dir))
        .context("starting the watch thread")?;
    Ok(watcher)
}

fn shown(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

type Events = mpsc::Receiver<notify::Result<notify::Event>>;

fn run(rx: &Events, app: &str, classes: &[(ClassSpec, ClassBuild)], runtimes: &[Runtime], data_dir: &Path) {
    while let Ok(first) = rx.recv() {
        let mut changed = BTreeSet::new();
        collect(first, &mut changed, data_dir);
        // Let the burst of one save settle, then take all of it.
        let until = Instant::now() + SETTLE;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(ev) => collect(ev, &mut changed, data_dir),
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
        for (spec, build) in classes {
            let touched = changed
                .iter()
                .filter(|p| **p != spec.component && build.watch.iter().any(|w| p.starts_with(w)))
                .count();
            if touched > 0 {
                reload(app, spec, build, runtimes);
            }
        }
        // What the builds wrote is their own output, not a new change.
        while rx.try_recv().is_ok() {}
    }
}

/// The source paths of one event: build outputs, caches, data and
/// components are left out.
fn collect(ev: notify::Result<notify::Event>, into: &mut BTreeSet<PathBuf>, data_dir: &Path) {
    let Ok(ev) = ev else { return };
    if matches!(ev.kind, notify::EventKind::Access(_)) {
        return;
    }
    for p in ev.paths {
        let ignored = p.starts_with(data_dir)
            || p.extension().is_some_and(|e| e == "wasm")
            || p.components().any(|c| IGNORED_DIRS.iter().any(|d| c.as_os_str() == *d));
        if !ignored {
            into.insert(p);
        }
    }
}

/// Rebuilds one class and swaps it in on every node, or says why not.
fn reload(app: &str, spec: &ClassSpec, build: &ClassBuild, runtimes: &[Runtime]) {
    let started = Instant::now();
    let spinner = crate::progress::Spinner::start(format!("watch: rebuilding {} (`{}`)", spec.name, build.command));
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&build.command)
        .current_dir(&build.dir)
        .output();
    drop(spinner);
    let built_in = started.elapsed();
    match out {
        Err(e) => {
            eprintln!(
                "watch: class {}: could not run `{}` ({e}); the old component stays",
                spec.name, build.command
            );
            return;
        }
        Ok(o) if !o.status.success() => {
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(20)..];
            eprintln!(
                "watch: class {}: the build failed ({}); the old component stays. Its output:\n{}",
                spec.name,
                o.status,
                tail.join("\n")
            );
            return;
        }
        Ok(_) => {}
    }
    for rt in runtimes {
        if let Err(e) = rt.reload_class(app, spec) {
            eprintln!(
                "watch: class {}: the new component does not load ({e}); the old component stays",
                spec.name
            );
            return;
        }
    }
    eprintln!(
        "watch: reloaded class {} (build {:.1} s, load {:.1} s); its actors meet it at their next event",
        spec.name,
        built_in.as_secs_f64(),
        (started.elapsed() - built_in).as_secs_f64()
    );
}
