//! SQLite's primary result codes the host makes or reads, by name.

/// Generic error (SQLITE_ERROR): also the host's code for empty SQL text and
/// for more than one statement where one is taken.
pub(crate) const ERROR: i32 = rusqlite::ffi::SQLITE_ERROR;
/// Interrupted (SQLITE_INTERRUPT): the admin dump ran out of time.
pub(crate) const INTERRUPT: i32 = rusqlite::ffi::SQLITE_INTERRUPT;
/// The database or disk is full (SQLITE_FULL): the actor's quota or the host's disk.
pub(crate) const FULL: i32 = rusqlite::ffi::SQLITE_FULL;
/// Too big (SQLITE_TOOBIG): a query's rows or the admin dump past their bound.
pub(crate) const TOOBIG: i32 = rusqlite::ffi::SQLITE_TOOBIG;
/// A parameter out of range (SQLITE_RANGE): the wrong number of parameters.
pub(crate) const RANGE: i32 = rusqlite::ffi::SQLITE_RANGE;

/// The primary code of an extended one.
pub(crate) fn primary(extended: i32) -> i32 {
    extended & 0xff
}
