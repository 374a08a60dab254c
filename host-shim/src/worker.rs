//! One actor's worker: takes events from its mailbox one at a time and runs
//! them, including the end of a deleting event (ADR 0028 §1–2, one node).

use crate::actor_db::{ActorDb, META_ALARM, META_DELETED, META_INITIALIZED};
use crate::address::ActorKey;
use crate::bindings::{Actor, http as wit_http, types as wit};
use crate::faults::FaultKind;
use crate::host_impl::{Db, EventState, HostState, Outparam, ResponseSlot};
use crate::http_types::{HttpRequest, HttpResponse, SocketMessage};
use crate::metrics::{
    DELETE_FAILURES_TOTAL, DELETES_TOTAL, DeleteHow, EVENT_FAILURES_TOTAL, EVENTS_TOTAL, HISTORY_COLLECT_FAILURES_TOTAL,
};
use crate::operator::META_OPERATOR_DELETE;
use crate::runtime::{ActorStatus, CallFailure, Shared, Slot};
use crate::sql_types::QueryResult;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::sync::oneshot;
use wasmtime::Store;

/// How often the engine's epoch moves (the granularity of event time limits).
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// What an event is.
pub(crate) enum EventKind {
    Request {
        req: HttpRequest,
        respond: oneshot::Sender<HttpResponse>,
        /// From outside, to an `existing` class: checked again when it runs.
        require_existing: bool,
    },
    Call {
        caller: Option<ActorKey>,
        payload: Vec<u8>,
        reply: mpsc::Sender<Result<Vec<u8>, CallFailure>>,
    },
    Alarm {
        ran: oneshot::Sender<bool>,
    },
    SocketOpen {
        id: u64,
        path: String,
    },
    SocketMessage {
        id: u64,
        msg: SocketMessage,
    },
    SocketClose {
        id: u64,
        code: u16,
        reason: String,
    },
    /// Host-side: read the actor's tables.
    Inspect {
        reply: oneshot::Sender<Result<Vec<(String, QueryResult)>, String>>,
    },
    /// Host-side: every earlier job has run.
    Barrier {
        done: oneshot::Sender<()>,
    },
    /// Host-side: drop the instance and close the database.
    Hibernate {
        done: oneshot::Sender<()>,
    },
    /// Host-side: carry out an operator delete request (runs no guest code).
    OperatorDelete {
        req: crate::operator::DeleteRequest,
    },
    /// Host-side, idle expiry: delete the actor if its ownership record is
    /// still this version and it has no alarm and no socket (no guest code).
    Expire {
        etag: crate::bucket::ETag,
        done: oneshot::Sender<bool>,
    },
}

impl EventKind {
    fn label(&self) -> &'static str {
        match self {
            EventKind::Request { .. } => "request",
            EventKind::Call { .. } => "call",
            EventKind::Alarm { .. } => "alarm",
            EventKind::SocketOpen { .. } => "socket_open",
            EventKind::SocketMessage { .. } => "socket_message",
            EventKind::SocketClose { .. } => "socket_close",
            EventKind::Inspect { .. }
            | EventKind::Barrier { .. }
            | EventKind::Hibernate { .. }
            | EventKind::OperatorDelete { .. }
            | EventKind::Expire { .. } => "host",
        }
    }
}

/// Where a queued event stands, shared by the job and whoever waits for its
/// answer: during a shutdown a waiter answers a job still queued at once
/// (and the worker then skips it); a running one is left to finish.
pub(crate) type Ticket = Arc<std::sync::atomic::AtomicU8>;
/// Queued: neither started nor given up.
pub(crate) const QUEUED: u8 = 0;
/// Its guest code started.
pub(crate) const RUNNING: u8 = 1;
/// Answered without running (the host is shutting down); never runs.
pub(crate) const ABANDONED: u8 = 2;

