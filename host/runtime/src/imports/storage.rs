//! `wasmkeep:actor/storage`: SQL on the actor's database, durable writes
//! and deletes, and bookmarks of its history.

use super::HostState;
use super::R;
use super::values::{from_wit_value, to_wit_error, to_wit_rows};
use crate::actor_db::ActorDb;
use crate::bindings::storage;
use crate::bindings::types;
use crate::deletion::DeleteHow;
use crate::sql_types::SqlValue;
use crate::storage::open_actor::Durability;

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
