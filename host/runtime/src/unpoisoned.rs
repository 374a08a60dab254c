//! Locking a mutex whose holder panicked. A panic in the runtime is caught
//! where it happens (a guest's trap, a worker's event), and every state a
//! runtime mutex guards is whole between two statements: the next holder
//! goes on with it rather than fail every later event of the node.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// `m`'s lock, also when a holder panicked.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
