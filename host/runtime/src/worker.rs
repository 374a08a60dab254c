//! One actor's worker: takes events from its mailbox one at a time and runs
//! them, including the end of a deleting event (ADR 0028 §1–2, one node).

use crate::actor_db::{META_ALARM, META_INITIALIZED};
use crate::address::ActorKey;
use crate::bindings::{Actor, http as wit_http, types as wit};
use crate::cluster::NodeMailboxes;
use crate::deletion::DeleteHow;
use crate::event_error::EventError;
use crate::faults::FaultKind;
use crate::http_types::{HttpResponse, SocketMessage};
use crate::imports::{EventState, HostState};
use crate::job::{ABANDONED, CallFailure, EventKind, Job, RUNNING, take_ticket};
use crate::metrics::{DELETE_FAILURES_TOTAL, DELETES_TOTAL, EVENT_FAILURES_TOTAL, EVENTS_TOTAL};
use crate::node::{ActorStatus, Host, Mailbox};
use crate::outparam::{Outparam, ResponseSlot};
use crate::storage::open_actor::Durability;
use crate::storage::{OpenMode, Opened, StorageError};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::sync::oneshot;
use wasmtime::Store;

/// How often the engine's epoch moves (the granularity of event time limits).
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// A resident actor: its store (with the database) and, once needed, its instance.
struct Resident {
    store: Store<HostState>,
    instance: Option<Actor>,
}

