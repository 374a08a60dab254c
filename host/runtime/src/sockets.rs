//! Every open WebSocket, by id: what the actor sends goes to its client.

use crate::address::ActorKey;
use crate::http_types::Outbound;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc as tmpsc;

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

/// One open socket: its actor and its outbound queue.
pub(crate) struct SocketEntry {
    pub(crate) key: ActorKey,
    pub(crate) out: tmpsc::UnboundedSender<Outbound>,
}
