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

use crate::engine::{Target, Verdict, pick};
use crate::targets::manifest::error_class;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use wasmkeep_host::{ActorKey, Runtime};

/// One operation of the testee protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// `exec`, `query`, `exec-durable`, `begin`, `commit` or `rollback`.
    pub op: String,
    /// The statement (none for the transaction calls).
    pub sql: Option<String>,
    /// Parameters, as protocol values.
    pub params: Option<Vec<Value>>,
}

impl Op {
    fn json(&self) -> Value {
        let mut o = serde_json::Map::new();
        o.insert("op".into(), json!(self.op));
        if let Some(s) = &self.sql {
            o.insert("sql".into(), json!(s));
        }
        if let Some(p) = &self.params {
            o.insert("params".into(), json!(p));
        }
        Value::Object(o)
    }

    fn from_json(v: &Value) -> Option<Self> {
        let op = v.get("op")?.as_str()?.to_owned();
        if !matches!(
            op.as_str(),
            "exec" | "query" | "exec-durable" | "begin" | "commit" | "rollback"
        ) {
            return None;
        }
        Some(Self {
            op,
            sql: v.get("sql").and_then(Value::as_str).map(str::to_owned),
            params: v.get("params").and_then(Value::as_array).cloned(),
        })
    }
}

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

const RESET_EVERY: u64 = 250;

fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn files_under(root: &Path) -> BTreeSet<String> {
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
        let own_db = rt.db_path(&key);
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
        self.rt.hibernate_all();
        allowed.extend(files_under(self.data.path()));
        crate::send_ops(&self.rt, &self.key, &json!([]))?;
        allowed.extend(files_under(self.data.path()));
        let db = self.rt.db_path(&self.key);
        for suffix in ["", "-wal", "-shm", ".deleting", ".deleted"] {
            if let Ok(rel) = Path::new(&format!("{}{suffix}", db.display())).strip_prefix(self.data.path()) {
                allowed.insert(rel.display().to_string());
            }
        }
        self.allowed = allowed;
        self.meta = Some(self.read_meta()?);
        Ok(())
    }

    /// The host table's rows and every object on it or named like it, read
    /// beside the host (read-only) from the actor's database file.
    fn read_meta(&self) -> anyhow::Result<String> {
        use rusqlite::OpenFlags;
        let conn = rusqlite::Connection::open_with_flags(
            self.rt.db_path(&self.key),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
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

    fn note(&mut self, kind: &'static str, example: String) {
        self.notes.entry(kind).or_insert(example);
    }

    fn reset(&mut self) -> Result<(), String> {
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

    /// Everything that must hold after an input.
    fn check_files(&self) -> Result<(), String> {
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

const PRAGMAS: &[&str] = &[
    "analysis_limit",
    "application_id",
    "auto_vacuum",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "case_sensitive_like",
    "cell_size_check",
    "checkpoint_fullfsync",
    "collation_list",
    "compile_options",
    "count_changes",
    "data_store_directory",
    "data_version",
    "database_list",
    "default_cache_size",
    "defer_foreign_keys",
    "empty_result_callbacks",
    "encoding",
    "foreign_key_check",
    "foreign_key_list",
    "foreign_keys",
    "freelist_count",
    "full_column_names",
    "fullfsync",
    "function_list",
    "hard_heap_limit",
    "ignore_check_constraints",
    "incremental_vacuum",
    "index_info",
    "index_list",
    "index_xinfo",
    "integrity_check",
    "journal_mode",
    "journal_size_limit",
    "legacy_alter_table",
    "legacy_file_format",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "module_list",
    "optimize",
    "page_count",
    "page_size",
    "parser_trace",
    "pragma_list",
    "query_only",
    "quick_check",
    "read_uncommitted",
    "recursive_triggers",
    "reverse_unordered_selects",
    "schema_version",
    "secure_delete",
    "short_column_names",
    "shrink_memory",
    "soft_heap_limit",
    "stats",
    "synchronous",
    "table_info",
    "table_list",
    "table_xinfo",
    "temp_store",
    "temp_store_directory",
    "threads",
    "trusted_schema",
    "user_version",
    "wal_autocheckpoint",
    "wal_checkpoint",
    "writable_schema",
    "key",
    "rekey",
    "cipher",
    "vdbe_trace",
    "no_such_pragma",
];

const HOST_NAMES: &[&str] = &[
    "_wasmkeep_meta",
    "main._wasmkeep_meta",
    "temp._wasmkeep_meta",
    "\"_wasmkeep_meta\"",
    "[_wasmkeep_meta]",
    "`_wasmkeep_meta`",
    "_WASMKEEP_META",
    "main.\"_WasmKeep_Meta\"",
    "_wasmkeep_x",
    "_wasmkeep",
    "wasmkeep_meta",
    "sqlite_master",
    "sqlite_schema",
    "sqlite_temp_master",
    "temp.sqlite_schema",
    "sqlite_sequence",
    "sqlite_stat1",
    "sqlite_autoindex__wasmkeep_meta_1",
    "init_log",
];

const TOKENS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "ATTACH",
    "DETACH",
    "DATABASE",
    "AS",
    "VACUUM",
    "INTO",
    "PRAGMA",
    "CREATE",
    "TEMP",
    "TEMPORARY",
    "VIRTUAL",
    "TABLE",
    "VIEW",
    "TRIGGER",
    "INDEX",
    "USING",
    "BEGIN",
    "END",
    "COMMIT",
    "ROLLBACK",
    "SAVEPOINT",
    "RELEASE",
    "INSERT",
    "UPDATE",
    "DELETE",
    "REPLACE",
    "DROP",
    "ALTER",
    "RENAME",
    "TO",
    "ADD",
    "COLUMN",
    "WITH",
    "RECURSIVE",
    "VALUES",
    "ON",
    "AFTER",
    "BEFORE",
    "INSTEAD",
    "OF",
    "main",
    "temp",
    "x",
    "t",
    "*",
    "(",
    ")",
    ",",
    ";",
    "=",
    "||",
    "'",
    "\"",
    "[",
    "]",
    "`",
    "--",
    "/*",
    "*/",
    "\n",
    "?1",
    "?",
    ":a",
    "@a",
    "$a",
    "1",
    "0x1",
    "-1",
    "9e999",
    "NULL",
    "x'00'",
    "load_extension",
    "writefile",
    "readfile",
    "sqlite_dbpage",
];

fn ident() -> BoxedStrategy<String> {
    prop_oneof![
        3 => pick(vec!["x", "t", "v", "aux", "m", "\"a b\"", "[x]", "`x`", "wasmkeep_exec", "s"]).prop_map(String::from),
        2 => pick(HOST_NAMES.to_vec()).prop_map(String::from),
        1 => proptest::string::string_regex("[a-z_]{1,8}").expect("regex"),
    ]
    .boxed()
}

/// A statement from the grammar of dangerous pieces.
fn statement(paths: Vec<String>) -> BoxedStrategy<String> {
    let path = pick(paths);
    let host = pick(HOST_NAMES.to_vec()).prop_map(String::from);
    let pragma = pick(PRAGMAS.to_vec());
    let pragma_value = pick(vec![
        "",
        "= ON",
        "= OFF",
        "= 0",
        "= 1",
        "= -1",
        "= 4096",
        "= 'wal'",
        "= DELETE",
        "= MEMORY",
        "= OFF",
        "= TRUNCATE",
        "= PERSIST",
        "= EXCLUSIVE",
        "= FULL",
        "= 2147483648",
        "(1)",
        "('_wasmkeep_meta')",
        "('t')",
        "(x)",
        "= 'x'",
    ]);
    let attach = (
        path.clone(),
        ident(),
        pick(vec!["ATTACH", "ATTACH DATABASE", "attach database", "AtTaCh"]),
    )
        .prop_map(|(p, i, kw)| format!("{kw} {p} AS {i}"));
    let attach_expr = (path.clone(), ident()).prop_map(|(p, i)| {
        let e = match p.len() % 4 {
            0 => format!("{p} || ''"),
            1 => format!("(SELECT {p})"),
            2 => format!("printf('%s', {p})"),
            _ => "?1".to_owned(),
        };
        format!("ATTACH {e} AS {i}")
    });
    let detach = (ident(), pick(vec!["DETACH", "DETACH DATABASE"])).prop_map(|(i, kw)| format!("{kw} {i}"));
    let vacuum = (
        proptest::option::of(path.clone()),
        pick(vec![
            "VACUUM",
            "vacuum",
            "VaCuUm",
            "/*x*/VACUUM",
            "-- c\nVACUUM",
            "VACUUM main",
            "VACUUM temp",
            "VACUUM \"main\"",
            "VACUUM/**/main",
            "\tVACUUM\n",
            "/* ' */ VACUUM",
            "[a]VACUUM",
            "SELECT 1; VACUUM",
        ]),
        pick(vec!["INTO", "into", "/**/INTO", "\nINTO\n", "-- x\nINTO"]),
    )
        .prop_map(|(p, v, into)| match p {
            Some(p) => format!("{v} {into} {p}"),
            None => v.to_owned(),
        });
    let pragma_stmt = (
        pragma.clone(),
        pragma_value,
        pick(vec!["", "main.", "temp.", "aux.", "\"main\"."]),
    )
        .prop_map(|(p, v, schema)| format!("PRAGMA {schema}{p} {v}"));
    let pragma_fn = (
        pragma,
        pick(vec!["", "('t')", "('_wasmkeep_meta')", "(1)", "('main')", "('wal')"]),
    )
        .prop_map(|(p, a)| format!("SELECT * FROM pragma_{p}{a}"));
    let load = (
        path.clone(),
        proptest::option::of(pick(vec!["'sqlite3_extension_init'", "'x'", "NULL"])),
    )
        .prop_map(|(p, e)| match e {
            Some(e) => format!("SELECT load_extension({p}, {e})"),
            None => format!("SELECT load_extension({p})"),
        });
    let vtab = (
        pick(vec!["", "temp.", "main.", "aux."]),
        ident(),
        pick(vec![
            "fts5(a)",
            "fts5(key, value, content='_wasmkeep_meta')",
            "fts4(a)",
            "fts3(a)",
            "rtree(id, a, b)",
            "rtree_i32(id, a, b)",
            "geopoly(a)",
            "dbstat",
            "sqlite_dbpage",
            "json_each",
            "csv(filename='x.csv')",
            "zipfile('x.zip')",
            "fsdir",
            "fts5vocab(main, t, row)",
            "unknownmod(a)",
            "sqlite_stmt",
        ]),
    )
        .prop_map(|(s, i, m)| format!("CREATE VIRTUAL TABLE {s}{i} USING {m}"));
    let file_fn = (
        path.clone(),
        pick(vec![
            "writefile({p}, 'x')",
            "readfile({p})",
            "edit({p}, 'vi')",
            "fsdir({p})",
            "sqlar_compress({p})",
            "fts3_tokenizer('simple', x'0000000000000000')",
            "fts3_tokenizer('x')",
            "sqlite_compileoption_get(0)",
            "zeroblob(100000000)",
            "randomblob(70000000)",
            "sqlite_offset(1)",
            "unlikely({p})",
            "shell({p})",
            "sqlite_source_id()",
            "json({p})",
            "char(0)",
        ]),
        pick(vec![
            "SELECT {f}",
            "SELECT * FROM {f}",
            "INSERT INTO t SELECT {f}, 1",
            "SELECT {f} FROM t",
        ]),
    )
        .prop_map(|(p, f, shape)| shape.replace("{f}", &f.replace("{p}", &p)));
    let raw_pages = pick(vec![
        "SELECT * FROM sqlite_dbpage",
        "SELECT pgno, hex(data) FROM sqlite_dbpage('main')",
        "INSERT INTO sqlite_dbpage VALUES(2, zeroblob(4096))",
        "UPDATE sqlite_dbpage SET data = zeroblob(4096) WHERE pgno = 2",
        "DELETE FROM sqlite_dbpage",
        "SELECT * FROM dbstat",
        "SELECT name, pageno FROM dbstat WHERE name = '_wasmkeep_meta'",
    ])
    .prop_map(String::from);
    let temp_objects = (ident(), host.clone(), ident()).prop_flat_map(|(a, h, b)| {
        pick(vec![
            format!("CREATE TEMP TABLE {a}(key, value)"),
            format!("CREATE TEMP TABLE {h}(key TEXT PRIMARY KEY, value TEXT)"),
            format!("CREATE TEMP VIEW {a} AS SELECT * FROM {h}"),
            format!("CREATE TEMP VIEW {h} AS SELECT 1 AS key, 2 AS value"),
            format!("CREATE TEMP TRIGGER {a} AFTER INSERT ON {h} BEGIN DELETE FROM {b}; END"),
            format!("CREATE TEMP TRIGGER {a} BEFORE UPDATE ON {b} BEGIN INSERT INTO {h} VALUES('alarm', '1'); END"),
            format!("CREATE TRIGGER {a} AFTER INSERT ON {h} BEGIN SELECT 1; END"),
            format!("CREATE TRIGGER {a} AFTER INSERT ON {b} BEGIN UPDATE {h} SET value = 'x'; END"),
            format!("CREATE TEMP INDEX {a} ON {h}(value)"),
            format!("CREATE INDEX {a} ON {h}(value)"),
            format!("CREATE INDEX {h} ON {b}(a)"),
            format!("CREATE TRIGGER {h} AFTER INSERT ON {b} BEGIN SELECT 1; END"),
            format!("CREATE VIEW {a} AS SELECT * FROM {h}"),
            format!("CREATE TEMP TABLE {a} AS SELECT * FROM {h}"),
        ])
    });
    let host_rows = (host.clone(), ident()).prop_flat_map(|(h, i)| {
        pick(vec![
            format!("INSERT INTO {h} VALUES('initialized', '0')"),
            format!("INSERT INTO {h}(key, value) VALUES('alarm', '1')"),
            format!("INSERT OR REPLACE INTO {h} VALUES('deleted', '0 self')"),
            format!("REPLACE INTO {h} VALUES('name', 'x')"),
            format!("UPDATE {h} SET value = 'x'"),
            format!("DELETE FROM {h}"),
            format!("DROP TABLE {h}"),
            format!("DROP TABLE IF EXISTS {h}"),
            format!("DROP VIEW {h}"),
            format!("DROP INDEX {h}"),
            format!("DROP TRIGGER {h}"),
            format!("ALTER TABLE {h} RENAME TO {i}"),
            format!("ALTER TABLE {i} RENAME TO {h}"),
            format!("ALTER TABLE {h} ADD COLUMN z"),
            format!("ALTER TABLE {h} RENAME COLUMN value TO v"),
            format!("ALTER TABLE {h} DROP COLUMN value"),
            format!("CREATE TABLE {h}(key, value)"),
            format!("CREATE TABLE IF NOT EXISTS {h}(key, value)"),
            format!("SELECT * FROM {h}"),
            format!("SELECT count(*) FROM {h} WHERE key = 'alarm'"),
            format!("WITH c AS (SELECT * FROM {h}) SELECT * FROM c"),
            format!("INSERT INTO {i} SELECT * FROM {h}"),
            format!("SELECT * FROM {i} JOIN {h}"),
            format!("SELECT (SELECT value FROM {h} LIMIT 1)"),
            format!("UPDATE {i} SET a = (SELECT value FROM {h})"),
            format!("INSERT INTO {h} SELECT 'k' || rowid, 'v' FROM {i}"),
            format!("INSERT INTO {h} VALUES('a', 'b') ON CONFLICT(key) DO UPDATE SET value = 'c'"),
            format!(
                "SELECT * FROM pragma_table_info('{}')",
                h.trim_matches(|c| "\"[]`".contains(c))
            ),
            format!("DELETE FROM {h} RETURNING *"),
        ])
    });
    let schema = pick(vec![
        "PRAGMA writable_schema = ON",
        "UPDATE sqlite_schema SET sql = 'CREATE TABLE _wasmkeep_meta(x)' WHERE name = '_wasmkeep_meta'",
        "DELETE FROM sqlite_master WHERE name = '_wasmkeep_meta'",
        "INSERT INTO sqlite_master VALUES('table', 'z', 'z', 2, 'CREATE TABLE z(a)')",
        "UPDATE sqlite_temp_master SET name = 'x'",
        "SELECT * FROM sqlite_temp_schema",
        "SELECT sql FROM sqlite_schema",
    ])
    .prop_map(String::from);
    let transactions = pick(vec![
        "BEGIN",
        "BEGIN IMMEDIATE",
        "BEGIN EXCLUSIVE",
        "COMMIT",
        "END",
        "ROLLBACK",
        "SAVEPOINT s",
        "RELEASE s",
        "RELEASE wasmkeep_exec",
        "ROLLBACK TO wasmkeep_exec",
        "RELEASE SAVEPOINT wasmkeep_exec",
        "ROLLBACK TRANSACTION",
    ])
    .prop_map(String::from);
    let benign = pick(vec![
        "CREATE TABLE IF NOT EXISTS t(a, b)",
        "CREATE TABLE IF NOT EXISTS x(a INTEGER PRIMARY KEY, b TEXT)",
        "INSERT INTO t VALUES(1, 2)",
        "INSERT INTO t SELECT a, b FROM t LIMIT 100",
        "SELECT * FROM t",
        "DELETE FROM t",
        "DROP TABLE IF EXISTS t",
        "CREATE INDEX IF NOT EXISTS ti ON t(a)",
        "SELECT count(*) FROM init_log",
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 1000) SELECT sum(n) FROM c",
    ])
    .prop_map(String::from);
    let tokens = proptest::collection::vec(
        prop_oneof![
            4 => pick(TOKENS.to_vec()).prop_map(String::from),
            1 => path,
            1 => host,
            1 => proptest::string::string_regex("[a-z0-9_'\"()*,;.= ]{1,6}").expect("regex"),
        ],
        1..12,
    )
    .prop_map(|t| t.join(" "));
    prop_oneof![
        3 => attach,
        1 => attach_expr,
        1 => detach,
        3 => vacuum,
        3 => pragma_stmt,
        2 => pragma_fn,
        1 => load,
        2 => vtab,
        2 => file_fn,
        1 => raw_pages,
        3 => temp_objects,
        4 => host_rows,
        1 => schema,
        1 => transactions,
        2 => benign,
        2 => tokens,
    ]
    .boxed()
}

/// Flips the case of letters outside quotes (paths keep theirs).
fn recase(sql: &str, how: u8) -> String {
    if how == 0 {
        return sql.to_owned();
    }
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    for (i, c) in sql.chars().enumerate() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(c);
            }
            Some(_) => out.push(c),
            None if matches!(c, '\'' | '"' | '`' | '[') => {
                quote = Some(if c == '[' { ']' } else { c });
                out.push(c);
            }
            None => out.push(match how {
                1 => c.to_ascii_lowercase(),
                2 => c.to_ascii_uppercase(),
                _ if i % 2 == 0 => c.to_ascii_lowercase(),
                _ => c.to_ascii_uppercase(),
            }),
        }
    }
    out
}

