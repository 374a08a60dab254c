//! An HTTP reverse proxy on 127.0.0.1 that breaks answers on purpose, put
//! between a node and its bucket's server (moto, Azurite) to test what the
//! host does when a bucket write's outcome is not known (issue 57).
//!
//! Every request is forwarded to the target unless a rule takes it. A rule
//! names a part of the request's path (a key prefix such as
//! `/cluster/nodes/`), optionally a method, what to do, and how often:
//!
//! - [`Fault::DropAnswer`]: the request is forwarded and its answer awaited
//!   (the write lands), then the connection is closed without an answer, as
//!   a connection that broke on the way back would be;
//! - [`Fault::Unavailable`]: answered `503 Service Unavailable` without
//!   forwarding (nothing lands).
//!
//! [`Times::Next`] takes the next N matching requests; [`Times::Percent`]
//! takes each with a probability, drawn from the proxy's seeded generator
//! (the same seed, the same draws in the same order of requests). The first
//! rule that matches and takes a request decides; the rest are forwarded.
//! Requests are HTTP/1.1, each forwarded on a connection of its own, with
//! their headers as they came (a signature over the `Host` header stays
//! valid).
//!
//! Only with the `fault-proxy` feature.

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// What a rule does to a request it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Forwarded, its answer awaited, then the connection closed without an
    /// answer: the request landed, the client does not know it.
    DropAnswer,
    /// Answered 503 without forwarding: nothing landed.
    Unavailable,
}

/// Which of the matching requests a rule takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Times {
    /// The next this many, then the rule is spent.
    Next(u32),
    /// Each with this probability (0 to 100), from the seeded generator.
    Percent(f64),
}

/// One rule: which requests, what to do, how often.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// A part the request's path must contain (the bucket and its prefix
    /// come first in a path-style S3 URL, so a key prefix with its leading
    /// `/` is what to name).
    pub path_contains: String,
    /// The method, if only one (`PUT`, say).
    pub method: Option<String>,
    /// What to do.
    pub fault: Fault,
    /// How often.
    pub times: Times,
}

impl Rule {
    /// Drops the answers to `percent` of the PUTs whose path contains `part`.
    pub fn drop_puts(part: &str, percent: f64) -> Self {
        Self {
            path_contains: part.to_owned(),
            method: Some("PUT".into()),
            fault: Fault::DropAnswer,
            times: Times::Percent(percent),
        }
    }

    /// Drops the answers to the next `count` PUTs whose path contains `part`.
    pub fn drop_next_puts(part: &str, count: u32) -> Self {
        Self {
            path_contains: part.to_owned(),
            method: Some("PUT".into()),
            fault: Fault::DropAnswer,
            times: Times::Next(count),
        }
    }
}

