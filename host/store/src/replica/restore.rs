//! Going back in time (ADR 064): a restore puts the state at an earlier
//! position on the head as a new position, so it can be undone; a fork
//! starts another actor's history from it. Nothing before the newest
//! reset comes back.

use super::{Replica, ReplicaError};
use crate::address::ActorKey;
use crate::bucket::ObjectStore;
use crate::faults::Faults;
use crate::history::{HistoryObject, Kind, Pos};
use crate::history_chain::{self, ChainError};
use std::sync::Arc;

/// Where to go back to: a time, or a bookmark (a position as its text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The last state written at or before this time (ms since the epoch).
    Time(u64),
    /// Exactly this position.
    Bookmark(Pos),
}

impl Target {
    /// The position this target names in `history`, refused before the
    /// newest reset.
    ///
    /// # Errors
    /// No state at or before it, or it lies before a delete.
    pub fn position_in(self, history: &[HistoryObject]) -> Result<Pos, ReplicaError> {
        let pos = match self {
            Target::Time(ms) => history_chain::position_at_time(history, ms).ok_or(ChainError::NoStateAtTime(ms))?,
            Target::Bookmark(p) => p,
        };
        if let Some(reset) = history_chain::newest_reset(history)
            && pos < reset
        {
            return Err(ReplicaError::BeforeDelete { target: pos, reset });
        }
        Ok(pos)
    }
}

impl Replica {
    /// The state at `to`, put on the head as a whole image at a new
    /// position (acknowledged as every upload is). Returns the position
    /// read and the new one, and the image, which the holder's local copy
    /// becomes.
    ///
    /// # Errors
    /// As [`Target::position_in`], the chain could not be read, or the
    /// upload was not acknowledged.
    pub fn restore_to(&mut self, to: Target, live: &dyn Fn(&str) -> bool) -> Result<(Pos, Pos, Vec<u8>), ReplicaError> {
        let history = self.history()?;
        let from = to.position_in(&history)?;
        // The new position holds the restored state: as the pages that
        // differ from the head's, on the head, when that is the smaller;
        // else whole. Either restores to exactly that state.
        let head = self.head.filter(|h| history.iter().any(|o| o.pos == *h));
        let (image, diff) = match head {
            Some(h) => {
                let mut states = history_chain::states_at(self.bucket.as_ref(), &history, &[from, h])?;
                let head_image = states.pop().unwrap_or_default();
                let image = states.pop().unwrap_or_default();
                let diff =
                    crate::page_set::PageSet::diff(&head_image, &image).filter(|d| d.encoded_len() < image.len() / 2);
                (image, diff)
            }
            None => (history_chain::state_at(self.bucket.as_ref(), &history, from)?, None),
        };
        let at = match diff {
            Some(d) => self.upload_pages(&d, live)?,
            None => self.upload(Kind::Segment, &image, live)?,
        };
        Ok((from, at, image))
    }
}

/// Starts `into`'s history from `from`'s state at `to`: `into` is acquired
/// by `node`, the image uploaded as its first state, and released. Returns
/// the position read.
///
/// # Errors
/// As [`Target::position_in`]; `into` already has a history
/// ([`ReplicaError::ForkTargetExists`]), is held elsewhere, or the bucket failed.
pub fn fork(
    bucket: Arc<dyn ObjectStore>,
    faults: Arc<Faults>,
    from: &ActorKey,
    to: Target,
    into: &ActorKey,
    node: &str,
    live: &dyn Fn(&str) -> bool,
) -> Result<Pos, ReplicaError> {
    let source = Replica::new(bucket.clone(), faults.clone(), from.clone(), node);
    let history = source.history()?;
    let pos = to.position_in(&history)?;
    let image = history_chain::state_at(bucket.as_ref(), &history, pos)?;
    let mut target = Replica::new(bucket, faults, into.clone(), node);
    if history_chain::head(&target.history()?).is_some_and(|o| o.kind != Kind::Reset) {
        return Err(ReplicaError::ForkTargetExists(into.to_string()));
    }
    match target.acquire(live)? {
        super::Acquired::HeldBy(n) => return Err(ReplicaError::ForkTargetExists(format!("{into} (held by {n})"))),
        super::Acquired::Held { .. } => {}
    }
    let r = target.upload(Kind::Segment, &image, live);
    target.release()?;
    r.map(|_| pos)
}
