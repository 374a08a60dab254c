//! What must hold after an input: no file where the guard forbids one, and
//! the host table as the host left it.

use super::SqlGuardTarget;
use std::collections::BTreeSet;
use std::path::Path;

pub(super) fn files_under(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.insert(rel.display().to_string());
            }
        }
    }
    out
}

impl SqlGuardTarget {
    /// The host table's rows and every object on it or named like it, read
    /// in the actor's mailbox on its connection lent read-only: a resident
    /// actor holds its file exclusively (ADR 040).
    pub(super) fn read_meta(&self) -> anyhow::Result<String> {
        self.rt.admin().read_database(&self.key, read_meta_on)?
    }

    /// Everything that must hold after an input.
    pub(super) fn check_files(&self) -> Result<(), String> {
        let extra: Vec<String> = files_under(self.data.path())
            .difference(&self.allowed)
            .cloned()
            .collect();
        if !extra.is_empty() {
            return Err(format!(
                "files in the data directory that the host does not make: {extra:?}"
            ));
        }
        for (what, dir) in [("working", self.cwd.path()), ("outside", self.outside.path())] {
            let files = files_under(dir);
            if !files.is_empty() {
                return Err(format!("files in the {what} directory {}: {files:?}", dir.display()));
            }
        }
        for p in &self.tmp_paths {
            if p.exists() {
                return Err(format!("{} exists", p.display()));
            }
        }
        // In the temporary directory (the working directory's parent, so
        // `../x.db` lands there): anything of this run's prefix but its own
        // directories, and any new database-like file (other processes make
        // files there too, but not SQLite files at its top).
        let ours = [self.data.path(), self.cwd.path(), self.outside.path()];
        let prefix = self.prefix.to_lowercase();
        for e in std::fs::read_dir(std::env::temp_dir())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_lowercase();
            let db_like = [".db", "-wal", "-shm", "-journal"].iter().any(|x| name.ends_with(x));
            let new_db = db_like && !self.tmp_before.contains(&e.file_name());
            if (name.contains(&prefix) || new_db) && !ours.iter().any(|o| *o == p) {
                return Err(format!("{} exists", p.display()));
            }
        }
        Ok(())
    }
}

fn read_meta_on(conn: &rusqlite::Connection) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut rows = conn.prepare("SELECT key, value FROM main._wasmkeep_meta ORDER BY key")?;
    for r in rows.query_map([], |r| {
        Ok(format!(
            "row {:?}={:?}\n",
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?
        ))
    })? {
        out.push_str(&r?);
    }
    let mut objects = conn.prepare(
        "SELECT type, name, tbl_name, ifnull(sql, '') FROM main.sqlite_schema \
         WHERE lower(tbl_name) = '_wasmkeep_meta' OR lower(name) = '_wasmkeep_meta' ORDER BY name",
    )?;
    for r in objects.query_map([], |r| {
        Ok(format!(
            "object {} {} on {}: {}\n",
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?
        ))
    })? {
        out.push_str(&r?);
    }
    Ok(out)
}
