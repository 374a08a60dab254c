//! The chaos loop, for every harness: which seeds run, each after a reset
//! under its own schedule, and what a failure reports. Every harness runs
//! [`run_chaos`] itself: the C one directly (`wkh_run_chaos`,
//! `wkh_run_chaos_seeds`), the Rust one through `wkh_run_chaos_seeds` with
//! its prebuilt driver and directly in process, Python's with its body a
//! callable the pyo3 module calls with the GIL held, TypeScript's with its
//! body a JavaScript function the napi addon calls on Node's thread (a throw
//! is the body's `Err`; the addon reads `WASMKEEP_CHAOS_SEED` once itself
//! and runs [`run_chosen_seeds`]). The pieces it runs on stay public
//! for a harness's own tests: [`chaos_seeds`], [`TestHost::start_chaos`],
//! [`TestHost::end_chaos`] and [`TestHost::fail_chaos`].

use crate::chaos::{ChaosRecord, chaos_report, chaos_seed_from_env};
use crate::{TestHost, TestHostError, TestHostErrorKind};
use std::fmt;

/// A seed under which a chaos body failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChaosFailure {
    /// The seed: `WASMKEEP_CHAOS_SEED=<seed>` replays exactly this run.
    pub seed: u64,
    /// What the schedule did before each event, in order.
    pub schedule: Vec<ChaosRecord>,
    /// What the body said failed.
    pub message: String,
    /// What explained each answer of 500 or more during the seed, in order
    /// (kept while it ran: under chaos a 5xx is expected). The harness
    /// prints them before the report.
    pub explanations: Vec<String>,
    /// How many seeds passed before this one ([`run_chaos`]; 0 from
    /// [`TestHost::fail_chaos`], which sees one seed).
    pub passed: usize,
}

impl ChaosFailure {
    /// The report every harness shows: the seed, how to replay it, the
    /// message and the schedule.
    pub fn report(&self) -> String {
        chaos_report(self.seed, &self.message, &self.schedule)
    }
}

impl fmt::Display for ChaosFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report())
    }
}

impl std::error::Error for ChaosFailure {}

/// Why [`run_chaos`] did not run every seed to success.
#[derive(Debug, thiserror::Error)]
pub enum ChaosRunError {
    /// `WASMKEEP_CHAOS_SEED` holds something that is not a seed.
    #[error("{0}")]
    BadSeedVariable(String),
    /// The host could not be reset before a seed.
    #[error("resetting the host before seed {seed}: {source}")]
    Reset {
        /// The seed about to run.
        seed: u64,
        /// Why.
        #[source]
        source: TestHostError,
    },
    /// The body failed under a seed.
    #[error(transparent)]
    Failed(Box<ChaosFailure>),
}

impl ChaosRunError {
    /// Its kind, as every harness names a failure: a bad
    /// `WASMKEEP_CHAOS_SEED` is `bad-argument` (the variable stands for the
    /// seeds argument), a failed reset has the reset's kind, and a body's
    /// failure has none (it is the test's own).
    pub fn kind(&self) -> Option<TestHostErrorKind> {
        match self {
            ChaosRunError::BadSeedVariable(_) => Some(TestHostErrorKind::Host(wasmkeep_host::FailureKind::BadArgument)),
            ChaosRunError::Reset { source, .. } => Some(source.kind()),
            ChaosRunError::Failed(_) => None,
        }
    }
}

/// The seeds a chaos loop runs: only `WASMKEEP_CHAOS_SEED` when it is set
/// (to replay a failure), else `given`.
///
/// # Errors
/// The variable is set but is not a number (the message says what it holds).
pub fn chaos_seeds(given: impl IntoIterator<Item = u64>) -> Result<Vec<u64>, String> {
    Ok(match chaos_seed_from_env()? {
        Some(seed) => vec![seed],
        None => given.into_iter().collect(),
    })
}

/// What a chaos loop runs on: a [`TestHost`], or a harness's value that owns one.
pub trait HasTestHost {
    /// The host the schedule runs on.
    fn test_host(&mut self) -> &mut TestHost;
}

impl HasTestHost for TestHost {
    fn test_host(&mut self) -> &mut TestHost {
        self
    }
}

/// Runs `body(target, seed)` once per seed of [`chaos_seeds`]`(seeds)`,
/// each after a reset of the host, under that seed's schedule; returns how
/// many seeds ran. The host is left out of chaos whatever happens; after a
/// failure it is as the failure left it (its logs, its actors).
///
/// # Errors
/// [`ChaosRunError::Failed`] with the first seed whose body answered
/// `Err(message)`; a bad `WASMKEEP_CHAOS_SEED`; a reset that failed.
pub fn run_chaos<T: HasTestHost>(
    target: &mut T,
    seeds: impl IntoIterator<Item = u64>,
    body: impl FnMut(&mut T, u64) -> Result<(), String>,
) -> Result<usize, ChaosRunError> {
    let seeds = chaos_seeds(seeds).map_err(ChaosRunError::BadSeedVariable)?;
    run_chosen_seeds(target, seeds, body)
}

/// [`run_chaos`] over exactly `seeds`, for a harness that chose them with
/// [`chaos_seeds`] itself, reading `WASMKEEP_CHAOS_SEED` once (the Node
/// harness checks that a replayed seed fits a JavaScript number before any
/// seed runs); this reads no variable.
///
/// # Errors
/// [`ChaosRunError::Failed`] with the first seed whose body answered
/// `Err(message)`; a reset that failed.
pub fn run_chosen_seeds<T: HasTestHost>(
    target: &mut T,
    seeds: impl IntoIterator<Item = u64>,
    mut body: impl FnMut(&mut T, u64) -> Result<(), String>,
) -> Result<usize, ChaosRunError> {
    let mut ran = 0;
    for seed in seeds {
        let host = target.test_host();
        host.reset().map_err(|source| ChaosRunError::Reset { seed, source })?;
        host.start_chaos(seed);
        let outcome = body(target, seed);
        let host = target.test_host();
        match outcome {
            Ok(()) => {
                host.end_chaos();
                ran += 1;
            }
            Err(message) => {
                let failure = ChaosFailure {
                    passed: ran,
                    ..host.fail_chaos(&message)
                };
                return Err(ChaosRunError::Failed(Box::new(failure)));
            }
        }
    }
    Ok(ran)
}
