//! Events a test sends: requests, calls, WebSocket traffic.

use crate::error::{Failure, guard};
use crate::ffi_str::{arg, buffer, bytes, free_buffer, free_owned, owned};
use crate::host::{WkhHost, actor_key};
use std::ffi::c_char;
use std::io::Write as _;
use wasmkeep_host::{CallFailure, HttpRequest, Outbound, SocketMessage};

/// One header: a name and a value (NUL-terminated).
#[repr(C)]
pub struct WkhHeader {
    /// The header name.
    pub name: *mut c_char,
    /// Its value.
    pub value: *mut c_char,
}

/// An actor's answer to a request (or the host's, when the event failed first).
/// Every pointer in it belongs to it: free the whole with `wkh_response_free`.
#[repr(C)]
pub struct WkhResponse {
    /// The HTTP status.
    pub status: u16,
    /// The body: `body_len` bytes followed by a NUL, so a text body reads as a C string.
    pub body: *mut u8,
    /// The body's length in bytes (without the NUL).
    pub body_len: usize,
    /// The headers, `header_count` of them.
    pub headers: *mut WkhHeader,
    /// How many headers.
    pub header_count: usize,
}

/// How a call ended (the WIT's `call-error`, plus success).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum WkhCallStatus {
    /// `on-call` answered; `data` is its payload.
    Ok = 0,
    /// Not delivered; `data` is the reason.
    Refused = 1,
    /// `on-call` answered an error; `data` is its text.
    Rejected = 2,
    /// The callee's event failed (trap, time limit); `data` says how.
    Failed = 3,
}

/// The outcome of `wkh_call`. Free it with `wkh_call_result_free`.
#[repr(C)]
pub struct WkhCallResult {
    /// How the call ended.
    pub status: WkhCallStatus,
    /// The payload (Ok) or the message (otherwise): `len` bytes then a NUL.
    pub data: *mut u8,
    /// Its length in bytes (without the NUL).
    pub len: usize,
}

/// What a socket's client received from the actor.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum WkhOutboundKind {
    /// A text message: `data` is its UTF-8.
    Text = 0,
    /// A binary message: `data` is its bytes.
    Binary = 1,
    /// The socket was closed: `code`, and `data` is the reason.
    Close = 2,
}

/// One thing the actor sent to a socket's client. Free it with `wkh_outbound_free`.
#[repr(C)]
pub struct WkhOutbound {
    /// Text, binary or close.
    pub kind: WkhOutboundKind,
    /// The message (or close reason): `len` bytes then a NUL.
    pub data: *mut u8,
    /// Its length in bytes (without the NUL).
    pub len: usize,
    /// The close code (Close only; 0 otherwise).
    pub code: u16,
}

/// Sends a request to `node` (`None`: node 1, or the chaos schedule's pick)
/// and converts the answer; shared by `wkh_request` and `wkh_request_on`.
///
/// # Safety
/// As for `wkh_request`.
#[allow(clippy::too_many_arguments, reason = "the C function's arguments, passed on")]
unsafe fn request(
    host: *const WkhHost,
    node: Option<usize>,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
    method: *const c_char,
    path: *const c_char,
    headers: *const WkhHeader,
    header_count: usize,
    body: *const u8,
    body_len: usize,
) -> *mut WkhResponse {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        // SAFETY: per the contract.
        let (method, path, body) = unsafe {
            (
                arg(method, "method")?,
                arg(path, "path")?,
                bytes(body, body_len, "body")?,
            )
        };
        let mut request_headers = Vec::with_capacity(header_count);
        if header_count > 0 {
            if headers.is_null() {
                return Err("headers is NULL with header_count > 0".into());
            }
            // SAFETY: `header_count` valid headers per the contract.
            for h in unsafe { std::slice::from_raw_parts(headers, header_count) } {
                // SAFETY: NUL-terminated per the contract.
                let (k, v) = unsafe { (arg(h.name, "header name")?, arg(h.value, "header value")?) };
                request_headers.push((k.to_owned(), v.to_owned()));
            }
        }
        let mut req = HttpRequest::new(method, path, body.to_vec());
        req.headers = request_headers;
        let answered = host.host.request(&key, req, node).map_err(|e| {
            Failure::reworded(e, |e| match node {
                None => format!("{method} {path} to {key}: {e}"),
                Some(n) => format!("{method} {path} to {key} on node {n}: {e}"),
            })
        })?;
        if let Some(why) = answered.explanation {
            // What the actor logged is what explains a failure.
            let _ = std::io::stderr().lock().write_all(why.as_bytes());
        }
        let answer = answered.response;
        let (body, body_len) = buffer(answer.body);
        let headers: Box<[WkhHeader]> = answer
            .headers
            .into_iter()
            .map(|(k, v)| WkhHeader {
                name: owned(k),
                value: owned(v),
            })
            .collect();
        let header_count = headers.len();
        Ok(Box::into_raw(Box::new(WkhResponse {
            status: answer.status,
            body,
            body_len,
            headers: Box::into_raw(headers).cast(),
            header_count,
        })))
    })
}

