//! Many actors resident at once: this process's RSS and PSS growth and thread count
//! for 1,000 and 10,000 resident counters (Rust and C; TypeScript and
//! Python at 1,000), and how fast the other actors are still answered. A
//! resident actor holds a worker thread, a store with its instance, and
//! three open files (database, WAL, shm), so what stops the 10,000 run on a
//! machine (descriptors, memory maps) is reported, not hidden. Each count
//! runs in a process of its own (the bench run again with
//! `--resident-child`), so memory one run freed cannot hide what the next
//! one costs.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use wasmkeep_shim::{HttpRequest, Runtime};

use crate::memory::{mib, rollup_kib, status_kib};
use crate::report::{Met, Report, Row, met, thousands};
use crate::setup;

/// A counter to hold resident, and the counts to try.
pub struct ResidentCounter {
    pub label: String,
    pub wasm: std::path::PathBuf,
    pub counts: Vec<usize>,
}

/// Issue 25's target for 10,000 resident Rust actors (there with one open
/// WebSocket each; here without).
const TARGET_10K_MIB: f64 = 1024.0;
/// Actors touched at once.
const TOUCH_BATCH: usize = 100;
/// How long the actors wait after the last event before RSS and threads
/// are read: past the ten seconds after which an idle actor's database is
/// closed (its worker parks after one), with a margin for the idle sweep's
/// second and a loaded machine.
pub(crate) const IDLE_WAIT: std::time::Duration = std::time::Duration::from_millis(12_500);
/// Other actors answered while many are resident: p99 at most this.
const TARGET_P99_MS: f64 = 5.0;

/// p50 and p99 of 500 GETs spread over the resident actors `0..n`, in ms:
/// each to an actor that has been idle since it was touched.
fn latency_of_others(rt: &Runtime, n: usize) -> Result<(f64, f64)> {
    let mut took = Vec::with_capacity(500);
    for i in 0..500 {
        took.push(setup::get_counter(rt, &format!("r{}", (i * 7919) % n))?.as_secs_f64() * 1000.0);
    }
    took.sort_by(f64::total_cmp);
    Ok((took[took.len() / 2], took[took.len() * 99 / 100]))
}

/// What a child prints before each field of its row or note.
const ROW: &str = "resident-row\t";
const NOTE: &str = "resident-note\t";

/// Runs each counter at each count in a child process and adds its row.
pub fn run(counters: &[ResidentCounter], report: &mut Report) -> Result<()> {
    let exe = std::env::current_exe().context("finding this benchmark's executable")?;
    for c in counters {
        for &n in &c.counts {
            eprintln!("== resident: {} × {}", thousands(n as f64), c.label);
            let out = std::process::Command::new(&exe)
                .arg("--resident-child")
                .arg(format!("{}|{}|{n}", c.label, c.wasm.display()))
                .stderr(std::process::Stdio::inherit())
                .output()
                .context("running the resident child")?;
            let text = String::from_utf8_lossy(&out.stdout);
            let mut got_row = false;
            for line in text.lines() {
                if let Some(fields) = line.strip_prefix(ROW) {
                    let f: Vec<&str> = fields.split('\t').collect();
                    ensure!(f.len() == 5, "a resident child printed {line:?}");
                    report.row(Row {
                        figure: f[0].into(),
                        shim: f[1].into(),
                        baseline: f[2].into(),
                        ratio: "-".into(),
                        target: f[3].into(),
                        met: match f[4] {
                            "yes" => Met::Yes,
                            "no" => Met::No,
                            _ => Met::Unknown,
                        },
                    });
                    got_row = true;
                } else if let Some(note) = line.strip_prefix(NOTE) {
                    report.note(note.to_owned());
                }
            }
            if !got_row {
                report.note(format!(
                    "resident {} × {n}: the child process gave no figure ({})",
                    c.label, out.status
                ));
            }
        }
    }
    report.note(
        "resident: RSS growth and new threads of a fresh process after a GET to each of N counters, all kept \
         resident (max_resident = N + 16, idle 1 h), read 12.5 s after the last GET (idle), and also just after it; \
         PSS growth at the same idle point (a page mapped N times counts 1/N: the component's memory image, mapped \
         copy-on-write into every instance's slot, counts once, where RSS counts it once per instance; the target \
         is on RSS); p50 and p99 of 500 GETs to resident ones after that, each to an actor idle since"
            .to_owned(),
    );
    Ok(())
}

/// The child's side: `spec` is `label|wasm|count`; prints one row (and any
/// note) for the parent.
pub fn child(spec: &str) -> Result<()> {
    let mut parts = spec.splitn(3, '|');
    let (Some(label), Some(wasm), Some(n)) = (parts.next(), parts.next(), parts.next()) else {
        anyhow::bail!("--resident-child {spec:?}: give label|wasm|count");
    };
    let n: usize = n.parse().with_context(|| format!("--resident-child: count {n:?}"))?;
    raise_open_files(n);
    let cache = tempfile::Builder::new()
        .prefix("wasmkeep-bench-resident-cache-")
        .tempdir()
        .context("creating a temporary directory")?;
    let (row, note) = one(label, Path::new(wasm), cache.path(), n)?;
    let met = match row.met {
        Met::Yes => "yes",
        Met::No => "no",
        Met::Unknown => "n/a",
    };
    println!(
        "{ROW}{}\t{}\t{}\t{}\t{met}",
        row.figure, row.shim, row.baseline, row.target
    );
    if let Some(note) = note {
        println!("{NOTE}{note}");
    }
    Ok(())
}

