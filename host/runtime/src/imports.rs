//! What an actor's imports do: the per-instance state and the `Host` traits
//! of the bindings. It reaches the node only through [`NodeServices`].

use crate::actor_db::{ActorDb, META_ALARM};
use crate::address::ActorKey;
use crate::alarm_index::AlarmIndex;
use crate::bindings::types;
use crate::clock::Clock;
use crate::deletion::DeleteHow;
use crate::http_types::SocketMessage;
use crate::job::CallFailure;
use crate::metrics::Metrics;
use crate::metrics::{DELETE_FAILURES_TOTAL, DELETES_TOTAL};
use crate::sql_types::{SqlError, refusals};
use crate::storage::OpenActor;
use crate::storage::StorageError;
use crate::storage::open_actor::Durability;
use std::sync::Arc;
use wasmtime::StoreLimits;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

mod alarms;
mod calls;
mod context;
mod history;
mod http;
mod sockets;
mod storage;
mod values;

use values::to_wit_error;

/// What the imports answer the guest: a trap, or the call's result.
type R<T> = wasmtime::Result<T>;

/// Why the guest stopped when the fault `crash-after-answer` stopped it.
pub(crate) const CRASHED_AFTER_ANSWER: &str =
    "the host crashed right after the answer went out (injected fault crash-after-answer)";

/// How much guest stdout/stderr one instance keeps (for error reports).
const OUTPUT_BUFFER: usize = 64 << 10;

/// What an actor's imports need from its node beyond storage, clock, alarm
/// index and counters: the narrow handle that keeps the imports from
/// reaching into the node that runs them.
pub(crate) trait NodeServices: Send + Sync {
    /// An alarm was set: the alarm timer looks again.
    fn alarm_set(&self);
    /// Keeps a line the actor logged.
    fn log(&self, key: &ActorKey, level: &'static str, message: &str);
    /// Sends to one of the actor's sockets.
    ///
    /// # Errors
    /// The socket is not the actor's or not open, or its client stopped reading.
    fn socket_send(&self, key: &ActorKey, id: u64, msg: SocketMessage) -> Result<(), crate::sockets::SocketGone>;
    /// Closes one of the actor's sockets; its close event comes after this event.
    ///
    /// # Errors
    /// The socket is not the actor's, or not open.
    fn socket_close(
        &self,
        key: &ActorKey,
        id: u64,
        code: u16,
        reason: String,
    ) -> Result<(), crate::sockets::SocketGone>;
    /// The actor's open sockets.
    fn sockets_of(&self, key: &ActorKey) -> Vec<u64>;
    /// Calls another actor of the app and waits up to `limit`.
    ///
    /// # Errors
    /// As the WIT's `call-error`.
    fn call(
        &self,
        target: &ActorKey,
        caller: Option<ActorKey>,
        payload: Vec<u8>,
        chain: Vec<ActorKey>,
        limit: std::time::Duration,
    ) -> Result<Vec<u8>, CallFailure>;
}

/// What a new actor's imports are given by its node.
pub(crate) struct NodeHandles {
    pub(crate) services: Arc<dyn NodeServices>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) alarms: Arc<dyn AlarmIndex>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) event_timeout: std::time::Duration,
    pub(crate) memory_limit_bytes: usize,
}

/// What the current event has asked for.
#[derive(Debug, Default)]
pub(crate) struct EventState {
    /// The delete the guest asked for (`delete-self`, `delete-self-durable`):
    /// the end of the event carries it out.
    pub requested_delete: Option<DeleteHow>,
    /// Actors waiting on this one, for cycle detection of calls.
    pub chain: Vec<ActorKey>,
    /// When the event's time is up (calls wait no longer than that).
    pub deadline: Option<std::time::Instant>,
    /// Why the guest says the event is failing (`report-failure`, 0.2.3):
    /// a failed event is answered with it rather than with what the guest
    /// printed.
    pub failure_report: Option<String>,
    /// The restore the guest asked for (`restore-on-next-session`, 0.2.4):
    /// the end of the event carries it out once the event's writes are kept.
    pub restore_after: Option<crate::replica::Pos>,
    /// Where the fault `crash-after-answer` stands for this event.
    pub crash: CrashAfterAnswer,
}

/// The fault `crash-after-answer` for one event.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CrashAfterAnswer {
    /// Not armed for this event.
    #[default]
    No,
    /// Taken for this request: the guest is stopped the moment its answer
    /// has gone out.
    Armed,
    /// The guest was stopped so, after its answer went out: the event's end
    /// keeps nothing more and the actor starts again from what was kept.
    Crashed,
}

