//! A restore in the actor's mailbox (ADR 064): after the jobs queued
//! before it, with no guest code. Its open sockets are closed first (1012
//! "actor restored": the state they spoke to is gone), and the restore
//! goes behind their close events, which run on that state; then the state
//! at the target becomes the head at a new position, the alarm follows the
//! restored state, and the instance is dropped so the next event starts
//! fresh on it. Events queued behind it run on the restored state.

use super::{ActorCell, Prepared};
use crate::error::RuntimeError;
use crate::job::{HostJob, Job, Restored};
use crate::replica::Target;
use crate::storage::OpenMode;
use tokio::sync::oneshot;

/// The close code and reason of a socket whose actor was restored.
const RESTORED_CLOSE: (u16, &str) = (1012, "actor restored");

/// Who waits for a restore's outcome.
pub(crate) type RestoreDone = oneshot::Sender<Result<Restored, RuntimeError>>;

/// What the restore found when it prepared the actor.
enum Found {
    /// Held here: its alarm after the restore, or why it failed.
    Restored(Result<(Restored, Option<u64>), RuntimeError>),
    /// Held here with sockets open: they were closed, and the restore goes
    /// behind their close events.
    SocketsClosed,
    /// Another node of this process holds it.
    Elsewhere(std::sync::Arc<dyn crate::cluster::NodeMailboxes>),
    /// It could not be restored here (no such actor, not opened).
    Refused(RuntimeError),
}

impl ActorCell {
    /// Restores the actor to `to` and sends `done` what came of it: no such
    /// actor, a node that keeps no history (`--no-history`), a target refused
    /// (before a delete, or no state then), or the bucket failed (the actor
    /// is given up then; nothing is lost). An actor another node of this
    /// process holds is restored there.
    pub(crate) fn restore(&mut self, to: Target, done: RestoreDone) {
        let key = self.mailbox.key.clone();
        let found = match self.prepare(OpenMode::Existing) {
            Ok(Prepared::Ready(ready)) => {
                let open = ready.host.sockets_of(&key);
                if open.is_empty() {
                    Found::Restored(ready.resident.store.data_mut().actor.restore(to))
                } else {
                    // Their close events run first, on the state they spoke to.
                    for id in open {
                        let _ = ready
                            .host
                            .socket_close_by_actor(&key, id, RESTORED_CLOSE.0, RESTORED_CLOSE.1.into());
                    }
                    Found::SocketsClosed
                }
            }
            Ok(Prepared::Absent) => Found::Refused(RuntimeError::NoSuchActor(key.clone())),
            Ok(Prepared::Elsewhere(node)) => Found::Elsewhere(node),
            // Held by another node process: the error names it, and the caller
            // carries the restore there; a storage failure keeps its kind.
            Err(e) => Found::Refused(e.into()),
        };
        let outcome = match found {
            Found::Elsewhere(node) => {
                return node.deliver(&key, Job::new(HostJob::Restore { to, done }, Vec::new()));
            }
            Found::SocketsClosed => {
                return self
                    .host
                    .enqueue(&key, Job::new(HostJob::Restore { to, done }, Vec::new()));
            }
            Found::Refused(e) => Err(e),
            Found::Restored(Ok((restored, alarm))) => {
                let _ = match alarm {
                    Some(at) => self.host.alarms().set(&key, at),
                    None => self.host.alarms().remove(&key),
                };
                self.host.wake_timer();
                self.hibernate();
                Ok(restored)
            }
            Found::Restored(Err(e)) => {
                self.give_up();
                Err(e)
            }
        };
        let _ = done.send(outcome);
    }
}
