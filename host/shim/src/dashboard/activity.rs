//! Each actor's last event as the dev server saw it (a request, a socket
//! opened, an alarm or an action run from the dashboard) and its outcome,
//! for the actors list. The server records what passes through it; the host
//! library keeps no such record, and this one costs the event path one short
//! lock.

use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use wasmkeep_host::ActorKey;

/// How many actors' last events are kept; past it new actors go unrecorded
/// (a flood of names must not grow the server without bound).
const MAX_ACTORS: usize = 100_000;

/// One actor's last event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastEvent {
    /// When, on the host's clock (ms; virtual under `--virtual-clock`).
    pub at: u64,
    /// What: `POST /deposit`, `socket /`, `alarm`, `hibernate`.
    pub what: String,
    /// Its outcome: the status answered, `ran`/`not due`, or the failure's kind.
    pub outcome: String,
}

/// The last events, shared by the server's routes. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    last: Arc<Mutex<HashMap<ActorKey, LastEvent>>>,
}

impl Activity {
    /// Records `key`'s last event.
    pub fn record(&self, key: &ActorKey, at: u64, what: impl Into<String>, outcome: impl Into<String>) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if last.len() >= MAX_ACTORS && !last.contains_key(key) {
            return;
        }
        last.insert(
            key.clone(),
            LastEvent {
                at,
                what: what.into(),
                outcome: outcome.into(),
            },
        );
    }

    /// Every recorded last event.
    pub(crate) fn snapshot(&self) -> HashMap<ActorKey, LastEvent> {
        self.last.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// `key`'s last event.
    pub(crate) fn get(&self, key: &ActorKey) -> Option<LastEvent> {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }
}
