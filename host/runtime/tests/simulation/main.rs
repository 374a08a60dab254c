//! A deterministic simulation of cluster nodes sharing a bucket, driving the
//! real replica code (`wasmkeep_host::replica`): nodes write, delete (as the
//! guest, durably, or by acquiring only to delete), are cut off and come back,
//! take over, restore, hibernate and collect, and a control pass purges what
//! lies before the newest reset (ADR 031), while uploads fail, land late or
//! land and report failure. ADR 0028's invariants are checked after every step:
//!
//! - every acknowledged write is restored unless an acknowledged-or-landed
//!   delete after it on the chain removed it;
//! - nothing a delete removed and that was acknowledged before it comes back;
//! - the delete itself is kept.
//!
//! History is page sets on a chain (ADR 064): a write uploads the page it
//! adds, snapshots bound the chain, collections under a retention window
//! erase and compact what lies before it, and restores put an earlier state
//! on the head. Also checked after every step:
//!
//! - a restore to time T gives a state holding every write acknowledged at
//!   or before T that no delete or restore before T removed, and none
//!   acknowledged after T;
//! - an acknowledged state inside the window is restored exactly;
//! - a restore never crosses a delete.
//!
//! Three deliberately broken variants must be caught: a delete acknowledged
//! after its hold ended, erasing before the delete is acknowledged, and a
//! compaction that drops a page set. Each run is reproducible from the seed
//! it prints (`WASMKEEP_SIM_SEED=<n>` reruns one).

mod rng;
mod sim_bucket;

use rng::Rng;
use sim_bucket::{Backend, PutFate, SimBucket};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use wasmkeep_host::ActorKey;
use wasmkeep_host::bucket::PutCondition;
use wasmkeep_host::clock::{Clock, VirtualClock};
use wasmkeep_host::faults::Faults;
use wasmkeep_host::history_chain::{self, state_at};
use wasmkeep_host::keys;
use wasmkeep_host::page_set::PageSet;
use wasmkeep_host::replica::{Acquired, Broken, Kind, Pos, Replica, ReplicaError, Target, parse_history_key};

/// The retention window the simulation collects under: twenty steps.
const WINDOW_MS: u64 = 20_000;
/// How far the clock moves each step.
const STEP_MS: u64 = 1_000;
/// The simulated database's page size.
const PAGE: usize = 512;

struct Node {
    name: String,
    replica: Replica,
    /// Believes it holds the actor (it may be wrong: cut off, or taken over).
    held: bool,
    /// Its local database: the ids of the writes it holds.
    local: Vec<u64>,
}

/// A write's page: its id in the first eight bytes.
fn page_of(id: u64) -> Vec<u8> {
    let mut p = vec![0u8; PAGE];
    p[..8].copy_from_slice(&id.to_le_bytes());
    p
}

/// The simulated database: a header page as SQLite's begins, then a page a write.
fn encode(v: &[u64]) -> Vec<u8> {
    let mut img = vec![0u8; PAGE];
    img[..16].copy_from_slice(b"SQLite format 3\0");
    img[16..18].copy_from_slice(&u16::try_from(PAGE).expect("page size").to_be_bytes());
    for id in v {
        img.extend_from_slice(&page_of(*id));
    }
    img
}

fn decode(b: &[u8]) -> Vec<u64> {
    b.chunks(PAGE)
        .skip(1)
        .map(|p| u64::from_le_bytes(p[..8].try_into().expect("eight bytes")))
        .collect()
}

struct World {
    rng: Rng,
    bucket: Arc<SimBucket>,
    nodes: Vec<Node>,
    live: HashSet<String>,
    key: ActorKey,
    next_write: u64,
    /// Acknowledged writes and the position their upload had.
    acked_writes: Vec<(u64, Pos)>,
    /// Acknowledged deletes (reset positions).
    acked_resets: Vec<Pos>,
    /// Every acknowledged state: when, where, and what it holds.
    acked_states: Vec<(u64, Pos, Vec<u64>)>,
    /// Restores to a time: when asked, the time, and what came back.
    restores: Vec<(u64, u64, Vec<u64>)>,
    clock: VirtualClock,
    /// Restores, and page sets merged and objects erased by collections.
    counts: Counts,
    steps: u64,
}

/// What the simulation's history steps did, for the report.
#[derive(Default, Clone, Copy)]
struct Counts {
    restores: u64,
    merged: u64,
    erased: u64,
    snapshots: u64,
}

