//! What kind of failure an answer, a call's failure or an API error is: one
//! vocabulary, named once, that tests, harnesses and clients match on rather
//! than the English of a message (which may change). The host's own answers
//! carry it as [`crate::HttpResponse::failure`] and, for HTTP clients, in the
//! `wasmkeep-failure` header; [`crate::RuntimeError::kind`] and
//! [`crate::CallFailure::failure`] give it for the API's errors.

use std::fmt;
use std::str::FromStr;

/// The header that names the kind of a failure the host answered itself.
pub const FAILURE_HEADER: &str = "wasmkeep-failure";

/// What kind of failure it was. New kinds may come in a minor version, so a
/// `match` on it needs a `_` arm.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// No such app is loaded.
    NoSuchApp,
    /// The app has no such class.
    NoSuchClass,
    /// The class is `existing` and the actor does not exist.
    NoSuchActor,
    /// The class is `internal`: only the app's actors may call it.
    Internal,
    /// The app or class is not loaded here (any more).
    NotLoaded,
    /// The app was deleted (its tombstone is in the bucket).
    AppDeleted,
    /// The host is shutting down, or stopped serving the app.
    ShuttingDown,
    /// The node is at its resident-actor cap and as many actors wait already.
    Overloaded,
    /// Too many events wait for this actor already.
    MailboxFull,
    /// This node is cut off from its cluster.
    CutOff,
    /// Another node holds the actor and could not be reached.
    HolderUnreachable,
    /// The bucket failed.
    Bucket,
    /// A write was not acknowledged by the bucket: it may or may not have landed.
    NotAcknowledged,
    /// The app's tombstone could not be read.
    TombstoneUnreadable,
    /// A removal of the actor's files is unfinished; it finishes before the next event.
    RemovalUnfinished,
    /// The actor's files could not be read or written.
    Files,
    /// The actor's database failed.
    Sql,
    /// The guest failed: instantiation, `on-init`, a trap, a timeout, no answer set.
    Guest,
    /// The host failed where it should not have.
    Host,
    /// A manifest problem.
    Manifest,
    /// A component could not be read, compiled or linked.
    Component,
    /// The operation needs the virtual clock.
    RealClock,
    /// No such socket is open.
    NoSuchSocket,
    /// The actor's tables hold more than a dump reads.
    TablesTooLarge,
    /// Reading the actor's tables took longer than a dump may.
    TablesTooSlow,
    /// The event did not complete (the message says why).
    Event,
    /// A call would close a cycle: its target waits on this call already.
    CallCycle,
    /// A call's target did not answer in the time its caller may wait.
    CallTimedOut,
    /// An argument the API refuses (an idle limit below its minimum, a
    /// node id with a `/`): the message says what to give instead.
    BadArgument,
    /// The operation needs a cluster node, and this is a single node.
    NeedsCluster,
}

impl FailureKind {
    /// Every kind, in declaration order.
    pub const ALL: [FailureKind; 30] = [
        FailureKind::NoSuchApp,
        FailureKind::NoSuchClass,
        FailureKind::NoSuchActor,
        FailureKind::Internal,
        FailureKind::NotLoaded,
        FailureKind::AppDeleted,
        FailureKind::ShuttingDown,
        FailureKind::Overloaded,
        FailureKind::MailboxFull,
        FailureKind::CutOff,
        FailureKind::HolderUnreachable,
        FailureKind::Bucket,
        FailureKind::NotAcknowledged,
        FailureKind::TombstoneUnreadable,
        FailureKind::RemovalUnfinished,
        FailureKind::Files,
        FailureKind::Sql,
        FailureKind::Guest,
        FailureKind::Host,
        FailureKind::Manifest,
        FailureKind::Component,
        FailureKind::RealClock,
        FailureKind::NoSuchSocket,
        FailureKind::TablesTooLarge,
        FailureKind::TablesTooSlow,
        FailureKind::Event,
        FailureKind::CallCycle,
        FailureKind::CallTimedOut,
        FailureKind::BadArgument,
        FailureKind::NeedsCluster,
    ];

