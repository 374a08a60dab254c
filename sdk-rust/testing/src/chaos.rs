//! Seeded chaos: run a test body many times, each under its own seeded
//! schedule of what goes wrong at the durable boundaries, and on a failure
//! say the seed and the schedule; the same seed replays the same run. The
//! loop, its report and what a failing seed prints are the host testing
//! library's (`wasmkeep_host_testing::run_chaos`); this turns the body's
//! panics into its failures.

use crate::harness::{ActorTest, Builder};
pub use wasmkeep_host_testing::{ChaosFailure, ChaosRecord, ChaosStep};
use wasmkeep_host_testing::{ChaosRunError, HasTestHost, TestHost};

impl HasTestHost for ActorTest {
    fn test_host(&mut self) -> &mut TestHost {
        self.host_mut()
    }
}

/// Runs `body` once per seed of `seeds` (or only `WASMKEEP_CHAOS_SEED`
/// when set), each on a fresh host under its seeded schedule; the first
/// failure is returned with its seed and schedule, after what explained the
/// seed's 5xx answers is printed to stderr.
///
/// # Errors
/// The host cannot start or reset, or `WASMKEEP_CHAOS_SEED` is not a number
/// ([`anyhow::Error`] in the outer result), or the body failed under a seed
/// (the inner [`ChaosFailure`]).
pub fn run_chaos(
    builder: &Builder,
    seeds: impl IntoIterator<Item = u64>,
    body: impl Fn(&ActorTest),
) -> anyhow::Result<Result<usize, ChaosFailure>> {
    let mut t = builder.clone().start()?;
    let outcome = wasmkeep_host_testing::run_chaos(&mut t, seeds, |t, _seed| {
        // The body's assertions panic; the panic hook would print each one.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(t)));
        std::panic::set_hook(hook);
        outcome.map_err(|panic| {
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "(a panic without a message)".into())
        })
    });
    match outcome {
        Ok(ran) => Ok(Ok(ran)),
        Err(ChaosRunError::Failed(failure)) => {
            for why in &failure.explanations {
                eprint!("{why}");
            }
            Ok(Err(*failure))
        }
        Err(other) => Err(other.into()),
    }
}