/// The worker loop: runs until the mailbox stays empty for the idle timeout.
pub(crate) fn run(host: &Arc<Host>, slot: &Arc<Mailbox>, rx: &mpsc::Receiver<Job>) {
    let mut resident: Option<Resident> = None;
    loop {
        let job = match spin_then_wait(rx, host.config.idle_timeout) {
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

/// Drops the instance, closes the database and releases the hold.
fn hibernate(resident: &mut Option<Resident>) {
    if let Some(r) = resident.take() {
        r.store.into_data().actor.release();
    }
}

/// Gives the actor up after a failed upload (cluster). Its local writes are
/// not kept: the next event restores what the bucket holds.
fn give_up(resident: &mut Option<Resident>) {
    if let Some(r) = resident.take() {
        r.store.into_data().actor.give_up();
    }
}

fn handle(host: &Arc<Host>, slot: &Arc<Mailbox>, resident: &mut Option<Resident>, job: Job) {
    let key = slot.key.clone();
    let guest_event = !matches!(
        job.kind,
        EventKind::Inspect { .. } | EventKind::Barrier { .. } | EventKind::Hibernate { .. }
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
                    Some(db) => db.dump_tables().map_err(|e| e.to_string()),
                    None => Err("the database is closed".into()),
                },
                Ok(Prepared::Absent) => Err(format!("no such actor: {key} has no database")),
                Ok(Prepared::Elsewhere(node)) => {
                    node.deliver(&key, Job::new(EventKind::Inspect { reply }, job.chain));
                    return;
                }
                Err(e) => Err(e.to_string()),
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
        } => match host.storage.exists(&key) {
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
        },
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
    let outcome = run_event(host, res, kind, job.chain);
    finish(host, slot, resident, outcome, label);
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
            finish(host, slot, resident, outcome, "alarm");
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

/// Opens the actor through the storage (finishing an unfinished delete,
/// creating it only for [`OpenMode::Create`]) and makes the store.
fn prepare<'a>(
    host: &Arc<Host>,
    slot: &Arc<Mailbox>,
    resident: &'a mut Option<Resident>,
    mode: OpenMode,
) -> Result<Prepared<'a>, EventError> {
    let key = &slot.key;
    if resident.is_none() {
        let actor = match host.storage.open(key, mode)? {
            Opened::Here(actor) => actor,
            Opened::Absent => return Ok(Prepared::Absent),
            Opened::Elsewhere(node) => {
                return host
                    .node_mailboxes(&node)
                    .map(Prepared::Elsewhere)
                    .ok_or_else(|| StorageError::HolderUnreachable { key: key.clone(), node }.into());
            }
        };
        let data = HostState::new(host.handles_for_imports(), key.clone(), actor);
        let mut store = Store::new(&host.engine, data);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.data_mut().reload_alarm();
        *resident = Some(Resident { store, instance: None });
    } else if matches!(mode, OpenMode::Unchanged(_)) {
        // Resident here: active, never expired (the job never counts a hold it has).
        return Ok(Prepared::Absent);
    }
    let Some(r) = resident.as_mut() else {
        return Err(EventError::Host("no resident".into()));
    };
    slot.lock().status = ActorStatus::Resident;
    Ok(Prepared::Ready(r))
}

/// What `prepare` found.
enum Prepared<'a> {
    /// The actor is resident here, its database open.
    Ready(&'a mut Resident),
    /// It does not exist and was not created.
    Absent,
    /// Another node holds it (cluster): the job goes there.
    Elsewhere(Arc<dyn NodeMailboxes>),
}

/// Answers the event's caller with the reason the event failed.
type AnswerFailure = Box<dyn FnOnce(String) + Send>;

/// How an event ended.
struct Outcome {
    trapped: Option<String>,
}

/// Starts the clock of a guest call: wasm is interrupted by the epoch, SQL by the database's progress handler.
fn set_deadline(host: &Host, store: &mut Store<HostState>) {
    store.set_epoch_deadline(deadline_ticks(host));
    let deadline = std::time::Instant::now() + host.config.event_timeout;
    store.data_mut().ev.deadline = Some(deadline);
    if let Some(db) = store.data().actor.open_db() {
        db.set_deadline(Some(deadline));
    }
}

fn deadline_ticks(host: &Host) -> u64 {
    (host.config.event_timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
}

fn describe_trap(host: &Host, store: &Store<HostState>, e: &wasmtime::Error) -> String {
    let timed_out = e.downcast_ref::<wasmtime::Trap>() == Some(&wasmtime::Trap::Interrupt);
    let mut msg = if timed_out {
        format!(
            "the event ran longer than its limit of {:?} and was interrupted \
             (an endless loop, slow SQL, or a call that did not come back in time?)",
            host.config.event_timeout
        )
    } else {
        format!("the event trapped: {e:#}")
    };
    let tail = store.data().stderr_tail();
    if !tail.is_empty() {
        msg.push_str("\nguest output:\n");
        msg.push_str(&tail);
    }
    msg
}

fn run_event(host: &Arc<Host>, res: &mut Resident, kind: EventKind, chain: Vec<ActorKey>) -> Outcome {
    let key = res.store.data().key.clone();
    let data = res.store.data_mut();
    data.stderr_mark = data.stderr.contents().len();
    data.ev = EventState {
        chain,
        ..EventState::default()
    };
    // Instantiate on first use.
    if res.instance.is_none() {
        let class = match host.class(&key) {
            Ok(c) => c,
            Err(e) => return fail_kind(kind, EventError::NotLoaded(e.to_string())),
        };
        set_deadline(host, &mut res.store);
        match class.pre.instantiate(&mut res.store) {
            Ok(i) => res.instance = Some(i),
            Err(e) => {
                let why = format!("instantiating the component failed: {e:#}");
                return fail_kind(kind, EventError::Guest(why));
            }
        }
    }
    let Some(instance) = res.instance.as_ref() else {
        return fail_kind(kind, EventError::Host("no instance".into()));
    };
    let events = instance.wasmkeep_actor_events();

    // on-init, once per new database, in the same event.
    let initialized = match res.store.data().actor.open_db() {
        Some(db) => db.meta_get(META_INITIALIZED).map(|v| v.is_some()),
        None => Ok(true),
    };
    match initialized {
        Err(e) => return fail_kind(kind, StorageError::from(e).into()),
        Ok(false) => {
            set_deadline(host, &mut res.store);
            if let Err(e) = events.call_on_init(&mut res.store) {
                let why = format!(
                    "on-init failed, so the event did not run: {}",
                    describe_trap(host, &res.store, &e)
                );
                return fail_kind(kind, EventError::Guest(why));
            }
            let data = res.store.data_mut();
            let mut rolled_back = false;
            if let Some(db) = data.actor.open_db() {
                if db.rollback_if_open() {
                    tracing::warn!(actor = %key, "on-init left a transaction open: rolled back");
                    rolled_back = true;
                }
                if let Err(e) = db.meta_set(META_INITIALIZED, Some("1")) {
                    return fail_kind(kind, StorageError::from(e).into());
                }
            }
            if rolled_back {
                data.reload_alarm();
            }
        }
        Ok(true) => {}
    }

    set_deadline(host, &mut res.store);
    let result: Result<(), (wasmtime::Error, Option<AnswerFailure>)> = match kind {
        EventKind::Request { req, respond, .. } => {
            let slot: ResponseSlot = Arc::new(Mutex::new(Some(respond)));
            let out = match res.store.data_mut().table.push(Outparam { tx: slot.clone() }) {
                Ok(o) => o,
                Err(e) => return fail_slot(&slot, &format!("host bug: {e}")),
            };
            let wreq = wit_http::Request {
                method: req.method,
                path: req.path,
                headers: req.headers,
                body: req.body,
            };
            let r = events.call_on_request(&mut res.store, &wreq, out);
            let unanswered = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
            match r {
                Ok(()) => {
                    if let Some(tx) = unanswered {
                        let _ = tx.send(HttpResponse::host_text(
                            500,
                            "the actor's on-request returned without setting a response",
                        ));
                    }
                    Ok(())
                }
                Err(e) => Err((
                    e,
                    unanswered.map(|tx| {
                        Box::new(move |why: String| {
                            let _ = tx.send(HttpResponse::host_text(500, why));
                        }) as AnswerFailure
                    }),
                )),
            }
        }
        EventKind::Call { caller, payload, reply } => {
            let caller = caller.map(|k| wit::Address {
                class: k.class,
                name: k.name,
            });
            match events.call_on_call(&mut res.store, caller.as_ref(), &payload) {
                Ok(answer) => {
                    let _ = reply.send(answer.map_err(CallFailure::Rejected));
                    Ok(())
                }
                Err(e) => Err((
                    e,
                    Some(Box::new(move |why: String| {
                        let _ = reply.send(Err(CallFailure::Failed(why)));
                    })),
                )),
            }
        }
        EventKind::Alarm { ran } => {
            let r = events.call_on_alarm(&mut res.store);
            let _ = ran.send(true);
            r.map_err(|e| (e, None))
        }
        EventKind::SocketOpen { id, path } => events
            .call_on_socket_open(&mut res.store, id, &path)
            .map_err(|e| (e, None)),
        EventKind::SocketMessage { id, msg } => {
            let m = match msg {
                SocketMessage::Text(t) => wit::Message::Text(t),
                SocketMessage::Binary(b) => wit::Message::Binary(b),
            };
            events
                .call_on_socket_message(&mut res.store, id, &m)
                .map_err(|e| (e, None))
        }
        EventKind::SocketClose { id, code, reason } => events
            .call_on_socket_close(&mut res.store, id, code, &reason)
            .map_err(|e| (e, None)),
        EventKind::Inspect { .. }
        | EventKind::Barrier { .. }
        | EventKind::Hibernate { .. }
        | EventKind::OperatorDelete { .. }
        | EventKind::Expire { .. } => Ok(()),
    };
    match result {
        Ok(()) => Outcome { trapped: None },
        Err((e, answer)) => {
            let why = describe_trap(host, &res.store, &e);
            if let Some(answer) = answer {
                answer(why.clone());
            }
            Outcome { trapped: Some(why) }
        }
    }
}

fn fail_slot(slot: &ResponseSlot, why: &str) -> Outcome {
    if let Some(tx) = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
        let _ = tx.send(HttpResponse::host_text(500, why));
    }
    Outcome {
        trapped: Some(why.to_owned()),
    }
}

fn fail_kind(kind: EventKind, why: EventError) -> Outcome {
    fail_job(kind, &why);
    Outcome {
        trapped: Some(why.to_string()),
    }
}

/// Answers a job that could not run, by its cause.
fn fail_job(kind: EventKind, why: &EventError) {
    match kind {
        EventKind::Request { respond, .. } => {
            let _ = respond.send(HttpResponse::host_text(why.status(), why.to_string()));
        }
        EventKind::Call { reply, .. } => {
            let _ = reply.send(Err(CallFailure::Failed(why.to_string())));
        }
        EventKind::Alarm { ran } => {
            let _ = ran.send(false);
        }
        EventKind::Inspect { reply } => {
            let _ = reply.send(Err(why.to_string()));
        }
        EventKind::Barrier { done } | EventKind::Hibernate { done } => {
            let _ = done.send(());
        }
        EventKind::SocketOpen { .. } | EventKind::SocketMessage { .. } | EventKind::SocketClose { .. } => {}
        // The request stays in the bucket for a later pass.
        EventKind::OperatorDelete { .. } => {}
        EventKind::Expire { done, .. } => {
            let _ = done.send(false);
        }
    }
    tracing::warn!("event failed: {why}");
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
fn finish(host: &Arc<Host>, slot: &Arc<Mailbox>, resident: &mut Option<Resident>, outcome: Outcome, label: &str) {
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
    let cut_off = label == "request" && host.cluster.is_some() && host.faults.take(FaultKind::CutOffAfterAnswer);
    if cut_off && let Some(c) = &host.cluster {
        // The node answered and is cut off now: nothing it does from here counts.
        tracing::warn!(node = %c.node, "cut off after answering (injected fault)");
        c.cluster.cut_off(&c.node);
    }
    let end = if data.actor.durability() == Durability::WritesLost {
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

/// ADR 0028 §3: an operator delete request, carried out in the actor's
/// mailbox after the jobs queued before it. It runs no guest code: absent →
/// `.absent`; held by another node → that node's mailbox; carried out before
/// (the replay marker) → `.done`; open sockets → closed with 1000 "actor
/// deleted", their close events run, then the job again; otherwise the reset
/// with the deletion and replay markers, and `.done` once it is acknowledged.
fn operator_delete(
    host: &Arc<Host>,
    slot: &Arc<Mailbox>,
    resident: &mut Option<Resident>,
    req: crate::operator::DeleteRequest,
) {
    use crate::operator::Outcome;
    let key = slot.key.clone();
    if host.cluster.is_none() {
        return;
    }
    let r = match prepare(host, slot, resident, OpenMode::Existing) {
        Ok(Prepared::Ready(r)) => r,
        Ok(Prepared::Absent) => return finish_request(host, &req, Outcome::Absent),
        Ok(Prepared::Elsewhere(node)) => {
            host.operator_released(&req);
            return node.deliver(&key, Job::new(EventKind::OperatorDelete { req }, Vec::new()));
        }
        Err(e) => {
            // The request stays for a later pass.
            tracing::warn!(actor = %key, "operator delete {}: {e}", req.id);
            return host.operator_released(&req);
        }
    };
    let data = r.store.data_mut();
    if data.actor.operator_marker().is_some_and(|m| req.carried_out_by(m)) {
        // Carried out before (its key could not be deleted, or it was listed
        // twice). The hold restored and fenced the history: report it done.
        return finish_request(host, &req, Outcome::Done);
    }
    let open = host.sockets_of(&key);
    if !open.is_empty() {
        // Only now that the delete will run: close them; their close events run
        // before the job, queued again behind them.
        for id in open {
            let _ = host.socket_close_by_actor(&key, id, 1000, "actor deleted".into());
        }
        return host.enqueue(&key, Job::new(EventKind::OperatorDelete { req }, Vec::new()));
    }
    data.actor.set_operator_marker(req.marker());
    match delete_actor(host, slot, resident, DeleteHow::Operator) {
        Ok(()) => finish_request(host, &req, Outcome::Done),
        Err(e) => {
            tracing::warn!(actor = %key, "operator delete {} was not recorded ({e}); the request stays", req.id);
            host.operator_released(&req);
        }
    }
}

/// ADR 0028 §4: expires the actor if its ownership record is still the
/// version the listing showed (a wake since makes the acquire lose), and it
/// has no pending alarm (its own database says) and no open socket. True if
/// it was deleted.
fn expire(host: &Arc<Host>, slot: &Arc<Mailbox>, resident: &mut Option<Resident>, etag: crate::bucket::ETag) -> bool {
    let key = slot.key.clone();
    let busy = match prepare(host, slot, resident, OpenMode::Unchanged(etag)) {
        Ok(Prepared::Ready(r)) => r.store.data().alarm.is_some() || !host.sockets_of(&key).is_empty(),
        Ok(Prepared::Absent | Prepared::Elsewhere(_)) => return false,
        Err(e) => {
            tracing::warn!(actor = %key, "idle expiry: {e}");
            return false;
        }
    };
    if busy {
        // Activity to come: never expired. The hold goes again.
        hibernate(resident);
        return false;
    }
    match delete_actor(host, slot, resident, DeleteHow::Expired) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(actor = %key, "idle expiry was not recorded ({e}); the data stays");
            false
        }
    }
}

/// ADR 0028 §1, the one delete routine, for `delete-self`,
/// `delete-self-durable`, the operator delete and idle expiry: the reset
/// (unless the event already recorded it), then the history collected, the
/// hold released and the local files removed, then sockets closed with 1000
/// "actor deleted", the alarm forgotten and the actor marked deleted. A reset
/// that fails gives the actor up and its data stays, unless the removal is
/// already under way on disk (a single node): that finishes before the next event.
///
/// # Errors
/// The delete was not recorded; the data stays.
fn delete_actor(
    host: &Arc<Host>,
    slot: &Arc<Mailbox>,
    resident: &mut Option<Resident>,
    how: DeleteHow,
) -> Result<(), String> {
    let key = slot.key.clone();
    let Some(r) = resident.as_mut() else {
        return Err("host bug: no resident".into());
    };
    let now = host.clock.now_ms();
    let actor = &mut r.store.data_mut().actor;
    let mut files_removed = true;
    if !actor.deleted_in_event() {
        match actor.reset(how, now) {
            Ok(()) => host.metrics.inc(DELETES_TOTAL, how.label()),
            Err(e) if e.delete_still_happens() => {
                host.metrics.inc(DELETE_FAILURES_TOTAL, how.label());
                tracing::error!(actor = %key, "{e}");
                files_removed = false;
            }
            Err(e) => {
                host.metrics.inc(DELETE_FAILURES_TOTAL, how.label());
                tracing::warn!(actor = %key, "the delete ({}) was not recorded ({e}); the data stays", how.label());
                give_up(resident);
                return Err(e.to_string());
            }
        }
    }
    if let Some(r) = resident.take() {
        let actor = r.store.into_data().actor;
        if files_removed && let Err(e) = actor.finish_delete(how, now) {
            tracing::error!(actor = %key, "{e}");
            files_removed = false;
        }
    }
    // From here, socket events queued for the deleted actor run no guest code.
    slot.lock().generation += 1;
    host.close_sockets_of_deleted(&key);
    if files_removed {
        let _ = host.alarms.remove(&key);
    }
    slot.lock().status = ActorStatus::Deleted;
    Ok(())
}

/// Writes a request's outcome beside it, then deletes the request. If the
/// outcome cannot be written the request stays for the next pass (its replay
/// marker makes that pass report it done).
fn finish_request(host: &Arc<Host>, req: &crate::operator::DeleteRequest, outcome: crate::operator::Outcome) {
    if let Some(c) = &host.cluster {
        let bucket = &c.bucket;
        match bucket.put(&req.outcome_key(outcome), b"", &crate::bucket::PutCondition::None) {
            Ok(_) => {
                if let Err(e) = bucket.delete(&req.object) {
                    tracing::warn!("operator delete {}: the request could not be deleted ({e})", req.id);
                }
            }
            Err(e) => tracing::warn!("operator delete {}: the outcome could not be written ({e})", req.id),
        }
    }
    host.operator_released(req);
}
