//! Why an actor's database did not open: the process was out of open files
//! (the node can close idle actors' databases and try again, ADR 055), or
//! SQLite could not open or set up the file.

use crate::sql_types::SqlError;

/// Why [`super::ActorDb::open`] failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The process had no open file left for the database or its WAL.
    #[error("the process has no open file left for the actor's database (its limit is {})", crate::open_files::describe(*.limit))]
    OutOfFiles {
        /// The process's open-files limit when it was read.
        limit: Option<u64>,
    },
    /// SQLite could not open or set up the file.
    #[error(transparent)]
    Sql(#[from] SqlError),
}