fn op(paths: Vec<String>) -> BoxedStrategy<Op> {
    let stmts = (
        proptest::collection::vec(statement(paths.clone()), 1..4),
        pick(vec!["; ", ";\n", " ; /* c */ ", ";-- c\n", "\n;\n"]),
        0u8..4,
    )
        .prop_map(|(s, sep, how)| recase(&s.join(sep), how));
    let params = proptest::option::weighted(
        0.15,
        proptest::collection::vec(
            prop_oneof![
                pick(paths).prop_map(|p| json!({"text": p.trim_matches('\'').replace("''", "'")})),
                Just(json!({"null": true})),
                Just(json!({"integer": "1"})),
                Just(json!({"blob": "00ff"})),
            ],
            1..3,
        ),
    );
    prop_oneof![
        10 => (pick(vec!["exec", "query", "exec-durable"]), stmts, params).prop_map(|(o, s, p)| Op {
            op: o.into(),
            sql: Some(s),
            params: p,
        }),
        1 => pick(vec!["begin", "commit", "rollback"]).prop_map(|o| Op {
            op: o.into(),
            sql: None,
            params: None,
        }),
    ]
    .boxed()
}

/// The guest's view of objects named like the host's, in `main` and `temp`.
const PROBE: &str = "SELECT 'main', type, name, tbl_name FROM main.sqlite_schema \
     WHERE lower(name) LIKE '\\_wasmkeep%' ESCAPE '\\' OR lower(tbl_name) LIKE '\\_wasmkeep%' ESCAPE '\\' \
     UNION ALL SELECT 'temp', type, name, tbl_name FROM temp.sqlite_schema \
     WHERE lower(name) LIKE '\\_wasmkeep%' ESCAPE '\\' OR lower(tbl_name) LIKE '\\_wasmkeep%' ESCAPE '\\'";

