//! The wasmkeep host as a library: runs actor components
//! (`wasmkeep:actor@0.2.x`) under wasmtime with SQLite storage per actor and
//! the deletion rules of ADR 0028, on one node or as nodes of a local cluster.
//!
//! [`Runtime`] is the host; the `wasmkeep-shim` binary and its dev server use
//! it, and the `wasmkeep-host-testing` crate builds every language's test
//! harness on it.
//! [`Runtime::new`] is one node with local files; [`Runtime::new_node`] is
//! one node of a [`Cluster`] whose nodes share a [`bucket::ObjectStore`]
//! (docs/adr/006-cluster-mode.md). The durable side ([`bucket`], [`replica`],
//! [`operator`], …) is the `wasmkeep-store` crate, re-exported here; the layers
//! are drawn in docs/architecture.md.
//!
//! ```no_run
//! use wasmkeep_host::{ActorKey, HttpRequest, Runtime, RuntimeConfig};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = Runtime::new(RuntimeConfig::for_tests("wk-data"))?;
//! rt.load_manifest("examples/counter-rust/wasmkeep.toml".as_ref())?;
//! let key = ActorKey::new("examples/counter", "counter", "a");
//! let answer = rt.request_blocking(&key, HttpRequest::new("POST", "/", ""))?;
//! assert_eq!(answer.status, 200);
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

pub use wasmkeep_store::{
    actor_records, address, alarm_index, app_delete, bucket, bucket_alarm_index, bucket_probe, bucket_url, clock,
    counting_bucket, deletion, faults, history, history_chain, keys, liveness, node_lease, object_store_bucket,
    operator, page_set, purge, replica, state_store, verify,
};

mod actor_cell;
mod actor_db;
mod bindings;
mod block_on;
mod cluster;
mod component_cache;
mod config;
mod error;
mod event_error;
mod failure_kind;
mod freed_memory;
mod function_cache;
mod guest_call;
mod guest_counters;
mod guest_output;
mod http_types;
mod idle_sweep;
mod imports;
mod instance_pool;
mod job;
mod last_event;
mod local_cluster;
mod manifest;
mod metrics;
mod node;
mod node_builder;
mod open_files;
mod outparam;
mod pass_book;
mod passes;
mod remote_calls;
mod resident;
mod runtime;
mod scheduler;
mod sockets;
mod sql_types;
mod storage;
mod unpoisoned;
mod worker;

// The integration tests' helpers (the built guests, the testee app), for
// the crate's own tests too: they name the crate by its outside name.
#[cfg(test)]
extern crate self as wasmkeep_host;
#[cfg(test)]
#[path = "../tests/common/mod.rs"]
mod test_common;

pub use actor_db::{LENT_READ_TIME, LentReadError};
pub use address::ActorKey;
pub use cluster::Cluster;
pub use component_cache::CacheOutcome;
pub use config::{HistoryConfig, InstanceSlots, ReadsHere, RuntimeConfig, SlotShape, default_cache_dir};
pub use error::{HeldElsewhere, RuntimeError};
pub use failure_kind::{FAILURE_HEADER, FailureKind, UnknownFailureKind};
pub use faults::FaultKind;
pub use http_types::{HttpRequest, HttpResponse, Outbound, SocketMessage};
pub use job::{AdminDeleted, CallFailure, Restored};
pub use last_event::{EventKindName, EventOutcome, LastEvent};
pub use local_cluster::LocalCluster;
pub use manifest::{
    Access, ClassBuild, ClassSpec, Manifest, ManifestError, Mode, UnknownAccess, parse_duration, parse_idle_limit,
};
pub use metrics::Metrics;
pub use node::{ActorInfo, LogLine};
pub use passes::{CONTROL_PASS_EVERY_MS, EXPIRY_PASS_EVERY_MS, ExpiryPass};
pub use remote_calls::{CallRoute, RemoteCall, RemoteCalls};
pub use runtime::{Admin, ClusterPasses, DevControls, PendingResponse, Runtime, Shutdown, SocketHandle};
pub use scheduler::ActorStatus;
pub use scheduler::residency::default_resident_limit;
pub use sockets::OutboundReceiver;
pub use sql_types::{QueryResult, SqlError, SqlValue};

/// The host's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
