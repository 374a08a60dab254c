//! The `serve` processes the example tests start (by the testing crate's
//! spawner, `wasmkeep_host_testing::served`), and the repository their
//! manifests are in.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Child;

/// The repository root, which the example manifests' paths start from.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One node of a `serve` process: the first of a process owns the process
/// (stopped on drop) and its data directory; the others only name a port.
pub struct Served {
    pub child: Option<Child>,
    pub base: String,
    pub _dir: Option<tempfile::TempDir>,
}

impl Drop for Served {
    fn drop(&mut self) {
        // Only the server this test started.
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn serve(manifest: &Path) -> Served {
    serve_with(manifest, &[]).remove(0)
}

/// Starts `serve` with extra arguments, its stderr to nowhere; one
/// `Served` per node (they share the process).
pub fn serve_with(manifest: &Path, extra: &[&str]) -> Vec<Served> {
    let dir = tempfile::tempdir().expect("tempdir");
    let nodes = extra
        .iter()
        .position(|a| *a == "--nodes")
        .map_or(1, |i| extra[i + 1].parse().expect("nodes"));
    let (child, bases) = common::serve(manifest, dir.path())
        .args(extra)
        .quiet()
        .spawn_nodes(nodes)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    let mut child = Some(child);
    let mut dir = Some(dir);
    for base in bases {
        // The first Served owns the process and the directory; the others only name a port.
        out.push(Served {
            child: child.take(),
            base,
            _dir: dir.take(),
        });
    }
    out
}

/// `serve` of the Rust counter with its stderr kept, in `data_dir`: the
/// process (to signal, by its id only) and its base URL.
pub fn spawn_counter_serve(data_dir: &Path) -> (Child, String) {
    common::spawn_serve(&repo().join("examples/counter-rust/wasmkeep.toml"), data_dir, &[])
}
