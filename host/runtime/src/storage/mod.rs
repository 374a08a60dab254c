//! The per-actor storage seam: where an actor's database comes from, what
//! makes its writes durable, and ADR 0028's reset. One implementation is
//! chosen when the runtime is built, and the event path never asks which:
//!
//! - [`single_node::SingleNodeStorage`]: the database files are the state; a
//!   delete removes them (ADR 003).
//! - [`cluster_node::ClusterStorage`]: the bucket's history is the state; the
//!   local database is a cache of its head, held through a
//!   [`crate::replica::Replica`] (ADR 006).
//!
//! Both run the contract in `contract.rs`.

pub(crate) mod cluster_node;
#[cfg(test)]
mod contract;
mod error;
mod holding;
mod local_history;
pub(crate) mod open_actor;
mod removal;
mod restored;
pub(crate) mod retention;
mod seam;
pub(crate) mod single_node;

pub use error::StorageError;
pub(crate) use open_actor::OpenActor;
use restored::{restore_error, restored_alarm, write_restored};
pub(crate) use seam::{ActorStorage, OpenMode, Opened};
