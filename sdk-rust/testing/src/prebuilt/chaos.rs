//! The chaos loop on the harness library: `wkh_run_chaos_seeds`, which
//! runs the testing crate's `run_chaos` inside the library (the loop of
//! every harness) over the test's seeds as they are, with a C body
//! ([`c_body`]) that runs the test's closure, as a C test's body does, and
//! gives the library its whole message (`wkh_chaos_message_set`). No panic
//! crosses into the library: the closure's is caught.

use super::{ffi, last_error, text};
use crate::chaos;
use crate::driver::HarnessError;
use crate::harness::ActorTest;
use crate::types::ChaosFailure;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What the C body reaches through its `ctx`.
struct Ctx<'a> {
    /// The test the closure runs on (its driver holds the host the library
    /// runs the loop on; the library holds no Rust reference into it).
    test: &'a mut ActorTest,
    /// The test's closure.
    body: &'a dyn Fn(&ActorTest),
    /// The library's `wkh_chaos_message_set`.
    set_message: ffi::WkhChaosMessageSetFn,
}

/// The body `wkh_run_chaos_seeds` calls once per seed, on the host reset
/// and under the seed's schedule: the closure's run on the test
/// ([`chaos::run_body`]), 0 when it passed, else 1 with its whole message
/// given to the library.
///
/// `host` is the test's own host, which the library lends back: the
/// closure's verbs reach it through the test.
///
/// # Safety
/// `ctx` is the [`Ctx`] [`run_chaos`] passed, alive for the call and used by
/// nothing else meanwhile; `message` is the one the library gave this call.
unsafe extern "C" fn c_body(
    host: *mut ffi::WkhHost,
    seed: u64,
    ctx: *mut c_void,
    message: *mut ffi::WkhChaosMessage,
) -> i32 {
    // SAFETY: per the contract: `run_chaos`'s `Ctx`, reached by nothing else.
    let ctx = unsafe { &mut *ctx.cast::<Ctx<'_>>() };
    let set_message = ctx.set_message;
    // The closure's panic is caught in `run_body`; this catches anything
    // else, so that no panic unwinds into the library.
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        debug_assert!(
            ctx.test.driver_mut().prebuilt().is_some_and(|p| p.host == host),
            "the library lends back the test's own host"
        );
        chaos::run_body(ctx.test, seed, ctx.body)
    }));
    let failed = match outcome {
        Ok(Ok(())) => return 0,
        Ok(Err(m)) => m,
        Err(_) => "the Rust harness panicked around the chaos body (not in it)".to_owned(),
    };
    // SAFETY: the message this call was given, and `failed`'s bytes for the call.
    unsafe { set_message(message, failed.as_ptr().cast(), failed.len()) };
    1
}

/// [`run_chaos`](crate::run_chaos) on the prebuilt driver:
/// `wkh_run_chaos_seeds` over `seeds`, with [`c_body`]. The library prints
/// a failing seed's explanations to the process's stderr, as its verbs print
/// a 5xx's.
///
/// # Errors
/// The driver is not the prebuilt one, or the library could not run the
/// loop (a reset failed: its message says before which seed).
pub(crate) fn run_chaos(
    t: &mut ActorTest,
    seeds: &[u64],
    body: &dyn Fn(&ActorTest),
) -> anyhow::Result<Result<usize, ChaosFailure>> {
    let (api, host) = t
        .driver_mut()
        .prebuilt()
        .map(|p| (p.api, p.host))
        .ok_or_else(|| HarnessError::new("the library's chaos loop needs the prebuilt driver"))?;
    let mut ctx = Ctx {
        test: t,
        body,
        set_message: api.wkh_chaos_message_set,
    };
    // SAFETY: a live host, owned by `t`, which outlives the call; the
    // closure reaches it through `t` only while the library calls it (it
    // cannot reset or free it: it has `&ActorTest`); `seeds` is `seeds.len()`
    // seeds; `c_body` is a body as `wkh_run_chaos_seeds` asks; `ctx`
    // outlives the call.
    let r =
        unsafe { (api.wkh_run_chaos_seeds)(host, seeds.as_ptr(), seeds.len(), Some(c_body), (&raw mut ctx).cast()) };
    if r.is_null() {
        return Err(last_error(api).into());
    }
    // SAFETY: a result of the library, read then freed once.
    let (ran, failed, seed, message, schedule, report) = unsafe {
        let out = (
            (*r).ran,
            (*r).failed,
            (*r).seed,
            text((*r).message),
            text((*r).schedule),
            text((*r).report),
        );
        (api.wkh_chaos_result_free)(r);
        out
    };
    let ran = usize::try_from(ran).unwrap_or(usize::MAX);
    if !failed {
        return Ok(Ok(ran));
    }
    Ok(Err(ChaosFailure {
        seed,
        schedule: schedule.lines().map(str::to_owned).collect(),
        message,
        passed: ran.saturating_sub(1),
        report,
    }))
}
