//! Requests/s of the counter over HTTP: the shim's dev server in this process
//! against the same counter as a SQLite-backed Durable Object in Miniflare,
//! both driven by the same keep-alive load generator on 127.0.0.1.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use http_body_util::{BodyExt as _, Empty};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::miniflare;
use crate::report::{Met, Report, Row, met, ratio, thousands};
use crate::setup::{self, Paths};

/// How long each run warms up and is measured.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub warmup: Duration,
    pub duration: Duration,
}

/// The runs, in order: method and concurrent connections.
const CASES: [(&str, usize); 4] = [("GET", 1), ("GET", 8), ("POST", 1), ("POST", 8)];

/// The counter every run goes to, on both hosts (`/<class>/<name>`).
const PATH: &str = "/counter/bench";

/// The target: the shim serves at least this many times Miniflare's requests/s.
const TARGET_RATIO: f64 = 10.0;
/// The TypeScript counter's target (the TS engine issue).
const TS_TARGET_RATIO: f64 = 3.0;

/// One run's outcome.
#[derive(Debug, Clone)]
struct Load {
    /// Answered requests per second in the measured window.
    rps: f64,
    /// Latency percentiles (µs) in the measured window.
    p50_us: f64,
    p99_us: f64,
    /// Requests answered 200, warm-up included.
    answered: u64,
}

/// What one connection did.
struct ConnStats {
    counted: u64,
    answered: u64,
    latencies_us: Vec<u32>,
}

async fn connection(addr: SocketAddr, method: Method, warm_end: Instant, end: Instant) -> Result<ConnStats> {
    let stream = TcpStream::connect(addr)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    stream.set_nodelay(true)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(stream)).await?;
    let driver = tokio::spawn(conn);
    let host = addr.to_string();
    let mut stats = ConnStats {
        counted: 0,
        answered: 0,
        latencies_us: Vec::new(),
    };
    loop {
        let sent = Instant::now();
        if sent >= end {
            break;
        }
        let request = Request::builder()
            .method(method.clone())
            .uri(PATH)
            .header(hyper::header::HOST, host.as_str())
            .body(Empty::new())?;
        sender.ready().await.context("the connection closed")?;
        let response = sender.send_request(request).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        if status != StatusCode::OK {
            bail!("{method} {PATH} answered {status}: {}", String::from_utf8_lossy(&body));
        }
        stats.answered += 1;
        if sent >= warm_end {
            stats.counted += 1;
            stats
                .latencies_us
                .push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
        }
    }
    drop(sender);
    let _ = driver.await;
    Ok(stats)
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    f64::from(sorted[i.min(sorted.len() - 1)])
}

/// `conns` keep-alive connections sending `method` one request at a time each.
async fn load(addr: SocketAddr, method: &str, conns: usize, plan: Plan) -> Result<Load> {
    let method = Method::from_bytes(method.as_bytes())?;
    let start = Instant::now();
    let warm_end = start + plan.warmup;
    let end = warm_end + plan.duration;
    let tasks: Vec<_> = (0..conns)
        .map(|_| tokio::spawn(connection(addr, method.clone(), warm_end, end)))
        .collect();
    let (mut counted, mut answered, mut latencies) = (0, 0, Vec::new());
    for t in tasks {
        let s = t.await??;
        counted += s.counted;
        answered += s.answered;
        latencies.extend(s.latencies_us);
    }
    latencies.sort_unstable();
    Ok(Load {
        rps: counted as f64 / plan.duration.as_secs_f64(),
        p50_us: percentile(&latencies, 0.5),
        p99_us: percentile(&latencies, 0.99),
        answered,
    })
}

/// The counter's value, read with one GET.
async fn count(addr: SocketAddr) -> Result<u64> {
    let stream = TcpStream::connect(addr).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(stream)).await?;
    let driver = tokio::spawn(conn);
    let request = Request::builder()
        .uri(PATH)
        .header(hyper::header::HOST, addr.to_string())
        .body(Empty::new())?;
    let body = sender
        .send_request(request)
        .await?
        .into_body()
        .collect()
        .await?
        .to_bytes();
    drop(sender);
    let _ = driver.await;
    let text = String::from_utf8_lossy(&body);
    text.trim()
        .parse()
        .with_context(|| format!("the counter answered {text:?}"))
}

/// Every case against `addr`, then checks that the counter counted every POST.
async fn measure_all(who: &str, addr: SocketAddr, plan: Plan) -> Result<Vec<Load>> {
    let mut out = Vec::new();
    let mut posts = 0;
    for (method, conns) in CASES {
        let l = load(addr, method, conns, plan)
            .await
            .with_context(|| format!("{who}: {method} with {conns} connections"))?;
        eprintln!(
            "  {who:<10} {method:<4} {conns} conn: {:>9.0} req/s  p50 {:>7.0} µs  p99 {:>7.0} µs",
            l.rps, l.p50_us, l.p99_us
        );
        if method == "POST" {
            posts += l.answered;
        }
        out.push(l);
    }
    let n = count(addr).await?;
    ensure!(
        n == posts,
        "{who}: the counter says {n} after {posts} POSTs answered 200"
    );
    Ok(out)
}

/// Every case against `counter` served by the shim's dev server in this process.
fn measure_shim(tokio_rt: &tokio::runtime::Runtime, who: &str, counter: &Path, plan: Plan) -> Result<Vec<Load>> {
    let (rt, _dir) = setup::runtime("counter", counter)?;
    let loads = tokio_rt.block_on(async {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let app = wasmkeep_shim::server::router(rt.clone(), setup::APP.to_owned());
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let result = measure_all(who, addr, plan).await;
        server.abort();
        result
    })?;
    rt.dev().hibernate_all();
    Ok(loads)
}

