//! Strings and byte buffers across the C ABI: borrowed in, owned out.

use std::ffi::{CStr, CString, c_char};

/// Reads a borrowed C string argument; `what` names it in the error.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string valid for the call.
pub(crate) unsafe fn arg<'a>(p: *const c_char, what: &str) -> Result<&'a str, String> {
    if p.is_null() {
        return Err(format!("{what} is NULL: pass a NUL-terminated UTF-8 string"));
    }
    // SAFETY: non-null and NUL-terminated per this function's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| format!("{what} is not valid UTF-8"))
}

/// Like [`arg`], but NULL reads as `None`.
///
/// # Safety
/// As for [`arg`].
pub(crate) unsafe fn opt_arg<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>, String> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { arg(p, what) }.map(Some)
    }
}

/// Reads a borrowed byte buffer argument (NULL with length 0 is empty).
///
/// # Safety
/// `p` points to `len` readable bytes, or `len` is 0.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize, what: &str) -> Result<&'a [u8], String> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(format!("{what} is NULL with length {len}"));
    }
    // SAFETY: `len` readable bytes per this function's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// An owned C string for the caller (freed with `wkh_string_free`); interior
/// NULs are escaped so the text is never cut short silently.
pub(crate) fn owned(text: impl Into<String>) -> *mut c_char {
    let text: String = text.into();
    CString::new(text.replace('\0', "\\0")).unwrap_or_default().into_raw()
}

/// A buffer for the caller: `len` bytes plus a NUL after them (so text bodies
/// read as C strings). Freed with [`free_buffer`] and the same `len`.
pub(crate) fn buffer(bytes: Vec<u8>) -> (*mut u8, usize) {
    let len = bytes.len();
    let mut with_nul = bytes;
    with_nul.push(0);
    (Box::into_raw(with_nul.into_boxed_slice()).cast(), len)
}

/// Frees a buffer made by [`buffer`].
///
/// # Safety
/// `p` came from [`buffer`] with this `len` and was not freed before.
pub(crate) unsafe fn free_buffer(p: *mut u8, len: usize) {
    if !p.is_null() {
        // SAFETY: rebuilds the boxed slice of `len + 1` bytes made by `buffer`.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, len + 1)) });
    }
}

/// Frees a string the harness returned (`wkh_actors_json`, `wkh_logs_json`,
/// `wkh_metrics`, `wkh_load_manifest`'s app name, ...). NULL does nothing.
///
/// # Safety
/// `s` is NULL or a string returned by a `wkh_` function documented as freed
/// here, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: made by CString::into_raw in `owned`.
        drop(unsafe { CString::from_raw(s) });
    }
}

/// Frees a string made by [`owned`] (for the harness's own structs).
///
/// # Safety
/// As for [`wkh_string_free`].
pub(crate) unsafe fn free_owned(s: *mut c_char) {
    // SAFETY: forwarded contract.
    unsafe { wkh_string_free(s) }
}
