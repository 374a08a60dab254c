//! Whether this process is out of open files (ADR 055).
//!
//! SQLite reports a database or WAL it could not open as `SQLITE_CANTOPEN`,
//! whatever the cause. When the cause is the process's open-files limit,
//! the node can do something about it (close idle actors' databases) and
//! the client should try again; when it is the file, neither helps. The
//! system's error of the failed open says which (the actor database's VFS
//! notes it, `actor_db::plain_path_vfs`).

/// Whether `errno` says the process (`EMFILE`) or the system (`ENFILE`)
/// has no open file left.
pub(crate) fn is_shortage(errno: i32) -> bool {
    errno == rustix::io::Errno::MFILE.raw_os_error() || errno == rustix::io::Errno::NFILE.raw_os_error()
}

/// The process's open-files limit (`ulimit -n`), if it has one.
pub(crate) fn limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// A limit as a message gives it.
pub(crate) fn describe(limit: Option<u64>) -> String {
    limit.map_or_else(|| "not known".into(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_emfile_and_enfile_are_a_shortage() {
        assert!(super::is_shortage(24) && super::is_shortage(23) && !super::is_shortage(2));
        assert!(super::limit().is_some_and(|n| n > 0));
        assert_eq!(super::describe(None), "not known");
    }
}
