//! One actor's worker: takes events from its mailbox one at a time and runs
//! them, including the end of a deleting event (ADR 0028 §1–2, one node).

use crate::actor_db::META_ALARM;
use crate::address::ActorKey;
use crate::deletion::DeleteHow;
use crate::error::RuntimeError;
use crate::event_error::EventError;
use crate::event_error::fail_job;
use crate::faults::FaultKind;
use crate::guest_call::{Outcome, run_event};
use crate::host_jobs::{admin_delete, expire, operator_delete};
use crate::http_types::HttpResponse;
use crate::job::{ABANDONED, EventKind, Job, RUNNING, take_ticket};
use crate::metrics::{EVENT_FAILURES_TOTAL, EVENTS_TOTAL};
use crate::node::{ActorStatus, Host, Mailbox};
use crate::resident::{Prepared, Resident, delete_actor, give_up, hibernate, prepare};
use crate::sql_types::SqlError;
use crate::storage::OpenMode;
use crate::storage::open_actor::Durability;
use std::sync::{Arc, mpsc};
use std::time::Duration;
use tokio::sync::oneshot;

/// The worker loop: runs until the mailbox stays empty for the idle timeout.
pub(crate) fn run(host: &Arc<Host>, slot: &Arc<Mailbox>, rx: &mpsc::Receiver<Job>) {
    let mut resident: Option<Resident> = None;
    loop {
        // While actors wait for a resident slot, an idle worker leaves at once.
        let idle = if host.residency.anyone_waiting() {
            Duration::ZERO
        } else {
            host.config.idle_timeout
        };
        let job = match spin_then_wait(rx, idle) {
            Ok(job) => job,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let mut inner = slot.lock();
                if let Ok(job) = rx.try_recv() {
                    drop(inner);
                    job
                } else {
                    // Hibernate under the slot's lock so no new worker opens the files meanwhile.
                    hibernate(&mut resident);
                    inner.sender = None;
                    if inner.status == ActorStatus::Resident {
                        inner.status = ActorStatus::Hibernated;
                    }
                    return;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                hibernate(&mut resident);
                return;
            }
        };
        if let EventKind::Hibernate { done } = job.kind {
            let mut inner = slot.lock();
            hibernate(&mut resident);
            if let Ok(next) = rx.try_recv() {
                drop(inner);
                let _ = done.send(());
                handle(host, slot, &mut resident, next);
                continue;
            }
            inner.sender = None;
            if inner.status == ActorStatus::Resident {
                inner.status = ActorStatus::Hibernated;
            }
            let _ = done.send(());
            return;
        }
        handle(host, slot, &mut resident, job);
    }
}

/// Waits for the next job. A busy actor's next event often comes within
/// microseconds (one client, request after request); parking the thread and
/// waking it again costs more than that, so look briefly before parking.
fn spin_then_wait(rx: &mpsc::Receiver<Job>, idle: Duration) -> Result<Job, mpsc::RecvTimeoutError> {
    let spin_until = std::time::Instant::now() + SPIN;
    while std::time::Instant::now() < spin_until {
        match rx.try_recv() {
            Ok(job) => return Ok(job),
            Err(mpsc::TryRecvError::Disconnected) => return Err(mpsc::RecvTimeoutError::Disconnected),
            Err(mpsc::TryRecvError::Empty) => std::thread::yield_now(),
        }
    }
    rx.recv_timeout(idle)
}

/// How long a worker looks for its next job before it parks.
const SPIN: Duration = Duration::from_micros(100);

