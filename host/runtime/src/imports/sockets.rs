//! `wasmkeep:actor/sockets`: the actor's messages to its sockets' clients.

use super::HostState;
use super::R;
use crate::bindings::sockets;
use crate::bindings::types;
use crate::http_types::SocketMessage;

impl sockets::Host for HostState {
    fn send(&mut self, socket: u64, message: types::Message) -> R<Result<(), sockets::SocketError>> {
        let msg = match message {
            types::Message::Text(t) => SocketMessage::Text(t),
            types::Message::Binary(b) => SocketMessage::Binary(b),
        };
        Ok(self
            .node
            .socket_send(&self.key, socket, msg)
            // Either way the guest's socket is no longer open.
            .map_err(|_gone| sockets::SocketError::NotOpen))
    }

    fn close(&mut self, socket: u64, code: u16, reason: String) -> R<Result<(), sockets::SocketError>> {
        Ok(self
            .node
            .socket_close(&self.key, socket, code, reason)
            // Either way the guest's socket is no longer open.
            .map_err(|_gone| sockets::SocketError::NotOpen))
    }

    fn open_sockets(&mut self) -> R<Vec<u64>> {
        Ok(self.node.sockets_of(&self.key))
    }
}