impl World {
    fn new(seed: u64, broken: Option<Broken>, backend: &Backend) -> Self {
        let clock = VirtualClock::default();
        let bucket = Arc::new(SimBucket {
            inner: backend.open(Arc::new(clock.clone())),
            next_put: Mutex::new(PutFate::Normal),
            fail_erase: Mutex::new(false),
            delayed: Mutex::new(Vec::new()),
            landed: Mutex::new(Vec::new()),
            restoring: Mutex::new(None),
            restores: Mutex::new(HashMap::new()),
        });
        let key = ActorKey::new("sim/app", "c", "a");
        let faults = Arc::new(Faults::default());
        let nodes = ["n1", "n2", "n3"]
            .into_iter()
            .map(|n| {
                let mut replica =
                    Replica::new(bucket.clone(), faults.clone(), key.clone(), n).with_clock(Arc::new(clock.clone()));
                replica.set_broken(broken);
                Node {
                    name: n.into(),
                    replica,
                    held: false,
                    local: Vec::new(),
                }
            })
            .collect();
        Self {
            rng: Rng(seed),
            bucket,
            nodes,
            live: ["n1", "n2", "n3"].into_iter().map(String::from).collect(),
            key,
            next_write: 1,
            acked_writes: Vec::new(),
            acked_resets: Vec::new(),
            acked_states: Vec::new(),
            restores: Vec::new(),
            clock,
            counts: Counts::default(),
            steps: 0,
        }
    }

    fn fate(&mut self) {
        let f = match self.rng.below(100) {
            0..=7 => PutFate::Fail,
            8..=13 => PutFate::Delay,
            14..=17 => PutFate::LandAndFail,
            _ => PutFate::Normal,
        };
        *self.bucket.next_put.lock().expect("lock") = f;
    }

    fn give_up(&mut self, i: usize) {
        let n = &mut self.nodes[i];
        n.replica.forget();
        n.held = false;
        n.local.clear();
    }

    /// Makes node `i` hold the actor (acquire and restore) unless it believes it does.
    fn ensure_held(&mut self, i: usize) -> bool {
        if self.nodes[i].held {
            return true;
        }
        if !self.live.contains(&self.nodes[i].name) {
            return false;
        }
        let live = self.live.clone();
        self.fate();
        let r = self.nodes[i].replica.acquire(&|n: &str| live.contains(n));
        *self.bucket.next_put.lock().expect("lock") = PutFate::Normal;
        match r {
            Ok(Acquired::Held { image, .. }) => {
                let n = &mut self.nodes[i];
                n.held = true;
                n.local = image.as_deref().map(decode).unwrap_or_default();
                true
            }
            Ok(Acquired::HeldBy(_)) => false,
            Err(_) => {
                self.give_up(i);
                false
            }
        }
    }

    fn write(&mut self, i: usize) {
        if !self.ensure_held(i) {
            return;
        }
        let w = self.next_write;
        self.next_write += 1;
        self.nodes[i].local.push(w);
        let live = self.live.clone();
        self.fate();
        let n = &mut self.nodes[i];
        // The page the write adds, on the head; a new actor's first state whole.
        let uploaded = if n.replica.head().is_some() {
            let pages = u32::try_from(n.local.len() + 1).expect("pages");
            let mut set = PageSet::new(u32::try_from(PAGE).expect("page size"), pages);
            set.insert(pages, page_of(w));
            n.replica.upload_pages(&set, &|n: &str| live.contains(n))
        } else {
            n.replica
                .upload(Kind::Segment, &encode(&n.local), &|n: &str| live.contains(n))
        };
        match uploaded {
            Ok(pos) => {
                self.acked_writes.push((w, pos));
                let state = self.nodes[i].local.clone();
                self.acked_states.push((self.clock.now_ms(), pos, state));
            }
            Err(_) => self.give_up(i), // not acknowledged; the next event restores what the bucket holds
        }
    }

    fn delete(&mut self, i: usize, collect: bool) {
        if !self.ensure_held(i) {
            return;
        }
        let live = self.live.clone();
        let empty = encode(&[]);
        self.fate();
        match self.nodes[i].replica.delete(&empty, &|n: &str| live.contains(n)) {
            Ok(pos) => {
                self.acked_resets.push(pos);
                self.acked_states.push((self.clock.now_ms(), pos, Vec::new()));
                self.nodes[i].local.clear();
                if collect {
                    *self.bucket.fail_erase.lock().expect("lock") = self.rng.chance(20);
                    self.fate();
                    let _ = self.nodes[i]
                        .replica
                        .collect_after_delete(pos, &empty, &|n: &str| live.contains(n));
                    *self.bucket.fail_erase.lock().expect("lock") = false;
                }
            }
            Err(_) => self.give_up(i),
        }
    }

