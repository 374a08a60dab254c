//! The SQL guard (host/runtime/src/actor_db.rs, ADR 004): random statements
//! from a grammar of dangerous pieces (ATTACH/DETACH, VACUUM INTO, every
//! PRAGMA, load_extension, virtual tables, temp objects and triggers, file
//! functions, the host's table, random paths) mixed with random tokens, run
//! by the testee through `exec`, `query` and `exec-durable` on one steady
//! actor, reset now and then.
//!
//! Violations: a file in the data directory that a clean run does not make;
//! any file in the working directory, in a directory outside, or at a path
//! the statements name under the system's temporary directory; the host
//! table's rows or schema changed, or an object on it made, by the guest; a
//! 5xx that is not an ordinary guest failure; a panic (the engine's).
//!
//! The modules, one concern each: `op` (the protocol's operation), `vocabulary` and
//! `grammar` (what is generated), `lifecycle` (directories, clean run, reset),
//! `oracle` (what must hold after an input), `placeholders` (saved inputs
//! across runs) and `target` (the engine's side).

mod grammar;
mod lifecycle;
mod op;
mod oracle;
mod placeholders;
mod target;
mod vocabulary;

pub use op::Op;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use wasmkeep_host::{ActorKey, Runtime};

/// The target.
pub struct SqlGuardTarget {
    rt: Runtime,
    key: ActorKey,
    data: tempfile::TempDir,
    cwd: tempfile::TempDir,
    outside: tempfile::TempDir,
    old_cwd: Option<PathBuf>,
    prefix: String,
    /// Paths the statements name under the system's temporary directory.
    tmp_paths: Vec<PathBuf>,
    /// The SQL string literals of every path the grammar uses.
    path_literals: Vec<String>,
    /// Files a clean run makes in the data directory (relative paths).
    allowed: BTreeSet<String>,
    /// The host table's rows and the objects on it, as the host left them.
    meta: Option<String>,
    /// What the temporary directory held at the start.
    tmp_before: BTreeSet<std::ffi::OsString>,
    execs: u64,
    notes: BTreeMap<&'static str, String>,
}

fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl SqlGuardTarget {
    /// The steady actor's database file.
    pub fn db_path(&self) -> PathBuf {
        self.rt.admin().db_path(&self.key)
    }

    /// Hibernates the steady actor, closing its database: while it is
    /// resident its connection holds the file exclusively (ADR 040).
    pub fn hibernate(&self) {
        self.rt.dev().hibernate_all();
    }
}
