//! The holder's collection under the app's retention window (ADR 064):
//! what no state inside the window needs is erased, and the run of page
//! sets before the window's start is merged into one.

use super::{Broken, Collected, Replica, ReplicaError};
use crate::bucket::PutCondition;
use crate::history::pages_key;
use crate::history_chain::{Compaction, merged_pages, plan_collection};
use crate::keys;

/// How many objects are erased between two checks of the hold.
const ERASES_PER_HOLD_CHECK: usize = 64;

impl Replica {
    /// Collects the history under a window of `window_ms`: every state
    /// written inside it, the state at its start and the head stay
    /// restorable exactly; the rest goes (ADR 064). Run by the holder only,
    /// its hold checked before it writes and every few erases.
    ///
    /// # Errors
    /// `HoldLost` (nothing more is erased), the bucket failed, or the
    /// history's chain is broken (nothing is erased then).
    pub fn collect(&mut self, window_ms: u64, live: &dyn Fn(&str) -> bool) -> Result<Collected, ReplicaError> {
        if !self.holds(live)? {
            return Err(ReplicaError::HoldLost);
        }
        let history = self.history()?;
        let plan = plan_collection(&history, self.clock.now_ms(), window_ms);
        if let Some(e) = plan.broken {
            return Err(e.into());
        }
        let mut done = Collected::default();
        if let Some(c) = plan.compact {
            done.merged = c.run.len();
            self.compact(&c)?;
            for o in &c.run {
                self.erase_checked(&o.key, &mut done, live)?;
            }
        }
        for o in &plan.erase {
            self.erase_checked(&o.key, &mut done, live)?;
        }
        Ok(done)
    }

    /// Writes the run's pages merged into one set at its last position on
    /// its first one's parent. A restore reads it instead of the run (the
    /// lower parent wins at a position), so the run can go after it.
    fn compact(&mut self, c: &Compaction) -> Result<(), ReplicaError> {
        let Some(last) = c.run.last() else { return Ok(()) };
        let run = if self.broken == Some(Broken::CompactionDropsASegment) {
            &c.run[1..]
        } else {
            &c.run[..]
        };
        let Some(set) = merged_pages(self.bucket.as_ref(), run)? else {
            return Ok(());
        };
        let key = pages_key(&keys::history_prefix(&self.key), last.pos, last.at_ms, c.parent);
        // The same merge written twice (a collection cut short and run again) is the same object.
        self.bucket.put(&key, &set.encode(), &PutCondition::None)?;
        Ok(())
    }

    fn erase_checked(
        &mut self,
        key: &str,
        done: &mut Collected,
        live: &dyn Fn(&str) -> bool,
    ) -> Result<(), ReplicaError> {
        if (done.erased + done.failed + 1) % ERASES_PER_HOLD_CHECK == 0 && !self.holds(live)? {
            return Err(ReplicaError::HoldLost);
        }
        match self.bucket.delete(key) {
            Ok(()) => done.erased += 1,
            Err(_) => done.failed += 1,
        }
        Ok(())
    }
}
