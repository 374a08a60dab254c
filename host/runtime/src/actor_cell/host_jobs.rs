//! The host's own jobs in an actor's mailbox, which run no guest code: the
//! read of its tables, a read from outside (ADR 040), an operator delete
//! request (ADR 0028 §3), the admin API's delete, a restore (ADR 064), and
//! idle expiry (§4). [`ActorCell::run_host_job`] is where a host job's kind
//! decides what runs (`event_error` answers one that cannot run).

use super::{ActorCell, Prepared};
use crate::actor_db::open_for_reading;
use crate::actor_db::sqlite_code::{INTERRUPT, TOOBIG};
use crate::address::ActorKey;
use crate::deletion::DeleteHow;
use crate::error::RuntimeError;
use crate::failure_kind::FailureKind;
use crate::job::{AdminDeleted, HostJob, Job, LentRead};
use crate::node::Host;
use crate::operator::{DeleteRequest, InBucket, Outcome, Settled};
use crate::sql_types::SqlError;
use crate::storage::OpenMode;

/// What a read of the actor's tables answers.
type TablesReply = tokio::sync::oneshot::Sender<Result<Vec<(String, crate::sql_types::QueryResult)>, RuntimeError>>;

impl ActorCell {
    /// Runs one of the host's own jobs.
    pub(super) fn run_host_job(&mut self, job: HostJob, chain: Vec<ActorKey>) {
        match job {
            HostJob::Inspect { reply } => self.inspect(reply, chain),
            HostJob::LentRead { read } => self.lend_for_reading(read),
            HostJob::OperatorDelete { req } => self.operator_delete(req),
            HostJob::AdminDelete { done } => {
                let _ = done.send(self.admin_delete());
            }
            HostJob::Restore { to, done } => self.restore(to, done),
            HostJob::Expire { etag, done } => {
                let _ = done.send(self.expire(etag));
            }
        }
    }

    /// Reads every table of the actor (never creating it).
    fn inspect(&mut self, reply: TablesReply, chain: Vec<ActorKey>) {
        let key = self.mailbox.key.clone();
        let tables = match self.prepare(OpenMode::Existing) {
            Ok(Prepared::Ready(ready)) => match ready.resident.store.data().actor.open_db() {
                Some(db) => db.dump_tables().map_err(|e| match e {
                    SqlError::Sqlite { code: TOOBIG, message } => RuntimeError::TablesTooLarge(message),
                    SqlError::Sqlite {
                        code: INTERRUPT,
                        message,
                    } => RuntimeError::TablesTooSlow(message),
                    other => RuntimeError::event(FailureKind::Sql, format!("reading {key}'s tables: {other}")),
                }),
                None => Err(RuntimeError::host(format!(
                    "{key}'s database was closed as its tables were read: try again"
                ))),
            },
            Ok(Prepared::Absent) => Err(RuntimeError::NoSuchActor(key.clone())),
            Ok(Prepared::Elsewhere(node)) => {
                node.deliver(&key, Job::new(HostJob::Inspect { reply }, chain));
                return;
            }
            Err(e) => Err(e.into()),
        };
        let _ = reply.send(tables);
    }

    /// A read of the actor's database from outside it (ADR 040): on its own
    /// connection, lent read-only, while it is resident; else on a
    /// connection opened for the read alone. It never wakes the actor, and
    /// runs in the mailbox so that no wake takes the file meanwhile.
    pub(crate) fn lend_for_reading(&mut self, read: LentRead) {
        if let Some(db) = self.resident.as_ref().and_then(|r| r.store.data().actor.open_db()) {
            return db.lend_for_reading(read);
        }
        let path = self.host.storage().db_path(&self.mailbox.key);
        match open_for_reading(&path) {
            Ok(conn) => read(Ok(&conn)),
            Err(e) => read(Err(e)),
        }
    }

