//! Going back in time in a test (ADR 064): an actor's history as its
//! positions (bookmarks, kinds, times), and a restore to a bookmark or a
//! time, undone by another. A cluster keeps history in its bucket; a single
//! node in `<data-dir>/history` when the host was started with `history`.

use super::*;
use wasmkeep_host::bucket::{LocalDirBucket, ObjectStore};
use wasmkeep_host::history::Pos;
use wasmkeep_host::replica::Target;

/// Where to go back to: a bookmark from [`TestHost::history`], or a time
/// (virtual ms) meaning the last state written at or before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreTo {
    /// A bookmark (`<generation>-<seq>`, as the history lists it).
    Bookmark(String),
    /// A time in ms since the epoch on the host's clock.
    Time(u64),
}

/// One position of an actor's history, as a test reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryPosition {
    /// Its bookmark: restore to it; bookmarks sort as positions do.
    pub bookmark: String,
    /// What it is: `upload` (a whole image), `pages`, `fence`, `reset`, `snapshot`.
    pub kind: String,
    /// When it was written, on the host's clock (ms).
    pub at: u64,
    /// Whether it is the actor's current state.
    pub head: bool,
}

impl TestHost {
    /// Where the actor's history is: the cluster's bucket, or the single
    /// node's history directory.
    fn history_store(&self) -> Result<Arc<dyn ObjectStore>, TestHostError> {
        if let Some(c) = &self.cluster {
            return Ok(c.bucket().clone());
        }
        let rt = self.runtime()?;
        let Some(h) = rt.config().history.as_ref() else {
            return Err(TestHostError::NoHistory);
        };
        Ok(Arc::new(LocalDirBucket::new(
            h.dir.clone(),
            Arc::new(wasmkeep_host::clock::SystemClock),
        )))
    }

    /// The actor's history, oldest first (snapshots left out: they are
    /// where restores begin, not states of their own).
    ///
    /// # Errors
    /// A single node started without `history`; the history could not be read.
    pub fn history(&self, key: &ActorKey) -> Result<Vec<HistoryPosition>, TestHostError> {
        let store = self.history_store()?;
        let records = wasmkeep_host::actor_records::actor_records(store.as_ref(), key)
            .map_err(|e| TestHostError::Cluster(e.to_string()))?;
        Ok(records
            .history
            .into_iter()
            .filter(|r| !matches!(r.entry, wasmkeep_host::actor_records::HistoryEntry::Snapshot))
            .map(|r| HistoryPosition {
                kind: serde_json::to_value(&r.entry)
                    .ok()
                    .and_then(|v| v.get("kind").and_then(|k| k.as_str().map(str::to_owned)))
                    .unwrap_or_default(),
                bookmark: r.bookmark,
                at: r.written_at,
                head: r.head,
            })
            .collect())
    }

    /// Restores the actor to `to`, in its mailbox after what is queued: its
    /// open sockets close (1012), its alarm becomes the restored state's,
    /// and the next event runs on the restored state. Restoring to the
    /// answer's `undo` undoes it.
    ///
    /// # Errors
    /// A malformed bookmark; a single node started without `history`; no such
    /// actor; a target before its first state or its last delete.
    pub fn restore(&self, key: &ActorKey, to: &RestoreTo) -> Result<wasmkeep_host::Restored, TestHostError> {
        let target = match to {
            RestoreTo::Time(ms) => Target::Time(*ms),
            RestoreTo::Bookmark(b) => {
                Target::Bookmark(b.parse::<Pos>().map_err(|()| TestHostError::BadBookmark(b.clone()))?)
            }
        };
        if self.cluster.is_none() {
            self.history_store()?;
        }
        let rt = self.acting_node()?;
        let restored = rt.admin().restore_actor(key, target)?;
        for rt in self.all_nodes()? {
            rt.settle(key);
        }
        Ok(restored)
    }
}
