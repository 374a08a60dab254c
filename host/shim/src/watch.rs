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
use std::sync::{Arc, Mutex, mpsc};
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

/// The watcher, alive as long as the server: dropping it stops the watching.
pub(crate) struct Watching(Arc<Mutex<Option<notify::RecommendedWatcher>>>);

impl Drop for Watching {
    fn drop(&mut self) {
        // The watch thread's channel closes with the watcher, and the thread ends.
        if let Ok(mut w) = self.0.lock() {
            w.take();
        }
    }
}

/// What the watcher watches, from the classes' `watch` paths (ADR 067).
/// A watched file is matched by its path in its folder, which is watched:
/// a save by rename (`sed -i`, vim, JetBrains' safe write) or a delete and
/// a new file replace the file's inode, and a watch on the inode would be
/// lost with it. A watched folder is watched recursively, and its parent
/// too when that is inside the manifest's directory, so that the folder
/// deleted and made again is watched again.
#[derive(Debug, Default, PartialEq)]
struct Plan {
    /// Folders watched with everything under them: the watched folders.
    recursive: BTreeSet<PathBuf>,
    /// Folders watched for their own entries only: the folders of watched
    /// files, and the parents of watched folders.
    flat: BTreeSet<PathBuf>,
}

impl Plan {
    /// The watched paths of `builds` (absolute): a path that is not a
    /// folder (a file, or nothing yet) is a file.
    fn of<'a>(builds: impl IntoIterator<Item = &'a ClassBuild>) -> Self {
        let mut plan = Self::default();
        let mut parents = BTreeSet::new();
        for build in builds {
            for path in &build.watch {
                let folder = path.is_dir();
                if folder {
                    plan.recursive.insert(path.clone());
                }
                match path.parent() {
                    Some(parent) if !folder || parent.starts_with(&build.dir) => {
                        parents.insert(parent.to_path_buf());
                    }
                    _ => {}
                }
            }
        }
        // A folder under another watched folder is already watched, and a
        // folder watched with all under it needs no watch of its own entries.
        let roots: Vec<PathBuf> = plan.recursive.iter().cloned().collect();
        let covered = |p: &Path, strictly: bool| roots.iter().any(|r| p.starts_with(r) && (!strictly || p != r));
        plan.recursive.retain(|p| !covered(p, true));
        plan.flat = parents.into_iter().filter(|p| !covered(p, false)).collect();
        plan
    }
}

/// Starts watching every class of `manifest` that has a `build`; returns
/// the watcher, which must live as long as the server.
///
/// # Errors
/// No class has a `build`, or a watched path's folder cannot be watched.
pub(crate) fn start(manifest: &Manifest, runtimes: Vec<Runtime>, data_dir: &Path) -> Result<Watching> {
    anyhow::ensure!(
        !manifest.builds.is_empty(),
        "--watch needs a class with `build = \"<command>\"` in the manifest (and `watch = [\"src\"]`, \
         what to watch; default: the manifest's directory), e.g. build = \"npm run build\""
    );
    let classes: Vec<(ClassSpec, ClassBuild)> = manifest
        .classes
        .iter()
        .filter_map(|c| manifest.builds.get(&c.name).map(|b| (c.clone(), absolute_build(b))))
        .collect();
    let plan = Plan::of(classes.iter().map(|(_, b)| b));
    let (tx, rx) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(tx).context("starting the file watcher")?;
    for dir in &plan.recursive {
        watcher
            .watch(dir, RecursiveMode::Recursive)
            .with_context(|| format!("watching {}", dir.display()))?;
    }
    for dir in &plan.flat {
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .with_context(|| format!("watching {}", dir.display()))?;
    }
    for (c, b) in &classes {
        eprintln!(
            "watch: class {} rebuilds with `{}` when {} change",
            c.name,
            b.command,
            shown(&b.watch)
        );
    }
    let app = manifest.app.clone();
    let data_dir = absolute(data_dir);
    let watcher = Arc::new(Mutex::new(Some(watcher)));
    let watching = Watching(Arc::clone(&watcher));
    let folders = plan.recursive;
    std::thread::Builder::new()
        .name("watch".into())
        .spawn(move || {
            let watch = Watch {
                app,
                classes,
                data_dir,
                folders,
                watcher,
            };
            watch.run(&rx, &runtimes);
        })
        .context("starting the watch thread")?;
    Ok(watching)
}

/// `build` with its paths absolute, as the watcher's events name them (not
/// resolved through links: the events name the paths watched).
fn absolute_build(build: &ClassBuild) -> ClassBuild {
    ClassBuild {
        command: build.command.clone(),
        dir: absolute(&build.dir),
        watch: build.watch.iter().map(|p| absolute(p)).collect(),
    }
}

