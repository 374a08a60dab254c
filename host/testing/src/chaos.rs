//! Seeded chaos for every language's tests: a schedule, drawn from one seed
//! as the test's events go, of what goes wrong at the durable boundaries
//! before each event. The [`crate::TestHost`] applies it; each harness
//! only loops over seeds and prints the seed and the schedule of a failure.
//! The draws depend on the seed and the events' order alone, never on their
//! outcomes, so one seed replays the same schedule exactly.

use std::fmt;

/// The variable a harness reads to replay one seed alone.
pub const CHAOS_SEED_VAR: &str = "WASMKEEP_CHAOS_SEED";

/// The seed to replay alone, from `WASMKEEP_CHAOS_SEED`.
///
/// # Errors
/// The variable is set but is not a number (the message says what it holds).
pub fn chaos_seed_from_env() -> Result<Option<u64>, String> {
    match std::env::var(CHAOS_SEED_VAR) {
        Err(_) => Ok(None),
        Ok(s) if s.trim().is_empty() => Ok(None),
        Ok(s) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{CHAOS_SEED_VAR}={s:?} is not a seed: give the number a failure printed")),
    }
}

/// One thing the schedule did before an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChaosStep {
    /// The next removal of an actor's files fails (`delete-self-durable`
    /// answers `internal`; the event's end still removes them).
    FailRemoval,
    /// The actor was restarted (crashed and recovered) between events.
    Restart,
    /// Every actor was hibernated between events.
    Hibernate,
    /// The clock moved on by this many ms and the due alarms ran (alarms late).
    LateAlarms(u64),
    /// The event ran and kept its writes, but its answer was lost on the way
    /// (a timeout, a dropped connection): the client is answered 503, or a
    /// call fails. A client that retries must find its first try kept.
    LoseAnswer,
    /// Any node count, requests only: the host crashes the moment the
    /// event's answer has gone out, before the event ends (where its writes
    /// are kept). The guest runs no further; what it committed before the
    /// answer stays (in a cluster, what the answer's flush uploaded), what it
    /// would have written after is never written, and the actor starts again
    /// from what was kept. The client got the answer, unless `lose-answer`
    /// was drawn for the same event (then a retry must find the first try
    /// kept, and nothing written after the answer).
    CrashAfterAnswer,
    /// Cluster: the next upload fails and does not land (`exec-durable`
    /// answers `internal`; plain writes of that event are not durable).
    FailUpload,
    /// Cluster: the next upload lands but reports failure (the ambiguous
    /// `internal`: retrying must be safe).
    UploadLandsButFails,
    /// Cluster: the next hold check finds another node took the actor.
    LoseHold,
    /// Cluster: this node was cut off (the others take its actors over).
    CutOff(usize),
}

/// A step's kind and value that name no step ([`ChaosStep::from_parts`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChaosStepError {
    /// Not one of [`ChaosStep::KINDS`].
    #[error("{0:?} is not a chaos step (known: {known})", known = ChaosStep::KINDS.join(", "))]
    UnknownKind(String),
    /// A kind that needs a value was given none.
    #[error("a {kind} step needs its {what} (the record's value)")]
    MissingValue {
        /// The kind.
        kind: &'static str,
        /// What its value is.
        what: &'static str,
    },
}

impl ChaosStep {
    /// Every kind of step, as [`ChaosStep::kind`] names them.
    pub const KINDS: [&'static str; 10] = [
        "fail-removal",
        "restart",
        "hibernate",
        "late-alarms",
        "lose-answer",
        "crash-after-answer",
        "fail-upload",
        "upload-lands-but-fails",
        "lose-hold",
        "cut-off",
    ];

