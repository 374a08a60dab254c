//! Requests and responses as the library's users see them.

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
}

impl HttpResponse {
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
