//! One client floods one actor's WebSocket and reads nothing back (hardening
//! issue, item 5: the host buffered the whole flood, 250 MiB in 0.6 s).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use futures_util::SinkExt as _;
use tokio_tungstenite::tungstenite::Message;

use crate::Target;
use crate::served::Served;

/// The whole flood must be through in this long.
const FLOOD_WITHIN: Duration = Duration::from_secs(600);

pub async fn run(target: &Target, class: &str, mib: u64, message_kib: usize, max_growth_mib: u64) -> Result<()> {
    let served = Served::start(target).await?;
    let url = format!("ws://{}/{class}/flood", served.addr);
    let (mut socket, _) = tokio_tungstenite::connect_async(&url)
        .await
        .with_context(|| format!("opening {url}"))?;
    // The actor is resident and its socket open before the baseline is taken.
    socket.send(Message::Text("hello".into())).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let baseline = served.rss_mib()?;
    let pid_served = Arc::new(served);
    let peak = Arc::new(AtomicU64::new(baseline));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (served, peak, done) = (pid_served.clone(), peak.clone(), done.clone());
        tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                if let Ok(now) = served.rss_mib() {
                    peak.fetch_max(now, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let message = "z".repeat(message_kib * 1024);
    let messages = (mib * 1024).div_ceil(message_kib as u64);
    println!(
        "ws-flood: {mib} MiB as {messages} text messages of {message_kib} KiB to {url}, reading nothing; RSS before {baseline} MiB"
    );
    let started = Instant::now();
    let sent = tokio::time::timeout(FLOOD_WITHIN, async {
        for _ in 0..messages {
            socket.send(Message::Text(message.clone().into())).await?;
        }
        socket.flush().await?;
        anyhow::Ok(())
    })
    .await;
    let elapsed = started.elapsed();
    done.store(true, Ordering::Relaxed);
    let _ = sampler.await;
    let peak = peak.load(Ordering::Relaxed);
    let growth = peak.saturating_sub(baseline);
    let mut served = Arc::into_inner(pid_served).context("the sampler still holds the host")?;
    let alive = served.alive();
    println!(
        "ws-flood: sent in {:.1} s ({:.0} MiB/s); peak RSS {peak} MiB, growth {growth} MiB; host {}",
        elapsed.as_secs_f64(),
        mib as f64 / elapsed.as_secs_f64(),
        if alive { "up" } else { "DOWN" }
    );
    match sent {
        Ok(Ok(())) => {}
        // A host that closes a flooding socket (1008/1009) is within its rights.
        Ok(Err(e)) => println!("ws-flood: the host ended the flood: {e:#}"),
        Err(_) => bail!("the flood was not through within {FLOOD_WITHIN:?}"),
    }
    if !alive {
        bail!("the host is down after the flood");
    }
    if growth > max_growth_mib {
        bail!("the host's memory grew {growth} MiB, over {max_growth_mib} MiB");
    }
    println!("ws-flood: ok");
    Ok(())
}
