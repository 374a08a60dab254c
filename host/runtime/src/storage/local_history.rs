//! A single node's history (ADR 064): the same page sets on a chain that a
//! cluster keeps in its bucket, kept in a directory laid out as a `file://`
//! bucket, so `serve` without a cluster can restore an actor too.
//!
//! The actor's database files stay the state: an event's commit is what
//! keeps its writes, and the history follows behind. The event path only
//! reads the pages its commits changed from the WAL and gathers them in the
//! actor's [`Gathering`], in place; it tells the writer thread once, when
//! the gathering starts. The writer takes what was gathered
//! [`HistoryConfig::every`] later and writes it as one page set (with
//! `every` zero, each event's before its end returns). So an event sends
//! nothing to another thread and frees nothing another thread allocated:
//! with a message per event, the history took a fifth of a single node's
//! POST rate (ADR 064). Whenever what the history holds is not known to be the
//! database's state (the actor's first write in this process, a write to
//! the history that failed), the next event hands over the whole image, a
//! new base. A restore waits for what is still to be written.

use super::retention::RetentionWindows;
use crate::address::ActorKey;
use crate::bucket::{LocalDirBucket, ObjectStore};
use crate::clock::Clock;
use crate::config::HistoryConfig;
use crate::faults::Faults;
use crate::page_set::PageSet;
use crate::replica::{Replica, ReplicaError, Target};
use crate::unpoisoned::lock;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The name the single node holds its actors' history under.
const LOCAL_NODE: &str = "local";
/// How many writes to one actor's history go between two collections.
const COLLECT_EVERY: u64 = 256;

/// The time of the commit being written: what the history records, not
/// when the writer got to it.
#[derive(Default)]
struct CommitClock(AtomicU64);

impl Clock for CommitClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What the event path hands the writer.
enum Entry {
    /// The pages an event's commits changed, at the time of its end.
    Pages { key: ActorKey, at_ms: u64, set: PageSet },
    /// An actor's events started gathering pages (the gathering's `round`):
    /// the writer takes them when it gets to this.
    Gathered {
        key: ActorKey,
        gathering: Arc<Mutex<Pending>>,
        round: u64,
    },
    /// The whole database: a new base.
    Whole { key: ActorKey, at_ms: u64, image: Vec<u8> },
    /// The actor was deleted: a reset on its history (with the empty
    /// database its marks make), and what came before erased.
    Reset { key: ActorKey, at_ms: u64, empty: Vec<u8> },
    /// Everything handed over before this is written; then the state at
    /// `to` is put on the head at `at_ms`. The actor's database, closed, is
    /// at `db`: a history that does not follow it starts from it first.
    Restore {
        key: ActorKey,
        to: Target,
        at_ms: u64,
        deleted_at: Option<u64>,
        db: std::path::PathBuf,
        done: mpsc::Sender<Result<RestoredImage, ReplicaError>>,
    },
    /// Everything handed over before this is written; then a position.
    Ask {
        key: ActorKey,
        question: Question,
        done: mpsc::Sender<Result<Option<crate::history::Pos>, ReplicaError>>,
    },
}

/// What the event path asks the writer, once what came before is written.
enum Question {
    /// The head: the position of the state handed over last.
    Head,
    /// The position of the last state written at or before this time, not
    /// before the actor's last delete (ms).
    AtTime { at_ms: u64, deleted_at: Option<u64> },
}

/// What an actor's events gathered that the writer has not taken yet.
#[derive(Default)]
pub(crate) struct Pending {
    /// Counts the takes: a notice of the writer's names the round it was
    /// sent in, and one whose round was taken since (by the event path,
    /// before another entry) is stale.
    round: u64,
    /// The pages, and the time of the last event that changed them.
    set: Option<(PageSet, u64)>,
    /// The time of the first event of the round: a later event's pages
    /// join the round only within [`HistoryConfig::every`] of it, so that
    /// each state stays restorable by its time, as the writer's batches
    /// keep it.
    first_at: u64,
}

