//! Events that run guest code in the cell (requests, calls, sockets,
//! alarms), and how an event ends (ADR 0028 §1–2).

use super::delete::DeleteError;
use super::guest_restore::NotRestored;
use super::{ActorCell, Prepared};
use crate::actor_db::META_ALARM;
use crate::address::ActorKey;
use crate::deletion::DeleteHow;
use crate::event_error::{EventError, fail_job};
use crate::failure_kind::FailureKind;
use crate::faults::FaultKind;
use crate::guest_call::{Outcome, run_event};
use crate::job::{GuestEvent, Job};
use crate::last_event::{EventKindName, EventOutcome, LastEvent};
use crate::metrics::{EVENT_FAILURES_TOTAL, EVENTS_TOTAL};
use crate::storage::OpenMode;
use crate::storage::open_actor::Durability;
use tokio::sync::oneshot;

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

/// Whether an event's writes were kept, as its end found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writes {
    /// Kept (or the actor was deleted, or nothing was asked of the storage).
    Kept,
    /// Not acknowledged: the actor goes back to what the bucket holds.
    NotKept,
}

impl ActorCell {
    /// A request, call or socket event: opened (created if need be) and run.
    pub(super) fn run_guest_event(&mut self, kind: GuestEvent, chain: Vec<ActorKey>) {
        let label = kind.label();
        let name = Some(kind.name());
        self.host.metrics().inc(EVENTS_TOTAL, label);
        let ready = match self.prepare(OpenMode::Create) {
            Ok(Prepared::Ready(ready)) => ready,
            Ok(Prepared::Absent) => {
                let why = EventError::Host("the database was not created".into());
                self.record_last(name, EventOutcome::Failed(why.kind()));
                fail_job(kind.into(), &why);
                return;
            }
            Ok(Prepared::Elsewhere(node)) => {
                node.deliver(&self.mailbox.key, Job::new(kind, chain));
                return;
            }
            Err(why) => {
                self.host.metrics().inc(EVENT_FAILURES_TOTAL, label);
                self.record_last(name, EventOutcome::Failed(why.kind()));
                fail_job(kind.into(), &why);
                return;
            }
        };
        // The fault is for the next request to start once it is armed, never for
        // one already running (whose answer may be out already).
        let cut_off_after_answer =
            matches!(kind, GuestEvent::Request { .. }) && ready.host.faults().take(FaultKind::CutOffAfterAnswer);
        let outcome = run_event(ready.host, ready.resident, kind, chain);
        let (ended, _) = self.finish(&outcome, label, cut_off_after_answer);
        self.record_last(name, ended);
    }

    /// Records the actor's last event in its mailbox state (locked by the
    /// event anyway; no map shared by every actor is touched).
    fn record_last(&self, kind: Option<EventKindName>, outcome: EventOutcome) {
        if let Some(kind) = kind {
            let at = self.host.clock().now_ms();
            self.mailbox.record_last(LastEvent::new(at, kind, outcome));
        }
    }

