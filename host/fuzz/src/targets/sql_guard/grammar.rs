//! The grammar of dangerous pieces: statements, their casing, and the
//! operations that carry them to the testee.

use super::Op;
use super::vocabulary::{HOST_NAMES, PRAGMAS, TOKENS};
use crate::engine::pick;
use proptest::prelude::*;
use serde_json::json;

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

pub(super) fn op(paths: Vec<String>) -> BoxedStrategy<Op> {
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
