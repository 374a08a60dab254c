//! The prebuilt driver: the harness library of a release
//! (`libwasmkeep_c_harness`, the C SDK's harness, with the whole host in
//! it), loaded at start, so that a project's `cargo test` compiles no host
//! (ADR 035). Its chaos loop is the library's `wkh_run_chaos_seeds` (`chaos`).

// The harness header's declarations, written by `cargo xtask gen` (ADR 081),
// laid out as rustfmt would; left as written.
#[rustfmt::skip]
mod ffi_generated;
mod chaos;
mod locate;

use crate::driver::{HarnessError, HostDriver, HostSetup, Verb};
use crate::types::{
    Access, ActorKey, AdminDeleted, CallFailure, DeletionStatus, HistoryPosition, HttpResponse, LogLine, Outbound,
    RestoreTo, Restored, SocketMessage,
};
pub(crate) use chaos::run_chaos;
use ffi_generated::{self as ffi, Api};
use std::ffi::{CStr, CString, c_char};
use std::path::Path;
use std::time::Duration;

/// A host of the harness library.
pub(crate) struct PrebuiltHost {
    api: &'static Api,
    host: *mut ffi::WkhHost,
}

// SAFETY: the library's host is shared by the threads of a test (its verbs
// take `const wkh_host *` and lock inside); `reset` and `restart_host` take
// `&mut self`, so nothing else uses it meanwhile.
unsafe impl Send for PrebuiltHost {}
// SAFETY: as above.
unsafe impl Sync for PrebuiltHost {}

/// A Rust string as C's: a NUL inside is the caller's mistake, said plainly.
fn c(s: &str) -> Result<CString, HarnessError> {
    CString::new(s).map_err(|_| HarnessError::new(format!("{s:?} holds a NUL byte, which the host cannot take")))
}

/// Owned C strings of an actor's address, in the ABI's order.
struct Key(CString, CString, CString);

impl Key {
    fn of(key: &ActorKey) -> Result<Self, HarnessError> {
        Ok(Self(c(&key.app)?, c(&key.class)?, c(&key.name)?))
    }
}

/// Copies `len` bytes at `data` (NULL or empty: none).
///
/// # Safety
/// `data` is NULL or valid for `len` bytes.
unsafe fn bytes(data: *const u8, len: usize) -> Vec<u8> {
    if data.is_null() || len == 0 {
        Vec::new()
    } else {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts(data, len) }.to_vec()
    }
}