/// What the proxy did so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProxyCounts {
    /// Requests forwarded and answered.
    pub forwarded: u64,
    /// Requests forwarded whose answer was dropped.
    pub dropped: u64,
    /// Requests answered 503 without forwarding.
    pub unavailable: u64,
    /// Requests the target did not answer (answered 502).
    pub target_failed: u64,
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum FaultProxyError {
    /// Its runtime did not start.
    #[error("cannot start the fault proxy's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// It could not listen on 127.0.0.1.
    #[error("the fault proxy cannot listen on 127.0.0.1: {0}")]
    Listen(#[source] std::io::Error),
    /// The target is not `http://HOST:PORT`.
    #[error("the fault proxy's target {0:?} is not http://HOST:PORT")]
    Target(String),
}

/// What the proxy's connections share.
struct State {
    target: String,
    rules: Mutex<Vec<Rule>>,
    rng: Mutex<fastrand::Rng>,
    counts: Mutex<ProxyCounts>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl State {
    /// The fault of the first rule that takes a request for `method` `path`.
    fn fault_for(&self, method: &str, path: &str) -> Option<Fault> {
        let mut rules = lock(&self.rules);
        let mut taken = None;
        for (i, rule) in rules.iter_mut().enumerate() {
            if !path.contains(&rule.path_contains) || rule.method.as_deref().is_some_and(|m| m != method) {
                continue;
            }
            let takes = match &mut rule.times {
                Times::Next(0) => false,
                Times::Next(n) => {
                    *n -= 1;
                    true
                }
                Times::Percent(p) => lock(&self.rng).f64() * 100.0 < *p,
            };
            if takes {
                taken = Some((i, rule.fault));
                break;
            }
        }
        let (i, fault) = taken?;
        if rules[i].times == Times::Next(0) {
            rules.remove(i);
        }
        Some(fault)
    }
}

/// Why the proxy closes a connection without answering.
#[derive(Debug, thiserror::Error)]
#[error("the answer was dropped on purpose")]
struct Dropped;

/// A reverse proxy on 127.0.0.1 that breaks answers as its rules say; it
/// stops when dropped.
pub struct FaultProxy {
    addr: SocketAddr,
    state: Arc<State>,
    /// Runs the proxy; `Option` only so that `Drop` can take it.
    runtime: Option<tokio::runtime::Runtime>,
}

impl FaultProxy {
    /// A proxy on a free port of 127.0.0.1 in front of `target`
    /// (`http://HOST:PORT`), with no rules yet; `seed` seeds its draws.
    ///
    /// # Errors
    /// The target is not `http://HOST:PORT`, the runtime did not start, or
    /// no port could be bound.
    pub fn start(target: &str, seed: u64) -> Result<Self, FaultProxyError> {
        let authority = target
            .strip_prefix("http://")
            .map(|t| t.trim_end_matches('/'))
            .filter(|t| !t.is_empty() && !t.contains('/'))
            .ok_or_else(|| FaultProxyError::Target(target.to_owned()))?
            .to_owned();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fault-proxy")
            .enable_all()
            .build()
            .map_err(FaultProxyError::Runtime)?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .map_err(FaultProxyError::Listen)?;
        let addr = listener.local_addr().map_err(FaultProxyError::Listen)?;
        let state = Arc::new(State {
            target: authority,
            rules: Mutex::new(Vec::new()),
            rng: Mutex::new(fastrand::Rng::with_seed(seed)),
            counts: Mutex::new(ProxyCounts::default()),
        });
        let accepting = state.clone();
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let state = accepting.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
                    // A dropped answer ends the connection with an error: expected.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Self {
            addr,
            state,
            runtime: Some(runtime),
        })
    }

    /// `http://127.0.0.1:PORT`: where clients send what goes to the target.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Adds a rule after the others.
    pub fn add(&self, rule: Rule) {
        lock(&self.state.rules).push(rule);
    }

    /// Removes every rule: everything is forwarded from now.
    pub fn clear(&self) {
        lock(&self.state.rules).clear();
    }

    /// What the proxy did so far.
    pub fn counts(&self) -> ProxyCounts {
        *lock(&self.state.counts)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        // `Runtime`'s own drop blocks, which panics inside an async context.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// One request: taken by a rule, or forwarded.
async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Dropped> {
    let fault = state.fault_for(req.method().as_str(), req.uri().path());
    if fault == Some(Fault::Unavailable) {
        lock(&state.counts).unavailable += 1;
        return Ok(answer(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable on purpose (fault proxy)",
        ));
    }
    let forwarded = forward(&state.target, req).await;
    let mut counts = lock(&state.counts);
    match (forwarded, fault) {
        (Ok(_), Some(_)) => {
            counts.dropped += 1;
            Err(Dropped)
        }
        (Ok(response), None) => {
            counts.forwarded += 1;
            Ok(response)
        }
        (Err(e), _) => {
            counts.target_failed += 1;
            Ok(answer(
                StatusCode::BAD_GATEWAY,
                &format!("the fault proxy's target failed: {e}"),
            ))
        }
    }
}

fn answer(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())));
    *response.status_mut() = status;
    response
}

