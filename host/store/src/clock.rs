//! The clock alarms run on: the system's for `serve`, a virtual one that tests move.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, as the host sees them.
pub trait Clock: Send + Sync + 'static {
    /// The current time in milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
    /// The virtual clock behind this clock, if it is one (tests advance it).
    fn as_virtual(&self) -> Option<&VirtualClock> {
        None
    }
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that moves only when told to, so tests decide when alarms are due.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    now: Arc<AtomicU64>,
}

/// Where a new virtual clock starts: 2026-01-01T00:00:00Z, the same in every run.
pub const VIRTUAL_EPOCH_MS: u64 = 1_767_225_600_000;

impl Default for VirtualClock {
    fn default() -> Self {
        Self::starting_at(VIRTUAL_EPOCH_MS)
    }
}

impl VirtualClock {
    /// A virtual clock showing `ms`.
    pub fn starting_at(ms: u64) -> Self {
        Self {
            now: Arc::new(AtomicU64::new(ms)),
        }
    }

    /// Moves the clock forward by `ms` and returns the new time. Time never
    /// goes backwards: an advance past the end of `u64` stops there.
    pub fn advance(&self, ms: u64) -> u64 {
        let moved = self
            .now
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| Some(now.saturating_add(ms)));
        // The closure always returns Some: both arms hold the time before.
        let (Ok(before) | Err(before)) = moved;
        before.saturating_add(ms)
    }

    /// Sets the clock to `ms` unless that is in its past; returns the time shown.
    pub fn advance_to(&self, ms: u64) -> u64 {
        self.now.fetch_max(ms, Ordering::SeqCst).max(ms)
    }
}

impl Clock for VirtualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
    fn as_virtual(&self) -> Option<&VirtualClock> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_advance_never_moves_the_clock_backwards() {
        let c = VirtualClock::default();
        assert_eq!(c.advance(u64::MAX), u64::MAX, "the advance stops at the end of time");
        assert_eq!(c.now_ms(), u64::MAX, "and the clock shows it");
        assert_eq!(c.advance(1), u64::MAX, "further advances stay there");
        assert_eq!(c.now_ms(), u64::MAX);
    }

    #[test]
    fn virtual_clock_moves_only_forward() {
        let c = VirtualClock::default();
        assert_eq!(
            c.now_ms(),
            VIRTUAL_EPOCH_MS,
            "a new virtual clock starts at its fixed epoch"
        );
        assert_eq!(c.advance(500), VIRTUAL_EPOCH_MS + 500, "advance adds to the time");
        assert_eq!(
            c.advance_to(VIRTUAL_EPOCH_MS),
            VIRTUAL_EPOCH_MS + 500,
            "advance_to never goes back"
        );
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(
            SystemClock.now_ms() > 1_577_836_800_000,
            "the system clock reads a plausible time"
        );
    }
}
