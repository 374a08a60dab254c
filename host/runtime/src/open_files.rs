//! Whether this process is out of open files (ADR 055).
//!
//! SQLite reports a database or WAL it could not open as `SQLITE_CANTOPEN`,
//! whatever the cause. When the cause is the process's open-files limit,
//! the node can do something about it (close idle actors' databases) and
//! the client should try again; when it is the file, neither helps.

/// Whether `errno` says the process (`EMFILE`) or the system (`ENFILE`)
/// has no open file left.
pub(crate) fn is_shortage(errno: i32) -> bool {
    errno == rustix::io::Errno::MFILE.raw_os_error() || errno == rustix::io::Errno::NFILE.raw_os_error()
}

/// Whether the process can open no more files now: opening the root
/// directory (a descriptor that reads nothing) fails for a shortage. For a
/// failure whose own `errno` is lost; another thread may have closed a
/// file meanwhile, so it can miss a shortage that has just passed.
pub(crate) fn exhausted() -> bool {
    use rustix::fs::{Mode, OFlags};
    match rustix::fs::open("/", OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => {
            drop(fd);
            false
        }
        Err(e) => is_shortage(e.raw_os_error()),
    }
}

/// The process's open-files limit, for a message.
pub(crate) fn limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_process_with_files_to_spare_is_not_exhausted() {
        assert!(!super::exhausted());
        assert!(super::limit().is_some_and(|n| n > 0));
        assert!(super::is_shortage(24) && super::is_shortage(23) && !super::is_shortage(2));
    }
}
