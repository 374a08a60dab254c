//! The actor's open WebSockets.
//!
//! A client opens one with a WebSocket upgrade on `/<class>/<name>/<path>`;
//! the actor hears of it in
//! [`Actor::on_socket_open`](crate::Actor::on_socket_open) and can send to it
//! in any later event, until it closes.
//!
//! ```no_run
//! use wasmkeep_actor::sockets;
//!
//! // Broadcast to every open socket; ignore the ones closing meanwhile.
//! for socket in sockets::open_sockets() {
//!     let _ = sockets::send_text(socket, "hello, all");
//! }
//! ```

use crate::__private::bindings::wasmkeep::actor::{sockets as wit, types as wit_types};

/// Identifies one socket for its whole life; never reused by a host run.
pub type SocketId = u64;

/// A WebSocket message.
///
/// ```
/// use wasmkeep_actor::Message;
///
/// assert_eq!(Message::from("hi"), Message::Text("hi".into()));
/// assert_eq!(Message::from(vec![1u8]), Message::Binary(vec![1]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A text frame.
    Text(String),
    /// A binary frame.
    Binary(Vec<u8>),
}

impl Message {
    pub(crate) fn from_wit(m: wit_types::Message) -> Self {
        match m {
            wit_types::Message::Text(t) => Self::Text(t),
            wit_types::Message::Binary(b) => Self::Binary(b),
        }
    }
}

impl From<String> for Message {
    fn from(v: String) -> Self {
        Self::Text(v)
    }
}

impl From<&str> for Message {
    fn from(v: &str) -> Self {
        Self::Text(v.to_owned())
    }
}

impl From<Vec<u8>> for Message {
    fn from(v: Vec<u8>) -> Self {
        Self::Binary(v)
    }
}

impl From<&[u8]> for Message {
    fn from(v: &[u8]) -> Self {
        Self::Binary(v.to_vec())
    }
}

/// Why a socket call failed.
///
/// ```
/// assert_eq!(wasmkeep_actor::SocketError::NotOpen.to_string(), "socket not open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum SocketError {
    /// The socket is closed, closing, or not one of this actor's.
    #[error("socket not open")]
    NotOpen,
}

fn map_err(e: wit::SocketError) -> SocketError {
    match e {
        wit::SocketError::NotOpen => SocketError::NotOpen,
    }
}

/// Sends a message to one of the actor's sockets.
///
/// ```no_run
/// use wasmkeep_actor::{sockets, Message};
/// # let socket = 1;
/// sockets::send(socket, Message::Binary(vec![0, 1]))?;
/// # Ok::<(), wasmkeep_actor::SocketError>(())
/// ```
///
/// # Errors
///
/// [`SocketError::NotOpen`] if the socket is closed, closing, or not this
/// actor's.
pub fn send(socket: SocketId, message: impl Into<Message>) -> Result<(), SocketError> {
    let message = match message.into() {
        Message::Text(t) => wit_types::Message::Text(t),
        Message::Binary(b) => wit_types::Message::Binary(b),
    };
    wit::send(socket, &message).map_err(map_err)
}

/// Sends a text message.
///
/// ```no_run
/// # let socket = 1;
/// wasmkeep_actor::sockets::send_text(socket, "pong")?;
/// # Ok::<(), wasmkeep_actor::SocketError>(())
/// ```
///
/// # Errors
///
/// [`SocketError::NotOpen`], as [`send`].
pub fn send_text(socket: SocketId, text: &str) -> Result<(), SocketError> {
    send(socket, Message::Text(text.to_owned()))
}

/// Sends a binary message.
///
/// ```no_run
/// # let socket = 1;
/// wasmkeep_actor::sockets::send_binary(socket, &[1, 2, 3])?;
/// # Ok::<(), wasmkeep_actor::SocketError>(())
/// ```
///
/// # Errors
///
/// [`SocketError::NotOpen`], as [`send`].
pub fn send_binary(socket: SocketId, bytes: &[u8]) -> Result<(), SocketError> {
    send(socket, Message::Binary(bytes.to_vec()))
}

/// Closes a socket with a WebSocket close code (1000 normal, 4000-4999 the
/// app's own) and a reason. Its
/// [`Actor::on_socket_close`](crate::Actor::on_socket_close) event follows.
///
/// ```no_run
/// # let socket = 1;
/// wasmkeep_actor::sockets::close(socket, 4001, "kicked")?;
/// # Ok::<(), wasmkeep_actor::SocketError>(())
/// ```
///
/// # Errors
///
/// [`SocketError::NotOpen`] if the socket is already closed or closing, or
/// not this actor's.
pub fn close(socket: SocketId, code: u16, reason: &str) -> Result<(), SocketError> {
    wit::close(socket, code, reason).map_err(map_err)
}

/// The actor's open sockets.
///
/// ```no_run
/// let n = wasmkeep_actor::sockets::open_sockets().len();
/// ```
pub fn open_sockets() -> Vec<SocketId> {
    wit::open_sockets()
}
