//! The actor cell: what one actor's worker owns for it (workerd's
//! `Worker::Actor` shape; docs/adr/022-actor-cell.md). It holds the node's
//! host, the actor's mailbox and, while the actor is resident, its store and
//! instance; every job the worker takes from the mailbox is one of its
//! methods: a guest event ([`guest_event`]), the host's own jobs
//! ([`host_jobs`]), the one delete routine ([`delete`]), a restore
//! ([`restore`]) and the one a guest asked for ([`guest_restore`]).

mod delete;
mod guest_event;
mod guest_restore;
mod host_jobs;
mod restore;
mod run_job;

use crate::actor_db::ActorDb;
use crate::cluster::NodeMailboxes;
use crate::event_error::EventError;
use crate::imports::HostState;
use crate::node::Host;
use crate::resident::Resident;
use crate::scheduler::Mailbox;
use crate::storage::{OpenMode, Opened, StorageError};
use std::sync::Arc;
use wasmtime::Store;

/// One actor as its worker holds it.
pub(crate) struct ActorCell {
    host: Arc<Host>,
    mailbox: Arc<Mailbox>,
    /// Its store and instance while it is resident here.
    resident: Option<Resident>,
}

/// What [`ActorCell::prepare`] found.
pub(crate) enum Prepared<'a> {
    /// The actor is resident here, its database open.
    Ready(Ready<'a>),
    /// It does not exist and was not created.
    Absent,
    /// Another node holds it (cluster): the job goes there.
    Elsewhere(Arc<dyn NodeMailboxes>),
}

/// A resident actor with its host beside it: the cell's parts borrowed
/// apart, so an event can use both.
pub(crate) struct Ready<'a> {
    pub(crate) host: &'a Arc<Host>,
    pub(crate) resident: &'a mut Resident,
}

impl ActorCell {
    /// The cell of the actor whose mailbox this is; nothing is opened yet.
    pub(crate) fn new(host: Arc<Host>, mailbox: Arc<Mailbox>) -> Self {
        Self {
            host,
            mailbox,
            resident: None,
        }
    }

    /// Whether the actor is resident here (its files open, its hold kept).
    pub(crate) fn is_resident(&self) -> bool {
        self.resident.is_some()
    }

    /// Opens the actor through the storage (finishing an unfinished delete,
    /// creating it only for [`OpenMode::Create`]) and makes the store.
    ///
    /// # Errors
    /// The storage could not open it, or its quota could not be set.
    pub(crate) fn prepare(&mut self, mode: OpenMode) -> Result<Prepared<'_>, EventError> {
        if self.resident.is_some() && matches!(mode, OpenMode::Unchanged(_)) {
            // Resident here: active, never expired (the job never counts a hold it has).
            return Ok(Prepared::Absent);
        }
        if let Some(r) = self.resident.as_mut()
            && let Err(e) = r.store.data_mut().actor.wake(self.host.config().max_actor_bytes)
        {
            // Opened again from the start below: through the storage, which
            // says what stands in the way if it still cannot.
            tracing::warn!(actor = %self.mailbox.key, "reopening an idle actor's database: {e}");
            self.hibernate();
            self.mailbox.closed();
        }
        let host = &self.host;
        let key = &self.mailbox.key;
        if self.resident.is_none() {
            let opened = match host.storage().open(key, mode.clone()) {
                // Idle actors hold files the process ran out of: closing
                // their databases makes room (ADR 055).
                Err(StorageError::OutOfFiles { .. }) if host.rest_parked_for_files() > 0 => {
                    host.storage().open(key, mode)
                }
                other => other,
            };
            let actor = match opened? {
                Opened::Here(actor) => actor,
                Opened::Absent => return Ok(Prepared::Absent),
                Opened::Elsewhere(node) => {
                    // A node of this process takes the job into its mailbox; a
                    // node process is reached over HTTP by the dev server.
                    let mailboxes = host.node_mailboxes(&node);
                    if mailboxes.is_none() {
                        // For the listings: the actor is that node's (issue 57).
                        self.mailbox.held_by(node.clone());
                    }
                    return mailboxes.map(Prepared::Elsewhere).ok_or_else(|| {
                        StorageError::HolderUnreachable {
                            key: key.clone(),
                            address: host.node_address(&node),
                            node,
                        }
                        .into()
                    });
                }
            };
            if let Some(db) = actor.open_db()
                && let Err(e) = db.set_quota(host.config().max_actor_bytes)
            {
                return Err(StorageError::from(e).into());
            }
            let data = HostState::new(host.handles_for_imports(), key.clone(), actor);
            let mut store = Store::new(host.engine(), data);
            store.limiter(|s| &mut s.limits);
            // The epoch says when to look; the event's deadline (which a
            // wait for the bucket moves on, `imports::unbilled`) says whether
            // its time is up.
            store.epoch_deadline_callback(|ctx| {
                let left = ctx.data().ev.deadline.map_or(std::time::Duration::ZERO, |d| {
                    d.saturating_duration_since(std::time::Instant::now())
                });
                Ok(if left.is_zero() {
                    wasmtime::UpdateDeadline::Interrupt
                } else {
                    wasmtime::UpdateDeadline::Continue(crate::guest_call::ticks_for(left))
                })
            });
            store.data_mut().reload_alarm();
            self.resident = Some(Resident {
                store,
                instance: None,
                class: None,
                reloads_seen: host.class_reloads(),
            });
        }
        let Some(resident) = self.resident.as_mut() else {
            return Err(EventError::Host("no resident".into()));
        };
        self.mailbox.opened();
        Ok(Prepared::Ready(Ready { host, resident }))
    }

    /// The actor has waited a while for its next event: it stays resident
    /// (instance and hold kept) with its database closed, so it holds no
    /// file and none of SQLite's memory until its next job (ADR 045).
    /// Returns whether it closed the database.
    pub(crate) fn rest(&mut self) -> bool {
        self.resident.as_mut().is_some_and(|r| r.store.data_mut().actor.rest())
    }

    /// The data version of the actor's open database (none when it is not
    /// open): two readings around a job tell whether the job committed
    /// (ADR 048). A job that opened the database counts as one that did.
    pub(crate) fn db_version(&self) -> Option<u32> {
        self.resident
            .as_ref()
            .and_then(|r| r.store.data().actor.open_db())
            .map(ActorDb::data_version)
    }

    /// Drops the instance, closes the database and releases the hold.
    pub(crate) fn hibernate(&mut self) {
        if let Some(r) = self.resident.take() {
            r.store.into_data().actor.release();
        }
    }

    /// Gives the actor up after a failed upload (cluster). Its local writes
    /// are not kept: the next event restores what the bucket holds.
    pub(crate) fn give_up(&mut self) {
        if let Some(r) = self.resident.take() {
            r.store.into_data().actor.give_up();
        }
    }

    /// Lets the actor go if its instance comes from a class `serve --watch`
    /// has replaced since, or if this node is cut off (it holds nothing, not
    /// even what it has resident: opening it again answers 503, and another
    /// node serves it from the bucket). Its state is in its database, its
    /// alarm in the index and its sockets in the host's table, so nothing is
    /// lost.
    pub(crate) fn let_go_if_stale(&mut self) {
        let key = &self.mailbox.key;
        let stale = match self.resident.as_mut() {
            Some(r) => r.class_replaced(&self.host, key) || !self.host.storage().serving(),
            None => false,
        };
        if stale {
            self.hibernate();
        }
    }
}
