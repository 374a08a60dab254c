//! HTTP requests routed to the actor and the answers to them.
//!
//! A request for `/<class>/<name>/<path>` reaches the actor as a
//! [`Request`]; the actor answers with a [`Response`], either by returning it
//! from [`Actor::on_request`](crate::Actor::on_request) or by sending it early
//! through a [`Responder`] in
//! [`Actor::on_request_with`](crate::Actor::on_request_with).

use crate::__private::bindings::wasmkeep::actor::http as wit;

/// A request routed to this actor.
///
/// ```
/// use wasmkeep_actor::Request;
///
/// let request = Request {
///     method: "POST".into(),
///     path: "/items?page=2".into(),
///     headers: vec![("Content-Type".into(), "text/plain".into())],
///     body: b"hello".to_vec(),
/// };
/// assert_eq!(request.path_only(), "/items");
/// assert_eq!(request.query(), Some("page=2"));
/// assert_eq!(request.header("content-type"), Some("text/plain"));
/// assert_eq!(request.text().unwrap(), "hello");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Request {
    /// The method, upper case: `GET`, `POST`, ...
    pub method: String,
    /// What follows `/<class>/<name>`, with the query string: `/`,
    /// `/items?page=2`.
    pub path: String,
    /// The headers in the order received. Names are compared
    /// case-insensitively by [`Request::header`].
    pub headers: Vec<(String, String)>,
    /// The body (empty when there is none).
    pub body: Vec<u8>,
}

impl Request {
    pub(crate) fn from_wit(r: wit::Request) -> Self {
        Self {
            method: r.method,
            path: r.path,
            headers: r.headers,
            body: r.body,
        }
    }

    /// The first header with this name (ASCII case-insensitive).
    ///
    /// ```
    /// # use wasmkeep_actor::Request;
    /// let r = Request { headers: vec![("X-Id".into(), "7".into())], ..Default::default() };
    /// assert_eq!(r.header("x-id"), Some("7"));
    /// assert_eq!(r.header("x-other"), None);
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The path without its query string.
    ///
    /// ```
    /// # use wasmkeep_actor::Request;
    /// let r = Request { path: "/a/b?x=1".into(), ..Default::default() };
    /// assert_eq!(r.path_only(), "/a/b");
    /// ```
    pub fn path_only(&self) -> &str {
        self.path.split_once('?').map_or(&self.path, |(p, _)| p)
    }

    /// The query string (after `?`, undecoded), if any.
    ///
    /// ```
    /// # use wasmkeep_actor::Request;
    /// let r = Request { path: "/a?x=1&y=2".into(), ..Default::default() };
    /// assert_eq!(r.query(), Some("x=1&y=2"));
    /// ```
    pub fn query(&self) -> Option<&str> {
        self.path.split_once('?').map(|(_, q)| q)
    }

    /// The query string's `name=value` pairs, in order, decoded as a form
    /// is (`+` is a space, `%XX` a byte; bytes that are not UTF-8 become
    /// U+FFFD). A pair without `=` has an empty value.
    ///
    /// ```
    /// # use wasmkeep_actor::Request;
    /// let r = Request { path: "/deposit?op=a%2F1&note=two+words&flag".into(), ..Default::default() };
    /// assert_eq!(
    ///     r.query_pairs(),
    ///     [("op".into(), "a/1".into()), ("note".into(), "two words".into()), ("flag".into(), String::new())]
    /// );
    /// ```
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        self.query()
            .unwrap_or("")
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                (form_decode(name), form_decode(value))
            })
            .collect()
    }

    /// The decoded value of the first query parameter called `name`, if any.
    ///
    /// ```
    /// # use wasmkeep_actor::Request;
    /// let r = Request { path: "/deposit?op=7&amount=25".into(), ..Default::default() };
    /// assert_eq!(r.query_param("amount").as_deref(), Some("25"));
    /// assert_eq!(r.query_param("missing"), None);
    /// ```
    pub fn query_param(&self, name: &str) -> Option<String> {
        self.query_pairs().into_iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The body as UTF-8 text.
    ///
    /// ```
    /// # use wasmkeep_actor::Request;
    /// let r = Request { body: b"hi".to_vec(), ..Default::default() };
    /// assert_eq!(r.text().unwrap(), "hi");
    /// ```
    ///
    /// # Errors
    ///
    /// [`core::str::Utf8Error`] if the body is not valid UTF-8.
    pub fn text(&self) -> Result<&str, core::str::Utf8Error> {
        core::str::from_utf8(&self.body)
    }
}

