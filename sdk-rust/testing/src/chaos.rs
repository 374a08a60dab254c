//! Seeded chaos: run a test body many times, each under its own seeded
//! schedule of what goes wrong at the durable boundaries, and on a failure
//! say the seed and the schedule; the same seed replays the same run.

use crate::harness::{ActorTest, Builder};
use std::fmt;
pub use wasmkeep_host_testing::{ChaosRecord, ChaosStep};

/// A seed under which the body failed, with what its schedule did.
#[derive(Debug)]
pub struct ChaosFailure {
    /// The seed: `WASMKEEP_CHAOS_SEED=<seed>` replays exactly this run.
    pub seed: u64,
    /// What the schedule did before each event, in order.
    pub schedule: Vec<ChaosRecord>,
    /// The body's panic message.
    pub message: String,
}

impl fmt::Display for ChaosFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&wasmkeep_host_testing::chaos_report(
            self.seed,
            &self.message,
            &self.schedule,
        ))
    }
}

impl std::error::Error for ChaosFailure {}

/// Runs `body` once per seed of `seeds` (or only `WASMKEEP_CHAOS_SEED`
/// when set), each on a fresh host under its seeded schedule; the first
/// failure is returned with its seed and schedule.
///
/// # Errors
/// The host cannot start or `WASMKEEP_CHAOS_SEED` is not a number
/// ([`anyhow::Error`] in the outer result), or the body failed under a seed
/// (the inner [`ChaosFailure`]).
pub fn run_chaos(
    builder: &Builder,
    seeds: impl IntoIterator<Item = u64>,
    body: impl Fn(&ActorTest),
) -> anyhow::Result<Result<usize, ChaosFailure>> {
    let only = wasmkeep_host_testing::chaos_seed_from_env().map_err(anyhow::Error::msg)?;
    let seeds: Vec<u64> = only.map_or_else(|| seeds.into_iter().collect(), |s| vec![s]);
    let mut t = builder.clone().start()?;
    let mut ran = 0;
    for seed in seeds {
        t.reset();
        t.host().start_chaos(seed);
        // The body's assertions panic; the panic hook would print each one.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&t)));
        std::panic::set_hook(hook);
        let schedule = t.host().end_chaos();
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
