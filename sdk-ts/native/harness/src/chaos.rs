//! Seeded chaos for `@wasmkeep/actor/testing`: `runChaos` runs the testing
//! crate's loop ([`run_chaos`], the one every harness runs) with the test's
//! JavaScript body, called on Node's thread once per seed; `startChaos` and
//! `endChaos` are its pieces, for the harness's own tests.

use crate::{ErrorCode, NativeHost, err, internal};
use napi::bindgen_prelude::{Function, JsObjectValue as _, Object, Unknown};
use napi::{Env, JsValue as _, sys};
use napi_derive::napi;
use serde_json::{Value as Json, json};
use std::cell::{RefCell, RefMut};
use wasmkeep_host_testing::{
    ChaosFailure, ChaosRecord, ChaosRunError, ChaosStep, HasTestHost, TestHost, chaos_seed_from_env, run_chosen_seeds,
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

    /// Ends seeded chaos: `{records}`, what the schedule did, each record
    /// with its `text` as the report prints it. (A failing seed's report and
    /// explanations come from `run_chaos`, the only loop.)
    #[napi]
    pub fn end_chaos(&self) -> napi::Result<Json, ErrorCode> {
        let records = self.host()?.end_chaos();
        Ok(json!({ "records": records.iter().map(record_json).collect::<Vec<_>>() }))
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
        // WASMKEEP_CHAOS_SEED is read here, once: a replayed seed runs
        // alone, and must be one a JavaScript number holds.
        let seeds = match chaos_seed_from_env().map_err(err)? {
            Some(seed) => vec![replayable(seed)?],
            None => seeds
                .into_iter()
                .map(seed_of)
                .collect::<napi::Result<Vec<_>, ErrorCode>>()?,
        };
        let mut cause = None;
        let mut lent = Lent {
            cell: &self.host,
            held: None,
        };
        let outcome = run_chosen_seeds(&mut lent, seeds, |lent, seed| {
            // The body's verbs borrow the host themselves.
            lent.held = None;
            #[allow(clippy::cast_precision_loss, reason = "seeds are checked within 2^53")]
            call_body(env, &body, seed as f64).map_err(|thrown| match thrown {
                Thrown::Value(value) => {
                    cause = Some(value);
                    message_of(env, value)
                }
                Thrown::Failed(message) => message,
            })
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

/// Why a body did not return.
enum Thrown<'env> {
    /// It threw this value.
    Value(Unknown<'env>),
    /// Node could not call it (the message says why).
    Failed(String),
}

/// Calls `body(seed)` on this thread. What it throws is taken from Node as
/// it is, whatever the value (napi-rs's own call keeps it through a
/// reference, which Node 20 makes only to objects).
fn call_body<'env>(env: &'env Env, body: &Function<'env, f64, Unknown<'env>>, seed: f64) -> Result<(), Thrown<'env>> {
    let raw_env = env.raw();
    let mut this = std::ptr::null_mut();
    let mut arg = std::ptr::null_mut();
    let mut returned = std::ptr::null_mut();
    // SAFETY: `raw_env` is this call's environment and `body` a function of it;
    // every out-pointer is a local.
    let status = unsafe {
        if sys::napi_get_undefined(raw_env, &raw mut this) != sys::Status::napi_ok
            || sys::napi_create_double(raw_env, seed, &raw mut arg) != sys::Status::napi_ok
        {
            return Err(Thrown::Failed(format!(
                "calling the body with seed {seed}: napi could not make its arguments"
            )));
        }
        sys::napi_call_function(raw_env, this, body.raw(), 1, &raw const arg, &raw mut returned)
    };
    match status {
        sys::Status::napi_ok => Ok(()),
        sys::Status::napi_pending_exception => {
            let mut thrown = std::ptr::null_mut();
            // SAFETY: as above; the exception is pending, so there is one to take.
            if unsafe { sys::napi_get_and_clear_last_exception(raw_env, &raw mut thrown) } != sys::Status::napi_ok {
                return Err(Thrown::Failed(
                    "the body threw, and napi could not take what it threw".to_owned(),
                ));
            }
            // SAFETY: a value of this environment, just handed over.
            Err(Thrown::Value(unsafe { Unknown::from_raw_unchecked(raw_env, thrown) }))
        }
        other => Err(Thrown::Failed(format!("calling the body failed (napi status {other})"))),
    }
}

/// The failure's message for what a body threw: an `Error`'s `message`;
/// any other value as text, said not to be an Error.
fn message_of(env: &Env, value: Unknown<'_>) -> String {
    if value.is_error().unwrap_or(false) {
        let error = Object::from_raw(env.raw(), value.raw());
        if let Ok(message) = error.get_named_property::<String>("message") {
            return message;
        }
    }
    let text = value
        .coerce_to_string()
        .and_then(|s| s.into_utf8())
        .and_then(|s| s.into_owned());
    match text {
        Ok(text) => format!("{text} (thrown, not an Error)"),
        Err(_) => {
            // A value with no text (a symbol, an object without toString):
            // converting it threw, and that exception must not stay pending.
            let mut ignored = std::ptr::null_mut();
            // SAFETY: this call's environment; taking no exception is harmless.
            let _ = unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &raw mut ignored) };
            "a value without a text form (thrown, not an Error)".to_owned()
        }
    }
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

/// The seed `WASMKEEP_CHAOS_SEED` named, to replay alone, if a JavaScript
/// number holds it exactly (the body is given it as one).
fn replayable(seed: u64) -> napi::Result<u64, ErrorCode> {
    #[allow(clippy::cast_precision_loss, reason = "compared with 2^53 - 1, which f64 holds")]
    if seed as f64 <= MAX_SEED {
        Ok(seed)
    } else {
        Err(err(format!(
            "WASMKEEP_CHAOS_SEED={seed} is beyond the seeds a JavaScript number holds exactly (up to {MAX_SEED}): \
             give the seed a failure of this harness printed"
        )))
    }
}