impl Pending {
    /// Takes what was gathered, ending the round.
    fn take(&mut self) -> Option<(PageSet, u64)> {
        let taken = self.set.take();
        if taken.is_some() {
            self.round += 1;
        }
        taken
    }
}

/// An actor's gathering of pages, held by whoever holds the actor.
#[derive(Clone, Default)]
pub(crate) struct Gathering(Arc<Mutex<Pending>>);

/// Whether the state at `pos` was written after `deleted_at` (ms), if given.
fn history_written_after(
    history: &[crate::history::HistoryObject],
    pos: crate::history::Pos,
    deleted_at: Option<u64>,
) -> bool {
    deleted_at.is_none_or(|d| {
        history
            .iter()
            .find(|o| o.pos == pos && o.kind != crate::replica::Kind::Snapshot)
            .is_some_and(|o| o.at_ms > d)
    })
}

/// What a restore did: the position restored, the new head, the head
/// before it (restoring to it undoes this one), and the restored image.
pub(crate) struct RestoredImage {
    pub(crate) from: crate::history::Pos,
    pub(crate) at: crate::history::Pos,
    pub(crate) undo: Option<crate::history::Pos>,
    pub(crate) image: Vec<u8>,
}

/// The writer's side: each actor's replica in the history directory.
struct Writer {
    bucket: Arc<dyn ObjectStore>,
    clock: Arc<CommitClock>,
    retention: Arc<RetentionWindows>,
    /// Page sets written within this many ms of each other (by their
    /// commits' times) are gathered into one.
    every_ms: u64,
    actors: HashMap<ActorKey, (Replica, u64)>,
    /// Shared with the event path: actors whose history is the database's state.
    in_step: Arc<Mutex<HashSet<ActorKey>>>,
}

impl Writer {
    fn replica(&mut self, key: &ActorKey) -> &mut (Replica, u64) {
        let (bucket, clock) = (self.bucket.clone(), self.clock.clone());
        self.actors.entry(key.clone()).or_insert_with(|| {
            let r = Replica::new(bucket, Arc::new(Faults::default()), key.clone(), LOCAL_NODE)
                .with_clock(clock)
                .sole_writer();
            (r, 0)
        })
    }

    /// The history no longer follows the database: the next event hands over the whole image.
    fn out_of_step(&mut self, key: &ActorKey, why: &dyn std::fmt::Display) {
        tracing::warn!(actor = %key, "the history falls behind ({why}); the next write starts it again from the whole database");
        lock(&self.in_step).remove(key);
        self.actors.remove(key);
    }

    /// Writes a page set (on the head) or a whole image (a new base) at `at_ms`.
    fn put(&mut self, key: &ActorKey, at_ms: u64, body: Result<PageSet, Vec<u8>>) {
        let live = |_: &str| true;
        self.clock.0.store(at_ms, Ordering::Relaxed);
        let (replica, _) = self.replica(key);
        let r = match body {
            Ok(set) if replica.is_held() && replica.head().is_some() => replica.upload_pages(&set, &live).map(|_| ()),
            Ok(_) => Err(ReplicaError::HoldLost),
            Err(image) if replica.is_held() => replica.upload(crate::replica::Kind::Segment, &image, &live).map(|_| ()),
            Err(image) => replica.begin_with(&image, &live).map(|_| ()),
        };
        match r {
            Ok(()) => self.after_write(key),
            Err(e) => self.out_of_step(key, &e),
        }
    }

