//! The chaos schedule applied to a [`TestHost`]: before each event, what
//! the seed drew is armed or done, and where the event goes.

use super::*;
use crate::chaos::Schedule;
use crate::chaos_run::ChaosFailure;

/// The chaos of one seed under way: its schedule, and what explains each
/// answer of 500 or more so far (kept: under chaos a 5xx is expected, and
/// only the seed that fails shows them).
pub(super) struct ChaosUnderWay {
    pub(super) schedule: Schedule,
    pub(super) explanations: Vec<String>,
}

/// What the client is told when chaos loses the answer of an event that ran.
pub(super) const LOST_ANSWER: &str = "the answer was lost on the way (chaos: the event ran and kept its writes); retry";

/// The header of an answer chaos lost after the event ran (`ChaosStep::LoseAnswer`).
pub const LOST_ANSWER_HEADER: (&str, &str) = ("wasmkeep-chaos", "lost-answer");

/// Where an event goes, whether chaos loses its answer, and whether it
/// armed a crash after the answer (disarmed once the event is over: it is
/// for this request alone, whichever node runs it).
pub(super) struct Delivery {
    pub(super) node: usize,
    pub(super) answer_lost: bool,
    pub(super) crash_armed: bool,
}

impl Delivery {
    /// The answer the client sees: the real one, or a 503 when it was lost
    /// (marked with the header [`LOST_ANSWER_HEADER`], so a test can tell it
    /// from the actor's own 503; a real client cannot).
    pub(super) fn answer(&self, real: HttpResponse) -> HttpResponse {
        if self.answer_lost {
            let mut lost = HttpResponse::host_text(503, LOST_ANSWER.to_owned());
            lost.headers
                .push((LOST_ANSWER_HEADER.0.into(), LOST_ANSWER_HEADER.1.into()));
            lost
        } else {
            real
        }
    }
}

impl TestHost {
    /// Starts seeded chaos: from now on, before each request, call and
    /// socket opening, the seed's schedule may fail the next removal, restart
    /// the actor, hibernate every actor, move the clock on and run the due
    /// alarms, lose the answer, or (a request) crash the host right after its
    /// answer went out; in a cluster also fail an upload (or let it land and report
    /// failure), lose a hold, cut a node off, and send the event to any live
    /// node. The same seed and the same events draw the same schedule, and
    /// replay the same answers on one node and on several: a step that
    /// touches several actors runs them one after another, and every actor's
    /// queued events have run before a fault is armed (ADR 080).
    /// Starting again replaces the schedule.
    pub fn start_chaos(&self, seed: u64) {
        *lock(&self.chaos) = Some(ChaosUnderWay {
            schedule: Schedule::new(seed, self.node_count()),
            explanations: Vec::new(),
        });
    }

    /// The seed of the chaos running now ([`TestHost::start_chaos`]), if any:
    /// a body that draws its own choices draws them from it, so that the
    /// seed replays them too.
    pub fn chaos_seed(&self) -> Option<u64> {
        lock(&self.chaos).as_ref().map(|c| c.schedule.seed())
    }

    /// Stops the chaos [`TestHost::start_chaos`] started, the seed having
    /// passed; what its schedule did, in order (empty when none was
    /// running). What explained its 5xx answers is dropped. Armed faults stay
    /// armed until used or reset.
    pub fn end_chaos(&self) -> Vec<ChaosRecord> {
        lock(&self.chaos)
            .take()
            .map(|c| c.schedule.into_records())
            .unwrap_or_default()
    }

    /// Stops the chaos [`TestHost::start_chaos`] started, the seed having
    /// failed with `message`: the failure, with its schedule and what
    /// explained each 5xx answer of the seed (the harness prints those, then
    /// [`ChaosFailure::report`]). Without chaos running, a failure of no seed
    /// (seed 0, an empty schedule).
    pub fn fail_chaos(&self, message: &str) -> ChaosFailure {
        let (seed, schedule, explanations) = match lock(&self.chaos).take() {
            Some(c) => (c.schedule.seed(), c.schedule.into_records(), c.explanations),
            None => (0, Vec::new(), Vec::new()),
        };
        ChaosFailure {
            seed,
            schedule,
            message: message.to_owned(),
            explanations,
            passed: 0,
        }
    }

    /// Under chaos: applies what the schedule draws before an event to `key`
    /// (`request`: the event is a request) and answers where to send it
    /// (`wanted`, else the drawn node) and whether its answer is lost.
    /// Without chaos: `wanted`, else node 1.
    pub(super) fn before_event(
        &self,
        key: &ActorKey,
        wanted: Option<usize>,
        request: bool,
    ) -> Result<Delivery, TestHostError> {
        let plan = match lock(&self.chaos).as_mut() {
            Some(c) => c.schedule.before_event(&key.to_string(), wanted, request),
            None => {
                return Ok(Delivery {
                    node: wanted.unwrap_or(1),
                    answer_lost: false,
                    crash_armed: false,
                });
            }
        };
        // What the last step set going ends before this one arms a fault:
        // the ends of the events of actors the last event called (a request
        // settles only its own actor), or of those the late alarms woke.
        self.settle_everywhere()?;
        let (mut answer_lost, mut crash_armed) = (false, false);
        for step in &plan.steps {
            match step {
                ChaosStep::LoseAnswer => answer_lost = true,
                ChaosStep::CrashAfterAnswer => {
                    self.arm_everywhere(FaultKind::CrashAfterAnswer)?;
                    crash_armed = true;
                }
                ChaosStep::FailRemoval => self.arm_everywhere(FaultKind::FailRemoval)?,
                ChaosStep::FailUpload => self.arm_everywhere(FaultKind::FailUpload)?,
                ChaosStep::UploadLandsButFails => self.arm_everywhere(FaultKind::UploadLandsButFails)?,
                ChaosStep::LoseHold => self.arm_everywhere(FaultKind::LoseHold)?,
                ChaosStep::Restart => self.restart(key)?,
                ChaosStep::Hibernate => self.hibernate_all()?,
                ChaosStep::LateAlarms(ms) => {
                    self.advance_clock(*ms)?;
                    self.run_due_alarms()?;
                    self.settle_everywhere()?;
                }
                ChaosStep::CutOff(n) => self.cut_off(*n)?,
            }
        }
        Ok(Delivery {
            node: plan.node,
            answer_lost,
            crash_armed,
        })
    }

    /// After the event: a crash armed for it and not taken (the request
    /// never reached the guest) is disarmed, on every node (only the node
    /// that ran the event took it).
    pub(super) fn after_event(&self, to: &Delivery) -> Result<(), TestHostError> {
        if to.crash_armed {
            for rt in self.all_nodes()? {
                rt.dev().faults().arm(FaultKind::CrashAfterAnswer, 0);
            }
        }
        Ok(())
    }

    /// Waits until every actor's queued events have run, on every node (node
    /// 1 first, each node's actors in the order of their keys): nothing
    /// still running meets the faults armed next, so a seed replays exactly
    /// (ADR 080).
    fn settle_everywhere(&self) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.settle_all();
        }
        Ok(())
    }

    /// Arms one occurrence of `kind` on every node: the event may be served
    /// by whichever node holds the actor.
    pub(super) fn arm_everywhere(&self, kind: FaultKind) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.dev().faults().arm(kind, 1);
        }
        Ok(())
    }
}