    /// The holder puts the state at a time inside the window on the head.
    fn restore(&mut self, i: usize) {
        if !self.nodes[i].held {
            return;
        }
        let now = self.clock.now_ms();
        let to = now - self.rng.below(WINDOW_MS);
        let live = self.live.clone();
        // What it restores, so that whatever it puts (landed or not) is known as a restore's.
        let listing = self.listing();
        let expected = Target::Time(to)
            .position_in(&listing)
            .ok()
            .and_then(|p| state_at(self.bucket.inner.as_ref(), &listing, p).ok())
            .map(|img| decode(&img));
        *self.bucket.restoring.lock().expect("lock") = expected;
        self.fate();
        let restored = self.nodes[i]
            .replica
            .restore_to(Target::Time(to), &|n: &str| live.contains(n));
        *self.bucket.restoring.lock().expect("lock") = None;
        match restored {
            Ok((_, at, image)) => {
                let state = decode(&image);
                self.restores.push((now, to, state.clone()));
                self.counts.restores += 1;
                self.acked_states.push((now, at, state.clone()));
                self.nodes[i].local = state;
            }
            Err(ReplicaError::BeforeDelete { .. } | ReplicaError::Chain(_)) => {}
            Err(_) => self.give_up(i),
        }
    }

    /// The holder collects under the window, or writes a snapshot of its head.
    fn collect(&mut self, i: usize, snapshot: bool) {
        if !self.nodes[i].held {
            return;
        }
        let live = self.live.clone();
        *self.bucket.fail_erase.lock().expect("lock") = self.rng.chance(10);
        let n = &mut self.nodes[i];
        if snapshot {
            if n.replica
                .snapshot(&encode(&n.local), &|n: &str| live.contains(n))
                .is_ok()
            {
                self.counts.snapshots += 1;
            }
        } else if let Ok(done) = n.replica.collect(WINDOW_MS, &|n: &str| live.contains(n)) {
            self.counts.merged += done.merged as u64;
            self.counts.erased += done.erased as u64;
        }
        *self.bucket.fail_erase.lock().expect("lock") = false;
    }

    fn step(&mut self) {
        self.steps += 1;
        self.clock.advance(STEP_MS);
        let i = self.rng.below(self.nodes.len() as u64) as usize;
        match self.rng.below(100) {
            0..=35 => self.write(i),
            36..=41 => self.delete(i, true), // the guest's durable delete, collected at the event's end
            42..=44 => self.delete(i, false), // delete-self whose collection did not run
            45..=47 => self.restore(i),
            48..=51 => self.collect(i, false),
            52..=53 => self.collect(i, true),
            54..=55 => {
                // A node that acquires only to delete (the operator's job).
                if !self.nodes[i].held {
                    self.delete(i, true);
                }
            }
            56..=63 => {
                let name = self.nodes[i].name.clone();
                self.live.remove(&name); // cut off: it still believes it holds
            }
            64..=71 => {
                let name = self.nodes[i].name.clone();
                self.live.insert(name);
            }
            72..=79 => {
                // Hibernate: release the hold.
                if self.nodes[i].held && self.live.contains(&self.nodes[i].name) {
                    let _ = self.nodes[i].replica.release();
                    self.nodes[i].held = false;
                    self.nodes[i].local.clear();
                }
            }
            80..=89 => {
                // A held-back upload lands now.
                let mut d = self.bucket.delayed.lock().expect("lock");
                if !d.is_empty() {
                    let k = self.rng.below(d.len() as u64) as usize;
                    let (key, body) = d.remove(k);
                    drop(d);
                    if self.bucket.inner.put(&key, &body, &PutCondition::IfAbsent).is_ok() {
                        self.bucket.record(&key, &body);
                    }
                }
            }
            90..=93 => {
                // The control pass finishes a purge (ADR 031): what lies before the
                // newest reset is erased by a node that need not hold the actor.
                let _ = wasmkeep_host::purge::purge_history(self.bucket.as_ref(), &keys::history_prefix(&self.key));
            }
            _ => {
                // Another node takes over (the holder may be cut off).
                self.ensure_held(i);
            }
        }
    }

