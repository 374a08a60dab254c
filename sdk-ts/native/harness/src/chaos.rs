//! Seeded chaos for `@wasmkeep/actor/testing`: `runChaos` runs the testing
//! crate's loop ([`run_chaos`], the one every harness runs) with the test's
//! JavaScript body, called on Node's thread once per seed; `startChaos` and
//! `endChaos` are its pieces, for the harness's own tests.

use crate::{ErrorCode, NativeHost, err, internal};
use napi::bindgen_prelude::{Function, JsObjectValue as _, Object, ToNapiValue as _, Unknown};
use napi::{Env, JsValue as _};
use napi_derive::napi;
use serde_json::{Value as Json, json};
use std::cell::{RefCell, RefMut};
use wasmkeep_host_testing::{
    ChaosFailure, ChaosRecord, ChaosRunError, ChaosStep, HasTestHost, TestHost, chaos_seed_from_env, run_chaos,
};

/// The host as [`run_chaos`] holds it: borrowed for the loop's own steps
/// (the reset, starting and ending the schedule), given back while a body
/// runs, whose verbs borrow it in turn.
struct Lent<'a> {
    cell: &'a RefCell<TestHost>,
    held: Option<RefMut<'a, TestHost>>,
}

impl HasTestHost for Lent<'_> {
    fn test_host(&mut self) -> &mut TestHost {
        let cell = self.cell;
        // Nothing else holds it here: a verb's borrow ends before the verb returns.
        self.held.get_or_insert_with(|| cell.borrow_mut())
    }
}

#[napi]
impl NativeHost {
    /// Starts seeded chaos: the seed's schedule runs before each request,
    /// call and socket opening until `end_chaos`.
    #[napi]
    pub fn start_chaos(&self, seed: f64) -> napi::Result<(), ErrorCode> {
        self.host()?.start_chaos(seed_of(seed)?);
        Ok(())
    }

    /// Ends seeded chaos: `{records, report, explanations}`, what the
    /// schedule did (each record with its `text` as the report prints it)
    /// and, when `failure` is given (the seed failed with that message), the
    /// library's report of the failure and what explained each 5xx answer of
    /// the seed (to print before it; empty when it passed).
    #[napi]
    pub fn end_chaos(&self, failure: Option<String>) -> napi::Result<Json, ErrorCode> {
        let host = self.host()?;
        let (records, report, explanations) = match failure {
            Some(message) => {
                let f = host.fail_chaos(&message);
                let report = f.report();
                (f.schedule, Some(report), f.explanations)
            }
            None => (host.end_chaos(), None, Vec::new()),
        };
        Ok(json!({
            "records": records.iter().map(record_json).collect::<Vec<_>>(),
            "report": report,
            "explanations": explanations,
        }))
    }

    /// The chaos loop of the testing crate (`run_chaos`): `body(seed)` once
    /// per seed of `seeds` (only `WASMKEEP_CHAOS_SEED`'s when it is set),
    /// each after a reset of the host and under that seed's schedule, called
    /// here on Node's thread. A throw fails the seed, with the `message` of
    /// the `Error` thrown (any other value as text, "(thrown, not an
    /// Error)"); the loop stops there. Returns `{ran}` when every seed
    /// passed, else `{ran, failure: {seed, message, report, records,
    /// explanations}, cause}`, `cause` the value thrown. The host is left out
    /// of chaos either way, as the last seed left it.
    #[napi]
    pub fn run_chaos<'env>(
        &self,
        env: &'env Env,
        seeds: Vec<f64>,
        body: Function<'env, f64, Unknown<'env>>,
    ) -> napi::Result<Object<'env>, ErrorCode> {
        // A replayed seed must be one a JavaScript number holds.
        let replay = chaos_seed_from_environment()?;
        let seeds = if replay.is_some() {
            Vec::new()
        } else {
            seeds
                .into_iter()
                .map(seed_of)
                .collect::<napi::Result<Vec<_>, ErrorCode>>()?
        };
        let mut cause = None;
        let mut lent = Lent {
            cell: &self.host,
            held: None,
        };
        let outcome = run_chaos(&mut lent, seeds, |lent, seed| {
            // The body's verbs borrow the host themselves.
            lent.held = None;
            #[allow(clippy::cast_precision_loss, reason = "seeds are checked within 2^53")]
            match body.call(seed as f64) {
                Ok(_) => Ok(()),
                Err(thrown) => {
                    let (message, value) = message_of(env, thrown);
                    cause = value;
                    Err(message)
                }
            }
        });
        drop(lent);
        let mut out = Object::new(env).map_err(internal)?;
        match outcome {
            Ok(ran) => out.set_named_property("ran", ran_of(ran)).map_err(internal)?,
            Err(ChaosRunError::Failed(failure)) => {
                out.set_named_property("ran", ran_of(failure.passed))
                    .map_err(internal)?;
                out.set_named_property("failure", failure_json(&failure))
                    .map_err(internal)?;
                if let Some(value) = cause {
                    out.set_named_property("cause", value).map_err(internal)?;
                }
            }
            Err(ChaosRunError::BadSeedVariable(message)) => return Err(err(message)),
            Err(ChaosRunError::Reset { seed, source }) => {
                let code = ErrorCode(source.kind().as_str());
                return Err(napi::Error::new(
                    code,
                    format!("resetting the host before seed {seed}: {source}"),
                ));
            }
        }
        Ok(out)
    }
}

