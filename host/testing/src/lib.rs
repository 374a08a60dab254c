//! Test scaffolding over the `wasmkeep-host` library, kept out of the
//! product: [`TestHost`] is the host as every language's test harness sees
//! it (one node or a local cluster on a virtual clock), and [`chaos`] is the
//! seeded schedule of what goes wrong at the durable boundaries. Its users
//! are the language harnesses: the TypeScript (napi, `sdk-ts/native/harness`),
//! Python (pyo3, `sdk-python/harness`) and C (`sdk-c/harness`) ones, and the
//! Rust one (`sdk-rust/testing`) only with its `in-process` feature (by
//! default it drives the C harness's prebuilt library). Every one runs
//! [`run_chaos`], calling its body back: C through `wkh_run_chaos` (or
//! `wkh_run_chaos_seeds`), and the Rust one through `wkh_run_chaos_seeds`
//! with its prebuilt driver (directly in process).
//! [`served`] starts `wasmkeep-shim serve` as a process
//! (a served host, a node of a cluster): the conformance runner's
//! node-process mode and the shim's process tests start theirs there
//! (docs/adr/084-one-step-interpreter-and-one-spawner-of-served-hosts.md).
//! The fuzz targets build their runtime from [`TestHostOptions::node_config`],
//! as the test host's nodes do. The conformance runner's in-process nodes are `wasmkeep-host`'s own, and
//! `wasmkeep-host` itself does not depend on this crate
//! (docs/adr/020-testing-crate.md).

#![deny(missing_docs)]

pub mod chaos;
mod chaos_run;
#[cfg(feature = "fault-proxy")]
pub mod fault_proxy;
pub mod served;
mod test_host;
pub mod verbs;

pub use chaos::{CHAOS_SEED_VAR, ChaosRecord, ChaosStep, ChaosStepError, chaos_report, chaos_seed_from_env};
pub use chaos_run::{ChaosFailure, ChaosRunError, HasTestHost, chaos_seeds, run_chaos, run_chosen_seeds};
pub use test_host::{
    Advanced, HistoryPosition, LOST_ANSWER_HEADER, MOST_NODES, QUIET_VAR, RestoreTo, TestAnswer, TestHost,
    TestHostError, TestHostErrorKind, TestHostOptions, UnknownTestHostErrorKind, parse_access, sql_value_json,
};
