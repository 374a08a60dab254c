//! Calls to an actor held by a node of another process (ADR 034). A call is
//! queued on this node as always; when the actor turns out to be held by a
//! live node process, the caller's thread carries it there through the
//! [`RemoteCalls`] the dev server installed at start-up, once: the holder
//! runs it as [`CallRoute::Arrived`] and never sends it on, so two nodes that
//! each believe the other holds the actor answer `holder-unreachable`
//! instead of passing the call around.

use crate::address::ActorKey;
use crate::job::CallFailure;
use std::time::Duration;

/// A call to carry to the node process holding its target.
#[derive(Debug, Clone)]
pub struct RemoteCall {
    /// The callee.
    pub target: ActorKey,
    /// The calling actor (`None`: the host).
    pub caller: Option<ActorKey>,
    /// What the callee's `on-call` gets (shared with the call queued here).
    pub payload: std::sync::Arc<Vec<u8>>,
    /// The actors waiting on this call, the caller last: the holder refuses
    /// a call back along it (a cycle would wait forever).
    pub chain: Vec<ActorKey>,
    /// How long the caller may still wait.
    pub limit: Duration,
}

/// Carries a call to another node process and brings back its answer.
pub trait RemoteCalls: Send + Sync {
    /// Sends `call` to the node process answering HTTP at `holder`
    /// (`http://host:port`) and waits for its answer, at most `call.limit`.
    ///
    /// # Errors
    /// The callee's failure as the holder reported it, or `failed` with
    /// `holder-unreachable` when the holder could not be reached.
    fn call(&self, holder: &str, call: RemoteCall) -> Result<Vec<u8>, CallFailure>;
}

/// Where a call came from, which says whether it may still be carried to
/// another node process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallRoute {
    /// From an actor or the host of this node: carried to the holder if
    /// another node process holds the target.
    FromHere,
    /// Carried here from another node process: runs here or fails.
    Arrived,
}
