//! Distinct actor names, as fast as the connections can ask (hardening issue,
//! item 1: without a resident cap about 5,750 names aborted the host, and
//! with 1,024 descriptors about 340 stalled its accept loop).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use http_body_util::{BodyExt as _, Empty};
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::Target;
use crate::served::Served;

/// How one connection's requests were answered.
#[derive(Debug, Default)]
struct Tally {
    ok: u64,
    retry_later: u64,
    /// 503 without Retry-After, other statuses, broken connections, timeouts.
    wrong: u64,
    first_wrong: Option<String>,
}

impl Tally {
    fn wrong(&mut self, what: String) {
        self.wrong += 1;
        self.first_wrong.get_or_insert(what);
    }

    fn add(&mut self, other: Tally) {
        self.ok += other.ok;
        self.retry_later += other.retry_later;
        self.wrong += other.wrong;
        if self.first_wrong.is_none() {
            self.first_wrong = other.first_wrong;
        }
    }
}

/// A request that is not answered in this long counts as a failure.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

async fn connect(addr: SocketAddr) -> Result<Sender> {
    let stream = tokio::time::timeout(ANSWER_WITHIN, TcpStream::connect(addr))
        .await
        .context("connecting timed out")??;
    stream.set_nodelay(true)?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    Ok(sender)
}

async fn one(sender: &mut Sender, addr: SocketAddr, name: u64) -> Result<(StatusCode, bool)> {
    let request = Request::builder()
        .method("POST")
        .uri(format!("/counter/load-{name}"))
        .header(hyper::header::HOST, addr.to_string())
        .body(Empty::new())?;
    sender.ready().await?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let retry_after = response.headers().contains_key(hyper::header::RETRY_AFTER);
    response.into_body().collect().await?;
    Ok((status, retry_after))
}

async fn connection(addr: SocketAddr, next: Arc<AtomicU64>, names: u64) -> Tally {
    let mut tally = Tally::default();
    let mut sender: Option<Sender> = None;
    loop {
        let name = next.fetch_add(1, Ordering::Relaxed);
        if name >= names {
            return tally;
        }
        if sender.is_none() {
            match connect(addr).await {
                Ok(s) => sender = Some(s),
                Err(e) => {
                    tally.wrong(format!("load-{name}: cannot connect: {e:#}"));
                    continue;
                }
            }
        }
        let Some(s) = sender.as_mut() else { continue };
        match tokio::time::timeout(ANSWER_WITHIN, one(s, addr, name)).await {
            Ok(Ok((StatusCode::OK, _))) => tally.ok += 1,
            Ok(Ok((StatusCode::SERVICE_UNAVAILABLE, true))) => tally.retry_later += 1,
            Ok(Ok((status, _))) => tally.wrong(format!("load-{name}: answered {status}")),
            Ok(Err(e)) => {
                tally.wrong(format!("load-{name}: {e:#}"));
                sender = None;
            }
            Err(_) => {
                tally.wrong(format!("load-{name}: no answer within {ANSWER_WITHIN:?}"));
                sender = None;
            }
        }
    }
}

pub async fn run(target: &Target, names: u64, connections: usize) -> Result<()> {
    let mut served = Served::start(target).await?;
    let addr = served.addr;
    println!(
        "names: {names} distinct actors over {connections} connections to {addr}{}",
        target
            .nofile
            .map(|n| format!(" (serve under ulimit -n {n})"))
            .unwrap_or_default()
    );
    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..connections)
        .map(|_| tokio::spawn(connection(addr, next.clone(), names)))
        .collect();
    let mut tally = Tally::default();
    for t in tasks {
        tally.add(t.await?);
    }
    let elapsed = started.elapsed();
    let alive = served.alive();
    let peak = if alive { served.peak_rss_mib().ok() } else { None };
    println!(
        "names: {} answered 200, {} answered 503 with Retry-After, {} wrong, in {:.1} s ({:.0} req/s); host {}, peak RSS {}",
        tally.ok,
        tally.retry_later,
        tally.wrong,
        elapsed.as_secs_f64(),
        names as f64 / elapsed.as_secs_f64(),
        if alive { "up" } else { "DOWN" },
        peak.map_or_else(|| "unknown".into(), |p| format!("{p} MiB")),
    );
    if !alive {
        bail!("the host is down after the load");
    }
    if tally.wrong > 0 {
        bail!(
            "{} requests were not answered 200 or 503 with Retry-After; the first: {}",
            tally.wrong,
            tally.first_wrong.unwrap_or_default()
        );
    }
    // Still serving: an actor from the start of the run answers with its count.
    let mut s = connect(addr).await?;
    let (status, _) = one(&mut s, addr, 0).await?;
    if status != StatusCode::OK {
        bail!("after the load, an actor answers {status}");
    }
    if let Some(p) = peak
        && p > target.max_rss_mib
    {
        bail!("peak RSS {p} MiB is over {} MiB", target.max_rss_mib);
    }
    println!("names: ok");
    Ok(())
}
