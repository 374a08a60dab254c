//! The actor database's own tests: the guard, the transactions, the host's table and the dump.

use super::*;

fn db() -> (tempfile::TempDir, ActorDb) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = ActorDb::open(&dir.path().join("a.db")).expect("open");
    (dir, db)
}

#[test]
fn a_database_from_before_keeps_its_host_rows_in_a_table_without_rowid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.db");
    let old = Connection::open(&path).expect("open");
    old.execute_batch(&format!(
        "CREATE TABLE {META_TABLE}(key TEXT PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO {META_TABLE} VALUES ('{META_INITIALIZED}', '1');"
    ))
    .expect("old schema");
    drop(old);
    let db = ActorDb::open(&path).expect("open");
    assert_eq!(db.meta_get(META_INITIALIZED).expect("get").as_deref(), Some("1"));
    let sql: String = db
        .conn
        .query_row("SELECT sql FROM sqlite_schema WHERE name = ?1", [META_TABLE], |r| {
            r.get(0)
        })
        .expect("schema");
    assert!(sql.contains("WITHOUT ROWID"), "{sql}");
}

#[test]
fn the_host_table_answers_whether_it_has_rowids_from_the_schema_read_at_open() {
    let conn = Connection::open_in_memory().expect("open");
    conn.execute_batch(&format!(
        "CREATE TABLE {META_TABLE}(key TEXT PRIMARY KEY, value TEXT NOT NULL)"
    ))
    .expect("old schema");
    assert!(host_table::meta_has_rowid(&conn), "the table from before has rowids");
    let (_d, db) = db();
    assert!(!host_table::meta_has_rowid(&db.conn), "the host's table has none");
    // A guest's table of the same shape with rowids is not the host's.
    db.conn
        .execute_batch("CREATE TABLE t(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        .expect("guest table");
    assert!(!host_table::meta_has_rowid(&db.conn));
}

#[test]
fn a_host_write_leaves_the_guests_total_changes_as_it_was() {
    let (_d, db) = db();
    let total = |db: &ActorDb| db.query("SELECT total_changes()", &[]).expect("query").rows;
    db.exec("CREATE TABLE t(x)", &[]).expect("create");
    db.exec("INSERT INTO t VALUES (1), (2), (3)", &[]).expect("insert");
    db.meta_set("alarm", Some("1000")).expect("meta");
    assert_eq!(total(&db), vec![vec![SqlValue::Integer(3)]], "the host's row left out");
    db.exec("UPDATE t SET x = x + 1 WHERE x < 3", &[]).expect("update");
    db.meta_set("alarm", None).expect("meta");
    db.meta_set("alarm", Some("2000")).expect("meta");
    assert_eq!(total(&db), vec![vec![SqlValue::Integer(5)]], "and its put-back rows");
}

#[test]
fn a_host_write_leaves_the_guests_changes_and_rowid_as_they_were() {
    let (_d, db) = db();
    let read = |db: &ActorDb| {
        db.query("SELECT changes(), last_insert_rowid()", &[])
            .expect("query")
            .rows
    };
    db.exec("CREATE TABLE t(x)", &[]).expect("create");
    db.meta_set("k", Some("v")).expect("meta");
    assert_eq!(
        read(&db),
        vec![vec![SqlValue::Integer(0), SqlValue::Integer(0)]],
        "0 changes put back"
    );
    db.exec("INSERT INTO t VALUES (1), (2)", &[]).expect("insert");
    db.meta_set("k", None).expect("meta");
    db.meta_set("k", Some("w")).expect("meta");
    assert_eq!(
        read(&db),
        vec![vec![SqlValue::Integer(2), SqlValue::Integer(2)]],
        "2 changes put back"
    );
}

#[test]
fn every_value_type_round_trips() {
    let (_d, db) = db();
    let vals = vec![
        SqlValue::Null,
        SqlValue::Integer(i64::MIN),
        SqlValue::Real(1.5),
        SqlValue::Text("ü".into()),
        SqlValue::Blob(vec![0, 255]),
    ];
    let r = db.query("SELECT ?1, ?2, ?3, ?4, ?5", &vals).expect("query");
    assert_eq!(r.rows, vec![vals], "parameters come back as the same sql-values");
}

#[test]
fn statements_reaching_outside_are_not_allowed() {
    let (d, db) = db();
    let outside = d.path().join("other.db");
    for sql in [
        format!("ATTACH '{}' AS x", outside.display()),
        format!("VACUUM INTO '{}'", outside.display()),
        "/* c */ vacuum   into 'x.db'".to_owned(),
        "SELECT load_extension('x')".to_owned(),
        "PRAGMA journal_mode=DELETE".to_owned(),
        "PRAGMA writable_schema=ON".to_owned(),
        "BEGIN".to_owned(),
        "SAVEPOINT s".to_owned(),
        format!("SELECT * FROM {META_TABLE}"),
        format!("DROP TABLE {META_TABLE}"),
    ] {
        let e = db.exec(&sql, &[]).expect_err(&sql);
        assert_eq!(
            e.kind(),
            "not-allowed",
            "{sql} must be refused with not-allowed, got {e}"
        );
    }
    assert!(
        !outside.exists(),
        "no refused statement created a file outside the actor's database"
    );
    db.exec("PRAGMA user_version = 3", &[])
        .expect("harmless pragmas are allowed");
}

#[test]
fn sqlite_failures_carry_the_primary_code() {
    let (_d, db) = db();
    db.exec("CREATE TABLE t(x PRIMARY KEY)", &[]).expect("create");
    db.exec("INSERT INTO t VALUES(?1)", &[SqlValue::Integer(1)])
        .expect("insert");
    let e = db
        .exec("INSERT INTO t VALUES(?1)", &[SqlValue::Integer(1)])
        .expect_err("dup");
    assert!(
        matches!(e, SqlError::Sqlite { code: 19, .. }),
        "a constraint failure is sqlite code 19: {e}"
    );
    let e = db.exec("SELEC 1", &[]).expect_err("syntax");
    assert!(
        matches!(e, SqlError::Sqlite { code: 1, .. }),
        "a syntax error is sqlite code 1: {e}"
    );
}

#[test]
fn transactions_are_tracked() {
    let (_d, db) = db();
    db.exec("CREATE TABLE t(x)", &[]).expect("create");
    db.begin().expect("begin");
    assert_eq!(
        db.begin().expect_err("twice").kind(),
        "not-allowed",
        "begin inside a transaction is refused"
    );
    db.exec("INSERT INTO t VALUES(1)", &[]).expect("insert");
    db.rollback().expect("rollback");
    assert_eq!(
        db.query("SELECT count(*) FROM t", &[]).expect("count").rows[0][0],
        SqlValue::Integer(0),
        "rollback discards the write"
    );
    assert_eq!(
        db.commit().expect_err("no txn").kind(),
        "not-allowed",
        "commit without begin is refused"
    );
}

#[test]
fn meta_is_invisible_to_dump() {
    let (_d, db) = db();
    db.meta_set(META_INITIALIZED, Some("1")).expect("meta");
    db.exec("CREATE TABLE t(x); INSERT INTO t VALUES(1)", &[])
        .expect("batch");
    let tables = db.dump_tables().expect("dump");
    assert_eq!(tables.len(), 1, "the host table is not listed: {tables:?}");
    assert_eq!(
        db.meta_get(META_INITIALIZED).expect("get").as_deref(),
        Some("1"),
        "meta reads back"
    );
}

#[test]
fn a_closed_database_keeps_an_empty_wal_for_the_next_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.db");
    let db = ActorDb::open(&path).expect("open");
    db.conn
        .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (zeroblob(100000));")
        .expect("write");
    db.close().expect("close");
    let wal = std::fs::metadata(dir.path().join("a.db-wal")).expect("the WAL is kept");
    assert_eq!(wal.len(), 0, "the close checkpointed and truncated it");
    assert!(
        !dir.path().join("a.db-shm").exists(),
        "no shm at all: the WAL-index lives in the connection (ADR 040)"
    );
    let db = ActorDb::open(&path).expect("open again");
    let n: i64 = db
        .conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .expect("read");
    assert_eq!(n, 1, "what was written before the close is read after it");
}

