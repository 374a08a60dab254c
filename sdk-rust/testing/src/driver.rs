//! What drives the host under an [`ActorTest`](crate::ActorTest): one trait,
//! chosen once when the test host starts (ADR 035). Two drivers implement it:
//! the prebuilt harness library of a release (`prebuilt`: a project compiles
//! no host), and, with the `in-process` feature, the host compiled into the
//! test binary (`in_process`: the workspace's own tests, and tests that reach
//! the whole `TestHost`).

use crate::types::{
    Access, ActorKey, AdminDeleted, CallFailure, DeletionStatus, HistoryPosition, HttpResponse, LogLine, Outbound,
    RestoreTo, Restored,
};
use std::path::Path;
use std::time::Duration;

/// Why the host refused a verb: what happened and what to do, and the kind
/// of the failure when the host named one (`no-such-node`, `needs-cluster`,
/// ...), for a test to compare rather than the message's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HarnessError {
    /// What happened and what to do.
    pub message: String,
    /// The failure's kind, when it has one.
    pub kind: Option<String>,
}

impl HarnessError {
    /// A failure of the harness itself, with no host kind.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            kind: None,
        }
    }
}

/// A verb's outcome.
pub(crate) type Verb<T> = Result<T, HarnessError>;

/// Which driver runs the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// The harness library of a release (`libwasmkeep_c_harness`), loaded at
    /// start: found through `WASMKEEP_HARNESS_LIB`, else beside the
    /// `wasmkeep-shim` on `PATH` (`<bin>/../lib/`). A project compiles no host.
    Prebuilt,
    /// The host compiled into the test binary (the `in-process` feature).
    InProcess,
}

impl Driver {
    /// The driver a builder starts with: `WASMKEEP_HARNESS` (`prebuilt` or
    /// `in-process`) when set, else the host compiled in when the
    /// `in-process` feature is on, else the prebuilt library.
    ///
    /// # Errors
    /// `WASMKEEP_HARNESS` names neither.
    pub fn from_env() -> Result<Self, HarnessError> {
        match std::env::var("WASMKEEP_HARNESS").ok().as_deref() {
            Some("prebuilt") => Ok(Self::Prebuilt),
            Some("in-process") => Ok(Self::InProcess),
            Some(other) => Err(HarnessError::new(format!(
                "WASMKEEP_HARNESS={other:?} names no driver: use `prebuilt` or `in-process` (or unset it)"
            ))),
            None if cfg!(feature = "in-process") => Ok(Self::InProcess),
            None => Ok(Self::Prebuilt),
        }
    }
}

/// How a test host is set up.
#[derive(Debug, Clone, Default)]
pub(crate) struct HostSetup {
    /// How many nodes (a local cluster from 2).
    pub nodes: Option<usize>,
    /// An event's time limit.
    pub event_timeout: Option<Duration>,
    /// A single node keeps its actors' history (a cluster always does).
    pub history: bool,
}

