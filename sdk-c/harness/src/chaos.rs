//! Seeded chaos: a body run once per seed, each on a reset host under its
//! seeded schedule of what goes wrong at the durable boundaries (the host
//! library's `TestHost::start_chaos`); the first failure comes back with its
//! seed, the schedule and the report every harness prints.

use crate::error::{Failure, guard};
use crate::ffi_str::{bytes, free_owned, owned};
use crate::host::WkhHost;
use std::ffi::{CStr, c_char, c_void};
use std::io::Write as _;
use wasmkeep_host_testing::{ChaosRecord, ChaosRunError, HasTestHost, TestHost, run_chaos};

/// The room `wkh_run_chaos` gives a body for its failure message (with the NUL).
pub const WKH_CHAOS_MESSAGE_CAP: usize = 1024;

/// A test body for `wkh_run_chaos`: runs once per seed on `host` (reset, and
/// under that seed's schedule), returns 0 when the test passed and nonzero
/// when it failed, and may write why into `message` (`message_cap` bytes,
/// zeroed; e.g. with `snprintf`). It must not reset or free the host.
pub type WkhChaosBody = Option<
    unsafe extern "C" fn(
        host: *mut WkhHost,
        seed: u64,
        ctx: *mut c_void,
        message: *mut c_char,
        message_cap: usize,
    ) -> i32,
>;

/// Where a body of `wkh_run_chaos_seeds` says why its seed failed, with
/// `wkh_chaos_message_set`: a message of any length. Valid only during the
/// body's call.
pub struct WkhChaosMessage {
    text: Option<String>,
}

/// A test body for `wkh_run_chaos_seeds`: as `wkh_chaos_body`, but it says
/// why it failed with `wkh_chaos_message_set(message, ...)`, whatever the
/// length, instead of into a buffer. Returns 0 when the test passed, nonzero
/// when it failed. It must not reset or free the host. (Added after 0.2.0.)
pub type WkhChaosSeedBody =
    Option<unsafe extern "C" fn(host: *mut WkhHost, seed: u64, ctx: *mut c_void, message: *mut WkhChaosMessage) -> i32>;

/// What `wkh_run_chaos` and `wkh_run_chaos_seeds` found. Free it with
/// `wkh_chaos_result_free`.
#[repr(C)]
pub struct WkhChaosResult {
    /// How many seeds ran (the failing one included).
    pub ran: u64,
    /// Whether a seed failed (then `seed`, `message`, `schedule` and `report` say which and how).
    pub failed: bool,
    /// The failing seed: `WASMKEEP_CHAOS_SEED=<seed>` replays exactly its run; 0 if none failed.
    pub seed: u64,
    /// The body's message (or what it returned, when it wrote none); NULL if none failed.
    pub message: *mut c_char,
    /// What the failing seed's schedule did, one line per step in order (empty
    /// when it did nothing); NULL if none failed. The same seed replays the same.
    pub schedule: *mut c_char,
    /// The report to print: the seed, how to replay it, the message and the
    /// schedule; NULL if none failed.
    pub report: *mut c_char,
}

/// The schedule's records, one line each.
fn lines(records: &[ChaosRecord]) -> String {
    records.iter().map(|r| format!("{r}\n")).collect()
}

/// Starts seeded chaos on the host: from now on, before each request, call
/// and socket opening, the seed's schedule may arm a failed removal, restart
/// the actor, hibernate every actor or move the clock on and run the due
/// alarms; in a cluster also fail an upload (or let it land and report
/// failure), lose a hold, cut a node off, and send the event to any live
/// node. The same seed and the same events draw the same schedule. Starting
/// again replaces the schedule. Stop it with `wkh_chaos_end`. Returns 0 or -1.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_chaos_start(host: *const WkhHost, seed: u64) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        unsafe { WkhHost::from_ptr(host)? }.host.start_chaos(seed);
        Ok(0)
    })
}

/// Stops the chaos `wkh_chaos_start` started. Returns what its schedule did,
/// one line per step in order (`before event 2 (to a/b/c on node 1):
/// fail-removal armed`; empty when nothing, or no chaos ran), to free with
/// `wkh_string_free`; NULL on failure. Faults it armed stay armed until used
/// (or `wkh_clear_faults`, `wkh_reset`).
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_chaos_end(host: *const WkhHost) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let records = unsafe { WkhHost::from_ptr(host)? }.host.end_chaos();
        Ok(owned(lines(&records)))
    })
}