/// How many seeds passed, as JavaScript counts them.
fn ran_of(ran: usize) -> u32 {
    u32::try_from(ran).unwrap_or(u32::MAX)
}

/// What a failed seed reports: `{seed, message, report, records, explanations}`.
fn failure_json(f: &ChaosFailure) -> Json {
    json!({
        "seed": f.seed,
        "message": f.message,
        "report": f.report(),
        "records": f.schedule.iter().map(record_json).collect::<Vec<_>>(),
        "explanations": f.explanations,
    })
}

/// What a body threw, as the failure's message and the value itself: an
/// `Error`'s `message`; any other value as text, said not to be an Error.
fn message_of<'env>(env: &'env Env, thrown: napi::Error) -> (String, Option<Unknown<'env>>) {
    let text = thrown.reason.clone();
    // SAFETY: `env` is this call's environment; the error holds a reference
    // to the value thrown (or makes an Error of its reason).
    let Ok(raw) = (unsafe { napi::Error::to_napi_value(env.raw(), thrown) }) else {
        return (format!("{text} (thrown, not an Error)"), None);
    };
    // SAFETY: a value of this environment, just made.
    let value = unsafe { Unknown::from_raw_unchecked(env.raw(), raw) };
    if value.is_error().unwrap_or(false) {
        let error = Object::from_raw(env.raw(), raw);
        if let Ok(message) = error.get_named_property::<String>("message") {
            return (message, Some(value));
        }
    }
    (format!("{text} (thrown, not an Error)"), Some(value))
}

/// The largest seed a JavaScript number holds exactly.
const MAX_SEED: f64 = 9_007_199_254_740_991.0;

fn seed_of(seed: f64) -> napi::Result<u64, ErrorCode> {
    if seed.is_finite() && (0.0..=MAX_SEED).contains(&seed) && seed.fract() == 0.0 {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked a whole number within 0..=2^53-1 above"
        )]
        Ok(seed as u64)
    } else {
        Err(err(format!(
            "{seed} is not a seed: a seed is a whole number from 0 to {MAX_SEED}"
        )))
    }
}

/// One record of a chaos schedule: `{event, actor, node, step, text}`, with
/// `step` the kind ([`ChaosStep::kind`]: `late-alarms` with `ms`, `cut-off`
/// with `cut`).
fn record_json(r: &ChaosRecord) -> Json {
    let mut out = json!({
        "event": r.event,
        "actor": r.actor,
        "node": r.node,
        "text": r.to_string(),
    });
    match &r.step {
        ChaosStep::LateAlarms(ms) => out["ms"] = json!(ms),
        ChaosStep::CutOff(n) => out["cut"] = json!(n),
        _ => {}
    }
    out["step"] = json!(r.step.kind());
    out
}

/// The seed `WASMKEEP_CHAOS_SEED` names, to replay alone; `null` when unset.
#[napi]
pub fn chaos_seed_from_environment() -> napi::Result<Option<f64>, ErrorCode> {
    match chaos_seed_from_env().map_err(err)? {
        None => Ok(None),
        #[allow(clippy::cast_precision_loss, reason = "checked within 2^53 first")]
        Some(seed) if seed as f64 <= MAX_SEED => Ok(Some(seed as f64)),
        Some(seed) => Err(err(format!(
            "WASMKEEP_CHAOS_SEED={seed} is beyond the seeds a JavaScript number holds exactly (up to {MAX_SEED}): \
             give the seed a failure of this harness printed"
        ))),
    }
}
