//! The one delete routine in the bucket (ADR 0028, ADR 031): the purge
//! mark, the reset on the head, then the snapshot at it and the erase of
//! every object before it.

use super::{Broken, Replica, ReplicaError};
use crate::bucket::{PutCondition, put_read_back};
use crate::history::{Kind, Pos, whole_key};
use crate::keys;

impl Replica {
    /// The one delete routine: a reset (the empty database `empty`, with its
    /// marker) on the head, acknowledged while the hold is valid. Returns its
    /// position; [`Replica::collect_after_delete`] follows when the event ends.
    ///
    /// # Errors
    /// As [`Replica::upload`]: the delete is then not known to be durable.
    pub fn delete(&mut self, empty: &[u8], live: &dyn Fn(&str) -> bool) -> Result<Pos, ReplicaError> {
        // The mark first: if this node stops between the reset and its erase,
        // a control pass finds the purge to finish (ADR 031). Its body differs
        // each time, so its ETag does too (moto's is the body's MD5).
        let mark = format!("{} {}", self.node, self.hold.as_ref().map_or(0, |h| h.generation));
        put_read_back(
            self.bucket.as_ref(),
            &keys::purge_mark(&self.key),
            mark.as_bytes(),
            &PutCondition::None,
        )?;
        if self.broken == Some(Broken::EraseBeforeAck) {
            for o in self.history()? {
                let _ = self.bucket.delete(&o.key);
            }
        }
        self.upload(Kind::Reset, empty, live)
    }

    /// After a reset at `reset` was acknowledged: a snapshot of the empty
    /// database there, then, once that is acknowledged, every object before it
    /// is erased. Returns how many objects could not be erased.
    ///
    /// # Errors
    /// The snapshot failed (nothing is erased then).
    pub fn collect_after_delete(
        &mut self,
        reset: Pos,
        empty: &[u8],
        live: &dyn Fn(&str) -> bool,
    ) -> Result<usize, ReplicaError> {
        let Some(hold) = self.hold.clone() else {
            return Err(ReplicaError::HoldLost);
        };
        if !self.holds(live)? {
            return Err(ReplicaError::HoldLost);
        }
        let key = whole_key(
            &keys::history_prefix(&self.key),
            reset,
            self.clock.now_ms(),
            Kind::Snapshot,
        );
        put_read_back(self.bucket.as_ref(), &key, empty, &PutCondition::IfAbsent)?;
        let mut failed = 0;
        for o in self.history()? {
            if o.pos >= reset {
                continue;
            }
            // The holder's generation check before each erase (ADR 0012).
            if self.hold.as_ref().map(|h| h.generation) != Some(hold.generation) || !self.holds(live)? {
                return Err(ReplicaError::HoldLost);
            }
            if self.bucket.delete(&o.key).is_err() {
                failed += 1;
            }
        }
        Ok(failed)
    }
}
