//! Test a wasmkeep actor in its own crate's `cargo test`, against the whole
//! local host (the same one `wasmkeep-shim serve` runs: storage, alarms on a
//! virtual clock, deletes, sockets, faults).
//!
//! ```no_run
//! use wasmkeep_actor_testing::ActorTest;
//!
//! let t = ActorTest::of_this_crate(env!("CARGO_MANIFEST_DIR")).expect("the actor builds");
//! assert_eq!(t.post("visits", "/", "").text(), "1");
//! assert_eq!(t.get("visits", "/").text(), "1");
//! t.advance_clock(60_000);
//! t.run_due_alarms();
//! ```
//!
//! The crate is built for `wasm32-wasip2` into a component by
//! [`wasmkeep_guest_build`], in its own target directory so that it never
//! waits for the `cargo test` that runs it; a test process builds each crate
//! once, and cargo's cache makes the next run's build take a moment.
//!
//! The host is the prebuilt harness library of a wasmkeep release
//! (`lib/libwasmkeep_c_harness.so` beside the archive's `bin/wasmkeep-shim`,
//! found through `PATH` or `WASMKEEP_HARNESS_LIB`), so a project compiles no
//! host. With the `in-process` feature the host is compiled into the tests
//! instead, and `ActorTest::host` reaches all of it ([`Driver`]; ADR 035).

mod build;
mod chaos;
mod driver;
mod harness;
#[cfg(feature = "in-process")]
mod in_process;
#[allow(
    unsafe_code,
    reason = "the prebuilt driver calls the harness library's C ABI; each call says what it needs"
)]
mod prebuilt;
mod types;
#[cfg(feature = "in-process")]
pub mod verbs;

pub use build::{component_of, component_with_features};
pub use chaos::run_chaos;
pub use driver::{Driver, HarnessError};
pub use harness::{ActorTest, Builder};
pub use types::{
    Access, ActorKey, AdminDeleted, CallFailure, ChaosFailure, DeletionStatus, FAILURE_HEADER, HistoryPosition,
    HttpResponse, LOST_ANSWER_HEADER, LogLine, Outbound, RestoreTo, Restored, SocketMessage,
};

/// The host's own types and its test host, for tests that reach past the
/// verbs (feature `in-process`).
#[cfg(feature = "in-process")]
pub mod in_process_host {
    pub use wasmkeep_host::{HttpRequest, RuntimeError};
    pub use wasmkeep_host_testing::{TestAnswer, TestHost, TestHostError, TestHostOptions};
}
