//! A node out of open files (ADR 055). Each resident actor's open database
//! holds two descriptors, its file and its WAL, until the idle sweep closes
//! it ten seconds after its last event (ADR 045). A node whose residents
//! are many can reach the process's open-files limit before then; an actor
//! that must open its database then closes the databases of the actors
//! parked longest, as the sweep would later, and tries once more.

use super::{Host, lock};
use std::sync::Mutex;

/// How many idle actors' databases one shortage closes at most: 64 free
/// 128 descriptors, room for as many wakes again (each close folds the WAL
/// into the database, so the actor that met the shortage waits for them).
const REST_PER_SHORTAGE: usize = 64;

/// One shortage is relieved at a time: the workers that met it together
/// would otherwise each walk every mailbox and close what the first one
/// closes anyway.
static RELIEVING: Mutex<()> = Mutex::new(());

impl Host {
    /// Closes the databases of up to [`REST_PER_SHORTAGE`] actors whose
    /// workers parked (ADR 044), those parked longest first; they stay
    /// resident, and each opens its database again at its next event.
    /// Returns how many it closed: none when no parked actor holds one.
    pub(crate) fn rest_parked_for_files(&self) -> usize {
        let _one_at_a_time = lock(&RELIEVING);
        let rested = self.scheduler().rest_parked_longest(REST_PER_SHORTAGE);
        let limit = crate::open_files::limit();
        if rested > 0 {
            tracing::warn!(
                rested,
                limit,
                "out of open files: closed the databases of the actors parked longest"
            );
        } else {
            tracing::warn!(
                limit,
                "out of open files, and no parked actor's database to close: the event is answered 503; raise the \
                 open-files limit or serve fewer resident actors"
            );
        }
        rested
    }
}
