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
    map: Mutex<HashMap<u64, SocketEntry>>,
    next: AtomicU64,
}

/// Why an actor's send or close did not reach its socket (the guest is
/// told `not-open` either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SocketGone {
    /// No open socket of this actor has this id (or the node is going).
    #[error("the actor has no open socket with this id")]
    NotOpen,
    /// Its client let too much wait unread: it was closed with 1008 just
    /// now, and the actor's close event comes after this event.
    #[error("the socket's client stopped reading: it was closed with 1008")]
    NotReading,
}

/// Why an actor's message did not reach its socket's queue.
pub(crate) enum SendFailed {
    /// No open socket of this actor has this id.
    NotOpen,
    /// The client let too much wait unread: the socket was taken out of the
    /// table, and the caller closes it and queues the actor's close event.
    NotReading(SocketEntry),
}

impl SocketTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, SocketEntry>> {
        crate::unpoisoned::lock(&self.map)
    }

    /// Opens a socket of `key`: its id, never reused by this table, and the
    /// receiving end its connection reads.
    pub(crate) fn open(&self, key: &ActorKey) -> (u64, OutboundReceiver) {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let (entry, rx) = SocketEntry::new(key.clone());
        self.lock().insert(id, entry);
        (id, rx)
    }

    /// The actor of socket `id`, while it is open.
    pub(crate) fn actor_of(&self, id: u64) -> Option<ActorKey> {
        self.lock().get(&id).map(|s| s.key.clone())
    }

    /// The actor of socket `id` and the budget of its client's messages.
    pub(crate) fn actor_and_budget(&self, id: u64) -> Option<(ActorKey, Arc<Semaphore>)> {
        self.lock().get(&id).map(|s| (s.key.clone(), s.inbound.clone()))
    }

    /// Whether socket `id` is open and is `key`'s.
    pub(crate) fn belongs_to(&self, key: &ActorKey, id: u64) -> bool {
        self.lock().get(&id).is_some_and(|s| s.key == *key)
    }

    /// The ids of `key`'s open sockets, in order.
    pub(crate) fn ids_of(&self, key: &ActorKey) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .lock()
            .iter()
            .filter(|(_, s)| s.key == *key)
            .map(|(id, _)| *id)
            .collect();
        v.sort_unstable();
        v
    }

    /// Takes socket `id` out of the table (the caller closes it).
    pub(crate) fn remove(&self, id: u64) -> Option<SocketEntry> {
        self.lock().remove(&id)
    }

    /// Takes socket `id` out of the table if it is `key`'s.
    pub(crate) fn remove_of(&self, key: &ActorKey, id: u64) -> Option<SocketEntry> {
        let mut sockets = self.lock();
        match sockets.get(&id) {
            Some(s) if s.key == *key => sockets.remove(&id),
            _ => None,
        }
    }

    /// Queues `key`'s message for socket `id`'s client.
    pub(crate) fn send(&self, key: &ActorKey, id: u64, msg: SocketMessage) -> Result<(), SendFailed> {
        let mut sockets = self.lock();
        let refused = match sockets.get(&id) {
            Some(s) if s.key == *key => match s.send(msg) {
                Ok(()) => return Ok(()),
                Err(r) => r,
            },
            _ => return Err(SendFailed::NotOpen),
        };
        match refused {
            SendRefused::ClientNotReading => sockets
                .remove(&id)
                .map_or(Err(SendFailed::NotOpen), |entry| Err(SendFailed::NotReading(entry))),
            SendRefused::Closed => Err(SendFailed::NotOpen),
        }
    }

    /// Closes (with `code`, `reason`) and forgets every socket whose actor
    /// `which` picks; returns how many.
    pub(crate) fn close_where(&self, which: impl Fn(&ActorKey) -> bool, code: u16, reason: &str) -> usize {
        let mut sockets = self.lock();
        let ids: Vec<u64> = sockets
            .iter()
            .filter(|(_, s)| which(&s.key))
            .map(|(id, _)| *id)
            .collect();
        for id in &ids {
            if let Some(s) = sockets.remove(id) {
                s.close(code, reason.into());
            }
        }
        ids.len()
    }
}

/// One open socket: its actor, its outbound queue (with the bytes waiting in
/// it) and the budget of its client's messages waiting for the actor.
pub(crate) struct SocketEntry {
    pub(crate) key: ActorKey,
    out: tmpsc::UnboundedSender<Outbound>,
    out_waiting: Arc<AtomicUsize>,
    inbound: Arc<Semaphore>,
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