    /// An alarm runs guest code only if the actor exists and its own alarm
    /// (in its database, not the index or a cache) is due.
    pub(super) fn run_alarm(&mut self, ran: oneshot::Sender<bool>, chain: Vec<ActorKey>) {
        let key = self.mailbox.key.clone();
        let ready = match self.prepare(OpenMode::Existing) {
            Ok(Prepared::Ready(ready)) => ready,
            Ok(Prepared::Absent) => {
                // No actor: the entry is left over from a delete.
                let _ = self.host.alarms().remove(&key);
                let _ = ran.send(false);
                return;
            }
            Ok(Prepared::Elsewhere(node)) => {
                node.deliver(&key, Job::new(GuestEvent::Alarm { ran }, chain));
                return;
            }
            Err(why) => {
                tracing::warn!(actor = %key, "alarm not run: {why}");
                self.record_last(Some(EventKindName::Alarm), EventOutcome::Failed(why.kind()));
                let _ = ran.send(false);
                return;
            }
        };
        let host = ready.host;
        let now = host.clock().now_ms();
        let data = ready.resident.store.data_mut();
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
                let _ = host.alarms().remove(&key);
                host.metrics().inc(EVENTS_TOTAL, "alarm");
                // Whoever waits for the alarm hears of it once the event has
                // ended, its writes kept or not (and the alarm set again if
                // not): a pass run right after sees what this one left.
                let (handler_ran, heard) = oneshot::channel();
                let outcome = run_event(host, ready.resident, GuestEvent::Alarm { ran: handler_ran }, chain);
                let (ended, writes) = self.finish(&outcome, "alarm", false);
                if writes == Writes::NotKept {
                    // At least once: what the bucket holds still has this
                    // alarm due (clearing it was one of the writes not
                    // kept), so the index gets it back and it runs again.
                    if let Err(e) = self.host.alarms().set(&key, at) {
                        tracing::error!(actor = %key, "an alarm whose writes were not kept could not be set again: {e}");
                    }
                }
                self.record_last(Some(EventKindName::Alarm), ended);
                let mut heard = heard;
                let _ = ran.send(heard.try_recv().unwrap_or(false));
            }
            Some(_) => {
                // The index was early; reload_alarm pointed it at the real time.
                let _ = ran.send(false);
            }
            None => {
                // An entry left for an actor with no alarm wakes nothing.
                let _ = host.alarms().remove(&key);
                let _ = ran.send(false);
            }
        }
    }

    /// The end of an event: traps, transactions left open, then [`EventEnd`].
    /// Returns how the event ended: its own failure, else the end's (writes
    /// not kept, a delete not recorded), else ok; and whether its writes
    /// were kept.
    fn finish(&mut self, outcome: &Outcome, label: &str, cut_off_after_answer: bool) -> (EventOutcome, Writes) {
        let host = &self.host;
        let key = &self.mailbox.key;
        let ran = outcome.failure.map_or(EventOutcome::Ok, EventOutcome::Failed);
        let Some(res) = self.resident.as_mut() else {
            return (ran, Writes::Kept);
        };
        if let Some(why) = &outcome.trapped {
            host.metrics().inc(EVENT_FAILURES_TOTAL, label);
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
        let cut_off = cut_off_after_answer && host.storage().cut_off_this_node();
        if cut_off {
            tracing::warn!(actor = %key, "this node is cut off after answering (injected fault)");
        }
        // A host that crashed after the answer keeps what was kept before it
        // and nothing of the event's end: the actor starts again from there.
        let crashed = data.ev.crash == crate::imports::CrashAfterAnswer::Crashed;
        if crashed {
            tracing::warn!(actor = %key, "{}", crate::imports::CRASHED_AFTER_ANSWER);
        }
        // A node cut off holds nothing: nothing it does from here counts.
        let end = if cut_off || crashed || data.actor.durability() == Durability::WritesLost {
            EventEnd::GivenUp
        } else if let Some(how) = data.ev.requested_delete {
            EventEnd::Deleted(how)
        } else if outcome.trapped.is_some() || data.output_nearly_full() {
            EventEnd::KeptFreshInstance
        } else {
            EventEnd::Kept
        };
        // `restore-on-next-session`: carried out once the writes are kept.
        let restore_after = data.ev.restore_after.take();
        let end_failure = match end {
            EventEnd::GivenUp => {
                if let Some(to) = restore_after {
                    self.drop_guest_restore(to, NotRestored::WritesNotKept);
                }
                self.give_up();
                Some(if cut_off {
                    FailureKind::CutOff
                } else if crashed {
                    FailureKind::Host
                } else {
                    FailureKind::NotAcknowledged
                })
            }
            EventEnd::Deleted(how) => {
                if let Some(to) = restore_after {
                    self.drop_guest_restore(to, NotRestored::Deleted);
                }
                // A delete that was not recorded said why in the log; the data stays.
                self.delete(how).err().map(|e| match e {
                    DeleteError::NotResident => FailureKind::Host,
                    DeleteError::NotRecorded(e) => EventError::Storage(e).kind(),
                })
            }
            EventEnd::Kept | EventEnd::KeptFreshInstance => {
                if let Err(e) = data.actor.end_event() {
                    tracing::warn!(
                        actor = %key,
                        "the event's writes could not be replicated ({e}); they are not kept, and the next event \
                         restores what the bucket holds"
                    );
                    if let Some(to) = restore_after {
                        self.drop_guest_restore(to, NotRestored::WritesNotKept);
                    }
                    self.give_up();
                    Some(EventError::Storage(e).kind())
                } else {
                    if end == EventEnd::KeptFreshInstance {
                        self.hibernate();
                    }
                    if let Some(to) = restore_after {
                        self.restore_for_guest(to);
                    }
                    None
                }
            }
        };
        let writes = match (end, end_failure) {
            (EventEnd::GivenUp, _) | (EventEnd::Kept | EventEnd::KeptFreshInstance, Some(_)) => Writes::NotKept,
            _ => Writes::Kept,
        };
        let outcome = match (ran, end_failure) {
            (EventOutcome::Ok, Some(kind)) => EventOutcome::Failed(kind),
            (ran, _) => ran,
        };
        (outcome, writes)
    }
}
