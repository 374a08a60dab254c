//! The simulation's book: what the answers so far allow for each counter
//! ([`Counter`]), checked on every answer ([`Book`]: ADR 0028's invariants,
//! and the bounds a restore or a fork to a time must keep), and the seeded
//! draws ([`Draws`]).

use std::collections::{HashMap, HashSet};

/// The time in ms since the epoch: the nodes stamp their history with the
/// same clock (one machine).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A small xorshift: the simulation's draws, replayable from the printed seed.
pub struct Draws(pub u64);

impl Draws {
    pub fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }

    pub fn index(&mut self, len: usize) -> usize {
        usize::try_from(self.next(len as u64)).unwrap_or(0)
    }
}

/// What the answers so far allow for one counter.
#[derive(Debug, Default)]
pub struct Counter {
    /// The last acknowledged count: the counter holds at least this.
    pub lo: u64,
    /// At most this: `lo` plus every write since that may have landed.
    pub hi: u64,
    /// Writes of the pauser in flight (they may still land).
    pub pending: u64,
    /// Acknowledged deletes so far: a count belongs to one incarnation.
    pub incarnation: u64,
    /// Counts acknowledged in this incarnation: each only once.
    pub acked: HashSet<u64>,
    /// Where this incarnation began is not known exactly (a delete or a
    /// restore not acknowledged, or writes of the one before still in
    /// flight): no restore is checked in it.
    pub inexact: bool,
    /// The count the incarnation began with (0, or what a restore read).
    pub base: u64,
    /// When each write of this incarnation was sent (ms).
    pub sends: Vec<u64>,
    /// When each acknowledged answer of this incarnation came (ms), and its count.
    pub acks: Vec<(u64, u64)>,
    /// When the last acknowledged delete was sent (ms): a restore to a time
    /// before it is refused.
    pub deleted_before: Option<u64>,
}

impl Counter {
    /// A new incarnation beginning at `base` (exactly, or not), keeping
    /// what outlives incarnations.
    pub fn next(&self, lo: u64, hi: u64, base: u64, inexact: bool, deleted_before: Option<u64>) -> Self {
        Self {
            lo,
            hi,
            pending: self.pending,
            incarnation: self.incarnation + 1,
            acked: HashSet::new(),
            inexact: inexact || self.pending > 0,
            base,
            sends: Vec::new(),
            acks: Vec::new(),
            deleted_before,
        }
    }

    /// What a state at time `t` of this incarnation must hold: at least the
    /// last count acknowledged by then, at most one more than the base for
    /// each write sent by then. None when the incarnation is not exact or
    /// had no acknowledged write by `t`.
    pub fn bounds_at(&self, t: u64) -> Option<(u64, u64)> {
        if self.inexact {
            return None;
        }
        let lo = self.acks.iter().filter(|(at, _)| *at <= t).map(|(_, n)| *n).max()?;
        let sent = self.sends.iter().filter(|at| **at <= t).count() as u64;
        Some((lo, self.base + sent))
    }
}

/// The counters and what was seen.
#[derive(Debug, Default)]
pub struct Book {
    pub counters: HashMap<&'static str, Counter>,
    pub violations: Vec<String>,
    pub acked_writes: u64,
    pub durable_deletes: u64,
    pub operator_deletes: u64,
    pub unacknowledged: u64,
    pub pauses: u64,
    /// Paused holders' writes that were refused once they resumed.
    pub paused_refused: u64,
    pub kills: u64,
    /// Restores acknowledged and checked, refused across a delete, forks checked.
    pub restores: u64,
    pub refused_restores: u64,
    pub forks: u64,
}

impl Book {
    pub fn counter(&mut self, name: &'static str) -> &mut Counter {
        self.counters.entry(name).or_default()
    }

    /// A write about to be sent: it may land from now on. Returns what the
    /// counter was when it was asked: `(lo, incarnation)`.
    pub fn asking(&mut self, name: &'static str) -> (u64, u64) {
        let c = self.counter(name);
        c.pending += 1;
        c.hi += 1;
        c.sends.push(now_ms());
        (c.lo, c.incarnation)
    }

    /// A write answered: acknowledged with a count, or not (it may or may not have landed).
    pub fn answered(&mut self, name: &'static str, count: Option<u64>, asked_at: (u64, u64), who: &str) {
        let c = self.counters.entry(name).or_default();
        c.pending -= 1;
        let Some(n) = count else {
            self.unacknowledged += 1;
            return;
        };
        self.acked_writes += 1;
        if asked_at.1 != c.incarnation {
            // A delete or a restore, acknowledged or not, came in between:
            // nothing to compare with.
            return;
        }
        c.acks.push((now_ms(), n));
        let mut wrong = Vec::new();
        if n <= asked_at.0 {
            wrong.push(format!(
                "{who}: {name} answered {n}, not above {} acknowledged before it was asked: an acknowledged write was lost",
                asked_at.0
            ));
        }
        if !c.acked.insert(n) {
            wrong.push(format!(
                "{who}: {name} answered {n} a second time in one incarnation: two holders acknowledged the same count, \
                 one write was lost"
            ));
        }
        if n > c.hi {
            wrong.push(format!(
                "{who}: {name} answered {n}, above the {} writes that may have landed: a deleted count came back",
                c.hi
            ));
        }
        if n > c.lo {
            c.lo = n;
            c.hi = n + c.pending;
        }
        self.violations.extend(wrong);
    }

    /// A delete answered: acknowledged (the counter starts again from 0), or
    /// not (it may or may not have happened: a new incarnation with what the
    /// old one allowed as its upper bound).
    pub fn delete_answered(&mut self, name: &'static str, acknowledged: bool, sent_ms: u64) {
        let c = self.counter(name);
        let hi = if acknowledged { c.pending } else { c.hi };
        let deleted_before = if acknowledged { Some(sent_ms) } else { c.deleted_before };
        *c = c.next(0, hi, 0, !acknowledged, deleted_before);
        if !acknowledged {
            self.unacknowledged += 1;
        }
    }

    /// A restore answered: acknowledged, with the count read right after it
    /// (the counter goes on from there), or not known (it may or may not
    /// have happened; what it restored is at most what was allowed).
    pub fn restore_answered(&mut self, name: &'static str, count: Option<u64>) {
        let c = self.counter(name);
        *c = match count {
            Some(n) => c.next(n, n + c.pending, n, false, c.deleted_before),
            None => c.next(0, c.hi, 0, true, c.deleted_before),
        };
        if count.is_none() {
            self.unacknowledged += 1;
        }
    }
}
