//! The VFS an actor's database opens with: SQLite's own `unix` VFS, except
//! that a path the host built is taken as it is.
//!
//! SQLite's `unix` VFS resolves every path to its full name at open by
//! `lstat`ing each of its components, to follow symbolic links: seven
//! system calls for an actor's path under a data directory, at every wake
//! (ADR 043). Symbolic links in the directories make no difference to where
//! the `-wal` goes (the kernel resolves them), and SQLite opens the
//! database file itself with `O_NOFOLLOW` whichever way, so for an absolute
//! path without `.`, `..` or empty components the full name is the path.
//! Any other path goes to SQLite's own resolution.
//!
//! It also notes, per thread, an `open` of SQLite's that failed for want of
//! descriptors, which SQLite's own error does not keep (ADR 055).

use rusqlite::ffi;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;

/// The VFS's name, for `Connection::open_with_flags_and_vfs`.
pub(super) const NAME: &CStr = c"wasmkeep-plain-path";

type FullPathname = unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *const c_char, c_int, *mut c_char) -> c_int;
/// SQLite's `open` system call (`posixOpen`): path, flags, mode.
type OpenCall = unsafe extern "C" fn(*const c_char, c_int, c_int) -> c_int;

/// SQLite's own resolution, which [`full_pathname`] hands other paths to.
static UNIX_FULL_PATHNAME: OnceLock<FullPathname> = OnceLock::new();
/// SQLite's own `open` system call, which [`open_noting_shortage`] calls.
static SQLITE_OPEN_CALL: OnceLock<OpenCall> = OnceLock::new();

thread_local! {
    /// Whether an `open` of SQLite's on this thread failed for want of
    /// descriptors since [`take_open_shortage`] last read it.
    static OPEN_SHORTAGE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether an open by SQLite on this thread failed for want of descriptors
/// (`EMFILE`, `ENFILE`) since the last call; reading it clears it. SQLite
/// reports every failed open as `SQLITE_CANTOPEN`, and the system's error it
/// keeps can be a later one: a WAL that could not be created retries
/// read-only, and that retry says `ENOENT` once another thread has freed a
/// descriptor (ADR 055).
pub(super) fn take_open_shortage() -> bool {
    OPEN_SHORTAGE.with(|s| s.replace(false))
}

/// Whether the VFS is registered (once per process).
static REGISTERED: OnceLock<bool> = OnceLock::new();

/// Registers the VFS once; false if SQLite has no default VFS to copy (the
/// caller then opens with the default).
pub(super) fn registered() -> bool {
    *REGISTERED.get_or_init(register)
}

#[allow(unsafe_code)]
fn register() -> bool {
    // SAFETY: `sqlite3_vfs_find(NULL)` returns SQLite's default VFS, which
    // lives as long as the process; it is only read here, to copy it.
    let unix = unsafe { ffi::sqlite3_vfs_find(std::ptr::null()) };
    if unix.is_null() {
        return false;
    }
    // SAFETY: `unix` is a valid, registered VFS (checked non-null above).
    let mut vfs = unsafe { std::ptr::read(unix) };
    let Some(own) = vfs.xFullPathname else {
        return false;
    };
    let _ = UNIX_FULL_PATHNAME.set(own);
    note_open_shortages(unix);
    vfs.xFullPathname = Some(full_pathname);
    vfs.zName = NAME.as_ptr();
    vfs.pNext = std::ptr::null_mut();
    // SQLite keeps the pointer for the life of the process: the copy is leaked.
    let vfs: &'static mut ffi::sqlite3_vfs = Box::leak(Box::new(vfs));
    // SAFETY: `vfs` is a complete VFS (a copy of the default with one method
    // replaced by a function of the same signature) that is never freed;
    // 0: not the default, so only actor databases use it.
    let rc = unsafe { ffi::sqlite3_vfs_register(vfs, 0) };
    rc == ffi::SQLITE_OK
}

/// Whether `path` is absolute, with no `.`, `..` or empty component: then
/// its full name is itself, but for symbolic links, which the kernel resolves.
fn is_plain_absolute(path: &[u8]) -> bool {
    path.first() == Some(&b'/')
        && path[1..]
            .split(|b| *b == b'/')
            .all(|part| !part.is_empty() && part != b"." && part != b"..")
}

#[allow(unsafe_code)]
unsafe extern "C" fn full_pathname(
    vfs: *mut ffi::sqlite3_vfs,
    path: *const c_char,
    n_out: c_int,
    out: *mut c_char,
) -> c_int {
    // SAFETY: SQLite passes a NUL-terminated path.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    let room = usize::try_from(n_out).unwrap_or(0);
    if is_plain_absolute(bytes) && bytes.len() < room {
        // SAFETY: `out` has room for `n_out` bytes (SQLite's contract), more
        // than the path and its NUL; the two regions do not overlap (SQLite
        // gives a fresh buffer).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), bytes.len());
            *out.add(bytes.len()) = 0;
        }
        return ffi::SQLITE_OK;
    }
    match UNIX_FULL_PATHNAME.get() {
        // SAFETY: the default VFS's own method, called with what SQLite gave us.
        Some(own) => unsafe { own(vfs, path, n_out, out) },
        None => ffi::SQLITE_ERROR,
    }
}

