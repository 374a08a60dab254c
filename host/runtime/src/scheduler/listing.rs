//! What the scheduler tells of its mailboxes: which actors have one here,
//! where each stands as a listing shows it, and its last event. The
//! mailboxes' map is let go before any mailbox is locked (ADR 045).

use super::driver::Scheduler;
use super::mailbox::ActorStatus;
use crate::address::ActorKey;
use crate::last_event::LastEvent;

/// One mailbox as a listing shows it.
pub(crate) struct Listed {
    pub(crate) key: ActorKey,
    pub(crate) status: ActorStatus,
    pub(crate) last_event: Option<LastEvent>,
    /// The node of another process that holds the actor, when its worker
    /// here found it held there.
    pub(crate) held_elsewhere: Option<String>,
}

impl Scheduler {
    /// The keys of every actor with a mailbox here, as they are now.
    pub(crate) fn keys(&self) -> Vec<ActorKey> {
        self.mailboxes().keys()
    }

    /// Whether `key` has a mailbox here (the actor is, or was lately, held here).
    pub(crate) fn has_mailbox(&self, key: &ActorKey) -> bool {
        self.mailboxes().contains(key)
    }

    /// `key`'s last guest event here, if one ran since the node started.
    pub(crate) fn last_event(&self, key: &ActorKey) -> Option<LastEvent> {
        let mailbox = self.mailboxes().get(key);
        mailbox.and_then(|m| m.lock().last_event())
    }

    /// Every mailbox as a listing shows it.
    pub(crate) fn listed(&self) -> Vec<Listed> {
        let mailboxes = self.mailboxes().all();
        mailboxes
            .iter()
            .map(|mailbox| {
                let inner = mailbox.lock();
                let (status, held_elsewhere) = inner.as_listed();
                Listed {
                    key: mailbox.key.clone(),
                    status,
                    last_event: inner.last_event(),
                    held_elsewhere,
                }
            })
            .collect()
    }

    /// How many actors have a worker here now (running, parked, or waiting
    /// for a resident place).
    pub(crate) fn with_worker_count(&self) -> usize {
        let mailboxes = self.mailboxes().all();
        mailboxes.iter().filter(|m| m.lock().has_worker()).count()
    }
}
