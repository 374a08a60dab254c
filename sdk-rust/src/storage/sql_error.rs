//! [`SqlError`]: why a storage call failed.

use crate::__private::bindings::wasmkeep::actor::types as wit_types;

/// Why a storage call failed.
///
/// ```
/// use wasmkeep_actor::SqlError;
///
/// let e = SqlError::Sqlite { code: 19, message: "UNIQUE constraint failed: t.id".into() };
/// assert_eq!(e.to_string(), "sqlite error 19: UNIQUE constraint failed: t.id");
/// assert!(SqlError::NotAllowed("open transaction".into()).is_not_allowed());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SqlError {
    /// Refused in this state; nothing was changed. The message says which
    /// state: "deleted in this event", "open transaction", "database closed
    /// by a failed delete", "no open transaction", or the forbidden statement
    /// (ATTACH, VACUUM INTO, load_extension, file PRAGMAs, BEGIN/COMMIT
    /// written as SQL, the host's own tables).
    #[error("not allowed: {0}")]
    NotAllowed(String),
    /// The host failed. What the call asked for is not known to be durable:
    /// it may or may not have happened. [`delete_self_durable`](super::delete_self_durable) is safe to
    /// call again.
    #[error("internal error: {0}")]
    Internal(String),
    /// SQLite refused the statement (syntax, constraint, type, ...).
    #[error("sqlite error {code}: {message}")]
    Sqlite {
        /// The SQLite primary result code (1 = `SQLITE_ERROR`,
        /// 19 = `SQLITE_CONSTRAINT`, ...).
        code: i32,
        /// SQLite's message, e.g. `UNIQUE constraint failed: t.id`.
        message: String,
    },
}

impl SqlError {
    /// Whether this is [`SqlError::NotAllowed`].
    ///
    /// ```
    /// # use wasmkeep_actor::SqlError;
    /// assert!(!SqlError::Internal("io".into()).is_not_allowed());
    /// ```
    pub fn is_not_allowed(&self) -> bool {
        matches!(self, Self::NotAllowed(_))
    }

    /// The message, without the variant's prefix.
    ///
    /// ```
    /// # use wasmkeep_actor::SqlError;
    /// assert_eq!(SqlError::Internal("io".into()).message(), "io");
    /// ```
    pub fn message(&self) -> &str {
        match self {
            Self::NotAllowed(m) | Self::Internal(m) => m,
            Self::Sqlite { message, .. } => message,
        }
    }

    pub(super) fn from_wit(e: wit_types::SqlError) -> Self {
        match e {
            wit_types::SqlError::NotAllowed(m) => Self::NotAllowed(m),
            wit_types::SqlError::Internal(m) => Self::Internal(m),
            wit_types::SqlError::Sqlite(f) => Self::Sqlite {
                code: f.code,
                message: f.message,
            },
        }
    }
}
