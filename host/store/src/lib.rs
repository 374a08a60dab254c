//! The durable side of the wasmkeep host, with no wasmtime in it: what the
//! bucket holds and the protocols that write it (ADR 0028, docs/adr/006), and
//! the local files of actors on one node.
//!
//! - [`bucket`]: the object-store trait, its backends (memory, a local
//!   directory) and a fault-injecting wrapper; [`object_store_bucket`]: the
//!   trait over S3, Azure, GCS and object_store's memory; [`bucket_url`]: a
//!   bucket from a URL; [`bucket_probe`]: `bucket check`; [`keys`]: the key
//!   layout; [`counting_bucket`]: a bucket's requests counted by purpose.
//! - [`replica`]: one actor's history as its holder sees it (holds,
//!   segments, resets, snapshots, the fence); [`deletion`]: what a deletion
//!   leaves and how its status is read back; [`actor_records`]: an actor's
//!   records read back as what each is, for people; [`purge`]: a deleted
//!   actor's earlier generations erased, and a purge cut short finished;
//!   [`history`], [`history_chain`], [`page_set`]: history objects by their
//!   keys, the chain a state is made from, collection under a retention
//!   window, and what a page set holds (ADR 064).
//! - [`operator`], [`app_delete`], [`verify`]: the operator delete, the app
//!   delete and the orphan sweep.
//! - [`state_store`]: actors' database files on one node; [`alarm_index`]:
//!   which actor's alarm is due when; [`bucket_alarm_index`]: the same in
//!   the bucket, for node processes.
//! - [`liveness`]: which nodes are live, in one process or by
//!   [`node_lease`]s in the bucket (node processes).
//!
//! With the `contract-tests` feature, [`bucket::contract`] is the test every
//! [`bucket::ObjectStore`] must pass.

#![deny(missing_docs)]

pub mod actor_records;
pub mod address;
pub mod alarm_index;
pub mod app_delete;
pub mod bucket;
pub mod bucket_alarm_index;
pub mod bucket_probe;
pub mod bucket_url;
pub mod clock;
pub mod counting_bucket;
pub mod deletion;
pub mod dir_lock;
pub mod faults;
pub mod history;
pub mod history_chain;
pub mod keys;
pub mod liveness;
pub mod node_lease;
pub mod object_store_bucket;
pub mod operator;
pub mod page_set;
pub mod purge;
pub mod replica;
pub mod state_store;
pub mod verify;