/// SQLite checkpoints only past `AUTOCHECKPOINT_PAGES` of WAL (ADR 054).
#[test]
fn a_commit_checkpoints_only_past_ten_thousand_pages_of_wal() {
    let (d, db) = db();
    db.exec("CREATE TABLE t(x)", &[]).expect("create");
    // Each commit adds at least one page to the WAL: past SQLite's default of
    // 1,000 pages, a checkpoint would have run and restarted the WAL.
    for i in 0..1_500 {
        db.exec("INSERT INTO t VALUES (?1)", &[SqlValue::Integer(i)])
            .expect("insert");
    }
    let frames: i64 = db
        .conn
        .query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))
        .expect("read the setting");
    assert_eq!(frames, i64::from(persist_wal::AUTOCHECKPOINT_PAGES));
    let wal = std::fs::metadata(d.path().join("a.db-wal")).expect("the WAL");
    assert!(
        wal.len() > 1_500 * 4096,
        "1,500 commits are all still in the WAL ({} bytes): none checkpointed",
        wal.len()
    );
}

/// After a checkpoint the WAL starts again at its head. While the actor is
/// resident the file keeps its length, so the commits after it write over
/// pages the file already has instead of growing it again from the journal
/// size limit (a third of a one-row commit's time, ADR 061).
#[test]
fn a_checkpointed_wal_keeps_its_length_while_the_actor_is_resident() {
    let (d, db) = db();
    db.exec("CREATE TABLE t(x); INSERT INTO t VALUES (0)", &[])
        .expect("create");
    // One page a commit: past AUTOCHECKPOINT_PAGES a commit checkpoints, and
    // the next one starts the WAL again at its head.
    for _ in 0..persist_wal::AUTOCHECKPOINT_PAGES + 100 {
        db.exec("UPDATE t SET x = x + 1", &[]).expect("update");
    }
    let wal_path = d.path().join("a.db-wal");
    // The WAL header's checkpoint sequence number (bytes 12..16, big-endian)
    // goes up each time the WAL starts again.
    let mut header = [0u8; 16];
    std::io::Read::read_exact(&mut std::fs::File::open(&wal_path).expect("the WAL"), &mut header)
        .expect("a WAL header");
    let restarts = u32::from_be_bytes([header[12], header[13], header[14], header[15]]);
    assert!(restarts >= 1, "the WAL was checkpointed and started again");
    let length = std::fs::metadata(&wal_path).expect("the WAL").len();
    let full = u64::from(persist_wal::AUTOCHECKPOINT_PAGES) * 4096;
    assert!(
        length >= full,
        "the WAL kept the length it had at its checkpoint ({length} bytes, at least {full} expected)"
    );
}

