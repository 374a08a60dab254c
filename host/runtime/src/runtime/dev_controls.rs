//! The dev-controls handle: what a developer or a test controls (the
//! virtual clock, alarms run on demand, faults, hibernation and restarts, a
//! node cut off).

use super::*;

/// What a developer or a test controls on one node: [`Runtime::dev`].
/// A production node has no use for it; the dev server and the test
/// harnesses do. Borrowed from its runtime.
#[derive(Clone, Copy)]
pub struct DevControls<'a> {
    host: &'a Arc<Host>,
}

impl std::fmt::Debug for DevControls<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevControls").finish_non_exhaustive()
    }
}

impl Runtime {
    /// The dev-controls handle: the virtual clock, alarms on demand,
    /// faults, hibernation and restarts, a node cut off.
    pub fn dev(&self) -> DevControls<'_> {
        DevControls { host: &self.host }
    }
}

impl<'a> DevControls<'a> {
    /// Cuts this node off from its cluster: from now on it holds nothing, its
    /// uploads are never acknowledged, and other nodes may take its actors.
    ///
    /// # Errors
    /// This runtime is a single node.
    pub fn cut_off(&self) -> Result<(), RuntimeError> {
        let c = self.host.cluster().ok_or(RuntimeError::NeedsCluster("cut_off"))?;
        c.cluster.cut_off(&c.node);
        Ok(())
    }

    /// The host's time (ms since the epoch).
    pub fn now_ms(&self) -> u64 {
        self.host.clock().now_ms()
    }

    /// Moves the virtual clock forward by `ms`. Alarms do not run until
    /// [`DevControls::run_due_alarms`] (or [`DevControls::run_alarm`]) is called.
    ///
    /// # Errors
    /// The runtime uses the real clock.
    pub fn advance_clock(&self, ms: u64) -> Result<u64, RuntimeError> {
        self.host
            .clock()
            .as_virtual()
            .map(|c| c.advance(ms))
            .ok_or(RuntimeError::RealClock)
    }

    /// Runs every alarm due now and waits for them; returns how many ran `on-alarm`.
    pub fn run_due_alarms(&self) -> usize {
        queue_due(self.host, &HashMap::new())
            .into_iter()
            .map(|(_, rx)| rx.blocking_recv().unwrap_or(false))
            .filter(|ran| *ran)
            .count()
    }

    /// Runs every alarm due now one after another, in the order they fell
    /// due (then by actor), each waited for (its event's end included)
    /// before the next; returns how many ran `on-alarm`. What each alarm's
    /// event writes then meets the node's armed faults in the same order
    /// every time, which [`DevControls::run_due_alarms`] (all at once) does
    /// not promise: a test host's chaos replays by it (ADR 080).
    pub fn run_due_alarms_in_turn(&self) -> usize {
        let due = match self.host.alarms().due(self.now_ms()) {
            Ok(due) => due,
            Err(e) => {
                tracing::error!("reading the alarm index: {e}");
                return 0;
            }
        };
        let mut ran = 0;
        for (key, _) in due {
            // Queued only once the one before has ended.
            if let Some(rx) = passes::queue_alarm(self.host, &key)
                && rx.blocking_recv().unwrap_or(false)
            {
                ran += 1;
            }
        }
        ran
    }

    /// The earliest time of an alarm in the index after `after` and at or
    /// before `until`, if any: where a clock that runs what falls due stops
    /// next. (Entries at or before `after` are left out: they were due when
    /// the clock was last there.)
    pub fn next_alarm_between(&self, after: u64, until: u64) -> Option<u64> {
        match self.host.alarms().due(until) {
            Ok(due) => due.into_iter().map(|(_, at)| at).filter(|at| *at > after).min(),
            Err(e) => {
                tracing::error!("reading the alarm index: {e}");
                None
            }
        }
    }

    /// Runs `key`'s alarm if it is due; true if `on-alarm` ran.
    pub fn run_alarm(&self, key: &ActorKey) -> bool {
        let (tx, rx) = oneshot::channel();
        self.host
            .enqueue(key, Job::new(GuestEvent::Alarm { ran: tx }, Vec::new()));
        rx.blocking_recv().unwrap_or(false)
    }

    /// The fault switches.
    pub fn faults(&self) -> &'a Faults {
        self.host.faults()
    }

    /// Hibernates every resident actor once its queued events have run.
    pub fn hibernate_all(&self) {
        passes::hibernate_where(self.host, |_| true);
    }

    /// Hibernates every resident actor one after another, in the order of
    /// their keys, each once its queued events have run and before the next:
    /// what each one's release writes (in a cluster) meets the node's armed
    /// faults in the same order every time, which
    /// [`DevControls::hibernate_all`] (all at once) does not promise. A test
    /// host's chaos replays by it (ADR 080).
    pub fn hibernate_all_in_turn(&self) {
        passes::hibernate_in_turn(self.host, |_| true);
    }

    /// Restarts one actor, as a crash and recovery would, once its queued
    /// events have run: its instance (and whatever it kept in memory) is
    /// dropped, a transaction it left open is rolled back, its database is
    /// closed; the next event recovers it from its files. Its sockets stay open.
    pub fn restart_actor(&self, key: &ActorKey) {
        passes::hibernate_where(self.host, |k| k == key);
    }
}