fn handle(host: &Arc<Host>, slot: &Arc<Mailbox>, resident: &mut Option<Resident>, job: Job) {
    let key = slot.key.clone();
    let guest_event = !matches!(
        job.kind,
        EventKind::Inspect { .. }
            | EventKind::Barrier { .. }
            | EventKind::Hibernate { .. }
            | EventKind::AdminDelete { .. }
    );
    if guest_event {
        if host.halted(&key.app) {
            // Ordered shutdown (or the app deleted): no new guest code; its waiter may have answered already.
            if take_ticket(&job.ticket, ABANDONED) {
                fail_job(job.kind, &EventError::ShuttingDown);
            }
            return;
        }
        if !take_ticket(&job.ticket, RUNNING) {
            return; // Answered and given up by its waiter.
        }
        // `serve --watch` reloaded the class: this event meets the new
        // component. Its state is in its database, its alarm in the index
        // and its sockets in the host's table, so a hibernation loses none.
        if resident.as_mut().is_some_and(|r| r.class_replaced(host, &key)) {
            hibernate(resident);
        }
        // A cut-off node holds nothing, not even what it has resident: the
        // actor is let go, and opening it again answers 503 (another node
        // serves it from the bucket).
        if resident.is_some() && !host.storage.serving() {
            hibernate(resident);
        }
    }
    let kind = match job.kind {
        EventKind::Barrier { done } => {
            let _ = done.send(());
            return;
        }
        EventKind::Inspect { reply } => {
            // Reading never creates an actor.
            let r = match prepare(host, slot, resident, OpenMode::Existing) {
                Ok(Prepared::Ready(r)) => match r.store.data().actor.open_db() {
                    Some(db) => db.dump_tables().map_err(|e| match e {
                        SqlError::Sqlite {
                            code: crate::actor_db::sqlite_code::TOOBIG,
                            message,
                        } => RuntimeError::TablesTooLarge(message),
                        SqlError::Sqlite {
                            code: crate::actor_db::sqlite_code::INTERRUPT,
                            message,
                        } => RuntimeError::TablesTooSlow(message),
                        other => RuntimeError::Event(other.to_string()),
                    }),
                    None => Err(RuntimeError::Event("the database is closed".into())),
                },
                Ok(Prepared::Absent) => Err(RuntimeError::Event(format!("no such actor: {key} has no database"))),
                Ok(Prepared::Elsewhere(node)) => {
                    node.deliver(&key, Job::new(EventKind::Inspect { reply }, job.chain));
                    return;
                }
                Err(e) => Err(RuntimeError::Event(e.to_string())),
            };
            let _ = reply.send(r);
            return;
        }
        EventKind::Hibernate { done } => {
            hibernate(resident);
            let _ = done.send(());
            return;
        }
        EventKind::OperatorDelete { req } => {
            operator_delete(host, slot, resident, req);
            return;
        }
        EventKind::AdminDelete { done } => {
            let _ = done.send(admin_delete(host, slot, resident));
            return;
        }
        EventKind::Expire { etag, done } => {
            let _ = done.send(expire(host, slot, resident, etag));
            return;
        }
        // Socket events of an actor deleted since they were queued, or for a socket
        // that is gone, run no guest code: they would create a new actor.
        EventKind::SocketOpen { id, .. } | EventKind::SocketMessage { id, .. }
            if job.generation != slot.lock().generation || !host.socket_belongs_to(&key, id) =>
        {
            return;
        }
        EventKind::SocketClose { .. } if job.generation != slot.lock().generation => return,
        EventKind::Request {
            req,
            respond,
            require_existing: true,
        } => {
            // Open here, so it exists: no listing (in a cluster, a bucket call per request).
            let exists = if resident.is_some() {
                Ok(true)
            } else {
                host.storage.exists(&key)
            };
            match exists {
                Ok(true) => EventKind::Request {
                    req,
                    respond,
                    require_existing: true,
                },
                // A failed listing never reads as "absent": it answers by its cause.
                absent_or_unknown => {
                    let why = match absent_or_unknown {
                        Err(e) => EventError::Storage(e),
                        Ok(_) => EventError::NoSuchActor(key.clone()),
                    };
                    let _ = respond.send(HttpResponse::host_text(why.status(), why.to_string()));
                    return;
                }
            }
        }
        other => other,
    };
    let label = kind.label();
    if let EventKind::Alarm { ran } = kind {
        run_alarm(host, slot, resident, ran, job.chain);
        return;
    }
    host.metrics.inc(EVENTS_TOTAL, label);
    let res = match prepare(host, slot, resident, OpenMode::Create) {
        Ok(Prepared::Ready(r)) => r,
        Ok(Prepared::Absent) => {
            fail_job(kind, &EventError::Host("the database was not created".into()));
            return;
        }
        Ok(Prepared::Elsewhere(node)) => {
            node.deliver(&key, Job::new(kind, job.chain));
            return;
        }
        Err(why) => {
            host.metrics.inc(EVENT_FAILURES_TOTAL, label);
            fail_job(kind, &why);
            return;
        }
    };
    // The fault is for the next request to start once it is armed, never for
    // one already running (whose answer may be out already).
    let cut_off_after_answer =
        matches!(kind, EventKind::Request { .. }) && host.faults.take(FaultKind::CutOffAfterAnswer);
    let outcome = run_event(host, res, kind, job.chain);
    finish(host, slot, resident, outcome, label, cut_off_after_answer);
}

