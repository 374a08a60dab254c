//! What the scheduler does with idle actors whose workers parked (ADR 044):
//! the idle sweep's look at each, which closes the database of one parked
//! a while (ADR 045) and hibernates one parked for the idle timeout, and the
//! rest asked for when the node is out of open files (ADR 055), which closes
//! the databases of those parked longest.

use super::driver::Scheduler;
use super::mailbox::Mailbox;
use std::sync::Arc;
use std::time::{Duration, Instant};

impl Scheduler {
    /// The idle sweep: for each mailbox whose worker is parked, closes its
    /// database once parked for `rest_after`, and asks it to hibernate once
    /// parked for `hibernate_after`. Returns how many databases it closed.
    pub(crate) fn sweep_idle(self: &Arc<Self>, rest_after: Duration, hibernate_after: Duration) -> usize {
        // The map's lock is let go before any mailbox's (ADR 045).
        let mailboxes = self.mailboxes().all();
        mailboxes
            .iter()
            .filter(|mailbox| self.sweep_parked(mailbox, rest_after, hibernate_after))
            .count()
    }

    /// The idle sweep's look at one mailbox, under one lock so that an
    /// actor that got a job meanwhile is left alone: if its worker has been
    /// parked for `hibernate_after`, asks it to hibernate; otherwise, if for
    /// `rest_after` and its database is still open, closes it on this thread
    /// (ADR 045). Returns whether it closed a database.
    fn sweep_parked(self: &Arc<Self>, mailbox: &Arc<Mailbox>, rest_after: Duration, hibernate_after: Duration) -> bool {
        let mut inner = mailbox.lock();
        let Some(parked_for) = inner.parked().map(|p| p.since().elapsed()) else {
            return false;
        };
        if parked_for >= hibernate_after {
            self.send_hibernate(mailbox, inner);
            return false;
        }
        parked_for >= rest_after && inner.rest_parked()
    }

    /// Closes the databases of up to `most` actors whose workers are parked
    /// with their databases open, those parked longest first; they stay
    /// resident, and each opens its database again at its next event.
    /// Returns how many it closed.
    pub(crate) fn rest_parked_longest(&self, most: usize) -> usize {
        let mailboxes = self.mailboxes().all();
        let mut parked: Vec<(Instant, Arc<Mailbox>)> = mailboxes
            .into_iter()
            .filter_map(|mailbox| {
                let since = mailbox.lock().parked_unrested_since();
                since.map(|since| (since, mailbox))
            })
            .collect();
        parked.sort_unstable_by_key(|(since, _)| *since);
        parked
            .iter()
            .take(most)
            .filter(|(_, mailbox)| mailbox.lock().rest_parked())
            .count()
    }
}