/// Lets this process hold `n` resident actors' files (a database and its
/// WAL each) with room for as many sockets: raises the open-files limit, the
/// hard one too where the user may (root), as an operator would for a host
/// of that size (`LimitNOFILE=`). Where it cannot, the row stops where the
/// limit does and says so.
pub(crate) fn raise_open_files(n: usize) {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let wanted = u64::try_from(n)
        .unwrap_or(u64::MAX)
        .saturating_mul(4)
        .saturating_add(4096);
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|c| c >= wanted) {
        return;
    }
    let raised = Rlimit {
        current: Some(wanted),
        maximum: Some(wanted.max(limit.maximum.unwrap_or(0))),
    };
    if setrlimit(Resource::Nofile, raised).is_err() {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            },
        );
    }
}

/// Holds `n` counters resident in this process and measures it.
fn one(label: &str, wasm: &Path, cache: &Path, n: usize) -> Result<(Row, Option<String>)> {
    let (rt, _dir) = setup::resident_runtime(wasm, cache, Some(n))?;
    setup::get_counter(&rt, "warm-up")?;
    rt.dev().hibernate_all();
    let rss_before = status_kib("VmRSS")?;
    let pss_before = rollup_kib("Pss")?;
    let threads_before = status_kib("Threads").unwrap_or(0);
    let started = Instant::now();
    // Touched 100 at a time: creating an actor's database waits on the
    // disk, and one at a time 10,000 of them took minutes.
    let mut stopped = None;
    'touch: for from in (0..n).step_by(TOUCH_BATCH) {
        let batch: Vec<_> = (from..n.min(from + TOUCH_BATCH))
            .map(|i| {
                (
                    i,
                    rt.request(
                        &setup::key("counter", format!("r{i}")),
                        HttpRequest::new("GET", "/", ""),
                    ),
                )
            })
            .collect();
        for (i, pending) in batch {
            let answer = match pending {
                Ok(p) => p.wait(),
                Err(e) => {
                    stopped = Some((i, anyhow::Error::from(e)));
                    break 'touch;
                }
            };
            if answer.status != 200 {
                let e = anyhow::anyhow!(
                    "r{i} answered {}: {}",
                    answer.status,
                    String::from_utf8_lossy(&answer.body)
                );
                stopped = Some((i, e));
                break 'touch;
            }
        }
    }
    let touched = stopped.as_ref().map_or(n, |(i, _)| *i);
    let took = started.elapsed();
    let busy = mib(status_kib("VmRSS")?.saturating_sub(rss_before));
    // Then idle, as a chat room's actor is between messages: after a second
    // without an event a resident actor's worker gives back its thread (ADR
    // 044), and after ten its database is closed (ADR 045).
    std::thread::sleep(IDLE_WAIT);
    let grown = mib(status_kib("VmRSS")?.saturating_sub(rss_before));
    let pss_grown = mib(rollup_kib("Pss")?.saturating_sub(pss_before));
    let threads = status_kib("Threads").unwrap_or(0).saturating_sub(threads_before);
    let resident = rt.admin().resident_count();
    let (p50, p99) = if touched > 0 {
        latency_of_others(&rt, touched)?
    } else {
        (f64::NAN, f64::NAN)
    };
    let (target, is_met) = match (label, n) {
        ("counter-rust", 10_000) => (
            format!("≤ {TARGET_10K_MIB:.0} MiB, p99 ≤ {TARGET_P99_MS:.0} ms"),
            met(stopped.is_none() && grown <= TARGET_10K_MIB && p99 <= TARGET_P99_MS),
        ),
        _ => ("- (reported)".to_owned(), Met::Unknown),
    };
    let row = Row {
        figure: format!("{} resident {label}", thousands(n as f64)),
        shim: match &stopped {
            None => format!(
                "+{grown:.1} MiB idle ({:.0} KiB each; PSS +{pss_grown:.1} MiB, {:.0} KiB each; +{busy:.1} MiB just \
                 after the last event), {threads} threads, p50 {p50:.2} ms, p99 {p99:.2} ms",
                grown * 1024.0 / n as f64,
                pss_grown * 1024.0 / n as f64
            ),
            Some((i, _)) => format!(
                "stopped at {} (+{grown:.1} MiB idle, PSS +{pss_grown:.1} MiB, +{busy:.1} MiB just after the last \
                 event, {threads} threads)",
                thousands(*i as f64)
            ),
        },
        baseline: format!("{resident} resident; touched in {:.1} s", took.as_secs_f64()),
        ratio: "-".into(),
        target,
        met: is_met,
    };
    let note = stopped.map(|(i, e)| format!("resident {label}: actor {i} of {n} failed: {e:#}"));
    Ok((row, note))
}
