//! The last error of this thread, as C's `errno`/`dlerror` keep theirs: the
//! functions answer -1 or NULL, the text says what happened, and the kind
//! (`wkh_last_error_kind`) names it for a test to compare.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use wasmkeep_host_testing::{TestHostError, TestHostErrorKind};

thread_local! {
    static LAST_ERROR: RefCell<Option<(CString, Option<TestHostErrorKind>)>> = const { RefCell::new(None) };
}

/// Why a `wkh_` call failed: the text for `wkh_last_error`, and the kind of
/// the test host's failure it came from, if it came from one.
#[derive(Debug)]
pub(crate) struct Failure {
    message: String,
    kind: Option<TestHostErrorKind>,
}

impl Failure {
    /// A failure in its own words, with the kind the testing crate gave it.
    pub(crate) fn with_kind(message: String, kind: Option<TestHostErrorKind>) -> Self {
        Self { message, kind }
    }

    /// The same failure (and kind) in other words: `reword` gets its message.
    pub(crate) fn reworded(e: TestHostError, reword: impl FnOnce(&TestHostError) -> String) -> Self {
        Self {
            message: reword(&e),
            kind: Some(e.kind()),
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self { message, kind: None }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

impl From<TestHostError> for Failure {
    fn from(e: TestHostError) -> Self {
        Self {
            message: e.to_string(),
            kind: Some(e.kind()),
        }
    }
}

/// Records `failure` as this thread's last error.
pub(crate) fn set(failure: impl Into<Failure>) {
    let Failure { message, kind } = failure.into();
    let c = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = Some((c, kind)));
}

/// Runs `f`; an `Err` becomes the last error and `fail` the return value.
pub(crate) fn guard<T>(fail: T, f: impl FnOnce() -> Result<T, Failure>) -> T {
    match f() {
        Ok(v) => v,
        Err(e) => {
            set(e);
            fail
        }
    }
}

/// Forgets this thread's last error, so that a call whose NULL or 0 can mean
/// "nothing" as well as a failure (`wkh_socket_take`, `wkh_run_due_alarms`,
/// `wkh_run_expiry_passes`) tells them apart: after it, a failure is a
/// `wkh_last_error()` that is not NULL. Added after 0.2.0.
#[unsafe(no_mangle)]
pub extern "C" fn wkh_clear_last_error() {
    LAST_ERROR.with(|e| *e.borrow_mut() = None);
}

/// What the last failed `wkh_` call on this thread said, or NULL if none
/// failed yet. The text belongs to the harness and stays valid until the next
/// failing call on this thread; copy it to keep it.
#[unsafe(no_mangle)]
pub extern "C" fn wkh_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ref().map_or(std::ptr::null(), |(c, _)| c.as_ptr()))
}

/// The kind of the last failed `wkh_` call on this thread, for a test to
/// compare rather than the message's words: the host's failure kinds
/// (`"no-such-class"`, `"needs-cluster"`, `"no-such-socket"`, ...) or the
/// harness's own (`"closed"`, `"no-such-node"`, `"unknown-fault"`, ...).
/// NULL if none failed yet, or the failure has no kind (a bad argument the
/// C layer itself refused, such as a string that is not UTF-8). A static
/// string: it stays valid.
#[unsafe(no_mangle)]
pub extern "C" fn wkh_last_error_kind() -> *const c_char {
    LAST_ERROR.with(|e| {
        e.borrow()
            .as_ref()
            .and_then(|(_, kind)| *kind)
            .map_or(std::ptr::null(), |k| kind_c_str(k).as_ptr())
    })
}

/// A kind's name as a C string that lives as long as the program: one leaked
/// copy per kind, made the first time it is asked for.
fn kind_c_str(kind: TestHostErrorKind) -> &'static CStr {
    static NAMES: std::sync::Mutex<Vec<(TestHostErrorKind, &'static CStr)>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, c)) = names.iter().find(|(k, _)| *k == kind) {
        return c;
    }
    let c: &'static CStr = Box::leak(CString::new(kind.as_str()).unwrap_or_default().into_boxed_c_str());
    names.push((kind, c));
    c
}