fn outcome_class(op: &str, outcome: &Value) -> String {
    if outcome.get("ok").is_some() {
        return format!("{op}: ok");
    }
    let err = &outcome["err"];
    let kind = err["kind"].as_str().unwrap_or("?");
    let message = err["message"].as_str().unwrap_or("");
    // What kind of refusal, not which name: the text before a colon, a few words.
    let head = message.split(':').next().unwrap_or("");
    let head = if head.starts_with("near ") {
        "syntax error"
    } else {
        head
    };
    let words: Vec<String> = error_class(head)
        .split_whitespace()
        .filter(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .take(6)
        .map(str::to_owned)
        .collect();
    match err.get("code") {
        Some(code) => format!("{op}: {kind} {code} {}", words.join(" ")),
        None => format!("{op}: {kind} {}", words.join(" ")),
    }
}

impl Target for SqlGuardTarget {
    type Input = Vec<Op>;

    fn name(&self) -> &'static str {
        "sql_guard"
    }

    fn strategy(&self) -> BoxedStrategy<Vec<Op>> {
        proptest::collection::vec(op(self.path_literals.clone()), 1..6).boxed()
    }

    fn encode(&self, input: &Vec<Op>) -> Vec<u8> {
        // Paths of this run are written with placeholders, so that a saved
        // input replays against the next run's directories.
        let text =
            serde_json::to_string_pretty(&Value::Array(input.iter().map(Op::json).collect())).unwrap_or_default();
        self.placeholders(&text).into_bytes()
    }

    fn decode(&self, bytes: &[u8]) -> Option<Vec<Op>> {
        let text = self.expand(std::str::from_utf8(bytes).ok()?);
        let v: Value = serde_json::from_str(&text).ok()?;
        v.as_array()?.iter().map(Op::from_json).collect()
    }

    fn seeds(&self) -> Vec<Vec<Op>> {
        let e = |sql: &str| Op {
            op: "exec".into(),
            sql: Some(sql.to_owned()),
            params: None,
        };
        let tmp0 = lit(&self.tmp_paths[0].display().to_string());
        vec![
            vec![e(&format!("ATTACH {tmp0} AS x"))],
            vec![e(&format!("VACUUM INTO {tmp0}"))],
            vec![e("VACUUM INTO 'x0.db'")],
            vec![e("PRAGMA journal_mode = DELETE")],
            vec![e("CREATE TABLE q(a); ALTER TABLE q RENAME TO _wasmkeep_q")],
            vec![e("CREATE TEMP TABLE q(a); ALTER TABLE temp.q RENAME TO _wasmkeep_meta")],
            vec![e("DELETE FROM _wasmkeep_meta")],
            vec![e("SELECT load_extension('/nonexistent')")],
            vec![
                e("CREATE VIRTUAL TABLE f USING fts5(key, value, content='_wasmkeep_meta')"),
                e("INSERT INTO f(f) VALUES('rebuild')"),
            ],
            vec![e("UPDATE sqlite_dbpage SET data = zeroblob(4096) WHERE pgno = 2")],
        ]
    }

    fn run(&mut self, input: &Vec<Op>) -> Verdict {
        self.execs += 1;
        if self.execs % RESET_EVERY == 0
            && let Err(why) = self.reset()
        {
            return Verdict::Fail(why);
        }
        let mut ops: Vec<Value> = input.iter().map(Op::json).collect();
        ops.push(json!({"op": "query", "sql": PROBE}));
        let (status, body) = match crate::send_ops(&self.rt, &self.key, &Value::Array(ops)) {
            Ok(r) => r,
            Err(e) => return Verdict::Fail(format!("the runtime refused the request: {e:#}")),
        };
        let mut classes = BTreeSet::new();
        if status == 200 {
            let Ok(v) = serde_json::from_str::<Value>(&body) else {
                return Verdict::Fail(format!("the testee's answer is not JSON: {body}"));
            };
            let outcomes = v["outcomes"].as_array().cloned().unwrap_or_default();
            for (op, outcome) in input.iter().zip(&outcomes) {
                classes.insert(outcome_class(&op.op, outcome));
            }
            if let Some(probe) = outcomes.get(input.len()) {
                let rows = probe["ok"]["rows"].as_array().cloned().unwrap_or_default();
                let cell = |row: &Value, i: usize| row[i]["text"].as_str().unwrap_or("").to_owned();
                // A temp table of the host table's name (made by a rename) is
                // not the host's: what is on it is harmless (the host writes main.).
                let temp_namesake = rows.iter().any(|r| {
                    cell(r, 0) == "temp" && cell(r, 1) == "table" && cell(r, 2).eq_ignore_ascii_case("_wasmkeep_meta")
                });
                for row in &rows {
                    let (schema, kind, name, on) = (cell(row, 0), cell(row, 1), cell(row, 2), cell(row, 3));
                    let hosts_own =
                        schema == "main" && (name == "_wasmkeep_meta" || name == "sqlite_autoindex__wasmkeep_meta_1");
                    if hosts_own {
                        continue;
                    }
                    let on_host_table = on.eq_ignore_ascii_case("_wasmkeep_meta")
                        && !(kind == "table" && name.eq_ignore_ascii_case("_wasmkeep_meta"))
                        && (schema == "main" || !temp_namesake);
                    if on_host_table {
                        return Verdict::Fail(format!(
                            "the guest made {schema} {kind} {name} on the host's table (it would run when the host writes)"
                        ));
                    }
                    let sqls: Vec<&str> = input.iter().filter_map(|o| o.sql.as_deref()).collect();
                    let example: String = format!("{schema} {kind} {name} after {sqls:?}")
                        .chars()
                        .take(400)
                        .collect();
                    self.note(
                        "the guest made an object named like the host's (_wasmkeep…), which the guard refuses to \
                         create by that name; the admin API's tables listing hides such tables",
                        example,
                    );
                }
            }
        } else if crate::ordinary_guest_failure(status, &body) {
            classes.insert(format!(
                "event: {}",
                error_class(&body).chars().take(40).collect::<String>()
            ));
        } else {
            return Verdict::Fail(format!("the host answered {status}: {body}"));
        }
        if let Err(why) = self.check_files() {
            return Verdict::Fail(why);
        }
        match self.read_meta() {
            Ok(meta) if Some(&meta) == self.meta.as_ref() => {}
            Ok(meta) => {
                return Verdict::Fail(format!(
                    "the host table changed: before\n{}after\n{meta}",
                    self.meta.clone().unwrap_or_default()
                ));
            }
            Err(e) => return Verdict::Fail(format!("the host table cannot be read: {e:#}")),
        }
        Verdict::Pass(classes.into_iter().collect::<Vec<_>>().join("\n"))
    }

    fn notes(&self) -> Vec<String> {
        self.notes
            .iter()
            .map(|(kind, example)| format!("{kind} (e.g. {example})"))
            .collect()
    }
}

impl SqlGuardTarget {
    /// The steady actor's database file.
    pub fn db_path(&self) -> PathBuf {
        self.rt.db_path(&self.key)
    }

    fn replacements(&self) -> Vec<(String, &'static str)> {
        let own = self.rt.db_path(&self.key);
        let tmp = std::env::temp_dir().display().to_string();
        vec![
            (own.display().to_string(), "{OWN_DB}"),
            (self.data.path().display().to_string(), "{DATA}"),
            (self.cwd.path().display().to_string(), "{CWD}"),
            (self.outside.path().display().to_string(), "{OUTSIDE}"),
            (
                format!("{}/{}", tmp.trim_end_matches('/'), self.prefix),
                "{TMP}/{PREFIX}",
            ),
            (self.prefix.clone(), "{PREFIX}"),
        ]
    }

    fn placeholders(&self, text: &str) -> String {
        let mut t = text.to_owned();
        for (real, ph) in self.replacements() {
            t = t.replace(&real, ph);
        }
        t
    }

    fn expand(&self, text: &str) -> String {
        let mut t = text.to_owned();
        for (real, ph) in self.replacements() {
            t = t.replace(ph, &real);
        }
        t
    }
}
