//! Going back in time (ADR 064): an actor's history as its positions, and a
//! restore to a bookmark or a time, undone by another. A cluster keeps
//! history in its bucket; a single node only when `wkh_host_options.history`
//! is nonzero.

use crate::error::{Failure, guard};
use crate::ffi_str::{free_owned, opt_arg, owned};
use crate::host::{WkhHost, actor_key};
use std::ffi::c_char;
use wasmkeep_host_testing::RestoreTo;

/// What `wkh_restore` did. Free it with `wkh_restored_free`.
#[repr(C)]
pub struct WkhRestored {
    /// The bookmark of the position whose state was restored.
    pub from: *mut c_char,
    /// The bookmark of the new head, where the restored state now stands.
    pub at: *mut c_char,
    /// The bookmark of the head before the restore: restoring to it undoes
    /// this one.
    pub undo: *mut c_char,
}

/// The actor's history, oldest first, as JSON: `[{"bookmark", "kind", "at",
/// "head"}, ...]`, `bookmark` a string to give `wkh_restore` (bookmarks sort
/// as positions do), `kind` what the position is (`upload`, `pages`,
/// `fence`, `reset`), `at` when it was written on the host's clock (ms since
/// the epoch), `head` true for the actor's current state. Free it with
/// `wkh_string_free`; NULL on failure (kind `bad-argument`: a single node
/// started without `history` in its options). An actor never written has an
/// empty list.
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_history(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        let positions = host
            .host
            .history(&key)
            .map_err(|e| Failure::reworded(e, |e| format!("the history of {key}: {e}")))?;
        let list: Vec<serde_json::Value> = positions
            .into_iter()
            .map(|p| serde_json::json!({"bookmark": p.bookmark, "kind": p.kind, "at": p.at, "head": p.head}))
            .collect();
        Ok(owned(serde_json::Value::Array(list).to_string()))
    })
}

/// Restores the actor to `bookmark` (one `wkh_history` listed), or, when
/// `bookmark` is NULL, to the time `at_ms` (ms since the epoch on the host's
/// clock): the last state written at or before it. The restore runs in the
/// actor's mailbox after what is queued: its open sockets close with 1012,
/// its alarm becomes the restored state's, and its next event runs on the
/// restored state. The restore is a new position of the history: restoring
/// to the answer's `undo` undoes it. Returns what was done (free it with
/// `wkh_restored_free`), or NULL on failure, whose kind
/// (`wkh_last_error_kind`) is `bad-argument` for a malformed bookmark, a
/// single node started without `history`, or a target before the actor's
/// first state or its last delete, and `no-such-actor` for an actor that
/// never was.
///
/// # Safety
/// `host` is a live host; strings NUL-terminated; `bookmark` NULL or
/// NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_restore(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
    bookmark: *const c_char,
    at_ms: u64,
) -> *mut WkhRestored {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let (host, key, bookmark) = unsafe {
            (
                WkhHost::from_ptr(host)?,
                actor_key(app, class, name)?,
                opt_arg(bookmark, "bookmark")?,
            )
        };
        let to = bookmark.map_or(RestoreTo::Time(at_ms), |b| RestoreTo::Bookmark(b.to_owned()));
        let done = host
            .host
            .restore(&key, &to)
            .map_err(|e| Failure::reworded(e, |e| format!("restoring {key}: {e}")))?;
        Ok(Box::into_raw(Box::new(WkhRestored {
            from: owned(done.from),
            at: owned(done.at),
            undo: owned(done.undo),
        })))
    })
}

/// Frees what `wkh_restore` returned. NULL does nothing.
///
/// # Safety
/// `restored` is NULL or from `wkh_restore`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_restored_free(restored: *mut WkhRestored) {
    if !restored.is_null() {
        // SAFETY: made by wkh_restore, freed once; its strings by `owned`.
        unsafe {
            let r = Box::from_raw(restored);
            free_owned(r.from);
            free_owned(r.at);
            free_owned(r.undo);
        }
    }
}
