//! Guest SQL text given to `exec` without parameters: one statement, or
//! several run in order.
//!
//! SQLite's `execute_batch` compiles every statement of the text at every
//! call. The usual text is one statement (`exec("UPDATE counter SET n = n +
//! 1 WHERE id = 1")`, the counters' POST), so it is kept compiled instead,
//! as an `exec` with parameters is; text of several statements still goes
//! through `execute_batch` (issue 25, ADR 041, ADR 056).

use super::kept_statements::KeptConnection;

/// Runs `sql` as `execute_batch` would: each statement stepped once.
///
/// # Errors
/// SQLite's error for the first statement that fails.
pub(super) fn run_text(conn: &KeptConnection, sql: &str) -> rusqlite::Result<()> {
    if !is_one_statement(sql) {
        return conn.execute_batch(sql);
    }
    conn.with_kept(sql, |stmt| {
        // One step, as `execute_batch` takes: a write runs to its end in it; a
        // query's further rows are not read.
        let mut rows = stmt.raw_query();
        rows.next()?;
        Ok(())
    })
}

/// Runs `sql` as [`run_text`] does and returns the rows it changed.
///
/// # Errors
/// SQLite's error for the first statement that fails.
pub(super) fn run_text_counted(conn: &KeptConnection, sql: &str) -> rusqlite::Result<u64> {
    let before = conn.total_changes();
    run_text(conn, sql)?;
    Ok(conn.total_changes().saturating_sub(before))
}

/// True if `sql` is surely one statement, and a PRAGMA.
pub(super) fn is_one_pragma(sql: &str) -> bool {
    let body = sql.trim_start();
    is_one_statement(sql) && body.get(..6).is_some_and(|w| w.eq_ignore_ascii_case("pragma"))
}

/// True if `sql` is surely one statement: no `;` but at its end, and not
/// starting with a comment (text that is only a comment compiles to no
/// statement, which cannot be stepped). Anything else, a `;` inside a
/// string or a trigger's body included, takes the batch path: compiling
/// the first statement alone would fail on a later one that needs the
/// first to have run (`CREATE TABLE a(x); INSERT INTO a …`).
fn is_one_statement(sql: &str) -> bool {
    let body = sql.trim().trim_end_matches(';');
    !body.contains(';') && !body.starts_with("--") && !body.starts_with("/*")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> KeptConnection {
        let c = KeptConnection::new(rusqlite::Connection::open_in_memory().expect("open"));
        c.execute_batch("CREATE TABLE t(x)").expect("table");
        c
    }

    fn count(c: &KeptConnection) -> i64 {
        c.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).expect("count")
    }

    #[test]
    fn one_statement_is_compiled_once_for_every_run() {
        let c = conn();
        for _ in 0..3 {
            run_text(&c, "INSERT INTO t VALUES (1)").expect("insert");
        }
        assert_eq!(count(&c), 3);
        // One compiled statement ran three times (SQLITE_STMTSTATUS_RUN).
        let runs = c.with_kept("INSERT INTO t VALUES (1)", |s| {
            Ok(s.get_status(rusqlite::StatementStatus::Run))
        });
        assert_eq!(runs.expect("kept"), 3);
    }

    #[test]
    fn text_of_several_statements_runs_each_in_order() {
        let c = conn();
        run_text(&c, "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);").expect("batch");
        assert_eq!(count(&c), 2);
    }

    #[test]
    fn comments_and_empty_statements_run_as_before() {
        let c = conn();
        run_text(&c, "-- nothing here").expect("a comment alone is nothing to do");
        run_text(&c, "/* a */ INSERT INTO t VALUES (1)").expect("a comment first");
        run_text(&c, "; INSERT INTO t VALUES (2)").expect("an empty statement first");
        run_text(&c, "INSERT INTO t VALUES (3); -- trailing").expect("a comment last");
        assert_eq!(count(&c), 3);
    }

    #[test]
    fn a_query_given_to_exec_is_stepped_once_and_errors_keep_their_kind() {
        let c = conn();
        run_text(&c, "SELECT 1 UNION ALL SELECT 2").expect("a query runs");
        let e = run_text(&c, "INSERT INTO nope VALUES (1)").expect_err("no such table");
        assert_eq!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::Unknown));
        let e = run_text(&c, "INSERT INTO t VALUES (1); INSERT INTO nope VALUES (1)").expect_err("second fails");
        assert_eq!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::Unknown));
        assert_eq!(
            count(&c),
            1,
            "a batch's statements before the failing one ran (the caller's savepoint undoes them)"
        );
        run_text(&c, "CREATE TABLE a(x); INSERT INTO a VALUES (1)").expect("a later statement sees an earlier one");
        run_text(&c, "INSERT INTO t VALUES ('a;b')").expect("a ; inside a string");
        assert_eq!(count(&c), 2);
    }
}
