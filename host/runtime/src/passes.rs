//! The node's own passes and timers: the control pass (app tombstones,
//! heartbeats, operator delete requests), idle expiry, app stop, alarms and
//! the epoch ticker that interrupts guests.

use crate::address::ActorKey;
use crate::job::{GuestEvent, HostJob, Job, WorkerJob};
use crate::node::Host;
use std::collections::HashMap;
use std::sync::{Arc, mpsc};
use std::time::Duration;
use tokio::sync::oneshot;
use wasmtime::Engine;

/// What one idle expiry pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpiryPass {
    /// Released records older than their class's limit.
    pub candidates: usize,
    /// Actors deleted.
    pub expired: usize,
}

/// How often a cluster node runs its control pass (the host's clock).
pub const CONTROL_PASS_EVERY_MS: u64 = 1_000;
/// How often the collecting node runs an idle expiry pass (the host's clock).
pub const EXPIRY_PASS_EVERY_MS: u64 = 600_000;
/// At most this many expiries per pass ...
pub const EXPIRIES_PER_PASS: usize = 100;
/// ... and this many at a time.
pub const EXPIRIES_AT_ONCE: usize = 4;

/// Cluster: stops serving `app` here because its tombstone was seen
/// (ADR 0028 §5): no more guest code; events still queued answered at
/// once; running ones finish; sockets closed with 1001; alarms stopped;
/// actors released; the heartbeat and the node's local files of the app
/// removed; then the app is unloaded.
pub(crate) fn stop_app(host: &Arc<Host>, app: &str) {
    host.stops().stop_app(app);
    tracing::warn!(app = %app, "the app was deleted (tombstone): this node stops serving it");
    host.close_sockets_where(|k| k.app == app, 1001, "going away");
    hibernate_where(host, |k| k.app == app);
    // What is left behind here is only tidiness: the app is stopped either
    // way, and its actors' state is the bucket's (the tombstone's).
    match host.alarms().due(u64::MAX) {
        Ok(due) => {
            for (k, _) in due.into_iter().filter(|(k, _)| k.app == app) {
                if let Err(e) = host.alarms().remove(&k) {
                    tracing::warn!(actor = %k, "forgetting the stopped app's alarm: {e}");
                }
            }
        }
        Err(e) => tracing::warn!(app = %app, "listing the stopped app's alarms to forget them: {e}"),
    }
    if let Some(c) = host.cluster() {
        host.pass_book().forget_served(app);
        if let Err(e) = c.records_bucket().delete(&crate::keys::heartbeat(app, &c.node)) {
            tracing::warn!(app = %app, "deleting this node's heartbeat of the stopped app: {e}");
        }
    }
    let mut dir = host.config().data_dir.join("state");
    for part in app.split('/') {
        dir.push(part);
    }
    if let Err(e) = std::fs::remove_dir_all(&dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(app = %app, "removing {}: {e}", dir.display());
    }
    host.apps().remove(app);
}

/// Hibernates every resident actor `which` picks, after its queued jobs,
/// and waits for all of them (a worker that panicked counts as done).
pub(crate) fn hibernate_where(host: &Arc<Host>, which: impl Fn(&ActorKey) -> bool) {
    let keys: Vec<ActorKey> = host.scheduler().keys().into_iter().filter(|k| which(k)).collect();
    let mut waits = Vec::new();
    for key in keys {
        if host.scheduler().has_queue(&key) {
            let (tx, rx) = oneshot::channel();
            host.enqueue(&key, Job::new(WorkerJob::Hibernate { done: tx }, Vec::new()));
            waits.push(rx);
        }
    }
    for w in waits {
        let _ = w.blocking_recv();
    }
}

/// Hibernates every resident actor `which` picks one after another, in the
/// order of their keys, each after its queued jobs and waited for before
/// the next: what each one's release writes meets the node's armed faults
/// in the same order every time (ADR 080). [`hibernate_where`] hibernates
/// them all at once, in whatever order their workers get to it.
pub(crate) fn hibernate_in_turn(host: &Arc<Host>, which: impl Fn(&ActorKey) -> bool) {
    let mut keys: Vec<ActorKey> = host.scheduler().keys().into_iter().filter(|k| which(k)).collect();
    keys.sort();
    for key in keys {
        hibernate_where(host, |k| *k == key);
    }
}

/// Cluster: one control pass: apps with a tombstone are stopped, the
/// others' heartbeats written, operator delete requests queued.
pub(crate) fn control_pass(host: &Arc<Host>) {
    let Some(c) = host.cluster() else { return };
    if host.is_stopping() || !c.cluster.is_live(&c.node) {
        return;
    }
    let apps = app_names(host);
    for app in apps {
        match crate::app_delete::read_tombstone(c.bucket.as_ref(), &app) {
            Ok(Some(_)) => stop_app(host, &app),
            Ok(None) => mark_serving(host, c, &app),
            Err(e) => tracing::warn!(app = %app, "reading the tombstone: {e}"),
        }
    }
    operator_pass(host);
    purge_pass(host);
}

