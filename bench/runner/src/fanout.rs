//! WebSocket fan-out: one actor broadcasting to many open sockets, in
//! messages delivered per second (issue 25: the chat room per actor).
//!
//! The bench guest's `broadcast <k> <bytes>` sends `k` messages to each of
//! its open sockets in one event; this counts them as the clients read them.

use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use futures_util::{SinkExt as _, StreamExt as _};
use tokio_tungstenite::tungstenite::Message;

use crate::report::{Report, Row, met, thousands};
use crate::setup;

/// Sockets open on the one actor.
pub const SOCKETS: usize = 1_000;
/// Messages each socket receives per round.
const PER_SOCKET: u64 = 100;
/// Bytes in each message (distinct from the `count` answer's few digits).
const MESSAGE_BYTES: usize = 16;
/// Rounds measured; the row gives their median.
const ROUNDS: u64 = 3;
/// A round that has not delivered everything by then fails the figure.
const ROUND_LIMIT: Duration = Duration::from_secs(120);
/// Issue 25's target, messages delivered per second.
const TARGET: f64 = 100_000.0;

pub fn run(guest: &Path, report: &mut Report) -> Result<()> {
    let (rt, _dir) = setup::runtime("bench", guest)?;
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    let rates = tokio_rt.block_on(async {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let app = wasmkeep_shim::server::router(rt.clone(), setup::APP.to_owned());
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let result = measure(&format!("ws://{addr}/bench/fanout")).await;
        server.abort();
        result
    })?;
    rt.dev().hibernate_all();
    let mut sorted = rates.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    report.note(format!(
        "fan-out: {SOCKETS} WebSockets open on one actor (bench guest), {ROUNDS} rounds of one `broadcast` event \
         sending {PER_SOCKET} messages of {MESSAGE_BYTES} bytes to each socket; timed from the command's send to the \
         last message read by the clients (in this process, over 127.0.0.1); rounds: {}",
        rates
            .iter()
            .map(|r| format!("{}/s", thousands(*r)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    report.row(Row {
        figure: format!("WebSocket fan-out, one actor to {} sockets", thousands(SOCKETS as f64)),
        shim: format!("{} messages/s", thousands(median)),
        baseline: "-".into(),
        ratio: "-".into(),
        target: format!("≥ {} messages/s", thousands(TARGET)),
        met: met(median >= TARGET),
    });
    Ok(())
}

/// Opens the sockets, waits until the actor has seen them all, then times
/// each round's broadcast until every message is read.
async fn measure(url: &str) -> Result<Vec<f64>> {
    let delivered = Arc::new(AtomicU64::new(0));
    let mut commander = None;
    let mut answers = None;
    // The other sockets' sending halves, kept so the sockets stay open.
    let mut quiet = Vec::with_capacity(SOCKETS);
    let mut readers = Vec::with_capacity(SOCKETS);
    for i in 0..SOCKETS {
        let (socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .with_context(|| format!("opening socket {} of {SOCKETS} to {url}", i + 1))?;
        let (sink, mut stream) = socket.split();
        if i == 0 {
            commander = Some(sink);
            let (answers_tx, answers_rx) = tokio::sync::mpsc::unbounded_channel();
            let delivered = delivered.clone();
            readers.push(tokio::spawn(async move {
                while let Some(Ok(m)) = stream.next().await {
                    if let Message::Text(t) = m {
                        if t.len() == MESSAGE_BYTES {
                            delivered.fetch_add(1, Ordering::Relaxed);
                        } else {
                            let _ = answers_tx.send(t.to_string());
                        }
                    }
                }
            }));
            answers = Some(answers_rx);
        } else {
            quiet.push(sink);
            let delivered = delivered.clone();
            readers.push(tokio::spawn(async move {
                while let Some(Ok(m)) = stream.next().await {
                    if matches!(&m, Message::Text(t) if t.len() == MESSAGE_BYTES) {
                        delivered.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }));
        }
    }
    let mut commander = commander.context("no socket opened")?;
    let mut answers = answers.context("no socket opened")?;
    // The opens are events of their own: wait until the actor counts every socket.
    let started = Instant::now();
    loop {
        commander.send(Message::Text("count".into())).await?;
        let n: usize = answers
            .recv()
            .await
            .context("the first socket closed")?
            .trim()
            .parse()
            .context("the count's answer")?;
        if n == SOCKETS {
            break;
        }
        ensure!(
            started.elapsed() < ROUND_LIMIT,
            "the actor counts {n} open sockets of {SOCKETS}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let per_round = PER_SOCKET * SOCKETS as u64;
    let mut rates = Vec::new();
    for round in 1..=ROUNDS {
        let target = per_round * round;
        let sent = Instant::now();
        commander
            .send(Message::Text(format!("broadcast {PER_SOCKET} {MESSAGE_BYTES}").into()))
            .await?;
        while delivered.load(Ordering::Relaxed) < target {
            if sent.elapsed() > ROUND_LIMIT {
                bail!(
                    "round {round}: {} of {per_round} messages read after {} s",
                    delivered.load(Ordering::Relaxed) - per_round * (round - 1),
                    ROUND_LIMIT.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        rates.push(per_round as f64 / sent.elapsed().as_secs_f64());
    }
    for r in readers {
        r.abort();
    }
    drop(quiet);
    Ok(rates)
}
