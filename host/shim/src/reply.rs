//! The admin and dashboard APIs' answers: JSON, and failures named by their
//! kind (`{"error", "kind"}` and the `wasmkeep-failure` header), so the page,
//! scripts and tests match on the kind rather than the words.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use wasmkeep_host::{FAILURE_HEADER, FailureKind};

/// A 200 with `body`.
pub(crate) fn ok(body: Value) -> Response {
    axum::Json(body).into_response()
}

/// A failure of `kind` with `status` (which may differ from the kind's own
/// status: a refused query is the client's fault, 4xx, though its kind is `sql`).
pub(crate) fn failure(status: StatusCode, kind: FailureKind, message: impl Into<String>) -> Response {
    let mut r = (
        status,
        axum::Json(json!({ "error": message.into(), "kind": kind.as_str() })),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(kind.as_str()) {
        r.headers_mut().insert(FAILURE_HEADER, v);
    }
    r
}

/// A failure with the status its kind answers with.
pub(crate) fn kind(kind: FailureKind, message: impl Into<String>) -> Response {
    let status = StatusCode::from_u16(kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    failure(status, kind, message)
}

/// A runtime error, with the status its kind answers with.
pub(crate) fn runtime_error(e: &wasmkeep_host::RuntimeError) -> Response {
    kind(e.kind(), e.to_string())
}

/// A request the API cannot read (no kind: nothing failed in the host).
pub(crate) fn bad_request(message: impl Into<String>) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(json!({ "error": message.into() }))).into_response()
}
