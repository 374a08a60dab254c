//! An actor resident on this node: its wasmtime store (with its imports'
//! state and its storage) and, once needed, its instance; opening it through
//! the storage, letting it go, giving it up, and ADR 0028's one delete routine.

use crate::bindings::Actor;
use crate::cluster::NodeMailboxes;
use crate::deletion::DeleteHow;
use crate::event_error::EventError;
use crate::imports::HostState;
use crate::metrics::{DELETE_FAILURES_TOTAL, DELETES_TOTAL};
use crate::node::{ActorStatus, Class, Host, Mailbox};
use crate::storage::{OpenMode, Opened, StorageError};
use std::sync::Arc;
use wasmtime::Store;

/// A resident actor: its store (with the database) and, once needed, its instance.
pub(crate) struct Resident {
    pub(crate) store: Store<HostState>,
    pub(crate) instance: Option<Actor>,
    /// The class the instance was made from: when `serve --watch` reloads
    /// it, the instance is replaced before its next event.
    pub(crate) class: Option<Arc<Class>>,
    /// The node's reload count when `class` was last known current.
    pub(crate) reloads_seen: u64,
}

impl Resident {
    /// Whether its instance comes from a class since replaced. One atomic
    /// load per event; the class is looked up only after some reload.
    pub(crate) fn class_replaced(&mut self, host: &Host, key: &crate::address::ActorKey) -> bool {
        let reloads = host.class_reloads.load(std::sync::atomic::Ordering::Acquire);
        if reloads == self.reloads_seen {
            return false;
        }
        let replaced = match (&self.class, host.class(key)) {
            (Some(had), Ok(current)) => !Arc::ptr_eq(had, &current),
            _ => false,
        };
        self.reloads_seen = reloads;
        replaced
    }
}

/// Drops the instance, closes the database and releases the hold.
pub(crate) fn hibernate(resident: &mut Option<Resident>) {
    if let Some(r) = resident.take() {
        r.store.into_data().actor.release();
    }
}

/// Gives the actor up after a failed upload (cluster). Its local writes are
/// not kept: the next event restores what the bucket holds.
pub(crate) fn give_up(resident: &mut Option<Resident>) {
    if let Some(r) = resident.take() {
        r.store.into_data().actor.give_up();
    }
}

/// Opens the actor through the storage (finishing an unfinished delete,
/// creating it only for [`OpenMode::Create`]) and makes the store.
pub(crate) fn prepare<'a>(
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
        if let Some(db) = actor.open_db()
            && let Err(e) = db.set_quota(host.config.max_actor_bytes)
        {
            return Err(StorageError::from(e).into());
        }
        let data = HostState::new(host.handles_for_imports(), key.clone(), actor);
        let mut store = Store::new(&host.engine, data);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.data_mut().reload_alarm();
        *resident = Some(Resident {
            store,
            instance: None,
            class: None,
            reloads_seen: host.class_reloads.load(std::sync::atomic::Ordering::Acquire),
        });
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
pub(crate) enum Prepared<'a> {
    /// The actor is resident here, its database open.
    Ready(&'a mut Resident),
    /// It does not exist and was not created.
    Absent,
    /// Another node holds it (cluster): the job goes there.
    Elsewhere(Arc<dyn NodeMailboxes>),
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
pub(crate) fn delete_actor(
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