/// Sends a request event to an actor and waits for its answer and the end of
/// its event.
///
/// `headers` holds `header_count` name/value pairs (NULL if 0); `body` holds
/// `body_len` bytes (NULL if 0). Returns the answer (free it with
/// `wkh_response_free`) or NULL when the request could not be delivered (no
/// such app or class, an `existing` class with no such actor, ...). An event
/// that failed after delivery is an answer (status 500), not NULL. When the
/// status is 500 or more, the lines the actor logged are written to stderr
/// (`WASMKEEP_HARNESS_QUIET=1` turns that off). In a cluster the request goes
/// to node 1 (under chaos, to the node the schedule picks).
///
/// # Safety
/// `host` is a live host; strings NUL-terminated; `headers` and `body` as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_request(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
    method: *const c_char,
    path: *const c_char,
    headers: *const WkhHeader,
    header_count: usize,
    body: *const u8,
    body_len: usize,
) -> *mut WkhResponse {
    // SAFETY: forwarded contract.
    unsafe {
        request(
            host,
            None,
            app,
            class,
            name,
            method,
            path,
            headers,
            header_count,
            body,
            body_len,
        )
    }
}

/// As `wkh_request`, to node `node` of a cluster (numbered from 1), which
/// serves it or forwards it to the node holding the actor (a node cut off
/// answers 503 once it finds out). Returns NULL (see `wkh_last_error`) for a
/// node the host does not run, and as `wkh_request` does.
///
/// # Safety
/// As for `wkh_request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_request_on(
    host: *const WkhHost,
    node: u32,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
    method: *const c_char,
    path: *const c_char,
    headers: *const WkhHeader,
    header_count: usize,
    body: *const u8,
    body_len: usize,
) -> *mut WkhResponse {
    let node = usize::try_from(node).unwrap_or(usize::MAX);
    // SAFETY: forwarded contract.
    unsafe {
        request(
            host,
            Some(node),
            app,
            class,
            name,
            method,
            path,
            headers,
            header_count,
            body,
            body_len,
        )
    }
}

/// The value of the first header named `name` (ASCII case-insensitive), or
/// NULL. The text belongs to the response.
///
/// # Safety
/// `response` is a live response; `name` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_response_header(response: *const WkhResponse, name: *const c_char) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: per the contract.
        let (r, name) = unsafe { (response.as_ref().ok_or("response is NULL")?, arg(name, "name")?) };
        if r.header_count == 0 {
            return Ok(std::ptr::null());
        }
        // SAFETY: `header_count` headers made by wkh_request.
        let headers = unsafe { std::slice::from_raw_parts(r.headers, r.header_count) };
        for h in headers {
            // SAFETY: made by `owned`.
            let k = unsafe { arg(h.name, "header name")? };
            if k.eq_ignore_ascii_case(name) {
                return Ok(h.value.cast_const());
            }
        }
        Ok(std::ptr::null())
    })
}

/// Frees a response and everything in it. NULL does nothing.
///
/// # Safety
/// `response` is NULL or from `wkh_request`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_response_free(response: *mut WkhResponse) {
    if response.is_null() {
        return;
    }
    // SAFETY: made by Box::into_raw in wkh_request.
    let r = unsafe { Box::from_raw(response) };
    // SAFETY: the buffers and header strings were made by wkh_request, freed once here.
    unsafe {
        free_buffer(r.body, r.body_len);
        let headers = Box::from_raw(std::ptr::slice_from_raw_parts_mut(r.headers, r.header_count));
        for h in headers.iter() {
            free_owned(h.name);
            free_owned(h.value);
        }
    }
}

