//! Wake from hibernation, per language: how much longer an event on a
//! hibernated counter takes than the same event on a resident one. A wake
//! opens the actor's database, makes its store and instantiates its
//! component; the language decides how much the instance does at start.

use anyhow::{Context, Result};

use crate::report::{Met, Report, Row, met};
use crate::setup;

/// Rounds measured (each a resident GET, a hibernation, a woken GET);
/// `WASMKEEP_BENCH_WAKE_ROUNDS` sets more, for a profile of the wake.
fn rounds() -> usize {
    std::env::var("WASMKEEP_BENCH_WAKE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(41)
}

/// A counter to wake, with its language's target (issue 25).
pub struct WakeCounter {
    pub label: String,
    pub wasm: std::path::PathBuf,
}

/// The wake target for a counter's label, in ms.
fn target_ms(label: &str) -> Option<f64> {
    if label.starts_with("counter-ts") {
        Some(1.0)
    } else if label.starts_with("counter-py") {
        Some(5.0)
    } else if label.starts_with("counter-rust") || label.starts_with("counter-c") {
        Some(0.2)
    } else {
        None
    }
}

/// Percentile `p` (0..=1) of `v`, sorted in place.
fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or(0.0)
}

pub fn run(counters: &[WakeCounter], report: &mut Report) -> Result<()> {
    let cache = tempfile::Builder::new()
        .prefix("wasmkeep-bench-wake-cache-")
        .tempdir()
        .context("creating a temporary directory")?;
    for c in counters {
        eprintln!("== wake: {}", c.label);
        let (rt, _dir) = setup::resident_runtime(&c.wasm, cache.path(), None)?;
        // The database exists and on-init has run before the first round.
        setup::get_counter(&rt, "wake")?;
        setup::get_counter(&rt, "wake")?;
        let mut resident = Vec::new();
        let mut woken = Vec::new();
        for _ in 0..rounds() {
            resident.push(setup::get_counter(&rt, "wake")?.as_secs_f64() * 1000.0);
            rt.dev().hibernate_all();
            woken.push(setup::get_counter(&rt, "wake")?.as_secs_f64() * 1000.0);
        }
        let resident_p50 = setup::median(&mut resident);
        let woken_p50 = setup::median(&mut woken);
        let woken_p90 = percentile(&mut woken, 0.9);
        let wake = woken_p50 - resident_p50;
        let target = target_ms(&c.label);
        report.row(Row {
            figure: format!("wake from hibernation, {}", c.label),
            shim: format!(
                "{:.0} µs (woken GET p50 {woken_p50:.3} ms, p90 {woken_p90:.3} ms)",
                wake * 1000.0
            ),
            baseline: format!("a resident GET {:.0} µs", resident_p50 * 1000.0),
            ratio: "-".into(),
            target: target.map_or_else(|| "- (reported)".into(), |t| format!("≤ {:.0} µs", t * 1000.0)),
            met: target.map_or(Met::Unknown, |t| met(wake <= t)),
        });
    }
    let n = rounds();
    report.note(format!(
        "wake: median of {n} GETs to a hibernated counter less the median of {n} to the same counter \
         resident, in-process (Runtime::request), after the counter's database exists"
    ));
    Ok(())
}