/// SQLite ignores `PRAGMA foreign_keys` inside a transaction, and an `exec`
/// without parameters ran in a savepoint: the guest's setting was dropped
/// without a word.
#[test]
fn a_guest_s_foreign_keys_setting_through_exec_takes_effect() {
    let (_dir, db) = db();
    let foreign_keys = |db: &ActorDb| db.query("PRAGMA foreign_keys", &[]).expect("read").rows;
    db.exec(
        "CREATE TABLE parent(id INTEGER PRIMARY KEY); CREATE TABLE child(p INTEGER REFERENCES parent(id))",
        &[],
    )
    .expect("tables");
    db.exec("PRAGMA foreign_keys=OFF", &[]).expect("off");
    assert_eq!(foreign_keys(&db), vec![vec![SqlValue::Integer(0)]]);
    db.exec("INSERT INTO child VALUES (7)", &[])
        .expect("no parent needed while off");
    db.exec("pragma Foreign_Keys = on;", &[]).expect("on");
    assert_eq!(foreign_keys(&db), vec![vec![SqlValue::Integer(1)]]);
    let refused = db
        .exec("INSERT INTO child VALUES (8)", &[])
        .expect_err("a parent is needed again");
    assert!(matches!(refused, SqlError::Sqlite { .. }), "{refused:?}");
}

/// A kept statement (ADR 056) starts each run with no parameters bound, as
/// rusqlite's cache left it: the same text without parameters binds NULL,
/// not the number an earlier run bound.
#[test]
fn a_kept_statement_run_without_parameters_binds_none_of_the_last_runs() {
    let (_d, db) = db();
    db.exec("CREATE TABLE t(x)", &[]).expect("table");
    db.exec("INSERT INTO t VALUES (?1)", &[SqlValue::Integer(7)])
        .expect("with a number");
    db.exec("INSERT INTO t VALUES (?1)", &[]).expect("without parameters");
    let r = db.query("SELECT x FROM t ORDER BY rowid", &[]).expect("rows");
    assert_eq!(r.rows, vec![vec![SqlValue::Integer(7)], vec![SqlValue::Null]]);
}

/// A text that is only a comment compiles to no statement: it runs as
/// nothing, again and again, and is not kept.
#[test]
fn a_text_that_is_only_a_comment_runs_as_nothing_each_time() {
    let (_d, db) = db();
    for _ in 0..2 {
        let r = db.exec("-- nothing", &[SqlValue::Text("a".into())]);
        assert!(r.is_err(), "a parameter for no statement: {r:?}");
        db.exec("-- nothing", &[]).expect("a comment alone is nothing to do");
    }
    assert!(!db.conn.is_kept("-- nothing"));
}
