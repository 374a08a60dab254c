//! Where the harness library is, and loading it once per test process.

use super::ffi_generated::Api;
use crate::driver::HarnessError;
use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The kind of every failure to find, load or check the library.
pub(crate) const LIBRARY_KIND: &str = "harness-library";

/// The variable naming the library's file.
pub(crate) const LIB_VAR: &str = "WASMKEEP_HARNESS_LIB";

/// The library's file name on this platform (`libwasmkeep_c_harness.so`).
fn file_name() -> std::ffi::OsString {
    libloading::library_filename("wasmkeep_c_harness")
}

/// Where to look, in order: `WASMKEEP_HARNESS_LIB`, else `../lib/` of each
/// `wasmkeep-shim` on `PATH` (a release archive's layout: `bin/` and `lib/`).
fn candidates() -> Vec<PathBuf> {
    if let Some(file) = std::env::var_os(LIB_VAR).filter(|v| !v.is_empty()) {
        return vec![PathBuf::from(file)];
    }
    let shim = format!("wasmkeep-shim{}", std::env::consts::EXE_SUFFIX);
    std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .filter(|dir| dir.join(&shim).is_file())
                .filter_map(|dir| dir.parent().map(|p| p.join("lib").join(file_name())))
                .collect()
        })
        .unwrap_or_default()
}

/// The library, loaded and checked once; every later call gets the same.
///
/// # Errors
/// Not found, not loadable, or of another version than this crate.
pub(crate) fn api() -> Result<&'static Api, HarnessError> {
    static LOADED: OnceLock<Result<Api, String>> = OnceLock::new();
    LOADED.get_or_init(load).as_ref().map_err(|message| HarnessError {
        message: message.clone(),
        kind: Some(LIBRARY_KIND.into()),
    })
}

fn load() -> Result<Api, String> {
    let tried = candidates();
    let Some(file) = tried.iter().find(|f| f.is_file()) else {
        let looked = if tried.is_empty() {
            format!("{LIB_VAR} is unset and no wasmkeep-shim is on PATH")
        } else {
            format!(
                "not at {}",
                tried
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(format!(
            "the wasmkeep harness library ({}) was not found: {looked}. Unpack the wasmkeep release archive \
             for this platform (it has bin/wasmkeep-shim and lib/) and put its bin/ on PATH, or set {LIB_VAR} \
             to the library's file; or turn on this crate's `in-process` feature to compile the host into \
             the tests instead",
            file_name().to_string_lossy()
        ));
    };
    // SAFETY: loading runs the library's initialisers; it is a Rust cdylib
    // with none of its own. It is never unloaded (the `OnceLock` keeps it),
    // so its functions stay valid for the process.
    let lib = unsafe { libloading::Library::new(file) }.map_err(|e| format!("loading {}: {e}", file.display()))?;
    check_version(&lib, file)?;
    // SAFETY: a wasmkeep harness of this crate's version (checked above).
    let api = unsafe { Api::load(&lib) }.map_err(|e| {
        format!(
            "{} lacks a function this crate calls ({e}): install the release whose version is {}",
            file.display(),
            env!("CARGO_PKG_VERSION")
        )
    })?;
    std::mem::forget(lib);
    Ok(api)
}

/// The library's version must have this crate's major and minor (the
/// structs' layout is that of one minor version) and be at least this
/// crate's version (a patch adds functions; a missing one is then named by
/// `Api::load`).
fn check_version(lib: &libloading::Library, file: &Path) -> Result<(), String> {
    // SAFETY: `wkh_version` returns a static NUL-terminated string in every version.
    let version = unsafe {
        let f = lib
            .get::<unsafe extern "C" fn() -> *const c_char>(b"wkh_version\0")
            .map_err(|e| format!("{} is not a wasmkeep harness library: {e}", file.display()))?;
        CStr::from_ptr(f()).to_string_lossy().into_owned()
    };
    let parts = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '+'])
            .take(3)
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    let ours = env!("CARGO_PKG_VERSION");
    let (theirs, mine) = (parts(&version), parts(ours));
    if theirs.get(..2) == mine.get(..2) && theirs >= mine {
        Ok(())
    } else {
        Err(format!(
            "{} is the harness of wasmkeep {version}, and this wasmkeep-actor-testing is {ours}: \
             install the release archive of {ours} (or set {LIB_VAR} to its library)",
            file.display()
        ))
    }
}