/// The data of one actor's store.
pub struct HostState {
    /// The node, through the narrow handle the imports need.
    pub(crate) node: Arc<dyn NodeServices>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) alarms: Arc<dyn AlarmIndex>,
    pub(crate) metrics: Arc<Metrics>,
    /// How long one event may run (a call waits no longer).
    pub(crate) event_timeout: std::time::Duration,
    pub(crate) key: ActorKey,
    /// The actor's storage: its database and what makes it durable.
    pub(crate) actor: Box<OpenActor>,
    /// The alarm as the database says, cached.
    pub(crate) alarm: Option<u64>,
    pub(crate) ev: EventState,
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limits: StoreLimits,
    pub(crate) stderr: MemoryOutputPipe,
    /// How much guest output there was when the current event began
    /// (guest output is kept per instance; see [`HostState::event_output`]).
    pub(crate) stderr_mark: usize,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl HostState {
    pub(crate) fn new(node: NodeHandles, key: ActorKey, actor: Box<OpenActor>) -> Self {
        let stderr = MemoryOutputPipe::new(OUTPUT_BUFFER);
        let wasi = wasmtime_wasi::WasiCtxBuilder::new()
            .stderr(stderr.clone())
            .stdout(stderr.clone())
            .build();
        let limits = wasmtime::StoreLimitsBuilder::new()
            .memory_size(node.memory_limit_bytes)
            .instances(16)
            .tables(64)
            .memories(16)
            .build();
        Self {
            node: node.services,
            clock: node.clock,
            alarms: node.alarms,
            metrics: node.metrics,
            event_timeout: node.event_timeout,
            key,
            actor,
            alarm: None,
            ev: EventState::default(),
            wasi,
            table: ResourceTable::new(),
            limits,
            stderr,
            stderr_mark: 0,
        }
    }

    /// True when the guest's output buffer is filling up: the instance is then
    /// replaced after the event (a full buffer would make the guest's writes fail).
    pub(crate) fn output_nearly_full(&self) -> bool {
        self.stderr.contents().len() > OUTPUT_BUFFER / 2
    }

    /// What the guest printed in the current event, for a failure's answer:
    /// the engines' own noise left out, and when it is long its first 30
    /// lines (where the SDKs put the message) and its last 10.
    /// Why the current event failed, in the guest's words: its
    /// `report-failure` if it made one (SDKs built against 0.2.3 do), else
    /// what it printed (components built against 0.2.0 to 0.2.2).
    pub(crate) fn failure_text(&self) -> String {
        match &self.ev.failure_report {
            Some(report) => crate::guest_output::for_answer(report),
            None => self.event_output(),
        }
    }

    pub(crate) fn event_output(&self) -> String {
        let bytes = self.stderr.contents();
        crate::guest_output::for_answer(&String::from_utf8_lossy(
            bytes.get(self.stderr_mark..).unwrap_or_default(),
        ))
    }

    /// Re-reads the alarm from the database (a rollback may have undone a
    /// change to it) and points the index at it.
    pub(crate) fn reload_alarm(&mut self) {
        if let Some(db) = self.actor.open_db() {
            self.alarm = db.meta_get(META_ALARM).ok().flatten().and_then(|v| v.parse().ok());
            if let Some(at) = self.alarm {
                // An entry for an alarm cleared meanwhile is harmless: it wakes nothing.
                if let Err(e) = self.alarms.set(&self.key, at) {
                    tracing::error!(actor = %self.key, "alarm index: {e}");
                }
            }
        }
    }

    /// Runs a storage call; afterwards, if a transaction ended (by commit,
    /// rollback, or SQLite's own rollback on a conflict), the alarm is re-read,
    /// and if the event ran out of time inside SQL the event traps.
    fn storage_call<T>(&mut self, f: impl FnOnce(&ActorDb) -> Result<T, SqlError>) -> R<Result<T, types::SqlError>> {
        let was_in_txn = self.actor.open_db().is_some_and(ActorDb::in_transaction);
        let r = self.actor.db().and_then(f);
        let (ended, timed_out) = match self.actor.open_db() {
            Some(db) => (was_in_txn && !db.in_transaction(), db.timed_out()),
            None => (false, false),
        };
        if ended {
            self.reload_alarm();
        }
        if timed_out {
            return Err(wasmtime::Trap::Interrupt.into());
        }
        Ok(r.map_err(to_wit_error))
    }

    /// ADR 0028's reset now, within the event; see `delete-self-durable` in the WIT.
    pub(crate) fn delete_durably(&mut self) -> Result<(), SqlError> {
        if self.actor.deleted_in_event() {
            return Err(SqlError::NotAllowed(refusals::DELETED_IN_EVENT.into()));
        }
        if self.actor.open_db().is_some_and(ActorDb::in_transaction) {
            return Err(SqlError::NotAllowed(refusals::OPEN_TRANSACTION.into()));
        }
        let how = DeleteHow::SelfDurable;
        // Whatever happens now, the end of the event finishes the delete.
        self.ev.requested_delete = Some(how);
        let now = self.clock.now_ms();
        match self.unbilled(|s| s.actor.reset(how, now)) {
            Ok(()) => {
                self.alarm = None;
                self.metrics.inc(DELETES_TOTAL, how.label());
                Ok(())
            }
            Err(e) => {
                self.metrics.inc(DELETE_FAILURES_TOTAL, how.label());
                Err(SqlError::Internal(if e.delete_still_happens() {
                    format!(
                        "{e}; the delete is not known to be durable. Storage stays closed for this event; \
                         calling delete-self-durable again is safe, and the end of the event removes the files"
                    )
                } else if !e.writes_lost() {
                    format!(
                        "the delete did not happen ({e}). Storage stays closed for this event; calling \
                         delete-self-durable again is safe, and the end of the event tries the delete again"
                    )
                } else {
                    format!(
                        "the delete is not known to be durable ({e}; the upload may still land). Storage stays \
                         closed for this event, whose writes are not kept; calling delete-self-durable again is \
                         safe, and the next event restores what the bucket holds"
                    )
                }))
            }
        }
    }
}

