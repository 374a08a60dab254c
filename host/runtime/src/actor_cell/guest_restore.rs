//! The restore a guest asked for (`restore-on-next-session`, WIT 0.2.4;
//! ADR 064): once its event has ended with its writes kept, the cell runs
//! the restore job right behind it, before the actor's next job, so the
//! next event runs on the restored state. What the restore job does to
//! sockets, the alarm and the instance is [`ActorCell::restore`]'s. The
//! guest has its answer already, so a restore refused now (a bookmark
//! before the actor's newest delete, or one the retention window no longer
//! holds) is logged: in the host's log and in the actor's.

use super::ActorCell;
use crate::error::RuntimeError;
use crate::job::Restored;
use crate::node::Host;
use crate::replica::{Pos, Target};
use std::sync::Arc;
use tokio::sync::oneshot;

/// Why an event's pending restore was not carried out.
#[derive(Debug, Clone, Copy)]
pub(super) enum NotRestored {
    /// The event deleted the actor.
    Deleted,
    /// The event's writes were not kept.
    WritesNotKept,
}

impl ActorCell {
    /// Runs the restore the guest asked for, now that its event ended with
    /// its writes kept, and logs what came of it. With sockets open it is
    /// queued again behind their close events, and logged when it ran.
    pub(super) fn restore_for_guest(&mut self, to: Pos) {
        let (done, mut outcome) = oneshot::channel();
        self.restore(Target::Bookmark(to), done);
        let host = self.host.clone();
        let key = self.mailbox.key.clone();
        let report = move |r| log_outcome(&host, &key, to, r);
        match outcome.try_recv() {
            Ok(r) => report(Some(r)),
            Err(oneshot::error::TryRecvError::Closed) => report(None),
            Err(oneshot::error::TryRecvError::Empty) => {
                // Behind the sockets' close events: a thread waits for it (a
                // guest's restore with sockets open is rare).
                let spawned = std::thread::Builder::new()
                    .name("wasmkeep-guest-restore".into())
                    .spawn(move || report(outcome.blocking_recv().ok()));
                if let Err(e) = spawned {
                    tracing::warn!(actor = %self.mailbox.key, "the guest's restore to {to} runs, unlogged: {e}");
                }
            }
        }
    }

    /// The event asked for a restore and ended otherwise: nothing is restored.
    pub(super) fn drop_guest_restore(&self, to: Pos, why: NotRestored) {
        let why = match why {
            NotRestored::Deleted => "the event deleted the actor",
            NotRestored::WritesNotKept => "the event's writes were not kept",
        };
        let line = format!("restore-on-next-session: not restored to {to}: {why}");
        tracing::warn!(actor = %self.mailbox.key, "{line}");
        self.host.record_log(&self.mailbox.key, "warn", &line);
    }
}

/// Logs a guest's restore once it ran (`None`: its job was dropped).
fn log_outcome(host: &Arc<Host>, key: &crate::address::ActorKey, to: Pos, r: Option<Result<Restored, RuntimeError>>) {
    let (level, line) = match r {
        Some(Ok(r)) => (
            "info",
            format!(
                "restore-on-next-session: restored to {} as {}; restoring to {} undoes it",
                r.from, r.at, r.undo
            ),
        ),
        Some(Err(e)) => (
            "warn",
            format!("restore-on-next-session: refused to restore to {to}: {e}"),
        ),
        None => (
            "warn",
            format!("restore-on-next-session: the restore to {to} was dropped (the node is stopping)"),
        ),
    };
    if level == "info" {
        tracing::info!(actor = %key, "{line}");
    } else {
        tracing::warn!(actor = %key, "{line}");
    }
    host.record_log(key, level, &line);
}
