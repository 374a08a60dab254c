//! The local wasmkeep host: runs actor components (`wasmkeep:actor@0.2.0`) under
//! wasmtime with SQLite storage per actor and the deletion rules of ADR 0028.
//!
//! The [`Runtime`] is the whole host as a library; the `wasmkeep-shim` binary,
//! its dev server ([`server`]), the conformance runner and every language's
//! test harness use it. [`Runtime::new`] is one node with local files;
//! [`Runtime::new_node`] is one node of a [`cluster::Cluster`] whose nodes share
//! a [`bucket::ObjectStore`] and hold actors through [`replica::Replica`]
//! (docs/adr/006-cluster-mode.md).
//!
//! ```no_run
//! use wasmkeep_shim::{ActorKey, HttpRequest, Runtime, RuntimeConfig};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = Runtime::new(RuntimeConfig::for_tests("wk-data"))?;
//! rt.load_manifest("examples/counter-rust/wasmkeep.toml".as_ref())?;
//! let key = ActorKey::new("examples/counter", "counter", "a");
//! let answer = rt.request_blocking(&key, HttpRequest::new("POST", "/", ""))?;
//! assert_eq!(answer.status, 200);
//! # Ok(()) }
//! ```

pub mod actor_db;
pub mod address;
pub mod alarm_index;
pub mod app_delete;
pub mod bindings;
mod block_on;
pub mod bucket;
pub mod clock;
pub mod cluster;
pub mod component_cache;
mod config;
pub mod deletion;
mod error;
pub mod event_error;
pub mod faults;
pub mod http_types;
mod imports;
mod job;
pub mod keys;
pub mod manifest;
pub mod metrics;
mod node;
pub mod operator;
mod outparam;
mod passes;
pub mod replica;
pub mod runtime;
mod sockets;
pub mod sql_types;
pub mod state_store;
pub mod storage;
pub mod verify;
mod worker;

pub use address::ActorKey;
pub use config::RuntimeConfig;
pub use error::RuntimeError;
pub use faults::FaultKind;
pub use http_types::{HttpRequest, HttpResponse, Outbound, SocketMessage};
pub use imports::HostState;
pub use job::CallFailure;
pub use manifest::{Access, ClassSpec, Manifest, Mode};
pub use node::{ActorInfo, ActorStatus, LogLine};
pub use passes::ExpiryPass;
pub use runtime::{PendingResponse, Runtime, Shutdown, SocketHandle};
pub use sockets::SocketTable;
pub use sql_types::{QueryResult, SqlError, SqlValue};

/// The host's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub mod server;
