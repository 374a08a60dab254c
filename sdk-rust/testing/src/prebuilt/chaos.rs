//! The chaos loop on the harness library: `wkh_run_chaos`, which runs the
//! testing crate's `run_chaos` inside the library (the loop of every
//! harness), with a C body ([`c_body`]) that runs the test's closure, as a
//! C test's body does. No panic crosses into the library: the closure's is
//! caught and its message written into the buffer the library gives.

use super::{ffi, last_error, text};
use crate::chaos;
use crate::driver::HarnessError;
use crate::harness::ActorTest;
use crate::types::ChaosFailure;
use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What the C body reaches through its `ctx`.
struct Ctx<'a> {
    /// The test the closure runs on (its driver holds the host the library
    /// runs the loop on; the library holds no Rust reference into it).
    test: &'a mut ActorTest,
    /// The test's closure.
    body: &'a dyn Fn(&ActorTest),
    /// The failing closure's whole message: the library keeps only what fits
    /// its buffer (`WKH_CHAOS_MESSAGE_CAP`).
    message: Option<String>,
}

/// The body `wkh_run_chaos` calls once per seed, on the host reset and
/// under the seed's schedule: the closure's run on the test
/// ([`chaos::run_body`]), 0 when it passed, else 1 with its message in
/// `message`, cut to what fits (whole characters, with the NUL).
///
/// `host` is the test's own host, which the library lends back: the
/// closure's verbs reach it through the test.
///
/// # Safety
/// `ctx` is the [`Ctx`] [`run_chaos`] passed, alive for the call and used by
/// nothing else meanwhile; `message` is NULL or valid for `message_cap`
/// bytes.
unsafe extern "C" fn c_body(
    host: *mut ffi::WkhHost,
    seed: u64,
    ctx: *mut c_void,
    message: *mut c_char,
    message_cap: usize,
) -> i32 {
    // The closure's panic is caught in `run_body`; this catches anything
    // else, so that no panic unwinds into the library.
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: per the contract: `run_chaos`'s `Ctx`, reached by nothing else.
        let ctx = unsafe { &mut *ctx.cast::<Ctx<'_>>() };
        debug_assert!(
            ctx.test.driver_mut().prebuilt().is_some_and(|p| p.host == host),
            "the library lends back the test's own host"
        );
        chaos::run_body(ctx.test, seed, ctx.body).map_err(|m| {
            // A NUL would end the C string early: shown as `\0`.
            let m = m.replace('\0', "\\0");
            ctx.message = Some(m.clone());
            m
        })
    }));
    let failed = match outcome {
        Ok(Ok(())) => return 0,
        Ok(Err(m)) => m,
        Err(_) => "the Rust harness panicked around the chaos body (not in it)".to_owned(),
    };
    if !message.is_null() && message_cap > 0 {
        let shown = fitting(&failed, message_cap - 1);
        // SAFETY: `message` is valid for `message_cap` bytes, and `shown`
        // holds at most `message_cap - 1`, so the NUL fits after it.
        unsafe {
            std::ptr::copy_nonoverlapping(shown.as_ptr(), message.cast::<u8>(), shown.len());
            message.add(shown.len()).write(0);
        }
    }
    1
}

/// The longest start of `text` of at most `room` bytes that ends between
/// two characters.
fn fitting(text: &str, room: usize) -> &str {
    let mut end = text.len().min(room);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `seeds` as runs of consecutive seeds, each its first seed and how many,
/// in order: `wkh_run_chaos` runs a range (`0..1000` is one run).
fn runs(seeds: &[u64]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &seed in seeds {
        match out.last_mut() {
            Some((first, count)) if first.wrapping_add(*count) == seed => *count += 1,
            _ => out.push((seed, 1)),
        }
    }
    out
}

/// The library's report with the message it holds (`shown`, what fit its
/// buffer) put back whole: the report's first line ends
/// `(replay it alone with WASMKEEP_CHAOS_SEED=<seed>): <message>`. A report
/// of another shape is kept as it is.
fn with_whole_message(report: &str, shown: &str, whole: &str) -> String {
    const BEFORE: &str = "): ";
    report
        .find(BEFORE)
        .map(|i| i + BEFORE.len())
        .filter(|&at| report[at..].starts_with(shown))
        .map_or_else(
            || report.to_owned(),
            |at| format!("{}{whole}{}", &report[..at], &report[at + shown.len()..]),
        )
}

/// [`run_chaos`](crate::run_chaos) on the prebuilt driver: `wkh_run_chaos`
/// once per run of consecutive seeds (once for a range), with [`c_body`].
/// The library prints a failing seed's explanations to the process's
/// stderr, as its verbs print a 5xx's.
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
    let mut passed = 0usize;
    for (first, count) in runs(seeds) {
        let mut ctx = Ctx {
            test: &mut *t,
            body,
            message: None,
        };
        // SAFETY: a live host, owned by `t`, which outlives the call; the
        // closure reaches it through `t` only while the library calls it
        // (it cannot reset or free it: it has `&ActorTest`); `c_body` is a
        // body as `wkh_run_chaos` asks; `ctx` outlives the call.
        let r = unsafe { (api.wkh_run_chaos)(host, first, count, Some(c_body), (&raw mut ctx).cast()) };
        if r.is_null() {
            return Err(last_error(api).into());
        }
        // SAFETY: a result of the library, read then freed once.
        let (ran, failed, seed, shown, schedule, report) = unsafe {
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
            passed = passed.saturating_add(ran);
            continue;
        }
        let (message, report) = match ctx.message.take() {
            Some(whole) if whole != shown => {
                let report = with_whole_message(&report, &shown, &whole);
                (whole, report)
            }
            _ => (shown, report),
        };
        return Ok(Err(ChaosFailure {
            seed,
            schedule: schedule.lines().map(str::to_owned).collect(),
            message,
            passed: passed.saturating_add(ran.saturating_sub(1)),
            report,
        }));
    }
    Ok(Ok(passed))
}

#[cfg(test)]
mod tests {
    use super::{fitting, runs, with_whole_message};

    #[test]
    fn seeds_go_as_runs_of_consecutive_ones() {
        assert_eq!(runs(&[]), []);
        assert_eq!(runs(&(0..1000).collect::<Vec<_>>()), [(0, 1000)]);
        assert_eq!(runs(&[7, 3, 4, 5, 9, 9]), [(7, 1), (3, 3), (9, 1), (9, 1)]);
        assert_eq!(
            runs(&[u64::MAX, 0, 1]),
            [(u64::MAX, 3)],
            "as the library counts, wrapping"
        );
    }

    #[test]
    fn a_message_is_cut_between_characters() {
        assert_eq!(fitting("abc", 10), "abc");
        assert_eq!(fitting("abc", 2), "ab");
        assert_eq!(fitting("aé", 2), "a", "é is two bytes");
        assert_eq!(fitting("", 0), "");
    }

    #[test]
    fn the_report_gets_the_whole_message_back() {
        let report =
            "the test failed under seed 3 (replay it alone with WASMKEEP_CHAOS_SEED=3): abc\n  the schedule:\n    x\n";
        assert_eq!(
            with_whole_message(report, "abc", "abcdef"),
            "the test failed under seed 3 (replay it alone with WASMKEEP_CHAOS_SEED=3): abcdef\n  the schedule:\n    x\n"
        );
        assert_eq!(with_whole_message(report, "zzz", "zzzz"), report, "another shape: kept");
    }
}
