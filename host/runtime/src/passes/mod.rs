//! The node's own passes and timers: the control pass (app tombstones,
//! heartbeats, operator delete requests), idle expiry, app stop, alarms and
//! the epoch ticker that interrupts guests. A file each.

mod alarms;
mod app_stop;
mod control;
mod expiry;
mod holders;
mod operator;
mod threads;

pub(crate) use alarms::{queue_alarm, queue_due};
pub(crate) use app_stop::{hibernate_in_turn, hibernate_where};
pub(crate) use control::control_pass;
pub use expiry::ExpiryPass;
pub(crate) use expiry::expiry_pass;
pub(crate) use operator::operator_pass;
pub use threads::{CONTROL_PASS_EVERY_MS, EXPIRY_PASS_EVERY_MS};
pub(crate) use threads::{start_alarm_timer, start_control_pass, start_epoch_ticker};
