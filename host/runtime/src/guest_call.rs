//! Running one guest event in a resident actor: its time limit (the epoch for
//! wasm, a deadline for SQL), on-init once per new database, the export call,
//! and answering the caller when it fails.

use crate::address::ActorKey;
use crate::bindings::{http as wit_http, types as wit};
use crate::event_error::{EventError, fail_job};
use crate::failure_kind::FailureKind;
use crate::faults::FaultKind;
use crate::http_types::{HttpResponse, SocketMessage};
use crate::imports::{EventState, HostState};
use crate::job::{CallFailure, GuestEvent};
use crate::node::Host;
use crate::outparam::{Outparam, ResponseSlot};
use crate::resident::Resident;
use crate::storage::StorageError;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasmtime::Store;

/// How often the engine's epoch moves (the granularity of event time limits).
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Answers the event's caller with the reason the event failed.
pub(crate) type AnswerFailure = Box<dyn FnOnce(String) + Send>;

/// How an event ended.
pub(crate) struct Outcome {
    pub(crate) trapped: Option<String>,
    /// The failure's kind when it failed (a trap or timeout is `guest`).
    pub(crate) failure: Option<FailureKind>,
}

/// Starts the clock of a guest call: wasm is interrupted by the epoch, SQL by the database's progress handler.
pub(crate) fn set_deadline(host: &Host, store: &mut Store<HostState>) {
    store.set_epoch_deadline(deadline_ticks(host));
    let deadline = std::time::Instant::now() + host.config().event_timeout;
    store.data_mut().ev.deadline = Some(deadline);
    if let Some(db) = store.data().actor.open_db() {
        db.set_deadline(Some(deadline));
    }
}

pub(crate) fn deadline_ticks(host: &Host) -> u64 {
    ticks_for(host.config().event_timeout)
}