/// Puts [`open_noting_shortage`] in place of SQLite's `open` system call
/// (`xSetSystemCall`, which the `unix` VFSes share). Done once, at the first
/// actor database's open; a connection opening a file meanwhile calls the
/// old or the new function, both of which open it.
#[allow(unsafe_code)]
fn note_open_shortages(unix: *mut ffi::sqlite3_vfs) {
    // SAFETY: `unix` is SQLite's registered default VFS; its system-call
    // table maps "open" to `posixOpen`, of the `OpenCall` signature, and the
    // replacement has that signature too.
    unsafe {
        let (Some(get), Some(set)) = ((*unix).xGetSystemCall, (*unix).xSetSystemCall) else {
            return;
        };
        let Some(own) = get(unix, c"open".as_ptr()) else {
            return;
        };
        let own = std::mem::transmute::<unsafe extern "C" fn(), OpenCall>(own);
        if SQLITE_OPEN_CALL.set(own).is_ok() {
            let ours = std::mem::transmute::<OpenCall, unsafe extern "C" fn()>(open_noting_shortage);
            set(unix, c"open".as_ptr(), Some(ours));
        }
    }
}

/// SQLite's `open`, noting a failure for want of descriptors before any
/// other call can overwrite `errno`.
#[allow(unsafe_code)]
unsafe extern "C" fn open_noting_shortage(path: *const c_char, flags: c_int, mode: c_int) -> c_int {
    let Some(own) = SQLITE_OPEN_CALL.get() else {
        return -1;
    };
    // SAFETY: SQLite's own `open`, called with what SQLite gave us.
    let fd = unsafe { own(path, flags, mode) };
    if fd < 0 {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if crate::open_files::is_shortage(errno) {
            OPEN_SHORTAGE.with(|s| s.set(true));
        }
    }
    fd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_absolute_path_without_dots_or_empty_parts_is_taken_as_it_is() {
        assert!(is_plain_absolute(b"/data/app/counter/6162.db"));
        assert!(!is_plain_absolute(b"data/app.db"));
        assert!(!is_plain_absolute(b"/data/./app.db"));
        assert!(!is_plain_absolute(b"/data/../app.db"));
        assert!(!is_plain_absolute(b"/data//app.db"));
        assert!(!is_plain_absolute(b"/data/"));
        assert!(!is_plain_absolute(b""));
    }

    #[test]
    fn a_database_opened_through_a_linked_directory_keeps_its_wal_beside_it() {
        assert!(registered());
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real");
        std::fs::create_dir(&real).expect("dir");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        let path = link.join("a.db");
        let conn =
            rusqlite::Connection::open_with_flags_and_vfs(&path, rusqlite::OpenFlags::default(), NAME).expect("open");
        conn.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .expect("write");
        assert!(real.join("a.db-wal").exists(), "the WAL is beside the database");
        drop(conn);
        let again = rusqlite::Connection::open(real.join("a.db")).expect("open");
        let n: i64 = again
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .expect("read");
        assert_eq!(n, 1);
    }

    #[test]
    fn a_relative_path_goes_to_sqlite_s_own_resolution() {
        assert!(registered());
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("b.db");
        // A `..` component is not taken as it is: SQLite resolves it.
        let dotted = dir.path().join("x").join("..").join("b.db");
        std::fs::create_dir(dir.path().join("x")).expect("dir");
        let conn =
            rusqlite::Connection::open_with_flags_and_vfs(&dotted, rusqlite::OpenFlags::default(), NAME).expect("open");
        conn.execute_batch("CREATE TABLE t(x)").expect("write");
        let name: String = conn
            .query_row("SELECT file FROM pragma_database_list WHERE name = 'main'", [], |r| {
                r.get(0)
            })
            .expect("name");
        assert_eq!(std::path::Path::new(&name), path.canonicalize().expect("canonical"));
    }
}