    /// The history as listed now.
    fn listing(&self) -> Vec<wasmkeep_host::history::HistoryObject> {
        let prefix = keys::history_prefix(&self.key);
        let mut objs: Vec<_> = self
            .bucket
            .inner
            .list(&prefix)
            .expect("list")
            .into_iter()
            .filter_map(|m| wasmkeep_host::history::parse_listed(&prefix, &m.key, m.last_modified))
            .collect();
        wasmkeep_host::history::sort(&mut objs);
        objs
    }

    /// The state a restore would read now: the head's position and state.
    fn head(&self) -> Result<(Option<Pos>, Vec<u64>), String> {
        let listing = self.listing();
        match history_chain::head(&listing) {
            None => Ok((None, Vec::new())),
            Some(o) => state_at(self.bucket.inner.as_ref(), &listing, o.pos)
                .map(|img| (Some(o.pos), decode(&img)))
                .map_err(|e| format!("the head {} cannot be restored: {e}", o.pos)),
        }
    }

    /// Every history object that landed (acknowledged or not), parsed, with its body.
    fn landed(&self) -> Vec<(wasmkeep_host::history::HistoryObject, Vec<u8>)> {
        let prefix = keys::history_prefix(&self.key);
        self.bucket
            .landed
            .lock()
            .expect("lock")
            .iter()
            .filter_map(|(k, b)| parse_history_key(&prefix, k).map(|o| (o, b.clone())))
            .collect()
    }

