//! What an actor's imports do: the per-instance state and the `Host` traits
//! of the bindings. It reaches the node only through [`NodeServices`].

use crate::actor_db::{ActorDb, META_ALARM};
use crate::address::ActorKey;
use crate::alarm_index::AlarmIndex;
use crate::bindings::{alarms, calls, context, http, sockets, storage, types};
use crate::clock::Clock;
use crate::deletion::{DeleteHow, parse_deletion_record};
use crate::http_types::{HttpResponse, SocketMessage};
use crate::job::CallFailure;
use crate::metrics::Metrics;
use crate::metrics::{DELETE_FAILURES_TOTAL, DELETES_TOTAL};
use crate::outparam::Outparam;
use crate::sql_types::{QueryResult, SqlError, SqlValue, refusals};
use crate::storage::OpenActor;
use crate::storage::StorageError;
use crate::storage::open_actor::Durability;
use std::sync::Arc;
use wasmtime::StoreLimits;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

mod history;

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
    /// The fault `crash-after-answer` was taken for this request: the guest
    /// is stopped the moment its answer has gone out.
    pub crash_after_answer: bool,
    /// The guest was stopped so, after its answer went out: the event's end
    /// keeps nothing more and the actor starts again from what was kept.
    pub crashed_after_answer: bool,
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

fn to_wit_error(e: SqlError) -> types::SqlError {
    match e {
        SqlError::NotAllowed(m) => types::SqlError::NotAllowed(m),
        SqlError::Internal(m) => types::SqlError::Internal(m),
        SqlError::Sqlite { code, message } => types::SqlError::Sqlite(types::SqliteFailure { code, message }),
    }
}

fn from_wit_value(v: types::SqlValue) -> SqlValue {
    match v {
        types::SqlValue::Null => SqlValue::Null,
        types::SqlValue::Integer(i) => SqlValue::Integer(i),
        types::SqlValue::Real(f) => SqlValue::Real(f),
        types::SqlValue::Text(s) => SqlValue::Text(s),
        types::SqlValue::Blob(b) => SqlValue::Blob(b),
    }
}

fn to_wit_value(v: SqlValue) -> types::SqlValue {
    match v {
        SqlValue::Null => types::SqlValue::Null,
        SqlValue::Integer(i) => types::SqlValue::Integer(i),
        SqlValue::Real(f) => types::SqlValue::Real(f),
        SqlValue::Text(s) => types::SqlValue::Text(s),
        SqlValue::Blob(b) => types::SqlValue::Blob(b),
    }
}

fn to_wit_rows(r: QueryResult) -> types::QueryResult {
    types::QueryResult {
        columns: r.columns,
        rows: r
            .rows
            .into_iter()
            .map(|row| row.into_iter().map(to_wit_value).collect())
            .collect(),
    }
}

type R<T> = wasmtime::Result<T>;

impl types::Host for HostState {}

impl storage::Host for HostState {
    fn exec(&mut self, sql: String, params: Vec<types::SqlValue>) -> R<Result<u64, types::SqlError>> {
        let params: Vec<SqlValue> = params.into_iter().map(from_wit_value).collect();
        self.storage_call(|db| db.exec(&sql, &params))
    }

    fn query(&mut self, sql: String, params: Vec<types::SqlValue>) -> R<Result<types::QueryResult, types::SqlError>> {
        let params: Vec<SqlValue> = params.into_iter().map(from_wit_value).collect();
        Ok(self.storage_call(|db| db.query(&sql, &params))?.map(to_wit_rows))
    }

    fn exec_durable(&mut self, sql: String, params: Vec<types::SqlValue>) -> R<Result<u64, types::SqlError>> {
        let params: Vec<SqlValue> = params.into_iter().map(from_wit_value).collect();
        if self.actor.durability() == Durability::WritesLost {
            return Ok(Err(types::SqlError::Internal(
                "replication stopped for this actor earlier in this event: nothing more is durable until the \
                 next event"
                    .into(),
            )));
        }
        let r = self.storage_call(|db| db.exec_durable(&sql, &params))?;
        if r.is_ok()
            && let Err(e) = self.unbilled(|s| s.actor.durable_write())
        {
            return Ok(Err(types::SqlError::Internal(format!(
                "the write is not known to be durable ({e}). Replication stopped for this actor: the event's \
                 writes are not kept, and the next event restores what the bucket holds"
            ))));
        }
        Ok(r)
    }