/// Runs `body` once per seed from `first_seed` to `first_seed + count - 1`,
/// each after `wkh_reset` and under that seed's schedule (`wkh_chaos_start`),
/// and stops at the first seed whose body returns nonzero. With
/// `WASMKEEP_CHAOS_SEED` set in the environment, only that seed runs (to
/// replay a failure). The host is never left in chaos: when this returns it
/// holds what the last seed's run left (the failing one's, to look at).
/// `wkh_run_chaos_seeds` runs a list of seeds instead, and takes a message
/// of any length.
///
/// Returns the result (free it with `wkh_chaos_result_free`): `failed` false
/// when every seed passed, else the seed, the body's message, the schedule
/// and the report to print. NULL when it could not run (a NULL host or body,
/// `WASMKEEP_CHAOS_SEED` not a number, a reset failed; see `wkh_last_error`).
///
/// # Safety
/// `host` is a live host that nothing else uses meanwhile; `body` a function
/// as `wkh_chaos_body` describes; `ctx` is passed to it as it is.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_run_chaos(
    host: *mut WkhHost,
    first_seed: u64,
    count: u64,
    body: WkhChaosBody,
    ctx: *mut c_void,
) -> *mut WkhChaosResult {
    guard(std::ptr::null_mut(), || {
        let body = body.ok_or("body is NULL: pass the test's function")?;
        let seeds = (0..count).map(|i| first_seed.wrapping_add(i));
        let seed_run = |host: *mut WkhHost, seed: u64| {
            let mut message = vec![0u8; WKH_CHAOS_MESSAGE_CAP];
            // SAFETY: the body's contract; `host` is the live host.
            let rc = unsafe { body(host, seed, ctx, message.as_mut_ptr().cast(), message.len()) };
            if rc == 0 {
                return Ok(());
            }
            *message.last_mut().unwrap_or(&mut 0) = 0;
            let text = CStr::from_bytes_until_nul(&message)
                .map(|m| m.to_string_lossy().into_owned())
                .unwrap_or_default();
            Err(said_or_returned(Some(text), rc))
        };
        // SAFETY: per the contract.
        unsafe { run(host, seeds, seed_run) }
    })
}

/// Runs `body` once per seed of `seeds[0]` to `seeds[count - 1]`, in that
/// order (repeats and all), as `wkh_run_chaos` runs a range: each after
/// `wkh_reset` and under that seed's schedule, stopping at the first seed
/// whose body returns nonzero; with `WASMKEEP_CHAOS_SEED` set, only that
/// seed runs, once. The failing body's message is what it gave
/// `wkh_chaos_message_set`, whole. (Added after 0.2.0.)
///
/// Returns the result as `wkh_run_chaos` does (`ran` counts the failing
/// seed); NULL when it could not run (a NULL host or body, NULL seeds with
/// `count` above 0, `WASMKEEP_CHAOS_SEED` not a number, a reset failed; see
/// `wkh_last_error`).
///
/// # Safety
/// `host` is a live host that nothing else uses meanwhile; `seeds` points to
/// `count` seeds (or `count` is 0); `body` a function as
/// `wkh_chaos_seed_body` describes; `ctx` is passed to it as it is.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_run_chaos_seeds(
    host: *mut WkhHost,
    seeds: *const u64,
    count: usize,
    body: WkhChaosSeedBody,
    ctx: *mut c_void,
) -> *mut WkhChaosResult {
    guard(std::ptr::null_mut(), || {
        let body = body.ok_or("body is NULL: pass the test's function")?;
        let seeds: Vec<u64> = if count == 0 {
            Vec::new()
        } else if seeds.is_null() {
            return Err(format!("seeds is NULL with count {count}").into());
        } else {
            // SAFETY: `count` readable seeds, per the contract.
            unsafe { std::slice::from_raw_parts(seeds, count) }.to_vec()
        };
        let seed_run = |host: *mut WkhHost, seed: u64| {
            let mut message = WkhChaosMessage { text: None };
            // SAFETY: the body's contract; `host` is the live host, and
            // `message` lives until the body returns.
            let rc = unsafe { body(host, seed, ctx, &raw mut message) };
            if rc == 0 {
                return Ok(());
            }
            Err(said_or_returned(message.text, rc))
        };
        // SAFETY: per the contract.
        unsafe { run(host, seeds, seed_run) }
    })
}