/// A counter in another language, measured beside the Rust one: its label
/// (`counter-ts`, `counter-c`, `counter-py`) and its component.
pub struct OtherCounter {
    /// The row label.
    pub label: String,
    /// The built component.
    pub wasm: std::path::PathBuf,
}

pub fn run(
    paths: &Paths,
    counter: &Path,
    others: &[OtherCounter],
    plan: Plan,
    with_miniflare: bool,
    report: &mut Report,
) -> Result<()> {
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    let shim = measure_shim(&tokio_rt, "shim", counter, plan)?;
    // The other languages' counters, same server and cases. The first load
    // compiles the component (StarlingMonkey or componentize-py: 12-18 MB,
    // tens of seconds); the warm-up runs after that, so it is not measured.
    let mut other_loads = Vec::new();
    for o in others {
        let started = Instant::now();
        let loads = measure_shim(&tokio_rt, &format!("shim {}", o.label), &o.wasm, plan)
            .with_context(|| format!("the counter {}", o.wasm.display()))?;
        report.note(format!(
            "{}: {} ({:.1} MiB), its runs took {:.0} s including the first compile",
            o.label,
            o.wasm
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            std::fs::metadata(&o.wasm).map_or(0.0, |m| m.len() as f64 / 1_048_576.0),
            started.elapsed().as_secs_f64()
        ));
        other_loads.push((o.label.clone(), loads));
    }

    // The floor: the same load generator against a handler that answers a
    // constant in this process, no actor. No host can beat it here; at one
    // connection it bounds the ratio any host could reach against Miniflare.
    let floor = tokio_rt.block_on(async {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let app = axum::Router::new().route(PATH, axum::routing::get(|| async { "0" }));
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let mut out = Vec::new();
        for conns in [1, 8] {
            out.push((conns, load(addr, "GET", conns, plan).await?));
        }
        server.abort();
        anyhow::Ok(out)
    })?;

    let miniflare: Result<Vec<Load>, String> = if with_miniflare {
        match miniflare::start(&paths.root) {
            Ok(mf) => {
                report.note(format!(
                    "Miniflare {} on node {} (workerd from npm), Durable Object with ctx.storage.sql, persisted to a \
                     temporary directory",
                    mf.version, mf.node
                ));
                let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, mf.port));
                let result = tokio_rt.block_on(measure_all("miniflare", addr, plan));
                let how = mf.stop();
                report.note(format!("Miniflare stopped: {how}"));
                result.map_err(|e| format!("the load against Miniflare failed: {e:#}"))
            }
            Err(why) => Err(why),
        }
    } else {
        Err("left out with --no-miniflare".into())
    };
    if let Err(why) = &miniflare {
        report.note(format!("no HTTP ratio: Miniflare could not be measured: {why}"));
    }
    for (conns, l) in &floor {
        let bound = match &miniflare {
            Ok(mf) => {
                let i = if *conns == 1 { 0 } else { 1 };
                format!(
                    ", {} Miniflare's GET: the most any host could reach here",
                    ratio(l.rps, mf[i].rps)
                )
            }
            Err(_) => String::new(),
        };
        report.note(format!(
            "HTTP floor, GET {conns} conn: a constant answer with no actor, same server stack and load generator: {}/s (p50 {:.0} µs){bound}",
            thousands(l.rps),
            l.p50_us
        ));
    }
    report.note(format!(
        "HTTP: {} s measured after {} s of warm-up per run; every connection keep-alive, one request at a time, all \
         to one counter ({PATH}); the shim's dev server runs in this process",
        plan.duration.as_secs_f64(),
        plan.warmup.as_secs_f64()
    ));
    for (i, (method, conns)) in CASES.iter().enumerate() {
        let s = &shim[i];
        let (baseline, r, m) = match &miniflare {
            Ok(mf) => {
                let b = mf[i].rps;
                (
                    format!("Miniflare {}/s", thousands(b)),
                    ratio(s.rps, b),
                    met(s.rps >= TARGET_RATIO * b),
                )
            }
            Err(_) => ("Miniflare: missing (see notes)".into(), "n/a".into(), Met::Unknown),
        };
        report.row(Row {
            figure: format!("HTTP {method} counter, {conns} conn"),
            shim: format!("{}/s (p50 {:.0} µs)", thousands(s.rps), s.p50_us),
            baseline,
            ratio: r,
            target: format!("≥ {TARGET_RATIO:.0}× Miniflare"),
            met: m,
        });
    }
    // The other counters' rows: the same ratio, no target of their own.
    for ((label, loads), (i, (method, conns))) in other_loads
        .iter()
        .flat_map(|o| CASES.iter().enumerate().map(move |c| (o, c)))
    {
        let s = &loads[i];
        // TypeScript has a target of its own (the TS engine issue): 3× Miniflare.
        let ts = label.starts_with("counter-ts");
        let (baseline, r, m) = match &miniflare {
            Ok(mf) => (
                format!("Miniflare {}/s", thousands(mf[i].rps)),
                ratio(s.rps, mf[i].rps),
                if ts {
                    met(s.rps >= TS_TARGET_RATIO * mf[i].rps)
                } else {
                    Met::Unknown
                },
            ),
            Err(_) => ("Miniflare: missing (see notes)".into(), "n/a".into(), Met::Unknown),
        };
        report.row(Row {
            figure: format!("HTTP {method} {label}, {conns} conn"),
            shim: format!("{}/s (p50 {:.0} µs)", thousands(s.rps), s.p50_us),
            baseline,
            ratio: r,
            target: if ts {
                format!("≥ {TS_TARGET_RATIO:.0}× Miniflare")
            } else {
                "- (reported)".into()
            },
            met: m,
        });
    }
    Ok(())
}
