//! The transaction machine: whose transaction is open (the guest's, or the
//! host's around `on-init`, with the guest's as a savepoint inside it).

use super::{ActorDb, META_INITIALIZED};
use crate::sql_types::{SqlError, refusals};

/// Whose transaction is open. `on-init` runs inside one of the host's, so
/// that its writes and the mark that it ran commit together: a trap or a
/// crash inside it leaves nothing, and the next event runs it again on an
/// empty database (ADR 012). The guest's own transaction calls then use a
/// savepoint inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TxMode {
    /// No host transaction: the guest's `begin` is SQLite's `BEGIN`.
    Plain,
    /// Inside `on-init`'s host transaction.
    Init {
        /// The guest's `begin` opened its savepoint.
        guest_open: bool,
        /// An `exec-durable` ran: the commit is synced.
        durable: bool,
    },
}

impl ActorDb {
    /// Where the transactions stand, noticing when SQLite itself rolled the
    /// host's `on-init` transaction back (an `ON CONFLICT ROLLBACK`): the
    /// guest's statements after it run on their own, as they would outside.
    pub(super) fn mode(&self) -> TxMode {
        let mode = self.tx.get();
        if matches!(mode, TxMode::Init { .. }) && self.conn.is_autocommit() {
            self.tx.set(TxMode::Plain);
            return TxMode::Plain;
        }
        mode
    }

    /// Opens the host's transaction around `on-init`.
    ///
    /// # Errors
    /// `internal` if SQLite could not begin it.
    pub fn begin_init(&self) -> Result<(), SqlError> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| SqlError::Internal(format!("opening on-init's transaction: {e}")))?;
        self.tx.set(TxMode::Init {
            guest_open: false,
            durable: false,
        });
        Ok(())
    }

    /// `on-init` returned: rolls back a transaction of the guest's it left
    /// open (true if there was one), marks the database initialized, keeps
    /// the actor's full `name` (its file name may be shortened with a hash)
    /// and commits these with what `on-init` wrote.
    ///
    /// # Errors
    /// `internal` if the mark or the commit failed (nothing of `on-init` is
    /// then kept).
    pub fn finish_init(&self, name: &str) -> Result<bool, SqlError> {
        let mode = self.mode();
        let left_open = self.rollback_if_open();
        let durable = matches!(mode, TxMode::Init { durable: true, .. });
        let r = self
            .meta_set(crate::state_store::META_NAME, Some(name))
            .and_then(|()| self.meta_set(META_INITIALIZED, Some("1")))
            .and_then(|()| {
                if self.conn.is_autocommit() {
                    return Ok(());
                }
                let internal = |e: rusqlite::Error| SqlError::Internal(format!("committing on-init: {e}"));
                if durable {
                    self.conn.execute_batch("PRAGMA synchronous=FULL").map_err(internal)?;
                }
                let committed = self.conn.execute_batch("COMMIT").map_err(internal);
                if durable {
                    self.conn.execute_batch("PRAGMA synchronous=NORMAL").map_err(internal)?;
                }
                committed
            });
        if r.is_err() {
            self.abort_init();
        }
        self.tx.set(TxMode::Plain);
        r.map(|()| left_open)
    }

    /// `on-init` failed: nothing it wrote is kept.
    pub fn abort_init(&self) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        self.tx.set(TxMode::Plain);
    }

    /// True inside `on-init` (the host's transaction around it is open).
    pub fn in_init(&self) -> bool {
        matches!(self.mode(), TxMode::Init { .. })
    }

    /// True while a transaction of the guest's is open.
    pub fn in_transaction(&self) -> bool {
        match self.mode() {
            TxMode::Plain => !self.conn.is_autocommit(),
            TxMode::Init { guest_open, .. } => guest_open,
        }
    }

    /// Opens a transaction (inside `on-init`, a savepoint in the host's).
    ///
    /// # Errors
    /// `not-allowed` if one is open.
    pub fn begin(&self) -> Result<(), SqlError> {
        if self.in_transaction() {
            return Err(SqlError::NotAllowed(refusals::TRANSACTION_ALREADY_OPEN.into()));
        }
        match self.mode() {
            TxMode::Plain => self.conn.execute_batch("BEGIN").map_err(|e| self.map_error(e)),
            TxMode::Init { durable, .. } => {
                self.conn
                    .execute_batch("SAVEPOINT wasmkeep_guest_tx")
                    .map_err(|e| self.map_error(e))?;
                self.tx.set(TxMode::Init {
                    guest_open: true,
                    durable,
                });
                Ok(())
            }
        }
    }

    /// Commits the open transaction.
    ///
    /// # Errors
    /// `not-allowed` if none is open; `sqlite` if the commit failed (deferred constraints).
    pub fn commit(&self) -> Result<(), SqlError> {
        if !self.in_transaction() {
            return Err(SqlError::NotAllowed(refusals::NO_TRANSACTION.into()));
        }
        self.end_guest_tx("COMMIT", "RELEASE wasmkeep_guest_tx")
    }

    /// Rolls back the open transaction.
    ///
    /// # Errors
    /// `not-allowed` if none is open.
    pub fn rollback(&self) -> Result<(), SqlError> {
        if !self.in_transaction() {
            return Err(SqlError::NotAllowed(refusals::NO_TRANSACTION.into()));
        }
        self.end_guest_tx("ROLLBACK", "ROLLBACK TO wasmkeep_guest_tx; RELEASE wasmkeep_guest_tx")
    }

    fn end_guest_tx(&self, plain: &str, in_init: &str) -> Result<(), SqlError> {
        match self.mode() {
            TxMode::Plain => self.conn.execute_batch(plain).map_err(|e| self.map_error(e)),
            TxMode::Init { durable, .. } => {
                let r = self.conn.execute_batch(in_init).map_err(|e| self.map_error(e));
                self.tx.set(TxMode::Init {
                    guest_open: false,
                    durable,
                });
                r
            }
        }
    }

    /// Rolls back a transaction of the guest's left open (event end, trap);
    /// true if there was one.
    pub fn rollback_if_open(&self) -> bool {
        if self.in_transaction() {
            let _ = self.rollback();
            true
        } else {
            false
        }
    }
}
