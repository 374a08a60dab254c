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

    /// Sends the response now.
    ///
    /// ```no_run
    /// # use wasmkeep_actor::{Responder, Response};
    /// # fn f(responder: Responder) {
    /// responder.send(Response::text(200, "done"));
    /// # }
    /// ```
    pub fn send(self, response: Response) {
        wit::ResponseOutparam::set(self.out, &response.into_wit());
    }
}