/// Sets the message of a failing body of `wkh_run_chaos_seeds`: the `len`
/// bytes at `text` (UTF-8; what is not is replaced), copied, whatever their
/// length. A second call replaces the first. Returns 0, or -1 for a NULL
/// `message` (or NULL `text` with `len` above 0). (Added after 0.2.0.)
///
/// # Safety
/// `message` is the one the body was given, during its call; `text` points
/// to `len` readable bytes (or `len` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_chaos_message_set(message: *mut WkhChaosMessage, text: *const c_char, len: usize) -> i32 {
    guard(-1, || {
        if message.is_null() {
            return Err("message is NULL: pass the one the body was given".into());
        }
        // SAFETY: per the contract.
        let bytes = unsafe { bytes(text.cast(), len, "text")? };
        // SAFETY: the body's message, alive during its call, per the contract.
        unsafe { &mut *message }.text = Some(String::from_utf8_lossy(bytes).into_owned());
        Ok(0)
    })
}

/// A failed body's message: what it said, else what it returned.
fn said_or_returned(said: Option<String>, rc: i32) -> String {
    match said {
        Some(text) if !text.is_empty() => text,
        _ => format!("the body returned {rc} (it wrote no message)"),
    }
}

/// The testing crate's loop over `seeds` on the C host, with `body` a
/// seed's run (`Err` its message): the result for C, its failing seed's
/// explanations printed to stderr; a loop that could not run is the error,
/// by the loop's own kind.
///
/// # Safety
/// `host` is NULL or a live host that nothing else uses meanwhile.
unsafe fn run(
    host: *mut WkhHost,
    seeds: impl IntoIterator<Item = u64>,
    mut body: impl FnMut(*mut WkhHost, u64) -> Result<(), String>,
) -> Result<*mut WkhChaosResult, Failure> {
    if host.is_null() {
        return Err("host is NULL: make one with wkh_host_new".into());
    }
    // SAFETY: a live host that nothing else uses meanwhile, per the contract.
    let target = unsafe { WkhHost::from_mut_ptr(host)? };
    let outcome = run_chaos(target, seeds, |target, seed| body(target, seed));
    let result = match outcome {
        Ok(ran) => WkhChaosResult {
            ran: ran as u64,
            failed: false,
            seed: 0,
            message: std::ptr::null_mut(),
            schedule: std::ptr::null_mut(),
            report: std::ptr::null_mut(),
        },
        Err(ChaosRunError::Failed(failure)) => {
            let mut err = std::io::stderr().lock();
            for why in &failure.explanations {
                let _ = err.write_all(why.as_bytes());
            }
            WkhChaosResult {
                ran: failure.passed as u64 + 1,
                failed: true,
                seed: failure.seed,
                message: owned(failure.message.clone()),
                schedule: owned(lines(&failure.schedule)),
                report: owned(failure.report()),
            }
        }
        // By the loop's own kind (a bad WASMKEEP_CHAOS_SEED: `bad-argument`).
        Err(other) => return Err(Failure::with_kind(other.to_string(), other.kind())),
    };
    Ok(Box::into_raw(Box::new(result)))
}

impl HasTestHost for WkhHost {
    fn test_host(&mut self) -> &mut TestHost {
        &mut self.host
    }
}

/// Frees what `wkh_run_chaos` or `wkh_run_chaos_seeds` returned. NULL does nothing.
///
/// # Safety
/// `result` is NULL or from `wkh_run_chaos` or `wkh_run_chaos_seeds`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_chaos_result_free(result: *mut WkhChaosResult) {
    if !result.is_null() {
        // SAFETY: made by wkh_run_chaos, freed once; its strings by `owned`.
        unsafe {
            let r = Box::from_raw(result);
            free_owned(r.message);
            free_owned(r.schedule);
            free_owned(r.report);
        }
    }
}