/// Writes this node's mark that it serves `app` (ADR 077): once per lease
/// epoch for a node process, whose lease says it is live; every pass for
/// nodes of one process, whose mark is a heartbeat.
fn mark_serving(host: &Host, c: &crate::cluster::ClusterNode, app: &str) {
    let epoch = c.cluster.epoch(&c.node);
    let written = host.pass_book().mark_serving_once(app, epoch, || {
        crate::app_delete::write_serving_mark(c.records_bucket().as_ref(), app, &c.node, epoch)
    });
    match written {
        Ok(()) => {}
        // Written again at the next pass.
        Err(e) => tracing::warn!(app = %app, "writing this node's mark that it serves the app: {e}"),
    }
}

/// The apps this node serves.
fn app_names(host: &Host) -> Vec<String> {
    host.apps().names()
}

/// The leading node finishes purges cut short (ADR 031): every app's purge
/// marks are listed, and what lies before each actor's newest reset erased.
fn purge_pass(host: &Arc<Host>) {
    let Some(c) = host.cluster() else { return };
    if !c.cluster.leads(&c.node) {
        return;
    }
    let now = host.clock().now_ms();
    let apps = app_names(host);
    for app in apps {
        match crate::purge::pass(c.bucket.as_ref(), &app, now) {
            Ok(p) if p.failed > 0 => {
                host.metrics().inc(crate::metrics::HISTORY_COLLECT_FAILURES_TOTAL, "");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(app = %app, "listing purges: {e}"),
        }
    }
}

/// One control pass over operator delete requests (ADR 0028 §3); see
/// [`crate::ClusterPasses::run_operator_pass`].
pub(crate) fn operator_pass(host: &Arc<Host>) -> usize {
    use crate::operator::{Listed, MAX_PER_PASS, Outcome, REQUEST_TTL_MS};
    let Some(c) = host.cluster() else { return 0 };
    // One node of the cluster lists and queues: the lowest live id (ADR 008),
    // or among node processes the control lease's holder (ADR 028). The job
    // goes to whichever node of this process holds the actor. A node process
    // holding an actor is not reached by another process's job, so every node
    // process lists too, and acts on the actors it holds (ADR 031).
    let leads = c.cluster.leads(&c.node);
    // A node process advertises where it answers; nodes of one process do not.
    let other_processes = c.cluster.address(&c.node).is_some();
    if !leads && !other_processes {
        return 0;
    }
    let now = host.clock().now_ms();
    let apps = host.apps().all();
    let mut queued = 0;
    for (name, app) in apps {
        let listed = match crate::operator::list(c.bucket.as_ref(), &name) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(app = %name, "listing operator delete requests: {e}");
                continue;
            }
        };
        let outcomes: std::collections::HashSet<&str> = listed
            .iter()
            .filter_map(|l| match l {
                Listed::Outcome { object, .. } => Some(object.as_str()),
                Listed::Request(_) => None,
            })
            .collect();
        for l in &listed {
            match l {
                Listed::Outcome { object, t } if t + REQUEST_TTL_MS < now => {
                    delete_record(c, object);
                }
                Listed::Outcome { .. } => {}
                Listed::Request(r) if r.t + REQUEST_TTL_MS < now => {
                    delete_record(c, &r.object);
                }
                // Its outcome is written; only deleting the request failed.
                Listed::Request(r)
                    if [Outcome::Done, Outcome::Absent]
                        .iter()
                        .any(|o| outcomes.contains(r.outcome_key(*o).as_str())) =>
                {
                    delete_record(c, &r.object);
                }
                // A class this node does not serve: left to the nodes that do (or to expiry).
                Listed::Request(r) if !app.classes.contains_key(&r.key.class) => {}
                // Among node processes: the holder acts on its own; the leader
                // on actors no live node of another process holds.
                Listed::Request(r)
                    if other_processes
                        && (if leads {
                            held_by_another_process(host, &r.key)
                        } else {
                            !held_here(host, &r.key)
                        }) => {}
                Listed::Request(r) => {
                    if !host.pass_book().claim_operator_request(&r.object, MAX_PER_PASS) {
                        continue;
                    }
                    host.enqueue(&r.key, Job::new(HostJob::OperatorDelete { req: r.clone() }, Vec::new()));
                    queued += 1;
                }
            }
        }
    }
    queued
}