/// Runs the actor's `on-call` as the host (no caller) with a payload of `len`
/// bytes. Returns the outcome (free it with `wkh_call_result_free`) or NULL
/// when the host could not try (no such app or class).
///
/// # Safety
/// `host` is a live host; strings NUL-terminated; `payload` holds `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_call(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
    payload: *const u8,
    len: usize,
) -> *mut WkhCallResult {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let (host, key, payload) = unsafe {
            (
                WkhHost::from_ptr(host)?,
                actor_key(app, class, name)?,
                bytes(payload, len, "payload")?,
            )
        };
        let outcome = host.host.call(&key, payload.to_vec()).map_err(Failure::from)?;
        let (status, data) = match outcome {
            Ok(b) => (WkhCallStatus::Ok, b),
            Err(CallFailure::Refused { message, .. }) => (WkhCallStatus::Refused, message.into_bytes()),
            Err(CallFailure::Rejected(m)) => (WkhCallStatus::Rejected, m.into_bytes()),
            Err(CallFailure::Failed { message, .. }) => (WkhCallStatus::Failed, message.into_bytes()),
        };
        let (data, len) = buffer(data);
        Ok(Box::into_raw(Box::new(WkhCallResult { status, data, len })))
    })
}

/// Frees a call's outcome. NULL does nothing.
///
/// # Safety
/// `result` is NULL or from `wkh_call`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_call_result_free(result: *mut WkhCallResult) {
    if !result.is_null() {
        // SAFETY: made by wkh_call, freed once.
        unsafe {
            let r = Box::from_raw(result);
            free_buffer(r.data, r.len);
        }
    }
}

/// Opens a WebSocket to an actor on `path` (its `on-socket-open` runs).
/// Returns the socket id (never 0), or 0 on failure.
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_socket_open(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
    path: *const c_char,
) -> u64 {
    guard(0, || {
        // SAFETY: per the contract.
        let (host, key, path) = unsafe {
            (
                WkhHost::from_ptr(host)?,
                actor_key(app, class, name)?,
                arg(path, "path")?,
            )
        };
        host.host.open_socket(&key, path).map_err(Failure::from)
    })
}

/// The client sends a text message (the actor's `on-socket-message` runs).
/// Returns 0, or -1 (no such open socket).
///
/// # Safety
/// `host` is a live host; `text` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_socket_send_text(host: *const WkhHost, socket: u64, text: *const c_char) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, text) = unsafe { (WkhHost::from_ptr(host)?, arg(text, "text")?) };
        let msg = SocketMessage::Text(text.to_owned());
        host.host.socket_send(socket, msg).map_err(Failure::from)?;
        Ok(0)
    })
}

/// The client sends a binary message of `len` bytes. Returns 0 or -1.
///
/// # Safety
/// `host` is a live host; `data` holds `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_socket_send_binary(host: *const WkhHost, socket: u64, data: *const u8, len: usize) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, data) = unsafe { (WkhHost::from_ptr(host)?, bytes(data, len, "data")?) };
        let msg = SocketMessage::Binary(data.to_vec());
        host.host.socket_send(socket, msg).map_err(Failure::from)?;
        Ok(0)
    })
}

/// The client closes the socket with a code and reason (the actor's
/// `on-socket-close` runs). Returns 0 or -1.
///
/// # Safety
/// `host` is a live host; `reason` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_socket_close(host: *const WkhHost, socket: u64, code: u16, reason: *const c_char) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, reason) = unsafe { (WkhHost::from_ptr(host)?, arg(reason, "reason")?) };
        host.host.socket_close(socket, code, reason).map_err(Failure::from)?;
        Ok(0)
    })
}

/// The next thing the actor sent to the socket's client, in order, or NULL
/// when nothing is waiting (`wkh_last_error` is then untouched) or on failure
/// (an id this host did not open: `wkh_last_error` says so). Free it with
/// `wkh_outbound_free`.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_socket_take(host: *const WkhHost, socket: u64) -> *mut WkhOutbound {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_ptr(host)? };
        let next = host
            .host
            .socket_next(socket)
            .map_err(|e| Failure::reworded(e, |e| format!("{e} (wkh_socket_open)")))?;
        let Some(o) = next else {
            return Ok(std::ptr::null_mut());
        };
        let (kind, data, code) = match o {
            Outbound::Message(SocketMessage::Text(t)) => (WkhOutboundKind::Text, t.into_bytes(), 0),
            Outbound::Message(SocketMessage::Binary(b)) => (WkhOutboundKind::Binary, b, 0),
            Outbound::Close { code, reason } => (WkhOutboundKind::Close, reason.into_bytes(), code),
        };
        let (data, len) = buffer(data);
        Ok(Box::into_raw(Box::new(WkhOutbound { kind, data, len, code })))
    })
}

/// Frees what `wkh_socket_take` returned. NULL does nothing.
///
/// # Safety
/// `outbound` is NULL or from `wkh_socket_take`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_outbound_free(outbound: *mut WkhOutbound) {
    if !outbound.is_null() {
        // SAFETY: made by wkh_socket_take, freed once.
        unsafe {
            let o = Box::from_raw(outbound);
            free_buffer(o.data, o.len);
        }
    }
}
