//! The guest's tables for the admin API, bounded as a guest query is, and
//! the database as one image for replication.

use super::host_table::META_COLUMNS;
use super::{ActorDb, DUMP_TIME, MAX_DUMP_BYTES, META_TABLE, rows, sqlite_code};
use crate::sql_types::{QueryResult, SqlError};
use rusqlite::Connection;
use std::time::Instant;

/// Why the admin API's table dump stopped early.
enum DumpStop {
    TooLarge,
    TooSlow,
}

impl ActorDb {
    /// The guest's tables and their rows (the host's table left out), for
    /// the admin API. Reading a table runs SQL the guest defined (generated
    /// columns), so it is bounded as a guest query is: the rows may add up to
    /// [`MAX_DUMP_BYTES`] and the reading to [`DUMP_TIME`].
    ///
    /// # Errors
    /// `sqlite` with code 18 (SQLITE_TOOBIG) past the size, 9 (SQLITE_INTERRUPT)
    /// past the time; `internal` if SQLite failed otherwise.
    pub fn dump_tables(&self) -> Result<Vec<(String, QueryResult)>, SqlError> {
        let internal = |e: rusqlite::Error| SqlError::Internal(format!("reading tables: {e}"));
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_wasmkeep%' ESCAPE '\\' ORDER BY name")
            .map_err(internal)?;
        let names: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .map_err(internal)?
            .collect::<Result<_, _>>()
            .map_err(internal)?;
        let too_large = || SqlError::Sqlite {
            code: sqlite_code::TOOBIG,
            message: format!(
                "the actor's tables hold more than {} MiB: read them through the actor (LIMIT/OFFSET)",
                MAX_DUMP_BYTES >> 20
            ),
        };
        let too_slow = || SqlError::Sqlite {
            code: sqlite_code::INTERRUPT,
            message: format!(
                "reading the actor's tables took more than {} s: read them through the actor",
                DUMP_TIME.as_secs()
            ),
        };
        let deadline = Instant::now() + DUMP_TIME;
        self.set_deadline(Some(deadline));
        let mut out = Vec::new();
        let mut bytes = 0usize;
        let mut result = Ok(());
        for name in names {
            let quoted = format!("\"{}\"", name.replace('"', "\"\""));
            let sql = format!("SELECT * FROM {quoted}");
            let read = self.guest(&sql, |c| {
                let mut stmt = c.prepare(&sql)?;
                rows::read_rows(&mut stmt, [], &mut bytes, |bytes| {
                    if bytes > MAX_DUMP_BYTES {
                        return Some(DumpStop::TooLarge);
                    }
                    // SQLite's progress handler counts statements' steps, not
                    // the time one function call of a generated column takes.
                    (Instant::now() >= deadline).then_some(DumpStop::TooSlow)
                })
            });
            match read {
                Ok(Ok(r)) => out.push((name, r)),
                Ok(Err(DumpStop::TooLarge)) => {
                    result = Err(too_large());
                    break;
                }
                Ok(Err(DumpStop::TooSlow)) => {
                    result = Err(too_slow());
                    break;
                }
                Err(_) if self.timed_out() => {
                    result = Err(too_slow());
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.set_deadline(None);
        result.map(|()| out)
    }

    /// The whole database as one image (what a cluster uploads after an event).
    ///
    /// # Errors
    /// `internal` if SQLite could not serialise it.
    pub fn image(&self) -> Result<Vec<u8>, SqlError> {
        self.conn
            .serialize(rusqlite::MAIN_DB)
            .map(|d| d.to_vec())
            .map_err(|e| SqlError::Internal(format!("reading the database image: {e}")))
    }

    /// The image of an empty actor database whose host table holds `marks`
    /// (a reset carries when and how the actor was deleted).
    ///
    /// # Errors
    /// `internal` if SQLite failed.
    pub fn empty_image(marks: &[(&str, &str)]) -> Result<Vec<u8>, SqlError> {
        let internal = |e: rusqlite::Error| SqlError::Internal(format!("building an empty database: {e}"));
        let conn = Connection::open_in_memory().map_err(internal)?;
        conn.execute_batch(&format!("CREATE TABLE main.{META_TABLE}{META_COLUMNS};"))
            .map_err(internal)?;
        for (k, v) in marks {
            conn.execute(
                &format!("INSERT INTO main.{META_TABLE}(key, value) VALUES(?1, ?2)"),
                [k, v],
            )
            .map_err(internal)?;
        }
        conn.serialize(rusqlite::MAIN_DB).map(|d| d.to_vec()).map_err(internal)
    }
}
