//! The C SDK's test harness: a C ABI over the `wasmkeep_host` library (the same
//! host the dev server, the conformance runner and the Node harness use).
//!
//! A C test program creates a host (`wkh_host_new`), adds an app whose classes
//! are built components, sends requests and calls, opens sockets, moves the
//! virtual clock, arms the shim's faults and reads an actor's tables. The header
//! `sdk-c/include/wasmkeep_harness.h` is generated from this crate by cbindgen
//! (`build.rs`); a unit test fails when the committed copy is stale.
//!
//! Conventions of the ABI (the header repeats them):
//! - Every name starts with `wkh_`. Strings in are NUL-terminated UTF-8, borrowed
//!   for the call only.
//! - A function that can fail returns `0` for success and `-1` for failure, or a
//!   null pointer; `wkh_last_error()` then says what happened (per thread).
//! - Whatever the harness returns by pointer is owned by the caller and freed
//!   with the one `wkh_*_free` function its documentation names.
#![allow(
    unsafe_code,
    reason = "a C ABI: extern \"C\" functions that read the C caller's pointers; each documents what it needs"
)]

mod chaos;
mod cluster;
mod error;
mod events;
mod ffi_str;
mod history;
mod host;
mod inspect;
mod lifecycle;
pub mod verbs;

pub use chaos::*;
pub use cluster::*;
pub use error::{wkh_last_error, wkh_last_error_kind};
pub use events::*;
pub use ffi_str::wkh_string_free;
pub use history::*;
pub use host::*;
pub use inspect::*;
pub use lifecycle::*;

/// The harness's version (the host library's), a static NUL-terminated string.
#[unsafe(no_mangle)]
pub extern "C" fn wkh_version() -> *const std::ffi::c_char {
    static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    /// The committed header is what cbindgen makes of this crate now.
    #[test]
    fn header_is_current() {
        let fresh = include_str!(concat!(env!("OUT_DIR"), "/wasmkeep_harness.h"));
        let committed = include_str!("../../include/wasmkeep_harness.h");
        assert!(
            fresh == committed,
            "sdk-c/include/wasmkeep_harness.h is stale: run `bash sdk-c/scripts/gen.sh` and commit it"
        );
    }

    #[test]
    fn the_c_harness_binds_every_verb() {
        use wasmkeep_host_testing::verbs::{Binding, Verb};
        for verb in Verb::ALL {
            assert!(
                matches!(crate::verbs::binding(verb), Binding::Bound(_)),
                "{} is not bound",
                verb.name()
            );
        }
    }
}