/// Copies a NUL-terminated string (NULL: empty).
///
/// # Safety
/// `s` is NULL or NUL-terminated.
unsafe fn text(s: *const c_char) -> String {
    if s.is_null() {
        String::new()
    } else {
        // SAFETY: per the contract.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }
}

/// What the library said about the last failed call on this thread.
fn last_error(api: &Api) -> HarnessError {
    // SAFETY: both are static or thread-owned NUL-terminated strings, or NULL.
    let (message, kind) = unsafe { ((api.wkh_last_error)(), (api.wkh_last_error_kind)()) };
    HarnessError {
        // SAFETY: as above.
        message: unsafe { text(message) },
        kind: (!kind.is_null()).then(|| {
            // SAFETY: as above.
            unsafe { text(kind) }
        }),
    }
}

impl PrebuiltHost {
    /// Loads the library (once per process) and starts a host.
    ///
    /// # Errors
    /// The library is missing or of another version, or the host cannot start.
    pub(crate) fn start(setup: &HostSetup) -> Verb<Self> {
        let api = locate::api()?;
        let nodes = setup.nodes.unwrap_or(1);
        if nodes == 0 {
            // The library reads 0 as "one node"; the host compiled in refuses it.
            return Err(HarnessError {
                message: "nodes = 0: a test host runs 1 node or more (1 is a single node, 2 or more a local cluster)"
                    .into(),
                kind: Some("bad-nodes".into()),
            });
        }
        let options = ffi::WkhHostOptions {
            data_dir: std::ptr::null(),
            cache_dir: std::ptr::null(),
            event_timeout_ms: setup
                .event_timeout
                .map_or(0, |d| u32::try_from(d.as_millis()).unwrap_or(u32::MAX).max(1)),
            idle_timeout_ms: 0,
            nodes: u32::try_from(nodes).map_err(|_| HarnessError::new(format!("{nodes} nodes are too many")))?,
            history: u32::from(setup.history),
        };
        let me = Self {
            api,
            // SAFETY: valid options, no strings.
            host: unsafe { (api.wkh_host_new)(&raw const options) },
        };
        if me.host.is_null() {
            return Err(me.last_error());
        }
        Ok(me)
    }

    /// What the library said about the last failed call on this thread.
    fn last_error(&self) -> HarnessError {
        last_error(self.api)
    }

    fn ptr(&self) -> *const ffi::WkhHost {
        self.host
    }

    /// 0 is success; anything else, the last error.
    fn status(&self, rc: i32) -> Verb<()> {
        if rc == 0 { Ok(()) } else { Err(self.last_error()) }
    }

    /// A string the library allocated, copied and freed; NULL: the last error.
    fn owned_string(&self, s: *mut c_char) -> Verb<String> {
        if s.is_null() {
            return Err(self.last_error());
        }
        // SAFETY: a NUL-terminated string of the library, freed once here.
        unsafe {
            let out = text(s);
            (self.api.wkh_string_free)(s);
            Ok(out)
        }
    }

    fn json(&self, s: *mut c_char, what: &str) -> Verb<serde_json::Value> {
        let s = self.owned_string(s)?;
        serde_json::from_str(&s)
            .map_err(|e| HarnessError::new(format!("the harness library's {what} is not JSON: {e}")))
    }

    /// A node's number for the library, where 0 means "the default node":
    /// nodes are numbered from 1, so 0 is refused here as the host compiled
    /// in refuses it.
    fn node(n: usize) -> Verb<u32> {
        u32::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| HarnessError {
            message: format!("there is no node {n}: nodes are numbered from 1"),
            kind: Some("no-such-node".into()),
        })
    }

    /// Runs `call`, whose NULL or 0 answer means "nothing" as well as a
    /// failure: with the last error cleared first, a failure is one that is
    /// set afterwards.
    fn clear_then<T>(&self, call: impl FnOnce() -> T) -> (T, Option<HarnessError>) {
        // SAFETY: no arguments; it only clears this thread's last error.
        unsafe { (self.api.wkh_clear_last_error)() };
        let out = call();
        // SAFETY: a static or thread-owned string, or NULL.
        let failed = !unsafe { (self.api.wkh_last_error)() }.is_null();
        (out, failed.then(|| self.last_error()))
    }
}

impl Drop for PrebuiltHost {
    fn drop(&mut self) {
        // SAFETY: made by wkh_host_new, freed once.
        unsafe { (self.api.wkh_host_free)(self.host) };
    }
}

impl HostDriver for PrebuiltHost {
    fn add_class(&self, app: &str, class: &str, component: &Path, access: Access) -> Verb<()> {
        let (app, name) = (c(app)?, c(class)?);
        let component = c(&component.to_string_lossy())?;
        let spec = ffi::WkhClass {
            name: name.as_ptr(),
            component: component.as_ptr(),
            access: match access {
                Access::Open => ffi::WKH_ACCESS_OPEN,
                Access::Existing => ffi::WKH_ACCESS_EXISTING,
                Access::Internal => ffi::WKH_ACCESS_INTERNAL,
            },
        };
        // SAFETY: a live host; the strings outlive the call.
        self.status(unsafe { (self.api.wkh_add_app)(self.ptr(), app.as_ptr(), &raw const spec, 1) })
    }

