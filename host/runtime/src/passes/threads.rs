//! The threads that drive the passes and timers: the epoch ticker that
//! interrupts guests, the control pass's and the alarm timer's.

use super::alarms::queue_due;
use super::control::control_pass;
use super::expiry::expiry_pass;
use crate::address::ActorKey;
use crate::node::Host;
use std::collections::HashMap;
use std::sync::{Arc, mpsc};
use std::time::Duration;
use tokio::sync::oneshot;
use wasmtime::Engine;

/// How often a cluster node runs its control pass (the host's clock).
pub const CONTROL_PASS_EVERY_MS: u64 = 1_000;
/// How often the collecting node runs an idle expiry pass (the host's clock).
pub const EXPIRY_PASS_EVERY_MS: u64 = 600_000;
/// Interrupts guests: every 10 ms the engine's epoch moves; an event's deadline counts in epochs.
///
/// # Errors
/// The system would not start its thread: without it no event's deadline
/// would ever trap, so the node does not start either.
pub(crate) fn start_epoch_ticker(engine: &Engine) -> std::io::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("epoch ticker".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(crate::guest_call::EPOCH_TICK);
            }
        })
        .map(drop)
}

/// Cluster, with the real clock: a control pass every second (operator
/// deletes), and an idle expiry pass every 10 minutes.
///
/// # Errors
/// The system would not start its thread: without it operator deletes and
/// idle expiry would never run here, so the node does not start either.
pub(crate) fn start_control_pass(host: &Arc<Host>) -> std::io::Result<()> {
    let weak = Arc::downgrade(host);
    // A real clock moves by itself: a pass each second. A virtual one moves
    // when told: look often, and run each pass when its interval of virtual
    // time has gone by (the same cadence, on the clock the host runs on).
    let real = host.clock().as_virtual().is_none();
    let look_every = if real {
        Duration::from_secs(1)
    } else {
        Duration::from_millis(20)
    };
    std::thread::Builder::new()
        .name("control pass".into())
        .spawn(move || {
            let mut last_control = 0u64;
            let mut last_expiry = 0u64;
            loop {
                std::thread::sleep(look_every);
                let Some(host) = weak.upgrade() else { return };
                let now = host.clock().now_ms();
                if real || now.saturating_sub(last_control) >= CONTROL_PASS_EVERY_MS {
                    last_control = now;
                    control_pass(&host);
                }
                if now.saturating_sub(last_expiry) >= EXPIRY_PASS_EVERY_MS {
                    last_expiry = now;
                    expiry_pass(&host);
                }
            }
        })
        .map(drop)
}

/// With the real clock: runs alarms when they come due.
///
/// # Errors
/// The system would not start its thread: without it no alarm would fire,
/// so the node does not start either.
pub(crate) fn start_alarm_timer(host: &Arc<Host>) -> std::io::Result<()> {
    let (tx, rx) = mpsc::channel::<()>();
    host.pass_book().set_timer_wake(tx);
    let weak = Arc::downgrade(host);
    std::thread::Builder::new()
        .name("alarm timer".into())
        .spawn(move || {
            // Alarm jobs are not waited for: one busy actor never holds up the others.
            let mut in_flight: HashMap<ActorKey, oneshot::Receiver<bool>> = HashMap::new();
            loop {
                let Some(host) = weak.upgrade() else { return };
                if host.is_stopping() {
                    return; // no alarm runs on a node that shut down
                }
                in_flight.retain(|_, rx| matches!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty)));
                let queued = queue_due(&host, &in_flight);
                in_flight.extend(queued);
                let now = host.clock().now_ms();
                // At least 50 ms between passes, so an entry that cannot run yet
                // (its actor busy, its removal pending) does not make the timer spin.
                let wait = match host.alarms().next_at() {
                    Ok(Some(at)) => Duration::from_millis(at.saturating_sub(now).clamp(50, 1000)),
                    _ => Duration::from_secs(1),
                };
                drop(host);
                match rx.recv_timeout(wait) {
                    Ok(()) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
        })
        .map(drop)
}
