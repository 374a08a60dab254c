//! What a node does with its sockets for its actors: an actor's message to
//! its client, an actor's close, the sockets of an actor, closing those of
//! actors that ended. The table itself is `crate::sockets`.

use super::{Host, NOT_READING};
use crate::address::ActorKey;
use crate::http_types::SocketMessage;
use crate::job::{GuestEvent, Job};
use crate::sockets::SocketGone;
use std::sync::Arc;

impl Host {
    /// Queues an actor's message for its socket's client. A client that lets
    /// over 8 MiB wait unread is closed with 1008, and the actor gets its
    /// close event after this one.
    ///
    /// # Errors
    /// The socket is not the actor's or not open, or its client stopped reading.
    pub(crate) fn socket_send(&self, key: &ActorKey, id: u64, msg: SocketMessage) -> Result<(), SocketGone> {
        let entry = match self.sockets.send(key, id, msg) {
            Ok(()) => return Ok(()),
            Err(crate::sockets::SendFailed::NotOpen) => return Err(SocketGone::NotOpen),
            Err(crate::sockets::SendFailed::NotReading(entry)) => entry,
        };
        {
            let (code, reason) = NOT_READING;
            tracing::warn!(actor = %key, socket = id, "{reason}: closed with {code}");
            entry.close(code, reason.into());
            // The node itself only on this rare path: a send is per message.
            let Some(me) = self.me.upgrade() else {
                return Err(SocketGone::NotReading);
            };
            me.enqueue(
                key,
                Job::new(
                    GuestEvent::SocketClose {
                        id,
                        code,
                        reason: reason.into(),
                    },
                    Vec::new(),
                ),
            );
        }
        Err(SocketGone::NotReading)
    }

    /// Closes one of the actor's sockets with `code` and `reason` (as a
    /// close frame can carry them); the actor's close event comes after
    /// the current event.
    ///
    /// # Errors
    /// The socket is not the actor's, or not open.
    pub(crate) fn socket_close_by_actor(
        self: &Arc<Self>,
        key: &ActorKey,
        id: u64,
        code: u16,
        reason: String,
    ) -> Result<(), SocketGone> {
        let entry = self.sockets.remove_of(key, id).ok_or(SocketGone::NotOpen)?;
        // The client gets (and the actor's close event tells) what can be sent.
        let (code, reason) = crate::sockets::close_frame(code, &reason);
        entry.close(code, reason.clone());
        // The actor's own close event comes after the current event.
        self.enqueue(key, Job::new(GuestEvent::SocketClose { id, code, reason }, Vec::new()));
        Ok(())
    }

    pub(crate) fn socket_belongs_to(&self, key: &ActorKey, id: u64) -> bool {
        self.sockets.belongs_to(key, id)
    }

    pub(crate) fn sockets_of(&self, key: &ActorKey) -> Vec<u64> {
        self.sockets.ids_of(key)
    }

    /// Closes every socket of a deleted actor with 1000 "actor deleted"; no close events run.
    pub(crate) fn close_sockets_of_deleted(&self, key: &ActorKey) {
        self.close_sockets_where(|k| k == key, 1000, "actor deleted");
    }

    /// Closes (with `code`, `reason`) and forgets every socket whose actor
    /// `which` picks; no close events run. Returns how many.
    pub(crate) fn close_sockets_where(&self, which: impl Fn(&ActorKey) -> bool, code: u16, reason: &str) -> usize {
        self.sockets.close_where(which, code, reason)
    }
}