/// The actor's answer to a request.
///
/// ```
/// use wasmkeep_actor::Response;
///
/// let r = Response::text(201, "created").with_header("Location", "/items/7");
/// assert_eq!(r.status, 201);
/// assert_eq!(r.body, b"created");
/// assert_eq!(r.headers[0].0, "content-type");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A response with this status, no headers and an empty body.
    ///
    /// ```
    /// # use wasmkeep_actor::Response;
    /// assert_eq!(Response::new(204).body.len(), 0);
    /// ```
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A `text/plain; charset=utf-8` response.
    ///
    /// ```
    /// # use wasmkeep_actor::Response;
    /// let r = Response::text(200, format!("{} items", 3));
    /// assert_eq!(r.body, b"3 items");
    /// ```
    pub fn text(status: u16, body: impl Into<String>) -> Self {
        Self::new(status)
            .with_header("content-type", "text/plain; charset=utf-8")
            .with_body(body.into().into_bytes())
    }

    /// An `application/json` response from already serialized JSON text.
    ///
    /// ```
    /// # use wasmkeep_actor::Response;
    /// let r = Response::json(200, r#"{"ok":true}"#);
    /// assert_eq!(r.headers[0].1, "application/json");
    /// ```
    pub fn json(status: u16, json: impl Into<String>) -> Self {
        Self::new(status)
            .with_header("content-type", "application/json")
            .with_body(json.into().into_bytes())
    }

    /// `404 Not Found` with the text body "not found".
    ///
    /// ```
    /// # use wasmkeep_actor::Response;
    /// assert_eq!(Response::not_found().status, 404);
    /// ```
    pub fn not_found() -> Self {
        Self::text(404, "not found")
    }

    /// Adds a header.
    ///
    /// ```
    /// # use wasmkeep_actor::Response;
    /// let r = Response::new(200).with_header("cache-control", "no-store");
    /// assert_eq!(r.headers, vec![("cache-control".to_string(), "no-store".to_string())]);
    /// ```
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Replaces the body.
    ///
    /// ```
    /// # use wasmkeep_actor::Response;
    /// let r = Response::new(200).with_body(vec![1, 2, 3]);
    /// assert_eq!(r.body, [1, 2, 3]);
    /// ```
    #[must_use]
    pub fn with_body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// The answer when what a request would acknowledge is not known to be
    /// kept (`flush`, `exec_durable` or `delete_self_durable` answered
    /// `Internal`): `503` with `retry-after: 1` and `wasmkeep-failure:
    /// not-acknowledged`, the kind the host names the same failure by in its
    /// own answers, so that a client knows to retry. [`Responder::send`]
    /// answers it by itself when the writes before the answer were not kept;
    /// a failed durable delete, which may be called again, answers it too.
    ///
    /// ```
    /// # use wasmkeep_actor::{Response, SqlError};
    /// let r = Response::not_kept(&SqlError::Internal("the upload failed".into()));
    /// assert_eq!(r.status, 503);
    /// assert!(r.headers.contains(&("wasmkeep-failure".into(), "not-acknowledged".into())));
    /// ```
    pub fn not_kept(e: &crate::SqlError) -> Self {
        Self::text(
            503,
            format!("the writes of this request are not known to be kept ({e}); try again"),
        )
        .with_header("retry-after", "1")
        .with_header("wasmkeep-failure", "not-acknowledged")
    }

    fn into_wit(self) -> wit::Response {
        wit::Response {
            status: self.status,
            headers: self.headers,
            body: self.body,
        }
    }
}

/// Sends the answer to the current request. The answer goes out the moment
/// [`send`](Responder::send) is called, before the event ends and whatever
/// the event does afterwards (a delete, a panic).
///
/// A request is answered once: `send` consumes the responder. A responder
/// dropped without sending makes the host answer `500`.
///
/// ```no_run
/// use wasmkeep_actor::{storage, Actor, Request, Responder, Response};
///
/// struct Ephemeral;
///
/// impl Actor for Ephemeral {
///     fn on_request_with(_request: Request, responder: Responder) {
///         responder.send(Response::text(200, "goodbye"));
///         // The answer is already out; now delete, whatever happens.
///         let _ = storage::delete_self_durable();
///     }
/// }
/// # wasmkeep_actor::export!(Ephemeral);
/// ```
#[derive(Debug)]
#[must_use = "a request whose responder is dropped unsent is answered 500"]
pub struct Responder {
    out: wit::ResponseOutparam,
}

impl Responder {
    pub(crate) fn new(out: wit::ResponseOutparam) -> Self {
        Self { out }
    }

    /// Sends the response once the event's writes so far are kept
    /// ([`storage::flush`](crate::storage::flush)): a `200` then promises
    /// what it acknowledges, in a cluster too. If they are not known to be
    /// kept, the client is answered `503` (with `retry-after`) instead, so it
    /// retries; an answer of 500 or more goes out as it is.
    ///
    /// ```no_run
    /// # use wasmkeep_actor::{Responder, Response};
    /// # fn f(responder: Responder) {
    /// responder.send(Response::text(200, "done"));
    /// # }
    /// ```
    pub fn send(self, response: Response) {
        let response = match crate::storage::flush() {
            Err(e) if response.status < 500 => Response::not_kept(&e),
            _ => response,
        };
        self.send_before_kept(response);
    }

    /// Sends the response now, without waiting for the event's writes to be
    /// kept: in a cluster they are uploaded when the event ends, after the
    /// answer, and may be lost. For answers that acknowledge no write, or to
    /// answer before a slow step whose outcome the client does not wait for.
    ///
    /// ```no_run
    /// # use wasmkeep_actor::{Responder, Response};
    /// # fn f(responder: Responder) {
    /// responder.send_before_kept(Response::text(202, "accepted; not yet kept"));
    /// # }
    /// ```
    pub fn send_before_kept(self, response: Response) {
        wit::ResponseOutparam::set(self.out, &response.into_wit());
    }
}

/// Decodes one part of a query string as a form does (`+` a space, `%XX` a
/// byte). Written here rather than taken from a crate: it is these few lines,
/// and every guest would otherwise compile one more dependency.
fn form_decode(part: &str) -> String {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (
                    bytes.get(i + 1).copied().and_then(hex),
                    bytes.get(i + 2).copied().and_then(hex),
                ) {
                    (Some(h), Some(l)) => {
                        #[allow(clippy::cast_possible_truncation, reason = "two hex digits are below 256")]
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
