//! Seeded chaos for `wasmkeep_actor.chaos`: the loop is the testing crate's
//! `run_chaos`, over the host's Python object, calling the test's body (a
//! Python callable) once per seed with the GIL held; the records and report
//! every harness shares.

use crate::{HostError, NativeHost, host_err};
use pyo3::exceptions::{PyAssertionError, PyException, PyValueError};
use pyo3::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use wasmkeep_host_testing::{ChaosRecord, ChaosRunError, ChaosStep, HasTestHost, TestHost, run_chaos};

pyo3::create_exception!(
    wasmkeep_actor_harness,
    ChaosFailed,
    PyException,
    "The body of `NativeHost.run_chaos` raised under a seed: `seed`, `records` (what the seed's schedule did), `message` (the body's failure as the report words it) and `explanations` (what explained each 5xx of the seed, to print before the report); `__cause__` is what the body raised."
);

/// A chaos record as Python sees it: `(event, actor, node, kind, value, text)`,
/// `value` the step's number (ms of `late-alarms`, the node of `cut-off`) or
/// None, `text` the record as the library writes it.
pub type Record = (usize, String, usize, String, Option<u64>, String);

/// The step of a record's kind and number ([`ChaosStep::from_parts`]).
fn step_of(kind: &str, value: Option<u64>) -> PyResult<ChaosStep> {
    ChaosStep::from_parts(kind, value).map_err(|e| PyValueError::new_err(e.to_string()))
}

pub fn record_py(r: &ChaosRecord) -> Record {
    (
        r.event,
        r.actor.clone(),
        r.node,
        r.step.kind().to_owned(),
        r.step.value(),
        r.to_string(),
    )
}

/// The library's report of a seed's failure: the seed, the replay variable,
/// the message and the schedule (`records` as `end_chaos` returns them).
#[pyfunction]
pub fn chaos_report(seed: u64, message: &str, records: Vec<Record>) -> PyResult<String> {
    let schedule = records
        .into_iter()
        .map(|(event, actor, node, kind, value, _text)| {
            Ok(ChaosRecord {
                event,
                actor,
                node,
                step: step_of(&kind, value)?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(wasmkeep_host_testing::chaos_report(seed, message, &schedule))
}

/// The seed to replay alone, from `WASMKEEP_CHAOS_SEED` (None when unset);
/// `ValueError` when it is set but not a number.
#[pyfunction]
pub fn chaos_seed_from_env() -> PyResult<Option<u64>> {
    wasmkeep_host_testing::chaos_seed_from_env().map_err(PyValueError::new_err)
}

/// What the testing crate's loop runs on: the host's Python object, borrowed
/// mutably only while the loop itself uses it (reset, start and end the
/// chaos), never while the body runs, whose Python code calls the host's
/// methods.
struct ChaosTarget<'py> {
    host: Bound<'py, NativeHost>,
    held: Option<PyRefMut<'py, NativeHost>>,
    /// What the failing body raised.
    raised: Option<PyErr>,
    /// The seed whose body ran last.
    last_seed: Option<u64>,
}

/// What unwinds out of the loop when it needs the host while another
/// thread is inside one of its methods (a thread the body left running):
/// the loop cannot reset it or end its chaos then. [`run`] catches it and
/// raises `HostError` of kind `busy`.
struct HostInUse;

impl HasTestHost for ChaosTarget<'_> {
    fn test_host(&mut self) -> &mut TestHost {
        let held = match self.held.take() {
            Some(held) => held,
            None => match self.host.try_borrow_mut() {
                Ok(held) => held,
                // Not a panic: no hook prints it, and `run` says what happened.
                Err(_) => resume_unwind(Box::new(HostInUse)),
            },
        };
        &mut self.held.insert(held).host
    }
}

/// A body's failure as the report words it (the wording the Python loop
/// had): an assertion's own message, or that it had none; any other
/// exception's type, then its message if it has one.
fn failure_message(py: Python<'_>, e: &PyErr) -> String {
    let text = e
        .value(py)
        .str()
        .and_then(|s| s.call_method0("strip"))
        .and_then(|s| s.extract::<String>())
        .unwrap_or_default();
    if e.is_instance_of::<PyAssertionError>(py) {
        return if text.is_empty() {
            "an assertion failed (without a message)".to_owned()
        } else {
            text
        };
    }
    let name = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an exception".to_owned());
    if text.is_empty() {
        name
    } else {
        format!("{name}: {text}")
    }
}

/// [`NativeHost::run_chaos`]: the testing crate's `run_chaos` over `host`,
/// `body(seed)` once per seed.
pub fn run(host: &Bound<'_, NativeHost>, seeds: Vec<u64>, body: &Bound<'_, PyAny>) -> PyResult<usize> {
    let py = host.py();
    let mut target = ChaosTarget {
        host: host.clone(),
        held: None,
        raised: None,
        last_seed: None,
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        run_chaos(&mut target, seeds, |target, seed| {
            target.held = None;
            target.last_seed = Some(seed);
            body.call1((seed,)).map(drop).map_err(|e| {
                let message = failure_message(py, &e);
                target.raised = Some(e);
                message
            })
        })
    }));
    target.held = None;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(panic) => {
            // Never left in chaos, even so (a no-op when none runs).
            if let Ok(held) = host.try_borrow() {
                held.host.end_chaos();
            }
            if panic.is::<HostInUse>() {
                return Err(host_in_use(py, target.last_seed));
            }
            resume_unwind(panic)
        }
    };
    match outcome {
        Ok(ran) => Ok(ran),
        Err(ChaosRunError::Failed(failure)) => match target.raised.take() {
            // KeyboardInterrupt, SystemExit: raised again as they are (the
            // chaos ended all the same), not reported as the seed's failure.
            Some(raised) if !raised.is_instance_of::<PyException>(py) => Err(raised),
            raised => {
                let err = ChaosFailed::new_err(failure.message.clone());
                let value = err.value(py);
                value.setattr("seed", failure.seed)?;
                value.setattr("records", failure.schedule.iter().map(record_py).collect::<Vec<_>>())?;
                value.setattr("message", &failure.message)?;
                value.setattr("explanations", &failure.explanations)?;
                err.set_cause(py, raised);
                Err(err)
            }
        },
        Err(ChaosRunError::BadSeedVariable(message)) => Err(PyValueError::new_err(message)),
        Err(ChaosRunError::Reset { seed, source }) => {
            // The host's error and kind, in the loop's words, with the seed.
            let message = format!("resetting the host before seed {seed}: {source}");
            let err = host_err(source);
            let value = err.value(py);
            value.setattr("args", (message,))?;
            value.setattr("seed", seed)?;
            Err(err)
        }
    }
}

/// `HostError` of kind `busy`: the loop needed the host (to reset it, or to
/// start or end a seed's chaos) while a thread the body started was still
/// inside one of its methods; `seed` the seed whose body ran last (None:
/// none had).
fn host_in_use(py: Python<'_>, last_seed: Option<u64>) -> PyErr {
    let after = last_seed.map_or_else(String::new, |seed| format!(" after the body of seed {seed}"));
    let err = HostError::new_err(format!(
        "run_chaos: another thread was still using the host{after} when the chaos loop needed it (to reset it, or \
         to start or end a seed's schedule); the chaos ended. A body must not return while threads it started \
         still call the host: join them before it returns"
    ));
    let value = err.value(py);
    // A fresh exception's attributes: setting them fails only short of memory.
    let _ = value.setattr("kind", "busy");
    let _ = value.setattr("seed", last_seed);
    err
}
