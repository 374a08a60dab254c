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