impl HostState {
    /// Runs `wait`, a wait for the bucket (an upload, a reset, a history
    /// read), without counting it against the event's time limit: the limit
    /// is for the guest's own work, its code and its SQL. A bucket that took
    /// seconds to keep a write interrupted the event after the write was
    /// kept, and the client was answered 500 for a write that had landed
    /// (issue 57's hour of lost answers, under load). The deadline moves on
    /// by the wait; the epoch callback (`actor_cell`) reads it.
    fn unbilled<T>(&mut self, wait: impl FnOnce(&mut Self) -> T) -> T {
        let began = std::time::Instant::now();
        let out = wait(self);
        if let Some(deadline) = self.ev.deadline.as_mut() {
            *deadline += began.elapsed();
            let deadline = *deadline;
            if let Some(db) = self.actor.open_db() {
                db.set_deadline(Some(deadline));
            }
        }
        out
    }

    /// `flush` (WIT 0.2.2): what the event wrote so far, kept before the answer.
    fn flush_writes(&mut self) -> Result<(), SqlError> {
        if self.actor.deleted_in_event() {
            return Ok(()); // the reset is acknowledged, and nothing can be written after it
        }
        if self.actor.db()?.in_init() {
            return Ok(()); // on-init answers nobody; its writes are kept with its event's
        }
        self.may_keep()?;
        self.unbilled(|s| s.actor.durable_write()).map_err(|e| {
            SqlError::Internal(format!(
                "the event's writes are not known to be kept ({e}; the upload may still land). Replication \
                 stopped for this actor: the event's writes are not kept, and the next event restores what the \
                 bucket holds. Answer so that the client retries"
            ))
        })
    }
}

impl HostState {
    /// `current-bookmark` (WIT 0.2.4): what `flush` keeps, then the state
    /// as it is now as a bookmark; `None` where no history is kept.
    fn bookmark_now(&mut self) -> Result<Option<String>, SqlError> {
        self.may_keep()?;
        self.unbilled(|s| s.actor.current_bookmark()).map_err(|e| match e {
            StorageError::NotAcknowledged { .. } => SqlError::Internal(format!(
                "the state as it is now is not known to be kept ({e}; the upload may still land). Replication \
                 stopped for this actor: the event's writes are not kept, and the next event restores what the \
                 bucket holds"
            )),
            // A single node's history: the writes are kept in the database all the same.
            other => SqlError::Internal(format!(
                "the actor's history could not be read ({other}); its writes are kept: try again"
            )),
        })
    }

    /// What `flush` and `current-bookmark` need before they keep anything:
    /// no transaction open, and nothing lost earlier in the event.
    fn may_keep(&self) -> Result<(), SqlError> {
        if self.actor.db()?.in_transaction() {
            return Err(SqlError::NotAllowed(refusals::OPEN_TRANSACTION.into()));
        }
        if self.actor.durability() == Durability::WritesLost {
            return Err(SqlError::Internal(
                "replication stopped for this actor earlier in this event: nothing more is kept until the next \
                 event"
                    .into(),
            ));
        }
        Ok(())
    }

    /// `restore-on-next-session` (WIT 0.2.4): checks what can be checked
    /// now, takes the undo bookmark and leaves the restore to the end of
    /// the event.
    fn ask_restore(&mut self, bookmark: &str) -> Result<String, SqlError> {
        let to = history::parse_bookmark(bookmark)?;
        if !self.actor.keeps_history() {
            return Err(SqlError::NotAllowed(history::NO_HISTORY.into()));
        }
        if self.ev.requested_delete.is_some() {
            return Err(SqlError::NotAllowed(history::DELETE_REQUESTED.into()));
        }
        let undo = self
            .bookmark_now()?
            .ok_or_else(|| SqlError::NotAllowed(history::NO_CURRENT_STATE.into()))?;
        history::not_after(to, &undo)?;
        self.ev.restore_after = Some(to);
        Ok(undo)
    }
}
