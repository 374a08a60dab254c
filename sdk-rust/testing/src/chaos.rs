//! Seeded chaos: run a test body many times, each under its own seeded
//! schedule of what goes wrong at the durable boundaries, and on a failure
//! say the seed and the schedule; the same seed replays the same run. The
//! loop is the host's, as in every harness (the testing crate's
//! `run_chaos`): the prebuilt driver calls the library's `wkh_run_chaos_seeds`
//! with a C body that calls the closure, the in-process driver calls
//! `run_chaos` itself. What is here is the Rust side of a body: the seed it
//! sees, and its panic kept quiet and turned into the seed's message.

use crate::harness::{ActorTest, Builder};
use crate::types::ChaosFailure;
use std::cell::Cell;
use std::sync::Once;

/// The variable that replays one seed.
const CHAOS_SEED_VAR: &str = "WASMKEEP_CHAOS_SEED";

/// The seeds to run: only `WASMKEEP_CHAOS_SEED` when set, else `given`.
/// (The host's loop reads the variable again, to the same seed; reading it
/// here first refuses a bad one before the host starts, as before.)
fn chaos_seeds(given: impl IntoIterator<Item = u64>) -> anyhow::Result<Vec<u64>> {
    match std::env::var(CHAOS_SEED_VAR) {
        Ok(s) if !s.trim().is_empty() => {
            let seed = s.trim().parse().map_err(|_| {
                anyhow::anyhow!("{CHAOS_SEED_VAR}={s:?} is not a seed: give the number a failure printed")
            })?;
            Ok(vec![seed])
        }
        _ => Ok(given.into_iter().collect()),
    }
}

thread_local! {
    /// Whether this thread runs a chaos body now: its panics are the body's
    /// assertions, kept for the report instead of printed.
    static IN_CHAOS_BODY: Cell<bool> = const { Cell::new(false) };
}

/// Installs, once per process, a panic hook that says nothing for a chaos
/// body's panics and hands every other panic to the hook that was there
/// before. (Swapping the process-wide hook around each body silenced the
/// panics of the tests that `cargo test` runs on other threads meanwhile,
/// and could put back a hook another test had set in between.)
fn quiet_chaos_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_CHAOS_BODY.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Runs `f` with this thread marked as running a chaos body.
fn as_chaos_body<R>(f: impl FnOnce() -> R) -> R {
    struct Unmark(bool);
    impl Drop for Unmark {
        fn drop(&mut self) {
            IN_CHAOS_BODY.with(|c| c.set(self.0));
        }
    }
    quiet_chaos_panics();
    let _unmark = Unmark(IN_CHAOS_BODY.with(|c| c.replace(true)));
    f()
}

/// A chaos body as the host's loop calls it: one seed's run of `body` on
/// `t` (reset, under the seed's schedule), with [`ActorTest::chaos_seed`]
/// set meanwhile; its panic, kept quiet and caught, is the seed's failure
/// and its message.
pub(crate) fn run_body(t: &mut ActorTest, seed: u64, body: &dyn Fn(&ActorTest)) -> Result<(), String> {
    t.chaos_seed = Some(seed);
    // The body's assertions panic; the panic hook would print each one.
    // Only this thread's are kept quiet: tests on other threads print theirs.
    let outcome = as_chaos_body(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(t))));
    t.chaos_seed = None;
    outcome.map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "(a panic without a message)".into())
    })
}

/// Runs `body` once per seed of `seeds` (or only `WASMKEEP_CHAOS_SEED`
/// when set), each on a reset host under its seeded schedule; the first
/// failure is returned with its seed and schedule, after what explained the
/// seed's 5xx answers is printed to stderr. A seed replays exactly, the same
/// schedule and the same answers, on one node and on several, as long as the
/// body decides only from its seed ([`ActorTest::chaos_seed`]): the host runs
/// a step that touches several actors one after another and lets every
/// queued event run before it arms a fault (ADR 080).
///
/// The loop is the host's (the one every language's harness runs), through
/// either driver; the body runs on the calling thread.
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
    let seeds = chaos_seeds(seeds)?;
    let mut t = builder.clone().start()?;
    #[cfg(feature = "in-process")]
    if t.driver_mut().test_host_mut().is_some() {
        return crate::in_process::run_chaos(&mut t, seeds, &body);
    }
    crate::prebuilt::run_chaos(&mut t, &seeds, &body)
}
