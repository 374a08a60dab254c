//! How many actors may be resident on a node at once, and who waits.
//!
//! Each resident actor has a wasmtime store with a large address-space
//! reservation (about a dozen memory maps), a worker thread while it is
//! busy (ADR 044), and while its database is open two open files (the
//! database and its WAL: no shared memory since ADR 040). With no cap, enough distinct names
//! exhaust the process's maps or descriptors and the host aborts or stops
//! accepting connections. So a node admits at most `limit` workers; a mailbox
//! that needs one beyond that waits in a bounded queue while the least
//! recently used residents are asked to hibernate, and when the queue is full
//! too the event is refused (503 with `Retry-After`). ADR 012.

use crate::job::Job;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

/// Descriptors counted for a resident actor: its database and WAL, and
/// one more for a client's connection or a WebSocket (a chat room's actor
/// holds its sockets). Past the limit anyway, idle actors' databases are
/// closed (ADR 055).
const FILES_PER_ACTOR: u64 = 3;
/// Memory maps a resident actor adds (measured: about 12; kept with room).
const MAPS_PER_ACTOR: u64 = 16;
/// Descriptors and maps kept for everything else (sockets, the alarm index,
/// the cache, wasmtime's code).
const RESERVED_FILES: u64 = 128;
const RESERVED_MAPS: u64 = 2048;
/// The cap when the machine allows more.
const MOST_RESIDENT: usize = 4096;

/// The resident-actor cap this process can afford: the smallest of 4,096,
/// what the open-files limit allows and what `vm.max_map_count` allows.
pub fn default_resident_limit() -> usize {
    let by_files = crate::open_files::limit().map_or(u64::MAX, |n| n.saturating_sub(RESERVED_FILES) / FILES_PER_ACTOR);
    let by_maps = max_map_count().map_or(u64::MAX, |n| n.saturating_sub(RESERVED_MAPS) / MAPS_PER_ACTOR);
    let limit = by_files.min(by_maps).min(MOST_RESIDENT as u64);
    usize::try_from(limit).unwrap_or(MOST_RESIDENT).max(1)
}

fn max_map_count() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// A mailbox as the residency sees it: it only orders them by use (the
/// node's mailbox type implements this, so this module needs nothing of it).
pub(crate) trait UsedAt {
    /// When an event was last enqueued to it (a tick of [`Residency::touch`]).
    fn used_at(&self) -> &AtomicU64;
}

/// What [`Residency::admit`] decided for a mailbox that needs a worker.
pub(crate) enum Admission<Mailbox> {
    /// Start worker `id` now, on this receiver.
    Start { id: u64, rx: mpsc::Receiver<Job> },
    /// It waits for a worker (the queue keeps the receiver); these
    /// residents are asked to hibernate.
    Wait { evict: Vec<Arc<Mailbox>> },
    /// Too many wait already: refuse the event.
    Full { rx: mpsc::Receiver<Job> },
}

struct Waiting<Mailbox> {
    mailbox: Arc<Mailbox>,
    rx: mpsc::Receiver<Job>,
}

struct State<Mailbox> {
    /// Workers alive, by worker id (a key may briefly have an old worker
    /// leaving and a new one starting).
    live: HashMap<u64, Arc<Mailbox>>,
    waiting: VecDeque<Waiting<Mailbox>>,
    /// Worker ids asked to hibernate and not gone yet.
    evicting: HashSet<u64>,
    next_id: u64,
}

impl<Mailbox> Default for State<Mailbox> {
    fn default() -> Self {
        Self {
            live: HashMap::new(),
            waiting: VecDeque::new(),
            evicting: HashSet::new(),
            next_id: 0,
        }
    }
}

/// The node's resident-actor cap and its waiting queue.
pub(crate) struct Residency<Mailbox> {
    limit: usize,
    state: Mutex<State<Mailbox>>,
    /// Bumped at every event: a mailbox's `last_used` orders residents for eviction.
    ticks: AtomicU64,
    /// `state.waiting.len()`, read without the lock by idle workers.
    waiting: AtomicUsize,
}

impl<Mailbox: UsedAt> Residency<Mailbox> {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
            state: Mutex::new(State::default()),
            ticks: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
        }
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State<Mailbox>> {
        crate::unpoisoned::lock(&self.state)
    }

    /// Marks `mailbox` as used now (each enqueued event).
    pub(crate) fn touch(&self, mailbox: &Mailbox) {
        let tick = self.ticks.fetch_add(1, Ordering::Relaxed);
        mailbox.used_at().store(tick, Ordering::Relaxed);
    }

    /// A mailbox needs a worker: start one, queue it, or refuse.
    pub(crate) fn admit(&self, mailbox: &Arc<Mailbox>, rx: mpsc::Receiver<Job>) -> Admission<Mailbox> {
        let mut state = self.state();
        if state.live.len() < self.limit && state.waiting.is_empty() {
            let id = state.next_id;
            state.next_id += 1;
            state.live.insert(id, mailbox.clone());
            return Admission::Start { id, rx };
        }
        // As many may wait as may be resident: beyond that the host is
        // overloaded, and waiting longer would only hold the client.
        if state.waiting.len() >= self.limit {
            return Admission::Full { rx };
        }
        state.waiting.push_back(Waiting {
            mailbox: mailbox.clone(),
            rx,
        });
        self.waiting.store(state.waiting.len(), Ordering::Release);
        // One resident leaves per waiter: the least recently used not leaving already.
        let wanted = state.waiting.len().saturating_sub(state.evicting.len());
        let mut candidates: Vec<(u64, u64, Arc<Mailbox>)> = state
            .live
            .iter()
            .filter(|(id, _)| !state.evicting.contains(id))
            .map(|(id, m)| (m.used_at().load(Ordering::Relaxed), *id, m.clone()))
            .collect();
        candidates.sort_unstable_by_key(|(used, id, _)| (*used, *id));
        let mut evict = Vec::new();
        for (_, id, m) in candidates.into_iter().take(wanted) {
            state.evicting.insert(id);
            evict.push(m);
        }
        Admission::Wait { evict }
    }

    /// Worker `id` ended. Returns the next waiting mailbox to start, with its
    /// new worker id, if one waits.
    pub(crate) fn left(&self, id: u64) -> Option<(u64, Arc<Mailbox>, mpsc::Receiver<Job>)> {
        let mut state = self.state();
        state.live.remove(&id);
        state.evicting.remove(&id);
        if state.live.len() >= self.limit {
            return None;
        }
        let next = state.waiting.pop_front()?;
        self.waiting.store(state.waiting.len(), Ordering::Release);
        let id = state.next_id;
        state.next_id += 1;
        state.live.insert(id, next.mailbox.clone());
        Some((id, next.mailbox, next.rx))
    }

    /// Whether any mailbox waits for a worker: then an idle worker leaves at
    /// once instead of after the idle timeout.
    pub(crate) fn anyone_waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire) > 0
    }
}