/// One idle expiry pass (ADR 0028 §4); see [`crate::ClusterPasses::run_expiry_pass`].
pub(crate) fn expiry_pass(host: &Arc<Host>) -> ExpiryPass {
    let mut pass = ExpiryPass::default();
    let Some(c) = host.cluster() else { return pass };
    if host.is_stopping() || !c.cluster.leads(&c.node) {
        return pass;
    }
    // The clock before the listing: a slow listing never makes a record look idler.
    let now = host.clock().now_ms();
    let limits = host.pass_book().idle_limits();
    let mut candidates = Vec::new();
    // Versions listed this pass: a skipped version no longer listed is dropped,
    // so the skip list never outgrows the records.
    let mut seen = HashMap::new();
    for ((app, class), limit) in limits {
        let prefix = crate::keys::owners_of_class(&app, &class);
        let listed = match c.bucket.list(&prefix) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(app = %app, class = %class, "idle expiry: listing owners: {e}");
                continue;
            }
        };
        for m in listed {
            seen.insert(m.key.clone(), m.etag.clone());
            let Some(key) = crate::keys::actor_of_owner(&app, &class, &m.key) else {
                continue;
            };
            if m.last_modified.saturating_add(limit) > now {
                continue;
            }
            if host.pass_book().expiry_skips(&m.key, &m.etag) {
                continue;
            }
            // Resident here or with a socket: active (the job never takes a hold it has).
            let resident = host.scheduler().is_resident(&key);
            if resident || !host.sockets_of(&key).is_empty() {
                continue;
            }
            candidates.push((key, m.key, m.etag));
        }
    }
    host.pass_book().keep_expiry_skips(&seen);
    pass.candidates = candidates.len();
    host.metrics()
        .add(crate::metrics::EXPIRY_CANDIDATES_TOTAL, "", candidates.len() as u64);
    for batch in candidates
        .chunks(EXPIRIES_AT_ONCE)
        .take(EXPIRIES_PER_PASS / EXPIRIES_AT_ONCE)
    {
        let waits: Vec<_> = batch
            .iter()
            .map(|(key, _, etag)| {
                let (tx, rx) = oneshot::channel();
                host.enqueue(
                    key,
                    Job::new(
                        HostJob::Expire {
                            etag: etag.clone(),
                            done: tx,
                        },
                        Vec::new(),
                    ),
                );
                rx
            })
            .collect();
        for ((_, record, etag), rx) in batch.iter().zip(waits) {
            if rx.blocking_recv().unwrap_or(false) {
                pass.expired += 1;
            } else {
                host.pass_book().skip_expiry(record.clone(), etag.clone());
            }
        }
    }
    pass
}

/// Queues an alarm job for every due entry not already `in_flight`; returns the new ones.
pub(crate) fn queue_due(
    host: &Arc<Host>,
    in_flight: &HashMap<ActorKey, oneshot::Receiver<bool>>,
) -> Vec<(ActorKey, oneshot::Receiver<bool>)> {
    // A stopped node runs no alarm (its job would be answered "not run" and
    // the entry stay due), and queues none: each queued job would start a
    // worker that holds the node (ADR 060).
    if host.is_stopping() {
        return Vec::new();
    }
    let now = host.clock().now_ms();
    let due = match host.alarms().due(now) {
        Ok(d) => d,
        Err(e) => {
            tracing::error!("reading the alarm index: {e}");
            return Vec::new();
        }
    };
    let mut queued = Vec::new();
    for (key, _) in due {
        if in_flight.contains_key(&key) {
            continue; // its alarm job is still queued
        }
        if let Some(rx) = queue_alarm(host, &key) {
            queued.push((key, rx));
        }
    }
    queued
}

/// Queues the alarm job of `key`, due now per the index; what it answers
/// once its event has ended (whether `on-alarm` ran). None when this node
/// does not wake it: its app is not loaded here, or a live node of another
/// process holds it (its holder wakes it; this node does once the holder's
/// lease lapses).
pub(crate) fn queue_alarm(host: &Arc<Host>, key: &ActorKey) -> Option<oneshot::Receiver<bool>> {
    if host.class(key).is_err() || held_by_another_process(host, key) {
        return None;
    }
    let (tx, rx) = oneshot::channel();
    host.enqueue(key, Job::new(GuestEvent::Alarm { ran: tx }, Vec::new()));
    Some(rx)
}

/// Whether a live node of another process holds `key` (node processes share
/// the alarm index in the bucket; a node of this process gets the job
/// through its mailbox instead).
fn held_by_another_process(host: &Arc<Host>, key: &ActorKey) -> bool {
    host.remote_holder(key).is_some()
}

/// Whether this node holds `key`: it has its mailbox (the actor is, or was
/// lately, held here), or the bucket's ownership record names this node. A
/// node process killed while it held the actor and started again under the
/// same id holds it by the record and has no mailbox for it yet; the leader
/// leaves it to this node, since the record names a live node (ADR 031).
fn held_here(host: &Arc<Host>, key: &ActorKey) -> bool {
    if host.scheduler().has_mailbox(key) {
        return true;
    }
    host.cluster()
        .is_some_and(|c| match crate::replica::recorded_holder(c.bucket.as_ref(), key) {
            Ok(rec) => rec.is_some_and(|rec| !rec.released && rec.node == c.node),
            Err(e) => {
                // Not known now: taken as not held here; a later pass asks again.
                tracing::warn!(actor = %key, "operator delete: reading the actor's ownership record: {e}");
                false
            }
        })
}

/// Deletes an operator request's or outcome's record that has served its
/// time; one that stays is tried again at the next pass.
fn delete_record(c: &crate::cluster::ClusterNode, object: &str) {
    if let Err(e) = c.records_bucket().delete(object) {
        tracing::warn!("operator delete: deleting {object}, which has served its time: {e}");
    }
}

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
