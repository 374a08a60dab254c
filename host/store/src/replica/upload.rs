//! What the holder writes (ADR 0028 §2, ADR 064): whole images and page
//! sets at the next position, each acknowledged by the ownership record
//! rewritten on its ETag while the hold is valid, and snapshots of the head.

use super::{Broken, Hold, OwnerRecord, Replica, ReplicaError, SNAPSHOT_AFTER_BYTES, SNAPSHOT_AFTER_SETS, hash};
use crate::bucket::{BucketError, PutCondition, put_read_back};
use crate::history::{Kind, Pos, pages_key, whole_key};
use crate::keys;
use crate::page_set::PageSet;

impl Replica {
    /// Uploads `image` as `kind` at the next position. Acknowledged (Ok) only
    /// if the upload completed and the hold was valid before and after it.
    ///
    /// # Errors
    /// `HoldLost` (nothing written, or written but not acknowledgeable), or the
    /// bucket's error (`Ambiguous`: it may have landed).
    pub fn upload(&mut self, kind: Kind, image: &[u8], live: &dyn Fn(&str) -> bool) -> Result<Pos, ReplicaError> {
        let prefix = keys::history_prefix(&self.key);
        let at_ms = self.clock.now_ms();
        let pos = self.put_acknowledged(kind, image, live, |pos| whole_key(&prefix, pos, at_ms, kind))?;
        if kind != Kind::Snapshot {
            self.last_hash = Some(hash(image));
            self.since_whole = (0, 0);
        }
        Ok(pos)
    }

    /// Uploads the pages an event changed as a page set on the head
    /// (ADR 064). Acknowledged as [`Replica::upload`] is.
    ///
    /// # Errors
    /// As [`Replica::upload`]; `HoldLost` also when nothing stands at the
    /// head to put the pages on (the caller uploads the whole image then).
    pub fn upload_pages(&mut self, set: &PageSet, live: &dyn Fn(&str) -> bool) -> Result<Pos, ReplicaError> {
        let Some(parent) = self.head else {
            return Err(ReplicaError::HoldLost);
        };
        let prefix = keys::history_prefix(&self.key);
        let at_ms = self.clock.now_ms();
        let body = set.encode();
        let pos = self.put_acknowledged(Kind::Pages, &body, live, |pos| pages_key(&prefix, pos, at_ms, parent))?;
        // What the head holds is no longer known as one image.
        self.last_hash = None;
        self.since_whole.0 += 1;
        self.since_whole.1 += body.len() as u64;
        Ok(pos)
    }

    /// Whether a snapshot of the head is due: more page sets, or more of
    /// their bytes, on the newest whole object than a restore should replay
    /// for a database of `db_bytes`.
    pub fn snapshot_due(&self, db_bytes: u64) -> bool {
        self.since_whole.0 >= SNAPSHOT_AFTER_SETS || self.since_whole.1 >= db_bytes.max(SNAPSHOT_AFTER_BYTES)
    }

    /// Writes `image`, the state at the head, as a snapshot there: restores
    /// begin at it from now on. Not an acknowledgement of anything: the
    /// state was acknowledged when its page set was.
    ///
    /// # Errors
    /// `HoldLost`, or the bucket failed (a later snapshot tries again).
    pub fn snapshot(&mut self, image: &[u8], live: &dyn Fn(&str) -> bool) -> Result<Pos, ReplicaError> {
        let Some(head) = self.head else {
            return Err(ReplicaError::HoldLost);
        };
        if !self.holds(live)? {
            return Err(ReplicaError::HoldLost);
        }
        let key = whole_key(
            &keys::history_prefix(&self.key),
            head,
            self.clock.now_ms(),
            Kind::Snapshot,
        );
        put_read_back(self.bucket.as_ref(), &key, image, &PutCondition::IfAbsent)?;
        self.since_whole = (0, 0);
        Ok(head)
    }

