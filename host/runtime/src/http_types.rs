//! Requests and responses as the library's users see them.

use crate::failure_kind::{FAILURE_HEADER, FailureKind};

use serde::{Deserialize, Serialize};

/// A request routed to an actor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// What follows `/<class>/<name>`, with the query: `/`, `/items?x=1`.
    pub path: String,
    /// Header names and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// A request with a method, path and body, and no headers.
    pub fn new(method: &str, path: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            method: method.to_owned(),
            path: path.to_owned(),
            headers: Vec::new(),
            body: body.into(),
        }
    }
}

/// An actor's answer (or the host's, when the event failed before answering).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Header names and values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// When the host answered a failure itself (not the guest), its kind;
    /// the `wasmkeep-failure` header names it too, for HTTP clients.
    pub failure: Option<FailureKind>,
    /// When the failure is `holder-unreachable` because a node of another
    /// process holds the actor: which node, and where it answers. The dev
    /// server forwards the request there once (docs/adr/028-node-processes.md).
    /// A typed route, never a header: a client is not told the address.
    #[serde(skip)]
    pub held_elsewhere: Option<Box<crate::error::HeldElsewhere>>,
}

impl HttpResponse {
    /// A failure the host answers itself: the status its kind answers with,
    /// the kind in [`HttpResponse::failure`] and in the `wasmkeep-failure`
    /// header, and `text` (what happened and what to do) as the body.
    pub fn host_failure(kind: FailureKind, text: impl Into<String>) -> Self {
        let mut r = Self::host_text(kind.status(), text);
        r.headers.push((FAILURE_HEADER.into(), kind.as_str().into()));
        r.failure = Some(kind);
        r
    }

    /// A response from the host itself, with a plain-text body. A 503 says
    /// `Retry-After: 1`: each of the host's 503s is worth retrying shortly.
    pub fn host_text(status: u16, text: impl Into<String>) -> Self {
        let mut headers = vec![("content-type".into(), "text/plain; charset=utf-8".into())];
        if status == 503 {
            headers.push(("retry-after".into(), "1".into()));
        }
        Self {
            status,
            headers,
            body: text.into().into_bytes(),
            failure: None,
            held_elsewhere: None,
        }
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A WebSocket message, either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SocketMessage {
    /// A text frame.
    Text(String),
    /// A binary frame.
    Binary(Vec<u8>),
}

/// What the host sends to a socket's client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outbound {
    /// A message from the actor.
    Message(SocketMessage),
    /// The socket is closed with this code and reason.
    Close {
        /// WebSocket close code.
        code: u16,
        /// Close reason.
        reason: String,
    },
}
