//! The admin handle: what the admin API reads and does (listings, tables,
//! logs, counters, an operator's delete of one actor).

use super::*;
use crate::actor_db::LentReadError;
use crate::job::LentRead;
use crate::last_event::LastEvent;

/// What an administrator of one node reads and does: [`Runtime::admin`].
/// Borrowed from its runtime; cheap to make for each call.
#[derive(Clone, Copy)]
pub struct Admin<'a> {
    host: &'a Arc<Host>,
}

impl std::fmt::Debug for Admin<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin").finish_non_exhaustive()
    }
}

impl Runtime {
    /// The admin handle: listings, tables, logs, counters, an operator's
    /// delete of one actor (the dev server's `/_shim/` API).
    pub fn admin(&self) -> Admin<'_> {
        Admin { host: &self.host }
    }
}

impl<'a> Admin<'a> {
    /// The counters.
    pub fn metrics(&self) -> &'a Metrics {
        self.host.metrics()
    }

    /// The last (up to 1000) lines actors logged.
    pub fn logs(&self) -> Vec<LogLine> {
        self.host.logs().lines()
    }

    /// Whether the actor has a database.
    pub fn exists(&self, key: &ActorKey) -> bool {
        actor_exists(self.host, key)
    }

    /// The actor's database path.
    pub fn db_path(&self, key: &ActorKey) -> PathBuf {
        self.host.storage().db_path(key)
    }

    /// Every actor the host knows (in memory or on disk) and its state.
    pub fn actors(&self) -> Vec<ActorInfo> {
        self.listing(|key| self.host.alarms().get(key).ok().flatten())
    }

    /// Every actor the host knows with its status, sorted by key, each with
    /// the alarm `alarm_of` reads for it.
    fn listing(&self, alarm_of: impl Fn(&ActorKey) -> Option<u64>) -> Vec<ActorInfo> {
        let mut seen: HashMap<ActorKey, (ActorStatus, Option<LastEvent>, Option<String>)> = HashMap::new();
        for k in self.host.storage().local_actors() {
            seen.insert(k, (ActorStatus::Hibernated, None, None));
        }
        for listed in self.host.scheduler().listed() {
            if listed.status != ActorStatus::Hibernated || seen.contains_key(&listed.key) {
                seen.insert(listed.key, (listed.status, listed.last_event, listed.held_elsewhere));
            }
        }
        let mut v: Vec<ActorInfo> = seen
            .into_iter()
            .map(|(key, (status, last_event, held_elsewhere))| ActorInfo {
                alarm: alarm_of(&key),
                key,
                status,
                last_event,
                held_elsewhere,
            })
            .collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    /// The actor's last guest event on this node and how it ended (`None`
    /// if none ran here since the host started).
    pub fn last_event(&self, key: &ActorKey) -> Option<LastEvent> {
        self.host.scheduler().last_event(key)
    }

    /// The actor's tables and rows (the host's own table left out), read in
    /// its mailbox, at most 16 MiB of rows in at most 2 s (reading runs the
    /// SQL of the guest's generated columns).
    ///
    /// # Errors
    /// The actor does not exist or its database cannot be read;
    /// [`RuntimeError::TablesTooLarge`], [`RuntimeError::TablesTooSlow`].
    pub fn tables(&self, key: &ActorKey) -> Result<Vec<(String, QueryResult)>, RuntimeError> {
        if !actor_exists(self.host, key) {
            return Err(RuntimeError::NoSuchActor(key.clone()));
        }
        let (tx, rx) = oneshot::channel();
        self.host
            .enqueue(key, Job::new(HostJob::Inspect { reply: tx }, Vec::new()));
        rx.blocking_recv().map_err(|_| worker_stopped())?
    }

    /// Runs `read` on a read-only connection to the actor's database on this
    /// node, in its mailbox after what is queued (ADR 040): its own
    /// connection lent while it is resident (which holds the file
    /// exclusively), else one opened for the read; the actor is not woken.
    /// The connection allows reading only (`query_only`, an authorizer that
    /// refuses anything else) and interrupts statements after
    /// [`LENT_READ_TIME`](crate::LENT_READ_TIME).
    ///
    /// # Errors
    /// [`LentReadError::NoDatabase`] if the actor has no database here,
    /// [`LentReadError::Open`] if it could not be opened,
    /// [`LentReadError::NotRun`] if its mailbox did not run the read.
    pub fn read_database<T: Send + 'static>(
        &self,
        key: &ActorKey,
        read: impl FnOnce(&rusqlite::Connection) -> T + Send + 'static,
    ) -> Result<T, LentReadError> {
        let (tx, rx) = oneshot::channel();
        let lent: LentRead = Box::new(move |conn| {
            let _ = tx.send(conn.map(read));
        });
        self.host
            .enqueue(key, Job::new(HostJob::LentRead { read: lent }, Vec::new()));
        rx.blocking_recv().map_err(|_| LentReadError::NotRun {
            kind: FailureKind::Host,
            message: "the actor's worker stopped".into(),
        })?
    }

    /// Deletes an actor on this node as an operator would (the admin API's
    /// `DELETE /_shim/actors/<class>/<name>`): in its mailbox after what is
    /// queued, with no guest code, its sockets closed with 1000 "actor
    /// deleted", recorded as `operator`. On one node an actor whose database
    /// cannot be opened (damaged) is deleted by removing its files.
    ///
    /// # Errors
    /// The delete failed or is not this node's to do (a cluster's actor held
    /// elsewhere, or damaged: use `wasmkeep-shim actor delete`).
    pub fn delete_actor(&self, key: &ActorKey) -> Result<AdminDeleted, RuntimeError> {
        self.host.class(key)?;
        let (tx, rx) = oneshot::channel();
        self.host
            .enqueue(key, Job::new(HostJob::AdminDelete { done: tx }, Vec::new()));
        rx.blocking_recv().map_err(|_| worker_stopped())?
    }

    /// Restores an actor of this cluster node to `to` (ADR 064): in its
    /// mailbox after what is queued, with no guest code; its open sockets
    /// are closed with 1012 "actor restored", the state at `to` becomes the
    /// head at a new position (restoring to [`Restored::undo`] undoes it),
    /// its alarm follows the restored state, and the next event starts a
    /// fresh instance on it.
    ///
    /// # Errors
    /// `NeedsCluster` on a single node, `NoSuchActor`, `BadArgument` for a
    /// target before the actor's delete or before its first state, `Event`
    /// when another node holds it or the bucket failed.
    pub fn restore_actor(&self, key: &ActorKey, to: crate::replica::Target) -> Result<Restored, RuntimeError> {
        self.host.class(key)?;
        let (tx, rx) = oneshot::channel();
        self.host
            .enqueue(key, Job::new(HostJob::Restore { to, done: tx }, Vec::new()));
        rx.blocking_recv().map_err(|_| worker_stopped())?
    }

    /// How many actors are resident now.
    pub fn resident_count(&self) -> usize {
        resident_count(self.host)
    }

    /// Every actor the host knows, as [`Admin::actors`] says, with the
    /// alarms read from the index in one query instead of one per actor: the
    /// dashboard lists 10,000 actors twice a second. If the index cannot be
    /// listed, it is [`Admin::actors`].
    pub fn actors_listing(&self) -> Vec<ActorInfo> {
        let Ok(alarms) = self.host.alarms().due(u64::MAX) else {
            return self.actors();
        };
        let alarms: HashMap<ActorKey, u64> = alarms.into_iter().collect();
        self.listing(|key| alarms.get(key).copied())
    }

    /// The ids of the actor's open sockets (the dashboard's actor list).
    pub fn sockets_of(&self, key: &ActorKey) -> Vec<u64> {
        self.host.sockets_of(key)
    }
}

/// Whether the actor has a database (a storage that cannot tell says no, and logs why).
pub(super) fn actor_exists(host: &Host, key: &ActorKey) -> bool {
    host.storage().exists(key).unwrap_or_else(|e| {
        tracing::warn!(actor = %key, "{e}");
        false
    })
}

/// How many actors are resident on `host` now.
pub(super) fn resident_count(host: &Host) -> usize {
    host.scheduler().with_worker_count()
}

/// The actor's worker went before it answered an admin job: the node is
/// shutting down, or the worker failed (its log says why).
fn worker_stopped() -> RuntimeError {
    RuntimeError::host(
        "the actor's worker stopped before it answered: the node is shutting down or the worker failed; \
         read the host's log, then try again",
    )
}
