//! The actor's one alarm: an [`Actor::on_alarm`](crate::Actor::on_alarm)
//! event at or after a time.
//!
//! Times are milliseconds since the Unix epoch on the host's clock
//! ([`context::now`](crate::context::now)), which is virtual under a test
//! host; [`set_in`] computes from it for you.
//!
//! ```no_run
//! use std::time::Duration;
//! use wasmkeep_actor::alarms;
//!
//! if alarms::get().is_none() {
//!     alarms::set_in(Duration::from_secs(30));
//! }
//! ```

use core::time::Duration;

use crate::__private::bindings::wasmkeep::actor::alarms as wit;

/// The pending alarm, in milliseconds since the Unix epoch, or `None`.
/// `None` after [`storage::delete_self_durable`](crate::storage::delete_self_durable)
/// succeeded in this event.
///
/// ```no_run
/// if let Some(at) = wasmkeep_actor::alarms::get() {
///     wasmkeep_actor::context::info(format_args!("alarm at {at}"));
/// }
/// ```
pub fn get() -> Option<u64> {
    wit::get_alarm()
}

/// Sets (or moves) the alarm to `at_ms`, milliseconds since the Unix epoch.
/// It fires once, at or after that time, and never after the actor was
/// deleted. Does nothing after
/// [`storage::delete_self_durable`](crate::storage::delete_self_durable)
/// succeeded in this event.
///
/// ```no_run
/// let tomorrow = wasmkeep_actor::context::now() + 24 * 3600 * 1000;
/// wasmkeep_actor::alarms::set(tomorrow);
/// ```
pub fn set(at_ms: u64) {
    wit::set_alarm(at_ms);
}

/// Sets (or moves) the alarm to `delay` from now on the host's clock
/// ([`context::now`](crate::context::now)), and returns the time it was set
/// to. Delays beyond `u64::MAX` milliseconds saturate.
///
/// ```no_run
/// use std::time::Duration;
/// let at = wasmkeep_actor::alarms::set_in(Duration::from_secs(60));
/// ```
pub fn set_in(delay: Duration) -> u64 {
    let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
    let at = crate::context::now().saturating_add(delay_ms);
    set(at);
    at
}

/// Clears the pending alarm, if any. Does nothing after
/// [`storage::delete_self_durable`](crate::storage::delete_self_durable)
/// succeeded in this event.
///
/// ```no_run
/// wasmkeep_actor::alarms::clear();
/// ```
pub fn clear() {
    wit::clear_alarm();
}