    /// ADR 0028 §3: an operator delete request, carried out in the actor's
    /// mailbox after the jobs queued before it. It runs no guest code: absent
    /// → `.done` when the newest reset names this request, else `.absent`
    /// ([`ActorCell::absent_for_request`]); held by another node → that node's mailbox; carried out
    /// before (the replay marker) → `.done`; open sockets → closed with 1000
    /// "actor deleted", their close events run, then the job again; otherwise
    /// the reset with the deletion and replay markers, and `.done` once it is
    /// acknowledged.
    pub(crate) fn operator_delete(&mut self, req: DeleteRequest) {
        if self.host.cluster().is_none() {
            return;
        }
        let key = self.mailbox.key.clone();
        let ready = match self.prepare(OpenMode::Existing) {
            Ok(Prepared::Ready(ready)) => ready,
            Ok(Prepared::Absent) => return self.absent_for_request(&req),
            Ok(Prepared::Elsewhere(node)) => {
                self.host.operator_released(&req);
                return node.deliver(&key, Job::new(HostJob::OperatorDelete { req }, Vec::new()));
            }
            Err(e) => {
                // The request stays for a later pass.
                tracing::warn!(actor = %key, "operator delete {}: {e}", req.id);
                return self.host.operator_released(&req);
            }
        };
        let (host, data) = (ready.host, ready.resident.store.data_mut());
        // Another node finished the request already (issue 57): its outcome
        // is the request's, and nothing more is deleted for it.
        let answered = host
            .cluster()
            .and_then(|c| crate::operator::outcome_of(c.bucket.as_ref(), &req).ok().flatten());
        if let Some(outcome) = answered {
            return finish_request(host, &req, outcome);
        }
        if data.actor.operator_marker().is_some_and(|m| req.carried_out_by(m)) {
            // Carried out before (its key could not be deleted, or it was
            // listed twice). The hold restored and fenced the history: report it done.
            return finish_request(host, &req, Outcome::Done);
        }
        let open = host.sockets_of(&key);
        if !open.is_empty() {
            // Only now that the delete will run: close them; their close
            // events run before the job, queued again behind them.
            for id in open {
                let _ = host.socket_close_by_actor(&key, id, 1000, "actor deleted".into());
            }
            return host.enqueue(&key, Job::new(HostJob::OperatorDelete { req }, Vec::new()));
        }
        data.actor.set_operator_marker(req.marker());
        match self.delete(DeleteHow::Operator) {
            Ok(()) => finish_request(&self.host, &req, Outcome::Done),
            Err(e) => {
                tracing::warn!(actor = %key, "operator delete {} was not recorded ({e}); the request stays", req.id);
                self.host.operator_released(&req);
            }
        }
    }

    /// The request's actor was found not to exist: deleted, perhaps by this
    /// very request on another node that listed it too, or before a node
    /// that held it was killed (issue 57). The newest reset's mark decides
    /// (seed 000 §3, step 3): this request's (or a later one's) → `.done`;
    /// no history, or another delete's → `.absent`; not settled yet (a node
    /// took the actor since) → the request stays for a later pass.
    fn absent_for_request(&self, req: &DeleteRequest) {
        let Some(c) = self.host.cluster() else { return };
        match crate::operator::in_bucket(c.records_bucket().as_ref(), req) {
            Ok(InBucket::CarriedOut) => finish_request(&self.host, req, Outcome::Done),
            Ok(InBucket::NoSuchActor) => finish_request(&self.host, req, Outcome::Absent),
            Ok(InBucket::Unsettled) => self.host.operator_released(req),
            Err(e) => {
                tracing::warn!(actor = %req.key, "operator delete {}: reading its actor's delete: {e}", req.id);
                self.host.operator_released(req);
            }
        }
    }

