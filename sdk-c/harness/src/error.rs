//! The last error of this thread, as C's `errno`/`dlerror` keep theirs: the
//! functions answer -1 or NULL and the text says what happened.

use std::cell::RefCell;
use std::ffi::{CString, c_char};

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Records `message` as this thread's last error.
pub(crate) fn set(message: impl std::fmt::Display) {
    let text = message.to_string().replace('\0', "\\0");
    let c = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(c));
}

/// Runs `f`; an `Err` becomes the last error and `fail` the return value.
pub(crate) fn guard<T>(fail: T, f: impl FnOnce() -> Result<T, String>) -> T {
    match f() {
        Ok(v) => v,
        Err(e) => {
            set(e);
            fail
        }
    }
}

/// What the last failed `wkh_` call on this thread said, or NULL if none
/// failed yet. The text belongs to the harness and stays valid until the next
/// failing call on this thread; copy it to keep it.
#[unsafe(no_mangle)]
pub extern "C" fn wkh_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ref().map_or(std::ptr::null(), |c| c.as_ptr()))
}