    /// The step's kind, the name every harness uses (`late-alarms`, `cut-off`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            ChaosStep::FailRemoval => "fail-removal",
            ChaosStep::Restart => "restart",
            ChaosStep::Hibernate => "hibernate",
            ChaosStep::LateAlarms(_) => "late-alarms",
            ChaosStep::LoseAnswer => "lose-answer",
            ChaosStep::CrashAfterAnswer => "crash-after-answer",
            ChaosStep::FailUpload => "fail-upload",
            ChaosStep::UploadLandsButFails => "upload-lands-but-fails",
            ChaosStep::LoseHold => "lose-hold",
            ChaosStep::CutOff(_) => "cut-off",
        }
    }

    /// The step's number: the milliseconds of `late-alarms`, the node of `cut-off`.
    pub fn value(&self) -> Option<u64> {
        match self {
            ChaosStep::LateAlarms(ms) => Some(*ms),
            ChaosStep::CutOff(n) => Some(*n as u64),
            _ => None,
        }
    }

    /// The step of a kind and value (the inverse of [`ChaosStep::kind`] and [`ChaosStep::value`]).
    ///
    /// # Errors
    /// An unknown kind, or a kind that needs a value without one.
    pub fn from_parts(kind: &str, value: Option<u64>) -> Result<Self, ChaosStepError> {
        let need = |kind: &'static str, what: &'static str| value.ok_or(ChaosStepError::MissingValue { kind, what });
        Ok(match kind {
            "fail-removal" => ChaosStep::FailRemoval,
            "restart" => ChaosStep::Restart,
            "hibernate" => ChaosStep::Hibernate,
            "late-alarms" => ChaosStep::LateAlarms(need("late-alarms", "milliseconds")?),
            "lose-answer" => ChaosStep::LoseAnswer,
            "crash-after-answer" => ChaosStep::CrashAfterAnswer,
            "fail-upload" => ChaosStep::FailUpload,
            "upload-lands-but-fails" => ChaosStep::UploadLandsButFails,
            "lose-hold" => ChaosStep::LoseHold,
            "cut-off" => ChaosStep::CutOff(usize::try_from(need("cut-off", "node")?).unwrap_or(usize::MAX)),
            other => return Err(ChaosStepError::UnknownKind(other.to_owned())),
        })
    }
}

impl fmt::Display for ChaosStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChaosStep::FailRemoval => write!(f, "fail-removal armed"),
            ChaosStep::Restart => write!(f, "actor restarted"),
            ChaosStep::Hibernate => write!(f, "every actor hibernated"),
            ChaosStep::LateAlarms(ms) => write!(f, "clock +{ms} ms, due alarms run"),
            ChaosStep::LoseAnswer => write!(f, "the answer lost after the event ran"),
            ChaosStep::CrashAfterAnswer => write!(f, "the host crashed right after the answer went out"),
            ChaosStep::FailUpload => write!(f, "fail-upload armed"),
            ChaosStep::UploadLandsButFails => write!(f, "upload-lands-but-fails armed"),
            ChaosStep::LoseHold => write!(f, "lose-hold armed"),
            ChaosStep::CutOff(n) => write!(f, "node {n} cut off"),
        }
    }
}

/// A step with where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChaosRecord {
    /// The event it came before (1 for the seed's first event).
    pub event: usize,
    /// The actor the event went to (`app:class/name`).
    pub actor: String,
    /// The node the event was sent to (1 on a single node).
    pub node: usize,
    /// What was done.
    pub step: ChaosStep,
}

impl fmt::Display for ChaosRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "before event {} (to {} on node {}): {}",
            self.event, self.actor, self.node, self.step
        )
    }
}

/// Writes a failure's report: the seed, how to replay it, the message and
/// the schedule, in the words every harness prints.
pub fn chaos_report(seed: u64, message: &str, schedule: &[ChaosRecord]) -> String {
    use fmt::Write as _;
    let mut out =
        format!("the test failed under seed {seed} (replay it alone with {CHAOS_SEED_VAR}={seed}): {message}\n");
    if schedule.is_empty() {
        out.push_str("  the schedule did nothing before it failed\n");
    } else {
        out.push_str("  the schedule:\n");
        for r in schedule {
            let _ = writeln!(out, "    {r}");
        }
    }
    out
}