/// `path` absolute; the empty path (a manifest in the working directory's
/// own folder) is the working directory.
fn absolute(path: &Path) -> PathBuf {
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn shown(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

type Events = mpsc::Receiver<notify::Result<notify::Event>>;

/// The watch thread's state.
struct Watch {
    app: String,
    classes: Vec<(ClassSpec, ClassBuild)>,
    data_dir: PathBuf,
    /// The watched folders, watched again when one is made again.
    folders: BTreeSet<PathBuf>,
    watcher: Arc<Mutex<Option<notify::RecommendedWatcher>>>,
}

impl Watch {
    fn run(&self, rx: &Events, runtimes: &[Runtime]) {
        while let Ok(first) = rx.recv() {
            let mut changed = BTreeSet::new();
            self.collect(first, &mut changed);
            // Let the burst of one save settle, then take all of it.
            let until = Instant::now() + SETTLE;
            while let Some(left) = until.checked_duration_since(Instant::now()) {
                match rx.recv_timeout(left) {
                    Ok(ev) => self.collect(ev, &mut changed),
                    Err(mpsc::RecvTimeoutError::Timeout) => break,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
            self.watch_again(&changed);
            for (spec, build) in &self.classes {
                if changed.iter().any(|p| starts_build(p, &self.data_dir, spec, build)) {
                    reload(&self.app, spec, build, runtimes);
                }
            }
            // What the builds wrote is their own output, not a new change.
            while rx.try_recv().is_ok() {}
        }
    }

    /// The paths of one event, but for reads.
    fn collect(&self, ev: notify::Result<notify::Event>, into: &mut BTreeSet<PathBuf>) {
        let Ok(ev) = ev else { return };
        if matches!(ev.kind, notify::EventKind::Access(_)) {
            return;
        }
        into.extend(ev.paths);
    }

    /// A watched folder deleted and made again lost its watch with its
    /// inode: watch the new one (its parent's watch saw it made).
    fn watch_again(&self, changed: &BTreeSet<PathBuf>) {
        for dir in self.folders.iter().filter(|d| changed.contains(*d) && d.is_dir()) {
            let Ok(mut watcher) = self.watcher.lock() else { return };
            let Some(watcher) = watcher.as_mut() else { return };
            if let Err(e) = watcher.watch(dir, RecursiveMode::Recursive) {
                eprintln!("watch: {} was made again but cannot be watched: {e}", dir.display());
            }
        }
    }
}

/// Whether a change to `path` rebuilds the class: it is one of its watched
/// paths or under one, and not a build output, a cache, data, a log (`serve
/// --watch > serve.log` in a watched folder would otherwise rebuild at each
/// line it prints) or the component (only the parts of `path` under the watched one are looked at,
/// so that the project may itself live under a folder named `build`).
fn starts_build(path: &Path, data_dir: &Path, spec: &ClassSpec, build: &ClassBuild) -> bool {
    if path.starts_with(data_dir)
        || path.extension().is_some_and(|e| e == "wasm" || e == "log")
        || absolute(&spec.component) == path
    {
        return false;
    }
    build.watch.iter().any(|w| {
        path.strip_prefix(w).is_ok_and(|under| {
            !under
                .components()
                .any(|c| IGNORED_DIRS.iter().any(|d| c.as_os_str() == *d))
        })
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn build(dir: &Path, watch: &[&Path]) -> ClassBuild {
        ClassBuild {
            command: "make".into(),
            dir: dir.to_path_buf(),
            watch: watch.iter().map(|p| p.to_path_buf()).collect(),
        }
    }

    fn set(paths: &[&Path]) -> BTreeSet<PathBuf> {
        paths.iter().map(|p| p.to_path_buf()).collect()
    }

    #[test]
    fn a_file_is_watched_through_its_folder_and_a_folder_with_its_parent() {
        let t = tempfile::tempdir().expect("tempdir");
        let d = t.path();
        std::fs::create_dir_all(d.join("src/inner")).expect("src");
        std::fs::write(d.join("actor.c"), "").expect("actor.c");
        // A file (and one not there yet): its folder, for its own entries.
        let plan = Plan::of([&build(d, &[&d.join("actor.c"), &d.join("actor.h")])]);
        assert_eq!(plan.recursive, set(&[]));
        assert_eq!(plan.flat, set(&[d]));
        // A folder: all under it, and its parent's entries (to see it made again).
        let plan = Plan::of([&build(d, &[&d.join("src")])]);
        assert_eq!(plan.recursive, set(&[&d.join("src")]));
        assert_eq!(plan.flat, set(&[d]));
        // The manifest's own folder: not its parent, outside the project.
        let plan = Plan::of([&build(d, &[&d.join(".")])]);
        assert_eq!(plan.recursive, set(&[d]));
        assert_eq!(plan.flat, set(&[]));
        // What a watched folder holds is watched once, by it.
        let plan = Plan::of([
            &build(d, &[&d.join("src"), &d.join("src/inner"), &d.join("src/inner/a.c")]),
            &build(d, &[&d.join("src/inner")]),
        ]);
        assert_eq!(plan.recursive, set(&[&d.join("src")]));
        assert_eq!(plan.flat, set(&[d]));
    }

    #[test]
    fn only_the_watched_paths_start_a_build_wherever_the_project_is() {
        let d = Path::new("/srv/build/proj");
        let spec = |component: &str| ClassSpec {
            name: "c".into(),
            component: d.join(component),
            access: wasmkeep_shim::Access::Open,
        };
        let data = d.join(".wasmkeep");
        let file = build(d, &[&d.join("actor.c")]);
        let c = spec("actor.wasm");
        assert!(starts_build(&d.join("actor.c"), &data, &c, &file));
        assert!(
            !starts_build(&d.join("actor.h"), &data, &c, &file),
            "a sibling in the folder"
        );
        assert!(!starts_build(&d.join("actor.c.tmp"), &data, &c, &file));
        let folder = build(d, &[&d.join("src")]);
        assert!(starts_build(&d.join("src/a/b.ts"), &data, &c, &folder));
        assert!(!starts_build(&d.join("src/node_modules/x.js"), &data, &c, &folder));
        assert!(!starts_build(
            &d.join("src"),
            &data,
            &c,
            &build(d, &[&d.join("src/a.ts")])
        ));
        let all = build(d, &[d]);
        assert!(!starts_build(&d.join("actor.wasm"), &data, &c, &all));
        assert!(!starts_build(&d.join("serve.log"), &data, &c, &all));
        assert!(!starts_build(&d.join(".wasmkeep/state/x.db"), &data, &c, &all));
        assert!(!starts_build(&d.join("build/actor.o"), &data, &c, &all));
    }
}
