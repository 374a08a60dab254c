//! Errors of the runtime's API.

use crate::address::ActorKey;
use std::path::PathBuf;

/// Errors of the runtime's API.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The app is not loaded.
    #[error("no app {0:?} is loaded")]
    NoSuchApp(String),
    /// The class is not in the app.
    #[error("app {app} has no class {class:?} (classes: {known})")]
    NoSuchClass {
        /// The app.
        app: String,
        /// The class asked for.
        class: String,
        /// The classes it has.
        known: String,
    },
    /// The class is `existing` and the actor does not exist.
    #[error("no such actor: {0} (its class is `existing`: only calls from the app create actors)")]
    NoSuchActor(ActorKey),
    /// The class is `internal`.
    #[error("class {0} is internal: it takes calls from the app's actors only")]
    Internal(String),
    /// A manifest problem.
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    /// A component could not be read, compiled or linked.
    #[error("component {path}: {message}")]
    Component {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The operation needs the virtual clock.
    #[error(
        "the clock is real: start with a virtual clock (`serve --virtual-clock`, or RuntimeConfig::for_tests) to move it"
    )]
    RealClock,
    /// No such socket.
    #[error("socket {0} is not open")]
    NoSuchSocket(u64),
    /// The actor's tables hold more than the admin API's dump reads.
    #[error("{0}")]
    TablesTooLarge(String),
    /// Reading the actor's tables took longer than the admin API's dump may.
    #[error("{0}")]
    TablesTooSlow(String),
    /// The event did not complete.
    #[error("{0}")]
    Event(String),
    /// The host failed.
    #[error("host failure: {0}")]
    Host(String),
}
