//! A holder whose own files are the state (a single node's history, ADR
//! 064): it starts a generation on the image it has, without restoring
//! what the history holds.

use super::{Kind, Replica, ReplicaError};

impl Replica {
    /// Takes the actor at a new generation and puts `image` on the history
    /// as a whole object: the base the page sets that follow apply to. What
    /// the history held before stays for restores; nothing is read from it.
    /// Returns the position of the image.
    ///
    /// # Errors
    /// Another live holder (`HoldLost`), or the bucket failed.
    pub fn begin_with(
        &mut self,
        image: &[u8],
        live: &dyn Fn(&str) -> bool,
    ) -> Result<crate::history::Pos, ReplicaError> {
        let record = self.read_record()?;
        if let Some((rec, _)) = &record
            && !rec.released
            && rec.node != self.node
            && live(&rec.node)
        {
            return Err(ReplicaError::HoldLost);
        }
        let history = self.history()?;
        if !self.take_generation(record.as_ref(), &history)? {
            return Err(ReplicaError::HoldLost);
        }
        self.head = crate::history_chain::head(&history).map(|o| o.pos);
        self.upload(Kind::Segment, image, live)
    }

    /// Whether this replica holds the actor (as far as it knows).
    pub fn is_held(&self) -> bool {
        self.hold.is_some()
    }
}