/// What the schedule decided for the next event.
pub(crate) struct Plan {
    /// The node to send it to.
    pub(crate) node: usize,
    /// What to do first, in order.
    pub(crate) steps: Vec<ChaosStep>,
}

/// The schedule of one seed.
pub(crate) struct Schedule {
    seed: u64,
    rng: fastrand::Rng,
    done: Vec<ChaosRecord>,
    events: usize,
    /// Per node (index 0 is node 1): still in the cluster.
    live: Vec<bool>,
}

impl Schedule {
    pub(crate) fn new(seed: u64, nodes: usize) -> Self {
        Self {
            seed,
            rng: fastrand::Rng::with_seed(seed),
            done: Vec::new(),
            events: 0,
            live: vec![true; nodes.max(1)],
        }
    }

    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }

    fn chance(&mut self, percent: u8) -> bool {
        self.rng.u8(..100) < percent
    }

    /// Draws what happens before the next event to `actor`, asked of
    /// `wanted` (a node the test named, or none: the schedule picks one).
    /// `request`: the event is a request, which answers before it ends (only
    /// a request can crash after its answer; every event draws the same
    /// numbers, so the kinds of the events change no other step).
    pub(crate) fn before_event(&mut self, actor: &str, wanted: Option<usize>, request: bool) -> Plan {
        self.events += 1;
        let mut steps = Vec::new();
        // The single-node draws come first and in this order in every mode.
        if self.chance(20) {
            steps.push(ChaosStep::FailRemoval);
        }
        if self.chance(15) {
            steps.push(ChaosStep::Restart);
        }
        if self.chance(10) {
            steps.push(ChaosStep::LateAlarms(self.rng.u64(1..120_000)));
        }
        if self.chance(10) {
            steps.push(ChaosStep::Hibernate);
        }
        if self.chance(10) {
            steps.push(ChaosStep::LoseAnswer);
        }
        if self.chance(10) && request {
            steps.push(ChaosStep::CrashAfterAnswer);
        }
        let cluster = self.live.len() > 1;
        if cluster {
            if self.chance(10) {
                steps.push(ChaosStep::FailUpload);
            }
            if self.chance(10) {
                steps.push(ChaosStep::UploadLandsButFails);
            }
            if self.chance(5) {
                steps.push(ChaosStep::LoseHold);
            }
        }
        let live: Vec<usize> = (1..=self.live.len()).filter(|n| self.live[n - 1]).collect();
        // A node is cut off only while another stays, and never the one the
        // test asked for by number.
        let cut = if cluster && live.len() > 1 && self.chance(5) {
            let candidates: Vec<usize> = live.iter().copied().filter(|n| Some(*n) != wanted).collect();
            let n = candidates[self.rng.usize(..candidates.len())];
            self.live[n - 1] = false;
            steps.push(ChaosStep::CutOff(n));
            Some(n)
        } else {
            None
        };
        let node = wanted.unwrap_or_else(|| {
            let live: Vec<usize> = live.into_iter().filter(|n| Some(*n) != cut).collect();
            live[self.rng.usize(..live.len())]
        });
        for step in &steps {
            self.done.push(ChaosRecord {
                event: self.events,
                actor: actor.to_owned(),
                node,
                step: step.clone(),
            });
        }
        Plan { node, steps }
    }

    pub(crate) fn into_records(self) -> Vec<ChaosRecord> {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(seed: u64, nodes: usize) -> Vec<ChaosRecord> {
        let mut s = Schedule::new(seed, nodes);
        for i in 0..50 {
            s.before_event(&format!("a/b/{}", i % 3), None, true);
        }
        s.into_records()
    }

    #[test]
    fn a_seed_draws_the_same_schedule_again() {
        assert_eq!(draw(7, 1), draw(7, 1));
        assert_eq!(draw(7, 3), draw(7, 3));
        assert_ne!(draw(7, 3), draw(8, 3));
    }

    #[test]
    fn a_single_node_draws_no_cluster_step_and_a_cluster_keeps_a_node() {
        let single = draw(3, 1);
        assert!(single.iter().all(|r| r.node == 1
            && matches!(
                r.step,
                ChaosStep::FailRemoval
                    | ChaosStep::Restart
                    | ChaosStep::Hibernate
                    | ChaosStep::LateAlarms(_)
                    | ChaosStep::LoseAnswer
                    | ChaosStep::CrashAfterAnswer
            )));
        assert!(
            single.iter().any(|r| r.step == ChaosStep::LoseAnswer),
            "one node loses answers after the event ran too"
        );
        assert!(
            single.iter().any(|r| r.step == ChaosStep::CrashAfterAnswer),
            "one node crashes after an answer went out too"
        );
        for seed in 0..200 {
            let cuts = draw(seed, 3)
                .iter()
                .filter(|r| matches!(r.step, ChaosStep::CutOff(_)))
                .count();
            assert!(cuts <= 2, "seed {seed} cut off {cuts} of 3 nodes");
        }
    }

    #[test]
    fn only_a_request_crashes_after_its_answer_and_its_kind_changes_no_other_step() {
        let (mut requests, mut calls) = (Schedule::new(5, 2), Schedule::new(5, 2));
        for _ in 0..300 {
            let r = requests.before_event("a/b/c", None, true);
            let c = calls.before_event("a/b/c", None, false);
            let without = |p: &Plan| {
                p.steps
                    .iter()
                    .filter(|s| **s != ChaosStep::CrashAfterAnswer)
                    .cloned()
                    .collect::<Vec<_>>()
            };
            assert_eq!((r.node, without(&r)), (c.node, without(&c)));
            assert!(!c.steps.contains(&ChaosStep::CrashAfterAnswer));
        }
        let crashes = requests
            .into_records()
            .iter()
            .filter(|r| r.step == ChaosStep::CrashAfterAnswer)
            .count();
        assert!(
            crashes > 10,
            "about one request in ten crashes after its answer: {crashes} of 300"
        );
    }

    #[test]
    fn the_node_the_test_names_is_never_cut_off() {
        let mut s = Schedule::new(11, 2);
        for _ in 0..500 {
            let plan = s.before_event("a/b/c", Some(2), true);
            assert_eq!(plan.node, 2);
            assert!(!plan.steps.contains(&ChaosStep::CutOff(2)));
        }
    }

    #[test]
    fn every_kind_names_its_step_and_back() {
        let steps = [
            ChaosStep::FailRemoval,
            ChaosStep::Restart,
            ChaosStep::Hibernate,
            ChaosStep::LateAlarms(1234),
            ChaosStep::LoseAnswer,
            ChaosStep::CrashAfterAnswer,
            ChaosStep::FailUpload,
            ChaosStep::UploadLandsButFails,
            ChaosStep::LoseHold,
            ChaosStep::CutOff(2),
        ];
        assert_eq!(steps.clone().map(|s| s.kind()), ChaosStep::KINDS);
        for s in steps {
            assert_eq!(ChaosStep::from_parts(s.kind(), s.value()), Ok(s));
        }
        assert!(matches!(
            ChaosStep::from_parts("late-alarms", None),
            Err(ChaosStepError::MissingValue { .. })
        ));
        assert!(matches!(
            ChaosStep::from_parts("nap", None),
            Err(ChaosStepError::UnknownKind(_))
        ));
    }

    #[test]
    fn a_report_names_the_seed_the_replay_and_each_step() {
        let r = chaos_report(
            42,
            "boom",
            &[ChaosRecord {
                event: 2,
                actor: "a/b/c".into(),
                node: 1,
                step: ChaosStep::FailRemoval,
            }],
        );
        assert!(r.contains("seed 42") && r.contains("WASMKEEP_CHAOS_SEED=42") && r.contains("boom"));
        assert!(
            r.contains("before event 2 (to a/b/c on node 1): fail-removal armed"),
            "{r}"
        );
    }
}
