//! A host: its runtime, its data directory, its apps.

use crate::error::{Failure, guard};
use crate::ffi_str::{arg, opt_arg, owned};
use std::ffi::c_char;
use std::path::PathBuf;
use std::time::Duration;
use wasmkeep_host::{Access, ActorKey, ClassSpec};
use wasmkeep_host_testing::{TestHost, TestHostError, TestHostOptions};

/// A host with its own data directory and a virtual clock (opaque). Made by
/// `wkh_host_new`, freed by `wkh_host_free`.
pub struct WkhHost {
    /// The host library's test host; this crate only converts C's types.
    pub(crate) host: TestHost,
}

/// Options of a new host. Every field may be left 0 / NULL for its default.
#[repr(C)]
pub struct WkhHostOptions {
    /// The data directory; NULL: a fresh temporary one, removed by `wkh_host_free`.
    pub data_dir: *const c_char,
    /// Where compiled components are cached; NULL: `$WASMKEEP_CACHE_DIR` or
    /// `<data dir>/cache`. Share one between hosts to compile a component once.
    pub cache_dir: *const c_char,
    /// An event's time limit in milliseconds; 0: 5000.
    pub event_timeout_ms: u32,
    /// Idle time before an actor hibernates, in milliseconds; 0: 30000.
    pub idle_timeout_ms: u32,
    /// How many nodes: 0 or 1, a single node; 2 or more, a local cluster that
    /// shares a bucket (in the data directory) and the virtual clock, whose
    /// passes (operator deletes, app tombstones, idle expiry) run as the clock
    /// moves. Nodes are numbered from 1 (`wkh_request_on`, `wkh_cut_off`);
    /// `wkh_request` and the other verbs use node 1. (Added after the first
    /// three fields: a program built against an older header must be rebuilt.)
    pub nodes: u32,
    /// Nonzero: a single node keeps its actors' history (ADR 064), every
    /// state restorable with `wkh_restore` and listed by `wkh_history`; 0
    /// (the default): it keeps none, and those two fail with `bad-argument`.
    /// A cluster keeps history in its bucket whatever this says. (Added after
    /// `nodes`: a program built against an older header must be rebuilt.)
    pub history: u32,
}

/// Who may create and reach a class's actors (the manifest's `access`).
#[repr(C)]
#[derive(Clone, Copy)]
pub enum WkhAccess {
    /// Any request creates the actor.
    Open = 0,
    /// Requests reach only actors that exist; calls from the app create them.
    Existing = 1,
    /// Calls from the app's actors only.
    Internal = 2,
}

/// One class of an app: its name and its component file.
#[repr(C)]
pub struct WkhClass {
    /// The class name (`/<class>/<name>` routes to it).
    pub name: *const c_char,
    /// The component file (`.wasm`).
    pub component: *const c_char,
    /// Who may reach its actors.
    pub access: WkhAccess,
}

impl WkhHost {
    /// # Safety
    /// `host` is NULL or a live host from `wkh_host_new`.
    pub(crate) unsafe fn from_ptr<'a>(host: *const WkhHost) -> Result<&'a WkhHost, String> {
        // SAFETY: NULL or live per the contract.
        unsafe { host.as_ref() }.ok_or_else(|| "host is NULL: make one with wkh_host_new".to_owned())
    }

    /// As [`WkhHost::from_ptr`], for the verbs that replace the host's state
    /// (`wkh_reset`).
    ///
    /// # Safety
    /// `host` is NULL or a live host from `wkh_host_new`, and no other call
    /// uses it meanwhile.
    pub(crate) unsafe fn from_mut_ptr<'a>(host: *mut WkhHost) -> Result<&'a mut WkhHost, String> {
        // SAFETY: NULL or live and unshared per the contract.
        unsafe { host.as_mut() }.ok_or_else(|| "host is NULL: make one with wkh_host_new".to_owned())
    }
}

/// Reads an actor's address arguments.
///
/// # Safety
/// Each pointer is a NUL-terminated string valid for the call.
pub(crate) unsafe fn actor_key(
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
) -> Result<ActorKey, String> {
    // SAFETY: forwarded contract.
    unsafe {
        Ok(ActorKey::new(
            arg(app, "app")?,
            arg(class, "class")?,
            arg(name, "name")?,
        ))
    }
}

