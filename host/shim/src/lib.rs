//! The local wasmkeep host's command line and dev server, over the
//! [`wasmkeep_host`] library (re-exported here whole, so that tools and tests
//! name one crate).

#![deny(missing_docs)]

pub use wasmkeep_host::*;

mod admin_access;
pub mod cluster_calls;
pub mod cluster_certs;
mod dashboard;
mod forward;
pub mod peer_tls;
mod reply;
pub mod route;
pub mod server;
