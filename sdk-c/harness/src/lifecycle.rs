//! An actor's life as the host and operators see it: restart, operator
//! delete, deletion status; and starting the host over between tests.

use crate::error::{Failure, guard};
use crate::ffi_str::{free_owned, owned};
use crate::host::{WkhHost, actor_key};
use std::ffi::c_char;
use wasmkeep_host::AdminDeleted;
use wasmkeep_host::deletion::DeletionStatus;

/// What an operator delete (`wkh_operator_delete`) did.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum WkhAdminDeleted {
    /// Deleted through the one delete routine (its sockets closed first).
    Deleted = 0,
    /// Its database could not be opened (damaged): its files were removed.
    RemovedUnopenable = 1,
    /// There was no such actor.
    Absent = 2,
}

/// Whether an actor was deleted, from positive evidence only.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum WkhDeletionKind {
    /// No evidence of a delete: no history, or a history whose head is not a reset.
    NotDeleted = 0,
    /// Deleted: `at_ms` and `how` say when and how.
    Deleted = 1,
    /// Not known: `reason` says why (the bucket could not be read; a removal
    /// of its files began and has not finished).
    Unknown = 2,
}

/// The answer of `wkh_deletion_status`. Free it with `wkh_deletion_free`.
#[repr(C)]
pub struct WkhDeletion {
    /// Deleted, not deleted, or unknown.
    pub kind: WkhDeletionKind,
    /// Deleted: when, in ms since the epoch on the deleting node's clock; 0 otherwise.
    pub at_ms: u64,
    /// Deleted: how (`self`, `self_durable`, `operator`, `expired`, or
    /// `unknown`); NULL otherwise.
    pub how: *mut c_char,
    /// Unknown: why; NULL otherwise.
    pub reason: *mut c_char,
}

/// Restarts the actor as a crash and recovery would: what it kept in memory
/// is gone, an open transaction is rolled back, and its next event recovers
/// it from its database (its `on-init` does not run again). Its sockets stay
/// open. In a cluster, the node holding it restarts it. Returns 0 or -1.
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_restart(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        host.host
            .restart(&key)
            .map_err(|e| Failure::reworded(e, |e| format!("restarting {key}: {e}")))?;
        Ok(0)
    })
}

/// Deletes the actor as an operator would (the admin API's delete, on node
/// 1): no guest code runs, its sockets are closed with 1000, the deletion is
/// recorded as `operator`; the next request meets a new actor. `outcome`
/// (may be NULL) receives what was done. Returns 0, or -1 (an unknown app or
/// class; in a cluster, an actor node 1 does not hold: use
/// `wkh_request_operator_delete`).
///
/// # Safety
/// `host` is a live host; strings NUL-terminated; `outcome` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_operator_delete(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
    outcome: *mut WkhAdminDeleted,
) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        let done = host
            .host
            .delete_actor(&key)
            .map_err(|e| Failure::reworded(e, |e| format!("deleting {key} as an operator: {e}")))?;
        let done = match done {
            AdminDeleted::Deleted => WkhAdminDeleted::Deleted,
            AdminDeleted::RemovedUnopenable => WkhAdminDeleted::RemovedUnopenable,
            AdminDeleted::Absent => WkhAdminDeleted::Absent,
        };
        // SAFETY: NULL or writable per the contract.
        if let Some(out) = unsafe { outcome.as_mut() } {
            *out = done;
        }
        Ok(0)
    })
}

/// Whether the actor was deleted, from positive evidence only (absence is
/// never "deleted"): on a single node from the record its last removal left
/// while no database was created since, in a cluster from its history in
/// the bucket. `WKH_DELETION_KIND_DELETED` with when and how,
/// `WKH_DELETION_KIND_NOT_DELETED`, or `WKH_DELETION_KIND_UNKNOWN` with the
/// reason. Returns the answer (free it with `wkh_deletion_free`), or NULL on
/// failure.
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_deletion_status(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
) -> *mut WkhDeletion {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        let status = host
            .host
            .deletion_status(&key)
            .map_err(|e| Failure::reworded(e, |e| format!("the deletion status of {key}: {e}")))?;
        let mut out = WkhDeletion {
            kind: WkhDeletionKind::NotDeleted,
            at_ms: 0,
            how: std::ptr::null_mut(),
            reason: std::ptr::null_mut(),
        };
        match status {
            DeletionStatus::NotDeleted => {}
            DeletionStatus::Deleted { at_ms, how } => {
                (out.kind, out.at_ms, out.how) = (WkhDeletionKind::Deleted, at_ms, owned(how));
            }
            DeletionStatus::Unknown { reason } => (out.kind, out.reason) = (WkhDeletionKind::Unknown, owned(reason)),
        }
        Ok(Box::into_raw(Box::new(out)))
    })
}

/// Frees what `wkh_deletion_status` returned. NULL does nothing.
///
/// # Safety
/// `deletion` is NULL or from `wkh_deletion_status`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_deletion_free(deletion: *mut WkhDeletion) {
    if !deletion.is_null() {
        // SAFETY: made by wkh_deletion_status, freed once; its strings by `owned`.
        unsafe {
            let d = Box::from_raw(deletion);
            free_owned(d.how);
            free_owned(d.reason);
        }
    }
}

/// Starts the host over, for the next test: every actor, socket, alarm,
/// fault and log line is gone, chaos is stopped, the clock is back at its
/// start, and the same apps are loaded again (already compiled). Sockets are
/// dropped without close events: their ids are unknown afterwards. A data
/// directory given in the options is emptied; a temporary one is replaced.
/// The options (nodes included) stay. Returns 0, or -1 (the data directory
/// could not be emptied, or the host could not start again: the host is then
/// closed, and later calls say so until a `wkh_reset` succeeds; free it with
/// `wkh_host_free` as always).
///
/// # Safety
/// `host` is a live host, and no other call uses it at the same time (from
/// another thread).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_reset(host: *mut WkhHost) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_mut_ptr(host)? };
        host.host
            .reset()
            .map_err(|e| Failure::reworded(e, |e| format!("resetting the host: {e}")))?;
        Ok(0)
    })
}

/// Restarts the whole host, as its process would stop and start again on the
/// same data: every socket is closed with 1001 "going away" (their ids are no
/// longer known), every resident actor is released (an open transaction
/// rolled back), and the host starts again on the same data, at the same
/// virtual time, with the same apps; alarms stay indexed, and a node that was
/// cut off is live again. Chaos, if running, goes on. Returns 0 or -1.
///
/// # Safety
/// `host` is a live host, and no other call uses it at the same time (from
/// another thread).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_restart_host(host: *mut WkhHost) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_mut_ptr(host)? };
        host.host
            .restart_host()
            .map_err(|e| Failure::reworded(e, |e| format!("restarting the host: {e}")))?;
        Ok(0)
    })
}