    fn flush(&mut self) -> R<Result<(), types::SqlError>> {
        Ok(self.flush_writes().map_err(to_wit_error))
    }

    fn begin(&mut self) -> R<Result<(), types::SqlError>> {
        self.storage_call(ActorDb::begin)
    }

    fn commit(&mut self) -> R<Result<(), types::SqlError>> {
        self.storage_call(ActorDb::commit)
    }

    fn rollback(&mut self) -> R<Result<(), types::SqlError>> {
        self.storage_call(ActorDb::rollback)
    }

    fn delete_self(&mut self) -> R<()> {
        if self.ev.requested_delete.is_none() {
            self.ev.requested_delete = Some(DeleteHow::SelfDelete);
        }
        Ok(())
    }

    fn delete_self_durable(&mut self) -> R<Result<(), types::SqlError>> {
        Ok(self.delete_durably().map_err(to_wit_error))
    }

    fn current_bookmark(&mut self) -> R<Result<Option<String>, types::SqlError>> {
        Ok(self.bookmark_now().map_err(to_wit_error))
    }

    fn bookmark_for_time(&mut self, at: u64) -> R<Result<Option<String>, types::SqlError>> {
        Ok(self
            .actor
            .bookmark_for_time(at)
            .map_err(|e| types::SqlError::Internal(format!("the actor's history could not be read: {e}"))))
    }

    fn restore_on_next_session(&mut self, bookmark: String) -> R<Result<String, types::SqlError>> {
        Ok(self.ask_restore(&bookmark).map_err(to_wit_error))
    }
}

impl alarms::Host for HostState {
    fn get_alarm(&mut self) -> R<Option<u64>> {
        Ok(self.actor.open_db().and(self.alarm))
    }

    fn set_alarm(&mut self, at: u64) -> R<()> {
        if let Some(db) = self.actor.open_db() {
            match db.meta_set(META_ALARM, Some(&at.to_string())) {
                Ok(()) => {
                    self.alarm = Some(at);
                    if let Err(e) = self.alarms.set(&self.key, at) {
                        tracing::error!(actor = %self.key, "alarm index: {e}");
                    }
                    self.node.alarm_set();
                }
                Err(e) => tracing::error!(actor = %self.key, "set-alarm: {e}"),
            }
        }
        Ok(())
    }

    fn clear_alarm(&mut self) -> R<()> {
        if let Some(db) = self.actor.open_db() {
            match db.meta_set(META_ALARM, None) {
                // The index entry stays until it fires: it wakes nothing once the alarm is gone.
                Ok(()) => self.alarm = None,
                Err(e) => tracing::error!(actor = %self.key, "clear-alarm: {e}"),
            }
        }
        Ok(())
    }
}

impl context::Host for HostState {
    fn self_address(&mut self) -> R<types::Address> {
        Ok(types::Address {
            class: self.key.class.clone(),
            name: self.key.name.clone(),
        })
    }

    fn app(&mut self) -> R<String> {
        Ok(self.key.app.clone())
    }

    fn now(&mut self) -> R<u64> {
        Ok(self.clock.now_ms())
    }

    fn previous_deletion(&mut self) -> R<Option<context::Deletion>> {
        use context::DeletionCause as C;
        let Some((at, how)) = self.actor.previous_deletion().and_then(parse_deletion_record) else {
            return Ok(None);
        };
        let cause = match how {
            DeleteHow::SelfDelete => C::DeleteSelf,
            DeleteHow::SelfDurable => C::DeleteSelfDurable,
            DeleteHow::Operator => C::Operator,
            DeleteHow::Expired => C::Expired,
        };
        Ok(Some(context::Deletion { at, cause }))
    }

    fn report_failure(&mut self, report: context::FailureReport) -> R<()> {
        let mut text = report.message;
        if !report.detail.trim().is_empty() {
            text.push('\n');
            text.push_str(&report.detail);
        }
        cut_at(&mut text, MAX_REPORT);
        self.ev.failure_report = Some(text);
        Ok(())
    }