/// One test host, driven one way. Every verb of every language's harness;
/// a failure is the host's refusal, with its message and kind.
pub(crate) trait HostDriver {
    /// Loads one class into the app `app`, compiling its component.
    fn add_class(&self, app: &str, class: &str, component: &Path, access: Access) -> Verb<()>;
    /// Sends a request and waits for its answer (the event's end included),
    /// through node `node` of a cluster (1 when none). An answer of 500 or
    /// more has what explains it printed to stderr (kept under chaos).
    fn request(&self, key: &ActorKey, method: &str, path: &str, body: &[u8], node: Option<usize>)
    -> Verb<HttpResponse>;
    /// Runs `on-call` as the host.
    fn call(&self, key: &ActorKey, payload: &[u8]) -> Verb<Result<Vec<u8>, CallFailure>>;
    /// Waits until every event queued for the actor has run.
    fn settle(&self, key: &ActorKey) -> Verb<()>;
    /// The virtual clock (ms since the epoch).
    fn now_ms(&self) -> Verb<u64>;
    /// Moves the clock on; the new time.
    fn advance_clock(&self, ms: u64) -> Verb<u64>;
    /// Moves the clock on running what falls due, each alarm at its time;
    /// the new time and how many alarms ran.
    fn advance_clock_running_due(&self, ms: u64) -> Verb<(u64, usize)>;
    /// Runs every due alarm; how many ran.
    fn run_due_alarms(&self) -> Verb<usize>;
    /// Runs the actor's alarm if due, through node `node` (the lowest live
    /// one when none); whether it ran.
    fn run_alarm(&self, node: Option<usize>, key: &ActorKey) -> Verb<bool>;
    /// Every table of the actor, as JSON.
    fn tables(&self, key: &ActorKey) -> Verb<serde_json::Value>;
    /// Whether the actor has a database.
    fn exists(&self, key: &ActorKey) -> Verb<bool>;
    /// What the actor logged.
    fn logs_of(&self, key: &ActorKey) -> Verb<Vec<LogLine>>;
    /// Arms `count` of the fault `name`, on node `node` only when given.
    fn arm_fault(&self, node: Option<usize>, name: &str, count: u32) -> Verb<()>;
    /// Restarts the actor as a crash and recovery would.
    fn restart(&self, key: &ActorKey) -> Verb<()>;
    /// An operator delete (no guest code runs).
    fn operator_delete(&self, key: &ActorKey) -> Verb<AdminDeleted>;
    /// Whether the actor was deleted, from positive evidence.
    fn deletion_status(&self, key: &ActorKey) -> Verb<DeletionStatus>;
    /// Starts over: no actor, socket, alarm, fault or log line; the classes loaded again.
    fn reset(&mut self) -> Verb<()>;
    /// Restarts the whole host on the same data.
    fn restart_host(&mut self) -> Verb<()>;
    /// The actor's history, oldest first.
    fn history(&self, key: &ActorKey) -> Verb<Vec<HistoryPosition>>;
    /// Restores the actor to a bookmark or a time.
    fn restore(&self, key: &ActorKey, to: &RestoreTo) -> Verb<Restored>;
    /// Hibernates every actor.
    fn hibernate_all(&self) -> Verb<()>;
    /// Opens a WebSocket; its id.
    fn open_socket(&self, key: &ActorKey, path: &str) -> Verb<u64>;
    /// Sends a text message on a socket.
    fn socket_send_text(&self, id: u64, text: &str) -> Verb<()>;
    /// What the actor sent to the socket since last asked.
    fn socket_take(&self, id: u64) -> Verb<Vec<Outbound>>;
    /// Cluster: cuts node `n` off.
    fn cut_off(&self, n: usize) -> Verb<()>;
    /// Cluster: an operator delete through the bucket, carried out before this returns; its id.
    fn request_operator_delete(&self, key: &ActorKey) -> Verb<String>;
    /// Cluster: the class's `expire-after-idle`.
    fn set_expire_after_idle(&self, app: &str, class: &str, limit: Option<Duration>) -> Verb<()>;
    /// Cluster: runs each node's idle-expiry pass; how many expired.
    fn run_expiry_passes(&self) -> Verb<usize>;
    /// Cluster: deletes the app.
    fn delete_app(&self, app: &str) -> Verb<()>;
    /// Starts the seeded chaos schedule.
    fn start_chaos(&self, seed: u64) -> Verb<()>;
    /// Ends it; what it did, a line per step.
    fn end_chaos(&self) -> Verb<Vec<String>>;
    /// The harness library's host, whose chaos loop (`wkh_run_chaos_seeds`)
    /// [`run_chaos`](crate::run_chaos) runs: the prebuilt driver's.
    fn prebuilt(&self) -> Option<&crate::prebuilt::PrebuiltHost> {
        None
    }
    /// The host compiled in, for everything the verbs leave out.
    #[cfg(feature = "in-process")]
    fn test_host(&self) -> Option<&wasmkeep_host_testing::TestHost> {
        None
    }
    /// The host compiled in, for the testing crate's chaos loop, which
    /// borrows it between bodies.
    #[cfg(feature = "in-process")]
    fn test_host_mut(&mut self) -> Option<&mut wasmkeep_host_testing::TestHost> {
        None
    }
}
