//! Calls to other actors of the same app.
//!
//! The callee's [`Actor::on_call`](crate::Actor::on_call) runs in its own
//! mailbox, after the events queued there, while the caller waits.
//!
//! ```no_run
//! use wasmkeep_actor::{calls, Address};
//!
//! let answer = calls::call(&Address::new("ledger", "main"), b"balance")?;
//! # Ok::<(), wasmkeep_actor::CallError>(())
//! ```

use crate::__private::bindings::wasmkeep::actor::calls as wit;
use crate::context::Address;

/// Why a call failed.
///
/// ```
/// use wasmkeep_actor::CallError;
/// let e = CallError::Rejected("no such account".into());
/// assert_eq!(e.to_string(), "call rejected: no such account");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// Not delivered: unknown class, a class that takes no calls, a call to
    /// itself or back along its own call chain (it would wait forever), or
    /// the host is stopping.
    #[error("call refused: {0}")]
    Refused(String),
    /// Delivered; the callee's `on_call` answered with this error.
    #[error("call rejected: {0}")]
    Rejected(String),
    /// Delivered; the callee's event failed (panic/trap or time limit). Its
    /// writes before the failure may have been kept.
    #[error("call failed: {0}")]
    Failed(String),
}

/// Runs `on_call` on the actor at `target` (creating it if its class allows)
/// and returns its answer.
///
/// ```no_run
/// use wasmkeep_actor::{calls, Address, CallError};
///
/// match calls::call(&Address::new("counter", "total"), "add 1") {
///     Ok(bytes) => { /* the callee's answer */ }
///     Err(CallError::Refused(why)) => { /* not delivered */ }
///     Err(e) => { /* delivered, but it did not work */ }
/// }
/// ```
///
/// # Errors
///
/// [`CallError::Refused`] if the call was not delivered,
/// [`CallError::Rejected`] if the callee answered with an error,
/// [`CallError::Failed`] if the callee's event failed.
pub fn call(target: &Address, payload: impl AsRef<[u8]>) -> Result<Vec<u8>, CallError> {
    wit::call(&target.to_wit(), payload.as_ref()).map_err(|e| match e {
        wit::CallError::Refused(m) => CallError::Refused(m),
        wit::CallError::Rejected(m) => CallError::Rejected(m),
        wit::CallError::Failed(m) => CallError::Failed(m),
    })
}