    fn write(&mut self, entry: Entry) {
        let live = |_: &str| true;
        match entry {
            Entry::Pages { key, at_ms, set } => self.put(&key, at_ms, Ok(set)),
            Entry::Gathered { key, gathering, round } => {
                if let Some((set, at_ms)) = take_round(&gathering, round) {
                    self.put(&key, at_ms, Ok(set));
                }
            }
            Entry::Whole { key, at_ms, image } => self.put(&key, at_ms, Err(image)),
            Entry::Reset { key, at_ms, empty } => {
                self.clock.0.store(at_ms, Ordering::Relaxed);
                let (replica, _) = self.replica(&key);
                let r = if replica.is_held() {
                    Ok(())
                } else {
                    replica.begin_with(&empty, &live).map(|_| ())
                };
                let r = r
                    .and_then(|()| replica.delete(&empty, &live))
                    .and_then(|reset| replica.collect_after_delete(reset, &empty, &live).map(|_| ()));
                if let Err(e) = r {
                    tracing::warn!(actor = %key, "recording a delete in the history: {e}");
                }
                lock(&self.in_step).remove(&key);
                if let Some((mut replica, _)) = self.actors.remove(&key) {
                    let _ = replica.release();
                }
            }
            Entry::Restore {
                key,
                to,
                at_ms,
                deleted_at,
                db,
                done,
            } => {
                let r = self.restore(&key, to, at_ms, deleted_at, &db);
                if r.is_ok() {
                    // The database becomes the restored image: the history's head.
                    lock(&self.in_step).insert(key);
                }
                let _ = done.send(r);
            }
            Entry::Ask { key, question, done } => {
                let (replica, _) = self.replica(&key);
                let answer = match question {
                    Question::Head => Ok(replica.is_held().then(|| replica.head()).flatten()),
                    Question::AtTime { at_ms, deleted_at } => replica.history().map(|history| {
                        crate::history_chain::restorable_at_time(&history, at_ms)
                            .filter(|p| history_written_after(&history, *p, deleted_at))
                    }),
                };
                let _ = done.send(answer);
            }
        }
    }

    fn restore(
        &mut self,
        key: &ActorKey,
        to: Target,
        at_ms: u64,
        deleted_at: Option<u64>,
        db: &std::path::Path,
    ) -> Result<RestoredImage, ReplicaError> {
        let live = |_: &str| true;
        self.clock.0.store(at_ms, Ordering::Relaxed);
        let (replica, _) = self.replica(key);
        if !replica.is_held() {
            // Nothing written in this process yet: the database, as it is, first.
            let image = std::fs::read(db).map_err(|e| {
                ReplicaError::Bucket(crate::bucket::BucketError::Unavailable(format!(
                    "reading the actor's database: {e}"
                )))
            })?;
            replica.begin_with(&image, &live)?;
        }
        let history = replica.history()?;
        let target = to.position_in(&history)?;
        if let Some(deleted_at_ms) = deleted_at
            && !history_written_after(&history, target, Some(deleted_at_ms))
        {
            return Err(ReplicaError::DeletedSince { target, deleted_at_ms });
        }
        let undo = replica.head();
        let (from, at, image) = replica.restore_to(Target::Bookmark(target), &live)?;
        Ok(RestoredImage { from, at, undo, image })
    }

    /// Now and then, a collection under the app's window.
    fn after_write(&mut self, key: &ActorKey) {
        let window = self.retention.window_ms(&key.app);
        let (replica, writes) = self.replica(key);
        *writes += 1;
        if *writes % COLLECT_EVERY == 0
            && let Err(e) = replica.collect(window, &|_| true)
        {
            tracing::warn!(actor = %key, "collecting the history: {e}");
        }
    }