    fn log(&mut self, level: context::LogLevel, mut message: String) -> R<()> {
        cut_at(&mut message, MAX_LOG_LINE);
        let actor = &self.key;
        match level {
            context::LogLevel::Debug => tracing::debug!(target: "actor", %actor, "{message}"),
            context::LogLevel::Info => tracing::info!(target: "actor", %actor, "{message}"),
            context::LogLevel::Warn => tracing::warn!(target: "actor", %actor, "{message}"),
            context::LogLevel::Error => tracing::error!(target: "actor", %actor, "{message}"),
        }
        self.node.log(&self.key, level_name(level), &message);
        Ok(())
    }
}

fn level_name(l: context::LogLevel) -> &'static str {
    match l {
        context::LogLevel::Debug => "debug",
        context::LogLevel::Info => "info",
        context::LogLevel::Warn => "warn",
        context::LogLevel::Error => "error",
    }
}

impl sockets::Host for HostState {
    fn send(&mut self, socket: u64, message: types::Message) -> R<Result<(), sockets::SocketError>> {
        let msg = match message {
            types::Message::Text(t) => SocketMessage::Text(t),
            types::Message::Binary(b) => SocketMessage::Binary(b),
        };
        Ok(self
            .node
            .socket_send(&self.key, socket, msg)
            // Either way the guest's socket is no longer open.
            .map_err(|_gone| sockets::SocketError::NotOpen))
    }

    fn close(&mut self, socket: u64, code: u16, reason: String) -> R<Result<(), sockets::SocketError>> {
        Ok(self
            .node
            .socket_close(&self.key, socket, code, reason)
            // Either way the guest's socket is no longer open.
            .map_err(|_gone| sockets::SocketError::NotOpen))
    }

    fn open_sockets(&mut self) -> R<Vec<u64>> {
        Ok(self.node.sockets_of(&self.key))
    }
}

impl calls::Host for HostState {
    fn call(&mut self, target: types::Address, payload: Vec<u8>) -> R<Result<Vec<u8>, calls::CallError>> {
        let mut chain = self.ev.chain.clone();
        chain.push(self.key.clone());
        let target = ActorKey::new(self.key.app.clone(), target.class, target.name);
        let wait = self.ev.deadline.map_or(self.event_timeout, |d| {
            d.saturating_duration_since(std::time::Instant::now())
        });
        Ok(self
            .node
            .call(&target, Some(self.key.clone()), payload, chain, wait)
            .map_err(|e| match e {
                CallFailure::Refused { message, .. } => calls::CallError::Refused(message),
                CallFailure::Rejected(m) => calls::CallError::Rejected(m),
                CallFailure::Failed { message, .. } => calls::CallError::Failed(message),
            }))
    }
}

impl http::Host for HostState {}

impl http::HostResponseOutparam for HostState {
    fn set(&mut self, out: Resource<Outparam>, response: http::Response) -> R<()> {
        let op = self.table.delete(out)?;
        let tx = crate::unpoisoned::lock(&op.tx).take();
        if let Some(tx) = tx {
            let _ = tx.send(HttpResponse {
                status: response.status,
                headers: response.headers,
                body: response.body,
                failure: None,
                held_elsewhere: None,
            });
            if self.ev.crash_after_answer {
                // The answer is out; the host "crashes" here: the guest is
                // trapped before anything it does after its answer.
                self.ev.crashed_after_answer = true;
                return Err(wasmtime::Error::msg(CRASHED_AFTER_ANSWER));
            }
        }
        Ok(())
    }

    fn drop(&mut self, rep: Resource<Outparam>) -> R<()> {
        // Dropped without an answer: the sender goes, and the event's end answers 500.
        self.table.delete(rep)?;
        Ok(())
    }
}

/// Why the guest stopped when the fault `crash-after-answer` stopped it.
pub(crate) const CRASHED_AFTER_ANSWER: &str =
    "the host crashed right after the answer went out (injected fault crash-after-answer)";

/// The longest log line kept whole.
const MAX_LOG_LINE: usize = 8 << 10;
/// The longest failure report kept whole (a deep stack fits; the answer
/// keeps its head and tail lines anyway).
const MAX_REPORT: usize = 64 << 10;

/// Cuts `text` to at most `max` bytes (on a character boundary), saying so.
fn cut_at(text: &mut String, max: usize) {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(&format!(" … (cut at {} KiB)", max >> 10));
    }
}
