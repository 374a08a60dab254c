//! Every open WebSocket, by id: what the actor sends goes to its client.

use crate::address::ActorKey;
use crate::http_types::{Outbound, SocketMessage};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Semaphore, mpsc as tmpsc};

/// Bytes of messages an actor sent that may wait for a client that does not
/// read; past it the socket is closed with 1008 (ADR 012).
pub(crate) const OUTBOUND_LIMIT: usize = 8 << 20;

/// Bytes of a client's messages that may wait for the actor; past it the
/// host stops reading the socket until the actor catches up (ADR 012).
pub(crate) const INBOUND_BUDGET: usize = 1 << 20;

/// The close code and reason for a client that does not read what its actor sends.
pub(crate) const NOT_READING: (u16, &str) = (
    1008,
    "the client did not read its messages: over 8 MiB were waiting for it",
);

/// Every open socket, by id. Used by every node of a cluster, so that the
/// node holding an actor reaches sockets another node accepted.
#[derive(Default)]
pub struct SocketTable {
    pub(crate) map: Mutex<HashMap<u64, SocketEntry>>,
    next: AtomicU64,
}

impl SocketTable {
    /// A new id, never reused by this table.
    pub(crate) fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::SeqCst) + 1
    }
}

/// One open socket: its actor, its outbound queue (with the bytes waiting in
/// it) and the budget of its client's messages waiting for the actor.
pub(crate) struct SocketEntry {
    pub(crate) key: ActorKey,
    pub(crate) out: tmpsc::UnboundedSender<Outbound>,
    out_waiting: Arc<AtomicUsize>,
    pub(crate) inbound: Arc<Semaphore>,
}

/// Why a message could not be queued for a socket's client.
pub(crate) enum SendRefused {
    /// The client is gone.
    Closed,
    /// Over [`OUTBOUND_LIMIT`] waits for the client already.
    ClientNotReading,
}

impl SocketEntry {
    /// A new socket of `key`, and the receiving end its connection reads.
    pub(crate) fn new(key: ActorKey) -> (Self, OutboundReceiver) {
        let (out, rx) = tmpsc::unbounded_channel();
        let out_waiting = Arc::new(AtomicUsize::new(0));
        let entry = Self {
            key,
            out,
            out_waiting: out_waiting.clone(),
            inbound: Arc::new(Semaphore::new(INBOUND_BUDGET)),
        };
        (entry, OutboundReceiver { rx, out_waiting })
    }

    /// Queues an actor's message for the client, unless too much waits already.
    pub(crate) fn send(&self, msg: SocketMessage) -> Result<(), SendRefused> {
        let size = message_size(&msg);
        let before = self.out_waiting.fetch_add(size, Ordering::AcqRel);
        if before + size > OUTBOUND_LIMIT {
            self.out_waiting.fetch_sub(size, Ordering::AcqRel);
            return Err(SendRefused::ClientNotReading);
        }
        self.out.send(Outbound::Message(msg)).map_err(|_| SendRefused::Closed)
    }

    /// Queues the close (never refused).
    pub(crate) fn close(&self, code: u16, reason: String) {
        let _ = self.out.send(Outbound::Close { code, reason });
    }
}

/// What a socket's client is sent: the actor's messages and the close, in
/// order. Reading a message frees its bytes in the socket's outbound limit.
#[derive(Debug)]
pub struct OutboundReceiver {
    rx: tmpsc::UnboundedReceiver<Outbound>,
    out_waiting: Arc<AtomicUsize>,
}

impl OutboundReceiver {
    /// The next thing to send, waiting for it; `None` once the socket is gone.
    pub async fn recv(&mut self) -> Option<Outbound> {
        let next = self.rx.recv().await;
        self.sent(next.as_ref());
        next
    }

    /// The next thing to send, if one is queued.
    ///
    /// # Errors
    /// Nothing is queued, or the socket is gone.
    pub fn try_recv(&mut self) -> Result<Outbound, tmpsc::error::TryRecvError> {
        let next = self.rx.try_recv();
        self.sent(next.as_ref().ok());
        next
    }

    fn sent(&self, out: Option<&Outbound>) {
        if let Some(Outbound::Message(m)) = out {
            self.out_waiting.fetch_sub(message_size(m), Ordering::AcqRel);
        }
    }
}

/// What a message counts for in the socket's limits (at least 1: empty
/// messages are not free to queue).
pub(crate) fn message_size(msg: &SocketMessage) -> usize {
    match msg {
        SocketMessage::Text(t) => t.len(),
        SocketMessage::Binary(b) => b.len(),
    }
    .max(1)
}

/// The most a close frame's reason may hold (RFC 6455: 125 bytes of payload, 2 of them the code).
pub(crate) const MAX_CLOSE_REASON: usize = 123;

/// A close an actor asked for, as a frame a client accepts: a code an
/// endpoint may send (1000–1003, 1007–1014, 3000–4999; otherwise 1011, the
/// actor's code named in the reason) and a reason cut to 123 bytes.
pub(crate) fn close_frame(code: u16, reason: &str) -> (u16, String) {
    let sendable = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
    let (code, mut reason) = if sendable {
        (code, reason.to_owned())
    } else {
        (
            1011,
            format!("the actor closed with code {code}, which may not be sent: {reason}"),
        )
    };
    if reason.len() > MAX_CLOSE_REASON {
        let mut cut = MAX_CLOSE_REASON;
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        reason.truncate(cut);
    }
    (code, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_frames_are_ones_a_client_accepts() {
        assert_eq!(close_frame(1000, "bye"), (1000, "bye".into()));
        assert_eq!(close_frame(4001, "app"), (4001, "app".into()));
        let (code, reason) = close_frame(1005, "x");
        assert_eq!(code, 1011, "1005 is reserved: never sent");
        assert!(reason.contains("1005"), "{reason}");
        let (code, reason) = close_frame(1000, &"é".repeat(100));
        assert_eq!(code, 1000);
        assert!(
            reason.len() <= MAX_CLOSE_REASON && reason.chars().all(|c| c == 'é'),
            "cut on a character"
        );
    }
}
