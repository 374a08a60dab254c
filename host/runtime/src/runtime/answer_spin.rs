//! Which waiters for an answer may look for it before they park (ADR 037).
//!
//! A waiter that spins keeps its tokio thread polling, so a short event's
//! answer is read by a thread already awake. One spinner is enough for
//! that. With eight connections to one actor, eight spinning waiters kept
//! both tokio threads busy yielding to each other while the answers they
//! waited for queued behind one actor: the rate was the same as with a
//! single spinner, and the GET's p99 1.3–3.8× as long (five pairs of runs,
//! ADR 037 addendum). So one waiter spins at a time, and the others park at once.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many waiters may spin at once, and how many do.
pub(super) struct SpinTurns {
    spinning: AtomicUsize,
    most: usize,
}

/// A waiter's turn to spin, given back when dropped.
pub(super) struct SpinTurn<'a> {
    turns: &'a SpinTurns,
}

impl SpinTurns {
    pub(super) const fn new(most: usize) -> Self {
        Self {
            spinning: AtomicUsize::new(0),
            most,
        }
    }

    /// A turn to spin, or `None` when as many waiters spin already.
    pub(super) fn take(&self) -> Option<SpinTurn<'_>> {
        self.spinning
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.most).then_some(n + 1)
            })
            .ok()
            .map(|_| SpinTurn { turns: self })
    }
}

impl Drop for SpinTurn<'_> {
    fn drop(&mut self) {
        self.turns.spinning.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The process's turns: its tokio threads serve every node in it.
pub(super) static ANSWER_SPIN_TURNS: SpinTurns = SpinTurns::new(1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_waiter_spins_at_a_time_and_the_turn_comes_back() {
        let turns = SpinTurns::new(1);
        let first = turns.take().expect("the first waiter spins");
        assert!(turns.take().is_none(), "a second waiter parks at once");
        drop(first);
        assert!(turns.take().is_some(), "the turn came back");
    }
}