/// Sends `req` to `target` on a connection of its own, with its headers as
/// they came; the answer, its body read whole.
async fn forward(target: &str, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Box<dyn std::error::Error>> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await?.to_bytes();
    let stream = tokio::net::TcpStream::connect(target).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let response = sender.send_request(Request::from_parts(parts, Full::new(body))).await?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await?.to_bytes();
    Ok(Response::from_parts(parts, Full::new(body)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A target that answers every request `200 <method> <path>`.
    fn echo_target() -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let mut buf = [0u8; 4096];
                let n = conn.read(&mut buf).unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let line = head.lines().next().unwrap_or_default().to_owned();
                let mut words = line.split(' ');
                let said = format!("{} {}", words.next().unwrap_or(""), words.next().unwrap_or(""));
                lock(&log).push(said.clone());
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{said}",
                    said.len()
                );
            }
        });
        (url, seen)
    }

    /// One request through the proxy: the status and body, or `None` when
    /// the connection closed without an answer.
    fn send(proxy: &FaultProxy, method: &str, path: &str) -> Option<(u16, String)> {
        let mut conn = std::net::TcpStream::connect(proxy.addr).expect("connect");
        write!(
            conn,
            "{method} {path} HTTP/1.1\r\nhost: {}\r\ncontent-length: 1\r\nconnection: close\r\n\r\nx",
            proxy.addr
        )
        .expect("send");
        let mut got = String::new();
        let _ = conn.read_to_string(&mut got);
        let status = got.split(' ').nth(1)?.parse().ok()?;
        let body = got.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned();
        Some((status, body))
    }

    #[test]
    fn the_proxy_forwards_drops_answers_and_answers_503_as_its_rules_say() {
        let (target, seen) = echo_target();
        let proxy = FaultProxy::start(&target, 7).expect("proxy");
        assert_eq!(send(&proxy, "GET", "/b/k"), Some((200, "GET /b/k".into())), "forwarded");
        proxy.add(Rule::drop_next_puts("/cluster/", 2));
        proxy.add(Rule {
            path_contains: "/state/".into(),
            method: None,
            fault: Fault::Unavailable,
            times: Times::Next(1),
        });
        assert_eq!(send(&proxy, "PUT", "/b/cluster/nodes/n1"), None, "dropped");
        assert_eq!(
            send(&proxy, "GET", "/b/cluster/nodes/n1").map(|a| a.0),
            Some(200),
            "a GET is not"
        );
        assert_eq!(send(&proxy, "PUT", "/b/cluster/control"), None, "dropped again");
        assert_eq!(
            send(&proxy, "PUT", "/b/cluster/control").map(|a| a.0),
            Some(200),
            "the rule is spent"
        );
        assert_eq!(send(&proxy, "PUT", "/b/state/x").map(|a| a.0), Some(503));
        assert_eq!(send(&proxy, "PUT", "/b/state/x").map(|a| a.0), Some(200));
        let seen = lock(&seen).clone();
        assert_eq!(
            seen.iter().filter(|s| s.starts_with("PUT /b/cluster/")).count(),
            3,
            "the dropped answers' requests reached the target: {seen:?}"
        );
        assert_eq!(
            seen.iter().filter(|s| *s == "PUT /b/state/x").count(),
            1,
            "the 503 did not"
        );
        assert_eq!(
            proxy.counts(),
            ProxyCounts {
                forwarded: 4,
                dropped: 2,
                unavailable: 1,
                target_failed: 0
            }
        );
    }

    #[test]
    fn a_seeded_proxy_drops_about_the_share_it_was_told_and_the_same_ones_again() {
        let (target, _) = echo_target();
        let draws = |seed| {
            let proxy = FaultProxy::start(&target, seed).expect("proxy");
            proxy.add(Rule::drop_puts("/k", 30.0));
            (0..100)
                .map(|_| send(&proxy, "PUT", "/b/k").is_none())
                .collect::<Vec<bool>>()
        };
        let first = draws(1);
        let dropped = first.iter().filter(|d| **d).count();
        assert!((15..=45).contains(&dropped), "about 30 of 100: {dropped}");
        assert_eq!(first, draws(1), "the same seed drops the same requests");
    }

    #[test]
    fn a_target_that_is_not_a_plain_http_authority_is_refused() {
        for bad in ["https://127.0.0.1:1", "http://", "127.0.0.1:1", "http://h:1/path"] {
            assert!(
                matches!(FaultProxy::start(bad, 0), Err(FaultProxyError::Target(_))),
                "{bad}"
            );
        }
    }
}
