//! `wasmkeep-bench`: the benchmark of the local host. Not a test: it prints
//! figures, ratios against baselines, and whether each target is met.
//!
//! ```text
//! cargo xtask guests
//! cargo run --release -p wasmkeep-bench
//! ```
//!
//! See `bench/README.md` for what each figure means. It exits 0 whatever the
//! figures are; non-zero only when the benchmark itself could not run.

mod fanout;
mod history;
mod http;
mod memory;
mod micro;
mod miniflare;
mod one_cpu;
mod report;
mod resident;
mod resident_sockets;
mod setup;
mod ts_memory;
mod ts_sdk;
mod wake;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::{Parser, ValueEnum};

use report::Report;

/// Which figures to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Figure {
    /// Requests/s of the counter over HTTP, against Miniflare.
    Http,
    /// Warm cost of one `exec` from the guest, against native rusqlite.
    Exec,
    /// Component load from the compiled cache.
    Load,
    /// `delete-self-durable` latency, against unlink + fsync of the directory.
    Delete,
    /// RSS of hibernated actors.
    Memory,
    /// RSS of 100 and 1,000 resident TypeScript counters, and their wake.
    TsMemory,
    /// Wake from hibernation of each language's counter.
    Wake,
    /// RSS, threads and p99 with 1,000 and 10,000 resident counters.
    Resident,
    /// RSS and p99 with 10,000 resident actors, each with one open WebSocket.
    Sockets,
    /// One actor broadcasting to 1,000 open WebSockets, in messages/s.
    Fanout,
    /// The TypeScript SDK's per-call costs inside each engine (the hot-path guest).
    TsSdk,
    /// A cluster actor's history (ADR 064): bytes a write puts, a read's
    /// cost on a large actor, the bucket after a collection, a takeover
    /// and a point-in-time restore of a 100 MB actor.
    History,
    /// Of the history part, only the single node's cost: the Rust
    /// counter's POST at one connection with history on and off.
    HistorySingle,
    /// Of the history part, only a read's cost on a 20 MB cluster actor
    /// against a one-row one.
    HistoryRead,
}

#[derive(Debug, Parser)]
#[command(
    name = "wasmkeep-bench",
    about = "Benchmark the wasmkeep local host (prints a report; not a test)"
)]
struct Args {
    /// Seconds measured per HTTP run (each method × connection count × host).
    #[arg(long, default_value_t = 3.0)]
    duration: f64,
    /// Rounds of the HTTP runs: each HTTP row gives the median over the
    /// rounds, and each ratio the median of the ratios within a round.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Seconds of warm-up before each HTTP run (not counted).
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// How many counter actors the memory figure touches and hibernates
    /// (comma-separated: one row each).
    #[arg(long, value_delimiter = ',', default_values_t = [10_000, 100_000])]
    actors: Vec<usize>,
    /// Measure only these figures (comma-separated); all by default.
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Vec<Figure>,
    /// Leave Miniflare out (the HTTP ratio is then reported as missing).
    #[arg(long)]
    no_miniflare: bool,
    /// The counter component [default: <target>/components/counter-rust.wasm, built if missing].
    #[arg(long)]
    counter: Option<PathBuf>,
    /// The TypeScript counter (examples/counter-ts) for extra HTTP rows
    /// [default: <target>/components/counter-ts.wasm (QuickJS, the default
    /// engine) and counter-ts-starlingmonkey.wasm, each when it exists; the
    /// setup builds them with `node sdk-ts/scripts/build-guests.js`].
    #[arg(long)]
    ts_counter: Option<PathBuf>,
    /// Leave the TypeScript counter out even when its component exists.
    #[arg(long, conflicts_with = "ts_counter")]
    no_ts_counter: bool,
    /// More TypeScript counters to measure beside it, each `label=<wasm>`
    /// (another engine or build of examples/counter-ts); repeatable.
    #[arg(long = "ts-variant", value_name = "LABEL=WASM")]
    ts_variants: Vec<String>,
    /// More builds of the TypeScript SDK's hot-path guest (sdk-ts/bench/hot-path.ts)
    /// for the ts-sdk rows, each `label=<wasm>` (e.g. built against an older SDK); repeatable.
    #[arg(long = "ts-sdk-variant", value_name = "LABEL=WASM")]
    ts_sdk_variants: Vec<String>,
    /// Leave the C and Python counters out (by default each is measured when
    /// <target>/components/counter-c.wasm or counter-py.wasm exists; the
    /// setup step builds them).
    #[arg(long)]
    no_other_counters: bool,
    /// Internal: measure one resident count in this process (`label|wasm|count`).
    #[arg(long, hide = true)]
    resident_child: Option<String>,
    /// Internal: serve resident bench guests whose sockets the parent opens (`wasm|count`).
    #[arg(long, hide = true)]
    socket_child: Option<String>,
    /// More buckets for the history part's takeover and restore rows, each a
    /// URL as `serve --bucket` takes (`s3://…`, `az://…`; credentials and
    /// endpoints from the environment, as `scripts/s3-server.sh` and
    /// `scripts/azurite-server.sh` print them); repeatable. A run-unique
    /// prefix is added below the URL's.
    #[arg(long = "history-bucket", value_name = "URL")]
    history_buckets: Vec<String>,
    /// The bench guest component [default: <target>/components/bench-guest.wasm, built if missing].
    #[arg(long)]
    bench_guest: Option<PathBuf>,
}