/// An alarm runs guest code only if the actor exists and its own alarm (in
/// its database, not the index or a cache) is due.
fn run_alarm(
    host: &Arc<Host>,
    slot: &Arc<Mailbox>,
    resident: &mut Option<Resident>,
    ran: oneshot::Sender<bool>,
    chain: Vec<ActorKey>,
) {
    let key = slot.key.clone();
    let res = match prepare(host, slot, resident, OpenMode::Existing) {
        Ok(Prepared::Ready(r)) => r,
        Ok(Prepared::Absent) => {
            // No actor: the entry is left over from a delete.
            let _ = host.alarms.remove(&key);
            let _ = ran.send(false);
            return;
        }
        Ok(Prepared::Elsewhere(node)) => {
            node.deliver(&key, Job::new(EventKind::Alarm { ran }, chain));
            return;
        }
        Err(why) => {
            tracing::warn!(actor = %key, "alarm not run: {why}");
            let _ = ran.send(false);
            return;
        }
    };
    let now = host.clock.now_ms();
    let data = res.store.data_mut();
    data.reload_alarm();
    match data.alarm {
        Some(at) if at <= now => {
            if let Some(db) = data.actor.open_db()
                && let Err(e) = db.meta_set(META_ALARM, None)
            {
                tracing::error!(actor = %key, "clearing a due alarm: {e}");
                let _ = ran.send(false);
                return;
            }
            data.alarm = None;
            let _ = host.alarms.remove(&key);
            host.metrics.inc(EVENTS_TOTAL, "alarm");
            let outcome = run_event(host, res, EventKind::Alarm { ran }, chain);
            finish(host, slot, resident, outcome, "alarm", false);
        }
        Some(_) => {
            // The index was early; reload_alarm pointed it at the real time.
            let _ = ran.send(false);
        }
        None => {
            // An entry left for an actor with no alarm wakes nothing.
            let _ = host.alarms.remove(&key);
            let _ = ran.send(false);
        }
    }
}

/// How an event ends, decided once from what the guest asked and what the
/// storage says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventEnd {
    /// Its writes are kept; the instance serves the next event.
    Kept,
    /// Its writes are kept; the instance is replaced (it trapped, or its
    /// output buffer is filling up and would soon fail to print).
    KeptFreshInstance,
    /// It asked for a delete: the one delete routine finishes it.
    Deleted(DeleteHow),
    /// An upload was not acknowledged: its writes are not kept, the actor is
    /// given up, and the next event restores what the bucket holds.
    GivenUp,
}

/// The end of an event: traps, transactions left open, then [`EventEnd`].
fn finish(
    host: &Arc<Host>,
    slot: &Arc<Mailbox>,
    resident: &mut Option<Resident>,
    outcome: Outcome,
    label: &str,
    cut_off_after_answer: bool,
) {
    let Some(res) = resident.as_mut() else { return };
    let key = slot.key.clone();
    if let Some(why) = &outcome.trapped {
        host.metrics.inc(EVENT_FAILURES_TOTAL, label);
        tracing::warn!(actor = %key, "{why}");
    }
    let data = res.store.data_mut();
    if let Some(db) = data.actor.open_db()
        && db.rollback_if_open()
    {
        if outcome.trapped.is_none() {
            tracing::warn!(actor = %key, "the event ended with a transaction open: rolled back");
        }
        data.reload_alarm();
    }
    let cut_off = cut_off_after_answer && host.storage.cut_off_this_node();
    if cut_off {
        tracing::warn!(actor = %key, "this node is cut off after answering (injected fault)");
    }
    // A node cut off holds nothing: nothing it does from here counts.
    let end = if cut_off || data.actor.durability() == Durability::WritesLost {
        EventEnd::GivenUp
    } else if let Some(how) = data.ev.requested_delete {
        EventEnd::Deleted(how)
    } else if outcome.trapped.is_some() || data.output_nearly_full() {
        EventEnd::KeptFreshInstance
    } else {
        EventEnd::Kept
    };
    match end {
        EventEnd::GivenUp => give_up(resident),
        EventEnd::Deleted(how) => {
            let _ = delete_actor(host, slot, resident, how);
        }
        EventEnd::Kept | EventEnd::KeptFreshInstance => {
            if let Err(e) = data.actor.end_event() {
                tracing::warn!(
                    actor = %key,
                    "the event's writes could not be replicated ({e}); they are not kept, and the next event \
                     restores what the bucket holds"
                );
                give_up(resident);
            } else if end == EventEnd::KeptFreshInstance {
                hibernate(resident);
            }
        }
    }
}
