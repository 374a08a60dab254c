//! Who the actor is, and the host's clock and log.
//!
//! ```no_run
//! use wasmkeep_actor::context;
//!
//! let me = context::self_address();
//! context::info(format_args!("{me} in {} at {}", context::app(), context::now()));
//! ```

use core::fmt;

use crate::__private::bindings::wasmkeep::actor::{context as wit, types as wit_types};

/// An actor's address inside its app: its class and its name.
///
/// ```
/// use wasmkeep_actor::Address;
///
/// let a = Address::new("room", "lobby");
/// assert_eq!(a.to_string(), "room/lobby");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address {
    /// The class, as named in the app's manifest.
    pub class: String,
    /// The actor's name within its class.
    pub name: String,
}

impl Address {
    /// An address from a class and a name.
    ///
    /// ```
    /// # use wasmkeep_actor::Address;
    /// let a = Address::new("counter", "c1");
    /// assert_eq!((a.class.as_str(), a.name.as_str()), ("counter", "c1"));
    /// ```
    pub fn new(class: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            class: class.into(),
            name: name.into(),
        }
    }

    pub(crate) fn from_wit(a: wit_types::Address) -> Self {
        Self {
            class: a.class,
            name: a.name,
        }
    }

    pub(crate) fn to_wit(&self) -> wit_types::Address {
        wit_types::Address {
            class: self.class.clone(),
            name: self.name.clone(),
        }
    }
}

impl fmt::Display for Address {
    /// `class/name`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.class, self.name)
    }
}

/// The severity of a log line.
///
/// ```
/// use wasmkeep_actor::Level;
/// assert!(Level::Debug < Level::Error);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Something unexpected, handled.
    Warn,
    /// Something failed.
    Error,
}

/// This actor's address.
///
/// ```no_run
/// let me = wasmkeep_actor::context::self_address();
/// assert!(!me.name.is_empty());
/// ```
pub fn self_address() -> Address {
    Address::from_wit(wit::self_address())
}

/// The app this actor belongs to, as `tenant/app`.
///
/// ```no_run
/// let app = wasmkeep_actor::context::app();
/// let (tenant, name) = app.split_once('/').expect("tenant/app");
/// ```
pub fn app() -> String {
    wit::app()
}

/// The host's time in milliseconds since the Unix epoch: the clock alarms run
/// on (virtual under a test host, so prefer it to the system clock).
///
/// ```no_run
/// let started = wasmkeep_actor::context::now();
/// ```
pub fn now() -> u64 {
    wit::now()
}

/// How an earlier incarnation of this address was deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeletionCause {
    /// `storage::delete_self` in an event.
    DeleteSelf,
    /// `storage::delete_self_durable`.
    DeleteSelfDurable,
    /// An operator's `wasmkeep-shim actor delete`.
    Operator,
    /// Idle expiry (`expire-after-idle` in the manifest).
    Expired,
}

/// A deletion of this address that took effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Deletion {
    /// When it took effect: milliseconds since the Unix epoch on the host's clock.
    pub at: u64,
    /// Who or what deleted it.
    pub cause: DeletionCause,
}

/// The last deletion of this address before its current database was created,
/// or `None` if the host holds no such record (the address was never
/// deleted). The host reads it from the marker the deletion left, so it is
/// positive evidence: a late write for a deleted actor (a webhook that arrives
/// after the account was closed) can refuse to recreate state.
///
/// Since WIT `wasmkeep:actor@0.2.1`.
///
/// ```no_run
/// use wasmkeep_actor::{context, Response};
///
/// fn on_webhook() -> Response {
///     if let Some(d) = context::previous_deletion() {
///         // This address was deleted before: a late webhook must not bring it back.
///         return Response::text(410, format!("deleted at {} ({:?})", d.at, d.cause));
///     }
///     Response::text(200, "ok")
/// }
/// ```
pub fn previous_deletion() -> Option<Deletion> {
    wit::previous_deletion().map(|d| Deletion {
        at: d.at,
        cause: match d.cause {
            wit::DeletionCause::DeleteSelf => DeletionCause::DeleteSelf,
            wit::DeletionCause::DeleteSelfDurable => DeletionCause::DeleteSelfDurable,
            wit::DeletionCause::Operator => DeletionCause::Operator,
            wit::DeletionCause::Expired => DeletionCause::Expired,
        },
    })
}

/// Writes a line to the host's log, tagged with the actor's address.
///
/// ```no_run
/// use wasmkeep_actor::{context, Level};
/// context::log(Level::Warn, "disk almost full");
/// context::log(Level::Info, format_args!("{} rows", 3));
/// ```
pub fn log(level: Level, message: impl fmt::Display) {
    let level = match level {
        Level::Debug => wit::LogLevel::Debug,
        Level::Info => wit::LogLevel::Info,
        Level::Warn => wit::LogLevel::Warn,
        Level::Error => wit::LogLevel::Error,
    };
    wit::log(level, &message.to_string());
}

/// [`log`] at [`Level::Debug`].
///
/// ```no_run
/// wasmkeep_actor::context::debug(format_args!("x = {}", 1));
/// ```
pub fn debug(message: impl fmt::Display) {
    log(Level::Debug, message);
}

/// [`log`] at [`Level::Info`].
///
/// ```no_run
/// wasmkeep_actor::context::info("started");
/// ```
pub fn info(message: impl fmt::Display) {
    log(Level::Info, message);
}

/// [`log`] at [`Level::Warn`].
///
/// ```no_run
/// wasmkeep_actor::context::warn("retrying");
/// ```
pub fn warn(message: impl fmt::Display) {
    log(Level::Warn, message);
}

/// [`log`] at [`Level::Error`].
///
/// ```no_run
/// wasmkeep_actor::context::error(format_args!("failed: {}", "reason"));
/// ```
pub fn error(message: impl fmt::Display) {
    log(Level::Error, message);
}