    /// Its name, as the header, the JSON and every harness spell it (`no-such-actor`).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::NoSuchApp => "no-such-app",
            FailureKind::NoSuchClass => "no-such-class",
            FailureKind::NoSuchActor => "no-such-actor",
            FailureKind::Internal => "internal",
            FailureKind::NotLoaded => "not-loaded",
            FailureKind::AppDeleted => "app-deleted",
            FailureKind::ShuttingDown => "shutting-down",
            FailureKind::Overloaded => "overloaded",
            FailureKind::MailboxFull => "mailbox-full",
            FailureKind::CutOff => "cut-off",
            FailureKind::HolderUnreachable => "holder-unreachable",
            FailureKind::Bucket => "bucket",
            FailureKind::NotAcknowledged => "not-acknowledged",
            FailureKind::TombstoneUnreadable => "tombstone-unreadable",
            FailureKind::RemovalUnfinished => "removal-unfinished",
            FailureKind::Files => "files",
            FailureKind::Sql => "sql",
            FailureKind::Guest => "guest",
            FailureKind::Host => "host",
            FailureKind::Manifest => "manifest",
            FailureKind::Component => "component",
            FailureKind::RealClock => "real-clock",
            FailureKind::NoSuchSocket => "no-such-socket",
            FailureKind::TablesTooLarge => "tables-too-large",
            FailureKind::TablesTooSlow => "tables-too-slow",
            FailureKind::Event => "event",
            FailureKind::CallCycle => "call-cycle",
            FailureKind::CallTimedOut => "call-timed-out",
            FailureKind::BadArgument => "bad-argument",
            FailureKind::NeedsCluster => "needs-cluster",
        }
    }

    /// The HTTP status that answers it: 400 a bad argument, 404 nothing there, 409 a conflict
    /// with the app's or the clock's state, 413 too much to read, 503 try
    /// again shortly, 500 the guest or the host failed.
    pub fn status(self) -> u16 {
        match self {
            FailureKind::NoSuchApp
            | FailureKind::NoSuchClass
            | FailureKind::NoSuchActor
            | FailureKind::Internal
            | FailureKind::NotLoaded
            | FailureKind::NoSuchSocket => 404,
            FailureKind::BadArgument => 400,
            FailureKind::AppDeleted | FailureKind::RealClock | FailureKind::CallCycle | FailureKind::NeedsCluster => {
                409
            }
            FailureKind::TablesTooLarge => 413,
            FailureKind::ShuttingDown
            | FailureKind::Overloaded
            | FailureKind::MailboxFull
            | FailureKind::CutOff
            | FailureKind::HolderUnreachable
            | FailureKind::Bucket
            | FailureKind::NotAcknowledged
            | FailureKind::TombstoneUnreadable
            | FailureKind::RemovalUnfinished
            | FailureKind::TablesTooSlow
            | FailureKind::CallTimedOut => 503,
            FailureKind::Files
            | FailureKind::Sql
            | FailureKind::Guest
            | FailureKind::Host
            | FailureKind::Manifest
            | FailureKind::Component
            | FailureKind::Event => 500,
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no [`FailureKind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a failure kind (known: {known})", known = FailureKind::ALL.map(FailureKind::as_str).join(", "))]
pub struct UnknownFailureKind(pub String);

impl FromStr for FailureKind {
    type Err = UnknownFailureKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FailureKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownFailureKind(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_names_itself_and_back_in_every_spelling() {
        for k in FailureKind::ALL {
            assert_eq!(k.as_str().parse::<FailureKind>(), Ok(k));
            assert_eq!(serde_json::to_value(k).expect("json"), serde_json::json!(k.as_str()));
            assert!([400, 404, 409, 413, 500, 503].contains(&k.status()));
        }
        assert!("nap".parse::<FailureKind>().is_err());
    }
}