impl Args {
    fn wants(&self, f: Figure) -> bool {
        self.only.is_empty() || self.only.contains(&f)
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(spec) = &args.socket_child {
        return match resident_sockets::child(spec) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("wasmkeep-bench --socket-child failed: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(spec) = &args.resident_child {
        return match resident::child(spec) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("wasmkeep-bench --resident-child failed: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    match run(&args) {
        Ok(report) => {
            report.print();
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wasmkeep-bench failed: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<Report> {
    let paths = setup::Paths::find()?;
    let needs_counter = args.wants(Figure::Http) || args.wants(Figure::Load) || args.wants(Figure::Memory);
    let needs_guest = args.wants(Figure::Exec)
        || args.wants(Figure::Delete)
        || args.wants(Figure::Fanout)
        || args.wants(Figure::Sockets);
    let counter = match &args.counter {
        Some(p) => p.clone(),
        None if needs_counter => paths.component("counter-rust", "examples/counter-rust")?,
        None => PathBuf::new(),
    };
    let guest = match &args.bench_guest {
        Some(p) => p.clone(),
        None if needs_guest => paths.component("bench-guest", "bench/guest")?,
        None => PathBuf::new(),
    };
    let mut report = Report::new();
    report.note(format!(
        "machine: {} cores; shim {}; data in a temporary directory under {}",
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        wasmkeep_shim::VERSION,
        std::env::temp_dir().display()
    ));

    // Memory first: a process that has not yet run the other figures, so
    // their freed memory does not hide what the actors cost.
    if args.wants(Figure::Memory) {
        for &actors in &args.actors {
            eprintln!("== memory of {actors} hibernated actors");
            memory::run(&counter, actors, &mut report)?;
        }
    }
    if args.wants(Figure::History) {
        eprintln!("== history: page sets on a chain (one node over file://, the conformance testee)");
        let testee = paths.component("conformance-testee-rust", "conformance/testees/rust")?;
        let counter = paths.component("counter-rust", "examples/counter-rust")?;
        history::run(&testee, &counter, &args.history_buckets, &mut report)?;
    } else if args.wants(Figure::HistoryRead) {
        eprintln!("== history: a read on a 20 MB cluster actor against a one-row one");
        let testee = paths.component("conformance-testee-rust", "conformance/testees/rust")?;
        history::read_cost(&testee, &mut report)?;
    }
    if !args.wants(Figure::History) && args.wants(Figure::HistorySingle) {
        eprintln!("== history: a single node's cost (the Rust counter, history on and off)");
        let counter = paths.component("counter-rust", "examples/counter-rust")?;
        history::single_node_cost(&counter, &mut report)?;
    }
    if args.wants(Figure::Exec) {
        eprintln!("== exec: guest against native rusqlite");
        micro::exec(&guest, &mut report)?;
    }
    if args.wants(Figure::Load) {
        eprintln!("== component load from the compiled cache");
        micro::load(&counter, &mut report)?;
    }
    if args.wants(Figure::Delete) {
        eprintln!("== durable delete against unlink + fsync");
        micro::delete(&guest, &mut report)?;
    }
    if args.wants(Figure::Fanout) {
        eprintln!("== WebSocket fan-out: one actor to {} sockets", fanout::SOCKETS);
        fanout::run(&guest, &mut report)?;
    }
    if args.wants(Figure::Sockets) {
        eprintln!("== {} resident actors with a WebSocket each", resident_sockets::ACTORS);
        resident_sockets::run(&guest, resident_sockets::ACTORS, &mut report)?;
    }
    let ts_counters = ts_counters(args, &paths)?;
    if args.wants(Figure::Wake) {
        eprintln!("== wake from hibernation, per language");
        let mut wake_counters = vec![wake::WakeCounter {
            label: "counter-rust".into(),
            wasm: paths.component("counter-rust", "examples/counter-rust")?,
        }];
        for label in ["counter-c", "counter-py"] {
            let wasm = paths.components.join(format!("{label}.wasm"));
            if wasm.exists() && !args.no_other_counters {
                wake_counters.push(wake::WakeCounter {
                    label: label.into(),
                    wasm,
                });
            }
        }
        wake_counters.extend(ts_counters.iter().map(|c| wake::WakeCounter {
            label: c.label.clone(),
            wasm: c.wasm.clone(),
        }));
        wake::run(&wake_counters, &mut report)?;
    }
    if args.wants(Figure::Resident) {
        eprintln!("== many actors resident");
        let mut counters = vec![resident::ResidentCounter {
            label: "counter-rust".into(),
            wasm: paths.component("counter-rust", "examples/counter-rust")?,
            counts: vec![1_000, 10_000],
        }];
        for (label, counts) in [
            ("counter-c", vec![1_000, 10_000]),
            ("counter-ts", vec![1_000]),
            ("counter-py", vec![1_000]),
        ] {
            let wasm = paths.components.join(format!("{label}.wasm"));
            if wasm.exists() && !(label == "counter-ts" && args.no_ts_counter) {
                counters.push(resident::ResidentCounter {
                    label: label.into(),
                    wasm,
                    counts,
                });
            }
        }
        resident::run(&counters, &mut report)?;
    }
    if args.wants(Figure::TsSdk) {
        // Built with the TypeScript guests (`node sdk-ts/scripts/build-guests.js`).
        let mut guests: Vec<ts_sdk::HotPathGuest> = [
            ("quickjs", "sdk-ts-hot-path.wasm"),
            ("starlingmonkey", "sdk-ts-hot-path-starlingmonkey.wasm"),
        ]
        .into_iter()
        .map(|(label, file)| ts_sdk::HotPathGuest {
            label: label.into(),
            wasm: paths.components.join(file),
        })
        .filter(|g| g.wasm.exists())
        .collect();
        for v in &args.ts_sdk_variants {
            let (label, wasm) = v
                .split_once('=')
                .with_context(|| format!("--ts-sdk-variant {v:?}: give it as label=<wasm>"))?;
            let wasm = PathBuf::from(wasm);
            anyhow::ensure!(
                wasm.exists(),
                "--ts-sdk-variant {label}: no such file {}",
                wasm.display()
            );
            guests.push(ts_sdk::HotPathGuest {
                label: label.into(),
                wasm,
            });
        }
        ts_sdk::run(&guests, &mut report)?;
    }
    if args.wants(Figure::TsMemory) && !ts_counters.is_empty() {
        ts_memory::run(&ts_counters, &mut report)?;
    }
    if args.wants(Figure::Http) {
        eprintln!("== HTTP: the counter in the shim and in Miniflare");
        let plan = http::Plan {
            warmup: Duration::from_secs_f64(args.warmup.max(0.0)),
            duration: Duration::from_secs_f64(args.duration.max(0.1)),
            runs: args.runs.max(1),
        };
        let mut others = ts_counters;
        if !args.no_other_counters {
            for label in ["counter-c", "counter-py"] {
                let wasm = paths.components.join(format!("{label}.wasm"));
                if wasm.exists() {
                    others.push(http::OtherCounter {
                        label: label.into(),
                        wasm,
                    });
                }
            }
        }
        http::run(&paths, &counter, &others, plan, !args.no_miniflare, &mut report)?;
    }
    Ok(report)
}

/// The TypeScript counters: `--ts-counter` (or the built one), then each
/// `--ts-variant label=<wasm>`.
fn ts_counters(args: &Args, paths: &setup::Paths) -> Result<Vec<http::OtherCounter>> {
    let main = match &args.ts_counter {
        Some(p) => {
            anyhow::ensure!(p.exists(), "--ts-counter {}: no such file", p.display());
            Some(p.clone())
        }
        None if args.no_ts_counter => None,
        None => Some(paths.components.join("counter-ts.wasm")).filter(|p| p.exists()),
    };
    let mut out: Vec<http::OtherCounter> = main
        .map(|wasm| http::OtherCounter {
            label: "counter-ts".into(),
            wasm,
        })
        .into_iter()
        .collect();
    // The other engine beside the default (QuickJS), when the setup built it.
    let starlingmonkey = paths.components.join("counter-ts-starlingmonkey.wasm");
    if args.ts_counter.is_none() && !args.no_ts_counter && starlingmonkey.exists() {
        out.push(http::OtherCounter {
            label: "counter-ts (starlingmonkey)".into(),
            wasm: starlingmonkey,
        });
    }
    for v in &args.ts_variants {
        let (label, wasm) = v
            .split_once('=')
            .with_context(|| format!("--ts-variant {v:?}: give it as label=<wasm>"))?;
        let wasm = PathBuf::from(wasm);
        anyhow::ensure!(wasm.exists(), "--ts-variant {label}: no such file {}", wasm.display());
        out.push(http::OtherCounter {
            label: format!("counter-ts ({label})"),
            wasm,
        });
    }
    Ok(out)
}