    /// Writes a batch: each actor's page sets committed within `every` of
    /// the first of their run merged into one, stamped with the last one's
    /// time (a restore to a time in between reaches the state before).
    fn write_batch(&mut self, batch: Vec<Entry>) {
        // Per actor: the first commit's time of the run, the last one's, the set.
        let mut pending: HashMap<ActorKey, (u64, u64, PageSet)> = HashMap::new();
        let mut order: Vec<ActorKey> = Vec::new();
        for entry in batch {
            // What was gathered is taken now, in its place among the entries.
            let entry = match entry {
                Entry::Gathered { key, gathering, round } => match take_round(&gathering, round) {
                    Some((set, at_ms)) => Entry::Pages { key, at_ms, set },
                    None => continue,
                },
                other => other,
            };
            match entry {
                Entry::Pages { key, at_ms, set } => {
                    if let Some((first, at, merged)) = pending.get_mut(&key)
                        && merged.page_size() == set.page_size()
                        && at_ms.saturating_sub(*first) < self.every_ms
                    {
                        // One page size: the merge cannot fail.
                        let _ = merged.merge(set);
                        *at = at_ms;
                        continue;
                    }
                    // The first of the run, or one past its time or of
                    // another page size: what was gathered goes first.
                    if let Some((_, at, merged)) = pending.remove(&key) {
                        self.write(Entry::Pages {
                            key: key.clone(),
                            at_ms: at,
                            set: merged,
                        });
                    } else {
                        order.push(key.clone());
                    }
                    pending.insert(key, (at_ms, at_ms, set));
                }
                other => {
                    let key = match &other {
                        Entry::Whole { key, .. }
                        | Entry::Gathered { key, .. }
                        | Entry::Reset { key, .. }
                        | Entry::Restore { key, .. }
                        | Entry::Ask { key, .. }
                        | Entry::Pages { key, .. } => key.clone(),
                    };
                    if let Some((_, at_ms, set)) = pending.remove(&key) {
                        self.write(Entry::Pages {
                            key: key.clone(),
                            at_ms,
                            set,
                        });
                    }
                    self.write(other);
                }
            }
        }
        for key in order {
            if let Some((_, at_ms, set)) = pending.remove(&key) {
                self.write(Entry::Pages { key, at_ms, set });
            }
        }
    }
}

/// What `gathering` holds, if its round is still `round`.
fn take_round(gathering: &Mutex<Pending>, round: u64) -> Option<(PageSet, u64)> {
    let mut pending = lock(gathering);
    if pending.round == round { pending.take() } else { None }
}