/// Epoch ticks in `d`, at least one.
pub(crate) fn ticks_for(d: Duration) -> u64 {
    (d.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
}

/// What a failed guest call says to whoever waits for the event: the
/// guest's failure report (or, from an older component, what it printed
/// last), then the trap's own reason. The
/// wasm backtrace is for the host's log, not for an HTTP client (ADR 012).
pub(crate) fn describe_trap(host: &Host, store: &Store<HostState>, e: &wasmtime::Error) -> String {
    let key = &store.data().key;
    tracing::warn!(actor = %key, "guest call failed: {e:?}");
    let trap = e.downcast_ref::<wasmtime::Trap>();
    let mut msg = if trap == Some(&wasmtime::Trap::Interrupt) {
        format!(
            "the event ran longer than its limit of {:?} and was interrupted \
             (an endless loop, slow SQL, or a call that did not come back in time?)",
            host.config().event_timeout
        )
    } else {
        let reason = trap.map_or_else(|| e.root_cause().to_string(), ToString::to_string);
        format!("the event trapped ({reason}; the host's log has its backtrace)")
    };
    let output = store.data().failure_text();
    if !output.is_empty() {
        msg = format!("{output}\n{msg}");
    }
    msg
}

pub(crate) fn run_event(host: &Arc<Host>, res: &mut Resident, kind: GuestEvent, chain: Vec<ActorKey>) -> Outcome {
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
            Ok(i) => {
                res.instance = Some(i);
                res.class = Some(class);
            }
            Err(e) if let Some(why) = crate::instance_pool::no_room(&e, host) => {
                tracing::warn!("no room to instantiate {key}: {e:#}");
                return fail_kind(kind, EventError::NoRoomToInstantiate(why));
            }
            Err(e) => {
                // Its own output first (a constructor's or module init's message).
                let why = format!(
                    "instantiating the component failed: {}",
                    describe_trap(host, &res.store, &e)
                );
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
        Some(db) => db.is_initialized(),
        None => Ok(true),
    };
    match initialized {
        Err(e) => return fail_kind(kind, StorageError::from(e).into()),
        Ok(false) => {
            // on-init and the mark that it ran commit together (ADR 012).
            if let Some(db) = res.store.data().actor.open_db()
                && let Err(e) = db.begin_init()
            {
                return fail_kind(kind, StorageError::from(e).into());
            }
            set_deadline(host, &mut res.store);
            if let Err(e) = events.call_on_init(&mut res.store) {
                let why = format!(
                    "on-init failed, so the event did not run (nothing it wrote is kept, and the next event runs \
                     it again): {}",
                    describe_trap(host, &res.store, &e)
                );
                let data = res.store.data_mut();
                if let Some(db) = data.actor.open_db() {
                    db.abort_init();
                }
                data.reload_alarm();
                return fail_kind(kind, EventError::Guest(why));
            }
            let data = res.store.data_mut();
            if let Some(db) = data.actor.open_db() {
                match db.finish_init(&key.name) {
                    Ok(true) => tracing::warn!(actor = %key, "on-init left a transaction open: rolled back"),
                    Ok(false) => {}
                    Err(e) => {
                        data.reload_alarm();
                        return fail_kind(kind, StorageError::from(e).into());
                    }
                }
            }
            data.reload_alarm();
        }
        Ok(true) => {}
    }

    set_deadline(host, &mut res.store);
    let result: Result<(), (wasmtime::Error, Option<AnswerFailure>)> = match kind {
        GuestEvent::Request { req, respond, .. } => {
            // Taken by the request that runs next once it is armed, never by
            // one already running (whose answer may be out already).
            if host.faults().take(FaultKind::CrashAfterAnswer) {
                res.store.data_mut().ev.crash = crate::imports::CrashAfterAnswer::Armed;
            }
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
            let unanswered = crate::unpoisoned::lock(&slot).take();
            match r {
                Ok(()) => {
                    if let Some(tx) = unanswered {
                        let _ = tx.send(HttpResponse::host_failure(
                            FailureKind::Guest,
                            "the actor's on-request returned without setting a response",
                        ));
                    }
                    Ok(())
                }
                Err(e) => Err((
                    e,
                    unanswered.map(|tx| {
                        Box::new(move |why: String| {
                            let _ = tx.send(HttpResponse::host_failure(FailureKind::Guest, why));
                        }) as AnswerFailure
                    }),
                )),
            }
        }
        GuestEvent::Call { caller, payload, reply } => {
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
                        let _ = reply.send(Err(CallFailure::failed(FailureKind::Guest, why)));
                    })),
                )),
            }
        }
        GuestEvent::Alarm { ran } => {
            let r = events.call_on_alarm(&mut res.store);
            let _ = ran.send(true);
            r.map_err(|e| (e, None))
        }
        GuestEvent::SocketOpen { id, path } => events
            .call_on_socket_open(&mut res.store, id, &path)
            .map_err(|e| (e, None)),
        GuestEvent::SocketMessage { id, msg } => {
            let m = match msg {
                SocketMessage::Text(t) => wit::Message::Text(t),
                SocketMessage::Binary(b) => wit::Message::Binary(b),
            };
            events
                .call_on_socket_message(&mut res.store, id, &m)
                .map_err(|e| (e, None))
        }
        GuestEvent::SocketClose { id, code, reason } => events
            .call_on_socket_close(&mut res.store, id, code, &reason)
            .map_err(|e| (e, None)),
    };
    match result {
        Ok(()) => Outcome {
            trapped: None,
            failure: None,
        },
        Err((e, answer)) => {
            let why = describe_trap(host, &res.store, &e);
            if let Some(answer) = answer {
                answer(why.clone());
            }
            Outcome {
                trapped: Some(why),
                failure: Some(FailureKind::Guest),
            }
        }
    }
}

pub(crate) fn fail_slot(slot: &ResponseSlot, why: &str) -> Outcome {
    if let Some(tx) = crate::unpoisoned::lock(slot).take() {
        let _ = tx.send(HttpResponse::host_failure(FailureKind::Guest, why));
    }
    Outcome {
        trapped: Some(why.to_owned()),
        failure: Some(FailureKind::Guest),
    }
}

pub(crate) fn fail_kind(kind: GuestEvent, why: EventError) -> Outcome {
    let failure = Some(why.kind());
    fail_job(kind.into(), &why);
    Outcome {
        trapped: Some(why.to_string()),
        failure,
    }
}
