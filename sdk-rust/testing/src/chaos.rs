//! Seeded chaos: run a test body many times, each under its own seeded
//! schedule of what goes wrong at the durable boundaries, and on a failure
//! say the seed and the schedule; the same seed replays the same run.

use crate::harness::{ActorTest, Builder};
use std::cell::RefCell;
use std::fmt;

/// One thing the schedule did, before a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChaosStep {
    /// The next removal of the actor's files fails (`delete-self-durable`
    /// answers `internal`; the event's end still removes them).
    FailRemoval,
    /// The actor was restarted (crashed and recovered) between events.
    Restart,
    /// The clock moved on by this many ms and the due alarms ran (alarms late).
    LateAlarms(u64),
}

impl fmt::Display for ChaosStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChaosStep::FailRemoval => write!(f, "fail-removal armed"),
            ChaosStep::Restart => write!(f, "actor restarted"),
            ChaosStep::LateAlarms(ms) => write!(f, "clock +{ms} ms, due alarms run"),
        }
    }
}

/// The schedule of one seed, drawn as the run goes.
pub(crate) struct Schedule {
    rng: fastrand::Rng,
    /// (request number, actor, what was done).
    pub(crate) done: Vec<(usize, String, ChaosStep)>,
    requests: usize,
}

impl Schedule {
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            rng: fastrand::Rng::with_seed(seed),
            done: Vec::new(),
            requests: 0,
        }
    }

    /// What to do before the next request to `actor` (each with its own odds).
    pub(crate) fn before_request(&mut self, actor: &str) -> Vec<ChaosStep> {
        self.requests += 1;
        let mut steps = Vec::new();
        if self.rng.u8(..100) < 20 {
            steps.push(ChaosStep::FailRemoval);
        }
        if self.rng.u8(..100) < 15 {
            steps.push(ChaosStep::Restart);
        }
        if self.rng.u8(..100) < 10 {
            steps.push(ChaosStep::LateAlarms(self.rng.u64(1..120_000)));
        }
        for s in &steps {
            self.done.push((self.requests, actor.to_owned(), s.clone()));
        }
        steps
    }
}

/// A seed under which the body failed, with what its schedule did.
#[derive(Debug)]
pub struct ChaosFailure {
    /// The seed: `WASMKEEP_CHAOS_SEED=<seed>` replays exactly this run.
    pub seed: u64,
    /// What the schedule did before each request, in order.
    pub schedule: Vec<(usize, String, ChaosStep)>,
    /// The body's panic message.
    pub message: String,
}

impl fmt::Display for ChaosFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "the test failed under seed {} (replay it alone with WASMKEEP_CHAOS_SEED={}): {}",
            self.seed, self.seed, self.message
        )?;
        if self.schedule.is_empty() {
            return writeln!(f, "  the schedule did nothing before it failed");
        }
        writeln!(f, "  the schedule:")?;
        for (request, actor, step) in &self.schedule {
            writeln!(f, "    before request {request} (to {actor}): {step}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ChaosFailure {}

/// Runs `body` once per seed of `seeds` (or only `WASMKEEP_CHAOS_SEED`
/// when set), each on a fresh host under its seeded schedule; the first
/// failure is returned with its seed and schedule.
///
/// # Errors
/// The host cannot start ([`anyhow::Error`] in the outer result), or the
/// body failed under a seed (the inner [`ChaosFailure`]).
pub fn run_chaos(
    builder: &Builder,
    seeds: impl IntoIterator<Item = u64>,
    body: impl Fn(&ActorTest),
) -> anyhow::Result<Result<usize, ChaosFailure>> {
    let only: Option<u64> = std::env::var("WASMKEEP_CHAOS_SEED").ok().and_then(|s| s.parse().ok());
    let seeds: Vec<u64> = only.map_or_else(|| seeds.into_iter().collect(), |s| vec![s]);
    let mut t = builder.clone().start()?;
    let mut ran = 0;
    for seed in seeds {
        t.reset();
        t.set_schedule(Some(RefCell::new(Schedule::new(seed))));
        // The body's assertions panic; the panic hook would print each one.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&t)));
        std::panic::set_hook(hook);
        let schedule = t.set_schedule(None).map(|s| s.into_inner().done).unwrap_or_default();
        if let Err(panic) = outcome {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "(a panic without a message)".into());
            return Ok(Err(ChaosFailure {
                seed,
                schedule,
                message,
            }));
        }
        ran += 1;
    }
    Ok(Ok(ran))
}
