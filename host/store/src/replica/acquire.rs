//! Taking the actor (ADR 0028 §1): the ownership record written at a new
//! generation on the version read, the head restored and fenced, and the
//! check that the hold is still valid.

use super::{Acquired, Hold, OwnerRecord, Replica, ReplicaError, before_newest_reset, hash};
use crate::bucket::{BucketError, ETag, PutCondition, put_read_back};
use crate::faults::FaultKind;
use crate::history::{HistoryObject, Kind};
use crate::history_chain;
use crate::keys;
use crate::page_set::{PageSet, image_page_size};

impl Replica {
    /// Takes the actor: a conditional write of the ownership record at a new
    /// generation, the restore of the head, and the fence.
    ///
    /// # Errors
    /// The bucket failed (nothing is held then), or the fence could not be uploaded.
    pub fn acquire(&mut self, live: &dyn Fn(&str) -> bool) -> Result<Acquired, ReplicaError> {
        let record = self.read_record()?;
        if let Some((rec, _)) = &record
            && !rec.released
            && rec.node != self.node
            && live(&rec.node)
        {
            return Ok(Acquired::HeldBy(rec.node.clone()));
        }
        self.acquire_over(record, live)
    }

    /// Acquires only if the ownership record is exactly the version `expect`
    /// (the ETag a listing showed) and names nobody (released): idle expiry's
    /// condition (ADR 0028 §4). One read decides, and the conditional write is
    /// on that read's ETag, so a wake in between makes this lose. `None`: the
    /// record changed or is held; nothing was written.
    ///
    /// # Errors
    /// As [`Replica::acquire`].
    pub fn acquire_unchanged(
        &mut self,
        expect: &ETag,
        live: &dyn Fn(&str) -> bool,
    ) -> Result<Option<Acquired>, ReplicaError> {
        let record = self.read_record()?;
        match &record {
            Some((rec, etag)) if etag == expect && rec.released => {}
            _ => return Ok(None),
        }
        match self.acquire_over(record, live)? {
            Acquired::HeldBy(_) => Ok(None),
            held => Ok(Some(held)),
        }
    }

    /// Writes the ownership record at a new generation over `record` (as read),
    /// then restores the head.
    fn acquire_over(
        &mut self,
        record: Option<(OwnerRecord, ETag)>,
        live: &dyn Fn(&str) -> bool,
    ) -> Result<Acquired, ReplicaError> {
        let history = self.history()?;
        if !self.take_generation(record.as_ref(), &history)? {
            // Another node acquired in between: it holds the actor now.
            let holder = self.read_record()?.map_or_else(String::new, |(r, _)| r.node);
            return Ok(Acquired::HeldBy(holder));
        }
        let head_object = history_chain::head(&history);
        let head = head_object.map(|o| o.pos);
        let deleted = head_object.is_some_and(|o| o.kind == Kind::Reset);
        let image = match head {
            // An object gone since the listing (a reset landed above it
            // meanwhile) fails here; the next acquire lists again (nothing
            // was fenced).
            Some(p) => {
                let chain = history_chain::chain(&history, p)?;
                self.since_whole = (chain.len().saturating_sub(1) as u64, 0);
                Some(history_chain::state_at(self.bucket.as_ref(), &history, p)?)
            }
            None => None,
        };
        self.head = head;
        self.last_hash = image.as_deref().map(hash);
        if let Some(img) = &image {
            // The fence: the restored state at this generation, as a page
            // set on the head that names no page (ADR 064), or the whole
            // image where it is no database to count pages in.
            match image_page_size(img) {
                Some(size) => {
                    let pages = u32::try_from(img.len() / size as usize).unwrap_or(u32::MAX);
                    self.upload_pages(&PageSet::new(size, pages), live)?;
                }
                None => {
                    self.upload(Kind::Segment, img, live)?;
                }
            }
        }
        // A purge cut short (ADR 031): what lies before the newest reset goes
        // now; the restore above never reads it, and the fence is above it.
        for o in before_newest_reset(&history) {
            let _ = self.bucket.delete(&o.key);
        }
        Ok(Acquired::Held { image, head, deleted })
    }

    /// Writes the ownership record at a generation above every one the
    /// record (as read) and `history` have seen, on the record's version:
    /// this node holds the actor from now. False when another writer got
    /// there first (nothing is held then).
    ///
    /// # Errors
    /// The bucket failed.
    pub(super) fn take_generation(
        &mut self,
        record: Option<&(OwnerRecord, ETag)>,
        history: &[HistoryObject],
    ) -> Result<bool, ReplicaError> {
        let highest = history.iter().map(|o| o.pos.generation).max().unwrap_or(0);
        let generation = record.map_or(0, |(r, _)| r.generation).max(highest) + 1;
        let body = serde_json::to_vec(&OwnerRecord {
            node: self.node.clone(),
            generation,
            released: false,
            committed: 0,
        })
        .map_err(|_| ReplicaError::CorruptRecord(keys::owner(&self.key)))?;
        let cond = match record {
            Some((_, etag)) => PutCondition::IfMatch(etag.clone()),
            None => PutCondition::IfAbsent,
        };
        // A lost answer is settled by reading the record back: ours, held;
        // another node's, it got there first (issue 57).
        let etag = match put_read_back(self.bucket.as_ref(), &keys::owner(&self.key), &body, &cond) {
            Ok(e) => e,
            Err(BucketError::PreconditionFailed(_)) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        self.hold = Some(Hold { generation, etag });
        self.next_seq = 0;
        Ok(true)
    }

    /// Whether the hold is still valid: the record names this node at its
    /// generation and the node is live.
    ///
    /// # Errors
    /// The bucket failed.
    pub fn holds(&mut self, live: &dyn Fn(&str) -> bool) -> Result<bool, ReplicaError> {
        let Some(hold) = self.hold.clone() else {
            return Ok(false);
        };
        if !live(&self.node) {
            return Ok(false);
        }
        if self.faults.take(FaultKind::LoseHold) {
            // Another node takes the actor over, as a node that believed this one dead would.
            let thief = OwnerRecord {
                node: format!("{}-usurper", self.node),
                generation: hold.generation + 1,
                released: false,
                committed: 0,
            };
            let body = serde_json::to_vec(&thief).unwrap_or_default();
            let _ = self.bucket.put(&keys::owner(&self.key), &body, &PutCondition::None);
        }
        Ok(match self.read_record()? {
            Some((rec, etag)) => {
                rec.node == self.node && rec.generation == hold.generation && !rec.released && etag == hold.etag
            }
            None => false,
        })
    }
}
