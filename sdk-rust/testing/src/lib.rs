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

mod build;
mod chaos;
mod harness;
pub mod verbs;

pub use build::{component_of, component_with_features};
pub use chaos::{ChaosFailure, ChaosRecord, ChaosStep, run_chaos};
pub use harness::{ActorTest, Builder};
pub use wasmkeep_host::{
    Access, ActorKey, AdminDeleted, CallFailure, HttpRequest, HttpResponse, LogLine, Outbound, RuntimeError,
    SocketMessage,
};
pub use wasmkeep_host_testing::{LOST_ANSWER_HEADER, TestAnswer, TestHost, TestHostError, TestHostOptions};
