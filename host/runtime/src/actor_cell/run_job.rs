//! The one entry of a job into the cell: what kind it is decides which of
//! the cell's methods runs it.

use super::ActorCell;
use crate::event_error::{EventError, fail_job};
use crate::job::{ABANDONED, EventKind, Job, RUNNING, take_ticket};

impl ActorCell {
    /// Runs one job from the mailbox.
    pub(crate) fn run_job(&mut self, job: Job) {
        let guest_event = !matches!(
            job.kind,
            EventKind::Inspect { .. }
                | EventKind::LentRead { .. }
                | EventKind::Barrier { .. }
                | EventKind::Hibernate { .. }
                | EventKind::AdminDelete { .. }
                | EventKind::Restore { .. }
        );
        if guest_event {
            if self.host.halted(&self.mailbox.key.app) {
                // Ordered shutdown (or the app deleted): no new guest code; its waiter may have answered already.
                if take_ticket(&job.ticket, ABANDONED) {
                    fail_job(job.kind, &EventError::ShuttingDown);
                }
                return;
            }
            if !take_ticket(&job.ticket, RUNNING) {
                return; // Answered and given up by its waiter.
            }
            self.let_go_if_stale();
        }
        let kind = match job.kind {
            EventKind::Barrier { done } => {
                let _ = done.send(());
                return;
            }
            EventKind::Inspect { reply } => return self.inspect(reply, job.chain),
            EventKind::LentRead { read } => return self.lend_for_reading(read),
            EventKind::Hibernate { done } => {
                self.hibernate();
                let _ = done.send(());
                return;
            }
            EventKind::OperatorDelete { req } => return self.operator_delete(req),
            EventKind::AdminDelete { done } => {
                let _ = done.send(self.admin_delete());
                return;
            }
            EventKind::Restore { to, done } => return self.restore(to, done),
            EventKind::Expire { etag, done } => {
                let _ = done.send(self.expire(etag));
                return;
            }
            // Socket events of an actor deleted since they were queued, or for a socket
            // that is gone, run no guest code: they would create a new actor.
            EventKind::SocketOpen { id, .. } | EventKind::SocketMessage { id, .. }
                if job.generation != self.mailbox.lock().generation
                    || !self.host.socket_belongs_to(&self.mailbox.key, id) =>
            {
                return;
            }
            EventKind::SocketClose { .. } if job.generation != self.mailbox.lock().generation => return,
            EventKind::Request {
                req,
                respond,
                require_existing: true,
            } => {
                // Open here, so it exists: no listing (in a cluster, a bucket call per request).
                let exists = if self.is_resident() {
                    Ok(true)
                } else {
                    self.host.storage().exists(&self.mailbox.key)
                };
                match exists {
                    Ok(true) => EventKind::Request {
                        req,
                        respond,
                        require_existing: true,
                    },
                    // A failed listing never reads as "absent": it answers by its cause.
                    absent_or_unknown => {
                        let why = match absent_or_unknown {
                            Err(e) => EventError::Storage(e),
                            Ok(_) => EventError::NoSuchActor(self.mailbox.key.clone()),
                        };
                        let _ = respond.send(why.answer());
                        return;
                    }
                }
            }
            other => other,
        };
        if let EventKind::Alarm { ran } = kind {
            return self.run_alarm(ran, job.chain);
        }
        self.run_guest_event(kind, job.chain);
    }
}