    /// The admin API's delete of a single node's actor, as an operator
    /// delete: no guest code runs, its sockets are closed with 1000 "actor
    /// deleted", and the delete is recorded as `operator`. An actor whose
    /// database cannot be opened is deleted too, by removing its files:
    /// otherwise no event could ever run for it and nothing could free it.
    ///
    /// # Errors
    /// The actor is held by another node (`HolderUnreachable`: ask there),
    /// cannot be opened in a cluster (its storage's kind), or the delete was
    /// not recorded (its storage's kind).
    pub(crate) fn admin_delete(&mut self) -> Result<AdminDeleted, RuntimeError> {
        let key = self.mailbox.key.clone();
        match self.prepare(OpenMode::Existing) {
            Ok(Prepared::Ready(ready)) => {
                for id in ready.host.sockets_of(&key) {
                    let _ = ready.host.socket_close_by_actor(&key, id, 1000, "actor deleted".into());
                }
                self.delete(DeleteHow::Operator)
                    .map(|()| AdminDeleted::Deleted)
                    .map_err(RuntimeError::from)
            }
            Ok(Prepared::Absent) => Ok(AdminDeleted::Absent),
            Ok(Prepared::Elsewhere(_)) => Err(RuntimeError::event(
                FailureKind::HolderUnreachable,
                format!("{key} is held by another node: in a cluster, ask with `wasmkeep-shim actor delete`"),
            )),
            Err(why) => {
                tracing::warn!(actor = %key, "deleting an actor whose database cannot be opened ({why}): removing its files");
                let record = DeleteHow::Operator.record(self.host.clock().now_ms());
                match self.host.storage().remove_unopenable(&key, &record) {
                    Ok(true) => {
                        self.host
                            .metrics()
                            .inc(crate::metrics::DELETES_TOTAL, DeleteHow::Operator.label());
                        self.mark_deleted(true);
                        Ok(AdminDeleted::RemovedUnopenable)
                    }
                    Ok(false) => Err(RuntimeError::event(
                        why.kind(),
                        format!(
                            "{key} cannot be opened ({why}); in a cluster its state is the bucket's: ask with \
                             `wasmkeep-shim actor delete`"
                        ),
                    )),
                    Err(e) => Err(RuntimeError::Storage(Box::new(e))),
                }
            }
        }
    }

    /// ADR 0028 §4: expires the actor if its ownership record is still the
    /// version the listing showed (a wake since makes the acquire lose), and
    /// it has no pending alarm (its own database says) and no open socket.
    /// True if it was deleted.
    pub(crate) fn expire(&mut self, etag: crate::bucket::ETag) -> bool {
        let key = self.mailbox.key.clone();
        let busy = match self.prepare(OpenMode::Unchanged(etag)) {
            Ok(Prepared::Ready(ready)) => {
                ready.resident.store.data().alarm.is_some() || !ready.host.sockets_of(&key).is_empty()
            }
            Ok(Prepared::Absent | Prepared::Elsewhere(_)) => return false,
            Err(e) => {
                tracing::warn!(actor = %key, "idle expiry: {e}");
                return false;
            }
        };
        if busy {
            // Activity to come: never expired. The hold goes again.
            self.hibernate();
            return false;
        }
        match self.delete(DeleteHow::Expired) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(actor = %key, "idle expiry was not recorded ({e}); the data stays");
                false
            }
        }
    }
}

/// Writes a request's outcome beside it, once per request (a node that
/// finds one there takes it: issue 57), then deletes the request. If the
/// outcome cannot be written the request stays for the next pass (its replay
/// marker makes that pass report it done).
fn finish_request(host: &Host, req: &DeleteRequest, outcome: Outcome) {
    if let Some(c) = host.cluster() {
        let bucket = c.bucket.as_ref();
        match crate::operator::write_outcome(bucket, req, outcome) {
            Ok(Settled::Written(_) | Settled::Found(_)) => {
                if let Err(e) = bucket.delete(&req.object) {
                    tracing::warn!("operator delete {}: the request could not be deleted ({e})", req.id);
                }
            }
            Ok(Settled::Finished) => {}
            Err(e) => tracing::warn!("operator delete {}: the outcome could not be written ({e})", req.id),
        }
    }
    host.operator_released(req);
}