    fn request(
        &self,
        key: &ActorKey,
        method: &str,
        path: &str,
        body: &[u8],
        node: Option<usize>,
    ) -> Verb<HttpResponse> {
        let k = Key::of(key)?;
        let (method, path) = (c(method)?, c(path)?);
        // SAFETY: a live host; the strings and body outlive the call; no headers.
        let r = unsafe {
            match node {
                None => (self.api.wkh_request)(
                    self.ptr(),
                    k.0.as_ptr(),
                    k.1.as_ptr(),
                    k.2.as_ptr(),
                    method.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    0,
                    body.as_ptr(),
                    body.len(),
                ),
                Some(n) => (self.api.wkh_request_on)(
                    self.ptr(),
                    Self::node(n)?,
                    k.0.as_ptr(),
                    k.1.as_ptr(),
                    k.2.as_ptr(),
                    method.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    0,
                    body.as_ptr(),
                    body.len(),
                ),
            }
        };
        if r.is_null() {
            return Err(self.last_error());
        }
        // SAFETY: a response of the library, read then freed once.
        unsafe {
            let resp = &*r;
            let headers = if resp.headers.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(resp.headers, resp.header_count)
                    .iter()
                    .map(|h| (text(h.name), text(h.value)))
                    .collect()
            };
            let out = HttpResponse {
                status: resp.status,
                headers,
                body: bytes(resp.body, resp.body_len),
            };
            (self.api.wkh_response_free)(r);
            Ok(out)
        }
    }

    fn call(&self, key: &ActorKey, payload: &[u8]) -> Verb<Result<Vec<u8>, CallFailure>> {
        let k = Key::of(key)?;
        // SAFETY: a live host; the strings and payload outlive the call.
        let r = unsafe {
            (self.api.wkh_call)(
                self.ptr(),
                k.0.as_ptr(),
                k.1.as_ptr(),
                k.2.as_ptr(),
                payload.as_ptr(),
                payload.len(),
            )
        };
        if r.is_null() {
            return Err(self.last_error());
        }
        // SAFETY: a call result of the library, read then freed once.
        unsafe {
            let data = bytes((*r).data, (*r).len);
            let status = (*r).status;
            (self.api.wkh_call_result_free)(r);
            let message = || String::from_utf8_lossy(&data).into_owned();
            Ok(match status {
                ffi::WKH_CALL_STATUS_OK => Ok(data),
                ffi::WKH_CALL_STATUS_REFUSED => Err(CallFailure::Refused(message())),
                ffi::WKH_CALL_STATUS_REJECTED => Err(CallFailure::Rejected(message())),
                _ => Err(CallFailure::Failed(message())),
            })
        }
    }

    fn settle(&self, key: &ActorKey) -> Verb<()> {
        let k = Key::of(key)?;
        // SAFETY: a live host; the strings outlive the call.
        self.status(unsafe { (self.api.wkh_settle)(self.ptr(), k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr()) })
    }

    fn now_ms(&self) -> Verb<u64> {
        // SAFETY: a live host. Its clock is never 0; 0 is a failure.
        let now = unsafe { (self.api.wkh_now)(self.ptr()) };
        if now == 0 { Err(self.last_error()) } else { Ok(now) }
    }

    fn advance_clock(&self, ms: u64) -> Verb<u64> {
        // SAFETY: a live host.
        let now = unsafe { (self.api.wkh_advance_clock)(self.ptr(), ms) };
        if now == 0 { Err(self.last_error()) } else { Ok(now) }
    }

    fn advance_clock_running_due(&self, ms: u64) -> Verb<(u64, usize)> {
        let mut ran = 0usize;
        // SAFETY: a live host; `ran` outlives the call.
        let now = unsafe { (self.api.wkh_advance_clock_running_due)(self.ptr(), ms, &raw mut ran) };
        if now == 0 {
            Err(self.last_error())
        } else {
            Ok((now, ran))
        }
    }

    fn run_due_alarms(&self) -> Verb<usize> {
        // SAFETY: a live host.
        match self.clear_then(|| unsafe { (self.api.wkh_run_due_alarms)(self.ptr()) }) {
            (_, Some(e)) => Err(e),
            (ran, None) => Ok(ran),
        }
    }

    fn run_alarm(&self, node: Option<usize>, key: &ActorKey) -> Verb<bool> {
        let k = Key::of(key)?;
        let node = node.map_or(Ok(0), Self::node)?;
        // SAFETY: a live host; the strings outlive the call.
        match unsafe { (self.api.wkh_run_alarm)(self.ptr(), node, k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr()) } {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(self.last_error()),
        }
    }

    fn tables(&self, key: &ActorKey) -> Verb<serde_json::Value> {
        let k = Key::of(key)?;
        // SAFETY: a live host; the strings outlive the call.
        let s = unsafe { (self.api.wkh_tables_json)(self.ptr(), k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr()) };
        self.json(s, "tables")
    }

    fn exists(&self, key: &ActorKey) -> Verb<bool> {
        let k = Key::of(key)?;
        // SAFETY: a live host; the strings outlive the call.
        match unsafe { (self.api.wkh_exists)(self.ptr(), k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr()) } {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(self.last_error()),
        }
    }

    fn logs_of(&self, key: &ActorKey) -> Verb<Vec<LogLine>> {
        // SAFETY: a live host.
        let all = self.json(unsafe { (self.api.wkh_logs_json)(self.ptr()) }, "logs")?;
        let actor = key.to_string();
        let field = |l: &serde_json::Value, name: &str| l[name].as_str().unwrap_or_default().to_owned();
        Ok(all
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|l| l["actor"] == actor.as_str())
            .map(|l| LogLine {
                at: l["at"].as_u64().unwrap_or_default(),
                actor: field(l, "actor"),
                level: field(l, "level"),
                message: field(l, "message"),
            })
            .collect())
    }

    fn arm_fault(&self, node: Option<usize>, name: &str, count: u32) -> Verb<()> {
        let name = c(name)?;
        // SAFETY: a live host; the string outlives the call.
        self.status(unsafe {
            match node {
                None => (self.api.wkh_arm_fault)(self.ptr(), name.as_ptr(), count),
                Some(n) => (self.api.wkh_arm_fault_on)(self.ptr(), Self::node(n)?, name.as_ptr(), count),
            }
        })
    }

    fn restart(&self, key: &ActorKey) -> Verb<()> {
        let k = Key::of(key)?;
        // SAFETY: a live host; the strings outlive the call.
        self.status(unsafe { (self.api.wkh_restart)(self.ptr(), k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr()) })
    }

    fn operator_delete(&self, key: &ActorKey) -> Verb<AdminDeleted> {
        let k = Key::of(key)?;
        let mut outcome = -1;
        // SAFETY: a live host; the strings and `outcome` outlive the call.
        self.status(unsafe {
            (self.api.wkh_operator_delete)(self.ptr(), k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr(), &raw mut outcome)
        })?;
        Ok(match outcome {
            ffi::WKH_ADMIN_DELETED_DELETED => AdminDeleted::Deleted,
            ffi::WKH_ADMIN_DELETED_REMOVED_UNOPENABLE => AdminDeleted::RemovedUnopenable,
            _ => AdminDeleted::Absent,
        })
    }

    fn deletion_status(&self, key: &ActorKey) -> Verb<DeletionStatus> {
        let k = Key::of(key)?;
        // SAFETY: a live host; the strings outlive the call.
        let d = unsafe { (self.api.wkh_deletion_status)(self.ptr(), k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr()) };
        if d.is_null() {
            return Err(self.last_error());
        }
        // SAFETY: a deletion of the library, read then freed once.
        unsafe {
            let out = match (*d).kind {
                ffi::WKH_DELETION_KIND_DELETED => DeletionStatus::Deleted {
                    at_ms: (*d).at_ms,
                    how: text((*d).how),
                },
                ffi::WKH_DELETION_KIND_UNKNOWN => DeletionStatus::Unknown {
                    reason: text((*d).reason),
                },
                _ => DeletionStatus::NotDeleted,
            };
            (self.api.wkh_deletion_free)(d);
            Ok(out)
        }
    }

    fn reset(&mut self) -> Verb<()> {
        // SAFETY: a live host nothing else uses meanwhile (`&mut self`).
        self.status(unsafe { (self.api.wkh_reset)(self.host) })
    }

    fn restart_host(&mut self) -> Verb<()> {
        // SAFETY: as `reset`.
        self.status(unsafe { (self.api.wkh_restart_host)(self.host) })
    }

    fn history(&self, key: &ActorKey) -> Verb<Vec<HistoryPosition>> {
        let k = Key::of(key)?;
        // SAFETY: a live host; the strings outlive the call.
        let s = unsafe { (self.api.wkh_history)(self.ptr(), k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr()) };
        let list = self.json(s, "history")?;
        let field = |p: &serde_json::Value, name: &str| p[name].as_str().unwrap_or_default().to_owned();
        Ok(list
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|p| HistoryPosition {
                bookmark: field(p, "bookmark"),
                kind: field(p, "kind"),
                at: p["at"].as_u64().unwrap_or_default(),
                head: p["head"].as_bool().unwrap_or_default(),
            })
            .collect())
    }

    fn restore(&self, key: &ActorKey, to: &RestoreTo) -> Verb<Restored> {
        let k = Key::of(key)?;
        let (bookmark, at_ms) = match to {
            RestoreTo::Bookmark(b) => (Some(c(b)?), 0),
            RestoreTo::Time(ms) => (None, *ms),
        };
        let bookmark_ptr = bookmark.as_ref().map_or(std::ptr::null(), |b| b.as_ptr());
        // SAFETY: a live host; the strings outlive the call; NULL asks for the time.
        let r = unsafe {
            (self.api.wkh_restore)(
                self.ptr(),
                k.0.as_ptr(),
                k.1.as_ptr(),
                k.2.as_ptr(),
                bookmark_ptr,
                at_ms,
            )
        };
        if r.is_null() {
            return Err(self.last_error());
        }
        // SAFETY: a restore's answer of the library, read then freed once.
        unsafe {
            let out = Restored {
                from: text((*r).from),
                at: text((*r).at),
                undo: text((*r).undo),
            };
            (self.api.wkh_restored_free)(r);
            Ok(out)
        }
    }

    fn hibernate_all(&self) -> Verb<()> {
        // SAFETY: a live host.
        self.status(unsafe { (self.api.wkh_hibernate_all)(self.ptr()) })
    }

    fn open_socket(&self, key: &ActorKey, path: &str) -> Verb<u64> {
        let k = Key::of(key)?;
        let path = c(path)?;
        // SAFETY: a live host; the strings outlive the call.
        let id =
            unsafe { (self.api.wkh_socket_open)(self.ptr(), k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr(), path.as_ptr()) };
        if id == 0 { Err(self.last_error()) } else { Ok(id) }
    }

    fn socket_send_text(&self, id: u64, text: &str) -> Verb<()> {
        let text = c(text)?;
        // SAFETY: a live host; the string outlives the call.
        self.status(unsafe { (self.api.wkh_socket_send_text)(self.ptr(), id, text.as_ptr()) })
    }

    fn socket_take(&self, id: u64) -> Verb<Vec<Outbound>> {
        let mut out = Vec::new();
        loop {
            // SAFETY: a live host. NULL is "nothing waiting" or a failure.
            let (o, failed) = self.clear_then(|| unsafe { (self.api.wkh_socket_take)(self.ptr(), id) });
            if o.is_null() {
                return failed.map_or(Ok(out), Err);
            }
            // SAFETY: an outbound of the library, read then freed once.
            unsafe {
                let data = bytes((*o).data, (*o).len);
                out.push(match (*o).kind {
                    ffi::WKH_OUTBOUND_KIND_TEXT => {
                        Outbound::Message(SocketMessage::Text(String::from_utf8_lossy(&data).into()))
                    }
                    ffi::WKH_OUTBOUND_KIND_BINARY => Outbound::Message(SocketMessage::Binary(data)),
                    _ => Outbound::Close {
                        code: (*o).code,
                        reason: String::from_utf8_lossy(&data).into(),
                    },
                });
                (self.api.wkh_outbound_free)(o);
            }
        }
    }

    fn cut_off(&self, n: usize) -> Verb<()> {
        // SAFETY: a live host.
        self.status(unsafe { (self.api.wkh_cut_off)(self.ptr(), Self::node(n)?) })
    }

    fn request_operator_delete(&self, key: &ActorKey) -> Verb<String> {
        let k = Key::of(key)?;
        // SAFETY: a live host; the strings outlive the call.
        self.owned_string(unsafe {
            (self.api.wkh_request_operator_delete)(self.ptr(), k.0.as_ptr(), k.1.as_ptr(), k.2.as_ptr())
        })
    }

    fn set_expire_after_idle(&self, app: &str, class: &str, limit: Option<Duration>) -> Verb<()> {
        let (app, class) = (c(app)?, c(class)?);
        // 0 removes the limit; a limit under 1 ms is below the host's hour anyway.
        let ms = limit.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1));
        // SAFETY: a live host; the strings outlive the call.
        self.status(unsafe { (self.api.wkh_set_expire_after_idle)(self.ptr(), app.as_ptr(), class.as_ptr(), ms) })
    }

    fn run_expiry_passes(&self) -> Verb<usize> {
        // SAFETY: a live host.
        match self.clear_then(|| unsafe { (self.api.wkh_run_expiry_passes)(self.ptr()) }) {
            (_, Some(e)) => Err(e),
            (expired, None) => Ok(expired),
        }
    }

    fn delete_app(&self, app: &str) -> Verb<()> {
        let app = c(app)?;
        // SAFETY: a live host; the string outlives the call.
        self.status(unsafe { (self.api.wkh_delete_app)(self.ptr(), app.as_ptr()) })
    }

    fn start_chaos(&self, seed: u64) -> Verb<()> {
        // SAFETY: a live host.
        self.status(unsafe { (self.api.wkh_chaos_start)(self.ptr(), seed) })
    }

    fn end_chaos(&self) -> Verb<Vec<String>> {
        // SAFETY: a live host.
        let lines = self.owned_string(unsafe { (self.api.wkh_chaos_end)(self.ptr()) })?;
        Ok(lines.lines().map(str::to_owned).collect())
    }

    fn prebuilt(&self) -> Option<&PrebuiltHost> {
        Some(self)
    }
}