/// Moves a ticket from queued to `to`; false if it had already moved.
pub(crate) fn take_ticket(t: &Ticket, to: u8) -> bool {
    t.compare_exchange(
        QUEUED,
        to,
        std::sync::atomic::Ordering::AcqRel,
        std::sync::atomic::Ordering::Acquire,
    )
    .is_ok()
}

/// The answer every event gets once the host is shutting down.
pub(crate) const SHUTTING_DOWN: &str =
    "the host is shutting down: the event was not run (send it again once the host is back)";

/// A mailbox entry.
pub(crate) struct Job {
    kind: EventKind,
    chain: Vec<ActorKey>,
    /// The actor's generation when the job was queued (stamped by `enqueue`):
    /// socket events of an earlier generation belong to a deleted actor.
    pub(crate) generation: u64,
    pub(crate) ticket: Ticket,
}

impl Job {
    pub(crate) fn new(kind: EventKind, chain: Vec<ActorKey>) -> Self {
        Self {
            kind,
            chain,
            generation: 0,
            ticket: Arc::default(),
        }
    }
}

/// A resident actor: its store (with the database) and, once needed, its instance.
struct Resident {
    store: Store<HostState>,
    instance: Option<Actor>,
}

/// The worker loop: runs until the mailbox stays empty for the idle timeout.
pub(crate) fn run(shared: &Arc<Shared>, slot: &Arc<Slot>, rx: &mpsc::Receiver<Job>) {
    let mut resident: Option<Resident> = None;
    loop {
        let job = match spin_then_wait(rx, shared.config.idle_timeout) {
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
                handle(shared, slot, &mut resident, next);
                continue;
            }
            inner.sender = None;
            if inner.status == ActorStatus::Resident {
                inner.status = ActorStatus::Hibernated;
            }
            let _ = done.send(());
            return;
        }
        handle(shared, slot, &mut resident, job);
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

fn hibernate(resident: &mut Option<Resident>) {
    close_resident(resident, false);
}

/// Drops the instance, closes the database (for a delete, without folding the
/// WAL in: both files go next) and releases the hold.
fn close_resident(resident: &mut Option<Resident>, for_delete: bool) {
    if let Some(mut r) = resident.take() {
        let data = r.store.data_mut();
        if let Db::Open(db) = std::mem::take(&mut data.db) {
            db.rollback_if_open();
            let _ = if for_delete { db.close_for_delete() } else { db.close() };
        }
        release(data);
    }
}

/// Cluster: lets the actor's hold go (the ownership record says released), if
/// this node can still reach the bucket.
fn release(data: &mut HostState) {
    if let (Some(mut replica), Some(c)) = (data.replica.take(), &data.shared.cluster)
        && c.cluster.is_live(&c.node)
        && let Err(e) = replica.release()
    {
        tracing::warn!(actor = %data.key, "releasing the hold: {e}");
    }
}

/// Cluster: gives the actor up after a failed upload. Its local writes are not
/// kept: the next event restores what the bucket holds.
fn give_up(shared: &Arc<Shared>, resident: &mut Option<Resident>, key: &ActorKey) {
    if let Some(r) = resident.as_mut()
        && let Some(mut replica) = r.store.data_mut().replica.take()
    {
        replica.forget();
    }
    hibernate(resident);
    crate::replication::forget_head(shared, key);
}

/// Why an event failed, in words for the caller.
type Failure = String;

fn handle(shared: &Arc<Shared>, slot: &Arc<Slot>, resident: &mut Option<Resident>, job: Job) {
    let key = slot.key.clone();
    let guest_event = !matches!(
        job.kind,
        EventKind::Inspect { .. } | EventKind::Barrier { .. } | EventKind::Hibernate { .. }
    );
    if guest_event {
        if shared.halted(&key.app) {
            // Ordered shutdown (or the app deleted): no new guest code; its waiter may have answered already.
            if take_ticket(&job.ticket, ABANDONED) {
                fail_job(job.kind, SHUTTING_DOWN);
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
            let r = match prepare(shared, slot, resident, Open::Existing) {
                Ok(Prepared::Ready(r)) => match &r.store.data().db {
                    Db::Open(db) => db.dump_tables().map_err(|e| e.to_string()),
                    _ => Err("the database is closed".into()),
                },
                Ok(Prepared::Absent) => Err(format!("no such actor: {key} has no database")),
                Ok(Prepared::Elsewhere(s)) => {
                    s.enqueue(&key, Job::new(EventKind::Inspect { reply }, job.chain));
                    return;
                }
                Err(e) => Err(e),
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
            operator_delete(shared, slot, resident, req);
            return;
        }
        EventKind::Expire { etag, done } => {
            let _ = done.send(expire(shared, slot, resident, etag));
            return;
        }
        // Socket events of an actor deleted since they were queued, or for a socket
        // that is gone, run no guest code: they would create a new actor.
        EventKind::SocketOpen { id, .. } | EventKind::SocketMessage { id, .. }
            if job.generation != slot.lock().generation || !shared.socket_belongs_to(&key, id) =>
        {
            return;
        }
        EventKind::SocketClose { .. } if job.generation != slot.lock().generation => return,
        EventKind::Request {
            respond,
            require_existing: true,
            ..
        } if !crate::replication::exists(shared, &key) => {
            let _ = respond.send(crate::http_types::HttpResponse::host_text(
                404,
                format!("no such actor: {key} (its class is `existing`: only calls from the app create actors)"),
            ));
            return;
        }
        other => other,
    };
    let label = kind.label();
    if let EventKind::Alarm { ran } = kind {
        run_alarm(shared, slot, resident, ran, job.chain);
        return;
    }
    shared.metrics.inc(EVENTS_TOTAL, label);
    let res = match prepare(shared, slot, resident, Open::Create) {
        Ok(Prepared::Ready(r)) => r,
        Ok(Prepared::Absent) => {
            fail_job(kind, "host bug: the database was not created");
            return;
        }
        Ok(Prepared::Elsewhere(s)) => {
            s.enqueue(&key, Job::new(kind, job.chain));
            return;
        }
        Err(why) => {
            shared.metrics.inc(EVENT_FAILURES_TOTAL, label);
            fail_job(kind, &why);
            return;
        }
    };
    let outcome = run_event(shared, res, kind, job.chain);
    finish(shared, slot, resident, outcome, label);
}

/// An alarm runs guest code only if the actor exists and its own alarm (in
/// its database, not the index or a cache) is due.
fn run_alarm(
    shared: &Arc<Shared>,
    slot: &Arc<Slot>,
    resident: &mut Option<Resident>,
    ran: oneshot::Sender<bool>,
    chain: Vec<ActorKey>,
) {
    let key = slot.key.clone();
    let res = match prepare(shared, slot, resident, Open::Existing) {
        Ok(Prepared::Ready(r)) => r,
        Ok(Prepared::Absent) => {
            // No actor: the entry is left over from a delete.
            let _ = shared.alarms.remove(&key);
            let _ = ran.send(false);
            return;
        }
        Ok(Prepared::Elsewhere(s)) => {
            s.enqueue(&key, Job::new(EventKind::Alarm { ran }, chain));
            return;
        }
        Err(why) => {
            tracing::warn!(actor = %key, "alarm not run: {why}");
            let _ = ran.send(false);
            return;
        }
    };
    let now = shared.clock.now_ms();
    let data = res.store.data_mut();
    data.reload_alarm();
    match data.alarm {
        Some(at) if at <= now => {
            if let Db::Open(db) = &data.db
                && let Err(e) = db.meta_set(META_ALARM, None)
            {
                tracing::error!(actor = %key, "clearing a due alarm: {e}");
                let _ = ran.send(false);
                return;
            }
            data.alarm = None;
            let _ = shared.alarms.remove(&key);
            shared.metrics.inc(EVENTS_TOTAL, "alarm");
            let outcome = run_event(shared, res, EventKind::Alarm { ran }, chain);
            finish(shared, slot, resident, outcome, "alarm");
        }
        Some(_) => {
            // The index was early; reload_alarm pointed it at the real time.
            let _ = ran.send(false);
        }
        None => {
            // An entry left for an actor with no alarm wakes nothing.
            let _ = shared.alarms.remove(&key);
            let _ = ran.send(false);
        }
    }
}

/// How `prepare` may open an actor.
enum Open {
    /// Creating it if it does not exist (an event).
    Create,
    /// Only if it exists (host jobs, alarms).
    Existing,
    /// Cluster, idle expiry: only if it is not resident here and its ownership
    /// record is exactly this version, naming nobody; otherwise `Absent`.
    Unchanged(crate::bucket::ETag),
}

/// Finishes an unfinished delete, opens the database (creating it only for
/// [`Open::Create`]) and makes the store.
fn prepare<'a>(
    shared: &Arc<Shared>,
    slot: &Arc<Slot>,
    resident: &'a mut Option<Resident>,
    open: Open,
) -> Result<Prepared<'a>, Failure> {
    let key = &slot.key;
    let create = matches!(open, Open::Create);
    let unchanged = match &open {
        Open::Unchanged(etag) => {
            if resident.is_some() {
                // Resident here: active, never expired (the job never counts a hold it has).
                return Ok(Prepared::Absent);
            }
            Some(etag)
        }
        Open::Create | Open::Existing => None,
    };
    if resident.is_none() && shared.state.removal_pending(key) {
        let how = slot.lock().pending_removal.take();
        // The marker of the unfinished removal already holds its record.
        let record = how.unwrap_or(DeleteHow::SelfDelete).record(shared.clock.now_ms());
        match shared.state.remove(key, &record) {
            Ok(()) => {
                if let Some(how) = how {
                    shared.metrics.inc(DELETES_TOTAL, how.label());
                }
                let _ = shared.alarms.remove(key);
            }
            Err(e) => {
                slot.lock().pending_removal = how;
                return Err(format!(
                    "{key} was deleted but its files could not be removed ({e}); \
                     the host retries before its next event"
                ));
            }
        }
    }
    let mut replica = None;
    if resident.is_none() && shared.cluster.is_some() {
        match crate::replication::take(shared, key, create, unchanged)? {
            crate::replication::Taken::Here(r) => replica = Some(*r),
            crate::replication::Taken::Absent => return Ok(Prepared::Absent),
            crate::replication::Taken::Elsewhere(s) => return Ok(Prepared::Elsewhere(s)),
        }
    } else if resident.is_none() && !create && !shared.state.exists(key) {
        return Ok(Prepared::Absent);
    }
    if resident.is_none() {
        let mut data = HostState::new(shared.clone(), key.clone());
        data.replica = replica;
        let mut store = Store::new(&shared.engine, data);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        *resident = Some(Resident { store, instance: None });
    }
    let Some(r) = resident.as_mut() else {
        return Err("host bug: no resident".into());
    };
    if matches!(r.store.data().db, Db::NotOpen) {
        shared
            .state
            .prepare(key)
            .map_err(|e| format!("creating the directory of {key}: {e}"))?;
        let created = !shared.state.exists(key);
        let db = ActorDb::open(&shared.state.db_path(key)).map_err(|e| e.to_string())?;
        if created
            && shared.cluster.is_none()
            && let Some(record) = shared.state.last_deletion(key)
        {
            // A single node's removal record goes into the new database, as a
            // cluster's reset carries it (context.previous-deletion reads it).
            db.meta_set(META_DELETED, Some(&record)).map_err(|e| e.to_string())?;
        }
        let data = r.store.data_mut();
        data.previous_deletion = db.meta_get(META_DELETED).ok().flatten();
        data.operator_marker = db.meta_get(META_OPERATOR_DELETE).ok().flatten();
        data.db = Db::Open(db);
        data.reload_alarm();
    }
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
    Elsewhere(Arc<Shared>),
}

/// Answers the event's caller with the reason the event failed.
type AnswerFailure = Box<dyn FnOnce(String) + Send>;

/// How an event ended.
struct Outcome {
    trapped: Option<String>,
}

/// Starts the clock of a guest call: wasm is interrupted by the epoch, SQL by the database's progress handler.
fn set_deadline(shared: &Shared, store: &mut Store<HostState>) {
    store.set_epoch_deadline(deadline_ticks(shared));
    let deadline = std::time::Instant::now() + shared.config.event_timeout;
    store.data_mut().ev.deadline = Some(deadline);
    if let Db::Open(db) = &store.data().db {
        db.set_deadline(Some(deadline));
    }
}

fn deadline_ticks(shared: &Shared) -> u64 {
    (shared.config.event_timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
}

fn describe_trap(shared: &Shared, store: &Store<HostState>, e: &wasmtime::Error) -> String {
    let timed_out = e.downcast_ref::<wasmtime::Trap>() == Some(&wasmtime::Trap::Interrupt);
    let mut msg = if timed_out {
        format!(
            "the event ran longer than its limit of {:?} and was interrupted \
             (an endless loop, slow SQL, or a call that did not come back in time?)",
            shared.config.event_timeout
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

fn run_event(shared: &Arc<Shared>, res: &mut Resident, kind: EventKind, chain: Vec<ActorKey>) -> Outcome {
    let key = res.store.data().key.clone();
    let data = res.store.data_mut();
    data.stderr_mark = data.stderr.contents().len();
    data.ev = EventState {
        chain,
        ..EventState::default()
    };
    // Instantiate on first use.
    if res.instance.is_none() {
        let class = match shared.class(&key) {
            Ok(c) => c,
            Err(e) => return fail_kind(kind, &e.to_string()),
        };
        set_deadline(shared, &mut res.store);
        match class.pre.instantiate(&mut res.store) {
            Ok(i) => res.instance = Some(i),
            Err(e) => {
                let why = format!("instantiating the component failed: {e:#}");
                return fail_kind(kind, &why);
            }
        }
    }
    let Some(instance) = res.instance.as_ref() else {
        return fail_kind(kind, "host bug: no instance");
    };
    let events = instance.wasmkeep_actor_events();

    // on-init, once per new database, in the same event.
    let initialized = match &res.store.data().db {
        Db::Open(db) => db.meta_get(META_INITIALIZED).map(|v| v.is_some()),
        _ => Ok(true),
    };
    match initialized {
        Err(e) => return fail_kind(kind, &e.to_string()),
        Ok(false) => {
            set_deadline(shared, &mut res.store);
            if let Err(e) = events.call_on_init(&mut res.store) {
                let why = format!(
                    "on-init failed, so the event did not run: {}",
                    describe_trap(shared, &res.store, &e)
                );
                return Outcome {
                    trapped: Some(fail_kind(kind, &why).trapped.unwrap_or(why)),
                };
            }
            let data = res.store.data_mut();
            let mut rolled_back = false;
            if let Db::Open(db) = &data.db {
                if db.rollback_if_open() {
                    tracing::warn!(actor = %key, "on-init left a transaction open: rolled back");
                    rolled_back = true;
                }
                if let Err(e) = db.meta_set(META_INITIALIZED, Some("1")) {
                    return fail_kind(kind, &e.to_string());
                }
            }
            if rolled_back {
                data.reload_alarm();
            }
        }
        Ok(true) => {}
    }

    set_deadline(shared, &mut res.store);
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
            let why = describe_trap(shared, &res.store, &e);
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

fn fail_kind(kind: EventKind, why: &str) -> Outcome {
    fail_job(kind, why);
    Outcome {
        trapped: Some(why.to_owned()),
    }
}

/// Answers a job that could not run.
fn fail_job(kind: EventKind, why: &str) {
    match kind {
        EventKind::Request { respond, .. } => {
            let _ = respond.send(HttpResponse::host_text(503, why));
        }
        EventKind::Call { reply, .. } => {
            let _ = reply.send(Err(CallFailure::Failed(why.to_owned())));
        }
        EventKind::Alarm { ran } => {
            let _ = ran.send(false);
        }
        EventKind::Inspect { reply } => {
            let _ = reply.send(Err(why.to_owned()));
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

/// The end of an event: traps, transactions left open, and deletes.
fn finish(shared: &Arc<Shared>, slot: &Arc<Slot>, resident: &mut Option<Resident>, outcome: Outcome, label: &str) {
    let Some(res) = resident.as_mut() else { return };
    let key = slot.key.clone();
    let delete = res.store.data().ev.delete;
    if let Some(why) = &outcome.trapped {
        shared.metrics.inc(EVENT_FAILURES_TOTAL, label);
        tracing::warn!(actor = %key, "{why}");
    }
    {
        let data = res.store.data_mut();
        if let Db::Open(db) = &data.db {
            if db.rollback_if_open() {
                if outcome.trapped.is_none() {
                    tracing::warn!(actor = %key, "the event ended with a transaction open: rolled back");
                }
                data.reload_alarm();
            }
        }
    }
    let cut_off = label == "request" && shared.cluster.is_some() && shared.faults.take(FaultKind::CutOffAfterAnswer);
    if cut_off && let Some(c) = &shared.cluster {
        // The node answered and is cut off now: nothing it does from here counts.
        tracing::warn!(node = %c.node, "cut off after answering (injected fault)");
        c.cluster.cut_off(&c.node);
    }
    let stopped = resident.as_ref().is_some_and(|r| r.store.data().ev.replication_stopped);
    if stopped {
        give_up(shared, resident, &key);
        return;
    }
    if let Some(how) = delete {
        finish_delete(shared, slot, resident, how);
        return;
    }
    if shared.cluster.is_some()
        && let Some(res) = resident.as_mut()
        && let Err(why) = replicate_at_end(shared, res.store.data_mut())
    {
        tracing::warn!(actor = %key, "{why}");
        give_up(shared, resident, &key);
        return;
    }
    let output_full = resident.as_ref().is_some_and(|r| r.store.data().output_nearly_full());
    if outcome.trapped.is_some() || output_full {
        // A trapped instance may be in any state, and one whose output buffer is
        // filling up would soon fail to print: the next event gets a fresh one.
        hibernate(resident);
    }
}

/// Cluster: uploads the event's writes (if any) at its end.
fn replicate_at_end(shared: &Arc<Shared>, data: &mut HostState) -> Result<(), String> {
    let Some(c) = &shared.cluster else { return Ok(()) };
    let Db::Open(db) = &data.db else { return Ok(()) };
    let image = db.image().map_err(|e| e.to_string())?;
    let Some(replica) = data.replica.as_mut() else {
        return Ok(());
    };
    match replica.upload_if_changed(&image, &c.live()) {
        Ok(_) => {
            crate::replication::note_head(shared, &data.key, replica.head());
            Ok(())
        }
        Err(e) => Err(format!(
            "the event's writes could not be replicated ({e}); they are not kept, and the next event restores \
             what the bucket holds"
        )),
    }
}

/// ADR 0028 §3: an operator delete request, carried out in the actor's
/// mailbox after the jobs queued before it. It runs no guest code: absent →
/// `.absent`; held by another node → that node's mailbox; carried out before
/// (the replay marker) → `.done`; open sockets → closed with 1000 "actor
/// deleted", their close events run, then the job again; otherwise the reset
/// with the deletion and replay markers, and `.done` once it is acknowledged.
fn operator_delete(
    shared: &Arc<Shared>,
    slot: &Arc<Slot>,
    resident: &mut Option<Resident>,
    req: crate::operator::DeleteRequest,
) {
    use crate::operator::Outcome;
    let key = slot.key.clone();
    if shared.cluster.is_none() {
        return;
    }
    let r = match prepare(shared, slot, resident, Open::Existing) {
        Ok(Prepared::Ready(r)) => r,
        Ok(Prepared::Absent) => return finish_request(shared, &req, Outcome::Absent),
        Ok(Prepared::Elsewhere(s)) => {
            shared.operator_released(&req);
            return s.enqueue(&key, Job::new(EventKind::OperatorDelete { req }, Vec::new()));
        }
        Err(e) => {
            // The request stays for a later pass.
            tracing::warn!(actor = %key, "operator delete {}: {e}", req.id);
            return shared.operator_released(&req);
        }
    };
    let data = r.store.data_mut();
    if data.operator_marker.as_deref().is_some_and(|m| req.carried_out_by(m)) {
        // Carried out before (its key could not be deleted, or it was listed
        // twice). The hold restored and fenced the history: report it done.
        return finish_request(shared, &req, Outcome::Done);
    }
    let open = shared.sockets_of(&key);
    if !open.is_empty() {
        // Only now that the delete will run: close them; their close events run
        // before the job, queued again behind them.
        for id in open {
            let _ = shared.socket_close_by_actor(&key, id, 1000, "actor deleted".into());
        }
        return shared.enqueue(&key, Job::new(EventKind::OperatorDelete { req }, Vec::new()));
    }
    data.operator_marker = Some(req.marker());
    match delete_without_guest(shared, slot, resident, DeleteHow::Operator) {
        Ok(()) => finish_request(shared, &req, Outcome::Done),
        Err(e) => {
            tracing::warn!(actor = %key, "operator delete {} was not recorded ({e}); the request stays", req.id);
            shared.operator_released(&req);
        }
    }
}

/// ADR 0028 §4: expires the actor if its ownership record is still the
/// version the listing showed (a wake since makes the acquire lose), and it
/// has no pending alarm (its own database says) and no open socket. True if
/// it was deleted.
fn expire(shared: &Arc<Shared>, slot: &Arc<Slot>, resident: &mut Option<Resident>, etag: crate::bucket::ETag) -> bool {
    let key = slot.key.clone();
    let busy = match prepare(shared, slot, resident, Open::Unchanged(etag)) {
        Ok(Prepared::Ready(r)) => r.store.data().alarm.is_some() || !shared.sockets_of(&key).is_empty(),
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
    match delete_without_guest(shared, slot, resident, DeleteHow::Expired) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(actor = %key, "idle expiry was not recorded ({e}); the data stays");
            false
        }
    }
}

/// The delete routine of ADR 0028 §1 for host jobs (no guest code): the reset
/// with when and how and the operator marker the actor carries, then what the
/// end of a deleting event does. On failure the actor is given up.
fn delete_without_guest(
    shared: &Arc<Shared>,
    slot: &Arc<Slot>,
    resident: &mut Option<Resident>,
    how: DeleteHow,
) -> Result<(), String> {
    let key = slot.key.clone();
    let Some(c) = &shared.cluster else {
        return Err("host bug: no cluster".into());
    };
    let Some(r) = resident.as_mut() else {
        return Err("host bug: no resident".into());
    };
    let data = r.store.data_mut();
    let marks = data.deletion_marks(how);
    let marks: Vec<(&str, &str)> = marks.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let reset = ActorDb::empty_image(&marks)
        .map_err(|e| e.to_string())
        .and_then(|empty| match data.replica.as_mut() {
            Some(replica) => replica.delete(&empty, &c.live()).map_err(|e| e.to_string()),
            None => Err("host bug: no replica".into()),
        });
    match reset {
        Ok(pos) => {
            shared.metrics.inc(DELETES_TOTAL, how.label());
            if let Db::Open(db) = std::mem::replace(&mut data.db, Db::DeletedInEvent) {
                let _ = db.close_for_delete();
            }
            data.ev.reset = Some(pos);
            data.ev.files_removed = false;
            finish_delete(shared, slot, resident, how);
            Ok(())
        }
        Err(e) => {
            shared.metrics.inc(DELETE_FAILURES_TOTAL, how.label());
            give_up(shared, resident, &key);
            Err(e)
        }
    }
}

/// Writes a request's outcome beside it, then deletes the request. If the
/// outcome cannot be written the request stays for the next pass (its replay
/// marker makes that pass report it done).
fn finish_request(shared: &Arc<Shared>, req: &crate::operator::DeleteRequest, outcome: crate::operator::Outcome) {
    if let Some(c) = &shared.cluster {
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
    shared.operator_released(req);
}

/// ADR 0028 §1 at the end of a deleting event: the alarm forgotten, sockets
/// closed with 1000 "actor deleted", files removed, the actor given up. In a
/// cluster, `delete-self`'s reset is uploaded now (lost if that fails), and
/// after an acknowledged reset its snapshot and the erase follow.
fn finish_delete(shared: &Arc<Shared>, slot: &Arc<Slot>, resident: &mut Option<Resident>, how: DeleteHow) {
    let key = slot.key.clone();
    let files_removed = resident.as_ref().is_some_and(|r| r.store.data().ev.files_removed);
    if let Some(c) = &shared.cluster
        && let Some(res) = resident.as_mut()
    {
        let data = res.store.data_mut();
        let reset = match data.ev.reset {
            Some(pos) => Some(pos),
            None => {
                let marks = data.deletion_marks(how);
                let marks: Vec<(&str, &str)> = marks.iter().map(|(k, v)| (*k, v.as_str())).collect();
                let uploaded = ActorDb::empty_image(&marks)
                    .map_err(|e| e.to_string())
                    .and_then(|empty| match data.replica.as_mut() {
                        Some(r) => r.delete(&empty, &c.live()).map_err(|e| e.to_string()),
                        None => Err("no replica".into()),
                    });
                match uploaded {
                    Ok(pos) => {
                        shared.metrics.inc(DELETES_TOTAL, how.label());
                        Some(pos)
                    }
                    Err(e) => {
                        // delete-self is lost when its upload fails: the next event restores the data.
                        shared.metrics.inc(DELETE_FAILURES_TOTAL, how.label());
                        tracing::warn!(actor = %key, "delete-self was not recorded ({e}); the data stays");
                        give_up(shared, resident, &key);
                        return;
                    }
                }
            }
        };
        if let (Some(pos), Some(replica)) = (reset, data.replica.as_mut()) {
            let empty = ActorDb::empty_image(&[]).unwrap_or_default();
            match replica.collect_after_delete(pos, &empty, &c.live()) {
                Ok(0) => {}
                Ok(_) | Err(_) => shared.metrics.inc(HISTORY_COLLECT_FAILURES_TOTAL, ""),
            }
        }
    }
    // Give the actor up.
    close_resident(resident, true);
    // From here, socket events queued for the deleted actor run no guest code.
    slot.lock().generation += 1;
    shared.close_sockets_of_deleted(&key);
    crate::replication::note_head(shared, &key, None);
    let single = shared.cluster.is_none();
    let removed = files_removed
        || {
            match shared.state.remove(&key, &how.record(shared.clock.now_ms())) {
                Ok(()) => {
                    if single {
                        shared.metrics.inc(DELETES_TOTAL, how.label());
                    }
                    true
                }
                Err(e) => {
                    if single {
                        shared.metrics.inc(DELETE_FAILURES_TOTAL, how.label());
                    }
                    tracing::error!(actor = %key, "removing a deleted actor's files failed ({e}); retried before its next event");
                    slot.lock().pending_removal = Some(how);
                    false
                }
            }
        };
    if removed {
        let _ = shared.alarms.remove(&key);
    }
    slot.lock().status = ActorStatus::Deleted;
}
