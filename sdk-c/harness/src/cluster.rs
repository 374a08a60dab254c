//! A cluster's verbs: cutting a node off, an operator delete through the
//! bucket, idle expiry on the virtual clock, deleting the app. A host made
//! with `nodes` of 2 or more has them; on a single node they fail, saying so
//! (`wkh_request_on` is with the other events).

use crate::error::{Failure, guard};
use crate::ffi_str::{arg, owned};
use crate::host::{WkhHost, actor_key};
use std::ffi::c_char;
use std::time::Duration;

/// Cuts node `node` (numbered from 1) off from the cluster: it holds nothing
/// from now on and its uploads are never acknowledged, and the other nodes
/// take its actors over from the bucket (what was uploaded) at their next
/// event. Returns 0, or -1 (a
/// single node, or no such node).
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_cut_off(host: *const WkhHost, node: u32) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_ptr(host)? };
        let n = usize::try_from(node).unwrap_or(usize::MAX);
        host.host
            .cut_off(n)
            .map_err(|e| Failure::reworded(e, |e| format!("cutting node {node} off: {e}")))?;
        Ok(0)
    })
}

/// Cluster: asks for an operator delete of the actor as
/// `wasmkeep-shim actor delete` does (a request in the bucket) and runs every
/// node's control pass, so that the node holding it has deleted it when this
/// returns (no guest code runs). Returns the request's id (free it with
/// `wkh_string_free`), or NULL (a single node: use `wkh_operator_delete`; an
/// unknown actor).
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_request_operator_delete(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        let id = host.host.request_operator_delete(&key).map_err(|e| {
            Failure::reworded(e, |e| {
                format!("the operator delete of {key}: {e} (on one node, wkh_operator_delete)")
            })
        })?;
        Ok(owned(id))
    })
}

/// Cluster: sets the class's `expire-after-idle` on every node, as a
/// manifest or `serve --expire-after-idle` does: an actor idle that long (not
/// resident, no alarm, no socket) is deleted by the idle-expiry pass, which
/// runs as the virtual clock moves (every ten minutes of it) and at
/// `wkh_run_expiry_passes` (a single node runs no such pass). `limit_ms` is at least an hour (3600000); 0
/// removes the limit. Returns 0, or -1 (below an hour, an unknown app or
/// class).
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_set_expire_after_idle(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    limit_ms: u64,
) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, app, class) = unsafe { (WkhHost::from_ptr(host)?, arg(app, "app")?, arg(class, "class")?) };
        let limit = (limit_ms > 0).then(|| Duration::from_millis(limit_ms));
        host.host
            .set_expire_after_idle(app, class, limit)
            .map_err(Failure::from)?;
        Ok(0)
    })
}

/// Cluster: runs each node's idle-expiry pass once. Returns how many actors
/// it deleted (always 0 on a single node, and 0 when `host` is NULL: see
/// `wkh_last_error`).
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_run_expiry_passes(host: *const WkhHost) -> usize {
    guard(0, || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_ptr(host)? };
        host.host.run_expiry_passes().map_err(Failure::from)
    })
}

/// Cluster: deletes the app as `wasmkeep-shim app delete` does: its
/// tombstone in the bucket, every node stops serving it (requests to it fail
/// with "no app"; `wkh_request` returns NULL), then its data is removed.
/// Returns 0, or -1 (a single node, the bucket failed).
///
/// # Safety
/// `host` is a live host; `app` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_delete_app(host: *const WkhHost, app: *const c_char) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, app) = unsafe { (WkhHost::from_ptr(host)?, arg(app, "app")?) };
        host.host
            .delete_app(app)
            .map_err(|e| Failure::reworded(e, |e| format!("deleting the app {app}: {e}")))?;
        Ok(0)
    })
}
