//! The host's own view of SQL values, results and errors (mirrors `wasmkeep:actor/types`).

use serde::{Deserialize, Serialize};

/// One SQLite value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SqlValue {
    /// NULL.
    Null,
    /// A 64-bit signed integer.
    Integer(i64),
    /// A double.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// Column names and rows of values.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct QueryResult {
    /// The column names, in order.
    pub columns: Vec<String>,
    /// Each row's values, in column order.
    pub rows: Vec<Vec<SqlValue>>,
}

/// Why a storage call failed (the WIT's `sql-error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SqlError {
    /// Refused in this state; nothing changed.
    #[error("not allowed: {0}")]
    NotAllowed(String),
    /// The host failed; not known to be durable.
    #[error("internal: {0}")]
    Internal(String),
    /// SQLite refused the statement.
    #[error("sqlite error {code}: {message}")]
    Sqlite {
        /// SQLite's primary result code.
        code: i32,
        /// SQLite's message.
        message: String,
    },
}

impl SqlError {
    /// The variant's name as the WIT spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            SqlError::NotAllowed(_) => "not-allowed",
            SqlError::Internal(_) => "internal",
            SqlError::Sqlite { .. } => "sqlite",
        }
    }
}

/// Messages of `not-allowed` that guests and tests match on.
pub mod refusals {
    /// After `delete-self-durable` answered ok in this event.
    pub const DELETED_IN_EVENT: &str = "deleted in this event";
    /// A durable delete or durable write inside an open transaction.
    pub const OPEN_TRANSACTION: &str = "open transaction: commit or roll back first";
    /// After a durable delete failed in this event.
    pub const CLOSED_BY_FAILED_DELETE: &str = "database closed by a failed delete: call delete-self-durable again, or let the event end (its end removes the files)";
    /// commit/rollback without begin.
    pub const NO_TRANSACTION: &str = "no open transaction: call begin first";
    /// begin twice.
    pub const TRANSACTION_ALREADY_OPEN: &str = "a transaction is already open: commit or roll back first";
}