/// A single node's history: the event path's handle on the writer.
pub(crate) struct LocalHistory {
    to_writer: Mutex<Option<mpsc::Sender<Entry>>>,
    /// [`HistoryConfig::every`], in ms.
    every_ms: u64,
    /// With `every` zero: the writer itself, run on the event's thread.
    inline: Option<Mutex<Writer>>,
    in_step: Arc<Mutex<HashSet<ActorKey>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl LocalHistory {
    /// The history `config` names, its windows from `retention`.
    pub(crate) fn start(config: &HistoryConfig, clock: Arc<dyn Clock>, retention: Arc<RetentionWindows>) -> Self {
        let in_step = Arc::new(Mutex::new(HashSet::new()));
        let every_ms = u64::try_from(config.every.as_millis()).unwrap_or(u64::MAX);
        let writer = Writer {
            bucket: Arc::new(LocalDirBucket::new(config.dir.clone(), clock)),
            clock: Arc::new(CommitClock::default()),
            retention,
            every_ms,
            actors: HashMap::new(),
            in_step: in_step.clone(),
        };
        if config.every.is_zero() {
            return Self {
                to_writer: Mutex::new(None),
                every_ms,
                inline: Some(Mutex::new(writer)),
                in_step,
                thread: Mutex::new(None),
            };
        }
        let (tx, rx) = mpsc::channel::<Entry>();
        let every = config.every;
        let thread = std::thread::Builder::new()
            .name("wasmkeep-history".into())
            .spawn(move || run_writer(writer, &rx, every))
            .ok();
        Self {
            to_writer: Mutex::new(thread.as_ref().map(|_| tx)),
            every_ms,
            inline: None,
            in_step,
            thread: Mutex::new(thread),
        }
    }

    fn hand_over(&self, entry: Entry) {
        if let Some(w) = &self.inline {
            return lock(w).write_batch(vec![entry]);
        }
        let sent = lock(&self.to_writer).as_ref().map(|tx| tx.send(entry).is_ok());
        if sent != Some(true) {
            tracing::warn!("the history's writer has stopped: nothing more is written to it");
        }
    }

    /// Whether the history holds the actor's database as it is, so that the
    /// next pages can go on it.
    pub(crate) fn in_step(&self, key: &ActorKey) -> bool {
        lock(&self.in_step).contains(key)
    }

    /// Gathers the pages an event's commits changed into `gathering`,
    /// telling the writer when a round starts.
    pub(crate) fn pages(&self, key: &ActorKey, gathering: &Gathering, at_ms: u64, set: PageSet) {
        if self.inline.is_some() {
            return self.hand_over(Entry::Pages {
                key: key.clone(),
                at_ms,
                set,
            });
        }
        let mut pending = lock(&gathering.0);
        let first_at = pending.first_at;
        let set = match pending.set.as_mut() {
            Some((merged, at))
                if merged.page_size() == set.page_size() && at_ms.saturating_sub(first_at) < self.every_ms =>
            {
                // One page size: the merge cannot fail.
                let _ = merged.merge(set);
                *at = at_ms;
                return;
            }
            // Past the round's time, or another page size (a restore put
            // another database in place): what was gathered goes first.
            Some(_) => {
                let (older, at) = pending.take().expect("gathered");
                self.hand_over(Entry::Pages {
                    key: key.clone(),
                    at_ms: at,
                    set: older,
                });
                set
            }
            None => set,
        };
        pending.set = Some((set, at_ms));
        pending.first_at = at_ms;
        let round = pending.round;
        drop(pending);
        self.hand_over(Entry::Gathered {
            key: key.clone(),
            gathering: gathering.0.clone(),
            round,
        });
    }

    /// Hands over what `gathering` holds, ahead of another entry.
    fn hand_over_gathered(&self, key: &ActorKey, gathering: &Gathering) {
        if let Some((set, at_ms)) = lock(&gathering.0).take() {
            self.hand_over(Entry::Pages {
                key: key.clone(),
                at_ms,
                set,
            });
        }
    }

    /// Hands over the whole database: the history is in step from here.
    pub(crate) fn whole(&self, key: &ActorKey, gathering: &Gathering, at_ms: u64, image: Vec<u8>) {
        self.hand_over_gathered(key, gathering);
        lock(&self.in_step).insert(key.clone());
        self.hand_over(Entry::Whole {
            key: key.clone(),
            at_ms,
            image,
        });
    }

    /// The actor was deleted: its history gets the reset, and loses what came before.
    pub(crate) fn deleted(&self, key: &ActorKey, gathering: &Gathering, at_ms: u64, empty: Vec<u8>) {
        // What was gathered goes before the reset, which erases it.
        self.hand_over_gathered(key, gathering);
        lock(&self.in_step).remove(key);
        self.hand_over(Entry::Reset {
            key: key.clone(),
            at_ms,
            empty,
        });
    }

    /// Waits until everything handed over is written, then restores the
    /// history to `to` (the state there put on the head at `at_ms`),
    /// refusing a state written at or before `deleted_at`. The actor's
    /// database, closed, is `db`.
    ///
    /// # Errors
    /// As [`Replica::restore_to`]; `DeletedSince` for a state from before
    /// the actor's last delete; `HoldLost` when the writer has stopped.
    pub(crate) fn restore(
        &self,
        key: &ActorKey,
        gathering: &Gathering,
        to: Target,
        at_ms: u64,
        deleted_at: Option<u64>,
        db: &std::path::Path,
    ) -> Result<RestoredImage, ReplicaError> {
        self.hand_over_gathered(key, gathering);
        let (done, wait) = mpsc::channel();
        self.hand_over(Entry::Restore {
            key: key.clone(),
            to,
            at_ms,
            deleted_at,
            db: db.to_owned(),
            done,
        });
        wait.recv().unwrap_or(Err(ReplicaError::HoldLost))
    }

    /// The position of the state handed over last, once it is written;
    /// `None` where the history does not follow the actor.
    ///
    /// # Errors
    /// The history failed, or its writer has stopped.
    pub(crate) fn head(
        &self,
        key: &ActorKey,
        gathering: &Gathering,
    ) -> Result<Option<crate::history::Pos>, ReplicaError> {
        self.hand_over_gathered(key, gathering);
        self.ask(key, Question::Head)
    }

    /// The position of the last state written at or before `at_ms`, never
    /// one before the actor's last delete (`deleted_at`, ms).
    ///
    /// # Errors
    /// The history could not be listed, or its writer has stopped.
    pub(crate) fn position_at(
        &self,
        key: &ActorKey,
        gathering: &Gathering,
        at_ms: u64,
        deleted_at: Option<u64>,
    ) -> Result<Option<crate::history::Pos>, ReplicaError> {
        self.hand_over_gathered(key, gathering);
        self.ask(key, Question::AtTime { at_ms, deleted_at })
    }

    fn ask(&self, key: &ActorKey, question: Question) -> Result<Option<crate::history::Pos>, ReplicaError> {
        let (done, wait) = mpsc::channel();
        self.hand_over(Entry::Ask {
            key: key.clone(),
            question,
            done,
        });
        wait.recv().unwrap_or(Err(ReplicaError::HoldLost))
    }

    /// Writes what is handed over and stops the writer (the node shuts down).
    pub(crate) fn stop(&self) {
        lock(&self.to_writer).take();
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
    }
}

impl Drop for LocalHistory {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The writer thread: waits for an entry, gathers what comes for `every`,
/// writes the batch; ends once the sender is gone and all is written.
/// Entries are few (a notice per round of an actor's events, and the rare
/// whole image, delete, restore or question), so each may wake it.
fn run_writer(mut writer: Writer, rx: &mpsc::Receiver<Entry>, every: Duration) {
    let waits = |e: &Entry| matches!(e, Entry::Restore { .. } | Entry::Ask { .. });
    while let Ok(first) = rx.recv() {
        // A restore or a question waiting is served at once; so is
        // everything once the node stops.
        let mut served = waits(&first);
        let mut batch = vec![first];
        let until = std::time::Instant::now() + every;
        while !served {
            match rx.recv_timeout(until.saturating_duration_since(std::time::Instant::now())) {
                Ok(more) => {
                    served = waits(&more);
                    batch.push(more);
                }
                Err(_) => served = true,
            }
        }
        while let Ok(more) = rx.try_recv() {
            batch.push(more);
        }
        writer.write_batch(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(page: u8) -> PageSet {
        let mut s = PageSet::new(512, 1);
        s.insert(1, vec![page; 512]);
        s
    }

    /// A notice of the writer's takes only the round it was sent for: once
    /// the event path handed that round over itself (ahead of another
    /// entry), the notice is stale and a newer round waits for its own.
    #[test]
    fn a_notice_takes_only_its_own_round() {
        let gathering = Gathering::default();
        lock(&gathering.0).set = Some((set(1), 10));
        let first = lock(&gathering.0).round;
        // The event path hands the round over before a restore, say.
        assert!(lock(&gathering.0).take().is_some());
        lock(&gathering.0).set = Some((set(2), 20));
        let second = lock(&gathering.0).round;
        assert_ne!(first, second);
        assert!(
            take_round(&gathering.0, first).is_none(),
            "the stale notice takes nothing"
        );
        let (taken, at) = take_round(&gathering.0, second).expect("the newer round");
        assert_eq!((taken.len(), at), (1, 20));
        assert!(take_round(&gathering.0, second).is_none(), "a round is taken once");
    }

    /// Events within `every` of a round's first join it; a later one starts
    /// a round of its own, so each state stays restorable by its time.
    #[test]
    fn a_round_spans_at_most_every() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = HistoryConfig {
            dir: dir.path().to_owned(),
            every: Duration::from_secs(3600),
        };
        let history = LocalHistory::start(
            &config,
            Arc::new(crate::clock::SystemClock),
            Arc::new(RetentionWindows::default()),
        );
        let key = ActorKey::new("t/app", "c", "a");
        let gathering = Gathering::default();
        history.pages(&key, &gathering, 1_000, set(1));
        let round = lock(&gathering.0).round;
        history.pages(&key, &gathering, 1_000 + 3_599_999, set(2));
        assert_eq!(lock(&gathering.0).round, round, "within the hour: the same round");
        history.pages(&key, &gathering, 1_000 + 3_600_000, set(3));
        assert_eq!(
            lock(&gathering.0).round,
            round + 1,
            "an hour on: the round was handed over"
        );
        let (pending, at) = lock(&gathering.0)
            .set
            .as_ref()
            .map(|(s, at)| (s.len(), *at))
            .expect("gathered");
        assert_eq!((pending, at), (1, 1_000 + 3_600_000));
    }
}
