//! Test scaffolding over the `wasmkeep-host` library, kept out of the
//! product: [`TestHost`] is the host as every language's test harness sees
//! it (one node or a local cluster on a virtual clock), and [`chaos`] is the
//! seeded schedule of what goes wrong at the durable boundaries. The
//! TypeScript (napi), Python (pyo3), C and Rust harnesses, the conformance
//! runner and the shim's tests use it; `wasmkeep-host` itself does not
//! depend on it (docs/adr/020-testing-crate.md).

#![deny(missing_docs)]

pub mod chaos;
mod chaos_run;
mod test_host;
pub mod verbs;

pub use chaos::{CHAOS_SEED_VAR, ChaosRecord, ChaosStep, ChaosStepError, chaos_report, chaos_seed_from_env};
pub use chaos_run::{ChaosFailure, ChaosRunError, HasTestHost, chaos_seeds, run_chaos};
pub use test_host::{
    HistoryPosition, LOST_ANSWER_HEADER, MOST_NODES, QUIET_VAR, RestoreTo, TestAnswer, TestHost, TestHostError,
    TestHostErrorKind, TestHostOptions, UnknownTestHostErrorKind, parse_access, sql_value_json,
};
