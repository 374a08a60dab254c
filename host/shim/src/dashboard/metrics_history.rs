//! The counters of `/metrics` over the last minutes, kept by the server so
//! that the dashboard's charts have a past when the page opens: a sample
//! every [`EVERY`], the last [`KEEP`] of them in a bounded ring
//! (`GET /_shim/metrics/history`).

use super::overview::counters;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use wasmkeep_host::Runtime;

/// How often the counters are sampled.
pub(crate) const EVERY: Duration = Duration::from_secs(5);
/// How long samples are kept: 10 minutes, 120 samples.
pub(crate) const KEEP: Duration = Duration::from_secs(600);

/// One sample of the counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Sample {
    /// When, on the wall clock (ms): charts are over real minutes, even
    /// under a virtual clock.
    pub at: u64,
    /// `{"name{labels}": value}`, as the live feed sends them.
    pub counters: BTreeMap<String, u64>,
}

/// The last samples, oldest first, at most `capacity` of them.
#[derive(Debug)]
pub(crate) struct Ring {
    samples: VecDeque<Sample>,
    capacity: usize,
}

impl Ring {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            samples: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    pub(crate) fn push(&mut self, s: Sample) {
        if self.samples.len() == self.capacity {
            self.samples.pop_front();
        }
        self.samples.push_back(s);
    }

    pub(crate) fn samples(&self) -> Vec<Sample> {
        self.samples.iter().cloned().collect()
    }
}

/// The ring the dashboard's routes share.
#[derive(Debug, Clone)]
pub(crate) struct MetricsHistory {
    ring: Arc<Mutex<Ring>>,
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A sample of `rt`'s counters now.
pub(crate) fn sample(rt: &Runtime) -> Sample {
    Sample {
        at: wall_ms(),
        counters: counters(rt),
    }
}

impl MetricsHistory {
    /// A history of `rt`'s counters, sampled by a task on the current Tokio
    /// runtime until the host stops or the routes holding this history are
    /// dropped (the task holds it weakly). Outside a Tokio runtime nothing is
    /// sampled, and the history is only the sample taken when it is read.
    pub(crate) fn start(rt: &Runtime) -> Self {
        let capacity = usize::try_from(KEEP.as_secs() / EVERY.as_secs()).unwrap_or(1);
        let mut ring = Ring::new(capacity);
        // The first sample now: the charts start from the server's start.
        ring.push(sample(rt));
        let history = Self {
            ring: Arc::new(Mutex::new(ring)),
        };
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(sampler(rt.clone(), Arc::downgrade(&history.ring)));
        }
        history
    }

    /// The samples kept, oldest first.
    pub(crate) fn samples(&self) -> Vec<Sample> {
        self.ring.lock().unwrap_or_else(PoisonError::into_inner).samples()
    }
}

async fn sampler(rt: Runtime, ring: Weak<Mutex<Ring>>) {
    let mut every = tokio::time::interval_at(tokio::time::Instant::now() + EVERY, EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Some(ring) = ring.upgrade() else { return };
        if rt.is_stopping() {
            return;
        }
        let s = sample(&rt);
        ring.lock().unwrap_or_else(PoisonError::into_inner).push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_newest_samples_up_to_its_capacity() {
        let mut r = Ring::new(3);
        for at in 0..5 {
            r.push(Sample {
                at,
                counters: BTreeMap::new(),
            });
        }
        assert_eq!(r.samples().iter().map(|s| s.at).collect::<Vec<_>>(), vec![2, 3, 4]);
    }
}
