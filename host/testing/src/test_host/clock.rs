//! The virtual clock of a [`TestHost`], the alarms it makes due, the passes
//! a cluster runs as it moves, and the faults a test arms.

use super::*;

/// What [`TestHost::advance_clock_running_due`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advanced {
    /// The new time (ms since the epoch).
    pub now: u64,
    /// How many alarms ran `on-alarm` on the way.
    pub alarms_ran: usize,
}

impl TestHost {
    /// The host's clock (ms since the epoch).
    ///
    /// # Errors
    /// The host is closed.
    pub fn now_ms(&self) -> Result<u64, TestHostError> {
        Ok(self.runtime()?.dev().now_ms())
    }

    /// Moves the virtual clock forward; the new time.
    ///
    /// # Errors
    /// The host is closed.
    pub fn advance_clock(&self, ms: u64) -> Result<u64, TestHostError> {
        let now = self.runtime()?.dev().advance_clock(ms)?;
        self.run_passes_due(now)?;
        Ok(now)
    }

    /// Moves the virtual clock forward by `ms` as a running clock would,
    /// running what falls due on the way: each alarm due by the new time
    /// runs at its own time, in order (the clock stops there, runs the due
    /// alarms, and goes on), so an alarm that sets itself again inside the
    /// window runs again; alarms already due run first. A cluster's passes
    /// run as the clock passes their intervals, as with
    /// [`TestHost::advance_clock`]. The new time and how many alarms ran
    /// `on-alarm`.
    ///
    /// # Errors
    /// The host is closed.
    pub fn advance_clock_running_due(&self, ms: u64) -> Result<Advanced, TestHostError> {
        let until = self.now_ms()?.saturating_add(ms);
        let mut alarms_ran = self.run_due_alarms()?;
        loop {
            let now = self.now_ms()?;
            let Some(at) = self.acting_node()?.dev().next_alarm_between(now, until) else {
                break;
            };
            self.advance_clock(at - now)?;
            alarms_ran += self.run_due_alarms()?;
        }
        let now = self.now_ms()?;
        if until > now {
            self.advance_clock(until - now)?;
        }
        Ok(Advanced {
            now: self.now_ms()?,
            alarms_ran,
        })
    }

    /// A cluster's passes whose interval of virtual time has gone by, at a
    /// real clock's cadence (a control pass each second, an expiry pass each
    /// ten minutes), on every node in order. They run here, on the test's
    /// thread, rather than on a thread of each node's: a pass writes to the
    /// bucket, and one that ran at a moment of its own would meet the faults
    /// armed for the test's events, so that a seed would not replay exactly.
    pub(super) fn run_passes_due(&self, now: u64) -> Result<(), TestHostError> {
        if self.cluster.is_none() {
            return Ok(());
        }
        let (control, expiry) = {
            let mut last = lock(&self.passes_ran_at);
            let control = now.saturating_sub(last.0) >= wasmkeep_host::CONTROL_PASS_EVERY_MS;
            let expiry = now.saturating_sub(last.1) >= wasmkeep_host::EXPIRY_PASS_EVERY_MS;
            if control {
                last.0 = now;
            }
            if expiry {
                last.1 = now;
            }
            (control, expiry)
        };
        for rt in self.all_nodes()? {
            if control {
                rt.passes().run_control_pass();
            }
            if expiry {
                rt.passes().run_expiry_pass();
            }
        }
        Ok(())
    }

    /// Runs every due alarm, one after another in the order they fell due
    /// (then by actor), each to its event's end before the next; how many
    /// ran `on-alarm`. Their writes then meet the armed faults in the same
    /// order every time (a seed replays exactly, ADR 080).
    ///
    /// # Errors
    /// The host is closed.
    pub fn run_due_alarms(&self) -> Result<usize, TestHostError> {
        // The cluster's alarm index is shared: one live node queues each due
        // alarm, and forwards it to the actor's holder.
        Ok(self.acting_node()?.dev().run_due_alarms_in_turn())
    }

    /// Runs the actor's alarm if it is due; whether one ran. In a cluster it
    /// goes through the lowest live node, which forwards it to the holder.
    ///
    /// # Errors
    /// The host is closed.
    pub fn run_alarm(&self, key: &ActorKey) -> Result<bool, TestHostError> {
        Ok(self.acting_node()?.dev().run_alarm(key))
    }

    /// Runs the actor's alarm through node `n` (which serves it or forwards it
    /// to the holder) if it is due; whether one ran. A cut-off node runs none.
    ///
    /// # Errors
    /// No such node, or the host is closed.
    pub fn run_alarm_on(&self, n: usize, key: &ActorKey) -> Result<bool, TestHostError> {
        Ok(self.node(n)?.dev().run_alarm(key))
    }

    /// Arms a fault by its name (`fail-removal`, …) for the next `count` attempts.
    ///
    /// # Errors
    /// Not a fault's name.
    pub fn arm_fault(&self, name: &str, count: u32) -> Result<(), TestHostError> {
        self.arm_fault_on(1, name, count)
    }

    /// Arms a fault by its name on node `n` (1-based) for its next `count`
    /// attempts: the fault hits only events that node runs.
    ///
    /// # Errors
    /// Not a fault's name; no such node.
    pub fn arm_fault_on(&self, n: usize, name: &str, count: u32) -> Result<(), TestHostError> {
        let kind = FaultKind::from_name(name).ok_or_else(|| TestHostError::UnknownFault(name.to_owned()))?;
        self.node(n)?.dev().faults().arm(kind, count);
        Ok(())
    }

    /// Clears every armed fault, on every node.
    ///
    /// # Errors
    /// The host is closed.
    pub fn clear_faults(&self) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.dev().faults().clear();
        }
        Ok(())
    }
}
