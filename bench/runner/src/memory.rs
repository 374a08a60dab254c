//! Memory of hibernated actors: this process's RSS before and after touching
//! many counter actors once each and hibernating them.

use std::path::Path;

use anyhow::{Context, Result, ensure};
use wasmkeep_shim::HttpRequest;

use crate::report::{Report, Row, met, thousands};
use crate::setup;

/// Actors woken at once: each resident actor has a worker thread and an open
/// database, so they are touched in batches and hibernated after each.
const BATCH: usize = 500;

/// A field of `/proc/self/status`, in KiB.
pub(crate) fn status_kib(field: &str) -> Result<u64> {
    proc_field_kib("/proc/self/status", field)
}

/// A field of `/proc/self/smaps_rollup`, in KiB. Its `Pss` counts a page
/// mapped N times as 1/N: a component's memory image, mapped copy-on-write
/// from the compile cache into every instance's slot, counts once there,
/// where `VmRSS` counts it once per slot.
pub(crate) fn rollup_kib(field: &str) -> Result<u64> {
    proc_field_kib("/proc/self/smaps_rollup", field)
}

/// A `Name:   123 kB` line of a file under `/proc`.
fn proc_field_kib(path: &str, field: &str) -> Result<u64> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in {path}"))
}

pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

pub fn run(counter: &Path, actors: usize, report: &mut Report) -> Result<()> {
    let (rt, _dir) = setup::runtime("counter", counter)?;
    // One actor first, so that what every process pays once (code paths,
    // lazy statics, the first store) is in the "before" figure.
    let touch = |name: String| -> Result<wasmkeep_shim::PendingResponse> {
        Ok(rt.request(&setup::key("counter", name), HttpRequest::new("GET", "/", ""))?)
    };
    let first = touch("warm-up".into())?.wait();
    ensure!(first.status == 200, "the counter answered {}", first.status);
    rt.dev().hibernate_all();

    let before = status_kib("VmRSS")?;
    // Reset the peak (VmHWM) to now; not fatal where the kernel refuses it.
    let peak_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let start = std::time::Instant::now();
    let mut done = 0;
    while done < actors {
        let n = BATCH.min(actors - done);
        let pending = (done..done + n)
            .map(|i| touch(format!("m{i}")))
            .collect::<Result<Vec<_>>>()?;
        for p in pending {
            let answer = p.wait();
            ensure!(
                answer.status == 200,
                "a counter answered {}: {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            );
        }
        rt.dev().hibernate_all();
        done += n;
    }
    let took = start.elapsed();
    ensure!(
        rt.admin().resident_count() == 0,
        "actors are still resident after hibernate_all"
    );
    let after = status_kib("VmRSS")?;
    let peak = status_kib("VmHWM")?;
    let grown = after.saturating_sub(before);
    report.note(format!(
        "memory: RSS {:.1} MiB before, {:.1} MiB after touching {actors} counter actors once each (GET, so on-init \
         created each database) in batches of {BATCH}, hibernating after each batch; {:.0} bytes per actor; \
         {}; took {:.1} s",
        mib(before),
        mib(after),
        grown as f64 * 1024.0 / actors.max(1) as f64,
        if peak_reset {
            format!("peak while touching {:.1} MiB", mib(peak))
        } else {
            format!("peak of the process {:.1} MiB", mib(peak))
        },
        took.as_secs_f64()
    ));
    // Issue 25's targets: 200 MiB for 10,000, 300 MiB for 100,000.
    let target_mib = match actors {
        100_000 => 300.0,
        n => 200.0 * n as f64 / 10_000.0,
    };
    report.row(Row {
        figure: format!("RSS growth, {} hibernated actors", thousands(actors as f64)),
        shim: format!("{:.1} MiB", mib(grown)),
        baseline: format!(
            "{:.1} → {:.1} MiB; all touched in {:.1} s",
            mib(before),
            mib(after),
            took.as_secs_f64()
        ),
        ratio: "-".into(),
        target: format!("≤ {target_mib:.0} MiB"),
        met: met(mib(grown) <= target_mib),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_resident_set_and_a_proportional_share_of_it() {
        let rss = status_kib("VmRSS").expect("VmRSS");
        let pss = rollup_kib("Pss").expect("Pss");
        assert!(rss > 0 && pss > 0, "RSS {rss} KiB, PSS {pss} KiB");
        // Shared pages count in full in RSS, in part in PSS.
        assert!(pss <= rss + 64, "PSS {pss} KiB over RSS {rss} KiB");
        assert!(rollup_kib("NoSuchField").is_err());
    }
}