    /// Puts `body` at the next position under the key `key_at` makes, and
    /// acknowledges it: the hold checked before, the record rewritten on
    /// its ETag after.
    fn put_acknowledged(
        &mut self,
        kind: Kind,
        body: &[u8],
        live: &dyn Fn(&str) -> bool,
        key_at: impl Fn(Pos) -> String,
    ) -> Result<Pos, ReplicaError> {
        let Some(hold) = self.hold.clone() else {
            return Err(ReplicaError::HoldLost);
        };
        let check = !(self.broken == Some(Broken::AckAfterHoldEnded) && kind == Kind::Reset)
            && self.broken != Some(Broken::UploadWithoutCondition)
            && !self.sole_writer;
        if check && !self.holds(live)? {
            return Err(ReplicaError::HoldLost);
        }
        let pos = Pos {
            generation: hold.generation,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        // A lost answer is settled by reading the object back: our bytes, it
        // landed; another writer's at our position, nothing of ours can be
        // acknowledged (issue 57).
        match put_read_back(self.bucket.as_ref(), &key_at(pos), body, &PutCondition::IfAbsent) {
            Ok(_) => {}
            Err(BucketError::PreconditionFailed(_)) => return Err(ReplicaError::HoldLost),
            Err(e) => return Err(e.into()),
        }
        if check {
            self.commit(&hold, pos)?;
            if !live(&self.node) {
                return Err(ReplicaError::HoldLost);
            }
        } else if self.broken == Some(Broken::UploadWithoutCondition) {
            self.commit_unconditionally(&hold, pos)?;
        }
        if kind != Kind::Snapshot {
            self.head = Some(pos);
        }
        Ok(pos)
    }

    /// Acknowledges the upload at `pos`: the ownership record rewritten on
    /// the ETag this hold last wrote. Another node's acquire since then
    /// rewrote the record, so the bucket refuses this write: the upload is
    /// not acknowledged, whatever this node believes about its liveness.
    fn commit(&mut self, hold: &Hold, pos: Pos) -> Result<(), ReplicaError> {
        let body = self.committed_record(hold, pos)?;
        // A lost answer is settled by reading the record back: our bytes,
        // acknowledged (on the ETag read); another node's, the hold is lost.
        match put_read_back(
            self.bucket.as_ref(),
            &keys::owner(&self.key),
            &body,
            &PutCondition::IfMatch(hold.etag.clone()),
        ) {
            Ok(etag) => {
                if let Some(h) = self.hold.as_mut() {
                    h.etag = etag;
                }
                Ok(())
            }
            Err(BucketError::PreconditionFailed(_)) => Err(ReplicaError::HoldLost),
            Err(e) => {
                // Reading back settled nothing: the record may or may not be
                // ours now; not acknowledged, and the next check decides.
                Err(e.into())
            }
        }
    }

    /// The ownership record that acknowledges the upload at `pos`.
    fn committed_record(&self, hold: &Hold, pos: Pos) -> Result<Vec<u8>, ReplicaError> {
        serde_json::to_vec(&OwnerRecord {
            node: self.node.clone(),
            generation: hold.generation,
            released: false,
            committed: pos.seq + 1,
        })
        .map_err(|_| ReplicaError::CorruptRecord(keys::owner(&self.key)))
    }

    /// [`Broken::UploadWithoutCondition`]'s acknowledgement: the record
    /// rewritten whatever it holds now.
    fn commit_unconditionally(&mut self, hold: &Hold, pos: Pos) -> Result<(), ReplicaError> {
        let body = self.committed_record(hold, pos)?;
        let etag = self.bucket.put(&keys::owner(&self.key), &body, &PutCondition::None)?;
        if let Some(h) = self.hold.as_mut() {
            h.etag = etag;
        }
        Ok(())
    }

    /// Uploads `image` as a segment unless it is what the head already holds.
    ///
    /// # Errors
    /// As [`Replica::upload`].
    pub fn upload_if_changed(
        &mut self,
        image: &[u8],
        live: &dyn Fn(&str) -> bool,
    ) -> Result<Option<Pos>, ReplicaError> {
        if self.last_hash == Some(hash(image)) {
            return Ok(None);
        }
        self.upload(Kind::Segment, image, live).map(Some)
    }
}
