//! The target's directories and runtime: made fresh, learned from a clean
//! run, reset now and then, and put back when the target is dropped.

use super::SqlGuardTarget;
use super::lit;
use super::oracle::files_under;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use wasmkeep_host::ActorKey;

impl SqlGuardTarget {
    /// A runtime over a fresh data directory, a fresh working directory (the
    /// process moves into it until the target is dropped), a directory
    /// outside, and the paths the grammar uses; then a clean run to learn
    /// which files the host itself makes.
    ///
    /// # Errors
    /// The testee is missing or the directories cannot be made.
    pub fn new() -> anyhow::Result<Self> {
        let prefix = format!("wkfuzz-{}-{:08x}", std::process::id(), fastrand::u32(..));
        let data = tempfile::Builder::new().prefix(&format!("{prefix}-data-")).tempdir()?;
        let cwd = tempfile::Builder::new().prefix(&format!("{prefix}-cwd-")).tempdir()?;
        let outside = tempfile::Builder::new()
            .prefix(&format!("{prefix}-outside-"))
            .tempdir()?;
        let rt = crate::testee_runtime(data.path(), std::time::Duration::from_millis(1500))?;
        let key = ActorKey::new(crate::APP, "testee", "steady");
        let old_cwd = std::env::current_dir().ok();
        std::env::set_current_dir(cwd.path())?;
        let tmp = std::env::temp_dir();
        let tmp_paths: Vec<PathBuf> = (0..6).map(|i| tmp.join(format!("{prefix}-f{i}.db"))).collect();
        let own_db = rt.admin().db_path(&key);
        let actor_dir = own_db
            .parent()
            .map_or_else(|| data.path().to_path_buf(), Path::to_path_buf);
        let mut paths: Vec<String> = Vec::new();
        for (i, p) in tmp_paths.iter().enumerate() {
            let p = p.display().to_string();
            paths.push(p.clone());
            paths.push(format!("file:{p}?mode=rwc"));
            paths.push(format!("file://{p}"));
            paths.push(format!("file:{p}?vfs=unix-dotfile"));
            paths.push(format!("../{prefix}-f{i}.db"));
        }
        for i in 0..3 {
            paths.push(outside.path().join(format!("x{i}.db")).display().to_string());
            paths.push(format!("x{i}.db"));
            paths.push(format!("file:x{i}.db?mode=rwc"));
            paths.push(format!("./sub/x{i}.db"));
            paths.push(format!("../x{i}.db"));
            paths.push(actor_dir.join(format!("evil{i}.db")).display().to_string());
        }
        paths.push(data.path().join("host").join("x.db").display().to_string());
        paths.push(data.path().join("x.db").display().to_string());
        paths.push(own_db.display().to_string());
        paths.push(format!("{}-wal", own_db.display()));
        paths.push(format!("file:{}?mode=ro", own_db.display()));
        paths.push(
            actor_dir
                .join("..")
                .join("..")
                .join("..")
                .join("x.db")
                .display()
                .to_string(),
        );
        paths.extend([":memory:", "", "file::memory:?cache=shared", "file:x?mode=memory"].map(String::from));
        let path_literals = paths.iter().map(|p| lit(p)).collect();
        let tmp_before = std::fs::read_dir(&tmp)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        let mut t = Self {
            rt,
            key,
            data,
            cwd,
            outside,
            old_cwd,
            prefix,
            tmp_paths,
            path_literals,
            allowed: BTreeSet::new(),
            meta: None,
            tmp_before,
            execs: 0,
            notes: BTreeMap::new(),
        };
        t.clean_run()?;
        Ok(t)
    }

    /// Ordinary use, a reset and a hibernation: the files the host makes.
    fn clean_run(&mut self) -> anyhow::Result<()> {
        let steps = [
            json!([{"op": "exec", "sql": "CREATE TABLE IF NOT EXISTS t(a, b)"}]),
            json!([{"op": "begin"}, {"op": "exec", "sql": "INSERT INTO t VALUES(1, 'x')"}, {"op": "commit"}]),
            json!([{"op": "exec-durable", "sql": "INSERT INTO t VALUES(?1, ?2)", "params": [{"integer": "2"}, {"text": "y"}]}]),
            json!([{"op": "query", "sql": "SELECT * FROM t"}, {"op": "set-alarm", "in": "1000"}, {"op": "clear-alarm"}]),
            json!([{"op": "delete-self-durable"}]),
            json!([]),
            json!([{"op": "delete-self"}]),
            json!([]),
        ];
        let mut allowed = files_under(self.data.path());
        for ops in steps {
            let (status, body) = crate::send_ops(&self.rt, &self.key, &ops)?;
            anyhow::ensure!(status == 200, "the clean run failed: {status} {body}");
            allowed.extend(files_under(self.data.path()));
        }
        self.rt.dev().hibernate_all();
        allowed.extend(files_under(self.data.path()));
        crate::send_ops(&self.rt, &self.key, &json!([]))?;
        allowed.extend(files_under(self.data.path()));
        let db = self.rt.admin().db_path(&self.key);
        for suffix in ["", "-wal", "-shm", ".deleting", ".deleted"] {
            if let Ok(rel) = Path::new(&format!("{}{suffix}", db.display())).strip_prefix(self.data.path()) {
                allowed.insert(rel.display().to_string());
            }
        }
        self.allowed = allowed;
        self.meta = Some(self.read_meta()?);
        Ok(())
    }

    pub(super) fn reset(&mut self) -> Result<(), String> {
        let r = crate::send_ops(&self.rt, &self.key, &json!([{"op": "delete-self-durable"}]))
            .and_then(|_| crate::send_ops(&self.rt, &self.key, &json!([])));
        match r {
            Ok((200, _)) => {}
            Ok((s, b)) => return Err(format!("the actor did not come back after a reset: {s} {b}")),
            Err(e) => return Err(format!("the actor did not come back after a reset: {e:#}")),
        }
        self.meta = Some(
            self.read_meta()
                .map_err(|e| format!("reading the host table after a reset: {e:#}"))?,
        );
        Ok(())
    }
}

impl Drop for SqlGuardTarget {
    fn drop(&mut self) {
        self.rt.shutdown();
        if let Some(old) = &self.old_cwd {
            let _ = std::env::set_current_dir(old);
        }
        for p in &self.tmp_paths {
            let _ = std::fs::remove_file(p);
        }
    }
}
