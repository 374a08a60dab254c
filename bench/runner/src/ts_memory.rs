//! TypeScript actors kept resident: this process's RSS and PSS growth for 100 and
//! 1,000 resident TS counters (their wake is the `wake` figure). A JS
//! engine's instance is large, so per-actor memory matters as much as speed here.

use anyhow::{Context, Result, ensure};
use wasmkeep_shim::Runtime;

use crate::http::OtherCounter;
use crate::report::{Met, Report, Row, met};
use crate::setup;

/// The aim for 1,000 resident TS counters.
const AIM_1000_MIB: f64 = 2048.0;
/// Above this projection for 1,000 actors the 1,000 run is skipped, so a
/// heavy engine cannot exhaust the machine's memory.
const MOST_PROJECTED_MIB: f64 = 12.0 * 1024.0;

/// This process's resident set and its proportional share, in MiB.
fn rss_and_pss_mib() -> Result<(f64, f64)> {
    let rss = crate::memory::status_kib("VmRSS").map(crate::memory::mib)?;
    let pss = crate::memory::rollup_kib("Pss").map(crate::memory::mib)?;
    Ok((rss, pss))
}

/// Touches actors `r<from>`..`r<to>` once each; fails unless every one
/// touched so far (`0..to`) is still resident, which the figures assume.
fn touch(rt: &Runtime, from: usize, to: usize) -> Result<()> {
    for i in from..to {
        setup::get_counter(rt, &format!("r{i}"))?;
    }
    ensure!(
        rt.admin().resident_count() >= to,
        "only {} actors are resident of the {to} touched",
        rt.admin().resident_count()
    );
    Ok(())
}

pub fn run(components: &[OtherCounter], report: &mut Report) -> Result<()> {
    let cache = tempfile::Builder::new()
        .prefix("wasmkeep-bench-ts-cache-")
        .tempdir()
        .context("creating a temporary directory")?;
    for c in components {
        eprintln!("== TS memory: {}", c.label);
        let (rt, _dir) = setup::resident_runtime(&c.wasm, cache.path(), Some(1000))?;
        setup::get_counter(&rt, "warm-up")?;
        rt.dev().hibernate_all();
        // The RSS and PSS growth over `n` resident counters, as a row.
        let rss_row = |n: usize, (grown, pss): (f64, f64), target: String, met: Met| Row {
            figure: format!(
                "RSS growth, {} resident {}",
                if n == 1000 { "1,000".into() } else { n.to_string() },
                c.label
            ),
            shim: format!(
                "{grown:.1} MiB ({:.2} MiB each; PSS {pss:.1} MiB, {:.2} MiB each)",
                grown / n as f64,
                pss / n as f64
            ),
            baseline: "-".into(),
            ratio: "-".into(),
            target,
            met,
        };
        let before = rss_and_pss_mib()?;
        let growth_since = |before: (f64, f64)| -> Result<(f64, f64)> {
            let now = rss_and_pss_mib()?;
            Ok(((now.0 - before.0).max(0.0), (now.1 - before.1).max(0.0)))
        };
        touch(&rt, 0, 100)?;
        let (at_100, pss_100) = growth_since(before)?;
        report.row(rss_row(100, (at_100, pss_100), "- (reported)".into(), Met::Unknown));
        let projected = at_100 * 10.0;
        if projected <= MOST_PROJECTED_MIB {
            touch(&rt, 100, 1000)?;
            let (at_1000, pss_1000) = growth_since(before)?;
            report.row(rss_row(
                1000,
                (at_1000, pss_1000),
                format!("≤ {AIM_1000_MIB:.0} MiB"),
                met(at_1000 <= AIM_1000_MIB),
            ));
        } else {
            report.note(format!(
                "{}: 1,000 resident not measured: 100 took {at_100:.0} MiB, so 1,000 would take about {projected:.0} MiB",
                c.label
            ));
        }
        rt.dev().hibernate_all();
    }
    report.note(
        "TS memory: RSS growth of this process after a GET to each of 100, then 1,000 TS counters, all kept resident, \
         and its PSS growth (the component's memory image, mapped copy-on-write into every instance's slot, counts \
         once there; the aim is on RSS); their wake is the `wake` figure"
            .to_owned(),
    );
    Ok(())
}
