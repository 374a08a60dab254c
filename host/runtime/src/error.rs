//! Errors of the runtime's API.

use crate::address::ActorKey;
use crate::failure_kind::FailureKind;
use std::path::PathBuf;

/// Errors of the runtime's API. Match on [`RuntimeError::kind`] (or on the
/// variants with a `_` arm: new ones may come in a minor version).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// The actor does not exist (and the operation does not create it: an
    /// `existing` class's request, or an admin read).
    #[error(
        "no such actor: {0} has no state here (an `existing` class's actors are created only by calls from the app)"
    )]
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
    /// The event or the host's job on the actor did not complete: `kind`
    /// says why, as the event's own answer would have named it.
    #[error("{message}")]
    Event {
        /// Why, as answers name it (`storage` failures keep theirs).
        kind: FailureKind,
        /// What happened and what to do.
        message: String,
    },
    /// An argument the API refuses; the message says what to give instead.
    #[error("{0}")]
    BadArgument(String),
    /// The operation needs a cluster node (`Runtime::new_node`).
    #[error("{0} needs a cluster node (Runtime::new_node); this is a single node")]
    NeedsCluster(&'static str),
    /// The host failed.
    #[error("host failure: {message}")]
    Host {
        /// What failed.
        message: String,
        /// The failure beneath it (wasmtime's, the system's), when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// Another node process holds the actor, so this node cannot run the
    /// operation itself; the caller may carry it to `address`, where the
    /// holder answers HTTP (ADR 028), or retry once the hold lapses.
    #[error("{} is held by node {}, which this node cannot reach; ask it, or retry once its hold lapses", .0.key, .0.node)]
    HolderUnreachable(Box<HeldElsewhere>),
    /// The actor's storage failed: what it would have said (whether the
    /// actor exists, say) is not known now; try again.
    #[error(transparent)]
    Storage(Box<crate::storage::StorageError>),
}

/// Where an actor is held, when another node process holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldElsewhere {
    /// The actor.
    pub key: ActorKey,
    /// The holder.
    pub node: String,
    /// Where the holder answers HTTP, when it said.
    pub address: Option<String>,
}

impl RuntimeError {
    /// A host failure with nothing beneath it.
    pub(crate) fn host(message: impl Into<String>) -> Self {
        RuntimeError::Host {
            message: message.into(),
            source: None,
        }
    }

    /// A host failure caused by `source`.
    pub(crate) fn host_from(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        RuntimeError::Host {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The event's (or job's) failure, of `kind`.
    pub(crate) fn event(kind: FailureKind, message: impl Into<String>) -> Self {
        RuntimeError::Event {
            kind,
            message: message.into(),
        }
    }

    /// Its kind, as answers and tests name it (the shim's JSON errors carry
    /// it as `kind`).
    pub fn kind(&self) -> FailureKind {
        match self {
            RuntimeError::NoSuchApp(_) => FailureKind::NoSuchApp,
            RuntimeError::NoSuchClass { .. } => FailureKind::NoSuchClass,
            RuntimeError::NoSuchActor(_) => FailureKind::NoSuchActor,
            RuntimeError::Internal(_) => FailureKind::Internal,
            RuntimeError::Manifest(_) => FailureKind::Manifest,
            RuntimeError::Component { .. } => FailureKind::Component,
            RuntimeError::RealClock => FailureKind::RealClock,
            RuntimeError::NoSuchSocket(_) => FailureKind::NoSuchSocket,
            RuntimeError::TablesTooLarge(_) => FailureKind::TablesTooLarge,
            RuntimeError::TablesTooSlow(_) => FailureKind::TablesTooSlow,
            RuntimeError::Event { kind, .. } => *kind,
            RuntimeError::BadArgument(_) => FailureKind::BadArgument,
            RuntimeError::NeedsCluster(_) => FailureKind::NeedsCluster,
            RuntimeError::Host { .. } => FailureKind::Host,
            RuntimeError::HolderUnreachable(_) => FailureKind::HolderUnreachable,
            RuntimeError::Storage(e) => e.kind(),
        }
    }
}