    fn check(&self) -> Result<(), String> {
        let (head, image) = self.head()?;
        let landed = self.landed();
        let resets: BTreeSet<Pos> = landed
            .iter()
            .filter(|(o, _)| o.kind == Kind::Reset)
            .map(|(o, _)| o.pos)
            .collect();
        // A restore that landed after a write (acknowledged or not) and
        // whose state lacks it removed it; so did a reset after it.
        let restores = self.bucket.restores.lock().expect("lock").clone();
        let removed_by = |w: u64, wpos: Pos| {
            resets.iter().chain(self.acked_resets.iter()).any(|r| *r > wpos)
                || landed
                    .iter()
                    .any(|(o, _)| o.pos > wpos && restores.get(&o.key).is_some_and(|state| !state.contains(&w)))
        };
        for (w, wpos) in &self.acked_writes {
            if !removed_by(*w, *wpos) && !image.contains(w) {
                return Err(format!(
                    "acknowledged write {w} (at {wpos}) is lost: the head {head:?} holds {image:?}"
                ));
            }
        }
        for r in &self.acked_resets {
            for (w, wpos) in &self.acked_writes {
                if wpos < r && image.contains(w) {
                    return Err(format!(
                        "write {w} (at {wpos}) came back after the acknowledged delete at {r}"
                    ));
                }
            }
            if head.is_none_or(|h| h < *r) {
                return Err(format!(
                    "the acknowledged delete at {r} is not kept: the head is {head:?}"
                ));
            }
        }
        // A restore to a time brings back nothing acknowledged after it
        // (what it holds of before is checked exactly below: it is a state
        // acknowledged inside the window).
        if let Some((asked, to, state)) = self.restores.last().filter(|r| r.0 == self.clock.now_ms()) {
            for (w, wpos) in &self.acked_writes {
                let when = self.acked_states.iter().find(|s| s.1 == *wpos).map(|s| s.0);
                if when.is_some_and(|t| t > *to && t < *asked) && state.contains(w) {
                    return Err(format!("the restore to {to} brought write {w}, acknowledged after it"));
                }
            }
        }
        // An acknowledged state inside the window restores exactly: the
        // newest three, and one more chosen by the step.
        let newest_reset = resets.iter().chain(self.acked_resets.iter()).max().copied();
        let start = self.clock.now_ms().saturating_sub(WINDOW_MS);
        let inside: Vec<_> = self
            .acked_states
            .iter()
            .filter(|(at, pos, _)| *at > start && newest_reset.is_none_or(|r| *pos >= r))
            .collect();
        let listing = self.listing();
        let picked = inside
            .iter()
            .rev()
            .take(3)
            .chain(inside.get((self.steps as usize) % inside.len().max(1)));
        for (at, pos, state) in picked {
            match state_at(self.bucket.inner.as_ref(), &listing, *pos) {
                Ok(img) if decode(&img) == *state => {}
                Ok(img) => {
                    return Err(format!(
                        "the state acknowledged at {pos} ({at} ms, inside the window) restores as {:?}, not {state:?}",
                        decode(&img)
                    ));
                }
                Err(e) => {
                    return Err(format!(
                        "the state acknowledged at {pos} ({at} ms) cannot be restored: {e}"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The steps run, and the first violation: its seed, its step and what broke.
type Outcome = (u64, Option<(u64, u64, String)>);

/// Runs `seeds` seeds of `steps` steps; returns the first violation (seed, step, what).
fn run(first_seed: u64, seeds: u64, steps: u64, broken: Option<Broken>) -> Outcome {
    run_counting(first_seed, seeds, steps, broken, &Backend::Memory).0
}

/// As [`run`], with what the history steps did over all seeds.
fn run_counting(
    first_seed: u64,
    seeds: u64,
    steps: u64,
    broken: Option<Broken>,
    backend: &Backend,
) -> (Outcome, Counts) {
    let mut total = 0;
    let mut counts = Counts::default();
    for seed in first_seed..first_seed + seeds {
        let mut w = World::new(seed, broken, backend);
        for _ in 0..steps {
            w.step();
            if let Err(e) = w.check() {
                return ((total + w.steps, Some((seed, w.steps, e))), counts);
            }
        }
        total += w.steps;
        counts.restores += w.counts.restores;
        counts.merged += w.counts.merged;
        counts.erased += w.counts.erased;
        counts.snapshots += w.counts.snapshots;
    }
    ((total, None), counts)
}

fn seed_range() -> (u64, u64) {
    match std::env::var("WASMKEEP_SIM_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(s) => (s, 1),
        None => (1, 400),
    }
}

#[test]
fn deletes_never_bring_data_back() {
    let (first, seeds) = seed_range();
    let ((steps, violation), c) = run_counting(first, seeds, 150, None, &Backend::Memory);
    println!(
        "simulation: {seeds} seeds from {first}, {steps} steps, invariants checked after every step; {} restores, {} snapshots, {} page sets merged and {} objects erased by collections",
        c.restores, c.snapshots, c.merged, c.erased
    );
    assert!(
        seeds < 50 || (c.restores > 0 && c.merged > 0 && c.erased > 0),
        "the schedule restored, compacted and collected"
    );
    if let Some((seed, step, what)) = violation {
        panic!("invariant broken at seed {seed}, step {step}: {what} (rerun with WASMKEEP_SIM_SEED={seed})");
    }
}

#[test]
fn a_delete_acked_after_its_hold_ended_is_caught() {
    let (steps, violation) = run(1, 2000, 150, Some(Broken::AckAfterHoldEnded));
    let (seed, step, what) = violation.expect("the simulation must catch a delete acknowledged after its hold ended");
    println!(
        "broken variant (ack after the hold ended) caught at seed {seed}, step {step} after {steps} steps: {what}"
    );
}

#[test]
fn erasing_before_the_delete_is_acked_is_caught() {
    let (steps, violation) = run(1, 2000, 150, Some(Broken::EraseBeforeAck));
    let (seed, step, what) = violation.expect("the simulation must catch erasing before the delete is acknowledged");
    println!("broken variant (erase before ack) caught at seed {seed}, step {step} after {steps} steps: {what}");
}

#[test]
fn a_compaction_that_drops_a_page_set_is_caught() {
    let (steps, violation) = run(1, 2000, 150, Some(Broken::CompactionDropsASegment));
    let (seed, step, what) = violation.expect("the simulation must catch a compaction that drops a page set");
    println!(
        "broken variant (a compaction drops a page set) caught at seed {seed}, step {step} after {steps} steps: {what}"
    );
}

#[test]
fn over_a_file_bucket_deletes_restores_and_collections_keep_every_invariant() {
    let (first, seeds) = match seed_range() {
        (s, 1) => (s, 1),
        _ => (1, 200),
    };
    let backend = Backend::dir();
    let ((steps, violation), c) = run_counting(first, seeds, 60, None, &backend);
    println!(
        "simulation: over file://, {seeds} seeds from {first}, {steps} steps; {} restores, {} snapshots, {} page sets merged and {} objects erased by collections",
        c.restores, c.snapshots, c.merged, c.erased
    );
    if let Some((seed, step, what)) = violation {
        panic!(
            "invariant broken over file:// at seed {seed}, step {step}: {what} (rerun with WASMKEEP_SIM_SEED={seed})"
        );
    }
    assert!(seeds < 50 || c.restores > 0, "the schedule restored");
}