/// Starts a host: virtual clock at a fixed start, alarms that run only when the
/// test says so, its own data directory. `options` may be NULL (all defaults).
///
/// Returns NULL on failure (see `wkh_last_error`). Free it with `wkh_host_free`.
///
/// # Safety
/// `options` is NULL or points to a valid `wkh_host_options` whose strings are
/// NULL or NUL-terminated.
#[unsafe(no_mangle)]
#[allow(
    clippy::needless_update,
    reason = "options the host library adds later keep their defaults"
)]
pub unsafe extern "C" fn wkh_host_new(options: *const WkhHostOptions) -> *mut WkhHost {
    guard(std::ptr::null_mut(), || {
        // SAFETY: NULL or valid per the contract.
        let options = unsafe { options.as_ref() };
        // SAFETY: the strings are NULL or NUL-terminated per the contract.
        let data_dir = unsafe { opt_arg(options.map_or(std::ptr::null(), |o| o.data_dir), "data_dir")? };
        // SAFETY: as above.
        let cache_dir = unsafe { opt_arg(options.map_or(std::ptr::null(), |o| o.cache_dir), "cache_dir")? };
        let nonzero_ms = |ms: u32| (ms > 0).then(|| Duration::from_millis(u64::from(ms)));
        let host = TestHost::new(TestHostOptions {
            data_dir: data_dir.map(PathBuf::from),
            cache_dir: cache_dir.map(PathBuf::from),
            event_timeout: options.and_then(|o| nonzero_ms(o.event_timeout_ms)),
            idle_timeout: options.and_then(|o| nonzero_ms(o.idle_timeout_ms)),
            nodes: options.and_then(|o| usize::try_from(o.nodes).ok()).filter(|n| *n > 1),
            history: options.is_some_and(|o| o.history != 0),
            ..TestHostOptions::default()
        })
        .map_err(|e| {
            Failure::reworded(e, |e| match e {
                // The options struct is read as this harness lays it out.
                TestHostError::BadNodes(_) => format!(
                    "starting the host: {e}; a C program built against an older wasmkeep_harness.h must be rebuilt"
                ),
                e => format!("starting the host: {e}"),
            })
        })?;
        Ok(Box::into_raw(Box::new(WkhHost { host })))
    })
}

/// Stops the host: hibernates its actors, drops its sockets and removes its
/// temporary data directory (one given in the options stays). NULL does nothing.
///
/// # Safety
/// `host` is NULL or a host from `wkh_host_new`, not freed before; nothing
/// uses it afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_host_free(host: *mut WkhHost) {
    if host.is_null() {
        return;
    }
    // SAFETY: made by Box::into_raw in wkh_host_new, freed once per the contract.
    let mut host = unsafe { Box::from_raw(host) };
    host.host.close();
}

/// Adds (or replaces) an app with `count` classes, compiling their components.
/// `app` is `tenant/app`. Returns 0, or -1 (an unreadable or invalid component,
/// a bad name: see `wkh_last_error`).
///
/// # Safety
/// `host` is a live host; `classes` points to `count` valid `wkh_class` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_add_app(
    host: *const WkhHost,
    app: *const c_char,
    classes: *const WkhClass,
    count: usize,
) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_ptr(host)? };
        // SAFETY: per the contract.
        let app = unsafe { arg(app, "app")? };
        if count > 0 && classes.is_null() {
            return Err("classes is NULL".into());
        }
        let classes = if count == 0 {
            &[][..]
        } else {
            // SAFETY: `count` valid elements per the contract.
            unsafe { std::slice::from_raw_parts(classes, count) }
        };
        let mut specs = Vec::with_capacity(count);
        for c in classes {
            // SAFETY: the class's strings are NUL-terminated per the contract.
            let (name, component) = unsafe { (arg(c.name, "class name")?, arg(c.component, "component")?) };
            specs.push(ClassSpec {
                name: name.to_owned(),
                component: PathBuf::from(component),
                access: match c.access {
                    WkhAccess::Open => Access::Open,
                    WkhAccess::Existing => Access::Existing,
                    WkhAccess::Internal => Access::Internal,
                },
            });
        }
        host.host.add_app(app, &specs).map_err(Failure::from)?;
        Ok(0)
    })
}

/// Loads an app manifest (`wasmkeep.toml`; component paths relative to it).
/// Returns the app's name (free it with `wkh_string_free`), or NULL on failure.
///
/// # Safety
/// `host` is a live host; `path` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_load_manifest(host: *const WkhHost, path: *const c_char) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let (host, path) = unsafe { (WkhHost::from_ptr(host)?, arg(path, "path")?) };
        let app = host.host.load_manifest(path.as_ref()).map_err(Failure::from)?;
        Ok(owned(app))
    })
}

/// The host's data directory (free it with `wkh_string_free`), or NULL.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_data_dir(host: *const WkhHost) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_ptr(host)? };
        let dir = host.host.data_dir().map_err(Failure::from)?;
        Ok(owned(dir.display().to_string()))
    })
}
